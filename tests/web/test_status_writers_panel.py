"""The status-writers panel and its what-if form, before it is wired into the page."""
import pytest
from django.test import RequestFactory

from allocator import panel_status_writers
from allocator.run_settings import RunSettings, run_in_process
from allocator.views_status_writers import status_writers
from tests.engine.test_statusauth import EXAMPLE, plugin_scenario

pytestmark = pytest.mark.django_db


def view_for(text: str, identity=None, gates=None):
    settings = RunSettings(scenario=text, gates=gates or {})
    scenario, outcome = run_in_process(settings)
    return panel_status_writers.build(outcome, scenario, settings, identity)


def test_grid_has_every_writer_and_write_with_the_plugin_allowed_on_its_node():
    view = view_for(plugin_scenario())
    local = next(c for c in view.claims if c.claim == "default/local-gpu")
    assert local.pinned_node == "worker-1"
    assert local.writes == ["set allocation", "add to reservedFor", "gpu.example.com status.devices", "deallocate"]
    rows = {r.writer: r.cells for r in local.rows}
    assert set(rows) == {"kube-scheduler", "resource-claim controller", "gpu-plugin on worker-1"}
    plugin = rows["gpu-plugin on worker-1"]
    assert plugin[0] is None and plugin[2].allowed
    assert plugin[2].reasons[-1].startswith('associated node: RBAC: allowed by ClusterRoleBinding "plugin"')
    scheduler_devices = rows["kube-scheduler"][2]
    assert not scheduler_devices.allowed and scheduler_devices.status == 422
    assert "arbitrary-node:update" in scheduler_devices.fix


def test_the_what_if_identity_gets_its_own_row_and_a_bad_one_an_error():
    named = panel_status_writers.Identity(service_account="drivers/plugin", node="worker-2", verb="PATCH")
    view = view_for(plugin_scenario(), named)
    local = next(c for c in view.claims if c.claim == "default/local-gpu")
    row = next(r for r in local.rows if r.writer.startswith("service account drivers/plugin on worker-2"))
    assert not row.cells[2].allowed and row.cells[2].failed == "arbitrary node"
    bad = view_for(EXAMPLE, panel_status_writers.Identity(service_account="plugin"))
    assert "expected namespace/name" in bad.error


def test_with_the_gate_off_the_panel_says_only_the_front_door_applies():
    view = view_for(EXAMPLE, gates={"apiserver": {"DRAResourceClaimGranularStatusAuthorization": False}})
    assert not view.granular
    scheduler = next(r for r in view.claims[0].rows if r.writer == "kube-scheduler")
    assert all(c.allowed for c in scheduler.cells)


def test_the_what_if_form_answers_the_panel_alone():
    request = RequestFactory().post("/status-writers", {
        "scenario": plugin_scenario(), "as_service_account": "drivers/plugin",
        "as_node": "worker-1", "as_verb": "PUT"})
    response = status_writers(request)
    body = response.content.decode()
    assert response.status_code == 200
    assert body.startswith('<div class="panel" id="panel-status-writers">')
    assert "service account drivers/plugin on worker-1 (PUT)" in body
    assert "refused (422, arbitrary node)" in body, body[:3000]


def test_the_api_carries_the_same_status_writers_as_the_cli(client):
    response = client.post("/api/v1/allocate", data=plugin_scenario(), content_type="application/yaml")
    assert response.status_code == 200
    data = response.json()["statusWriters"]
    local = next(c for c in data["claims"] if c["claim"] == "default/local-gpu")
    cell = next(c for c in local["cells"] if c["writer"] == "plugin:drivers/gpu-plugin@worker-1")
    assert cell["allowed"] and cell["checks"][-1]["check"] == "associated node"


def test_the_what_if_form_sent_as_json_like_the_page_and_a_bad_body_is_a_400():
    import json

    body = {"scenario": [plugin_scenario()], "as_user": ["alice"], "as_verb": ["PATCH"]}
    response = status_writers(RequestFactory().post("/status-writers", json.dumps(body),
                                                    content_type="application/json"))
    assert response.status_code == 200 and "user alice (PATCH)" in response.content.decode()
    bad = status_writers(RequestFactory().post("/status-writers", "[1]", content_type="application/json"))
    assert bad.status_code == 400 and "not a JSON object" in bad.content.decode()


def test_without_the_bootstrap_roles_the_scheduler_is_refused_at_the_front_door():
    view = view_for(plugin_scenario(), panel_status_writers.Identity(bootstrap=False))
    assert not view.bootstrap
    scheduler = next(r for r in view.claims[0].rows if r.writer == "kube-scheduler")
    assert scheduler.cells[0].status == 403 and scheduler.cells[0].failed == "front door"
