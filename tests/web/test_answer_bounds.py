"""The API's answer is bounded like the page: a slice of the requests explained, a few why rows
each with counts of the rest, and never more than ten times its question (plus 256 KiB)."""
import json

import pytest

from allocator import answers, gallery
from allocator.engine.report import outcome_data
from allocator.run_settings import RunSettings, run_in_process

pytestmark = pytest.mark.django_db


def wide(claims: int, devices: int = 100) -> str:
    """One-device claims over a pool of devices: each request's why rows list every device."""
    parts = [
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.example.com}\n"
        "spec:\n  selectors:\n  - cel: {expression: 'device.driver == \"gpu.example.com\"'}\n---\n"
        "apiVersion: v1\nkind: Node\nmetadata: {name: worker-1}\n---\n"
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: worker-1-gpus}\nspec:\n"
        "  driver: gpu.example.com\n  nodeName: worker-1\n"
        "  pool: {name: worker-1, generation: 1, resourceSliceCount: 1}\n  devices:\n"
    ]
    parts += [f"  - name: gpu-{i}\n" for i in range(devices)]
    parts += [f"---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {{name: c-{c}, "
              f"namespace: default}}\nspec:\n  devices:\n    requests:\n    - name: gpu\n"
              f"      exactly: {{deviceClassName: gpu.example.com}}\n" for c in range(claims)]
    return "".join(parts)


WIDE = wide(100)  # 22 KB in; 3.6 MB of JSON before the bound


def test_an_api_answer_is_at_most_ten_times_its_question(client):
    response = client.post("/api/v1/allocate", WIDE, content_type="application/yaml")

    assert response.status_code == 200
    assert len(response.content) <= 10 * len(WIDE.encode()) + 256 * 1024
    data = response.json()
    assert data["outcome"] == "allocated" and len(data["claims"]) == 100, "the claims are all there"
    bounds = data["explanationBounds"]
    assert bounds["requests"] == 100 and bounds["rowsLeftOut"] > 0
    request = data["explanation"]["claims"][0]["requests"][0]
    left_out = request.get("candidatesLeftOut", {"count": 0})["count"]
    assert len(request["candidates"]) + left_out == 100, "every device is shown or counted"


def test_a_slice_of_the_explanation_can_be_asked_for(client):
    response = client.post("/api/v1/allocate?explainFrom=90&explainRequests=5&explainRows=2", WIDE,
                           content_type="application/yaml")

    data = response.json()
    assert [c["claim"] for c in data["explanation"]["claims"]] == [f"default/c-{n}" for n in range(90, 95)]
    for claim in data["explanation"]["claims"]:
        request = claim["requests"][0]
        chosen = [row for row in request["candidates"] if row["verdict"] == "chosen"]
        assert len(chosen) == 1 and len(request["candidates"]) == 3
        assert request["candidatesLeftOut"]["count"] == 97
        assert sum(request["candidatesLeftOut"]["byCode"].values()) == 97
    assert data["explanationBounds"]["from"] == 90 and data["explanationBounds"]["shown"] == 5
    assert data["explanationBounds"]["next"] == "?explainFrom=95&explainRequests=5&explainRows=2"


@pytest.mark.parametrize("query, message", [
    ("explainFrom=-1", "explainFrom must be 0 or more, not -1"),
    ("explainRequests=0", "explainRequests must be from 1 to 100, not 0"),
    ("explainRows=many", "explainRows must be a whole number, not 'many'"),
])
def test_a_bad_slice_is_a_400_with_a_message(client, query, message):
    response = client.post(f"/api/v1/allocate?{query}", WIDE, content_type="application/yaml")
    assert response.status_code == 400 and response.json()["message"] == message


@pytest.mark.parametrize("slug", ["simple-gpu", "mig-8-gpu", "pods"])
def test_ordinary_answers_are_whole_and_unchanged(slug):
    example = gallery.get(slug)
    _, outcome = run_in_process(RunSettings(scenario=example.scenario, node=example.node or ""))
    whole = json.dumps(outcome_data(outcome, with_explanation=True), ensure_ascii=False).encode()

    assert answers.api_answer(outcome, question_bytes=len(example.scenario.encode())) == whole


@pytest.mark.parametrize("query", ["", "?lang=ko"])
def test_the_answer_is_made_in_the_worker_and_only_it_comes_back(client, settings, monkeypatch, query):
    """The whole explanation (2.4 MB pickled for WIDE) stays in the worker process: what comes back
    through the pipe is the bounded answer and the outcome cut to its rows, at most twice the
    answer's limit, whatever the language."""
    from allocator import worker

    settings.ALLOCATOR_ISOLATION = "process"
    pool = worker.WorkerPool(size=1, timeout=60)
    monkeypatch.setattr(worker, "get_pool", lambda: pool)
    replies = []
    run = pool.run

    def recorded(job, **kwargs):
        ran = run(job, **kwargs)
        replies.append(len(ran.payload))
        return ran

    monkeypatch.setattr(pool, "run", recorded)
    try:
        response = client.post(f"/api/v1/allocate{query}", WIDE, content_type="application/yaml")
    finally:
        pool.close()

    assert response.status_code == 200 and response.json()["explanationBounds"]["rowsLeftOut"] > 0
    assert len(replies) == 1 and replies[0] <= 2 * answers.answer_limit(len(WIDE.encode()))
    if query:
        reasons = response.json()["text"]["reasons"]
        shown = response.json()["explanation"]["claims"][0]["requests"][0]["candidates"]
        assert len([r for r in reasons if r["claim"] == "default/c-0"]) == len(shown), "a reason per row shown"
