"""Who may write a claim's status: RBAC objects in a scenario and the what-if over them."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from allocator.engine.gates import ComponentGates, FeatureGates
from allocator.engine.run import allocate_text
from allocator.engine.scenario import read_scenario
from allocator.engine.statusauth.whatif import ARBITRARY, ASSOCIATED, BINDING, FRONT_DOOR, identity_writer

ROOT = Path(__file__).resolve().parent.parent.parent
EXAMPLE = (ROOT / "allocator" / "examples" / "granular-status-authorization.yaml").read_text()

STATUS_ROLE = """
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: plugin}
rules:
- apiGroups: [resource.k8s.io]
  resources: [resourceclaims/status]
  verbs: [update, patch]
"""
DRIVER_RULE = """- apiGroups: [resource.k8s.io]
  resources: [resourceclaims/driver]
  resourceNames: [{names}]
  verbs: [{verbs}]
"""
PLUGIN = """
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: plugin, namespace: drivers}
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: gpu-plugin
  namespace: drivers
spec:
  selector: {matchLabels: {app: p}}
  template:
    metadata: {labels: {app: p}}
    spec:
      serviceAccountName: plugin
      containers:
      - name: plugin
        image: example
        env:
        - {name: DRIVER_NAME, value: gpu.example.com}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: plugin}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: plugin}
subjects:
- {kind: ServiceAccount, name: plugin, namespace: drivers}
"""


def grid(text: str, *, apiserver: dict | None = None, identities=(), bootstrap=True) -> dict:
    gates = ComponentGates()
    if apiserver is not None:
        gates = ComponentGates(apiserver=FeatureGates(tuple(sorted(apiserver.items()))))
    scenario, outcome = allocate_text(text.encode(), gates=gates, status_identities=identities,
                                      bootstrap_rbac=bootstrap)
    assert not scenario.errors, scenario.errors[0].render()
    return outcome.status_writers


def cell(data: dict, claim: str, writer: str, write: str) -> dict:
    claim_grid = next(c for c in data["claims"] if c["claim"] == claim)
    return next(c for c in claim_grid["cells"] if c["writer"] == writer and c["write"] == write)


def plugin_scenario(verbs: str = "associated-node:update", names: str = "gpu.example.com") -> str:
    return EXAMPLE + STATUS_ROLE + DRIVER_RULE.format(names=names, verbs=verbs) + PLUGIN


def test_node_local_plugin_writes_its_device_status_of_a_claim_pinned_to_its_node():
    data = grid(plugin_scenario())
    allowed = cell(data, "default/local-gpu", "plugin:drivers/gpu-plugin@worker-1", "devices:gpu.example.com")
    assert allowed["allowed"] and allowed["status"] == 200
    driver_check = allowed["checks"][-1]
    assert driver_check["check"] == ASSOCIATED
    assert driver_check["reason"] == ('RBAC: allowed by ClusterRoleBinding "plugin" of ClusterRole "plugin" '
                                      'to ServiceAccount "plugin/drivers"')
    assert driver_check["rule"].startswith("rules[1]: verbs=associated-node:update")


def test_network_attached_claim_needs_arbitrary_node_and_the_fix_says_so():
    data = grid(plugin_scenario())
    # the plugin serves gpu.example.com only: it has no cell for the fabric driver's entries
    claim = next(c for c in data["claims"] if c["claim"] == "default/rack-accelerator")
    assert not [c for c in claim["cells"] if c["writer"].startswith("plugin:")]
    refused = cell(data, "default/rack-accelerator", "kube-scheduler", "devices:fabric.example.com")
    assert not refused["allowed"] and refused["status"] == 422 and refused["failed"] == [ARBITRARY]
    assert refused["message"] == (
        'ResourceClaim.resource.k8s.io "rack-accelerator" is invalid: status.devices: Forbidden: changing '
        'status.devices requires resource="resourceclaims/driver", verb="[arbitrary-node:update]" permission: '
        'resourceclaims.resource.k8s.io "fabric.example.com" is forbidden: User "system:kube-scheduler" cannot '
        'arbitrary-node:update resource "resourceclaims/driver" in API group "resource.k8s.io" in the namespace '
        '"default"')
    assert refused["fix"] == [{"verbs": ["arbitrary-node:update"], "apiGroups": ["resource.k8s.io"],
                               "resources": ["resourceclaims/driver"], "resourceNames": ["fabric.example.com"]}]


def test_bootstrap_roles_let_the_scheduler_and_the_controller_bind_and_no_one_else():
    data = grid(plugin_scenario())
    scheduler = cell(data, "default/local-gpu", "kube-scheduler", "allocate")
    assert scheduler["allowed"]
    assert scheduler["checks"][1]["binding"] == "ClusterRoleBinding system:kube-scheduler (bootstrap)"
    assert cell(data, "default/local-gpu", "resource-claim-controller", "deallocate")["allowed"]
    without = grid(plugin_scenario(), bootstrap=False)
    refused = cell(without, "default/local-gpu", "kube-scheduler", "allocate")
    assert refused["status"] == 403 and refused["failed"] == [FRONT_DOOR]
    assert refused["message"] == (
        'resourceclaims.resource.k8s.io "local-gpu" is forbidden: User "system:kube-scheduler" cannot update '
        'resource "resourceclaims/status" in API group "resource.k8s.io" in the namespace "default"')


def test_with_the_gate_off_in_the_apiserver_only_the_front_door_applies():
    text = EXAMPLE + STATUS_ROLE + PLUGIN
    on = grid(text)
    assert cell(on, "default/local-gpu", "plugin:drivers/gpu-plugin@worker-1", "devices:gpu.example.com")["failed"] == [
        ASSOCIATED, ARBITRARY]
    off = grid(text, apiserver={"DRAResourceClaimGranularStatusAuthorization": False})
    assert off["gates"]["DRAResourceClaimGranularStatusAuthorization"] is False
    allowed = cell(off, "default/local-gpu", "plugin:drivers/gpu-plugin@worker-1", "devices:gpu.example.com")
    assert allowed["allowed"] and [c["check"] for c in allowed["checks"]] == [FRONT_DOOR]


def test_resource_names_star_is_not_a_wildcard():
    data = grid(plugin_scenario(names='"*"'))
    refused = cell(data, "default/local-gpu", "plugin:drivers/gpu-plugin@worker-1", "devices:gpu.example.com")
    assert not refused["allowed"] and refused["failed"] == [ASSOCIATED, ARBITRARY]


def test_a_role_binding_cannot_grant_the_cluster_scoped_binding_check():
    text = EXAMPLE + """
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: binder}
rules:
- apiGroups: [resource.k8s.io]
  resources: [resourceclaims/status, resourceclaims/binding]
  verbs: [update]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: binder, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: binder}
subjects:
- {kind: User, name: my-scheduler}
"""
    me = identity_writer(user="my-scheduler")
    refused = cell(grid(text, identities=(me,)), "default/local-gpu", "identity", "allocate")
    assert refused["failed"] == [BINDING] and refused["status"] == 422
    assert 'cannot update resource "resourceclaims/binding" in API group "resource.k8s.io" at the cluster scope' in (
        refused["message"])
    assert refused["checks"][0]["binding"] == "RoleBinding default/binder"


def test_associated_node_needs_a_token_naming_the_allocated_node():
    text = plugin_scenario()
    without_node = identity_writer(service_account="drivers/plugin")
    on_other_node = identity_writer(service_account="drivers/plugin", node="worker-2")
    on_node = identity_writer(service_account="drivers/plugin", node="worker-1", verb="PATCH")
    for writer, failed in ((without_node, [ARBITRARY]), (on_other_node, [ARBITRARY])):
        refused = cell(grid(text, identities=(writer,)), "default/local-gpu", "identity", "devices:gpu.example.com")
        assert refused["failed"] == failed
    # PATCH needs associated-node:patch, which this role does not grant
    patch = cell(grid(text, identities=(on_node,)), "default/local-gpu", "identity", "devices:gpu.example.com")
    assert patch["failed"] == [ASSOCIATED, ARBITRARY]
    assert 'verb="[associated-node:patch arbitrary-node:patch]"' in patch["message"]
    assert patch["fix"][0]["verbs"] == ["associated-node:patch"]


def test_aggregated_cluster_role_gets_the_rules_of_the_roles_it_selects():
    text = EXAMPLE + PLUGIN.replace("name: plugin}\nsubjects", "name: aggregated}\nsubjects") + """
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: aggregated}
aggregationRule:
  clusterRoleSelectors:
  - matchLabels: {dra.example.com/aggregate-to-plugin: "true"}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: part
  labels: {dra.example.com/aggregate-to-plugin: "true"}
rules:
- apiGroups: [resource.k8s.io]
  resources: [resourceclaims/status, resourceclaims/driver]
  verbs: [update, associated-node:update]
"""
    allowed = cell(grid(text), "default/local-gpu", "plugin:drivers/gpu-plugin@worker-1", "devices:gpu.example.com")
    assert allowed["allowed"] and allowed["checks"][-1]["role"] == "ClusterRole aggregated"


def test_invalid_rbac_objects_are_located_errors():
    text = EXAMPLE + """
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: bad}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: plugin
subjects:
- kind: ServiceAccount
  name: plugin
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: r, namespace: default}
rules:
- apiGroups: [resource.k8s.io]
  resources: [resourceclaims/status]
- nonResourceURLs: [/healthz]
  verbs: [get]
"""
    scenario = read_scenario(text.encode())
    rendered = {(p.kind, p.field): (p.message, p.line) for p in scenario.errors}
    assert rendered[("ClusterRoleBinding", "roleRef.kind")] == (
        'Unsupported value: "Role": supported values: "ClusterRole"', text.splitlines().index("  kind: Role") + 1)
    assert rendered[("ClusterRoleBinding", "subjects[0].namespace")][0] == "Required value"
    assert rendered[("Role", "rules[0].verbs")][0] == "Required value: verbs must contain at least one value"
    assert rendered[("Role", "rules[1].nonResourceURLs")][0] == (
        'Invalid value: ["/healthz"]: namespaced rules cannot apply to non-resource URLs')


def test_no_rbac_objects_and_no_identity_means_no_status_writers():
    scenario, outcome = allocate_text(EXAMPLE.encode())
    assert outcome.status_writers is None


def run_cli(*args, stdin: bytes):
    proc = subprocess.run([sys.executable, "manage.py", "allocate", *args], cwd=ROOT, input=stdin,
                          capture_output=True, timeout=120)
    assert b"Traceback" not in proc.stdout + proc.stderr
    return proc


def test_cli_json_carries_the_what_if_for_a_named_service_account():
    proc = run_cli("-", "-o", "json", "--as-service-account", "drivers/plugin", "--as-node", "worker-1",
                   stdin=plugin_scenario().encode())
    assert proc.returncode == 0
    data = json.loads(proc.stdout)["statusWriters"]
    identity = next(w for w in data["writers"] if w["key"] == "identity")
    assert identity["user"]["extra"] == {"authentication.kubernetes.io/node-name": ["worker-1"]}
    assert cell(data, "default/local-gpu", "identity", "devices:gpu.example.com")["allowed"]


def test_cli_refuses_a_malformed_identity_without_a_traceback():
    proc = run_cli("-", "-o", "json", "--as-service-account", "plugin", stdin=EXAMPLE.encode())
    assert proc.returncode == 2
    assert "expected namespace/name" in json.loads(proc.stdout)["message"]


def test_a_dump_with_many_allocated_claims_shows_the_first_fifty():
    claims = "".join(f"""
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: c{i}, namespace: default}}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {{deviceClassName: gpu.example.com}}
status:
  allocation:
    devices:
      results:
      - {{request: gpu, driver: gpu.example.com, pool: worker-1, device: gpu-{i}}}
""" for i in range(60))
    data = grid(EXAMPLE + claims, identities=(identity_writer(user="alice"),))
    assert len(data["claims"]) == 50 and data["omittedClaims"] == 10


def test_gallery_example_real_driver_rbac_needs_arbitrary_node_for_the_fabric_gpu():
    text = (ROOT / "allocator" / "examples" / "example-driver-rbac.yaml").read_text()
    plugin = "plugin:dra-example-driver/dra-example-driver-kubeletplugin@worker-1"
    data = grid(text)
    assert cell(data, "default/local-gpu", plugin, "devices:gpu.example.com")["allowed"]
    refused = cell(data, "default/fabric-gpu", plugin, "devices:gpu.example.com")
    assert refused["status"] == 422 and refused["failed"] == [ARBITRARY]
    patch = identity_writer(service_account="dra-example-driver/dra-example-driver-service-account",
                            node="worker-1", verb="PATCH")
    assert cell(grid(text, identities=(patch,)), "default/local-gpu", "identity", "devices:gpu.example.com")[
        "failed"] == [FRONT_DOOR]
    # the gallery's "try": grant arbitrary-node:update too
    fixed = grid(text.replace('verbs: ["associated-node:update", "associated-node:patch"]',
                              'verbs: ["associated-node:update", "associated-node:patch", "arbitrary-node:update"]'))
    for node in ("worker-1", "worker-2"):
        assert cell(fixed, "default/fabric-gpu", plugin.replace("worker-1", node), "devices:gpu.example.com")["allowed"]


def test_readable_report_lists_each_writer_and_the_refusal_message():
    from allocator.engine.report import human_report

    text = (ROOT / "allocator" / "examples" / "example-driver-rbac.yaml").read_text()
    _, outcome = allocate_text(text.encode(), node_name="worker-1")
    report = human_report(outcome)
    assert "  default/fabric-gpu (not pinned to one node):" in report
    assert "    dra-example-driver-kubeletplugin on worker-1, devices:gpu.example.com: allowed" in report
    assert ('    dra-example-driver-kubeletplugin on worker-1, devices:gpu.example.com: refused (422, arbitrary node): '
            'ResourceClaim.resource.k8s.io "fabric-gpu" is invalid') in report
