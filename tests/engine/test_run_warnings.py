"""What the run reports about mistakes in the input: where they are, by code, never as success."""
from pathlib import Path

from allocator.engine.problems import IGNORED_KIND, UNKNOWN_NODE
from allocator.engine.run import ALLOCATED, INVALID, UNSATISFIABLE, allocate_text

EXAMPLES = Path(__file__).resolve().parents[2] / "allocator" / "examples"
SIMPLE = (EXAMPLES / "simple-gpu.yaml").read_text()


def line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


def test_a_node_the_scenario_does_not_know_is_a_warning_with_its_code():
    _, outcome = allocate_text(SIMPLE, node_name="nope")
    assert outcome.outcome == UNSATISFIABLE
    (warning,) = [w for w in outcome.warnings if w.code == UNKNOWN_NODE]
    assert "node nope is not in the scenario (the nodes it names are worker-1)" in warning.message


def test_a_known_node_gets_no_such_warning():
    _, outcome = allocate_text(SIMPLE, node_name="worker-1")
    assert outcome.outcome == ALLOCATED and not [w for w in outcome.warnings if w.code == UNKNOWN_NODE]


def test_pods_warn_about_an_unknown_node_too():
    _, outcome = allocate_text((EXAMPLES / "pods.yaml").read_text(), node_name="nope")
    assert [w.code for w in outcome.warnings if w.code == UNKNOWN_NODE] == [UNKNOWN_NODE]


def test_a_misspelt_kind_is_located_and_names_the_kind_meant():
    text = SIMPLE.replace("kind: ResourceClaim\n", "kind: ResourceClaims\n")
    _, outcome = allocate_text(text)
    (warning,) = [w for w in outcome.warnings if w.code == IGNORED_KIND]
    assert warning.line == line_of(text, "kind: ResourceClaims") and warning.field == "kind"
    assert "did you mean ResourceClaim?" in warning.message
    assert outcome.claims == []


def test_a_cel_runtime_error_points_at_the_expression():
    text = SIMPLE.replace('capacity["gpu.example.com"].memory', 'attributes["gpu.example.com"].nosuch')
    _, outcome = allocate_text(text)
    assert outcome.outcome == INVALID
    (problem,) = outcome.problems
    assert problem.field == "spec.devices.requests[0].exactly.selectors[0].cel.expression"
    assert problem.line == line_of(text, "nosuch")


def test_a_class_selector_error_points_at_the_device_class():
    text = SIMPLE.replace('device.driver == "gpu.example.com"', 'device.attributes["gpu.example.com"].nosuch == 1')
    _, outcome = allocate_text(text)
    (problem,) = outcome.problems
    assert (problem.kind, problem.name) == ("DeviceClass", "gpu.example.com")
    assert problem.field == "spec.selectors[0].cel.expression" and problem.line == line_of(text, "nosuch")
