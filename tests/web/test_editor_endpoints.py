"""What the editor asks the server: the scenario's words, the kinds' fields, and Format."""
import json

from allocator import gallery


def post_json(client, url, data):
    return client.post(url, json.dumps(data), content_type="application/json")


def test_words_are_the_slices_own_attribute_and_capacity_names_with_their_values(client):
    words = post_json(client, "/editor/words", {"scenario": gallery.get("simple-gpu").scenario}).json()
    assert words["drivers"] == ["gpu.example.com"]
    uuid = words["attributes"]["gpu.example.com"]["uuid"]
    assert uuid["kind"] == "string" and uuid["devices"] == 2 and len(uuid["values"]) == 2
    assert words["capacity"]["gpu.example.com"]["memory"]["values"] == ["24Gi", "80Gi"]


def test_a_qualified_attribute_name_belongs_to_its_own_domain():
    from allocator.engine.fieldnames import scenario_words
    from allocator.engine.scenario import read_scenario
    text = gallery.get("simple-gpu").scenario.replace("      model:\n", "      example.org/model:\n", 1)
    words = scenario_words(read_scenario(text))
    assert "model" in words["attributes"]["example.org"]


def test_fields_follow_validation_and_cel_functions_follow_the_library(client):
    known = client.get("/editor/fields").json()
    device = known["fields"]["ResourceSlice"]["spec.devices[]"]
    assert "bindsToNode" in device and "attributes" in device
    assert known["fields"]["ResourceClaim"]["spec.devices.requests[].exactly"][0] == "adminAccess"
    assert {"quantity", "semver"} <= set(known["cel"]["global"])
    assert {"compareTo", "isGreaterThan"} <= set(known["cel"]["member"])
    assert "_+_" not in known["cel"]["global"]


def test_format_reindents_keeps_comments_and_meaning(client):
    text = "# top\nspec:\n    devices:\n    - name: a   # kept\n      note: |\n          one\n            two\n"
    answer = post_json(client, "/editor/format", {"scenario": text}).json()
    assert answer == {"text": "# top\nspec:\n  devices:\n  - name: a   # kept\n    note: |\n      one\n        two\n",
                      "comments": True}


def test_format_refuses_unreadable_yaml_naming_the_line(client):
    response = post_json(client, "/editor/format", {"scenario": "a: 1\nb: [\n"})
    assert response.status_code == 422
    assert "the text was not changed" in response.json()["error"]


def test_format_without_a_scenario_is_a_clear_error(client):
    response = client.post("/editor/format", "nonsense", content_type="application/json")
    assert response.status_code == 400 and "no scenario text" in response.json()["error"]
