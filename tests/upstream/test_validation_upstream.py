"""The playground's validation against kube-apiserver 1.37.2's create path (tests/kube/cmd/validate).

Every shared conformance case, every real-world manifest and the stored regressions go through
both in `make test`, and so do 5,000 mutated objects (tests/upstream/mutate.py, each a function of
its seed and index; seed 20 unless DRA_VALIDATION_SEED says otherwise, DRA_VALIDATION_EXAMPLES=0
leaves them out); any disagreement fails. `make test-validation N=50000 SEED=s` runs more,
`FROM=i N=1` one of them again. A CEL syntax error the playground marks as worded its
own way is compared by place (apiserver_driver); every other message word for word.
"""
import json
import os
import random
from pathlib import Path

import pytest
import yaml

from allocator.engine import loader
from allocator.engine.cel.errors import SYNTAX_WORDING_NOTE
from tests.upstream.apiserver_driver import compare, gate_text, ours, settable
from tests.upstream.mutate import CONFORMANCE, REALWORLD, mutated

EXAMPLES = int(os.environ.get("DRA_VALIDATION_EXAMPLES", "5000"))
SEED = int(os.environ.get("DRA_VALIDATION_SEED", "20"))
FIRST = int(os.environ.get("DRA_VALIDATION_FROM", "0"))
REGRESSIONS = Path(__file__).parent / "regressions" / "validation"
REGRESSION_CASES = sorted(p.name for p in REGRESSIONS.iterdir() if (p / "case.yaml").is_file())


def _conformance_cases():
    for case_dir in sorted(p for p in CONFORMANCE.iterdir() if (p / "case.yaml").is_file()):
        case = yaml.safe_load((case_dir / "case.yaml").read_text())
        yield case_dir.name, (case_dir / "scenario.yaml").read_text(), case.get("featureGates") or {}


def test_every_conformance_case_validates_as_the_apiserver_does(validator):
    if not CONFORMANCE.is_dir():
        pytest.skip(f"conformance cases not found at {CONFORMANCE} (set DRA_CONFORMANCE_CASES)")
    disagreements, compared, locked = [], 0, []
    for name, text, gates in _conformance_cases():
        if settable(gates) != gates:
            locked.append(name)  # 1.37.2 refuses to turn a locked GA gate off
            continue
        verdict = compare(ours(text, gates=gate_text(gates)), validator.ask(text, gates=gate_text(gates)), label=name)
        compared += verdict.compared
        disagreements += verdict.disagreements + verdict.skipped
    assert not disagreements, "\n".join(disagreements)
    assert compared >= 400 and len(locked) <= 10, (compared, locked)


def test_every_real_world_manifest_validates_as_the_apiserver_does(validator):
    if not REALWORLD.is_dir():
        pytest.skip(f"real-world manifests not found at {REALWORLD} (set DRA_REALWORLD)")
    disagreements, compared, unreadable = [], 0, []
    for path in sorted(p for p in REALWORLD.rglob("*") if p.suffix in (".yaml", ".yml", ".json")):
        if "rbac" in path.relative_to(REALWORLD).parts:
            continue  # RBAC kinds are not the playground's to validate here
        text = path.read_text(errors="replace")
        verdict = compare(ours(text), validator.ask(text), label=str(path.relative_to(REALWORLD)))
        compared += verdict.compared
        disagreements += verdict.disagreements
        unreadable += verdict.skipped
    assert not disagreements, "\n".join(disagreements)
    assert compared >= 300 and len(unreadable) <= 3, (compared, unreadable)


def test_mutated_objects_validate_as_the_apiserver_does(validator):
    """Mutated objects FIRST .. FIRST+EXAMPLES-1 of run SEED; each is a function of (seed, index) alone."""
    if EXAMPLES == 0:
        pytest.skip("mutated objects: DRA_VALIDATION_EXAMPLES=0 leaves them out")
    failures = []
    for index in range(FIRST, FIRST + EXAMPLES):
        case = mutated(SEED, index)
        verdict = compare(ours(case.text, gates=case.gates), validator.ask(case.text, gates=case.gates))
        if verdict.disagreements or verdict.skipped:
            failures.append(f"seed {SEED} index {index} (make test-validation SEED={SEED} FROM={index} N=1): "
                            f"{case.what}; gates {case.gates!r}\n  " + "\n  ".join(verdict.disagreements + verdict.skipped)
                            + f"\n  object: {case.text[:4000]}")
            if len(failures) == 10:
                break
    assert not failures, f"{len(failures)} disagreement(s) (stopped at 10):\n" + "\n".join(failures)


def test_a_mutated_object_is_a_function_of_its_seed_and_index_alone():
    """Drawing objects in another order, or after others, draws the same objects."""
    forward = [mutated(SEED, index) for index in range(60)]
    backward = [mutated(SEED, index) for index in reversed(range(60))][::-1]
    assert [(m.text, m.gates) for m in forward] == [(m.text, m.gates) for m in backward]
    assert len({m.text for m in forward}) > 50  # and they differ from one another
    assert mutated(SEED + 1, 0).text != forward[0].text or mutated(SEED + 1, 1).text != forward[1].text


def _answer(text, gates):
    found = ours(text, gates=gates)
    return {key: (sorted(f.errors), f.decode, sorted(f.dropped), sorted(f.other)) for key, f in found.items()}


def test_the_playground_answers_an_object_the_same_whatever_it_answered_before():
    """The engine keeps parses, drops and findings per document text and gates: an object asked
    after others, and after itself under other gates, gets the answer a fresh engine gives."""
    gate_sets = ("", "DRADeviceTaints=false,DRAConsumableCapacity=false,DRAPartitionableDevices=false,"
                 "DRADeviceBindingConditions=false,DRAListTypeAttributes=false,DRADerivedAttributes=false")
    # As YAML: a JSON text is read afresh every time, a YAML document is kept by its text.
    asks = [(yaml.safe_dump(json.loads(case.text), allow_unicode=True), case.gates)
            for case in map(lambda index: mutated(SEED, index), range(150))]
    # One whose findings depend on the gates: duplicate binding conditions, refused unless dropped.
    _, gated, _ = _regression("binding-conditions-of-a-disabled-gate-dropped-from-status")
    gated = yaml.safe_dump(json.loads(gated))
    asks += [(gated, gates) for gates in gate_sets]
    for text, _ in asks:
        for gates in gate_sets:
            _answer(text, gates)
    after = [_answer(text, gates) for text, gates in reversed(asks)][::-1]
    fresh = []
    for text, gates in asks:
        loader.clear_cache()  # the documents' caches, and with them what was kept per document
        fresh.append(_answer(text, gates))
    assert fresh[-1] != fresh[-2]  # the gated object's answers differ
    changed = [f"ask {i}: gates {gates!r}" for i, ((_, gates), a, b) in enumerate(zip(asks, after, fresh)) if a != b]
    assert not changed, "\n".join(changed)


def _regression(name):
    folder = REGRESSIONS / name
    case = yaml.safe_load((folder / "case.yaml").read_text())
    return case, (folder / "scenario.yaml").read_text(), json.loads((folder / "upstream.json").read_text())


@pytest.mark.parametrize("name", REGRESSION_CASES)
def test_validation_regression_matches_the_stored_apiserver_answer(name):
    case, text, upstream = _regression(name)
    verdict = compare(ours(text, gates=case.get("featureGates") or ""), upstream)
    assert not verdict.disagreements, f"{case['why']}\n" + "\n".join(verdict.disagreements)


@pytest.mark.parametrize("name", REGRESSION_CASES)
def test_stored_apiserver_answer_is_still_the_apiservers(validator, name):
    case, text, stored = _regression(name)
    assert validator.ask(text, gates=case.get("featureGates") or "") == stored


# Pieces of CEL, right and wrong, for random broken expressions.
_CEL_PIECES = ("a", "b", "1", "'s'", ".", "(", ")", "[", "]", "{", "}", ",", "+", "-", "!", "?", ":", "&&", "||",
               "==", "in", "true", "é", "#", "a.b", "f(", "x.y(", "1u", "null", "device.driver", "=", "'", "`a`")


def test_cel_syntax_errors_are_worded_as_cel_go_words_them_or_marked(validator):
    """Random broken expressions: a message without the playground's note is cel-go's word for word;
    one with it is a syntax error for cel-go too."""
    rng = random.Random(SEED)
    expressions = sorted({(" " if rng.random() < 0.3 else "").join(rng.choice(_CEL_PIECES) for _ in range(rng.randint(1, 5)))
                          for _ in range(800)})
    docs = [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": f"c{i}"},
             "spec": {"selectors": [{"cel": {"expression": e}}]}} for i, e in enumerate(expressions)]
    text = "\n---\n".join(json.dumps(d, ensure_ascii=False) for d in docs)
    mine, theirs = ours(text), validator.ask(text)
    wrong, marked = [], 0
    for obj in theirs["objects"]:
        upstream = [e["message"] for e in obj["errors"]]
        found = [m for _, _, m in mine[(obj["doc"], -1)].errors] if (obj["doc"], -1) in mine else []
        if len(found) == 1 and found[0].endswith("\n" + SYNTAX_WORDING_NOTE):
            marked += 1
            if not (len(upstream) == 1 and "Syntax error: " in upstream[0]):
                wrong.append(f"{expressions[obj['doc'] - 1]!r}: ours {found}, upstream {upstream}")
        elif found != upstream:
            wrong.append(f"{expressions[obj['doc'] - 1]!r}: ours {found}, upstream {upstream}")
    assert not wrong, "\n".join(wrong)
    assert 100 < marked < len(expressions) - 200, marked  # both kinds are there to compare


NODE_ALLOCATABLE_EXAMPLES = int(os.environ.get("DRA_NODE_ALLOCATABLE_VALIDATION_EXAMPLES", "150"))
_ALLOCATABLE_NAMES = ("cpu", "memory", "hugepages-2Mi", "hugepages-1Gi", "ephemeral-storage", "pods",
                      "example.com/cores", "CPU", "hugepages-")
_ALLOCATABLE_QUANTITIES = ("1", "2", "500m", "16Gi", "0", "-1", "-500m", "abc", 3, None, "")


def _node_allocatable_entry(rng: random.Random) -> object:
    """One nodeAllocatableResources value, valid or broken as a person writing it by hand might."""
    if rng.random() < 0.05:
        return rng.choice([None, {}, "x", []])
    entry: dict = {}
    if rng.random() < 0.65:
        mapping: dict = {}
        for key in ("capacityKey", "capacityMultiplier", "deviceMultiplier"):
            if rng.random() < 0.4:
                mapping[key] = (rng.choice(["cores", "memory", "", "missing"]) if key == "capacityKey"
                                else rng.choice(_ALLOCATABLE_QUANTITIES))
        if rng.random() < 0.05:
            mapping["unknownField"] = 1
        entry["mapping"] = mapping
    if rng.random() < 0.5:
        entry["overhead"] = {key: rng.choice(_ALLOCATABLE_QUANTITIES)
                             for key in ("perPod", "perContainer") if rng.random() < 0.6}
    if rng.random() < 0.05:
        entry["other"] = True
    return entry


def node_allocatable_slice(seed: int) -> tuple[str, dict]:
    """A ResourceSlice whose devices carry generated nodeAllocatableResources, and the gates."""
    rng = random.Random(seed)
    devices = []
    for i in range(rng.randint(1, 3)):
        device: dict = {"name": f"dev-{i}"}
        if rng.random() < 0.6:
            device["capacity"] = {"cores": {"value": "8"}, "memory": {"value": "64Gi"}}
            device["allowMultipleAllocations"] = True
        device["nodeAllocatableResources"] = {rng.choice(_ALLOCATABLE_NAMES): _node_allocatable_entry(rng)
                                              for _ in range(rng.randint(1, 2))}
        devices.append(device)
    piece = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "cpus"},
             "spec": {"driver": "cpu.example.com", "nodeName": "node-1",
                      "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1}, "devices": devices}}
    gates = {"DRANodeAllocatableResources": rng.random() < 0.85}
    return yaml.safe_dump(piece, sort_keys=False), gates


def test_node_allocatable_resources_validate_as_the_apiserver_does(validator):
    """Devices' nodeAllocatableResources (DRANodeAllocatableResources): resource names, mapping and overhead
    entries, union and dependent fields, quantities' signs, unknown fields, and the field dropped on create
    with the gate off, each as kube-apiserver 1.37.2 answers."""
    disagreements, compared = [], 0
    for seed in range(NODE_ALLOCATABLE_EXAMPLES):
        text, gates = node_allocatable_slice(seed)
        verdict = compare(ours(text, gates=gate_text(gates)), validator.ask(text, gates=gate_text(gates)),
                          label=f"node-allocatable seed {seed}")
        compared += verdict.compared
        disagreements += verdict.disagreements + verdict.skipped
    assert not disagreements, "\n".join(disagreements[:10])
    assert compared == NODE_ALLOCATABLE_EXAMPLES
