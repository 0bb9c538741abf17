"""Serving a room: request bodies as real servers deliver them (chunked, oversize, deeply nested),
and what the app answers when its cache is gone. Each answer is a clear 4xx or a right result,
never a 500 and never a wrong answer."""
import io
import json
import logging

import pytest
from django.test import Client

from allocator import gallery, safe_cache
from allocator.models import SharedScenario
from allocator.run_settings import MAX_SCENARIO_BYTES
from tests.redis_server import free_port, redis_cache_settings, redis_server  # noqa: F401 (a fixture)
from tests.web.test_sharing import form_data

pytestmark = pytest.mark.django_db

SIMPLE = gallery.get("simple-gpu")


# ---- depth: every parser entry refuses deep nesting with a 400 -------------------------

DEEP_JSON = "[" * 100_000 + "]" * 100_000


def test_a_json_share_nested_too_deeply_is_a_400_with_a_message(client):
    body = '{"scenario": "x", "gates": ' + DEEP_JSON + "}"
    response = client.post("/api/v1/scenarios", body, content_type="application/json")
    assert response.status_code == 400
    assert "nested too deeply" in response.json()["message"]
    nested_scenario = '{"scenario": ' + DEEP_JSON + "}"
    response = client.post("/api/v1/scenarios", nested_scenario, content_type="application/json")
    assert response.status_code == 400 and "nested too deeply" in response.json()["message"]


def test_a_fragment_nested_too_deeply_is_refused():
    import base64
    import zlib

    from allocator.sharing import ShareError, read_fragment

    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    packed = packer.compress(DEEP_JSON.encode()) + packer.flush()
    with pytest.raises(ShareError, match="nested too deeply"):
        read_fragment("s=" + base64.urlsafe_b64encode(packed).decode().rstrip("="))


@pytest.mark.parametrize("body", [DEEP_JSON, "[" * 5000 + "]" * 5000, "- " * 5000 + "x\n",
                                  "".join(" " * i + "a:\n" for i in range(1500)) + " " * 1500 + "x\n"])
def test_deep_scenarios_are_a_400_on_the_api_and_the_page_and_the_share_api(client, body):
    api = client.post("/api/v1/allocate", body, content_type="application/yaml")
    assert api.status_code == 400 and api.json()["outcome"] == "invalid"
    page = client.post("/", {"scenario": body, "gates-submitted": "1"}, HTTP_HX_REQUEST="true")
    assert page.status_code == 200 and "outcome-invalid" in page.content.decode()
    if len(body) < 256 * 1024:
        shared = client.post("/api/v1/scenarios", json.dumps({"scenario": body}), content_type="application/json")
        assert shared.status_code in (201, 400)  # stored as text, or refused; never a 500


# ---- chunked bodies (no Content-Length) --------------------------------------------------

def chunked(client, path, body: bytes, content_type="application/yaml", terminated=True, **extra):
    """A request as gunicorn hands over a `Transfer-Encoding: chunked` body: no CONTENT_LENGTH,
    the decoded body on wsgi.input, which reads to its end."""
    environ = {
        "wsgi.input": io.BytesIO(body),
        "CONTENT_TYPE": content_type,
        "HTTP_TRANSFER_ENCODING": "chunked",
        "REQUEST_METHOD": "POST",
        **extra,
    }
    if terminated:
        environ["wsgi.input_terminated"] = True
    request = client._base_environ(PATH_INFO=path.split("?")[0], QUERY_STRING=path.partition("?")[2], **environ)
    request.pop("CONTENT_LENGTH", None)
    return client.request(**request)


def test_a_chunked_allocation_is_read_and_allocated(client):
    response = chunked(client, "/api/v1/allocate?node=worker-1", SIMPLE.scenario.encode())
    assert response.status_code == 200
    data = response.json()
    assert data["outcome"] == "allocated" and [c["metadata"]["name"] for c in data["claims"]] == ["single-gpu"]


def test_a_chunked_share_is_stored_byte_for_byte(client):
    response = chunked(client, "/api/v1/scenarios", SIMPLE.scenario.encode())
    assert response.status_code == 201
    assert SharedScenario.objects.get(pk=response.json()["id"]).scenario == SIMPLE.scenario


def test_a_chunked_body_over_the_limit_is_a_413_without_reading_it_all(client, monkeypatch, settings):
    from allocator import middleware

    big = b"#" * (MAX_SCENARIO_BYTES + 1)
    response = chunked(client, "/api/v1/allocate", big)
    assert response.status_code == 413 and f"{MAX_SCENARIO_BYTES:,}" in response.json()["message"]
    monkeypatch.setattr(middleware, "DRAIN_BYTES", 1024 * 1024)
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 8 * 1024 * 1024  # any body over it, whatever the view's own limit
    huge = io.BytesIO(b"#" * (20 * 1024 * 1024))
    response = chunked(client, "/api/v1/scenarios", b"", **{"wsgi.input": huge})
    assert response.status_code == 413 and "more than 8,388,608 bytes" in response.json()["message"]
    assert huge.tell() <= 8 * 1024 * 1024 + 1 + 1024 * 1024, "read up to the limit, then drained a bounded amount"


def test_a_chunked_body_a_server_cannot_end_is_refused_with_411(client):
    response = chunked(client, "/api/v1/allocate", SIMPLE.scenario.encode(), terminated=False)
    assert response.status_code == 411 and "Content-Length" in response.json()["message"]


def test_a_chunked_form_post_reaches_the_page(client):
    from urllib.parse import urlencode

    body = urlencode({"scenario": SIMPLE.scenario, "node": "worker-1", "gates-submitted": "1"}).encode()
    response = chunked(client, "/", body, content_type="application/x-www-form-urlencoded", HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and "outcome-allocated" in response.content.decode()


def test_a_body_cut_short_of_its_content_length_is_refused_not_run(client):
    """gunicorn hands over what arrived when a client goes away mid-body."""
    cut = SIMPLE.scenario.encode()[:200]
    response = client.request(**client._base_environ(
        PATH_INFO="/api/v1/allocate", QUERY_STRING="node=worker-1", REQUEST_METHOD="POST",
        CONTENT_TYPE="application/yaml", CONTENT_LENGTH=str(len(SIMPLE.scenario.encode())),
        **{"wsgi.input": io.BytesIO(cut)}))
    assert response.status_code == 400 and "ended after 200 of its" in response.json()["message"]


# ---- oversize form posts: the 413 message, even though CSRF reads the form first ---------

def test_a_form_post_over_the_upload_limit_gets_the_413_message_through_csrf(settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100_000
    client = Client(enforce_csrf_checks=True)
    big = "#" * 200_000
    page = client.post("/", {"scenario": big, "gates-submitted": "1"})
    assert page.status_code == 413 and "The scenario is" in page.content.decode()
    assert page["X-Frame-Options"] == "DENY" and "frame-ancestors 'none'" in page["Content-Security-Policy"]
    swapped = client.post("/", {"scenario": big, "gates-submitted": "1"}, HTTP_HX_REQUEST="true")
    assert swapped.status_code == 200, "htmx swaps only 2xx answers: the refusal must be one to be seen"
    assert "Refused" in swapped.content.decode() and "The scenario is" in swapped.content.decode()
    shared = client.post("/share", form_data(big), HTTP_HX_REQUEST="true")
    assert shared.status_code == 413 and "limited to 262,144 bytes" in shared.content.decode()
    plain_share = client.post("/share", form_data(big))
    assert plain_share.status_code == 413 and "limited to 262,144 bytes" in plain_share.content.decode()


def test_a_small_form_post_without_a_csrf_token_is_still_refused():
    client = Client(enforce_csrf_checks=True)
    response = client.post("/share", form_data("# x\n"))
    assert response.status_code == 403


# ---- the cache is an optional speed-up: an outage degrades to no cache --------------------

@pytest.fixture
def dead_redis(settings):
    """The cache is Redis, and nothing answers on its port."""
    original = settings.CACHES
    settings.CACHES = redis_cache_settings(f"redis://127.0.0.1:{free_port()}/0")
    safe_cache.reset()
    yield
    settings.CACHES = original  # before the other fixtures clear "the" cache
    safe_cache.reset()


def test_with_the_cache_down_every_page_and_api_still_answers(client, dead_redis, caplog):
    caplog.set_level(logging.WARNING, logger="allocator")
    assert client.get("/").status_code == 200
    assert client.get("/?example=partitionable-devices").status_code == 200
    page = client.post("/", {"scenario": SIMPLE.scenario, "node": "worker-1", "gates-submitted": "1"},
                       HTTP_HX_REQUEST="true")
    assert page.status_code == 200 and "outcome-allocated" in page.content.decode()
    api = client.post("/api/v1/allocate?node=worker-1", SIMPLE.scenario, content_type="application/yaml")
    assert api.status_code == 200 and api.json()["claims"][0]["status"]["allocation"]
    shared = client.post("/api/v1/scenarios", SIMPLE.scenario, content_type="application/yaml")
    assert shared.status_code == 201
    share_id = shared.json()["id"]
    assert SharedScenario.objects.get(pk=share_id).scenario == SIMPLE.scenario
    assert client.post("/share", form_data("# from the page\n"), HTTP_HX_REQUEST="true").status_code == 201
    assert client.get(f"/s/{share_id}").status_code == 200
    assert client.get(f"/s/{share_id}/embed").status_code == 200
    assert client.get(f"/api/v1/scenarios/{share_id}").status_code == 200
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "cache" in r.getMessage()]
    assert warnings, "the outage is logged"
    assert len(warnings) == 1, "once per outage, not once per request"


def test_with_the_cache_down_the_share_rate_limit_counts_in_the_process(client, dead_redis, settings):
    settings.SHARE_RATE_LIMIT = "2/600"
    statuses = [client.post("/api/v1/scenarios", f"# {i}\n", content_type="application/yaml").status_code
                for i in range(3)]
    assert statuses == [201, 201, 429]


def test_readyz_reports_the_database_and_the_cache_separately(client, dead_redis):
    response = client.get("/readyz")
    data = response.json()
    assert data["database"] == "ok"
    assert data["cache"].startswith("unavailable")
    assert response.status_code == 200, "a cache outage degrades the service; it stays in rotation"
    assert client.get("/healthz").status_code == 200


def test_readyz_is_ok_with_a_working_cache(client):
    response = client.get("/readyz")
    assert response.status_code == 200 and response.json() == {"database": "ok", "cache": "ok", "status": "ok"}


def test_readyz_is_503_when_the_database_is_unreachable(client, monkeypatch):
    from django.db import connection
    from django.db.utils import OperationalError

    def down(*args, **kwargs):
        raise OperationalError("connection refused")

    monkeypatch.setattr(connection, "ensure_connection", down)
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["database"].startswith("unavailable") and response.json()["cache"] == "ok"


def test_redis_stopped_mid_session_degrades_and_recovers(client, redis_server, settings, monkeypatch):
    original = settings.CACHES
    settings.CACHES = redis_cache_settings(redis_server.url)
    safe_cache.reset()
    monkeypatch.setattr(safe_cache, "RETRY_SECONDS", 0.0)
    settings.SHARE_RATE_LIMIT = "3/600"
    try:
        first = client.post("/api/v1/allocate?node=worker-1", SIMPLE.scenario, content_type="application/yaml")
        assert first.status_code == 200
        assert client.post("/api/v1/scenarios", "# a\n", content_type="application/yaml").status_code == 201
        redis_server.stop()
        again = client.post("/api/v1/allocate?node=worker-1", SIMPLE.scenario, content_type="application/yaml")
        assert again.status_code == 200 and again.json()["outcome"] == "allocated"
        assert client.post("/api/v1/scenarios", "# b\n", content_type="application/yaml").status_code == 201
        assert client.get("/readyz").json()["cache"].startswith("unavailable")
        redis_server.start()
        assert client.get("/readyz").json()["cache"] == "ok"
        assert client.post("/api/v1/allocate", SIMPLE.scenario, content_type="application/yaml").status_code == 200
    finally:
        settings.CACHES = original
        safe_cache.reset()
