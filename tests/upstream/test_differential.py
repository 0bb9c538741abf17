"""The engine against k8s.io/dynamic-resource-allocation v0.37.2, the allocator kube-scheduler 1.37 runs.

Every shared conformance case and thousands of generated scenarios go through both;
any disagreement fails. DRA_UPSTREAM_EXAMPLES sets how many generated scenarios
(`make test-upstream N=50000` for a deeper run). One generated scenario in about 25 carries a
gate set kube-scheduler refuses (checked against its own feature-gate library, tests/kube/cmd/gates):
both must refuse it.
"""
import json
import os
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings

from tests.conftest import CONFORMANCE_DIR
from tests.upstream.driver import compare, gate_text, ours
from tests.upstream.generate import scenarios

EXAMPLES = int(os.environ.get("DRA_UPSTREAM_EXAMPLES", "2000"))
REGRESSIONS = Path(__file__).parent / "regressions"
REGRESSION_CASES = sorted(p.name for p in REGRESSIONS.iterdir() if (p / "case.yaml").is_file())


# Shared cases whose gate set kube-scheduler 1.37 refuses to start with (tests/engine/test_conformance.py says why).
REFUSED_CASES = {"admin-access-disabled"}


def test_every_conformance_case_agrees_with_upstream(oracle):
    if CONFORMANCE_DIR is None:
        pytest.skip("conformance cases not found (set DRA_CONFORMANCE_CASES)")
    disagreements, compared = [], 0
    for case_dir in sorted(p for p in CONFORMANCE_DIR.iterdir() if (p / "case.yaml").is_file()):
        case = yaml.safe_load((case_dir / "case.yaml").read_text())
        text = (case_dir / "scenario.yaml").read_text()
        gates = gate_text(case.get("featureGates"))
        emulated = str(case.get("emulatedVersion") or "")
        if case_dir.name in REFUSED_CASES:
            continue
        verdict = compare(ours(text, node=case.get("node"), gates=gates, emulated=emulated),
                          oracle.ask(text, node=case.get("node"), gates=gates, emulated=emulated))
        compared += verdict.verdict == "agree"
        if verdict.verdict == "disagree":
            disagreements.append(f"{case_dir.name}: {verdict.differences}")
    assert not disagreements, "\n".join(disagreements)
    assert compared >= 100


# The CEL engine raises the recursion limit once for deep expressions; Hypothesis notices.
@pytest.mark.filterwarnings("ignore:The recursion limit will not be reset")
@settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
          suppress_health_check=list(HealthCheck))
@given(generated=scenarios())
def test_generated_scenarios_agree_with_upstream(oracle, gate_oracle, generated):
    versions = {"emulated": generated.emulated, "min_compat": generated.min_compat}
    mine = ours(generated.text, node=generated.node, gates=generated.gates, **versions)
    if generated.refused:
        # kube-scheduler's own feature-gate library refuses these flags, so the scheduler never
        # runs: the playground must say so and answer nothing (exit 2).
        assert gate_oracle.ask(generated.scheduler_flags())["errors"], generated.scheduler_flags()
        assert mine["exitCode"] == 2 and "kube-scheduler would not start" in mine["message"], mine["message"]
        return
    assert not gate_oracle.ask(generated.scheduler_flags())["errors"], generated.scheduler_flags()
    assert not mine["validationErrors"], f"the generator made an invalid scenario: {mine['message']}"
    verdict = compare(mine, oracle.ask(generated.text, node=generated.node, gates=generated.gates, **versions))
    assert verdict.verdict != "disagree", "\n".join(verdict.differences)


def _versions(case: dict) -> dict:
    return {"emulated": str(case.get("emulatedVersion") or ""), "min_compat": str(case.get("minCompatibilityVersion") or "")}


def _regression(name):
    folder = REGRESSIONS / name
    case = yaml.safe_load((folder / "case.yaml").read_text())
    return case, (folder / "scenario.yaml").read_text(), json.loads((folder / "upstream.json").read_text())


@pytest.mark.parametrize("name", REGRESSION_CASES)
def test_regression_matches_the_stored_upstream_answer(name):
    case, text, upstream = _regression(name)
    verdict = compare(ours(text, node=case.get("node"), gates=case.get("featureGates") or "", **_versions(case)),
                      upstream)
    assert verdict.verdict == "agree", f"{case['why']}\n" + "\n".join(verdict.differences)


@pytest.mark.parametrize("name", REGRESSION_CASES)
def test_stored_upstream_answer_is_still_upstream(oracle, name):
    case, text, stored = _regression(name)
    fresh = oracle.ask(text, node=case.get("node"), gates=case.get("featureGates") or "", **_versions(case))
    fresh["gaveUp"] = False
    assert compare(fresh, stored).verdict == "agree"
