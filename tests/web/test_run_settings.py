"""One run-settings value: links made before it (fixtures/links-before-run-settings.json, made by
main's code: fragments as the server and as the page's script write them, share rows, a compare
link) open as they did; shares keep their versions; lessons and the gallery read versions; one
validator words a mistake the same wherever the settings come from."""
import hashlib
import json
from pathlib import Path

import pytest

from allocator import compare, gallery, run_settings, sharing
from allocator.engine.gates import COMPONENT_KEYS
from allocator.engine.report import outcome_data
from allocator.models import SharedScenario
from allocator.run_settings import RunSettings, SettingsError, run_in_process
from allocator.sharing import fragment, read_fragment, settings_of
from allocator.worker import result_key
from allocator.workshops.model import parse_workshop

pytestmark = pytest.mark.django_db

LINKS = {link["name"]: link for link in json.loads(
    (Path(__file__).parent / "fixtures" / "links-before-run-settings.json").read_text(encoding="utf-8"))}
OPENED = [name for name, link in LINKS.items() if "before" in link]
SIMPLE = gallery.get("simple-gpu").scenario


def _no_share_ids(value):
    if isinstance(value, dict):
        return {k: ("<share>" if k == "shareID" else _no_share_ids(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_no_share_ids(v) for v in value]
    return value


def _answer(run) -> dict:
    data = outcome_data(run_in_process(run)[1])
    return _no_share_ids({"outcome": data["outcome"], "claims": [c.get("status") for c in data["claims"]],
                          "message": data["message"]})


# The page's script writes every box as the page shows it, at the chosen versions; the server wrote
# fragments only for settings without versions (its share rows, lessons and compare sides had none).
FRAGMENTS = [(name, "browser_fragment") for name in OPENED] + [
    (name, "fragment") for name in OPENED if not LINKS[name]["settings"]["versions"]]


@pytest.mark.parametrize("name, writer", FRAGMENTS)
def test_a_fragment_made_before_opens_with_its_settings_and_its_answer(name, writer):
    link = LINKS[name]
    run = read_fragment(link[writer])
    assert (run.node, run.versions) == (link["settings"]["node"], link["settings"]["versions"])
    for component, values in link["settings"]["gates"].items():
        assert all(run.component_features(component).enabled(g) == v for g, v in values.items())
    assert _answer(run) == _no_share_ids(link["before"])


@pytest.mark.parametrize("name", [name for name in OPENED if "row" in LINKS[name]])
def test_a_share_row_made_before_opens_as_before(client, name):
    link = LINKS[name]
    SharedScenario.objects.create(version="before-run-settings", **link["row"])
    row = SharedScenario.objects.get(pk=link["row"]["id"])
    assert row.versions == {}
    assert _answer(settings_of(row)) == _no_share_ids(link["before"])
    body = client.get(f"/s/{row.id}").content.decode()
    expected = {"allocated": "Allocated on node", "invalid": link["before"]["message"]}[link["before"]["outcome"]]
    assert expected in body


def test_a_compare_link_made_before_holds_the_same_sides(client):
    link = LINKS["compare-today"]
    a, b = compare.decode(link["compare"])
    assert [{"scenario": v.scenario, "node": v.node, "gates": v.gates} for v in (a, b)] == link["sides"]
    assert client.get(f"/compare?c={link['compare']}").status_code == 200


def test_a_share_keeps_its_versions_and_a_share_without_keeps_its_digest(client):
    with_versions = {"scenario": SIMPLE, "node": "worker-1", "versions": {"scheduler": {"emulated": "1.36"}}}
    made = client.post("/api/v1/scenarios", json.dumps(with_versions), content_type="application/json").json()
    row = SharedScenario.objects.get(pk=made["id"])
    assert row.versions == {"scheduler": {"emulated": "1.36"}}
    assert settings_of(row).versions == {"scheduler": {"emulated": "1.36"}}
    assert client.get(f"/api/v1/scenarios/{row.id}").json()["versions"] == {"scheduler": {"emulated": "1.36"}}
    page = client.get(f"/s/{row.id}").content.decode()
    assert 'name="emulated-scheduler"' in page and '<option value="1.36" selected' in page
    # The same content without versions is another share, with the digest such shares always had.
    plain = client.post("/api/v1/scenarios", json.dumps({"scenario": SIMPLE, "node": "worker-1"}),
                        content_type="application/json").json()
    assert plain["id"] != made["id"]
    content = sharing.canonical_content(SIMPLE, {"node": "worker-1", "gates": run_settings.full_gates({})})
    assert SharedScenario.objects.get(pk=plain["id"]).digest == hashlib.sha256(content).hexdigest()


def test_the_share_button_keeps_the_versions_of_the_form(client):
    response = client.post("/share", {"scenario": SIMPLE, "emulated-scheduler": "1.36"})
    assert response.status_code == 303
    row = SharedScenario.objects.get()
    assert row.versions == {"scheduler": {"emulated": "1.36"}}
    # Stored with every gate as the scheduler at 1.36 has it: DRADeviceTaintRules is off there.
    assert row.gates["scheduler"]["DRADeviceTaintRules"] is False and row.gates["apiserver"]["DRADeviceTaintRules"]


def test_the_differ_compares_with_the_defaults_at_the_components_versions():
    versions = {"scheduler": {"emulated": "1.36"}}
    stored = run_settings.full_gates({}, versions)
    assert run_settings.changed_gates(stored, versions) == {}
    # The same values read at the binary's own versions differ where 1.36 had another default.
    assert run_settings.changed_gates(stored) == {"scheduler": {"DRADeviceTaintRules": False}}


def test_a_run_at_other_versions_is_another_cache_entry():
    assert result_key(RunSettings(SIMPLE)) != result_key(RunSettings(SIMPLE, versions={"scheduler": {"emulated": "1.36"}}))
    assert result_key(RunSettings(SIMPLE)) == result_key(RunSettings(SIMPLE, client="192.0.2.1"))


LESSON = """title: Versions
lessons:
- title: At 1.36
  task: Run it.
  node: worker-1
  versions: {emulated: "1.36"}
  componentVersions: {apiserver: {emulated: "1.37"}}
  gates: {DRADeviceTaintRules: false}
  scenario: |
    a: 1
  checks:
  - outcome: allocated
    message: It should allocate.
  solution: {componentVersions: {scheduler: {emulated: "1.35"}}}
"""


def test_a_lesson_sets_versions_and_its_gates_are_read_at_them():
    workshop, problems = parse_workshop(LESSON)
    assert [p.message for p in problems] == []
    start = workshop.lesson(1).start
    assert start.versions == {"scheduler": {"emulated": "1.36"}, "kubelet": {"emulated": "1.36"},
                              "apiserver": {"emulated": "1.37"}}
    # Off is the default at 1.36 (scheduler, kubelet), not at 1.37 (apiserver).
    assert start.gates == {"apiserver": {"DRADeviceTaintRules": False}}
    solution = workshop.lesson(1).solution
    # Its own versions; the gate values it leaves out are the start's.
    assert solution.versions == {"scheduler": {"emulated": "1.35"}} and solution.gates == start.gates


def test_a_mistake_in_the_settings_is_worded_the_same_in_a_lesson_and_in_the_api(client):
    workshop, problems = parse_workshop(LESSON.replace("DRADeviceTaintRules: false", "DRANoSuchGate: false"))
    api = client.post("/api/v1/allocate", json.dumps({"scenario": "a: 1", "gates": {"scheduler": {"DRANoSuchGate": False}}}),
                      content_type="application/json").json()["message"]
    assert [p.message for p in problems] == ["unknown feature gate 'DRANoSuchGate'"]
    assert api == "gates.scheduler.DRANoSuchGate: unknown feature gate 'DRANoSuchGate'"
    with pytest.raises(SettingsError, match="versions.scheduler.emulated: could not parse"):
        run_settings.from_request("a: 1", versions={"scheduler": {"emulated": "one"}})


def test_the_gallery_opens_an_example_with_the_settings_of_its_entry():
    example = gallery.get("version-skew")
    run = example.run_settings()
    assert run == RunSettings(example.scenario, node=example.node or "", gates=run_settings.changed_gates(
        {c: {**example.gates, **example.component_overrides.get(c, {})} for c in COMPONENT_KEYS}))
    assert read_fragment(fragment(run)) == run


def test_a_related_gate_is_taken_by_the_api_as_the_cli_takes_it(client):
    """`?featureGates=` names any gate the components know, as `--feature-gates` does; a link made
    from such settings keeps that value."""
    response = client.post("/api/v1/allocate?featureGates=H2CContainerProbe=true&node=worker-1", SIMPLE,
                           content_type="application/yaml")
    assert response.status_code == 200 and response.json()["outcome"] == "allocated"
    run = RunSettings(SIMPLE, gates={"scheduler": {"H2CContainerProbe": True}})
    assert read_fragment(fragment(run)).gates == {"scheduler": {"H2CContainerProbe": True}}


def test_the_api_keeps_a_gate_value_as_given_even_when_it_is_the_default(client):
    """kube-scheduler refuses setting a pre-alpha gate at all, even to its default: the API's gates
    are the components' flags, not a difference from the defaults (a regression of the run-settings
    work, which first read them through the links' differ)."""
    body = {"scenario": SIMPLE, "node": "worker-1", "versions": {"scheduler": {"emulated": "1.35"}},
            "gates": {"scheduler": {"ResourceHealthStatusMessage": False}}}
    data = client.post("/api/v1/allocate", json.dumps(body), content_type="application/json").json()
    assert data["outcome"] == "invalid"
    assert "cannot set feature gate ResourceHealthStatusMessage to false, feature is PreAlpha" in data["message"]
    body["gates"] = {}
    assert client.post("/api/v1/allocate", json.dumps(body), content_type="application/json").json()["outcome"] == "allocated"


def test_a_gates_value_follows_the_components_versions_wherever_it_is_read():
    """One place works a gate's value out (RunSettings.gate_value): a lesson's gate check, the
    compare page's differences and the lint's gate mutants read it, so a component emulating 1.35
    has 1.35's defaults there too."""
    now = RunSettings(scenario="")
    older = RunSettings(scenario="", versions={"scheduler": {"emulated": "1.35", "minCompat": "1.35"}})
    assert now.gate_value("scheduler", "DRAPartitionableDevices") is True
    assert older.gate_value("scheduler", "DRAPartitionableDevices") is False
    assert older.gate_value("apiserver", "DRAPartitionableDevices") is True  # only the scheduler is older
    flipped = older.with_gate("scheduler", "DRAPartitionableDevices", True)
    assert flipped.gates == {"scheduler": {"DRAPartitionableDevices": True}}
    assert flipped.with_gate("scheduler", "DRAPartitionableDevices", False).gates == {}
