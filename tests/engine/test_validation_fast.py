"""Validation's fast path says only what the full walk says.

`validate` first asks cheap predicates whether a part (metadata, a device, a slice's spec, a claim's
requests, an allocation, a class's spec) is plainly valid, and walks it with paths and messages only
when they cannot tell. A user must read the same problems, in the same order, either way: here every
object of generated scenarios, and thousands of slightly broken copies of them (each field deleted,
emptied, retyped, renamed, lengthened, made unsorted or doubled, one place at a time), are validated
with the fast path and without it, under several gate sets, and must give identical lists. The
last tests break a predicate on purpose and check that this comparison notices.
"""
from __future__ import annotations

import copy
import itertools
import json
import random
import re

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from allocator.engine import apitypes, validation
from allocator.engine.gates import FeatureGates
from allocator.engine.loader import load_scenario
from allocator.engine.scenario import _created_cel_check
from allocator.engine.scenario import cel_check as stored_cel_check
from tests.upstream.generate import scenarios
from tests.upstream.mutate import bases

# Gate sets the rules read (the defaults; the alpha features on; the beta ones off) and the CEL
# checkers of stored objects and of objects created under narrower gates.
GATE_SETS = (
    FeatureGates(),
    FeatureGates((("DRAConsumableCapacity", True), ("DRAFractionalCapacityRange", True))),
    FeatureGates((("DRAConsumableCapacity", False),)),
)
CEL_CHECKS = (stored_cel_check, _created_cel_check(False, False), None)

WRONG_TYPES = (None, 0, -1, True, "x", "", [], {}, 1.5, 2**63, ["a"], {"a": 1})


def _text_variants(value: str) -> list:
    out = ["", value.upper(), value + "-", "-" + value, value + ".", "." + value, value + "/x", "a/" + value,
           value + "/b/c", value.replace(".", ".."), value + "é", "\u212a" + value, value + " ", value + "_x",
           "1" + value, value + "+b", value + "-rc..1", "x" * 32, "x" * 33, "x" * 63, "x" * 64, "x" * 65,
           "a" * 253, "a" * 254, "é" * 33, "1.0.0", "01.0.0", "v1", "1Gi", "-1Gi", "0.5", "1e3", "abc",
           "a.b/c_d", "A.b/c", "example.com/x" * 2, "metadata.name", "NoSchedule", "Exists", "All", "*",
           "In", "Gt", "NodePrepareResources", "FromClass", value * 2]
    return out


def _number_variants(value: int) -> list:
    return [value - 1, value + 1, 0, -1, 2**63 - 1, 2**63, -(2**63) - 1, 32, 33, 48, 49]


# Fields a person adds to an object, with values of the right type: beside the fields already there
# they make near misses (two ways of choosing nodes, tolerationSeconds without NoExecute, a count
# beside allocationMode All, a namespace on a cluster-scoped object, ...).
ADDED = {
    "namespace": "team-a", "generateName": "gpu-", "nodeName": "node-a", "allNodes": True,
    "perDeviceNodeSelection": True, "nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "region", "operator": "In", "values": ["r1"]}]}]},
    "tolerationSeconds": 30, "effect": "NoSchedule", "operator": "Exists", "value": "v", "key": "k",
    "allocationMode": "All", "count": 2, "adminAccess": True, "matchAttribute": "gpu.example.com/model",
    "distinctAttribute": "gpu.example.com/model", "requests": ["r0"], "bindingConditions": ["ready"],
    "bindingFailureConditions": ["ready"], "generation": -1, "resourceSliceCount": 0,
    "compatibilityGroups": ["g", "g"], "requestPolicy": {"default": "1Gi"}, "validValues": ["2Gi", "1Gi"],
    "allowMultipleAllocations": False, "shareID": "0123", "timeAdded": "2024-01-01T00:00:00Z",
    "skipNodeOperations": ["NodePrepareResources"], "partitionTypeAttribute": "gpu.example.com/model",
    "extendedResourceName": "gpu", "labels": {"a": "b"}, "annotations": {"A/b": "c"},
    "firstAvailable": [{"name": "s", "deviceClassName": "c"}], "exactly": {"deviceClassName": "c"},
    "selectors": [{"cel": {"expression": "device.driver == 'x'"}}], "derivedAttributes": [
        {"name": "gpu.example.com/model", "expression": "device.driver"}], "sharedCounters": [
        {"name": "s", "counters": {"c": {"value": "1"}}}], "devices": [{"name": "d"}],
    "consumesCounters": [{"counterSet": "s", "counters": {"c": {"value": "1"}}}],
    "nodeAllocatableResources": {"cpu": {"overhead": {"perPod": "1"}}}, "taints": [{"key": "k", "effect": "None"}],
    "config": [{"opaque": {"driver": "gpu.example.com", "parameters": {}}}], "status": {},
    "int": 1, "bool": True, "string": "s", "version": "1.0.0", "ints": [], "strings": ["a"],
}
# Words of the enumerations: a field that holds one is given each of the others.
ENUMS = ("", "Exists", "Equal", "In", "NotIn", "Gt", "Lt", "DoesNotExist", "All", "ExactCount", "NoSchedule",
         "NoExecute", "None", "PreferNoSchedule", "*", "NodePrepareResources", "NodeUnprepareResources",
         "FromClass", "FromClaim")


def _places(value, path=()):
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _places(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _places(item, path + (index,))


def _at(obj, path):
    for part in path:
        obj = obj[part]
    return obj


def _replaced(obj, path, value):
    out = copy.deepcopy(obj)
    if not path:
        return value
    _at(out, path[:-1])[path[-1]] = value
    return out


def _grown(items: list, size: int) -> list:
    """`items` grown to `size` with copies of its items made distinct (a name, a string, given a suffix)."""
    out = copy.deepcopy(items)
    while len(out) < size:
        item = copy.deepcopy(items[len(out) % len(items)])
        if isinstance(item, str):
            item = f"{item[:50]}-{len(out)}"
        elif isinstance(item, dict):
            for key in ("name", "counterSet"):
                if isinstance(item.get(key), str):
                    item[key] = f"{item[key][:50]}-{len(out)}"
        out.append(item)
    return out


def _related(keys) -> set:
    """The fields of the v1 types that have one of `keys`."""
    return {name for fields in apitypes.TYPES.values() if not keys.isdisjoint(fields) for name in fields}


def _variants(obj: dict, rng: random.Random, per_place: int):
    """Slightly broken copies of `obj`: at each place, `per_place` edits drawn from those that fit, and
    every near miss (a field its type has, added; a value given to a field beside it; another word of
    an enumeration)."""
    for path, value in list(_places(obj)):
        if path[:1] in (("apiVersion",), ("kind",)):
            continue
        edits = [("type", v) for v in WRONG_TYPES]
        if path:
            edits.append(("delete", None))
        if isinstance(value, str):
            edits += [("set", v) for v in _text_variants(value)]
        if isinstance(value, bool):
            edits.append(("set", not value))
        elif isinstance(value, int):
            edits += [("set", v) for v in _number_variants(value)]
        near = []
        if isinstance(value, list) and value:
            edits += [("set", value[::-1]), ("set", [None] + value), ("set", value + [{}])]
            # one item twice; none; one more than each limit of the v1 lists
            near += [("set", value + [copy.deepcopy(value[0])]), ("set", [])]
            near += [("set", _grown(value, size)) for size in (3, 5, 9, 17, 33, 65, 129) if size > len(value)]
        if isinstance(value, str) and value in ENUMS:
            near += [("set", word) for word in ENUMS if word != value]
        if isinstance(value, dict):
            related = _related(value.keys())
            # a key that is not a name: every one for a map (keys no type has as fields), one for a struct
            keys = [("key", key) for key in ("extra", "Bad_Name/x", "a/b/c", "x" * 33, "gpu.example.com/x", "-a",
                                             "", "a" * 64 + "/x", "Example.com/x", "ex_ample.com/x", "a" * 254)]
            if related or not value:
                edits += keys
            else:
                near += keys
            near += [("add", key) for key in sorted(related & ADDED.keys() - value.keys())]
            near += [("sibling", (a, b)) for a, b in itertools.permutations(sorted(value, key=str), 2)
                     if type(value[a]) is type(value[b]) and isinstance(value[a], (str, list)) and value[a] != value[b]]
            if value:
                edits += [("rename", None), ("set", {}), ("grow", 33), ("grow", 49)]
        for op, new in rng.sample(edits, min(per_place, len(edits))) + near:
            if op == "delete":
                out = copy.deepcopy(obj)
                holder = _at(out, path[:-1])
                del holder[path[-1]]
            elif op == "key":
                out = copy.deepcopy(obj)
                target = _at(out, path)
                target[new] = copy.deepcopy(next(iter(value.values()))) if value else None
            elif op == "add":
                out = _replaced(obj, path + (new,), copy.deepcopy(ADDED[new]))
            elif op == "grow":  # a map of more entries than allowed
                out = copy.deepcopy(obj)
                target = _at(out, path)
                first = next(iter(value.values()))
                for index in range(new - len(value)):
                    target[f"k{index}"] = copy.deepcopy(first)
            elif op == "sibling":  # one field's value given to another
                out = _replaced(obj, path + (new[0],), copy.deepcopy(value[new[1]]))
            elif op == "rename":
                out = copy.deepcopy(obj)
                target = _at(out, path)
                key = rng.choice(sorted(target, key=str))
                target[str(key).upper() if str(key) != str(key).upper() else f"{key}x"] = target.pop(key)
            else:
                out = _replaced(obj, path, copy.deepcopy(new))
            yield f"{op} {new!r:.40} at {'.'.join(map(str, path)) or '(object)'}", out


def _both(obj, cel_check, gates):
    validation.FAST_PATH = True
    try:
        fast = validation.validate(obj, cel_check=cel_check, gates=gates)
    finally:
        validation.FAST_PATH = False
    try:
        slow = validation.validate(obj, cel_check=cel_check, gates=gates)
    finally:
        validation.FAST_PATH = True
    return fast, slow


def _mismatches(objects, seed: int, per_place: int = 5, stop: int = 1) -> list[str]:
    """Where the fast path and the walk disagree, on `objects` and broken copies of them."""
    rng = random.Random(seed)
    found = []
    for obj in objects:
        cases = itertools.chain([("as generated", obj)], _variants(obj, rng, per_place))
        for what, case in cases:
            cel_check, gates = rng.choice(CEL_CHECKS), rng.choice(GATE_SETS)
            fast, slow = _both(case, cel_check, gates)
            if fast != slow:
                found.append(f"{what}\n  fast: {fast}\n  walk: {slow}\n  object: {json.dumps(case, default=str)[:2000]}")
                if len(found) >= stop:
                    return found
    return found


def _objects(text: str) -> list[dict]:
    return [raw.data for raw in load_scenario(text).objects if isinstance(raw.data, dict)]


GENERATED = settings(max_examples=25, derandomize=True, database=None, deadline=None, phases=[Phase.generate],
                     suppress_health_check=list(HealthCheck))


@GENERATED
@given(scenarios())
def test_the_fast_path_finds_what_the_walk_finds_in_generated_scenarios_and_broken_copies(generated):
    objects = _objects(generated.text)
    assert objects
    assert _mismatches(objects, seed=len(generated.text)) == []


def test_the_fast_path_finds_what_the_walk_finds_in_the_shared_cases_and_manifests():
    """A third of the objects of the conformance cases and the real-world manifests (tests/upstream/
    mutate.py's bases: pods, templates, hand-written shapes), and broken copies of them."""
    texts = bases()
    if not texts:
        pytest.skip("no conformance cases or real-world manifests here")
    assert _mismatches([json.loads(text) for text in texts[::3]], seed=3, per_place=1) == []


def test_generated_objects_are_valid_and_take_the_fast_path(monkeypatch):
    """The comparison above means something only if the fast path answers for the valid objects:
    count the walks of devices and requests it leaves to the walk."""
    walked = []
    for name in ("_device", "_request", "_allocation"):
        real = getattr(validation, name)
        monkeypatch.setattr(validation, name, lambda *a, _real=real, _name=name: walked.append(_name) or _real(*a))
    seen = 0

    @GENERATED
    @given(scenarios())
    def check(generated):
        nonlocal seen
        for obj in _objects(generated.text):
            assert validation.validate(obj, cel_check=stored_cel_check) == []
            seen += 1

    check()
    assert seen > 100 and walked == []


# -- the patterns of the fast path accept what the patterns of the messages accept -------------------

ALPHABET = "a0-.A_/é\u212a"


def _strings():
    for length in range(6):
        yield from ("".join(chars) for chars in itertools.product("a0-.A", repeat=length))
    rng = random.Random(7)
    for _ in range(20000):
        yield "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 14)))


def test_the_fast_name_patterns_accept_exactly_what_the_apiserver_patterns_accept():
    label = re.compile(validation._DNS_LABEL_FMT)
    subdomain = re.compile(validation._DNS_SUBDOMAIN_FMT)
    for text in _strings():
        assert (validation._fast_label(text) is not None) == (label.fullmatch(text) is not None), text
        assert (validation._fast_subdomain(text) is not None) == (subdomain.fullmatch(text) is not None), text
        caseless = text.isascii() and subdomain.fullmatch(text.lower()) is not None
        assert (validation._fast_caseless_subdomain(text) is not None) == caseless, text


def test_the_fast_qualified_name_check_accepts_only_what_the_walk_accepts():
    for text in itertools.chain(_strings(), ("x" * 32, "x" * 33, "a" * 63 + "/b", "a" * 64 + "/b", "Ex.com/x")):
        checker = validation._Checker("ResourceSlice", None, FeatureGates())
        fast = validation._plain_qualified_name(checker, text)
        checker._qualified_name(text, ())
        walk = not checker.problems
        assert not fast or walk, text
        if text.isascii():
            assert fast == walk, text


# -- a broken fast path is noticed ---------------------------------------------------------------------

BROKEN = [
    # a device name that is not a DNS label
    ("_plain_label", lambda value: isinstance(value, str)),
    # a device's attributes not looked at
    ("_plain_attributes", lambda c, attributes: True),
    # any quantity
    ("_plain_quantity", lambda value: True),
    # a request's tolerations not looked at
    ("_plain_toleration", lambda c, toleration: True),
    # selectors whose CEL does not compile
    ("_plain_selectors", lambda c, selectors: isinstance(selectors, list)),
]


@pytest.mark.parametrize("name,broken", BROKEN, ids=[name for name, _ in BROKEN])
def test_a_deliberately_broken_fast_path_is_caught(monkeypatch, name, broken):
    monkeypatch.setattr(validation, name, broken)
    caught = []

    @settings(max_examples=25, derandomize=True, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(scenarios())
    def check(generated):
        if not caught:
            caught.extend(_mismatches(_objects(generated.text), seed=len(generated.text)))

    check()
    assert caught, f"breaking {name} went unnoticed"
