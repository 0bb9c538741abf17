"""Serving a room: request bodies as real servers deliver them (chunked, oversize, deeply nested),
and what the app answers when its cache is gone. Each answer is a clear 4xx or a right result,
never a 500 and never a wrong answer."""
import json

import pytest
from django.core.cache import cache
from django.test import Client

from allocator import gallery

pytestmark = pytest.mark.django_db

SIMPLE = gallery.get("simple-gpu")


@pytest.fixture(autouse=True)
def fresh_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def client():
    return Client()


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
