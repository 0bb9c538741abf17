"""Reading a scenario: documents that did not change are neither parsed nor validated again,
and no answer or position depends on what was cached."""
import dataclasses
import json
import re

import pytest

from allocator import gallery
from allocator.engine import loader, scenario as scenario_module
from allocator.engine.gates import FeatureGates
from allocator.engine.report import outcome_data
from allocator.engine.run import allocate_text
from allocator.engine.scenario import read_scenario
from allocator.run_settings import RunSettings, run_in_process
from tests.conftest import CONFORMANCE_DIR

_SHARE_ID = re.compile(r'"shareID": "[0-9a-f-]{36}"')
CASES = sorted(p.name for p in CONFORMANCE_DIR.iterdir() if (p / "case.yaml").is_file()) if CONFORMANCE_DIR else []


def _answer(text, settings: RunSettings | None = None) -> str:
    if settings is None:
        scenario, outcome = allocate_text(text)
    else:
        scenario, outcome = run_in_process(dataclasses.replace(settings, scenario=text))
    problems = [(p.render(), p.line, p.column) for p in scenario.problems]
    answer = json.dumps([outcome_data(outcome, with_explanation=True), problems], sort_keys=True, default=str)
    return _SHARE_ID.sub('"shareID": "(random)"', answer)  # a new UUID on every run


def _fresh(text, settings: RunSettings | None = None) -> str:
    loader.clear_cache()
    try:
        return _answer(text, settings)
    finally:
        loader.clear_cache()


@pytest.mark.parametrize("slug", [example.slug for example in gallery.all_examples()])
def test_every_example_answers_the_same_from_the_cache(slug):
    example = gallery.get(slug)
    settings = RunSettings(scenario="", node=example.node or "", gates=example.component_gates())
    fresh = _fresh(example.scenario, settings)
    _answer(example.scenario, settings)

    assert _answer(example.scenario, settings) == fresh
    edited = "# a comment\n" + example.scenario + "\n---\n# one more document, empty\n"
    assert _answer(edited, settings) == _fresh(edited, settings)


@pytest.mark.skipif(not CASES, reason="conformance cases not found")
def test_conformance_cases_answer_the_same_after_one_another():
    """The cases share documents (classes, nodes): read one after another, as a server would."""
    scenarios = [(CONFORMANCE_DIR / name / "scenario.yaml").read_bytes() for name in CASES]
    fresh = [_fresh(text) for text in scenarios]

    assert [_answer(text) for text in scenarios] == fresh


def test_an_edit_validates_only_the_document_that_changed(monkeypatch):
    example = gallery.get("mig-8-gpu")
    read_scenario(example.scenario)
    validated = []
    real = scenario_module.validate

    def counting(data, **kwargs):
        validated.append(data["metadata"]["name"])
        return real(data, **kwargs)

    monkeypatch.setattr(scenario_module, "validate", counting)

    scenario = read_scenario(example.scenario.replace("count: 2", "count: 1", 1))

    assert len(validated) == 1
    assert not scenario.errors


def test_objects_created_under_other_gates_are_checked_under_those_gates():
    text = gallery.get("consumable-capacity").scenario
    read_scenario(text)  # stored: every field kept
    off = FeatureGates(values=(("DRAConsumableCapacity", False),))

    created = read_scenario(text, apiserver_gates=off)

    assert any(p.message.startswith("dropped on create") for p in created.warnings)
    assert not any(p.message.startswith("dropped on create") for p in read_scenario(text).warnings)


def test_a_cached_document_keeps_its_devices_selector_results_bounded():
    """Every edit of a selector is a new program; the devices of a cached slice outlive the runs."""
    slices = gallery.get("simple-gpu").scenario.split("\n---\n")
    loader.clear_cache()
    try:
        texts = []
        for n in range(60):
            claim = (f"apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: c\n  namespace: default\n"
                     f"spec:\n  devices:\n    requests:\n    - name: gpu\n      exactly:\n        deviceClassName: "
                     f"gpu.example.com\n        selectors:\n        - cel:\n            expression: "
                     f"'device.attributes[\"gpu.example.com\"].index != {n}'\n")
            texts.append("\n---\n".join(s for s in slices if "kind: ResourceClaim" not in s) + "\n---\n" + claim)
            allocate_text(texts[-1])
        devices = [d for s in read_scenario(texts[-1]).slices for d in s.devices]
        assert devices and all(len(d.selector_results or {}) <= 32 for d in devices)
        assert any(d.selector_results for d in devices), "the results are kept between runs"
    finally:
        loader.clear_cache()
