"""The inputs of a CEL program: environment options and the device being matched."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Options:
    """Which environment to compile against.

    `stored=True` compiles as the scheduler does for stored objects: every field
    and function is declared regardless of feature gates. With `stored=False`
    (validation of a new expression) the gates decide: `list_type_attributes`
    declares `includes()` and lets attributes be iterated, `consumable_capacity`
    declares `device.allowMultipleAllocations`.
    """

    list_type_attributes: bool = False
    consumable_capacity: bool = True
    stored: bool = True


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention (frozen is slow to build)
class DeviceInput:
    """A device as CEL sees it.

    `attributes` maps domain -> identifier -> int | bool | str | Version, or a
    list of those (list-type attributes); `capacity` maps domain -> identifier
    -> Quantity.
    """

    driver: str
    attributes: dict
    capacity: dict
    allow_multiple_allocations: bool = False
