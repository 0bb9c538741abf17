"""Claim constraints: matchAttribute and distinctAttribute.

Constraints compare the devices of one claim only. A device picked for a
request the constraint does not cover is accepted without a look.

`add` answers None (accepted) or a ConstraintMismatch naming the device that
fixed the value; `hopeless` is the exact pruning the search may use.
"""
from __future__ import annotations

from allocator.engine.objects import LIST_KINDS, AttributeValue, Device
from allocator.engine.refusals import ConstraintMismatch, Holder


def lookup_attribute(device: Device, name: str) -> AttributeValue | None:
    """Find a fully qualified attribute: `domain/id`, or bare `id` when domain is the driver."""
    value = device.attributes.get(name)
    if value is not None:
        return value
    domain, _, ident = name.partition("/")
    if domain == device.driver:
        return device.attributes.get(ident)
    return None


def same_scalar(a: AttributeValue, b: AttributeValue) -> bool:
    """Equal kind and equal value; versions by their exact text (build metadata counts), as upstream."""
    if a.kind != b.kind:
        return False
    if a.kind == "version":
        return str(a.value) == str(b.value)
    return a.value == b.value


def scalar_key(value: AttributeValue):
    """What `same_scalar` compares: kind and value, versions as their exact text."""
    return (value.kind, str(value.value) if value.kind == "version" else value.value)


class Constraint:
    """Base: which requests are covered and how devices are added and removed."""

    kind = ""

    def __init__(self, requests: tuple, attribute: str, list_types: bool, derived_lookup=None, claim: str = ""):
        self.requests = requests
        self.attribute = attribute
        self.list_types = list_types
        self.derived_lookup = derived_lookup  # (request_data, device, name) -> AttributeValue | None
        self.claim = claim  # namespace/name, for naming who fixed a value
        # One entry per accepted device: None when not covered, else (value, Holder of the pick).
        self.stack: list = []

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

    def remove(self, rd, device: Device) -> None:
        self.stack.pop()

    def _refuse(self, problem: str, value=None, other=None, by=()) -> ConstraintMismatch:
        return ConstraintMismatch(
            self.kind, self.attribute, problem,
            value.display() if isinstance(value, AttributeValue) else value,
            other.display() if isinstance(other, AttributeValue) else other,
            tuple(by))

    def _holder(self, rd, device: Device) -> Holder:
        return Holder(self.claim, rd.name, device.id_str)

    def _accepted(self) -> list:
        return [entry for entry in self.stack if entry is not None]

    def hopeless(self, rd, devices, needed: int, derived: set) -> bool:
        """True when the devices left cannot give `needed` more devices under this constraint."""
        return False


class MatchAttribute(Constraint):
    kind = "matchAttribute"

    def add(self, rd, device: Device) -> ConstraintMismatch | None:
        if not self.covers(rd.request.name, rd.parent_name):
            self.stack.append(None)
            return None
        value = self.value_of(rd, device)
        if value is None:
            return self._refuse("missing")
        if self.list_types:
            return self._add_set(rd, value, device)
        return self._add_scalar(rd, value, device)

    def _add_scalar(self, rd, value, device) -> ConstraintMismatch | None:
        # Without list types the first covered device sets the value whatever its kind;
        # every later one must carry an equal scalar (a list never equals anything).
        accepted = self._accepted()
        if accepted:
            if value.kind is None or value.is_list:
                return self._refuse("missing" if value.kind is None else "list")
            first_value, first_holder = accepted[0]
            if not same_scalar(first_value, value):
                return self._refuse("mismatch", value, first_value, (first_holder,))
        self.stack.append((value, self._holder(rd, device)))
        return None

    def _add_set(self, rd, value, device) -> ConstraintMismatch | None:
        values = value.comparable_set()
        if not values:
            return self._refuse("missing")
        accepted = self._accepted()
        entry = ((value.element_kind, values), self._holder(rd, device))
        if accepted:
            (kind, current), _ = accepted[-1]
            common = current & values if kind == value.element_kind else frozenset()
            if not common:
                shown = "{" + ", ".join(sorted(str(v) for v in current)) + "}"
                return self._refuse("disjoint", value, shown, tuple(h for _, h in accepted))
            entry = ((kind, common), entry[1])
        self.stack.append(entry)
        return None

    def hopeless(self, rd, devices, needed: int, derived: set) -> bool:
        if self.list_types or self.attribute in derived:
            return False
        accepted = self._accepted()
        if not accepted:
            return False
        first = accepted[0][0]
        if first.kind is None or first.is_list:
            return False
        matching = 0
        for device in devices:
            value = self.value_of(rd, device)
            if value is not None and same_scalar(value, first):
                matching += 1
                if matching >= needed:
                    return False
        return True


class DistinctAttribute(Constraint):
    kind = "distinctAttribute"

    def add(self, rd, device: Device) -> ConstraintMismatch | None:
        if not self.covers(rd.request.name, rd.parent_name):
            self.stack.append(None)
            return None
        value = self.value_of(rd, device)
        if value is None or value.kind is None:
            return self._refuse("missing")
        accepted = self._accepted()
        if self.list_types:
            mine = value.comparable_set()
            for other, holder in accepted:
                if other.kind is None:
                    continue
                if other.element_kind == value.element_kind and other.comparable_set() & mine:
                    return self._refuse("duplicate", value, other, (holder,))
        elif accepted and value.is_list:
            # Without list types a list equals nothing and cannot be told apart: refused
            # as soon as another covered device is there.
            return self._refuse("list")
        else:
            for other, holder in accepted:
                if same_scalar(other, value):
                    return self._refuse("duplicate", value, other, (holder,))
        self.stack.append((value, self._holder(rd, device)))
        return None

    def hopeless(self, rd, devices, needed: int, derived: set) -> bool:
        """Fewer distinct unused values remain than devices still needed (scalars of one kind only)."""
        if self.list_types or self.attribute in derived:
            return False
        taken = [value for value, _ in self._accepted()]
        kinds = {v.kind for v in taken}
        values = set()
        for device in devices:
            value = self.value_of(rd, device)
            if value is None or value.kind is None:
                continue
            kinds.add(value.kind)
            values.add(scalar_key(value))
        if len(kinds) > 1 or any(k in LIST_KINDS for k in kinds):
            return False
        return len(values - {scalar_key(v) for v in taken}) < needed
