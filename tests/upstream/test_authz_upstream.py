"""The status-authorization what-if against the kube-apiserver's own code (tests/kube/cmd/authz).

Generated RBAC sets and status writes (DRA_AUTHZ_EXAMPLES, 2,000 by default) must agree on
every decision, allow reason and message; the stored cases run without Go against the answers
the oracle gave when they were recorded, and (with Go) those answers must still be upstream's.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from tests.upstream.authz_driver import AuthzOracle, OracleUnavailable, build, compare, go_binary, ours
from tests.upstream.authz_generate import case

EXAMPLES = int(os.environ.get("DRA_AUTHZ_EXAMPLES", "2000"))
STORED = Path(__file__).parent / "authz_regressions"
STORED_CASES = sorted(p.stem for p in STORED.glob("*.json"))


@pytest.fixture(scope="module")
def authz_oracle():
    if go_binary() is None:
        pytest.skip("Go is not installed: the status-authorization differential against the kube-apiserver's "
                    "code is skipped; its stored cases still run")
    try:
        binary = build()
    except OracleUnavailable as exc:
        pytest.fail(str(exc))
    with AuthzOracle(binary) as process:
        yield process


@settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(generated=case())
def test_generated_rbac_and_writes_agree_with_the_apiserver(authz_oracle, generated):
    differences = compare(ours(generated), authz_oracle.ask(generated))
    assert not differences, json.dumps(generated, indent=1) + "\n" + "\n".join(differences)


def _stored(name: str) -> dict:
    return json.loads((STORED / f"{name}.json").read_text())


@pytest.mark.parametrize("name", STORED_CASES)
def test_stored_case_matches_the_recorded_apiserver_answer(name):
    stored = _stored(name)
    assert not compare(ours(stored["case"]), stored["upstream"]), stored["why"]


@pytest.mark.parametrize("name", STORED_CASES)
def test_recorded_answer_is_still_the_apiserver_answer(authz_oracle, name):
    stored = _stored(name)
    fresh = authz_oracle.ask(stored["case"])
    assert fresh.get("answers") == stored["upstream"]["answers"]
