"""Checks: declarative assertions over the result of the attendee's scenario and settings.

Every check reads the engine's typed answer (its explanation, its pods, its status writers) or
the parsed scenario, never the text of a message. Each kind is one class in `REGISTRY`, keyed by
the field that names it; a check is one mapping with that field, `message` (shown when it fails,
`{why}` in it is replaced by the engine's why headline for the claim the check is about), an
optional `label` (what it checks, shown beside ✓ / ✗) and an optional stable `id` (for
translations; the check's position otherwise):

    outcome: allocated | unsatisfiable | invalid      [node: worker-1]
    claim: ns/name    [allocated: true|false] [request: gpu] [devices: [gpu-1, pool/dev]] [match: 'mig-1g-.*'] [count: 2]
                      [bindingConditions: [type, ...]] [bindingFailureConditions: [type, ...]]
                      (every allocated device of the claim lists exactly these: what the scheduler waits for)
                      [pinned: true]  (the allocation's nodeSelector names the chosen node alone: bindsToNode,
                      or a node-local device)
    request: gpu      claim: ns/name  [allocationMode: All|ExactCount] [count: n] [adminAccess: bool]
                      [firstAvailable: [{deviceClassName: c, count: n, allocationMode: m, selects: [devices]}, ...]
                       (the subrequests in this order)]
                      [tolerates: [taint key, ...]]
    constraint: matchAttribute | distinctAttribute   attribute: a   claim: ns/name  [requests: [r1, r2]]
    selects: [gpu-0, pool/gpu-1]   claim: ns/name  request: gpu[/subrequest]
                      (the request's selectors, with its class's, pick exactly these devices of the lesson)
    counter: memory   counterSet: gpu-0 [pool: driver/pool]  free: 2Gi | freeAtLeast: 1Gi | freeAtMost: 0
    capacity: bandwidth  device: eth1 [claim: ns/name]  consumed: 8G | consumedAtLeast: 1G | consumedAtMost: 8G
    row: gpu-1        claim: ns/name [request: gpu]  code: selector | verdict: rejected
    pod: ns/name      node: worker-1 | pending: true|false  [reason: 'Insufficient cpu'  (a whole reason the
                      scheduler gave some node for the pending pod, as in its `0/N nodes are available` line)]
    gate: DRADeviceCompatibilityGroups  [component: scheduler]  value: true  [declaredBy: worker-2]
                      (with declaredBy, that Node also lists the gate in status.declaredFeatures)
    unchanged: [ResourceSlice, DeviceClass/gpu.example.com, ResourceClaim/default/big]
    statusWrite: ns/name  driver: d  node: N  [allowed: true] [verb: update|patch]
                      (the plugin of driver d on node N may write its status.devices entries of the claim,
                      as the apiserver's RBAC and status checks decide)

Objects the attendee does not own are protected whatever the checks say: every DeviceClass,
ResourceSlice, Node, DeviceTaintRule, Namespace, RBAC object and plugin workload, and the status of
claims allocated at the start. A lesson opts objects in with `editable: [Kind, Kind/name, ...]`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import re2
from django.utils.translation import gettext, gettext_noop

from allocator import wording
from allocator.engine import cel
from allocator.engine.gates import COMPONENT_KEYS, GATES
from allocator.engine.loader import load_scenario
from allocator.engine.nodematch import single_node_selector
from allocator.engine.outcome import Outcome
from allocator.engine.pods import PENDING, SCHEDULED
from allocator.engine.quantity import Quantity, QuantityError
from allocator.engine.selectors import DeviceInputError, device_input
from allocator.engine.vocabulary import OutcomeKind, RowCode, Verdict

# The words a check may use are the engine's own.
OUTCOMES = tuple(kind.value for kind in OutcomeKind)
VERDICTS = tuple(verdict.value for verdict in Verdict)
CODES = tuple(code.value for code in RowCode)

NAMESPACED = {"ResourceClaim", "ResourceClaimTemplate", "Pod", "Role", "RoleBinding", "ServiceAccount",
              "DaemonSet"}
# What the attendee does not own: the admin's and the drivers' objects.
PROTECTED_KINDS = ("DeviceClass", "ResourceSlice", "Node", "DeviceTaintRule", "Namespace", "ClusterRole", "Role",
                   "ClusterRoleBinding", "RoleBinding", "ServiceAccount", "DaemonSet")
PROTECTED_LABEL = gettext_noop("objects you do not own are unchanged")  # translated when shown


@dataclass(frozen=True)
class Check:
    kind: str
    spec: dict
    message: str
    line: int | None
    label: str = ""
    id: str = ""


@dataclass(frozen=True)
class CheckResult:
    ok: bool
    label: str
    message: str  # the check's failure message (shown only when not ok)
    line: int | None = None
    id: str = ""
    broken: str | None = None  # the evaluator raised: the check is wrong, not the attendee

    def as_dict(self) -> dict:
        return {"ok": self.ok, "label": self.label, "message": None if self.ok else self.message, "line": self.line,
                "id": self.id, "broken": self.broken}


def claim_key(name: str) -> str:
    """`name` or `namespace/name` -> `namespace/name` (the default namespace when none is given)."""
    return name if "/" in name else f"default/{name}"


def device_matches(ref: str, driver: str, pool: str, device: str) -> bool:
    return ref in (device, f"{pool}/{device}", f"{driver}/{pool}/{device}")


def matches_ref(ref: str, key: tuple) -> bool:
    """`Kind`, `Kind/name` or `Kind/namespace/name` names the object (kind, namespace, name)."""
    parts = ref.split("/")
    kind, namespace, name = key
    if len(parts) == 1:
        return parts[0] == kind
    if len(parts) == 2:
        return parts[0] == kind and parts[1] == name
    return parts[0] == kind and parts[1] == namespace and "/".join(parts[2:]) == name


# ---- the kinds ---------------------------------------------------------------------------------


class Kind:
    """One kind of check: its key, its fields, how it is validated, described and evaluated."""

    key = ""
    fields: frozenset = frozenset()

    def validate(self, spec: dict, v: "_Validator") -> None:
        raise NotImplementedError

    def describe(self, spec: dict) -> str:
        return self.key

    def passes(self, spec: dict, attempt: "Submission") -> bool:
        raise NotImplementedError

    def claim(self, spec: dict) -> str | None:
        """The claim the check is about (for `{why}`), if any."""
        value = spec.get("claim")
        return claim_key(value) if isinstance(value, str) else None


class OutcomeCheck(Kind):
    key = "outcome"
    fields = frozenset({"node"})

    def validate(self, spec, v):
        if spec["outcome"] not in OUTCOMES:
            v.problem(f"outcome must be one of {', '.join(OUTCOMES)}", "outcome")
        v.optional("node", str, "a node name")

    def describe(self, spec):
        return f"the run is {spec['outcome']}" + (f" on {spec['node']}" if spec.get("node") else "")

    def passes(self, spec, attempt):
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


class ClaimCheck(Kind):
    key = "claim"
    fields = frozenset({"allocated", "request", "devices", "match", "count", "bindingConditions",
                        "bindingFailureConditions", "pinned"})
    OF_ALLOCATION = ("devices", "match", "count", "bindingConditions", "bindingFailureConditions", "pinned")

    def validate(self, spec, v):
        v.need("claim", str, "a claim name, namespace/name")
        v.optional("allocated", bool, "true or false")
        v.optional("request", str, "a request name")
        v.optional("match", str, "a regular expression for device names")
        v.optional("count", int, "a number of devices")
        v.optional("pinned", bool, "true or false")
        v.pattern("match")
        v.names("devices", "devices must be a list of device names (device, pool/device or driver/pool/device)")
        for key in ("bindingConditions", "bindingFailureConditions"):
            v.names(key, f"{key} must list condition types (an empty list: none)", allow_empty=True)
        if not ({"allocated", *self.OF_ALLOCATION} & spec.keys()):
            v.problem("a claim check needs allocated, devices, match, count, bindingConditions, "
                      "bindingFailureConditions or pinned")

    def describe(self, spec):
        parts = []
        if "allocated" in spec:
            parts.append("is allocated" if spec["allocated"] else "stays pending")
        if "devices" in spec:
            parts.append("gets " + ", ".join(spec["devices"]))
        if "match" in spec:
            parts.append(f"gets devices matching {spec['match']}")
        if "count" in spec:
            parts.append(f"gets {spec['count']} device(s)")
        for key, words in (("bindingConditions", "waits for"), ("bindingFailureConditions", "fails on")):
            if key in spec:
                parts.append(f"{words} {', '.join(spec[key]) or 'no condition'}")
        if "pinned" in spec:
            parts.append("is pinned to the chosen node" if spec["pinned"] else "is not pinned to one node")
        return f"claim {spec['claim']}" + (f" request {spec['request']}" if spec.get("request") else "") \
            + " " + " and ".join(parts)

    def passes(self, spec, attempt):
        found, allocation, node = attempt.claim_allocation(spec["claim"])
        if not found:
            return False
        if "allocated" in spec and spec["allocated"] != (allocation is not None):
            return False
        if allocation is None:
            return not (set(self.OF_ALLOCATION) & spec.keys())
        results = allocation["devices"]["results"]
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
        for key in ("bindingConditions", "bindingFailureConditions"):
            # What the scheduler waits for (or gives up on) in PreBind: every device's list, as the allocation has it.
            if key in spec and (not results or any(list(r.get(key) or []) != list(spec[key]) for r in results)):
                return False
        if "pinned" in spec:
            pinned = node is not None and allocation.get("nodeSelector") == single_node_selector(node)
            if pinned != spec["pinned"]:
                return False
        return True


class RequestCheck(Kind):
    """The shape of one request: the idea of the lesson, whatever the selectors say."""

    key = "request"
    fields = frozenset({"claim", "allocationMode", "count", "adminAccess", "firstAvailable", "tolerates"})
    MODES = ("ExactCount", "All")

    def validate(self, spec, v):
        v.need("request", str, "a request name")
        v.need("claim", str, "a claim or claim template, namespace/name")
        if "allocationMode" in spec and spec["allocationMode"] not in self.MODES:
            v.problem(f"allocationMode must be one of {', '.join(self.MODES)}", "allocationMode")
        v.optional("count", int, "a number of devices")
        v.optional("adminAccess", bool, "true or false")
        v.names("tolerates", "tolerates must list taint keys")
        if "firstAvailable" in spec:
            items = spec["firstAvailable"]
            if not isinstance(items, list) or not items or not all(
                    isinstance(i, dict) and i and set(i) <= {"deviceClassName", "count", "allocationMode", "selects"}
                    for i in items):
                v.problem("firstAvailable must list the subrequests in order, each a mapping of deviceClassName, "
                          "count, allocationMode and/or selects (the devices its selectors pick)", "firstAvailable")
        if not (self.fields - {"claim"}) & spec.keys():
            v.problem("a request check needs allocationMode, count, adminAccess, firstAvailable or tolerates")

    def describe(self, spec):
        parts = []
        if "firstAvailable" in spec:
            parts.append("lists first " + ", then ".join(_subrequest_words(s) for s in spec["firstAvailable"]))
        if "allocationMode" in spec:
            parts.append(f"asks for allocationMode {spec['allocationMode']}")
        if "count" in spec:
            parts.append(f"asks for {spec['count']} device(s)")
        if "adminAccess" in spec:
            parts.append("asks for admin access" if spec["adminAccess"] else "does not ask for admin access")
        if "tolerates" in spec:
            parts.append("tolerates " + ", ".join(spec["tolerates"]))
        return f"request {spec['request']} of {spec['claim']} " + " and ".join(parts)

    def passes(self, spec, attempt):
        request = attempt.request(spec["claim"], spec["request"])
        if request is None:
            return False
        if "firstAvailable" in spec:
            subs = request.get("firstAvailable")
            if not isinstance(subs, list) or len(subs) != len(spec["firstAvailable"]):
                return False
            if not all(_subrequest_is(sub, want, attempt) for sub, want in zip(subs, spec["firstAvailable"])):
                return False
            body = None
        else:
            body = request.get("exactly")
            if not isinstance(body, dict):
                return False
        if body is not None:
            if "allocationMode" in spec and (body.get("allocationMode") or "ExactCount") != spec["allocationMode"]:
                return False
            if "count" in spec and _count(body) != spec["count"]:
                return False
            if "adminAccess" in spec and bool(body.get("adminAccess")) != spec["adminAccess"]:
                return False
            if "tolerates" in spec:
                keys = {t.get("key") for t in body.get("tolerations") or [] if isinstance(t, dict)}
                if not set(spec["tolerates"]) <= keys:
                    return False
        return True


def _count(body: dict):
    if (body.get("allocationMode") or "ExactCount") == "All":
        return None
    return body.get("count") or 1


def _subrequest_is(sub, want: dict, attempt) -> bool:
    if not isinstance(sub, dict):
        return False
    if "selects" in want and not _same_devices(want["selects"], picks(attempt, sub)):
        return False
    if "deviceClassName" in want and sub.get("deviceClassName") != want["deviceClassName"]:
        return False
    if "allocationMode" in want and (sub.get("allocationMode") or "ExactCount") != want["allocationMode"]:
        return False
    return "count" not in want or _count(sub) == want["count"]


def _subrequest_words(want: dict) -> str:
    words = [str(want["count"]) if "count" in want else "", want.get("allocationMode", ""),
             want.get("deviceClassName", ""), ("of " + ", ".join(want["selects"])) if "selects" in want else ""]
    return " ".join(w for w in words if w) or "a subrequest"


class ConstraintCheck(Kind):
    key = "constraint"
    fields = frozenset({"attribute", "claim", "requests"})
    KINDS = ("matchAttribute", "distinctAttribute")

    def validate(self, spec, v):
        if spec["constraint"] not in self.KINDS:
            v.problem(f"constraint must be one of {', '.join(self.KINDS)}", "constraint")
        v.need("attribute", str, "an attribute name, domain/name")
        v.need("claim", str, "a claim or claim template, namespace/name")
        v.names("requests", "requests must list request names")

    def describe(self, spec):
        over = f" over {', '.join(spec['requests'])}" if spec.get("requests") else ""
        return f"{spec['claim']} has a {spec['constraint']} constraint on {spec['attribute']}{over}"

    def passes(self, spec, attempt):
        devices = attempt.claim_devices(spec["claim"])
        if devices is None:
            return False
        for constraint in devices.get("constraints") or []:
            if not isinstance(constraint, dict) or constraint.get(spec["constraint"]) != spec["attribute"]:
                continue
            covered = constraint.get("requests") or [r.get("name") for r in devices.get("requests") or []
                                                     if isinstance(r, dict)]
            if set(spec.get("requests") or ()) <= set(covered):
                return True
        return False


class SelectsCheck(Kind):
    """The request's selectors, with its class's, evaluated on every device of the lesson: a
    tautology or a pin by name picks another set and fails."""

    key = "selects"
    fields = frozenset({"claim", "request"})

    def validate(self, spec, v):
        v.names("selects", "selects must list device names (device, pool/device or driver/pool/device)",
                allow_empty=True)
        v.need("claim", str, "a claim or claim template, namespace/name")
        v.need("request", str, "a request name, or request/subrequest")

    def describe(self, spec):
        picked = ", ".join(spec["selects"]) or "no device"
        return f"the selectors of {spec['claim']} request {spec['request']} pick {picked}"

    def passes(self, spec, attempt):
        request = attempt.request(spec["claim"], spec["request"].split("/")[0])
        if request is None:
            return False
        _, _, sub = spec["request"].partition("/")
        if sub:
            body = next((s for s in request.get("firstAvailable") or [] if isinstance(s, dict)
                         and s.get("name") == sub), None)
        else:
            body = request.get("exactly")
        if not isinstance(body, dict):
            return False
        return _same_devices(spec["selects"], picks(attempt, body))


def picks(attempt, body: dict) -> list | None:
    """(driver, pool, device) of every device of the lesson that a request body's class and
    selectors select; None when its class does not exist."""
    device_class = attempt.scenario.classes.get(body.get("deviceClassName") or "")
    if device_class is None:
        return None
    expressions = list(device_class.selectors) + [((s or {}).get("cel") or {}).get("expression") or ""
                                                  for s in body.get("selectors") or []]
    try:
        programs = [cel.compile_selector(e, cel.Options(stored=True)) for e in expressions]
    except cel.CelError:  # the attendee's selector does not compile: it selects nothing
        return None
    return [(s.driver, s.pool, device.name) for s in attempt.start_scenario.slices for device in s.devices
            if _selected(programs, device)]


def _same_devices(wanted, picked) -> bool:
    if picked is None:
        return False
    wanted = list(wanted)
    if len(wanted) != len(picked):
        return False
    for driver, pool, name in picked:
        hit = next((w for w in wanted if device_matches(w, driver, pool, name)), None)
        if hit is None:
            return False
        wanted.remove(hit)
    return True


def _selected(programs, device) -> bool:
    try:
        data = device_input(device)
        return all(p.evaluate(data) is True for p in programs)
    except (DeviceInputError, cel.CelError):
        return False


class Bounds:
    """An amount checked against `<name>` (exactly), `<name>AtLeast` and/or `<name>AtMost`, each a
    quantity: the one comparison the counter and capacity checks share."""

    def __init__(self, name: str, words: tuple[str, str, str]):
        self.keys = (name, name + "AtLeast", name + "AtMost")
        self.words = dict(zip(self.keys, words))  # how describe() says each bound, "{}" the quantity

    def validate(self, spec: dict, v: "_Validator") -> None:
        given = [k for k in self.keys if k in spec]
        if not given:
            v.problem(f"a {v.kind} check needs {', '.join(self.keys[:2])} or {self.keys[2]}")
        for key in given:
            if v.need(key, (str, int), "a quantity"):
                v.quantity(key)

    def describe(self, spec: dict) -> str:
        return " and ".join(self.words[k].format(spec[k]) for k in self.keys if k in spec)

    def hold(self, amount: Quantity, spec: dict) -> bool:
        exactly, at_least, at_most = self.keys
        bound = {k: Quantity.parse(str(spec[k])) for k in self.keys if k in spec}
        return ((exactly not in bound or amount == bound[exactly])
                and (at_least not in bound or not amount < bound[at_least])
                and (at_most not in bound or not amount > bound[at_most]))


class CounterCheck(Kind):
    key = "counter"
    FREE = Bounds("free", ("has {} free", "has at least {} free", "has at most {} free"))
    fields = frozenset({"counterSet", "pool", *FREE.keys})

    def validate(self, spec, v):
        v.need("counter", str, "a counter name")
        v.need("counterSet", str, "a counter set name")
        v.optional("pool", str, "a pool, driver/pool")
        self.FREE.validate(spec, v)

    def describe(self, spec):
        return f"counter {spec['counterSet']}/{spec['counter']} {self.FREE.describe(spec)}"

    def passes(self, spec, attempt):
        for cs in attempt.sections("counter_sets"):
            if cs.counter_set != spec["counterSet"]:
                continue
            if spec.get("pool") and cs.pool != spec["pool"] and not cs.pool.endswith("/" + spec["pool"]):
                continue
            for counter in cs.counters:
                if counter.counter == spec["counter"]:
                    return self.FREE.hold(Quantity.parse(counter.free), spec)
        return False


class CapacityCheck(Kind):
    key = "capacity"
    CONSUMED = Bounds("consumed", ("is {}", "is at least {}", "is at most {}"))
    fields = frozenset({"device", "claim", *CONSUMED.keys})

    def validate(self, spec, v):
        v.need("capacity", str, "a capacity name")
        v.need("device", str, "a device name")
        v.optional("claim", str, "a claim name")
        self.CONSUMED.validate(spec, v)

    def describe(self, spec):
        return f"{spec['capacity']} consumed on {spec['device']} {self.CONSUMED.describe(spec)}"

    def passes(self, spec, attempt):
        for entry in attempt.sections("capacity"):
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
            return self.CONSUMED.hold(total, spec)
        return False


class RowCheck(Kind):
    key = "row"
    fields = frozenset({"claim", "request", "code", "verdict"})

    def validate(self, spec, v):
        v.need("row", str, "a device name")
        v.need("claim", str, "a claim name")
        v.optional("request", str, "a request name")
        if "code" not in spec and "verdict" not in spec:
            v.problem("a row check needs code or verdict")
        if "code" in spec and spec["code"] not in CODES:
            v.problem(f"unknown reason code {spec['code']!r} (expected one of {', '.join(CODES)})", "code")
        if "verdict" in spec and spec["verdict"] not in VERDICTS:
            v.problem(f"unknown verdict {spec['verdict']!r} (expected one of {', '.join(VERDICTS)})", "verdict")

    def describe(self, spec):
        said = " and ".join(f"{k} {spec[k]}" for k in ("verdict", "code") if k in spec)
        return f"the Why row of {spec['row']} for claim {spec['claim']} says {said}"

    def passes(self, spec, attempt):
        key = claim_key(spec["claim"])
        for claim in attempt.sections("claims"):
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


class PodCheck(Kind):
    """Reads the engine's pod answers (the scheduler oracle agrees with them on the recorded dumps)."""

    key = "pod"
    fields = frozenset({"node", "pending", "reason"})

    def validate(self, spec, v):
        v.need("pod", str, "a pod, namespace/name")
        if ("node" in spec) == ("pending" in spec):
            v.problem("a pod check needs either node or pending: true|false")
        v.optional("node", str, "a node name")
        v.optional("pending", bool, "true or false")
        v.optional("reason", str, "one reason the scheduler gives a node, e.g. 'Insufficient cpu'")
        if "reason" in spec and spec.get("pending") is not True:
            v.problem("a pod check with reason needs pending: true", "reason")

    def describe(self, spec):
        if "reason" in spec:
            return f"pod {spec['pod']} stays pending, a node refused with “{spec['reason']}”"
        if "pending" in spec:
            return f"pod {spec['pod']} " + ("stays pending" if spec["pending"] else "is scheduled")
        return f"pod {spec['pod']} runs on {spec['node']}"

    def claim(self, spec):
        return None

    def passes(self, spec, attempt):
        key = claim_key(spec["pod"])
        for pod in attempt.outcome.pods or ():
            if f"{pod.namespace}/{pod.name}" != key:
                continue
            if "pending" in spec:
                if "reason" in spec:
                    # Reasons are compared whole, as the scheduler words them, never as substrings.
                    return pod.outcome == PENDING and any(
                        spec["reason"] in (n.reasons or [n.reason]) for n in pod.nodes if not n.fits)
                return (pod.outcome == PENDING) == spec["pending"]
            return pod.outcome == SCHEDULED and pod.node == spec["node"]
        return False


class GateCheck(Kind):
    key = "gate"
    fields = frozenset({"component", "value", "declaredBy"})

    def validate(self, spec, v):
        if spec["gate"] not in GATES:
            v.problem(f"unknown feature gate {spec['gate']!r}", "gate")
        component = spec.get("component", "all")
        if component not in COMPONENT_KEYS + ("all",):
            v.problem(f"unknown component {component!r} (expected one of {', '.join(COMPONENT_KEYS)} or all)",
                      "component")
        v.need("value", bool, "true or false")
        v.optional("declaredBy", str, "a Node that must list the gate in status.declaredFeatures")

    def describe(self, spec):
        where = spec.get("component", "every component")
        declared = f", and Node {spec['declaredBy']} declares it" if spec.get("declaredBy") else ""
        return f"{spec['gate']} is {'on' if spec.get('value') else 'off'} for {where}{declared}"

    def passes(self, spec, attempt):
        name = spec["gate"]
        components = COMPONENT_KEYS if spec.get("component", "all") == "all" else (spec["component"],)
        if not all(attempt.variant.gate_value(c, name) == spec["value"] for c in components):
            return False
        if spec.get("declaredBy"):
            node = attempt.scenario.nodes.get(spec["declaredBy"])
            return node is not None and name in node.declared_features
        return True


class UnchangedCheck(Kind):
    key = "unchanged"

    def validate(self, spec, v):
        refs = spec["unchanged"]
        if isinstance(refs, str):
            refs = [refs]
        if not isinstance(refs, list) or not refs or not all(isinstance(r, str) and r for r in refs):
            v.problem("unchanged must list objects: Kind, Kind/name or Kind/namespace/name", "unchanged")

    def describe(self, spec):
        return "unchanged from the start: " + ", ".join(_refs(spec["unchanged"]))

    def claim(self, spec):
        return None

    def passes(self, spec, attempt):
        now, before = attempt.objects(), attempt.objects(start=True)
        if now is None or before is None:
            return False
        for ref in _refs(spec["unchanged"]):
            keys = {k for k in before.keys() | now.keys() if matches_ref(ref, k)}
            if any(before.get(k) != now.get(k) for k in keys):
                return False
        return True


def _refs(value) -> list:
    return value if isinstance(value, list) else [value]


class StatusWriteCheck(Kind):
    """May the plugin of a driver on a node write the claim's status.devices entries: the
    engine's status-writers what-if (RBAC objects, the apiserver's binding and driver checks)."""

    key = "statusWrite"
    fields = frozenset({"driver", "node", "allowed", "verb"})

    def validate(self, spec, v):
        v.need("statusWrite", str, "a claim, namespace/name")
        v.need("driver", str, "a driver name")
        v.need("node", str, "the node the plugin pod runs on")
        v.optional("allowed", bool, "true or false")
        if "verb" in spec and spec["verb"] not in ("update", "patch"):
            v.problem("verb must be update (PUT) or patch (PATCH, apply)", "verb")

    def describe(self, spec):
        may = "may" if spec.get("allowed", True) else "may not"
        return f"the {spec['driver']} plugin on {spec['node']} {may} write the device status of {spec['statusWrite']}"

    def claim(self, spec):
        return claim_key(spec["statusWrite"])

    def passes(self, spec, attempt):
        grid = attempt.outcome.status_writers
        if not grid:
            return False
        writers = {w["key"] for w in grid["writers"] if w["key"].startswith("plugin:") and w["node"] == spec["node"]
                   and (w["drivers"] is None or spec["driver"] in w["drivers"])
                   and w["verb"] == spec.get("verb", "update")}
        key = claim_key(spec["statusWrite"])
        for claim in grid["claims"]:
            if claim["claim"] != key:
                continue
            cells = [c for c in claim["cells"] if c["writer"] in writers and c["write"] == f"devices:{spec['driver']}"]
            if not cells:
                return False
            return any(c["allowed"] for c in cells) == spec.get("allowed", True)
        return False


REGISTRY: dict[str, Kind] = {kind.key: kind for kind in (
    OutcomeCheck(), ClaimCheck(), RequestCheck(), ConstraintCheck(), SelectsCheck(), CounterCheck(), CapacityCheck(),
    RowCheck(), PodCheck(), GateCheck(), UnchangedCheck(), StatusWriteCheck(),
)}


# ---- parsing -----------------------------------------------------------------------------------


class _Validator:
    def __init__(self, kind: str, spec: dict, path: tuple, reader):
        self.kind, self.spec, self.path, self.reader = kind, spec, path, reader

    def problem(self, message: str, key: str | None = None):
        self.reader.problem(message, self.path + ((key,) if key else ()))

    def need(self, key, types, what) -> bool:
        spec = self.spec
        if key not in spec:
            self.problem(f"missing field {key} in a {self.kind} check ({what})")
            return False
        types = types if isinstance(types, tuple) else (types,)
        if not isinstance(spec[key], types) or (bool not in types and isinstance(spec[key], bool)):
            self.problem(f"{key} must be {what}", key)
            return False
        return True

    def optional(self, key, types, what):
        if key in self.spec:
            self.need(key, types, what)

    def names(self, key, message, *, allow_empty=False):
        if key in self.spec:
            value = self.spec[key]
            if not (isinstance(value, list) and (value or allow_empty) and all(isinstance(d, str) for d in value)):
                self.problem(message, key)

    def quantity(self, key):
        if key in self.spec:
            try:
                Quantity.parse(str(self.spec[key]))
            except (QuantityError, ValueError):
                self.problem(f"{key}: {self.spec[key]!r} is not a quantity (such as 2Gi, 500m, 8)", key)

    def pattern(self, key):
        if isinstance(self.spec.get(key), str):
            try:
                re2.compile(self.spec[key])
            except re2.error as exc:
                self.problem(f"{key}: bad pattern {self.spec[key]!r}: {exc}", key)


def kind_of(raw: dict) -> str | None:
    """The check's kind: the one registry key present that is not a field of another present kind.
    `claim` and `request` are kinds and fields of each other: `claim: c, request: r` is a request
    check when it has a field only request checks have, and a claim check otherwise."""
    present = [k for k in REGISTRY if k in raw]
    keys = [k for k in present if not any(k in REGISTRY[other].fields for other in present if other != k)]
    if not keys and set(present) == {"claim", "request"}:
        only_request = REGISTRY["request"].fields - REGISTRY["claim"].fields - {"claim"}
        return "request" if only_request & raw.keys() else "claim"
    return keys[0] if len(keys) == 1 else None


def parse_check(raw, path: tuple, reader, index: int = 0) -> Check | None:
    if not isinstance(raw, dict):
        reader.problem("a check must be a mapping such as {outcome: allocated, message: ...}", path)
        return None
    kind = kind_of(raw)
    if kind is None:
        several = [k for k in REGISTRY if k in raw]
        reader.problem(("a check names one kind only: " if several else "unknown check: ")
                       + f"expected exactly one of the keys {', '.join(REGISTRY)}"
                       + (f" (this one has {', '.join(several)})" if several else ""), path)
        return None
    check_kind = REGISTRY[kind]
    allowed = check_kind.fields | {kind, "message", "label", "id"}
    for key in raw:
        if key not in allowed:
            reader.problem(f"unknown field {key!r} in a {kind} check (expected {', '.join(sorted(allowed))})",
                           path + (key,))
    message = raw.get("message")
    if not isinstance(message, str) or not message.strip():
        reader.problem(f"missing field message in a {kind} check: what the attendee reads when it fails", path)
        message = ""
    spec = {k: v for k, v in raw.items() if k not in ("message", "label", "id")}
    problems_before = len(reader.problems)
    check_kind.validate(spec, _Validator(kind, spec, path, reader))
    if len(reader.problems) > problems_before:
        return None
    label = raw.get("label") if isinstance(raw.get("label"), str) else check_kind.describe(spec)
    ident = str(raw["id"]) if isinstance(raw.get("id"), (str, int)) and not isinstance(raw.get("id"), bool) \
        else str(index + 1)
    return Check(kind=kind, spec=spec, message=message, line=reader.located.line(path), label=label, id=ident)


def describe(kind: str, spec: dict) -> str:
    return REGISTRY[kind].describe(spec)


# ---- evaluating --------------------------------------------------------------------------------


@dataclass
class Submission:
    """What the checks look at: the attendee's scenario and settings, the run, and the lesson's start."""

    variant: object  # model.Variant
    outcome: Outcome
    start: object  # model.Variant
    scenario: object = None  # the run's parsed Scenario
    start_scenario: object = None  # the start's parsed Scenario (the lesson's devices)

    _objects: dict | None = field(default=None, repr=False)
    _start_objects: dict | None = field(default=None, repr=False)

    def objects(self, start: bool = False) -> dict | None:
        """(kind, namespace, name) -> object data, or None when the text does not parse."""
        attr = "_start_objects" if start else "_objects"
        if getattr(self, attr) is None:
            setattr(self, attr, object_index((self.start if start else self.variant).scenario))
        return getattr(self, attr)

    def sections(self, name: str) -> list:
        """One section of the explanation (empty without one)."""
        explanation = self.outcome.explanation
        return getattr(explanation, name) if explanation is not None else []

    def claim_allocation(self, name: str) -> tuple[bool, dict | None, str | None]:
        """(found, allocation, node) for a claim of the outcome or of a pod: the allocation None while
        pending, the node the run (or the pod) was placed on."""
        key = claim_key(name)
        # A pod's claim first: its node is the pod's, not the run's.
        for pod in self.outcome.pods or ():
            for claim in pod.claims:
                if f"{claim.namespace}/{claim.name}" == key:
                    return True, claim.allocation or None, pod.node
        for claim in self.outcome.claims:
            meta = claim["metadata"]
            if f"{meta['namespace']}/{meta['name']}" == key:
                return True, (claim.get("status") or {}).get("allocation") or None, self.outcome.node
        return False, None, None

    def claim_devices(self, name: str) -> dict | None:
        """`spec.devices` of the claim or claim template `name` as the attendee wrote it."""
        objects = self.objects() or {}
        namespace, _, plain = claim_key(name).partition("/")
        claim = objects.get(("ResourceClaim", namespace, plain))
        if claim is not None:
            devices = (claim.get("spec") or {}).get("devices")
        else:
            template = objects.get(("ResourceClaimTemplate", namespace, plain))
            if template is None:
                return None
            devices = ((template.get("spec") or {}).get("spec") or {}).get("devices")
        return devices if isinstance(devices, dict) else None

    def request(self, claim: str, request: str) -> dict | None:
        devices = self.claim_devices(claim)
        for r in (devices or {}).get("requests") or []:
            if isinstance(r, dict) and r.get("name") == request:
                return r
        return None

    def why(self, claim: str | None) -> str:
        """The engine's why headline for the claim (or the run's), in the page's language (the
        wording layer says it again from its form and parts), else the run's message."""
        explanations = [self.outcome.explanation] + [p.explanation for p in self.outcome.pods or ()]
        for explanation in explanations:
            if explanation is not None and explanation.headline and explanation.blocked_at is not None \
                    and (claim is None or explanation.blocked_at.claim == claim):
                return wording.headline(explanation).text
        if self.outcome.explanation is not None and self.outcome.explanation.headline:
            return wording.headline(self.outcome.explanation).text
        return self.outcome.message or ""


def object_index(text: str) -> dict | None:
    loaded = load_scenario(text)
    if any(p.severity == "error" for p in loaded.problems) and not loaded.objects:
        return None
    index = {}
    for obj in loaded.objects:
        meta = obj.data.get("metadata") or {}
        kind = obj.data.get("kind")
        namespace = meta.get("namespace") or ("default" if kind in NAMESPACED else "")
        index[(kind, namespace, meta.get("name"))] = obj.data
    return index


def protected_changes(attempt: Submission, editable=()) -> list[str]:
    """The objects the attendee does not own that differ from the start: `Kind namespace/name`.

    An allocation is the scheduler's to write: the status of a claim allocated at the start may be
    removed (the claim deallocated or deleted) where the lesson makes the claim editable, but never
    rewritten into another allocation."""
    now, before = attempt.objects(), attempt.objects(start=True)
    if now is None or before is None:
        return []
    changed = []
    for key in sorted(before.keys() | now.keys(), key=lambda k: tuple(str(p) for p in k)):
        kind, namespace, name = key
        old, new = before.get(key), now.get(key)
        what = f"{kind} {namespace + '/' if namespace else ''}{name}"
        is_editable = any(matches_ref(ref, key) for ref in editable)
        if kind == "ResourceClaim" and old is not None and (old.get("status") or {}).get("allocation"):
            allocation = (new.get("status") or {}).get("allocation") if new is not None else None
            if allocation and allocation != old["status"]["allocation"]:
                changed.append(gettext("%(object)s status (its allocation rewritten)") % {"object": what})
            elif not is_editable and (new is None or old.get("status") != new.get("status")):
                changed.append((gettext("%(object)s (removed)") if new is None else gettext("%(object)s status"))
                               % {"object": what})
            continue
        if is_editable:
            continue
        if kind in PROTECTED_KINDS and old != new:
            changed.append(gettext("%(object)s (added)") % {"object": what} if old is None
                           else gettext("%(object)s (removed)") % {"object": what} if new is None else what)
    return changed


def evaluate(checks, attempt: Submission, *, editable=()) -> list[CheckResult]:
    """The protected objects first, then every check. On an invalid scenario (unless a check
    expects one) the first result says so and where; the checks are not run."""
    results = []
    changed = protected_changes(attempt, editable)
    if changed:
        results.append(CheckResult(False, gettext(PROTECTED_LABEL),
                                   gettext("You changed what you do not own here: %(objects)s. Put it back as it was "
                                           "(Reset this step shows the start).") % {"objects": "; ".join(changed)},
                                   id="protected"))
    expects_invalid = any(c.kind == "outcome" and c.spec["outcome"] == OutcomeKind.INVALID for c in checks)
    if attempt.outcome.outcome == OutcomeKind.INVALID and not expects_invalid:
        first = attempt.outcome.problems[0] if attempt.outcome.problems else None
        what = first.render() if first is not None else (attempt.outcome.message or "")
        results.append(CheckResult(False, gettext("the scenario is valid"),
                                   gettext("The scenario is invalid: %(problem)s") % {"problem": what},
                                   first.line if first is not None else None, id="valid"))
        return results + [CheckResult(False, c.label, gettext("not checked: fix the invalid scenario first"), c.line,
                                      c.id) for c in checks]
    for check in checks:
        results.append(run_check(check, attempt))
    return results


def run_check(check: Check, attempt: Submission) -> CheckResult:
    kind = REGISTRY[check.kind]
    try:
        ok = bool(kind.passes(check.spec, attempt))
    except Exception as exc:  # noqa: BLE001 - a check that raises is a broken check, reported as such
        error = f"{type(exc).__name__}: {exc}"
        return CheckResult(False, check.label, gettext("This check is broken (tell the instructor): %(error)s")
                           % {"error": error}, check.line, check.id, broken=error)
    message = check.message
    if not ok and "{why}" in message:
        message = message.replace("{why}", attempt.why(kind.claim(check.spec)) or "")
    return CheckResult(ok, check.label, message, check.line, check.id)
