"""A mutator that breaks valid DRA objects, for the comparison with the kube-apiserver.

The valid objects are the resource.k8s.io/v1 objects (and Pods) of the shared conformance
cases and of the real-world manifests. A mutation picks a place in one of them and
does something a person writing YAML by hand does: a value of the wrong type, a field
missing or one the type does not have, a number one past a limit, a name that is not a
name, a bad quantity, CEL that does not compile or costs too much, a list entry twice,
a list longer than allowed, or a field whose feature gate the apiserver has off.

Each mutated object is a pure function of (seed, index): `mutated(seed, index)` draws from a
`random.Random` seeded by those two alone, never from a shared generator or from what ran
before, so a failure is reproduced by its seed and index (`make test-validation SEED=s FROM=i N=1`).
"""
from __future__ import annotations

import copy
import json
import os
import random
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from allocator.engine.loader import load_scenario

CONFORMANCE = Path(os.environ.get("DRA_CONFORMANCE_CASES", "/work/shared/conformance/cases"))
REALWORLD = Path(os.environ.get("DRA_REALWORLD", "/work/shared/realworld"))
KINDS = {"DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate", "DeviceTaintRule", "Pod"}

# Gates the mutator flips: the ones 1.37.2 lets a component set (locked GA gates cannot be).
GATES = ("DRADeviceTaints", "DRADeviceTaintRules", "DRAPartitionableDevices", "DRAConsumableCapacity",
         "DRAFractionalCapacityRange", "DRADeviceBindingConditions", "DRAListTypeAttributes",
         "DRADeviceCompatibilityGroups", "DRAOptionalNodeOperations", "DRADerivedAttributes")

# A gate the apiserver refuses to turn on (or leave on) while the other is off.
DEPENDENCIES = {"DRADeviceTaintRules": "DRADeviceTaints", "DRAFractionalCapacityRange": "DRAConsumableCapacity",
                "DRADeviceCompatibilityGroups": "DRAPartitionableDevices"}

# Lists and their limits in resource.k8s.io/v1 (the mutator grows a list to the limit and one past).
LIMITS = {"devices": 128, "requests": 32, "firstAvailable": 8, "constraints": 32, "config": 32,
          "selectors": 32, "tolerations": 16, "taints": 16, "sharedCounters": 8, "consumesCounters": 2,
          "bindingConditions": 4, "bindingFailureConditions": 4, "validValues": 10, "results": 32,
          "derivedAttributes": 32, "compatibilityGroups": 2, "nodeSelectorTerms": 32, "values": 32}
BAD_NAMES = ("", "UPPER", "a_b", "-a", "a-", "a.b", "a/b", "a/b/c", "example.com/", "/x", "x" * 63, "x" * 64,
             "a" * 253, "a" * 254, "gpu.example.com/model", "ex_ample.com/x", "1", "a b", "é", "a..b")
BAD_QUANTITIES = ("1Gi", "-1", "0", "1.5", "abc", "1e3", "0.001m", "1Ki", "1.0000001", "9223372036854775807",
                  "1E", "+1", "1 Gi", "", "10e9")
CEL = ("device.driver ==", "1", "true", "device.attributes['x'].foo", "device.nope", "'a' + 1",
       "device.driver == 'a' && " * 40 + "true", "[1,2,3].all(x, [1,2,3].all(y, [1,2,3].all(z, x*y*z > 0)))",
       "device.capacity['example.com'].memory.compareTo(quantity('1Gi')) >= 0", "x" * 10241,
       "device.attributes['gpu.example.com'].model == 'a100'", "has(device.attributes.foo)", "")
SCALARS = (None, True, False, 0, 1, -1, 2, 63, 64, 129, 2**63, 1.5, "", "x", "true", "1", [], {}, ["a"], {"a": 1})
GATED = {
    "spec": ("sharedCounters", "perDeviceNodeSelection", "skipNodeOperations", "extendedResourceName"),
    "device": ("consumesCounters", "nodeName", "allNodes", "taints", "bindsToNode", "bindingConditions",
               "bindingFailureConditions", "allowMultipleAllocations"),
    "request": ("capacity", "tolerations", "derivedAttributes", "adminAccess"),
}
GATED_VALUES = {
    "sharedCounters": [{"name": "set", "counters": {"memory": {"value": "8Gi"}}}],
    "perDeviceNodeSelection": True, "skipNodeOperations": ["*"], "extendedResourceName": "example.com/gpu",
    "consumesCounters": [{"counterSet": "set", "counters": {"memory": {"value": "1Gi"}}}],
    "nodeName": "node-1", "allNodes": True,
    "taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}], "bindsToNode": True,
    "bindingConditions": ["ready"], "bindingFailureConditions": ["failed"], "allowMultipleAllocations": True,
    "capacity": {"requests": {"memory": "1Gi"}}, "tolerations": [{"operator": "Exists"}],
    "derivedAttributes": [{"name": "x", "expression": "device.driver"}], "adminAccess": True,
}


@dataclass
class Mutated:
    text: str
    gates: str
    what: str

    def __repr__(self):
        return f"Mutated({self.what}; gates={self.gates!r})\n{self.text}"


def _objects_in(path: Path) -> list[dict]:
    try:
        loaded = load_scenario(path.read_bytes())
    except Exception:  # noqa: BLE001 - a file the loader refuses gives no bases
        return []
    out = []
    for raw in loaded.objects:
        data = raw.data
        if isinstance(data, dict) and data.get("kind") in KINDS and data.get("apiVersion") in ("resource.k8s.io/v1", "v1"):
            out.append(data)
    return out


@lru_cache(maxsize=1)
def bases() -> tuple[str, ...]:
    """Every object of the cases and manifests, as JSON text, without repeats, in a stable order."""
    files = sorted(CONFORMANCE.glob("*/scenario.yaml")) + sorted(
        p for p in REALWORLD.rglob("*") if p.suffix in (".yaml", ".yml", ".json") and "rbac" not in p.parts)
    seen: dict[str, None] = {}
    for path in files:
        for obj in _objects_in(path):
            seen.setdefault(json.dumps(obj, sort_keys=True, default=str), None)
    return tuple(seen)


def _places(value, path=()) -> list[tuple]:
    """Every path to a value inside `value` (dict keys and list indexes)."""
    out = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            out += _places(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out += _places(item, path + (index,))
    return out


def _get(obj, path):
    for part in path:
        obj = obj[part]
    return obj


def mutated(seed: int, index: int) -> Mutated:
    """Mutated object number `index` of run `seed`: the same pair always gives the same object."""
    rng = random.Random(f"dra-validation/{seed}/{index}")
    obj = json.loads(rng.choice(bases()))
    whats = []
    for _ in range(rng.randint(1, 2)):
        # A claim's device status is not modelled by the playground (apiserver_driver.NOT_MODELLED).
        places = [p for p in _places(obj) if p[:1] not in (("apiVersion",), ("kind",)) and p[:2] != ("status", "devices")]
        whats.append(_mutate(rng, obj, rng.choice(places)))
    gates = {}
    for name in GATES:
        if rng.randint(0, 3) == 0:
            gates[name] = rng.random() < 0.5
    for gate, needs in DEPENDENCIES.items():  # 1.37.2 refuses a gate on whose dependency is off
        if gates.get(needs) is False:
            gates[gate] = False
    text = json.dumps(obj, ensure_ascii=False)
    return Mutated(text, ",".join(f"{k}={str(v).lower()}" for k, v in gates.items()), "; ".join(whats))


def _mutate(rng: random.Random, obj, place: tuple) -> str:
    where = ".".join(str(p) for p in place) or "(object)"
    value = _get(obj, place)
    holder = _get(obj, place[:-1]) if place else None
    last = place[-1] if place else None
    ops = ["type", "extra"]
    if place:
        ops += ["delete", "type"]
    if isinstance(value, str):
        ops += ["name", "name", "quantity"]
        if last == "expression":
            ops += ["cel", "cel", "cel"]
    if isinstance(value, int) and not isinstance(value, bool):
        ops += ["number", "number"]
    if isinstance(value, list) and value:
        ops += ["duplicate", "grow", "grow"]
    if isinstance(value, dict):
        ops += ["gated", "gated", "rename"]
    op = rng.choice(ops)
    if op == "type" and place:
        holder[last] = copy.deepcopy(rng.choice(SCALARS))
    elif op == "type":
        obj["metadata"] = copy.deepcopy(rng.choice(SCALARS))
    elif op == "delete":
        del holder[last]
    elif op == "extra":
        target = value if isinstance(value, dict) else holder if isinstance(holder, dict) else obj
        # A copy: a later mutation of this object must not change SCALARS for the draws after it.
        target[rng.choice(("extra", "Name", "count", "value", "driver", "x-y"))] = copy.deepcopy(rng.choice(SCALARS))
    elif op == "name":
        holder[last] = rng.choice(BAD_NAMES)
    elif op == "quantity":
        holder[last] = rng.choice(BAD_QUANTITIES)
    elif op == "cel":
        holder[last] = rng.choice(CEL)
    elif op == "number":
        holder[last] = value + rng.choice((-2, -1, 1, 2**31, -(2**31)))
    elif op == "duplicate":
        value.append(copy.deepcopy(rng.choice(value)))
    elif op == "grow":
        limit = LIMITS.get(last, 8)
        target = rng.choice((limit, limit + 1))
        template = value[0]
        while len(value) < target:
            item = copy.deepcopy(template)
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                item["name"] = f"{item['name'][:50]}-{len(value)}"
            value.append(item)
    elif op == "gated":
        key = rng.choice([k for keys in GATED.values() for k in keys])
        value[key] = copy.deepcopy(GATED_VALUES[key])
        where += "." + key
    elif op == "rename":
        if value:
            key = rng.choice(sorted(value, key=str))
            value[key.upper() if key != key.upper() else key + "x"] = value.pop(key)
    return f"{op} at {where}"
