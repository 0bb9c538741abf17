"""Every run goes through the same admission, whichever path it comes by: the page, the API, the
status-writers what-if, a workshop Check, compare and a workshop share's lint all answer 429 for
a client over its limits, and a run whose settings name no client does not run at all. A share's
lint has a time budget of its own, then a 400 naming the lesson it stopped at."""
import json
from pathlib import Path

import pytest

from allocator import fairness, gallery
from allocator.run_settings import RunSettings
from allocator.workshops.library import shipped
from allocator.worker import NotAdmitted, run_bounded
from allocator.workshops.lint import lint
from allocator.workshops.playground import MAX_LINT_TRIALS, run_in_worker, run_inline

pytestmark = [pytest.mark.django_db, pytest.mark.fairness]
CLIENT = "127.0.0.1"  # the test client's address
SIMPLE = gallery.get("simple-gpu").scenario
TINY = (Path(__file__).parent.parent / "workshops" / "files" / "tiny.yaml").read_text()


@pytest.fixture
def over_its_limit(settings):
    """The test client has run into the time limit as often as it may in the window."""
    settings.ALLOCATOR_RUNS_PER_CLIENT = 0
    settings.ALLOCATOR_SLOW_RUNS = "1/600"
    fairness.charge_slow_run(CLIENT)


def _refused(response, what: str):
    assert response.status_code == 429, f"{what}: {response.status_code}"
    assert int(response["Retry-After"]) > 0
    assert "time limit" in response.content.decode(), what


def _first_lesson():
    slug, workshop = next(iter(shipped().items()))
    return slug, workshop.lesson(1)


def test_the_page_refuses_a_client_over_its_limits(client, over_its_limit):
    _refused(client.post("/", {"scenario": SIMPLE + "# page\n", "gates-submitted": "1"}), "page")


def test_the_api_refuses_a_client_over_its_limits(client, over_its_limit):
    _refused(client.post("/api/v1/allocate", SIMPLE + "# api\n", content_type="application/yaml"), "API")


def test_the_status_writers_what_if_refuses_a_client_over_its_limits(client, over_its_limit):
    _refused(client.post("/status-writers", {"scenario": SIMPLE + "# what-if\n"}), "status writers")


def test_a_workshop_check_refuses_a_client_over_its_limits(client, over_its_limit):
    slug, lesson = _first_lesson()
    data = {"scenario": lesson.start.scenario + "# check\n", "node": lesson.start.node, "gates-submitted": "1"}
    _refused(client.post(f"/workshops/{slug}/1/check", data), "Check")
    _refused(client.post(f"/workshops/{slug}/1/check", data, HTTP_HX_REQUEST="true"), "Check (htmx)")


def test_compare_refuses_a_client_over_its_limits(client, over_its_limit):
    from allocator import compare
    from allocator.workshops.model import Variant

    a = Variant(scenario=SIMPLE + "# compare\n", node="worker-1")
    b = Variant(scenario=SIMPLE.replace("40Gi", "16Gi"), node="worker-1")
    _refused(client.get("/compare?c=" + compare.encode(a, b)), "compare")


def test_a_workshop_shares_lint_refuses_a_client_over_its_limits(client, over_its_limit):
    response = client.post("/api/v1/workshops", TINY.replace("A tiny", "A throttled"), content_type="application/yaml")
    assert response.status_code == 429 and "lesson 1 (Take the smaller GPU)" in response.json()["message"]
    page = client.post("/workshops/share", {"workshop": TINY.replace("A tiny", "A throttled page")})
    assert page.status_code == 429 and "time limit" in page.content.decode()


def test_a_run_whose_settings_name_no_client_is_not_run():
    with pytest.raises(NotAdmitted):
        run_bounded(RunSettings(SIMPLE))
    with pytest.raises(NotAdmitted):
        run_in_worker(RunSettings(SIMPLE))


def test_the_runs_of_a_client_that_met_the_time_limit_are_heavy_on_every_path(settings):
    """A client with a slow run in its window is 'heavy' (its runs get the lower-priority workers);
    the check is made from the client the run settings carry, so it holds on every path."""
    settings.ALLOCATOR_RUNS_PER_CLIENT = 0
    settings.ALLOCATOR_SLOW_RUNS = "5/600"
    assert not fairness.heavy(CLIENT)
    fairness.charge_slow_run(CLIENT)
    assert fairness.heavy(CLIENT) and not fairness.heavy("192.0.2.9")


def test_a_workshop_shares_lint_stops_at_its_budget_and_names_the_lesson(client, settings):
    settings.ALLOCATOR_RUNS_PER_CLIENT = 0
    settings.ALLOCATOR_SLOW_RUNS = "5/600"
    settings.WORKSHOP_LINT_BUDGET = 0.001  # the first run spends it
    response = client.post("/api/v1/workshops", TINY.replace("A tiny", "A slow"), content_type="application/yaml")
    assert response.status_code == 400
    message = response.json()["message"]
    assert "more than 0.001 s" in message and "stopped at lesson 1 (Take the smaller GPU)" in message
    assert fairness.heavy(CLIENT), "the spent budget counts against the client"
    # Another scenario: the lessons' answers above are in the results cache now, and cost nothing.
    page = client.post("/workshops/share", {"workshop": TINY.replace("# Two GPUs", "# Two other GPUs")})
    assert page.status_code == 400 and "stopped at lesson 1" in page.content.decode()


def test_a_workshop_shares_lint_within_its_budget_is_stored(client, settings):
    settings.WORKSHOP_LINT_BUDGET = 60
    response = client.post("/api/v1/workshops", json.dumps({"workshop": TINY.replace("A tiny", "A quick")}),
                           content_type="application/json")
    assert response.status_code == 201


def test_a_workshop_shares_lint_has_a_work_budget_too_and_names_the_lesson_it_reached(client, settings):
    settings.ALLOCATOR_RUNS_PER_CLIENT = 0
    settings.ALLOCATOR_SLOW_RUNS = "5/600"
    # What lesson 1 alone costs: its start, its solution, and the lint's mutants and variants of it.
    runs = []
    lint(TINY, run=lambda variant: runs.append(variant) or run_inline(variant), max_trials=MAX_LINT_TRIALS)
    settings.WORKSHOP_LINT_MAX_RUNS = len(runs) + 1  # lesson 1, then lesson 2's start
    head, lesson = TINY.split("\n- title: ", 1)
    second = lesson.replace("Take the smaller GPU", "Take it again", 1).replace("# Two GPUs", "# Two more GPUs")
    text = f"{head}\n- title: {lesson.rstrip()}\n- title: {second}"
    response = client.post("/api/v1/workshops", text, content_type="application/yaml")
    assert response.status_code == 400
    message = response.json()["message"]
    assert f"need more than {len(runs) + 1} runs" in message and "stopped at lesson 2 (Take it again)" in message
    settings.WORKSHOP_LINT_MAX_RUNS = 2 * len(runs) + 10
    assert client.post("/api/v1/workshops", text, content_type="application/yaml").status_code == 201
