"""Serving a room, round two: refusals in the caller's format and with the caller's numbers."""
from urllib.parse import urlencode

import pytest

pytestmark = pytest.mark.django_db


def test_a_workshop_share_over_the_body_limit_is_a_413_in_the_callers_format(client, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100_000
    body = "title: t\nsummary: " + "x" * 200_000 + "\n"
    api = client.post("/api/v1/workshops", body, content_type="application/yaml")
    assert api.status_code == 413 and api["Content-Type"] == "application/json"
    assert api.json()["message"] == ("The workshop is 200,019 bytes; shared workshops are limited to "
                                     "262,144 bytes (256 KiB).")
    page = client.post("/workshops/share", urlencode({"workshop": body}),
                       content_type="application/x-www-form-urlencoded")
    assert page.status_code == 413 and page["Content-Type"].startswith("text/html")
    assert "shared workshops are limited to 262,144 bytes" in page.content.decode()
    assert "<form" in page.content.decode(), "the share page itself, to try again"


def test_a_url_encoded_page_form_over_the_limit_says_the_scenarios_size(client, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100_000
    scenario = "# " + "é" * 30_000  # 60,002 bytes; three times that URL-encoded
    body = urlencode({"gates-submitted": "1", "scenario": scenario})
    page = client.post("/", body, content_type="application/x-www-form-urlencoded")

    assert page.status_code == 413
    text = page.content.decode()
    assert f"The scenario is 60,002 bytes ({len(body):,} bytes as the form sent it, URL-encoded" in text


def test_the_readme_gives_the_real_body_limit():
    from pathlib import Path

    from django.conf import settings

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    paragraph = readme[readme.index("- **Request bodies**: `Transfer-Encoding: chunked`"):][:400]
    assert f"{settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,} bytes" in paragraph
    assert "8 MiB" not in paragraph


def test_deep_tagged_yaml_is_an_invalid_answer_never_a_cached_crash(client):
    """Issue 27 item 2: the worker segfaulted on this; the API answered 200 "search gave up: the
    run ended its worker process" and cached that for 60 s, a wrong answer for invalid input."""
    import pickle

    from allocator import answers, safe_cache
    from allocator.run_settings import RunSettings
    from allocator.worker import answer_key

    text = "a: " + "!<a,b> [" * 100_000 + "]" * 100_000 + "\n"
    for _ in range(2):  # the second answer comes from the cache
        response = client.post("/api/v1/allocate", text, content_type="application/yaml")
        assert response.status_code == 400
        assert response.json()["problems"][0]["message"] == "nesting is deeper than 100 levels (line 1)"
    question = answers.Question(RunSettings(scenario=text.encode()), answers.ExplainSlice(), len(text.encode()))
    cached = safe_cache.get(answer_key(question))
    assert cached is not None and pickle.loads(cached)[1].outcome == "invalid"
