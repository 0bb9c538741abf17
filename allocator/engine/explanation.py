"""The explanation of one node's search as types: one per section, each with the Kubernetes-style
field names of the JSON under `explanation` in the API and the CLI.

`explain.explain` builds an `Explanation`; the page's panels, the workshop checks, compare and the
CLI report read its attributes. `as_dict()` is the one place it becomes JSON: snake_case field
names become camelCase keys (`shareID` says so itself), and a field marked `optional` is left out
while it is None, as the JSON has always done for the facts of a row that was not refused.
"""
from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from functools import lru_cache

from allocator.engine.sentence import Sentence  # noqa: F401 (the explanation's sentences are these)
from allocator.engine.trace import DONE
from allocator.engine.vocabulary import RowCode, Verdict

_OPTIONAL = {"optional": True}


def _key(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


@lru_cache(maxsize=None)
def _layout(cls) -> tuple:
    """(attribute, JSON key, left out while None) for each field of a section type."""
    return tuple((f.name, f.metadata.get("json") or _key(f.name), bool(f.metadata.get("optional")))
                 for f in dataclasses.fields(cls))


def to_json(value):
    """Plain JSON data of a section, a list of them, or a value inside one."""
    if isinstance(value, enum.Enum):
        return value.value
    if dataclasses.is_dataclass(value):
        out = {}
        for name, key, optional in _layout(type(value)):
            item = getattr(value, name)
            if item is None and optional:
                continue
            out[key] = to_json(item)
        return out
    if isinstance(value, (list, tuple)):
        return [to_json(item) for item in value]
    if isinstance(value, dict):
        return {key: to_json(item) for key, item in value.items()}
    return value


class Section:
    """A part of the explanation; `as_dict()` is its JSON. (No slots: the worker pickles the
    explanation, and a slots dataclass pickles through `dataclasses.fields()` once per object.)"""

    def as_dict(self) -> dict:
        return to_json(self)


# --- the why table -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WhyRow(Section):
    """One device for one request: what the reported attempt did with it, and why."""

    device: str
    pool: str  # driver/pool
    slice: str
    driver: str
    verdict: Verdict
    code: RowCode | None
    reason: str
    facts: dict | None = field(default=None, metadata=_OPTIONAL)  # the refusal's numbers and names
    counter_set: str | None = field(default=None, metadata=_OPTIONAL)  # the set a counter refusal is about
    held_by: list | None = field(default=None, metadata=_OPTIONAL)  # who holds what it needed
    state_dependent: bool | None = field(default=None, metadata=_OPTIONAL)  # set for every refusal
    consumed_capacity: dict | None = field(default=None, metadata=_OPTIONAL)  # a chosen share's amounts
    would: RowCode | None = field(default=None, metadata=_OPTIONAL)  # a device not needed would fail so

    @property
    def picked(self) -> bool:
        """Chosen, or picked in the attempt the search reported."""
        return self.verdict in (Verdict.CHOSEN, Verdict.TRIED)


@dataclass(frozen=True)
class RequestWhy(Section):
    """The rows of one request or subrequest of a claim."""

    blocked: bool  # the request the search could not satisfy
    request: str  # name, or request/subrequest
    device_class_name: str
    allocation_mode: str
    count: int
    subrequest_chosen: bool | None  # for a subrequest of a successful search: whether it was used
    chosen: list  # pool/device of each chosen row
    candidates: list  # WhyRow, in search order


@dataclass(frozen=True)
class ClaimWhy(Section):
    claim: str  # namespace/name
    requests: list  # RequestWhy


@dataclass(frozen=True)
class BlockedAt(Section):
    """Where a failed search got no further."""

    claim: str
    request: str


# --- pools and slices ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PoolState(Section):
    pool: str
    generation: int
    state: str  # usable, incomplete or invalid
    reason: str | None
    slices: list
    counter_slices: list
    other_slices: list
    devices: int

    @property
    def usable(self) -> bool:
        return self.state == "usable"


@dataclass(frozen=True)
class IgnoredSlice(Section):
    """A slice the kube-scheduler does not read (its gates do not know a field it uses)."""

    slice: str
    pool: str
    reason: str


# --- counters, capacity, compatibility groups --------------------------------------------------------


@dataclass(frozen=True)
class CounterUse(Section):
    counter: str
    total: str
    allocated_before: str
    allocated_now: str
    free: str


@dataclass(frozen=True)
class CounterMember(Section):
    """A device drawing on a counter set."""

    device: str
    groups: list
    allocated_before: bool
    allocated_now: bool


@dataclass(frozen=True)
class CounterSetUse(Section):
    blocks: list  # devices refused for this set
    pool: str
    counter_set: str
    counters: list  # CounterUse
    devices: list  # CounterMember
    groups: str | None  # the compatibility groups the set is left with, with that gate on


@dataclass(frozen=True)
class CapacityAmount(Section):
    value: str
    allocated_before: str
    policy: str | None  # the request policy in words


@dataclass(frozen=True)
class CapacityShare(Section):
    """One share of a device that allows multiple allocations, taken in this cycle."""

    claim: str
    request: str
    share_id: str | None = field(metadata={"json": "shareID"})
    consumed_capacity: dict = field(default_factory=dict)
    requested: dict = field(default_factory=dict)


@dataclass(frozen=True)
class DeviceCapacity(Section):
    device: str  # driver/pool/device
    capacity: dict  # name -> CapacityAmount
    shares_now: list  # CapacityShare


@dataclass(frozen=True)
class GroupStep(Section):
    device: str
    groups: list
    after: str  # the groups left once the device is added


@dataclass(frozen=True)
class GroupMember(Section):
    device: str
    groups: list
    rejected: str | None  # the reason a request refused it for its groups


@dataclass(frozen=True)
class CompatibilityGroups(Section):
    """One counter set with grouped devices: the groups before, after each pick, and at the end."""

    pool: str
    counter_set: str
    baseline: str
    steps: list  # GroupStep
    final: str
    devices: list  # GroupMember


# --- after the allocation: node operations ----------------------------------------------


@dataclass(frozen=True)
class KubeletCall(Section):
    call: str
    runs: bool


@dataclass(frozen=True)
class NodeOperations(Section):
    """Per claim and driver: which kubelet calls run, and whether the kubelet accepts the skip."""

    claim: str
    driver: str
    calls: list  # KubeletCall
    skips: bool
    node_declares_feature: bool
    kubelet_refusal: str | None = field(default=None, metadata=_OPTIONAL)  # the kubelet's error, if it refuses


# --- the device map --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MapDevice(Section):
    device: str
    slice: str
    state: str  # chosen, tried, in-use, shared, blocked, tainted, free
    blocked_by: str | None
    counter_sets: list


@dataclass(frozen=True)
class MapPool(Section):
    pool: str
    state: str
    devices: list  # MapDevice


# --- the replay ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Replay(Section):
    """The recorded steps, compact: each step is [kind, claim, request, pool, device, reason or outcome,
    counters, code] with every string an index into `strings`, counters as [[counter set, counter,
    amount]]. The page sends them so; `as_dict()` writes each step as an object."""

    strings: list
    steps: list
    total: int  # every step of the search
    shown: int
    # The facts of each refusal the steps meet, by the index of its text: {"code", "facts", "heldBy"}, as
    # a why row holds them, so a wording layer can say a refusal the why table does not hold. Not in
    # the JSON (`as_dict`), which the page and the API already had without it.
    refusals: dict = field(default_factory=dict, compare=False)

    def as_dict(self) -> dict:
        strings = self.strings
        steps = []
        for kind, claim, request, pool, device, text, counters, code in self.steps:
            entry = {"kind": strings[kind]}
            if claim is not None:
                entry["claim"], entry["request"] = strings[claim], strings[request]
            if device is not None:
                entry["device"], entry["pool"] = strings[device], strings[pool]
            if code is not None:
                entry["code"] = to_json(strings[code])
            if text is not None:
                entry["outcome" if entry["kind"] == DONE else "reason"] = strings[text]
            if counters:
                entry["counters"] = [{"counterSet": strings[s], "counter": strings[c], "amount": amount}
                                     for s, c, amount in counters]
            steps.append(entry)
        return {"steps": steps, "total": self.total, "shown": self.shown}


# --- the whole ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AllocatorVariant(Section):
    """Which of upstream's allocator variants ran (stable, incubating, experimental), and why that one."""

    variant: str
    why: str


@dataclass(frozen=True)
class Explanation(Section):
    node: str
    success: bool
    outcome: str  # the search's own outcome (the trace's done step: allocated, unsatisfiable, gave-up)
    blocked_at: BlockedAt | None
    headline: Sentence | None  # one sentence for the request a failed search could not satisfy
    approximate: str | None  # why the rows come from a pruned search, if they do
    pools: list  # PoolState
    claims: list  # ClaimWhy
    counter_sets: list  # CounterSetUse
    capacity: list  # DeviceCapacity
    node_operations: list  # NodeOperations
    compatibility: list  # CompatibilityGroups
    ignored_slices: list  # IgnoredSlice
    device_map: list  # MapPool
    steps: int
    trace: Replay
    allocator: AllocatorVariant | None = field(default=None, metadata={"optional": True})

    def as_dict(self) -> dict:
        out = {}
        for name, key, optional in _layout(Explanation):
            value = getattr(self, name)
            if value is None and optional:
                continue
            out[key] = value.as_dict() if isinstance(value, Replay) else to_json(value)
        return out

    def requests(self):
        """(claim, RequestWhy) for every request of every claim, in order."""
        for claim in self.claims:
            for request in claim.requests:
                yield claim, request

    def rows(self):
        """Every why row of every request."""
        for claim in self.claims:
            for request in claim.requests:
                yield from request.candidates
