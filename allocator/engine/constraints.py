"""Claim constraints: matchAttribute and distinctAttribute.

Constraints compare the devices of one claim only. A device picked for a
request the constraint does not cover is accepted without a look.
"""
from __future__ import annotations

from allocator.engine.objects import AttributeValue, Device


def lookup_attribute(device: Device, name: str) -> AttributeValue | None:
    """Find a fully qualified attribute: `domain/id`, or bare `id` when domain is the driver."""
    value = device.attributes.get(name)
    if value is not None:
        return value
    domain, _, ident = name.partition("/")
    if domain == device.driver:
        return device.attributes.get(ident)
    return None


def _same_scalar(a: AttributeValue, b: AttributeValue) -> bool:
    """Equal kind and equal value; versions by their exact text (build metadata counts), as upstream."""
    if a.kind != b.kind:
        return False
    if a.kind == "version":
        return str(a.value) == str(b.value)
    return a.value == b.value


class Constraint:
    """Base: which requests are covered and how devices are added and removed."""

    def __init__(self, requests: tuple, attribute: str, list_types: bool, derived_lookup=None):
        self.requests = requests
        self.attribute = attribute
        self.list_types = list_types
        self.derived_lookup = derived_lookup  # (request_data, device, name) -> AttributeValue | None
        self.rejection = None  # why the last device was refused, for explanations

    def covers(self, request_name: str, parent_name: str | None) -> bool:
        if not self.requests:
            return True
        if parent_name is None:
            return request_name in self.requests
        return parent_name in self.requests or f"{parent_name}/{request_name}" in self.requests

    def value_of(self, rd, device: Device) -> AttributeValue | None:
        if self.derived_lookup is not None:
            derived = self.derived_lookup(rd, device, self.attribute)
            if derived is not None:
                return derived
        return lookup_attribute(device, self.attribute)


class MatchAttribute(Constraint):
    kind = "matchAttribute"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.stack: list = []  # one entry per accepted covered device

    def add(self, rd, device: Device) -> bool:
        if not self.covers(rd.request.name, rd.parent_name):
            self.stack.append(None)
            return True
        value = self.value_of(rd, device)
        if value is None:
            self.rejection = ("missing", self.attribute, None)
            return False
        if self.list_types:
            return self._add_set(value, device)
        return self._add_scalar(value, device)

    def _add_scalar(self, value, device) -> bool:
        # Without list types the first covered device sets the value whatever its kind;
        # every later one must carry an equal scalar (a list never equals anything).
        first = next((entry for entry in self.stack if entry is not None), None)
        if first is None:
            self.stack.append(("first", value))
            return True
        first_value = first[1]
        if value.kind is None or value.is_list:
            self.rejection = ("missing" if value.kind is None else "list", self.attribute, None)
            return False
        if not _same_scalar(first_value, value):
            self.rejection = ("mismatch", self.attribute, first_value, value)
            return False
        self.stack.append(("same", value))
        return True

    def _add_set(self, value, device) -> bool:
        values = value.comparable_set() if value is not None else frozenset()
        kind = value.element_kind if value is not None else None
        if not values:
            self.rejection = ("missing", self.attribute, None)
            return False
        current = next((entry for entry in reversed(self.stack) if entry is not None), None)
        if current is None:
            self.stack.append((kind, values))
            return True
        current_kind, current_values = current
        common = current_values & values if current_kind == kind else frozenset()
        if not common:
            self.rejection = ("disjoint", self.attribute, current_values, value)
            return False
        self.stack.append((kind, common))
        return True

    def remove(self, rd, device: Device) -> None:
        self.stack.pop()

    def state(self):
        current = next((entry for entry in reversed(self.stack) if entry is not None), None)
        return current


class DistinctAttribute(Constraint):
    kind = "distinctAttribute"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.stack: list = []  # accepted values (None for uncovered devices)

    def add(self, rd, device: Device) -> bool:
        if not self.covers(rd.request.name, rd.parent_name):
            self.stack.append(None)
            return True
        value = self.value_of(rd, device)
        if value is None or value.kind is None:
            self.rejection = ("missing", self.attribute, None)
            return False
        accepted = [entry for entry in self.stack if entry is not None]
        if self.list_types:
            mine = value.comparable_set()
            for other in accepted:
                if other.kind is None:
                    continue
                if other.element_kind == value.element_kind and other.comparable_set() & mine:
                    self.rejection = ("duplicate", self.attribute, other, value)
                    return False
        elif accepted and value.is_list:
            # Without list types a list equals nothing and cannot be told apart: refused
            # as soon as another covered device is there.
            self.rejection = ("list", self.attribute, None)
            return False
        else:
            for other in accepted:
                if _same_scalar(other, value):
                    self.rejection = ("duplicate", self.attribute, other, value)
                    return False
        self.stack.append(value)
        return True

    def remove(self, rd, device: Device) -> None:
        self.stack.pop()
