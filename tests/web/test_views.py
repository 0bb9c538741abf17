"""The page, its htmx partial, the gallery and the JSON API, with real scenarios."""
import json
import re

import pytest

from allocator import gallery


def outcome_heading(body: str) -> str:
    match = re.search(r'<div class="outcome[^>]*>\s*<h2>\s*(.*?)\s*</h2>', body, re.S)
    return " ".join(match.group(1).split()) if match else ""


def test_the_page_opens_with_an_example_that_allocates_and_says_what_the_tool_does(client):
    response = client.get("/")
    body = response.content.decode()
    assert response.status_code == 200
    assert 'name="scenario"' in body and "gpu-0" in body
    assert "Allocated on node worker-1" in outcome_heading(body)
    assert '<p class="tagline">See what the Kubernetes scheduler’s DRA allocator would pick' in body


@pytest.mark.parametrize("example", [e.slug for e in gallery.all_examples()])
def test_every_gallery_example_opens_and_gets_an_answer(client, example):
    response = client.get(f"/?example={example}")
    assert response.status_code == 200
    heading = outcome_heading(response.content.decode())
    assert heading.startswith(("✔", "✘")), heading


def test_gallery_page_links_every_example(client):
    body = client.get("/examples/").content.decode()
    for example in gallery.all_examples():
        assert f"?example={example.slug}" in body


def test_unknown_example_is_a_404(client):
    assert client.get("/?example=nope").status_code == 404


def test_htmx_post_returns_only_the_results_partial(client):
    scenario = gallery.get("simple-gpu").scenario
    response = client.post("/", {"scenario": scenario, "gates-submitted": "1"}, HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert response.status_code == 200
    assert body.lstrip().startswith('<section id="results"')
    assert "Allocated on node worker-1" in body
    assert "<textarea" not in body


def test_the_form_sent_as_json_answers_as_the_url_encoded_form_does(client):
    data = {"scenario": gallery.get("simple-gpu").scenario, "node": "worker-1", "gates-submitted": "1",
            "gate-scheduler-DRAPrioritizedList": "on"}
    plain = client.post("/", data, HTTP_HX_REQUEST="true")
    as_json = client.post("/", json.dumps({name: [value] for name, value in data.items()}),
                          content_type="application/json", HTTP_HX_REQUEST="true")
    assert as_json.status_code == 200
    assert "Allocated on node worker-1" in outcome_heading(as_json.content.decode())
    assert as_json.content == plain.content


@pytest.mark.parametrize("body, says", [
    ("{not json", "it is not JSON"),
    ('["scenario"]', "not a JSON object of fields"),
    ('{"scenario": [1]}', "field “scenario” is not text"),
    ("[" * 100_000, "nested too deeply"),
    ('{"gate-x": [' + ",".join(['"on"'] * 5000) + "]}", "more than 1000 values"),
])
def test_a_form_that_is_not_readable_json_is_refused_in_the_results(client, body, says):
    response = client.post("/", body, content_type="application/json", HTTP_HX_REQUEST="true")
    assert response.status_code == 200, "htmx only swaps 2xx answers into the page"
    assert "Refused" in response.content.decode() and says in response.content.decode()
    assert client.post("/", body, content_type="application/json").status_code == 400


def test_the_form_sent_as_json_needs_the_csrf_token_in_its_header():
    from django.test import Client

    checked = Client(enforce_csrf_checks=True)
    page = checked.get("/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.content.decode()).group(1)
    body = json.dumps({"scenario": [gallery.get("simple-gpu").scenario], "gates-submitted": ["1"]})
    assert checked.post("/", body, content_type="application/json").status_code == 403
    answered = checked.post("/", body, content_type="application/json", HTTP_X_CSRFTOKEN=token)
    assert answered.status_code == 200 and "Allocated on node worker-1" in answered.content.decode()


def test_plain_form_post_without_javascript_renders_the_whole_page(client):
    scenario = gallery.get("simple-gpu").scenario
    response = client.post("/", {"scenario": scenario, "node": "worker-1", "gates-submitted": "1"})
    body = response.content.decode()
    assert "<textarea" in body and "Allocated on node worker-1" in body


def test_errors_carry_their_line_for_the_editor(client):
    scenario = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: Bad_Name\nspec: {}\n"
    response = client.post("/", {"scenario": scenario, "gates-submitted": "1"}, HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert response.status_code == 200
    assert "Invalid input" in body
    lines = json.loads(re.search(r'data-error-lines="([^"]*)"', body).group(1).replace("&quot;", '"'))
    assert lines and lines[0]["line"] == 4


def test_yaml_syntax_error_is_shown_not_a_500(client):
    response = client.post("/", {"scenario": "kind: [\n", "gates-submitted": "1"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert "Invalid input" in response.content.decode()


def test_scenario_strings_are_escaped(client):
    scenario = gallery.get("simple-gpu").scenario.replace("LATEST-GPU-MODEL", "<script>alert(1)</script>")
    body = client.post("/", {"scenario": scenario, "gates-submitted": "1"}).content.decode()
    assert "<script>alert(1)</script>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body


def test_oversize_paste_is_refused_with_its_size(client, monkeypatch):
    monkeypatch.setattr("allocator.pages.MAX_SCENARIO_BYTES", 2 * 1024 * 1024)  # the real limit is 32 MiB
    data = {"scenario": "#" * (2 * 1024 * 1024 + 10), "gates-submitted": "1"}
    plain = client.post("/", data)
    assert plain.status_code == 413
    assert "the limit is 2,097,152 bytes" in plain.content.decode()
    swapped = client.post("/", data, HTTP_HX_REQUEST="true")
    assert swapped.status_code == 200, "htmx only swaps 2xx answers into the page"
    assert "the limit is 2,097,152 bytes" in swapped.content.decode()


def test_unchecking_a_gate_for_the_scheduler_only_shows_version_skew(client):
    example = gallery.get("compatibility-groups")
    data = {"scenario": example.scenario, "node": "worker-1", "gates-submitted": "1"}
    for component in ("apiserver", "scheduler", "kubelet"):
        for name in ("DRAPrioritizedList", "DRAAdminAccess", "DRAResourceClaimDeviceStatus", "DRADeviceTaints",
                     "DRAPartitionableDevices", "DRAConsumableCapacity", "DRAFractionalCapacityRange",
                     "DRADeviceBindingConditions", "DynamicResourceAllocation", "DRADeviceTaintRules",
                     "DRASchedulerFilterTimeout", "DRAResourceClaimGranularStatusAuthorization"):
            data[f"gate-{component}-{name}"] = "on"
    data["gate-apiserver-DRADeviceCompatibilityGroups"] = "on"
    body = client.post("/", data).content.decode()
    assert "Cannot allocate" in outcome_heading(body)
    assert "version skew" in body
    assert "incomplete" in body
    data["gate-scheduler-DRADeviceCompatibilityGroups"] = "on"
    data["gate-kubelet-DRADeviceCompatibilityGroups"] = "on"
    body = client.post("/", data).content.decode()
    assert "Allocated on node worker-1" in body


def test_api_allocate_returns_the_cli_json_plus_explanation(client):
    scenario = gallery.get("simple-gpu").scenario
    response = client.post("/api/v1/allocate?node=worker-1", scenario, content_type="application/yaml")
    data = response.json()
    assert response.status_code == 200
    assert data["outcome"] == "allocated"
    assert data["claims"][0]["status"]["allocation"]["devices"]["results"][0]["device"] == "gpu-1"
    assert data["explanation"]["claims"][0]["requests"][0]["candidates"][0]["verdict"] == "rejected"


@pytest.mark.parametrize("slug", ["prioritized-list", "partitionable-devices", "mig-8-gpu"])
def test_the_replay_on_the_page_holds_every_step_the_api_reports(client, slug):
    example = gallery.get(slug)
    api = client.post(f"/api/v1/allocate?node={example.node or ''}", example.scenario,
                      content_type="application/yaml").json()
    page = client.get(f"/?example={slug}").content.decode()
    data = json.loads(re.search(r'<script id="replay-data" type="application/json">(.*?)</script>', page, re.S).group(1))
    strings = data["strings"]

    def text(i):
        return None if i is None else strings[i]

    def expand(s):  # as replay.js reads a step
        step = {"kind": text(s[0]), "claim": text(s[1]), "request": text(s[2]), "pool": text(s[3]), "device": text(s[4])}
        if step["kind"] == "reject":
            step["reason"] = text(s[5])
        elif step["kind"] == "done":
            step["outcome"] = text(s[5])
        if s[6]:
            step["counters"] = [{"counterSet": text(c[0]), "counter": text(c[1]), "amount": c[2]} for c in s[6]]
        return step

    expected = [{"claim": None, "request": None, "pool": None, "device": None, **step}
                for step in api["explanation"]["trace"]["steps"]]
    for step in expected:
        step.pop("code", None)  # the replay does not show it
    assert [expand(s) for s in data["steps"]] == expected
    assert data["total"] == api["explanation"]["trace"]["total"]


def test_the_replay_names_each_pool_once_with_a_tile_per_device_and_a_bar_per_counter(client):
    """The replay's starting state is compact: each pool and counter set named once, then its devices
    (with their state before the run, if in use or shared) or its counters (total, taken before)."""
    example = gallery.get("mig-8-gpu")
    api = client.post(f"/api/v1/allocate?node={example.node or ''}", example.scenario,
                      content_type="application/yaml").json()["explanation"]
    page = client.get("/?example=mig-8-gpu").content.decode()
    raw = re.search(r'<script id="replay-data" type="application/json">(.*?)</script>', page, re.S).group(1)
    data = json.loads(raw)
    assert data["tiles"] == [
        [pool["pool"], [[d["device"], d["state"] if d["state"] in ("in-use", "shared") else None]
                        for d in pool["devices"]]] for pool in api["deviceMap"]]
    assert data["bars"] == [
        [cs["pool"], cs["counterSet"], [[c["counter"], float(c["total"]), float(c["allocatedBefore"]), c["total"]]
                                        for c in cs["counters"]]] for cs in api["counterSets"]]
    assert '"key"' not in raw and '"device"' not in raw  # no object per tile naming its pool again


def test_a_fold_of_devices_with_one_reason_lists_their_names_and_says_the_reason_once(client):
    page = client.get("/?example=mig-8-gpu").content.decode()
    why = page[page.index('id="panel-why"'):page.index('id="panel-replay"')]
    folds = re.findall(r'<tr class="verdict-\w+ folded"[^>]*><td colspan="3"><details><summary>(\d+) devices: '
                       r'[^<]*? — (.*?)</summary>(.*?)</details>', why, re.S)
    assert folds
    selector = [f for f in folds if "selector #0 is false" in f[1]]
    assert selector, folds
    count, reason, members = selector[0]
    assert members.startswith('<p class="folded-devices">gpu-0-mig-2g10gb-3, ')
    assert len(re.sub("<[^>]+>", "", members).split(", ")) == int(count)
    assert reason not in members  # said in its summary, not after each device
    assert "<li><strong>gpu-0-mig-2g10gb-3</strong>" not in why


def test_api_status_codes_for_invalid_and_unsatisfiable(client):
    bad = client.post("/api/v1/allocate", "kind: [", content_type="application/yaml")
    assert bad.status_code == 400 and bad.json()["outcome"] == "invalid"
    scenario = gallery.get("partitionable-devices").scenario
    unsat = client.post("/api/v1/allocate", scenario, content_type="application/yaml")
    assert unsat.status_code == 200 and unsat.json()["outcome"] == "unsatisfiable"
    gates = client.post("/api/v1/allocate?featureGates=Nope=true", scenario, content_type="application/yaml")
    assert gates.status_code == 400


def test_api_refuses_oversize_bodies(client, monkeypatch):
    monkeypatch.setattr("allocator.views.MAX_SCENARIO_BYTES", 2 * 1024 * 1024)  # the real limit is 32 MiB
    response = client.post("/api/v1/allocate", "#" * (2 * 1024 * 1024 + 1), content_type="application/yaml")
    assert response.status_code == 413


def test_claim_status_lists_already_allocated_claims_too(client):
    body = client.get("/?example=prioritized-list").content.decode()
    assert "already allocated" in body and "default/already-running" in body


def test_locked_gates_cannot_be_switched_on_the_page(client):
    scenario = gallery.get("simple-gpu").scenario
    # The page sends no box for a locked gate (it is disabled): it keeps its locked value.
    response = client.post("/", {"scenario": scenario, "gates-submitted": "1"})
    body = response.content.decode()
    assert "Allocated on node worker-1" in outcome_heading(body)
    assert 'name="gate-scheduler-DRAAdminAccess" aria-label="DRAAdminAccess on kube-scheduler" checked disabled' in body
    assert "locked to" not in body  # no warning: nothing was switched


def test_a_gate_set_the_scheduler_refuses_marks_the_box(client):
    scenario = gallery.get("simple-gpu").scenario
    data = {"scenario": scenario, "gates-submitted": "1", "gate-scheduler-DRADeviceTaintRules": "on",
            "gate-apiserver-DRADeviceTaintRules": "on", "gate-kubelet-DRADeviceTaintRules": "on"}
    body = client.post("/", data).content.decode()
    assert "Invalid input" in outcome_heading(body)
    assert ("kube-scheduler would not start: DRADeviceTaintRules is enabled, but depends on features that are "
            "disabled: [DRADeviceTaints]") in body
    assert 'class="refused" title="kube-scheduler would not start with this value"><input type="checkbox" ' \
           'name="gate-scheduler-DRADeviceTaintRules"' in body


def test_an_emulated_version_on_the_page_unlocks_an_older_gate(client):
    example = gallery.get("simple-gpu")
    data = {"scenario": example.scenario, "gates-submitted": "1"}
    for component in ("apiserver", "scheduler", "kubelet"):
        data[f"emulated-{component}"] = "1.35"
    body = client.post("/", data).content.decode()
    # At 1.35 DRAAdminAccess is beta and not locked: its box is live, and unchecked means off.
    assert 'name="gate-scheduler-DRAAdminAccess" aria-label="DRAAdminAccess on kube-scheduler" >' in body
    assert '<option value="1.35" selected>1.35</option>' in body
    assert "Allocated on node worker-1" in outcome_heading(body)


def test_counter_set_that_blocks_a_device_is_marked_and_the_tile_shows_blocked(client):
    body = client.get("/?example=partitionable-devices").content.decode()
    assert "blocks gpu-0-part-b" in body
    assert "tile-blocked" in body


def test_compatibility_groups_panel_shows_the_empty_intersection(client):
    body = client.get("/?example=compatibility-groups").content.decode()
    assert 'id="panel-groups"' in body
    assert "{mig} ∩ {vgpu} = ∅" in body


def test_version_skew_example_names_the_ignored_slice(client):
    body = client.get("/?example=version-skew").content.decode()
    assert "The kube-scheduler ignores these slices" in body
    assert "1 of 2 slices (resourceSliceCount) of generation 1 are visible" in body


def test_search_limit_returns_quickly_with_its_message(client):
    devices = "".join(f"  - name: d{i}\n    attributes: {{small: {{bool: true}}}}\n" for i in range(30))
    scenario = (
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\nspec: {}\n---\n"
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n  driver: d.io\n"
        "  nodeName: n\n  pool: {name: p, resourceSliceCount: 1}\n  devices:\n" + devices +
        "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: x}\nspec:\n  devices:\n"
        "    requests:\n    - {name: many, exactly: {deviceClassName: c, count: 10}}\n"
        "    - name: big\n      exactly:\n        deviceClassName: c\n"
        "        selectors: [{cel: {expression: 'device.attributes[\"d.io\"].?big.orValue(false)'}}]\n"
    )
    import time
    started = time.monotonic()
    body = client.post("/", {"scenario": scenario, "gates-submitted": "1"}, HTTP_HX_REQUEST="true").content.decode()
    assert time.monotonic() - started < 10
    assert "search gave up" in body


def test_pods_panel_shows_each_pods_node_and_the_schedulers_line(client):
    body = client.get("/?example=pods").content.decode()
    assert 'id="panel-pods"' in body
    assert "ml/trainer-0" in body and "gpu-node-2" in body
    assert "0/3 nodes are available: 1 node(s) had untolerated taint" in body


def test_status_writers_panel_judges_each_writer_by_rbac(client):
    body = client.get("/?example=granular-status-authorization").content.decode()
    assert 'id="panel-status-writers"' in body and 'id="panel-authz"' not in body
    assert "pinned to node worker-1" in body
    # the scheduler's bootstrap ClusterRole grants resourceclaims/binding, so it may set the allocation ...
    assert 'RBAC: allowed by ClusterRoleBinding &quot;system:kube-scheduler&quot;' in body
    assert "resources=resourceclaims/binding" in body
    # ... but no bootstrap role grants resourceclaims/driver: writing a driver's device entries is refused
    assert "changing status.devices requires resource=&quot;resourceclaims/driver&quot;" in body


def test_capacity_panel_states_the_request_policy(client):
    body = client.get("/?example=consumable-capacity").content.decode()
    assert "request policy: default 1G; from 1G in steps of 1G" in body


@pytest.mark.parametrize("name", ["malformed yaml", "scalar for object", "cel forever", "catastrophic regex",
                                  "alias bomb", "deep block nesting", "deep flow nesting", "invalid utf-8",
                                  "binary garbage", "exploding search"])
def test_hostile_input_never_gives_a_500_on_the_page_or_the_api(client, name):
    from tests.test_cli import HOSTILE

    text, code, _ = HOSTILE[name]
    scenario = text.decode("utf-8", "replace")
    page = client.post("/", {"scenario": scenario, "node": "n1", "gates-submitted": "1"}, HTTP_HX_REQUEST="true")
    assert page.status_code == 200
    assert "outcome-" in page.content.decode()
    api = client.post("/api/v1/allocate?node=n1", text, content_type="application/yaml")
    assert api.status_code in (200, 400)
    assert api.json()["outcome"] in ("allocated", "unsatisfiable", "invalid")


@pytest.mark.parametrize("path", ["/?example=simple-gpu", "/examples/", "/workshops/", "/workshops/dra-in-90-minutes/"])
def test_presenter_mode_follows_every_link_of_the_navigation(client, path):
    presenting = client.get(f"{path}{'&' if '?' in path else '?'}present=1").content.decode()
    nav = re.search(r"<nav>(.*?)</nav>", presenting, re.S).group(1)
    assert re.findall(r'href="([^"]+)"', nav) == ["/?present=1", "/examples/?present=1", "/workshops/?present=1"]
    toggle = re.search(r'<a class="present-toggle" href="([^"]+)"', presenting).group(1)
    assert "present=1" not in toggle, "the toggle leaves presenter mode"
    links = re.findall(r'<a (?!class="present-toggle")[^>]*href="(/(?:\?example=|workshops/|examples/)[^"]*)"',
                       presenting)
    assert links and all("present=1" in link for link in links), links
    plain = client.get(path).content.decode()
    assert "present=1" not in re.search(r"<nav>(.*?)</nav>", plain, re.S).group(1)


OVERDRAWN = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]
---
apiVersion: v1
kind: Node
metadata: {name: worker-1}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: counters}
spec:
  driver: gpu.example.com
  nodeName: worker-1
  pool: {name: pool, generation: 1, resourceSliceCount: 2}
  sharedCounters:
  - name: gpu-0
    counters: {memory: {value: 8Gi}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.example.com
  nodeName: worker-1
  pool: {name: pool, generation: 1, resourceSliceCount: 2}
  devices:
  - name: part-a
    consumesCounters: [{counterSet: gpu-0, counters: {memory: {value: 6Gi}}}]
  - name: part-b
    consumesCounters: [{counterSet: gpu-0, counters: {memory: {value: 6Gi}}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: both, namespace: default}
spec:
  devices:
    requests:
    - {name: a, exactly: {deviceClassName: gpu}}
    - {name: b, exactly: {deviceClassName: gpu}}
status:
  allocation:
    devices:
      results:
      - {request: a, driver: gpu.example.com, pool: pool, device: part-a}
      - {request: b, driver: gpu.example.com, pool: pool, device: part-b}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: next, namespace: default}
spec:
  devices:
    requests:
    - {name: gpu, exactly: {deviceClassName: gpu}}
"""


def test_a_counter_bar_says_what_is_free_and_when_claims_allocated_before_overdrew_it(client):
    body = client.post("/", {"scenario": OVERDRAWN}, HTTP_HX_REQUEST="true").content.decode()  # default gates
    panel = body[body.index('id="panel-counters"'):]
    assert 'aria-label="memory: 12Gi allocated before, 0 now, -4Gi free of 8Gi"' in panel
    assert "-4Gi free of 8Gi (before 12Gi, now 0) — <strong>overdrawn</strong>" in panel
    assert 'style="width: 100.0%"' in panel
