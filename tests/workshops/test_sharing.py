"""Sharing a workshop: linted, stored content-addressed like scenarios, run from /w/<id>."""
import json
import re
from pathlib import Path

import pytest
from django.core.cache import cache
from django.test import Client

from allocator.models import SharedWorkshop
from allocator.sharing import MAX_SHARE_BYTES
from allocator.workshops.model import parse_workshop

pytestmark = pytest.mark.django_db
TINY = (Path(__file__).parent / "files" / "tiny.yaml").read_text()


def api_share(client, text, **extra):
    return client.post("/api/v1/workshops", text, content_type="application/yaml", **extra)


def test_api_shares_a_workshop_once_per_content(client):
    first = api_share(client, TINY)
    assert first.status_code == 201
    data = first.json()
    assert re.fullmatch(r"[a-z2-7]{10}", data["id"]) and data["created"] is True
    assert data["url"] == f"http://testserver/w/{data['id']}" and first["Location"] == data["url"]
    again = api_share(client, TINY)
    assert again.json()["id"] == data["id"] and again.json()["created"] is False
    other = client.post("/api/v1/workshops", json.dumps({"workshop": TINY.replace("A tiny", "Another tiny")}),
                        content_type="application/json")
    assert other.status_code == 201 and other.json()["id"] != data["id"]
    assert SharedWorkshop.objects.count() == 2


def test_shared_workshop_runs_like_a_shipped_one(client):
    share_id = api_share(client, TINY).json()["id"]
    overview = client.get(f"/w/{share_id}").content.decode()
    assert "A tiny workshop" in overview and f'href="/w/{share_id}/1"' in overview
    lesson = client.get(f"/w/{share_id}/1").content.decode()
    assert "1. Take the smaller GPU" in lesson and f'formaction="/w/{share_id}/1/check"' in lesson
    assert "<strong>40Gi</strong>" in lesson  # the lesson text is Markdown
    start = parse_workshop(TINY)[0].lessons[0].start.scenario
    check = client.post(f"/w/{share_id}/1/check", {"scenario": start, "node": "worker-1",
                                                  "gates-submitted": "1"}, HTTP_HX_REQUEST="true")
    assert check.status_code == 200 and "The claim should get gpu-0." in check.content.decode()
    stored = client.get(f"/api/v1/workshops/{share_id}").json()
    assert stored["workshop"] == TINY and stored["title"] == "A tiny workshop"


def test_a_workshop_that_does_not_lint_is_refused_with_located_problems(client):
    bad = TINY.replace("- claim: single-gpu", "- claim: nope")
    response = api_share(client, bad)
    assert response.status_code == 400
    [problem] = response.json()["problems"]
    line = next(i for i, text in enumerate(bad.splitlines(), 1) if "- claim: nope" in text)
    assert problem["line"] == line and problem["lesson"] == 1 and "claim default/nope" in problem["message"]
    start_passes = TINY.replace('quantity("40Gi")', 'quantity("16Gi")', 1)
    response = api_share(client, start_passes)
    assert response.status_code == 400 and "nothing to do" in response.json()["problems"][0]["message"]
    assert SharedWorkshop.objects.count() == 0


def test_limits_are_those_of_scenario_shares(client, settings):
    big = TINY + "#" * MAX_SHARE_BYTES
    assert api_share(client, big).status_code == 413
    assert api_share(client, "   ").status_code == 400
    cache.clear()  # the refused shares counted too
    settings.SHARE_RATE_LIMIT = "2/600"
    assert api_share(client, TINY).status_code == 201
    assert api_share(client, TINY).status_code == 201
    refused = api_share(client, TINY)
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0


def test_api_needs_no_csrf_token_and_the_page_does():
    strict = Client(enforce_csrf_checks=True)
    assert api_share(strict, TINY).status_code == 201
    assert strict.post("/workshops/share", {"workshop": TINY}).status_code == 403
    page = strict.get("/workshops/share")
    token = page.cookies["csrftoken"].value
    response = strict.post("/workshops/share", {"workshop": TINY, "csrfmiddlewaretoken": token})
    assert response.status_code == 303 and re.fullmatch(r"/w/[a-z2-7]{10}", response["Location"])


def test_share_page_shows_located_problems_and_keeps_the_text(client):
    bad = TINY.replace("devices: [gpu-0]", "match: 'gpu-(0'")
    response = client.post("/workshops/share", {"workshop": bad})
    body = response.content.decode()
    line = next(i for i, text in enumerate(bad.splitlines(), 1) if "match: 'gpu-(0'" in text)
    assert response.status_code == 400
    assert f"line {line} (lesson 1): match: bad pattern" in body
    assert "A tiny workshop" in body  # the textarea keeps what was pasted


def test_unknown_shared_workshop_is_404(client):
    assert client.get("/w/aaaaaaaaaa").status_code == 404
    assert client.get("/api/v1/workshops/aaaaaaaaaa").status_code == 404


def test_api_refuses_a_json_body_nested_too_deeply(client):
    response = client.post("/api/v1/workshops", "[" * 100_000, content_type="application/json")
    assert response.status_code == 400 and "nested too deeply" in response.json()["message"]
