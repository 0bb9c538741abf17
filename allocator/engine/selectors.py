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


def _split(name: str, driver: str) -> tuple[str, str]:
    if "/" in name:
        domain, _, ident = name.partition("/")
        return domain, ident
    return driver, name


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


def _bare_first(named: dict) -> list:
    """The (name, value) pairs with bare names first, each part in its order, so that a qualified
    spelling of the same name wins."""
    items = list(named.items())
    if any("/" in name for name, _ in items):
        return [item for item in items if "/" not in item[0]] + [item for item in items if "/" in item[0]]
    return items


def _build_input(device: Device) -> cel.DeviceInput:
    driver = device.driver
    attributes: dict = {}
    for name, value in _bare_first(device.attributes):
        if value.error:
            raise DeviceInputError(value.error)
        if value.kind is None:
            raise DeviceInputError(f"attribute {name}: unsupported attribute value")
        domain, ident = _split(name, driver)
        attributes.setdefault(domain, {})[ident] = list(value.value) if value.kind in LIST_KINDS else value.value
    capacity: dict = {}
    for name, cap in _bare_first(device.capacity):
        domain, ident = _split(name, driver)
        capacity.setdefault(domain, {})[ident] = cap.value
    return cel.DeviceInput(
        driver=driver,
        attributes=attributes,
        capacity=capacity,
        allow_multiple_allocations=device.allow_multiple,
    )


def runtime_message(error: Exception) -> str:
    message = getattr(error, "message", None) or str(error)
    if message.startswith("no such key"):
        message += NO_SUCH_KEY_HINT
    return message
