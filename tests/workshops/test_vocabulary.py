"""The workshop checks speak the engine's words: every reason code, verdict and outcome the engine can
answer is one a check may name, and a check may name no word the engine never answers."""
import ast
from pathlib import Path

import yaml

from allocator.engine.vocabulary import OutcomeKind, RowCode, Verdict
from allocator.workshops import checks
from allocator.workshops.checks import Submission, evaluate
from allocator.workshops.model import Variant, parse_workshop
from allocator.workshops.playground import run_inline

ENGINE = Path(checks.__file__).resolve().parents[1] / "engine"


def used_members(enum_name: str) -> set[str]:
    """Every `Enum.MEMBER` the engine's modules (the vocabulary itself aside) name: what it can emit."""
    used = set()
    for path in ENGINE.rglob("*.py"):
        if path.name == "vocabulary.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == enum_name:
                used.add(node.attr)
    return used


def test_every_code_the_engine_emits_is_accepted_and_every_accepted_code_is_emitted():
    emitted = {RowCode[name].value for name in used_members("RowCode")}
    assert emitted == {code.value for code in RowCode}  # no code of the vocabulary is unreachable
    assert set(checks.CODES) == emitted
    assert "backtracked" in checks.CODES and "shared" not in checks.CODES


def test_every_verdict_and_outcome_the_engine_emits_is_accepted():
    assert {Verdict[name].value for name in used_members("Verdict")} == set(checks.VERDICTS) == {v.value for v in Verdict}
    assert set(checks.OUTCOMES) == {kind.value for kind in OutcomeKind}


BACKTRACKING = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors:
  - cel: {expression: device.driver == "gpu.example.com"}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  nodeName: worker-1
  pool: {name: worker-1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes:
      model: {string: big}
  - name: gpu-1
    attributes:
      model: {string: small}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: pair}
spec:
  devices:
    requests:
    - name: any
      exactly: {deviceClassName: gpu}
    - name: big
      exactly:
        deviceClassName: gpu
        selectors:
        - cel: {expression: 'device.attributes["gpu.example.com"].model == "big"'}
"""


def lesson_with(check: dict):
    lesson = {"title": "t", "task": "t", "scenario": BACKTRACKING, "node": "worker-1",
              "checks": [{**check, "message": "not so"}], "solution": {}}
    return parse_workshop(yaml.safe_dump({"title": "w", "lessons": [lesson]}))


def test_a_check_on_a_backtracked_row_is_accepted_and_passes_on_the_search_that_backtracked():
    workshop, problems = lesson_with({"row": "gpu-0", "claim": "pair", "request": "any", "code": "backtracked"})
    assert problems == []
    lesson = workshop.lessons[0]
    variant = Variant(scenario=BACKTRACKING, node="worker-1", gates=lesson.start.gates)
    _, outcome = run_inline(variant)
    [result] = evaluate(lesson.checks, Submission(variant=variant, outcome=outcome, start=lesson.start))
    assert result.ok


def test_a_check_on_a_code_no_row_carries_is_refused_when_the_workshop_is_read():
    _, problems = lesson_with({"row": "gpu-0", "claim": "pair", "code": "shared"})
    assert [p.message for p in problems] == [
        f"unknown reason code 'shared' (expected one of {', '.join(checks.CODES)})"]
