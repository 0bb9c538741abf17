"""Evaluating class and request CEL selectors on devices."""
from __future__ import annotations

import dataclasses

from allocator.engine import cel
from allocator.engine.objects import LIST_KINDS, Device

NO_SUCH_KEY_HINT = (
    ". consider using CEL optional chaining (.? followed by orValue()) or guarding the check "
    "with has() for optional fields"
)


class DeviceInputError(Exception):
    """The device cannot be shown to CEL (an attribute without a usable value)."""


def device_input(device: Device, *, stable: bool = False) -> cel.DeviceInput:
    """The CEL view of a device; raises DeviceInputError like upstream's conversion does.

    The stable allocator does not hand allowMultipleAllocations to CEL (1.37.2 passes only the
    driver, attributes and capacity), so there a selector sees it false whatever the slice says."""
    result = device.cel_input
    if result is None:
        try:
            result = _build_input(device)
        except DeviceInputError as exc:
            result = exc
        device.cel_input = result
    if isinstance(result, DeviceInputError):
        raise result
    if stable and result.allow_multiple_allocations:
        return dataclasses.replace(result, allow_multiple_allocations=False)
    return result


def _by_domain(named: dict, driver: str, value_of) -> dict:
    """domain -> identifier -> value_of(name, item): bare names (the driver's domain) first, then the
    qualified ones, each part in its order, so that a qualified spelling of the same name wins."""
    out: dict = {}
    own = None
    qualified = None
    for name, item in named.items():
        if "/" in name:
            if qualified is None:
                qualified = []
            qualified.append((name, item))
            continue
        value = value_of(name, item)
        if own is None:
            own = out[driver] = {}
        own[name] = value
    if qualified:
        for name, item in qualified:
            value = value_of(name, item)
            domain, _, ident = name.partition("/")
            out.setdefault(domain, {})[ident] = value
    return out


def _attribute(name: str, value):
    if value.error:
        raise DeviceInputError(value.error)
    kind = value.kind
    if kind is None:
        raise DeviceInputError(f"attribute {name}: unsupported attribute value")
    return list(value.value) if kind in LIST_KINDS else value.value


def _capacity(name: str, cap):
    return cap.value


def _build_input(device: Device) -> cel.DeviceInput:
    driver = device.driver
    return cel.DeviceInput(
        driver,
        _by_domain(device.attributes, driver, _attribute) if device.attributes else {},
        _by_domain(device.capacity, driver, _capacity) if device.capacity else {},
        device.allow_multiple,
    )


def runtime_message(error: Exception) -> str:
    message = getattr(error, "message", None) or str(error)
    if message.startswith("no such key"):
        message += NO_SUCH_KEY_HINT
    return message
