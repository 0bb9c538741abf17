"""Checks: declarative assertions over the result of the attendee's scenario and settings.

Every check reads the engine's typed outcome (its explanation included) or the
parsed scenario, never the text of a message. Each kind is one mapping with `message` (shown
when it fails) and an optional `label` (what it checks, shown beside ✓ / ✗):

    outcome: allocated | unsatisfiable | invalid      [node: worker-1]
    claim: ns/name    [allocated: true|false] [request: gpu] [devices: [gpu-1, pool/dev]] [match: 'mig-1g-.*'] [count: 2]
    counter: memory   counterSet: gpu-0 [pool: driver/pool]  free: 2Gi | freeAtLeast: 1Gi | freeAtMost: 0
    capacity: bandwidth  device: eth1 [claim: ns/name]  consumed: 8G
    row: gpu-1        claim: ns/name [request: gpu]  code: selector | verdict: rejected
    pod: ns/name      node: worker-1 | pending: true|false  [reason: 'Insufficient cpu'  (a whole reason the
                      scheduler gave some node for the pending pod, as in its `0/N nodes are available` line)]
    gate: DRADeviceCompatibilityGroups  [component: scheduler]  value: true
    unchanged: [ResourceSlice, DeviceClass/gpu.example.com, ResourceClaim/default/big]
    selector: 'productName'   claim: ns/name [request: gpu]    (a CEL selector containing this text is still there)
    statusWriters: ns/name  [pinnedToNode: worker-1 | ""] [driver: d] [verb: associated-node:update]
"""
from __future__ import annotations

from dataclasses import dataclass

import re2

from allocator.engine.gates import COMPONENT_KEYS, GATES
from allocator.engine.loader import load_scenario
from allocator.engine.outcome import Outcome
from allocator.engine.quantity import Quantity, QuantityError
from allocator.engine.vocabulary import OutcomeKind, RowCode, Verdict
from allocator.workshops.model import Check, Variant

# The words a check may use are the engine's own.
OUTCOMES = tuple(kind.value for kind in OutcomeKind)
VERDICTS = tuple(verdict.value for verdict in Verdict)
CODES = tuple(code.value for code in RowCode)

# kind -> (fields it may have besides message and label). Order matters: `claim` is also a field of others.
KINDS = {
    "outcome": {"node"},
    "row": {"claim", "request", "code", "verdict"},
    "counter": {"counterSet", "pool", "free", "freeAtLeast", "freeAtMost"},
    "capacity": {"device", "claim", "consumed"},
    "pod": {"node", "pending", "reason"},
    "gate": {"component", "value"},
    "unchanged": set(),
    "selector": {"claim", "request"},
    "statusWriters": {"pinnedToNode", "driver", "verb"},
    "claim": {"allocated", "request", "devices", "match", "count"},
}


@dataclass(frozen=True)
class CheckResult:
    ok: bool
    label: str
    message: str  # the check's failure message (shown only when not ok)
    line: int | None = None

    def as_dict(self) -> dict:
        return {"ok": self.ok, "label": self.label, "message": None if self.ok else self.message, "line": self.line}


def claim_key(name: str) -> str:
    """`name` or `namespace/name` -> `namespace/name` (the default namespace when none is given)."""
    return name if "/" in name else f"default/{name}"


# ---- parsing -----------------------------------------------------------------------------------

def parse_check(raw, path: tuple, reader) -> Check | None:
    if not isinstance(raw, dict):
        reader.problem("a check must be a mapping such as {outcome: allocated, message: ...}", path)
        return None
    kind = next((k for k in KINDS if k in raw), None)
    if kind is None:
        reader.problem(f"unknown check: expected one of the keys {', '.join(KINDS)}", path)
        return None
    allowed = KINDS[kind] | {kind, "message", "label"}
    for key in raw:
        if key not in allowed:
            reader.problem(f"unknown field {key!r} in a {kind} check (expected {', '.join(sorted(allowed))})",
                           path + (key,))
    message = raw.get("message")
    if not isinstance(message, str) or not message.strip():
        reader.problem(f"missing field message in a {kind} check: what the attendee reads when it fails", path)
        message = ""
    spec = {k: v for k, v in raw.items() if k not in ("message", "label")}
    problems_before = len(reader.problems)
    _validate(kind, spec, path, reader)
    if len(reader.problems) > problems_before:
        return None
    label = raw.get("label") if isinstance(raw.get("label"), str) else describe(kind, spec)
    return Check(kind=kind, spec=spec, message=message, line=reader.located.line(path), label=label)


def _validate(kind: str, spec: dict, path: tuple, reader) -> None:
    def need(key, types, what):
        if key not in spec:
            reader.problem(f"missing field {key} in a {kind} check ({what})", path)
            return False
        if not isinstance(spec[key], types) or (bool not in _tuple(types) and isinstance(spec[key], bool)):
            reader.problem(f"{key} must be {what}", path + (key,))
            return False
        return True

    def optional(key, types, what):
        if key in spec:
            need(key, types, what)

    def quantity(key):
        if key in spec:
            try:
                Quantity.parse(str(spec[key]))
            except (QuantityError, ValueError):
                reader.problem(f"{key}: {spec[key]!r} is not a quantity (such as 2Gi, 500m, 8)", path + (key,))

    def pattern(key):
        if key in spec and isinstance(spec[key], str):
            try:
                re2.compile(spec[key])
            except re2.error as exc:
                reader.problem(f"{key}: bad pattern {spec[key]!r}: {exc}", path + (key,))

    if kind == "outcome":
        if spec["outcome"] not in OUTCOMES:
            reader.problem(f"outcome must be one of {', '.join(OUTCOMES)}", path + ("outcome",))
        optional("node", str, "a node name")
    elif kind == "claim":
        need("claim", str, "a claim name, namespace/name")
        optional("allocated", bool, "true or false")
        optional("request", str, "a request name")
        optional("match", str, "a regular expression for device names")
        optional("count", int, "a number of devices")
        pattern("match")
        if "devices" in spec and not (isinstance(spec["devices"], list)
                                      and all(isinstance(d, str) for d in spec["devices"])):
            reader.problem("devices must be a list of device names (device, pool/device or driver/pool/device)",
                           path + ("devices",))
        if not ({"allocated", "devices", "match", "count"} & spec.keys()):
            reader.problem("a claim check needs allocated, devices, match or count", path)
    elif kind == "counter":
        need("counter", str, "a counter name")
        need("counterSet", str, "a counter set name")
        optional("pool", str, "a pool, driver/pool")
        bounds = {"free", "freeAtLeast", "freeAtMost"} & spec.keys()
        if not bounds:
            reader.problem("a counter check needs free, freeAtLeast or freeAtMost", path)
        for key in bounds:
            quantity(key)
    elif kind == "capacity":
        need("capacity", str, "a capacity name")
        need("device", str, "a device name")
        optional("claim", str, "a claim name")
        if need("consumed", (str, int), "a quantity"):
            quantity("consumed")
    elif kind == "row":
        need("row", str, "a device name")
        need("claim", str, "a claim name")
        optional("request", str, "a request name")
        if "code" not in spec and "verdict" not in spec:
            reader.problem("a row check needs code or verdict", path)
        if "code" in spec and spec["code"] not in CODES:
            reader.problem(f"unknown reason code {spec['code']!r} (expected one of {', '.join(CODES)})",
                           path + ("code",))
        if "verdict" in spec and spec["verdict"] not in VERDICTS:
            reader.problem(f"unknown verdict {spec['verdict']!r} (expected one of {', '.join(VERDICTS)})",
                           path + ("verdict",))
    elif kind == "pod":
        need("pod", str, "a pod, namespace/name")
        if ("node" in spec) == ("pending" in spec):
            reader.problem("a pod check needs either node or pending: true|false", path)
        optional("node", str, "a node name")
        optional("pending", bool, "true or false")
        optional("reason", str, "one reason the scheduler gives a node, e.g. 'Insufficient cpu'")
        if "reason" in spec and spec.get("pending") is not True:
            reader.problem("a pod check with reason needs pending: true", path + ("reason",))
    elif kind == "gate":
        if spec["gate"] not in GATES:
            reader.problem(f"unknown feature gate {spec['gate']!r}", path + ("gate",))
        component = spec.get("component", "all")
        if component not in COMPONENT_KEYS + ("all",):
            reader.problem(f"unknown component {component!r} (expected one of {', '.join(COMPONENT_KEYS)} or all)",
                           path + ("component",))
        need("value", bool, "true or false")
    elif kind == "unchanged":
        refs = spec["unchanged"]
        if isinstance(refs, str):
            refs = [refs]
        if not isinstance(refs, list) or not refs or not all(isinstance(r, str) and r for r in refs):
            reader.problem("unchanged must list objects: Kind, Kind/name or Kind/namespace/name", path + ("unchanged",))
    elif kind == "statusWriters":
        optional("pinnedToNode", str, 'a node name, or "" for none')
        optional("driver", str, "a driver name")
        optional("verb", str, "a verb such as associated-node:update")
        if not ({"pinnedToNode", "verb"} & spec.keys()):
            reader.problem("a statusWriters check needs pinnedToNode or verb", path)
    elif kind == "selector":
        need("selector", str, "text the CEL expression must still contain")
        need("claim", str, "a claim name")
        optional("request", str, "a request name")


def _tuple(types):
    return types if isinstance(types, tuple) else (types,)


def describe(kind: str, spec: dict) -> str:
    """A short label for a check, from its fields."""
    if kind == "outcome":
        return f"outcome is {spec['outcome']}" + (f" on {spec['node']}" if spec.get("node") else "")
    if kind == "claim":
        parts = []
        if "allocated" in spec:
            parts.append("is allocated" if spec["allocated"] else "stays pending")
        if "devices" in spec:
            parts.append("gets " + ", ".join(spec["devices"]))
        if "match" in spec:
            parts.append(f"gets devices matching {spec['match']}")
        if "count" in spec:
            parts.append(f"gets {spec['count']} device(s)")
        return f"claim {spec['claim']}" + (f" request {spec['request']}" if spec.get("request") else "") \
            + " " + " and ".join(parts)
    if kind == "counter":
        words = {"free": "has {} free", "freeAtLeast": "has at least {} free", "freeAtMost": "has at most {} free"}
        bound = " and ".join(words[k].format(spec[k]) for k in words if k in spec)
        return f"counter {spec['counterSet']}/{spec['counter']} {bound}"
    if kind == "capacity":
        return f"{spec['capacity']} consumed on {spec['device']} is {spec['consumed']}"
    if kind == "row":
        what = spec.get("code") or spec.get("verdict")
        return f"{spec['row']} for claim {spec['claim']} is {what}"
    if kind == "pod":
        if "reason" in spec:
            return f"pod {spec['pod']} stays pending, a node refused with “{spec['reason']}”"
        if "pending" in spec:
            return f"pod {spec['pod']} " + ("stays pending" if spec["pending"] else "is scheduled")
        return f"pod {spec['pod']} runs on {spec['node']}"
    if kind == "gate":
        return f"{spec['gate']} is {'on' if spec.get('value') else 'off'} for {spec.get('component', 'every component')}"
    if kind == "unchanged":
        refs = spec["unchanged"] if isinstance(spec["unchanged"], list) else [spec["unchanged"]]
        return "unchanged from the start: " + ", ".join(refs)
    if kind == "statusWriters":
        parts = []
        if "pinnedToNode" in spec:
            parts.append(f"is pinned to {spec['pinnedToNode']}" if spec["pinnedToNode"] else "is not pinned to a node")
        if "verb" in spec:
            parts.append(f"lets {spec.get('driver', 'its driver')} write status with {spec['verb']}")
        return f"claim {spec['statusWriters']} " + " and ".join(parts)
    if kind == "selector":
        return f"claim {spec['claim']} still selects on {spec['selector']}"
    return kind


# ---- evaluating --------------------------------------------------------------------------------

@dataclass
class Submission:
    """What the checks look at: the attendee's scenario and settings, the result, and the lesson's start."""

    variant: Variant
    outcome: Outcome
    start: Variant

    _objects: dict | None = None
    _start_objects: dict | None = None

    def objects(self, start: bool = False) -> dict | None:
        """(kind, namespace, name) -> object data, or None when the text does not parse."""
        attr = "_start_objects" if start else "_objects"
        if getattr(self, attr) is None:
            loaded = load_scenario((self.start if start else self.variant).scenario)
            if any(p.severity == "error" for p in loaded.problems) and not loaded.objects:
                return None
            index = {}
            for obj in loaded.objects:
                meta = obj.data.get("metadata") or {}
                namespace = meta.get("namespace") or ("default" if obj.data.get("kind") in NAMESPACED else "")
                index[(obj.data.get("kind"), namespace, meta.get("name"))] = obj.data
            setattr(self, attr, index)
        return getattr(self, attr)


NAMESPACED = {"ResourceClaim", "ResourceClaimTemplate", "Pod"}


def evaluate(checks, attempt: Submission) -> list[CheckResult]:
    return [CheckResult(_passes(check, attempt), check.label, check.message, check.line) for check in checks]


def _passes(check: Check, attempt: Submission) -> bool:
    try:
        return bool(EVALUATORS[check.kind](check.spec, attempt))
    except (KeyError, TypeError, ValueError, QuantityError):
        return False


def _outcome(spec, attempt):
    outcome = attempt.outcome
    if outcome.outcome != spec["outcome"]:
        return False
    node = spec.get("node")
    if not node:
        return True
    if spec["outcome"] == OutcomeKind.ALLOCATED:
        return outcome.node == node if outcome.pods is None else any(p.node == node for p in outcome.pods)
    verdicts = {v.node: v for v in outcome.verdicts}
    return node in verdicts and not verdicts[node].fits if spec["outcome"] == OutcomeKind.UNSATISFIABLE else True


def _claim_results(attempt, name: str) -> tuple[bool, list | None]:
    """(found, results) for a claim of the outcome or of a scheduled pod; results None when pending."""
    key = claim_key(name)
    for claim in attempt.outcome.claims:
        meta = claim["metadata"]
        if f"{meta['namespace']}/{meta['name']}" == key:
            allocation = (claim.get("status") or {}).get("allocation")
            return True, allocation["devices"]["results"] if allocation else None
    for pod in attempt.outcome.pods or ():
        for claim in pod.claims:
            if f"{claim.namespace}/{claim.name}" == key:
                allocation = claim.allocation
                return True, allocation["devices"]["results"] if allocation else None
    return False, None


def device_matches(ref: str, driver: str, pool: str, device: str) -> bool:
    return ref in (device, f"{pool}/{device}", f"{driver}/{pool}/{device}")


def _claim(spec, attempt):
    found, results = _claim_results(attempt, spec["claim"])
    if not found:
        return False
    if "allocated" in spec and spec["allocated"] != (results is not None):
        return False
    if results is None:
        return not ({"devices", "match", "count"} & spec.keys())
    if spec.get("request"):
        results = [r for r in results if r["request"] == spec["request"]
                   or r["request"].startswith(spec["request"] + "/")]
    if "count" in spec and len(results) != spec["count"]:
        return False
    if "match" in spec:
        pattern = re2.compile(spec["match"])
        if not results or not all(pattern.fullmatch(r["device"]) for r in results):
            return False
    if "devices" in spec:
        wanted = list(spec["devices"])
        if len(wanted) != len(results):
            return False
        for r in results:
            hit = next((w for w in wanted if device_matches(w, r["driver"], r["pool"], r["device"])), None)
            if hit is None:
                return False
            wanted.remove(hit)
    return True


def _sections(attempt, name: str) -> list:
    """One section of the explanation (empty without one)."""
    explanation = attempt.outcome.explanation
    return getattr(explanation, name) if explanation is not None else []


def _counter(spec, attempt):
    for cs in _sections(attempt, "counter_sets"):
        if cs.counter_set != spec["counterSet"]:
            continue
        if spec.get("pool") and cs.pool != spec["pool"] and not cs.pool.endswith("/" + spec["pool"]):
            continue
        for counter in cs.counters:
            if counter.counter != spec["counter"]:
                continue
            free = Quantity.parse(counter.free)
            if "free" in spec and free != Quantity.parse(str(spec["free"])):
                return False
            if "freeAtLeast" in spec and free < Quantity.parse(str(spec["freeAtLeast"])):
                return False
            if "freeAtMost" in spec and free > Quantity.parse(str(spec["freeAtMost"])):
                return False
            return True
    return False


def _capacity(spec, attempt):
    for entry in _sections(attempt, "capacity"):
        driver, _, rest = entry.device.partition("/")
        pool, _, device = rest.rpartition("/")
        if not device_matches(spec["device"], driver, pool, device):
            continue
        cap = entry.capacity.get(spec["capacity"])
        if cap is None:
            return False
        total = Quantity.parse("0")
        if not spec.get("claim"):
            total = total.add(Quantity.parse(cap.allocated_before))
        for share in entry.shares_now:
            if spec.get("claim") and share.claim != claim_key(spec["claim"]):
                continue
            amount = share.consumed_capacity.get(spec["capacity"])
            if amount is not None:
                total = total.add(Quantity.parse(amount))
        return total == Quantity.parse(str(spec["consumed"]))
    return False


def _row(spec, attempt):
    key = claim_key(spec["claim"])
    for claim in _sections(attempt, "claims"):
        if claim.claim != key:
            continue
        for request in claim.requests:
            if spec.get("request") and request.request != spec["request"]:
                continue
            for candidate in request.candidates:
                pool = candidate.pool.split("/", 1)[-1]  # the explanation names pools driver/pool
                if not device_matches(spec["row"], candidate.driver, pool, candidate.device):
                    continue
                if "code" in spec and candidate.code != spec["code"]:
                    return False
                if "verdict" in spec and candidate.verdict != spec["verdict"]:
                    return False
                return True
    return False


def _pod(spec, attempt):
    key = claim_key(spec["pod"])
    for pod in attempt.outcome.pods or ():
        if f"{pod.namespace}/{pod.name}" != key:
            continue
        if "pending" in spec:
            if "reason" in spec:
                # Reasons are compared whole, as the scheduler words them, never as substrings.
                return pod.outcome == "pending" and any(
                    spec["reason"] in (n.reasons or [n.reason]) for n in pod.nodes if not n.fits)
            return (pod.outcome == "pending") == spec["pending"]
        return pod.outcome == "scheduled" and pod.node == spec["node"]
    return False


def _gate(spec, attempt):
    name = spec["gate"]
    components = COMPONENT_KEYS if spec.get("component", "all") == "all" else (spec["component"],)
    return all(attempt.variant.gates.get(c, {}).get(name, GATES[name].default) == spec["value"] for c in components)


def _matches_ref(ref: str, key: tuple) -> bool:
    parts = ref.split("/")
    kind, namespace, name = key
    if len(parts) == 1:
        return parts[0] == kind
    if len(parts) == 2:
        return parts[0] == kind and parts[1] == name
    return parts[0] == kind and parts[1] == namespace and "/".join(parts[2:]) == name


def _unchanged(spec, attempt):
    refs = spec["unchanged"] if isinstance(spec["unchanged"], list) else [spec["unchanged"]]
    now, before = attempt.objects(), attempt.objects(start=True)
    if now is None or before is None:
        return False
    for ref in refs:
        keys = {k for k in before.keys() | now.keys() if _matches_ref(ref, k)}
        if any(before.get(k) != now.get(k) for k in keys):
            return False
    return True


def _selector(spec, attempt):
    objects = attempt.objects()
    if objects is None:
        return False
    key = claim_key(spec["claim"])
    namespace, _, name = key.partition("/")
    claim = objects.get(("ResourceClaim", namespace, name)) or objects.get(("ResourceClaimTemplate", namespace, name))
    if claim is None:
        return False
    devices = ((claim.get("spec") or {}).get("spec") or {}).get("devices") if claim.get("kind") == \
        "ResourceClaimTemplate" else (claim.get("spec") or {}).get("devices")
    for request in (devices or {}).get("requests") or []:
        if spec.get("request") and request.get("name") != spec["request"]:
            continue
        bodies = [request.get("exactly") or {}] + list(request.get("firstAvailable") or [])
        for body in bodies:
            for selector in body.get("selectors") or []:
                expression = ((selector or {}).get("cel") or {}).get("expression") or ""
                if spec["selector"] in expression:
                    return True
    return False


def _status_writers(spec, attempt):
    key = claim_key(spec["statusWriters"])
    for entry in _sections(attempt, "status_authorization"):
        if entry.claim != key:
            continue
        if "pinnedToNode" in spec and (entry.pinned_to_node or "") != spec["pinnedToNode"]:
            return False
        if "verb" in spec:
            drivers = [d for d in entry.drivers if not spec.get("driver") or d.driver == spec["driver"]]
            return any(spec["verb"] in d.verbs for d in drivers)
        return True
    return False


EVALUATORS = {
    "outcome": _outcome,
    "claim": _claim,
    "counter": _counter,
    "capacity": _capacity,
    "row": _row,
    "pod": _pod,
    "gate": _gate,
    "unchanged": _unchanged,
    "selector": _selector,
    "statusWriters": _status_writers,
}
