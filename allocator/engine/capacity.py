"""Consumable capacity: how much of a device's capacity one allocation consumes.

A multi-allocatable device consumes, per allocation, an amount of every
capacity it has; request policies round requests up to valid amounts.
"""
from __future__ import annotations

from decimal import Decimal

from allocator.engine.objects import Capacity, Device
from allocator.engine.quantity import Quantity

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)


class CapacityError(Exception):
    """A capacity request the allocator cannot handle (fatal upstream)."""


def qualified(name: str, driver: str) -> str:
    return name if "/" in name else f"{driver}/{name}"


def resolve_requests(requests: dict | None, device: Device) -> dict | None:
    """Map each requested capacity onto the device's capacity names.

    Returns {device capacity name: requested Quantity}, or None when the device
    lacks a requested capacity (it is then not a candidate). Raises
    CapacityError when one request names the same capacity bare and qualified.
    """
    if not requests:
        return {}
    by_qualified = {qualified(name, device.driver): name for name in device.capacity}
    seen: dict[str, str] = {}
    resolved: dict[str, Quantity] = {}
    for name, amount in requests.items():
        full = qualified(name, device.driver)
        if full in seen:
            raise CapacityError(
                f'capacity "{name}": requested both as "{seen[full]}" and "{name}", which name the same capacity'
            )
        seen[full] = name
        device_name = by_qualified.get(full)
        if device_name is None:
            return None
        resolved[device_name] = amount
    return resolved


def _uses_milli(policy_range, fractional: bool) -> bool:
    if not fractional:
        return False
    for q in policy_range:
        if q is None:
            continue
        if (q.value * 1000) != (q.value * 1000).to_integral_value():
            return False
    step = policy_range[2]
    return step is not None and step.value * 1000 >= 1


def _check_int64(number: int, name: str) -> None:
    if not INT64_MIN <= number <= INT64_MAX:
        raise CapacityError(f'capacity "{name}": capacity request cannot be represented as a 64-bit integer')


def consumed_amount(name: str, capacity: Capacity, request: Quantity | None, fractional: bool) -> Quantity:
    """The amount one allocation consumes of one capacity (§11.2)."""
    policy = capacity.policy
    if request is None:
        if policy is not None and policy.default is not None:
            amount = policy.default.copy()
        else:
            amount = capacity.value.copy()
    elif policy is None:
        amount = request.copy()
    elif policy.valid_range is not None and policy.valid_range[0] is not None:
        low, _high, step = policy.valid_range
        if request < low:
            amount = low.copy()
        elif step is None:
            amount = request.copy()
        elif _uses_milli(policy.valid_range, fractional):
            r, m, s = request.milli_value(), low.milli_value(), step.milli_value()
            if s <= 0:
                raise CapacityError(f'capacity "{name}": step must be positive')
            milli = m + s * -((m - r) // s)
            _check_int64(milli, name)
            amount = Quantity.from_milli(milli, step.format)
        else:
            r, m, s = request.int_value(), low.int_value(), step.int_value()
            if s <= 0:
                raise CapacityError(f'capacity "{name}": step must be positive')
            whole = m + s * -((m - r) // s)
            _check_int64(whole, name)
            amount = Quantity.from_int(whole, step.format)
    elif policy.valid_values is not None:
        amount = request.copy()
        for valid in policy.valid_values:
            if valid >= request:
                amount = valid.copy()
                break
    else:
        amount = request.copy()
    if amount.value < 0:
        raise CapacityError(f'capacity "{name}": capacity value is negative')
    return amount


def violates_policy(capacity: Capacity, amount: Quantity, fractional: bool) -> bool:
    policy = capacity.policy
    if policy is None:
        return False
    if policy.default is not None and amount == policy.default:
        return False
    if policy.valid_range is not None and policy.valid_range[0] is not None:
        low, high, step = policy.valid_range
        if high is not None and amount > high:
            return True
        if step is not None:
            if _uses_milli(policy.valid_range, fractional):
                diff, unit = amount.milli_value() - low.milli_value(), step.milli_value()
            else:
                diff, unit = amount.int_value() - low.int_value(), step.int_value()
            if unit <= 0 or diff % unit != 0:
                return True
        return False
    if policy.valid_values is not None:
        return all(amount != v for v in policy.valid_values)
    return False


def shortfall(
    device: Device,
    requested: dict,
    used: dict | None,
    fractional: bool,
) -> tuple | None:
    """Why this allocation does not fit on the device, or None if it fits.

    `requested` comes from resolve_requests; `used` maps capacity name to the
    Decimal amount already consumed (earlier claims plus this attempt).
    Returns ("policy", name, amount) or ("capacity", name, amount, free).
    """
    for name, capacity in device.capacity.items():
        amount = consumed_amount(name, capacity, requested.get(name), fractional)
        if violates_policy(capacity, amount, fractional):
            return ("policy", name, amount)
        taken = used.get(name, Decimal(0)) if used else Decimal(0)
        if taken + amount.value > capacity.value.value:
            return ("capacity", name, amount, capacity.value.value - taken)
    return None


def consumption(device: Device, requested: dict, fractional: bool) -> dict:
    """Consumed amount of every capacity of a multi-allocatable device for one share."""
    return {
        name: consumed_amount(name, capacity, requested.get(name), fractional)
        for name, capacity in device.capacity.items()
    }
