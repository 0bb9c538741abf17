"""Why a check refused a device: small typed values, each with a stable code and its own wording.

A check returns one of these (or None when the device passes). State-dependent
refusals name who holds what the device needed, as data (`Holder`), so the page
and the tests can draw or check it; `as_dict` is the one place a refusal becomes
JSON.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from decimal import Decimal

from allocator.engine.quantity import Quantity
from allocator.engine.vocabulary import RowCode


@dataclass(frozen=True, slots=True)
class Holder:
    """Who holds a device, a share or counters: a claim allocated before, or a pick of this attempt."""

    claim: str
    request: str | None = None  # None for a claim that was allocated before this cycle
    device: str | None = None  # driver/pool/device
    amount: str | None = None  # what it holds, as a quantity

    @property
    def before(self) -> bool:
        return self.request is None

    def as_dict(self) -> dict:
        out = {"claim": self.claim, "request": self.request, "device": self.device, "allocatedBefore": self.before}
        if self.amount is not None:
            out["amount"] = self.amount
        return out

    def text(self) -> str:
        if self.before:
            return f"claim {self.claim} (allocated before)"
        return f"claim {self.claim}, request {self.request}"


def _holders_text(holders: tuple) -> str:
    parts = []
    for h in holders:
        took = f" took {h.amount}" if h.amount is not None else ""
        on = f" on {h.device.rpartition('/')[2]}" if h.device is not None and h.amount is not None else ""
        parts.append(f"{h.text()}{took}{on}")
    return "; ".join(parts)


def quantity_text(amount, like: Quantity | None = None) -> str:
    """A Decimal amount printed as a quantity, in the format of `like` when given."""
    if isinstance(amount, Quantity):
        return str(amount)
    return _quantity_text(Decimal(amount), like.format if like is not None else "DecimalSI")


@functools.lru_cache(maxsize=4096)
def _quantity_text(amount: Decimal, format_name: str) -> str:
    # A search prints the same few amounts in hundreds of refusals.
    return str(Quantity(amount, format_name))


class Refusal:
    """Base of every refusal. `code` is stable; `state_dependent` says whether the moment matters."""

    code: RowCode  # every refusal class names its own
    state_dependent = False

    def text(self) -> str:
        raise NotImplementedError

    def facts(self) -> dict:
        return {}

    def holders(self) -> tuple:
        return ()

    def as_dict(self) -> dict:
        out = {"code": self.code, "reason": self.text()}
        facts = self.facts()
        if facts:
            out["facts"] = facts
        holders = self.holders()
        if holders:
            out["heldBy"] = [h.as_dict() for h in holders]
        return out


# --- true at any moment -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SelectorFalse(Refusal):
    owner: str  # "class" or "claim"
    name: str  # the class name, or the claim's namespace/name
    index: int
    expression: str
    code = RowCode.SELECTOR

    def text(self) -> str:
        where = f"device class {self.name}" if self.owner == "class" else "request"
        return f"{where} selector #{self.index} is false: {self.expression}"

    def facts(self) -> dict:
        return {"owner": self.owner, "name": self.name, "index": self.index, "expression": self.expression}


@dataclass(frozen=True, slots=True)
class BindingGateOff(Refusal):
    code = RowCode.BINDING_GATE

    def text(self) -> str:
        return "device has bindingConditions but DRADeviceBindingConditions is disabled"


@dataclass(frozen=True, slots=True)
class DeviceNodeMismatch(Refusal):
    code = RowCode.DEVICE_NODE

    def text(self) -> str:
        return "the device's own node selection does not include this node"


@dataclass(frozen=True, slots=True)
class NodeOperationsGateOff(Refusal):
    code = RowCode.NODE_OPS_GATE

    def text(self) -> str:
        return "its slice sets skipNodeOperations but DRAOptionalNodeOperations is disabled in the scheduler"


@dataclass(frozen=True, slots=True)
class NodeOperationsUndeclared(Refusal):
    code = RowCode.NODE_OPS_UNDECLARED

    def text(self) -> str:
        return ("its slice sets skipNodeOperations but the node does not declare DRAOptionalNodeOperations "
                "in status.declaredFeatures")


@dataclass(frozen=True, slots=True)
class PartitionableGateOff(Refusal):
    code = RowCode.PARTITIONABLE_GATE

    def text(self) -> str:
        return "device consumes counters but DRAPartitionableDevices is disabled"


@dataclass(frozen=True, slots=True)
class TaintNotTolerated(Refusal):
    taint: object  # objects.Taint
    code = RowCode.TAINT

    def text(self) -> str:
        value = f"={self.taint.value}" if self.taint.value else ""
        return f"taint {self.taint.key}{value}:{self.taint.effect} is not tolerated"

    def facts(self) -> dict:
        return {"key": self.taint.key, "value": self.taint.value, "effect": self.taint.effect}


@dataclass(frozen=True, slots=True)
class CapacityMissing(Refusal):
    names: tuple
    code = RowCode.CAPACITY_MISSING

    def text(self) -> str:
        return "device has no capacity named " + ", ".join(self.names)

    def facts(self) -> dict:
        return {"capacities": list(self.names)}


@dataclass(frozen=True, slots=True)
class PolicyRefuses(Refusal):
    capacity: str
    amount: Quantity
    code = RowCode.POLICY

    def text(self) -> str:
        return f"capacity {self.capacity}: {self.amount} is not allowed by the device's requestPolicy"

    def facts(self) -> dict:
        return {"capacity": self.capacity, "amount": str(self.amount)}


@dataclass(frozen=True, slots=True)
class NoRoomLeft(Refusal):
    """Passes every check, but too few candidates remain after it for the devices still needed.

    Only the pruned search says this; the explanation re-runs the search without pruning when it can.
    """

    needed: int
    constraint: str | None = None  # set when a constraint leaves too few values
    code = RowCode.NO_ROOM

    def text(self) -> str:
        if self.constraint:
            return f"fits, but {self.constraint} leaves fewer than {self.needed} usable value(s) from here"
        return f"fits, but fewer than {self.needed} candidate(s) remain from here for this request"


# --- true only at the moment the search considered the device ---------------------------------


@dataclass(frozen=True, slots=True)
class InUse(Refusal):
    held_by: tuple = ()
    code = RowCode.IN_USE
    state_dependent = True

    def text(self) -> str:
        if not self.held_by:
            return "in use"
        if all(h.before for h in self.held_by):
            return "in use: already allocated to " + ", ".join(f"claim {h.claim}" for h in self.held_by)
        return "in use: picked earlier in this attempt for " + "; ".join(h.text() for h in self.held_by)

    def holders(self) -> tuple:
        return self.held_by


@dataclass(frozen=True, slots=True)
class SameClaim(Refusal):
    code = RowCode.SAME_CLAIM
    state_dependent = True

    def text(self) -> str:
        return "already picked for this claim (admin access never takes a device twice in one claim)"


@dataclass(frozen=True, slots=True)
class GroupsIncompatible(Refusal):
    counter_set: str
    current: str  # the set's groups at that moment, described
    groups: tuple  # the device's groups
    set_by: tuple = ()  # Holders whose devices fixed the current groups
    code = RowCode.GROUPS
    state_dependent = True

    def text(self) -> str:
        mine = "{" + ", ".join(self.groups) + "}" if self.groups else "no groups"
        by = f" (set by {_devices_text(self.set_by)})" if self.set_by else ""
        if self.groups and self.current.startswith("{"):
            return f"compatibility groups in counter set {self.counter_set}: {self.current} ∩ {mine} = ∅{by}"
        return f"compatibility groups in counter set {self.counter_set}: {mine} cannot join {self.current}{by}"

    def facts(self) -> dict:
        return {"counterSet": self.counter_set, "groupsNow": self.current, "deviceGroups": list(self.groups)}

    def holders(self) -> tuple:
        return self.set_by


def _devices_text(holders: tuple) -> str:
    return ", ".join(
        f"{h.device.rpartition('/')[2]} of {h.text()}" if h.device else h.text() for h in holders)


@dataclass(frozen=True, slots=True)
class CounterShort(Refusal):
    counter_set: str
    counter: str
    need: str  # what the device would take, as a quantity ("" when it takes none of it)
    left: str  # what was left at that moment
    held_by: tuple = ()  # Holders with the amounts they consume from this counter
    code = RowCode.COUNTER
    state_dependent = True

    def text(self) -> str:
        after = f" after {_holders_text(self.held_by)}" if self.held_by else ""
        if not self.need:
            return f"counter {self.counter} in set {self.counter_set} is overdrawn ({self.left} left{after})"
        return f"counter {self.counter} in set {self.counter_set} needs {self.need}, {self.left} left{after}"

    def facts(self) -> dict:
        return {"counterSet": self.counter_set, "counter": self.counter, "need": self.need, "left": self.left}

    def holders(self) -> tuple:
        return self.held_by


@dataclass(frozen=True, slots=True)
class CapacityShort(Refusal):
    capacity: str
    need: str
    free: str
    held_by: tuple = ()
    code = RowCode.CAPACITY
    state_dependent = True

    def text(self) -> str:
        after = f" ({_holders_text(self.held_by)})" if self.held_by else ""
        return f"capacity {self.capacity}: needs {self.need}, {self.free} free{after}"

    def facts(self) -> dict:
        return {"capacity": self.capacity, "need": self.need, "free": self.free}

    def holders(self) -> tuple:
        return self.held_by


@dataclass(frozen=True, slots=True)
class ConstraintMismatch(Refusal):
    kind: str  # matchAttribute or distinctAttribute
    attribute: str
    problem: str  # missing, list, mismatch, disjoint, duplicate
    value: str | None = None  # the device's value, displayed
    other: str | None = None  # the value it conflicts with, displayed
    fixed_by: tuple = ()  # Holders: the device(s) picked earlier that fixed the value
    code = RowCode.CONSTRAINT

    @property
    def state_dependent(self) -> bool:
        return self.problem in ("mismatch", "disjoint", "duplicate")

    def text(self) -> str:
        by = f" (from {_devices_text(self.fixed_by)})" if self.fixed_by else ""
        if self.problem == "missing":
            return f"{self.kind}: device has no attribute {self.attribute}"
        if self.problem == "list":
            return f"{self.kind}: attribute {self.attribute} is a list (needs DRAListTypeAttributes)"
        if self.problem == "mismatch":
            return f"matchAttribute {self.attribute}: {self.value} differs from {self.other}{by}"
        if self.problem == "disjoint":
            return f"matchAttribute {self.attribute}: {self.value} has nothing in common with {self.other}{by}"
        if self.problem == "duplicate":
            return f"distinctAttribute {self.attribute}: {self.value} is already used{by}"
        return f"{self.kind} {self.attribute} not satisfied"

    def facts(self) -> dict:
        return {"constraint": self.kind, "attribute": self.attribute, "problem": self.problem,
                "value": self.value, "conflictsWith": self.other}

    def holders(self) -> tuple:
        return self.fixed_by
