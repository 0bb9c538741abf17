"""Real drivers' published RBAC: every file loads (or, for a raw Helm template, fails with a
located error), and for each install the what-if says whether its kubelet plugin can write its
status.devices entries of a node-local claim on 1.37 with the gate on, and what it is missing."""
from __future__ import annotations

import pytest

from allocator.engine.scenario import read_scenario
from allocator.engine.statusauth.outcome import run_status_writers
from allocator.engine.statusauth.whatif import ARBITRARY, ASSOCIATED, FRONT_DOOR, plugin_device_status
from allocator.engine.gates import FeatureGates
from tests.engine.realworld_rbac import INSTALLS, ROOT, install_text

pytestmark = pytest.mark.skipif(not ROOT.is_dir(), reason=f"{ROOT} (the real-world RBAC files) is not here")

OK = "allowed"
# install -> (PUT, PATCH): allowed, or the first check that refused it
EXPECTED = {
    "dra-example-driver (helm)": (OK, FRONT_DOOR),  # status: update only
    "dra-driver-nvidia-gpu (helm)": (FRONT_DOOR, FRONT_DOOR),  # writes no claim status at all
    "dranet (helm)": (OK, OK),
    "dranet (install.yaml)": (OK, OK),
    "dranet (dranetctl-install.yaml)": (OK, OK),
    "google/dranet (install.yaml)": (ASSOCIATED, ASSOCIATED),  # predates the gate: status only
    "dra-driver-cpu (helm)": (OK, OK),
    "dra-driver-cpu (manifests/base)": (OK, OK),
    "dra-driver-memory": (ASSOCIATED, ASSOCIATED),
    "AMD k8s-gpu-dra-driver (helm)": (FRONT_DOOR, FRONT_DOOR),
    "dra-driver-google-tpu (helm)": (FRONT_DOOR, FRONT_DOOR),
    "dra-driver-sriov (helm)": (OK, ASSOCIATED),  # associated-node:update only
    "RBLN k8s-dra-driver-npu (helm)": (FRONT_DOOR, FRONT_DOOR),
    "Intel GPU (deployments/gpu/base)": (FRONT_DOOR, FRONT_DOOR),
    "Intel Gaudi (deployments/gaudi/base)": (FRONT_DOOR, FRONT_DOOR),
    "Intel QAT (deployments/qat/base)": (FRONT_DOOR, FRONT_DOOR),
    "Intel GPU (helm)": (FRONT_DOOR, FRONT_DOOR),
    "HAMi-DRA (helm)": (ASSOCIATED, FRONT_DOOR),
    "composable-dra-driver": (FRONT_DOOR, FRONT_DOOR),
    "Kubernetes test driver (plugin-permissions.yaml)": (ASSOCIATED, FRONT_DOOR),
    "Kubernetes test driver (plugin-rbac.yaml)": (FRONT_DOOR, FRONT_DOOR),
    "website: node-local status updater": (OK, OK),
    "website: multi-node status updater": (OK, OK),
    "website (concepts): node-local status updater": (OK, OK),
    "website (concepts): multi-node status updater": (OK, OK),
}


def _answer(verdict) -> str:
    return OK if verdict.allowed else verdict.failed[0]


def test_every_file_loads_or_fails_with_a_located_error():
    files = sorted(ROOT.rglob("*.yaml"))
    assert len(files) > 100
    for path in files:
        scenario = read_scenario(path.read_bytes())
        errors = scenario.errors
        if not errors:
            continue
        template = "{{" in path.read_text()
        assert template, f"{path.relative_to(ROOT)}: {errors[0].render()}"
        assert all(e.line is not None for e in errors), f"{path.relative_to(ROOT)}: an error without a line"


def test_every_install_is_listed():
    assert sorted(EXPECTED) == sorted(name for name, *_ in INSTALLS)


@pytest.mark.parametrize("install", INSTALLS, ids=[i[0] for i in INSTALLS])
def test_plugin_of_each_driver_may_or_may_not_write_its_device_status(install):
    name, files, driver, service_account, extra = install
    scenario = read_scenario(install_text(files, service_account, extra).encode())
    assert not scenario.errors, scenario.errors[0].render()
    answer = plugin_device_status(scenario.rbac, driver=driver, service_account=service_account)
    assert (_answer(answer.verdicts["update"]), _answer(answer.verdicts["patch"])) == EXPECTED[name]
    for verb, verdict in answer.verdicts.items():
        if verdict.allowed:
            assert not answer.fixes.get(verb)
            continue
        fix = answer.fixes[verb]
        # what is missing is named, one rule per refusal in the order the apiserver checks
        if verdict.failed[0] == FRONT_DOOR:
            assert verdict.status == 403 and fix[0].resources == ("resourceclaims/status",)
            assert fix[0].verbs == (verb,)
        else:
            assert verdict.status == 422 and "changing status.devices requires" in verdict.message
        driver_rules = [r for r in fix if r.resources == ("resourceclaims/driver",)]
        assert all(r.verbs == (f"associated-node:{verb}",) and r.resource_names == (driver,) for r in driver_rules)


def test_a_plugin_with_only_associated_node_cannot_write_a_claim_not_pinned_to_its_node():
    for name, files, driver, service_account, extra in INSTALLS:
        if name not in ("dra-example-driver (helm)", "website: node-local status updater",
                        "website: multi-node status updater"):
            continue
        scenario = read_scenario(install_text(files, service_account, extra).encode())
        answer = plugin_device_status(scenario.rbac, driver=driver, service_account=service_account, pinned=False)
        verdict = answer.verdicts["update"]
        if name == "website: multi-node status updater":
            assert verdict.allowed
            assert "arbitrary-node" in verdict.checks[-1].decision.rule.describe()
        else:
            assert not verdict.allowed and verdict.failed == (ARBITRARY,)
            assert answer.fixes["update"][0].verbs == ("arbitrary-node:update",)


def test_published_bootstrap_roles_let_the_scheduler_bind_claims():
    base = "kubernetes/plugin/pkg/auth/authorizer/rbac/bootstrappolicy/testdata/"
    text = "\n---\n".join((ROOT / base / f).read_text() for f in ("cluster-roles-featuregates.yaml",
                                                                    "cluster-role-bindings.yaml"))
    text += CLAIM
    scenario = read_scenario(text.encode())
    assert not scenario.errors

    class Allocated:  # the claim is allocated in the input already
        claims, pods = [], None

    grid = run_status_writers(scenario, Allocated(), apiserver_gates=FeatureGates(), bootstrap=False)
    cells = grid.claims[0].cells
    assert cells[("kube-scheduler", "allocate")].allowed
    assert cells[("kube-scheduler", "reserve")].allowed
    # no bootstrap role may write any driver's device status
    assert not cells[("kube-scheduler", "devices:gpu.example.com")].allowed


CLAIM = """
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu}
status:
  allocation:
    devices:
      results:
      - {request: gpu, driver: gpu.example.com, pool: node-1, device: gpu-0}
    nodeSelector:
      nodeSelectorTerms:
      - matchFields:
        - {key: metadata.name, operator: In, values: [node-1]}
"""
