"""Issue 24 item 1 on the server: a node the scenario does not name, "edited from", the closest
node, claims judged alone."""
import pytest

from allocator import gallery

PASTED = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: nic.example.com
spec:
  selectors:
  - cel:
      expression: device.driver == "nic.example.com"
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: node-a-nics
spec:
  driver: nic.example.com
  nodeName: node-a
  pool: {name: node-a, generation: 1, resourceSliceCount: 1}
  devices:
  - name: nic-0
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: one-nic, namespace: default}
spec:
  devices:
    requests:
    - name: nic
      exactly: {deviceClassName: nic.example.com}
"""


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
