"""Answers the engine gives and every surface shows alike: the kubelet's refusal of skipped node
operations, the node asked for that the scenario does not name, and the nodes it does name."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from allocator import gallery
from allocator.engine.gates import ComponentGates, FeatureGates
from allocator.engine.report import human_report, to_json
from allocator.engine.run import allocate_text

ROOT = Path(__file__).resolve().parents[2]
OPTIONAL_OPS = gallery.get("optional-node-operations")
KUBELET_OFF = {"apiserver": {"DRAOptionalNodeOperations": True}, "scheduler": {"DRAOptionalNodeOperations": True},
               "kubelet": {"DRAOptionalNodeOperations": False}}
REFUSAL = "DRAOptionalNodeOperations feature gate is disabled on kubelet"


def api(client, scenario: str, node: str = "", gates=None) -> dict:
    body = json.dumps({"scenario": scenario, "node": node, "gates": gates or {}})
    return json.loads(client.post("/api/v1/allocate", body, content_type="application/json").content)


def page(client, scenario: str, node: str = "", gates=None) -> str:
    data = {"scenario": scenario, "node": node, "gates-submitted": "1"}
    for component, values in (gates or {}).items():
        for gate, value in values.items():
            if value:
                data[f"gate-{component}-{gate}"] = "on"
    for component in ("apiserver", "scheduler", "kubelet"):
        for gate in ("DRAPartitionableDevices", "DRADeviceTaints", "DRAPrioritizedList", "DRAConsumableCapacity"):
            data.setdefault(f"gate-{component}-{gate}", "on")
    return client.post("/", data, HTTP_HX_REQUEST="true").content.decode()


def engine(scenario: str, node: str | None = None, gates=None):
    """The engine's outcome as the CLI renders it, with per-component gates."""
    parts = [FeatureGates(tuple(sorted((gates or {}).get(c, {}).items()))) for c in ("apiserver", "scheduler", "kubelet")]
    return allocate_text(scenario, node_name=node, gates=ComponentGates(*parts))[1]


def cli(*args) -> tuple[int, str]:
    proc = subprocess.run([sys.executable, "manage.py", "allocate", *args], cwd=ROOT, capture_output=True, timeout=120)
    return proc.returncode, proc.stdout.decode()


@pytest.mark.django_db
def test_the_kubelet_refusal_is_said_by_the_api_the_page_and_the_cli_report(client):
    data = api(client, OPTIONAL_OPS.scenario, "worker-1", KUBELET_OFF)
    assert data["outcome"] == "allocated"
    (op,) = data["explanation"]["nodeOperations"]
    assert op["kubeletRefusal"] == REFUSAL
    (warning,) = [w for w in data["warnings"] if w.get("code") == "kubelet-refuses"]
    assert warning["message"].endswith(REFUSAL) and warning["name"] == "default/remote-accel"

    body = page(client, OPTIONAL_OPS.scenario, "worker-1", KUBELET_OFF)
    assert f"the kubelet refuses to prepare this claim: {REFUSAL}" in body
    assert warning["message"] in body

    # The CLI's flags set one value for every component, so its report is driven with the same gates.
    outcome = engine(OPTIONAL_OPS.scenario, "worker-1", KUBELET_OFF)
    assert f"Warning: ResourceClaim default/remote-accel: {warning['message']}" in human_report(outcome)
    assert json.loads(to_json(outcome, with_explanation=True))["warnings"] == data["warnings"]


@pytest.mark.django_db
def test_with_the_kubelet_gate_on_no_surface_speaks_of_a_refusal(client):
    data = api(client, OPTIONAL_OPS.scenario, "worker-1", OPTIONAL_OPS.component_gates())
    assert "kubeletRefusal" not in data["explanation"]["nodeOperations"][0]
    assert not any(w.get("code") == "kubelet-refuses" for w in data["warnings"])
    assert "the kubelet refuses" not in page(client, OPTIONAL_OPS.scenario, "worker-1", OPTIONAL_OPS.component_gates())


def mixed_pool(count: int) -> str:
    """The optional-node-operations example with its pool in two slices: accel-0 skips every kubelet
    call, plain-0 (in a slice without skipNodeOperations) skips none; the claim asks for `count`."""
    text = OPTIONAL_OPS.scenario.replace("    resourceSliceCount: 1\n", "    resourceSliceCount: 2\n")
    text = text.replace("  - name: accel-0\n  - name: accel-1\n", "  - name: accel-0\n")
    plain = text.split("---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\n")[1].split("---\n")[0]
    plain = (plain.replace("name: rack-a-fabric\n", "name: rack-a-fabric-plain\n")
             .replace('  skipNodeOperations: ["*"]\n', "").replace("- name: accel-0", "- name: plain-0"))
    text += "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\n" + plain
    return text.replace("        deviceClassName: fabric.example.com\n",
                        f"        deviceClassName: fabric.example.com\n        count: {count}\n")


def test_a_call_one_device_of_the_driver_still_needs_is_no_reason_for_the_kubelet_to_refuse():
    # The kubelet needs its gate only for a call every device of the claim's driver skips; with
    # plain-0 beside accel-0 both calls run, so it prepares the claim (the page used to say it refused).
    both = engine(mixed_pool(2), "worker-1", KUBELET_OFF)
    assert both.outcome == "allocated", both.message
    (op,) = both.explanation.node_operations
    assert op.skips and all(call.runs for call in op.calls) and op.kubelet_refusal is None
    assert not any(w.code == "kubelet-refuses" for w in both.warnings)

    one = engine(mixed_pool(1), "worker-1", KUBELET_OFF)
    (op,) = one.explanation.node_operations
    assert op.kubelet_refusal == REFUSAL


@pytest.mark.django_db
def test_the_unknown_node_is_said_by_the_api_and_the_cli_and_dropped_by_the_page(client):
    example = gallery.get("simple-gpu")
    data = api(client, example.scenario, "ghost")
    (warning,) = [w for w in data["warnings"] if w.get("code") == "unknown-node"]
    assert warning["message"].startswith("node ghost is not in the scenario (the nodes it names are worker-1)")

    # The page never uses a node the scenario does not name: it runs on any node and says so.
    body = page(client, example.scenario, "ghost")
    assert "Node ghost is not in the scenario any more; ran on any node." in body
    assert "Allocated on node worker-1" in body
    assert '<option value="" selected>' in body and 'value="ghost"' not in body
    assert warning["message"] not in body

    code, out = cli(str(ROOT / "allocator" / "examples" / "simple-gpu.yaml"), "--node", "ghost", "-o", "json")
    assert json.loads(out)["warnings"] == data["warnings"]
    code, out = cli(str(ROOT / "allocator" / "examples" / "simple-gpu.yaml"), "--node", "ghost")
    assert f"Warning: {warning['message']}" in out


@pytest.mark.django_db
def test_the_nodes_offered_on_the_page_are_the_engines_candidate_nodes(client):
    example = gallery.get("pods")
    outcome = engine(example.scenario)
    assert outcome.candidate_nodes == ["cp-1", "gpu-node-1", "gpu-node-2"]
    body = page(client, example.scenario)
    for name in outcome.candidate_nodes:
        assert f'<option value="{name}"' in body
    # The CLI and the API try the same nodes, in the same order, when no node is given.
    code, out = cli(str(ROOT / "allocator" / "examples" / "simple-gpu.yaml"), "-o", "json")
    assert [v["node"] for v in json.loads(out)["nodes"]] == engine(gallery.get("simple-gpu").scenario).candidate_nodes
    # And both name the nodes the page offers, in its order.
    code, out = cli(str(ROOT / "allocator" / "examples" / "pods.yaml"), "-o", "json")
    assert json.loads(out)["candidateNodes"] == api(client, example.scenario)["candidateNodes"] == outcome.candidate_nodes


def _page_identity_cells(body: str, label: str) -> list[list[str]]:
    """Per claim table, the what-if identity's cells as the page's panel shows them."""
    import html
    import re

    rows = re.findall(r'<tr><th scope="row">' + re.escape(label) + r"</th>(.*?)</tr>", body, re.S)
    return [[html.unescape(s) for s in re.findall(r"<summary>([^<]*)</summary>", row)] for row in rows]


def _api_identity_cells(data: dict) -> list[list[str]]:
    return [[("allowed" if c["allowed"] else f"refused ({c['status']}, {', '.join(c['failed'])})")
             for c in claim["cells"] if c["writer"] == "identity"] for claim in data["statusWriters"]["claims"]]


@pytest.mark.django_db
@pytest.mark.parametrize("what_if, form", [
    ({"user": "system:kube-scheduler"}, {"as_user": "system:kube-scheduler"}),
    ({"serviceAccount": "kube-system/nosy", "node": "worker-1", "verb": "PATCH"},
     {"as_service_account": "kube-system/nosy", "as_node": "worker-1", "as_verb": "PATCH"}),
    ({"user": "system:kube-scheduler", "bootstrapRbac": False},
     {"as_user": "system:kube-scheduler", "no_bootstrap_rbac": "1"}),
])
def test_the_api_takes_the_pages_what_if_identity_and_answers_the_same(client, what_if, form):
    example = gallery.get("granular-status-authorization")
    body = json.dumps({"scenario": example.scenario, "node": example.node or "", "whatIf": what_if})
    data = json.loads(client.post("/api/v1/allocate", body, content_type="application/json").content)
    (identity,) = [w for w in data["statusWriters"]["writers"] if w["key"] == "identity"]
    answers = _api_identity_cells(data)
    assert answers and all(answers)
    page = client.post("/status-writers", {"scenario": example.scenario, "node": example.node or "", **form})
    assert _page_identity_cells(page.content.decode(), identity["label"]) == answers
    # The same identity as query parameters, for a YAML body.
    query = {"user": "asUser", "serviceAccount": "asServiceAccount", "node": "asNode", "verb": "asVerb"}
    params = "&".join(f"{query[k]}={v}" for k, v in what_if.items() if k in query)
    params += "&noBootstrapRbac=1" if what_if.get("bootstrapRbac") is False else ""
    yaml_answer = client.post(f"/api/v1/allocate?{params}", example.scenario, content_type="application/yaml")
    assert _api_identity_cells(json.loads(yaml_answer.content)) == answers


def test_the_bootstrap_roles_decide_the_schedulers_writes():
    """The what-if cases above differ: with the bootstrap roles the scheduler may allocate, without
    them it may not (so the comparison between the surfaces is not of two empty answers)."""
    from allocator.run_settings import RunSettings, WhatIf, run_in_process

    example = gallery.get("granular-status-authorization")
    answers = []
    for bootstrap in (True, False):
        run = RunSettings(example.scenario, node=example.node or "", what_if=WhatIf(user="system:kube-scheduler",
                                                                                   bootstrap=bootstrap))
        grid = run_in_process(run)[1].status_writers
        answers.append([c["allowed"] for claim in grid["claims"] for c in claim["cells"] if c["writer"] == "identity"])
    assert any(answers[0]) and not any(answers[1])


@pytest.mark.django_db
def test_a_bad_what_if_is_a_400_naming_the_field(client):
    body = json.dumps({"scenario": "a: 1", "whatIf": {"serviceAccount": "nosy", "verb": "PUT"}})
    response = client.post("/api/v1/allocate", body, content_type="application/json")
    assert response.status_code == 400
    assert json.loads(response.content)["message"] == "whatIf: service account 'nosy': expected namespace/name"
