"""Consumable capacity: how much of a device's capacity one allocation consumes.

A multi-allocatable device consumes, per allocation, an amount of every
capacity it has; request policies round requests up to valid amounts.
Capacities are identified by their name exactly as written, as the Kubernetes
1.37 allocator (v0.37.2) does: `bw` and `<driver>/bw` are two different
capacities, a request must use the device's spelling, and so must an
allocation's consumedCapacity to count against it.
"""
from __future__ import annotations

from decimal import Decimal

from allocator.engine.objects import Capacity, Device
from allocator.engine.quantity import Quantity
from allocator.engine.refusals import CapacityShort, PolicyRefuses, quantity_text

INT64_MAX = 2**63 - 1
NOT_REPRESENTABLE = "capacity request cannot be represented in the device's range arithmetic"


class CapacityError(Exception):
    """A capacity request the allocator cannot handle (fatal upstream)."""


def device_capacities(device: Device) -> dict:
    """{name: (name as published, Capacity)}."""
    return {name: (name, cap) for name, cap in device.capacity.items()}


def resolve_requests(requests: dict | None, device: Device) -> dict | None:
    """{name: requested Quantity}, or None when the device lacks a requested capacity
    (spelled the same way); the device is then not a candidate."""
    if not requests:
        return {}
    if any(name not in device.capacity for name in requests):
        return None
    return dict(requests)


def _milli(q: Quantity) -> int | None:
    """The quantity in milli-units if that is lossless and fits int64, else None."""
    milli = q.value * 1000
    if milli != milli.to_integral_value() or abs(milli) > INT64_MAX:
        return None
    return int(milli)


def _uses_milli(valid_range, fractional: bool) -> bool:
    if not fractional:
        return False
    for index, q in enumerate(valid_range):
        if q is None:
            continue
        milli = _milli(q)
        if milli is None or (index == 2 and milli < 1):
            return False
    return True


def _round_up_range(request: Quantity, valid_range, fractional: bool) -> Quantity:
    low, _high, step = valid_range
    if request < low:
        return low.copy()
    if step is None:
        return request.copy()
    if _uses_milli(valid_range, fractional):
        wanted = _milli(request)
        if wanted is None:
            raise CapacityError(f"{NOT_REPRESENTABLE}: request {request} is not a representable milli value")
        unit, base = step.milli_value(), low.milli_value()
        steps = -((base - wanted) // unit)
        if steps > (INT64_MAX - base) // unit:
            raise CapacityError(f"{NOT_REPRESENTABLE}: rounding request {request} up to the next step "
                                "passes the milli-value range")
        return Quantity.from_milli(base + unit * steps, step.format)
    if request.value > INT64_MAX:
        raise CapacityError(f"{NOT_REPRESENTABLE}: request {request} exceeds MaxInt64")
    wanted, unit, base = request.int_value(), step.int_value(), low.int_value()
    if unit <= 0:
        raise CapacityError(f"{NOT_REPRESENTABLE}: step {step} is not positive")
    steps = -((base - wanted) // unit)
    if base >= 0 and steps > (INT64_MAX - base) // unit:
        raise CapacityError(f"{NOT_REPRESENTABLE}: rounding request {request} up to the next step passes MaxInt64")
    return Quantity.from_int(base + unit * steps, step.format)


def consumed_amount(name: str, capacity: Capacity, request: Quantity | None, fractional: bool) -> Quantity:
    """The amount one allocation consumes of one capacity (§11.2); `name` is for messages."""
    policy = capacity.policy
    try:
        if request is None:
            if policy is not None and policy.default is not None:
                amount = policy.default.copy()
            else:
                amount = capacity.value.copy()
        elif policy is None:
            amount = request.copy()
        elif policy.valid_range is not None and policy.valid_range[0] is not None:
            amount = _round_up_range(request, policy.valid_range, fractional)
        elif policy.valid_values is not None:
            amount = next((v.copy() for v in policy.valid_values if request <= v), request.copy())
        else:
            amount = request.copy()
    except CapacityError as exc:
        raise CapacityError(f'capacity "{name}": {exc}') from None
    if amount.value < 0:
        raise CapacityError(f'capacity "{name}": capacity value is negative')
    return amount


def violates_policy(capacity: Capacity, amount: Quantity, fractional: bool) -> bool:
    policy = capacity.policy
    if policy is None:
        return False
    if policy.default is not None and amount == policy.default:
        return False
    if policy.valid_range is not None:
        low, high, step = policy.valid_range
        if high is not None and amount > high:
            return True
        if step is not None and low is not None:
            if _uses_milli(policy.valid_range, fractional):
                wanted = _milli(amount)
                if wanted is None:
                    return True
                diff, unit = wanted - low.milli_value(), step.milli_value()
            else:
                diff, unit = amount.int_value() - low.int_value(), step.int_value()
            if unit == 0 or _go_remainder(diff, unit) != 0:
                return True
        return False
    if policy.valid_values:
        return all(amount != v for v in policy.valid_values)
    return False


def _go_remainder(a: int, b: int) -> int:
    """Go's % truncates toward zero."""
    remainder = abs(a) % abs(b)
    return -remainder if a < 0 else remainder


def consumption(device: Device, requested: dict, fractional: bool) -> dict:
    """{name: consumed Quantity} for one allocation of every capacity of the device."""
    return {
        key: consumed_amount(key, cap, requested.get(key), fractional)
        for key, (_, cap) in device_capacities(device).items()
    }


def shortfall(device: Device, requested: dict, used: dict | None, fractional: bool):
    """Why this allocation does not fit on the device (a Refusal), or None if it fits.

    `requested` comes from resolve_requests; `used` maps capacity names to
    the Decimal amount already consumed (earlier claims plus this
    attempt). Every amount is computed first, so an unrepresentable request is
    an error whatever the order of capacities. The refusal names the capacity
    as the device publishes it; who holds the rest is added by the caller.
    """
    capacities = device_capacities(device)
    amounts = {key: consumed_amount(key, cap, requested.get(key), fractional) for key, (_, cap) in capacities.items()}
    for key, (published, cap) in capacities.items():
        amount = amounts[key]
        if violates_policy(cap, amount, fractional):
            return PolicyRefuses(published, amount)
        taken = used.get(key, Decimal(0)) if used else Decimal(0)
        if taken + amount.value > cap.value.value:
            free = max(cap.value.value - taken, Decimal(0))
            return CapacityShort(published, str(amount), quantity_text(free, cap.value))
    return None


def status_name(key: str, device: Device) -> str:
    """The capacity name written in claim status: as the device publishes it."""
    return key
