"""Links made by the playground before gates had versions (short ids and `#s=` fragments, made with
that code and kept in fixtures/links-before-versions.json) still open as they did; one whose gate
values kube-scheduler refuses now opens with the scheduler's reason."""
import json
from pathlib import Path

import pytest

from allocator.engine.report import outcome_data
from allocator.models import SharedScenario
from allocator.run_settings import run_in_process
from allocator.sharing import read_fragment, settings_of

pytestmark = pytest.mark.django_db

LINKS = json.loads((Path(__file__).parent / "fixtures" / "links-before-versions.json").read_text(encoding="utf-8"))
REFUSED_NOW = {"locked-gate-off": "kube-scheduler would not start: cannot set feature gate DRAPrioritizedList to "
                                  "false, feature is locked to true"}


def _same_gates(run, link) -> bool:
    """Every gate the old link stored (it stores all of them) has the same value on every component."""
    return all(run.component_features(component).enabled(name) == value
               for component, values in link["row"]["gates"].items() for name, value in values.items())


def _no_share_ids(value):
    """Share IDs are random (as upstream's): compared by presence."""
    if isinstance(value, dict):
        return {k: ("<share>" if k == "shareID" else _no_share_ids(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_no_share_ids(v) for v in value]
    return value


def _answer(run) -> dict:
    _, outcome = run_in_process(run)
    data = outcome_data(outcome)
    return {"outcome": data["outcome"], "claims": _no_share_ids([c.get("status") for c in data["claims"]]),
            "message": data["message"]}


@pytest.mark.parametrize("link", LINKS, ids=[link["name"] for link in LINKS])
def test_an_old_fragment_opens_with_its_settings_and_its_answer(link):
    run = read_fragment(link["fragment"])
    assert _same_gates(run, link) and run.versions == {}
    answer = _answer(run)
    if link["name"] in REFUSED_NOW:
        assert (answer["outcome"], answer["message"]) == ("invalid", REFUSED_NOW[link["name"]])
    else:
        assert {k: answer[k] for k in ("outcome", "claims")} == _no_share_ids(link["before"])


@pytest.mark.parametrize("link", LINKS, ids=[link["name"] for link in LINKS])
def test_an_old_short_link_opens_on_the_page(client, link):
    row = link["row"]
    SharedScenario.objects.create(version="before-versions", **row)
    assert _same_gates(settings_of(SharedScenario.objects.get(pk=row["id"])), link)
    body = client.get(f"/s/{row['id']}").content.decode()
    if link["name"] in REFUSED_NOW:
        assert REFUSED_NOW[link["name"]] in body
        assert 'class="refused"' in body  # the box that stops the scheduler is marked
    else:
        assert {"allocated": "Allocated on node", "unsatisfiable": "Cannot allocate"}[link["before"]["outcome"]] in body


def test_an_old_link_stored_the_old_fractional_default_and_keeps_it():
    # Stored links hold every gate's value: DRAFractionalCapacityRange=true then, explicit now.
    link = next(link for link in LINKS if link["name"] == "fractional-consumable")
    assert link["row"]["gates"]["scheduler"]["DRAFractionalCapacityRange"] is True
    run = settings_of(SharedScenario(**link["row"]))
    assert run.gates["scheduler"]["DRAFractionalCapacityRange"] is True
    assert {k: v for k, v in _answer(run).items() if k != "message"} == _no_share_ids(link["before"])
