"""Issue 24 item 1 on the server: a node the scenario does not name, "edited from", the closest
node, claims judged alone."""
import re
from pathlib import Path

import pytest

from allocator import gallery

# A whole file as a user pastes it over an example (the browser test pastes the same one).
PASTED = (Path(__file__).resolve().parents[1] / "dumps" / "pasted-nics.yaml").read_text()


def post(client, scenario: str, node: str = "", example: str = "", htmx: bool = False) -> str:
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    data = {"scenario": scenario, "node": node, "example": example}
    return client.post("/", data, **headers).content.decode()


@pytest.mark.django_db
def test_a_plain_post_with_a_node_the_scenario_lacks_runs_on_any_node_and_says_so(client):
    body = post(client, PASTED, node="worker-1")
    assert "Node worker-1 is not in the scenario; ran on any node." in body
    assert "Allocated on node node-a" in body
    assert 'value="worker-1"' not in body


@pytest.mark.django_db
def test_the_api_keeps_the_clis_bare_node(client):
    response = client.post("/api/v1/allocate?node=worker-1", PASTED, content_type="application/yaml")
    data = response.json()
    assert data["outcome"] == "unsatisfiable"
    assert [w["code"] for w in data["warnings"]] == ["unknown-node"]


@pytest.mark.django_db
def test_a_node_the_scenario_names_is_kept(client):
    example = gallery.get("simple-gpu")
    body = post(client, example.scenario + "\n# edited\n", node="worker-1", example="simple-gpu", htmx=True)
    assert "ran on any node" not in body
    assert "Allocated on node worker-1" in body


@pytest.mark.django_db
def test_edited_from_stays_while_an_object_of_the_example_is_kept_and_goes_after_a_whole_paste(client):
    example = gallery.get("simple-gpu")
    edited = example.scenario.replace("# ", "# edited: ", 1) + "\n"
    assert "Edited from the example" in post(client, edited, example="simple-gpu", htmx=True)
    assert "Edited from the example" not in post(client, PASTED, example="simple-gpu", htmx=True)


# ---- the smaller defects ---------------------------------------------------------------------

BAD_CEL = PASTED.replace('device.driver == "nic.example.com"', 'device.driver == "nic.example.com" &&')


@pytest.mark.django_db
def test_a_cel_compile_error_is_said_once_with_its_caret_in_a_preformatted_block(client):
    body = post(client, BAD_CEL, htmx=True)
    listed = body.split('data-error-lines="', 1)[1].split('">', 1)[1]  # past the editor's marks
    assert listed.count("compilation failed") == 1
    assert 'class="message"' not in body
    snippet = re.search(r'<pre class="problem-snippet" lang="en">(.*?)</pre>', body, re.S).group(1)
    source, caret = snippet.split("\n")
    assert source == "device.driver == &quot;nic.example.com&quot; &amp;&amp;"
    assert caret.endswith("^") and len(caret) == len('device.driver == "nic.example.com" &&') + 1


@pytest.mark.django_db
def test_a_key_without_its_colon_is_reported_on_its_own_line(client):
    text = "apiVersion: v1\nkind: Node\nmetadata\n  name: a\n"
    body = post(client, text, htmx=True)
    assert 'data-line="3"' in body and 'data-line="4"' not in body
    assert "(line 3, column 1; noticed at line 4, column 7)" in body


@pytest.mark.django_db
@pytest.mark.parametrize("language, docs", [
    ("en", "https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/"),
    ("ko", "https://kubernetes.io/ko/docs/concepts/scheduling-eviction/dynamic-resource-allocation/"),
])
def test_a_cold_start_explains_dra_in_two_lines_and_links_the_kubernetes_docs_in_the_pages_language(
        client, language, docs):
    body = client.post("/", {"scenario": ""}, HTTP_HX_REQUEST="true", HTTP_ACCEPT_LANGUAGE=language).content.decode()
    primer = re.search(r'<p class="primer">(.*?)</p>', body, re.S).group(1)
    assert f'href="{docs}"' in primer
    assert ("ResourceClaim" in primer) and (("DRA" in primer))


# ---- the closest node ------------------------------------------------------------------------

@pytest.mark.django_db
def test_a_pending_pods_node_table_leads_with_the_closest_node_and_says_why(client):
    from tests.engine.test_closest import closest_node_dump

    body = post(client, closest_node_dump(), htmx=True)
    pod = body.split('data-pod="default/waiting"', 1)[1]
    assert re.findall(r'<tr class="verdict-rejected" data-node="([^"]+)"', pod) == ["node-c", "node-d", "node-a", "node-b"]
    closest = re.search(r'<p class="closest-node"[^>]*>(.*?)</p>', pod, re.S).group(1)
    assert "Closest to fitting: node node-c" in closest and "4 free devices" in closest
    assert "Shown first because it fails the fewest filter checks" in closest


# ---- claims allocated together, or each alone -------------------------------------------------

@pytest.mark.django_db
def test_claims_failing_together_are_said_to_be_one_pods_and_can_be_judged_each_alone(client):
    from tests.engine.test_each_claim_alone import TEXT

    together = client.post("/", {"scenario": TEXT}, HTTP_HX_REQUEST="true").content.decode()
    assert "Invalid input" in together
    assert "The 3 pending claims are allocated together, as one pod’s claims" in together
    assert 'name="each-claim-alone" value="1"' in together

    alone = client.post("/", {"scenario": TEXT, "each-claim-alone": "1"}, HTTP_HX_REQUEST="true").content.decode()
    assert "Each claim judged alone: 2 of 3 can be allocated" in alone
    answers = {claim: kind for kind, claim in re.findall(r'<li class="alone-(\w+)" data-claim="([^"]+)"', alone)}
    assert answers == {"default/numa0": "allocated", "default/performance": "invalid",
                                                   "default/numa1": "allocated"}
    assert "allocated together, as one pod’s claims" not in alone


@pytest.mark.django_db
def test_one_pending_claim_is_not_offered_to_be_judged_alone(client):
    body = client.post("/", {"scenario": BAD_CEL}, HTTP_HX_REQUEST="true").content.decode()
    assert "Judge each claim alone" not in body and 'class="each-claim-alone"' not in body


@pytest.mark.django_db
def test_claims_that_fit_no_node_lead_with_the_closest_node_and_the_why_follows_it(client):
    from tests.engine.test_closest import claims_only_dump

    body = post(client, claims_only_dump(), htmx=True)
    closest = re.search(r'<p class="closest-node" id="closest-claims">(.*?)</p>', body, re.S).group(1)
    assert "Closest to fitting: node node-c" in closest and "7 free devices in its own slices, 1 device short" in closest
    tried = body.split('<details class="verdicts"', 1)[1].split("</details>", 1)[0]
    assert re.findall(r"<li>(node-\w): ", tried) == ["node-c", "node-b", "node-a"]
    assert "Why (node node-c)" in body


# ---- "judge each claim alone" in links, shares and the API ------------------------------------

def alone_state(body: str) -> str:
    return re.search(r'<input type="hidden" name="each-claim-alone" id="each-claim-alone-state" value="([^"]*)"',
                     body).group(1)


@pytest.mark.django_db
def test_judging_each_claim_alone_is_kept_for_the_next_run_until_they_are_allocated_together_again(client):
    from tests.engine.test_each_claim_alone import TEXT

    alone = client.post("/", {"scenario": TEXT, "each-claim-alone": "1"}, HTTP_HX_REQUEST="true").content.decode()
    assert alone_state(alone) == "1" and 'hx-swap-oob="true"' in alone.split('id="each-claim-alone-state"', 1)[1][:40]
    # the hidden state first, then the "together again" button's empty value: the last value counts
    together = client.post("/", {"scenario": TEXT, "each-claim-alone": ["1", ""]}, HTTP_HX_REQUEST="true")
    assert alone_state(together.content.decode()) == ""
    assert "allocated together, as one pod’s claims" in together.content.decode()


@pytest.mark.django_db
def test_a_share_keeps_each_claim_alone_and_its_link_opens_with_it(client):
    from allocator import sharing
    from tests.engine.test_each_claim_alone import TEXT

    response = client.post("/share", {"scenario": TEXT, "each-claim-alone": "1"})
    assert response.status_code == 303
    page = client.get(response["Location"]).content.decode()
    assert "Each claim judged alone: 2 of 3 can be allocated" in page and alone_state(page) == "1"
    share_id = response["Location"].rstrip("/").rsplit("/", 1)[1]
    assert client.get(f"/api/v1/scenarios/{share_id}").json()["eachClaimAlone"] is True

    plain = client.post("/share", {"scenario": TEXT})
    assert plain["Location"] != response["Location"]  # another share: the setting is part of what is stored
    assert "allocated together, as one pod’s claims" in client.get(plain["Location"]).content.decode()

    run = sharing.read_fragment(sharing.fragment(sharing.settings_of(
        sharing.SharedScenario.objects.get(pk=share_id))))
    assert run.each_claim_alone is True


@pytest.mark.django_db
def test_the_api_judges_each_claim_alone_when_asked_in_the_json_body_or_the_query(client):
    import json

    from tests.engine.test_each_claim_alone import TEXT

    together = client.post("/api/v1/allocate", json.dumps({"scenario": TEXT}), content_type="application/json").json()
    assert together["outcome"] == "invalid" and "eachClaimAlone" not in together
    for response in (
        client.post("/api/v1/allocate", json.dumps({"scenario": TEXT, "eachClaimAlone": True}),
                    content_type="application/json"),
        client.post("/api/v1/allocate?eachClaimAlone=true", TEXT, content_type="application/yaml"),
    ):
        answers = {a["claim"]: a["outcome"] for a in response.json()["eachClaimAlone"]}
        assert answers == {"default/numa0": "allocated", "default/performance": "invalid",
                           "default/numa1": "allocated"}
    bad = client.post("/api/v1/allocate", json.dumps({"scenario": TEXT, "eachClaimAlone": "yes"}),
                      content_type="application/json")
    assert bad.status_code == 400 and "eachClaimAlone must be true or false" in bad.json()["message"]
    bad = client.post("/api/v1/allocate?eachClaimAlone=maybe", TEXT, content_type="application/yaml")
    assert bad.status_code == 400 and "eachClaimAlone" in bad.json()["message"]


# ---- the status-writers grid of a scenario without RBAC objects waits for its button ------------

def status_writers_panel(body: str) -> str:
    return body.split('id="panel-status-writers"', 1)[1].split('<div class="panel"', 1)[0]


@pytest.mark.django_db
def test_a_scenario_without_rbac_objects_folds_the_status_writers_grid_until_asked_and_keeps_it_then(client):
    text = gallery.get("mig-8-gpu").scenario
    folded = status_writers_panel(post(client, text, htmx=True))
    assert "The scenario has no RBAC objects of its own" in folded and "<table" not in folded
    assert 'name="status-writers" value="1"' in folded

    shown = client.post("/", {"scenario": text, "status-writers": ["", "1"]}, HTTP_HX_REQUEST="true").content.decode()
    assert "RBAC: allowed by ClusterRoleBinding" in status_writers_panel(shown)
    assert re.search(r'id="status-writers-state" value="1" hx-swap-oob="true"', shown)
    again = client.post("/", {"scenario": text + "# edited\n", "status-writers": "1"}, HTTP_HX_REQUEST="true")
    assert "<table" in status_writers_panel(again.content.decode())


@pytest.mark.django_db
def test_the_example_about_status_writers_and_a_scenario_with_rbac_objects_show_the_grid_at_once(client):
    example = gallery.get("granular-status-authorization")
    assert "RBAC: allowed by ClusterRoleBinding" in status_writers_panel(
        post(client, example.scenario + "# edited\n", example="granular-status-authorization", htmx=True))
    assert "The scenario has no RBAC objects" in status_writers_panel(post(client, example.scenario, htmx=True))
    rbac = example.scenario + """---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: plugin
rules:
- apiGroups: [resource.k8s.io]
  resources: [resourceclaims/driver]
  verbs: [associated-node:update]
"""
    assert "<table" in status_writers_panel(post(client, rbac, htmx=True))
