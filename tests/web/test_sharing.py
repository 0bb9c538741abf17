"""Sharing: content-addressed short links, the YAML and embed views, the JSON API, limits,
and fragment links that need no server store.

Runs on SQLite; `make test` runs this file again on PostgreSQL when one is reachable
(DATABASE_URL=postgres://...), where the concurrency test also runs.
"""
import base64
import hashlib
import json
import os
import re
import threading
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client

from allocator import gallery, run_settings, sharing
from allocator.engine.gates import GATES
from allocator.models import SharedScenario
from allocator.run_settings import COMPONENTS, RunSettings
from allocator.sharing import MAX_SHARE_BYTES, ShareError, fragment, read_fragment, share

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
COMPONENT_KEYS = [key for key, _ in COMPONENTS]
SIMPLE = gallery.get("simple-gpu").scenario


def api_share(client, scenario, query="", **extra):
    return client.post(f"/api/v1/scenarios{query}", scenario, content_type="application/yaml", **extra)


def api_share_json(client, data, **extra):
    return client.post("/api/v1/scenarios", json.dumps(data), content_type="application/json", **extra)


def outcome_heading(body: str) -> str:
    match = re.search(r'<div class="outcome[^>]*>\s*<h2>\s*(.*?)\s*</h2>', body, re.S)
    return " ".join(match.group(1).split()) if match else ""


def form_data(scenario, node="", gates=None):
    """What the page's form posts: every checked gate box, as the browser sends them."""
    data = {"scenario": scenario, "node": node, "gates-submitted": "1"}
    gates = gates or {}
    for component in COMPONENT_KEYS:
        for name, info in GATES.items():
            if gates.get(component, {}).get(name, info.default):
                data[f"gate-{component}-{name}"] = "on"
    return data


# ---- short links are content-addressed and immutable ------------------------------------

def test_sharing_the_same_content_twice_gives_the_same_link(client):
    first = api_share(client, SIMPLE, "?node=worker-1")
    second = api_share(client, SIMPLE, "?node=worker-1")
    assert first.status_code == 201 and second.status_code == 201
    assert first.json()["id"] == second.json()["id"]
    assert first.json()["created"] is True and second.json()["created"] is False
    assert first.json()["url"] == f"http://testserver/s/{first.json()['id']}"
    assert first["Location"] == first.json()["url"]
    assert SharedScenario.objects.count() == 1


def test_changed_scenario_gets_a_new_link_and_the_old_link_still_shows_the_old_text(client):
    old = api_share(client, SIMPLE).json()["id"]
    new = api_share(client, SIMPLE + "# edited\n").json()["id"]
    assert new != old
    assert client.get(f"/s/{old}.yaml").content.decode() == SIMPLE
    assert client.get(f"/s/{new}.yaml").content.decode() == SIMPLE + "# edited\n"


def test_node_and_gates_are_part_of_the_content(client):
    plain = api_share(client, SIMPLE).json()["id"]
    on_node = api_share(client, SIMPLE, "?node=worker-1").json()["id"]
    gated = api_share(client, SIMPLE, "?featureGates=DRAListTypeAttributes=true").json()["id"]
    scheduler = {"scheduler": {"DRAListTypeAttributes": True}}
    scheduler_only = api_share_json(client, {"scenario": SIMPLE, "gates": scheduler}).json()["id"]
    assert len({plain, on_node, gated, scheduler_only}) == 4


def test_restating_a_default_gate_is_the_same_content(client):
    plain = api_share(client, SIMPLE).json()["id"]
    restated = api_share_json(client, {"scenario": SIMPLE, "gates": {"scheduler": {"DRAAdminAccess": True}}})
    query = api_share(client, SIMPLE, "?featureGates=DRAListTypeAttributes=false").json()["id"]
    assert restated.json()["id"] == plain == query


def test_ids_are_short_lowercase_base32_of_the_digest(client):
    shared = api_share(client, SIMPLE).json()["id"]
    row = SharedScenario.objects.get(pk=shared)
    assert re.fullmatch(r"[a-z2-7]{10}", shared)
    letters = base64.b32encode(bytes.fromhex(row.digest)).decode().lower()
    assert letters.startswith(shared)
    gates = run_settings.full_gates({})
    assert row.digest == hashlib.sha256(sharing.canonical_content(SIMPLE, {"node": "", "gates": gates})).hexdigest()
    assert row.gates == gates


def test_an_id_prefix_held_by_other_content_gives_a_longer_id_and_leaves_the_old_row(client):
    gates = run_settings.full_gates({})
    digest = hashlib.sha256(sharing.canonical_content(SIMPLE, {"node": "", "gates": gates})).digest()
    prefix = base64.b32encode(digest).decode().lower()[:10]
    squatter = SharedScenario.objects.create(id=prefix, digest="0" * 64, scenario="kind: List\n", gates={}, version="x")
    row, created = share(RunSettings(scenario=SIMPLE))
    assert created and row.id != prefix and row.id.startswith(prefix) and len(row.id) == 16
    squatter.refresh_from_db()
    assert squatter.scenario == "kind: List\n"


def test_a_racing_identical_share_returns_the_winners_row(monkeypatch):
    """Two identical shares: the other request inserts between this one's lookup and insert."""
    winner, _ = share(RunSettings(scenario=SIMPLE))
    real_filter = SharedScenario.objects.filter
    lookups = []

    def first_lookup_misses(*args, **kwargs):
        lookups.append(kwargs)
        found = real_filter(*args, **kwargs)
        return found.none() if len(lookups) == 1 else found

    monkeypatch.setattr(SharedScenario.objects, "filter", first_lookup_misses)
    row, created = share(RunSettings(scenario=SIMPLE))
    assert created is False and row.pk == winner.pk
    assert len(lookups) == 2  # the insert failed on the unique digest, the second lookup found the winner
    assert SharedScenario.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_concurrent_identical_shares_make_one_row():
    if connection.vendor == "sqlite":
        pytest.skip("SQLite's in-memory test database locks whole tables; this runs on PostgreSQL")
    barrier = threading.Barrier(8)
    ids, errors = [], []

    def worker():
        try:
            barrier.wait()
            row, _ = share(RunSettings(scenario=SIMPLE + "# race\n", node="worker-1"))
            ids.append(row.id)
        except Exception as exc:  # reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(set(ids)) == 1 and len(ids) == 8
    assert SharedScenario.objects.count() == 1


# ---- what a link opens -----------------------------------------------------------------

def test_yaml_link_returns_exactly_the_shared_bytes(client):
    text = "# Grüße, CRLF and trailing spaces kept  \r\n" + SIMPLE + "\n\n"
    shared = api_share(client, text.encode("utf-8")).json()["id"]
    response = client.get(f"/s/{shared}.yaml")
    assert response.status_code == 200
    assert response.content == text.encode("utf-8")
    assert response["Content-Type"] == "text/yaml; charset=utf-8"
    assert response["Content-Disposition"] == f'inline; filename="dra-scenario-{shared}.yaml"'
    assert "immutable" in response["Cache-Control"]


def test_short_link_opens_the_editor_with_the_scenario_its_settings_and_the_result(client):
    example = gallery.get("compatibility-groups")
    gates = {c: {"DRADeviceCompatibilityGroups": True} for c in COMPONENT_KEYS}
    shared = api_share_json(client, {"scenario": example.scenario, "node": "worker-1", "gates": gates}).json()["id"]
    body = client.get(f"/s/{shared}").content.decode()
    assert "<textarea" in body and "compatibilityGroups" in body
    assert '<option value="worker-1" selected>' in body
    assert re.search(r'name="gate-scheduler-DRADeviceCompatibilityGroups"[^>]*checked', body)
    assert outcome_heading(body) == "✔ Allocated on node worker-1"


def test_short_link_keeps_gates_per_component(client):
    example = gallery.get("compatibility-groups")
    gates = {"apiserver": {"DRADeviceCompatibilityGroups": True}}
    shared = api_share_json(client, {"scenario": example.scenario, "node": "worker-1", "gates": gates}).json()["id"]
    body = client.get(f"/s/{shared}").content.decode()
    assert "version skew" in body
    assert re.search(r'name="gate-apiserver-DRADeviceCompatibilityGroups"[^>]*checked', body)
    assert not re.search(r'name="gate-scheduler-DRADeviceCompatibilityGroups"[^>]*checked', body)
    assert "Cannot allocate" in outcome_heading(body)


def test_htmx_request_on_a_short_link_gets_only_the_results(client):
    shared = api_share(client, SIMPLE).json()["id"]
    body = client.get(f"/s/{shared}", HTTP_HX_REQUEST="true").content.decode()
    assert body.lstrip().startswith('<section id="results"') and "<textarea" not in body


def test_embed_view_is_read_only_frameable_and_shows_the_yaml(client):
    shared = api_share(client, SIMPLE, "?node=worker-1").json()["id"]
    response = client.get(f"/s/{shared}/embed")
    body = response.content.decode()
    assert response.status_code == 200
    assert "Allocated on node worker-1" in body
    assert "<textarea" not in body and "<form" not in body
    assert "kind: DeviceClass" in body
    assert "X-Frame-Options" not in response
    assert response["Content-Security-Policy"].endswith("frame-ancestors * file:")
    page = client.get(f"/s/{shared}")
    assert page["X-Frame-Options"] == "DENY"
    assert page["Content-Security-Policy"].endswith("frame-ancestors 'none'")


def test_link_checkers_may_ask_with_head_and_htmx_gets_the_embed_results(client):
    shared = api_share(client, SIMPLE, "?node=worker-1").json()["id"]
    for path in (f"/s/{shared}", f"/s/{shared}.yaml", f"/s/{shared}/embed", f"/api/v1/scenarios/{shared}"):
        assert client.head(path).status_code == 200
    partial = client.get(f"/s/{shared}/embed", HTTP_HX_REQUEST="true").content.decode()
    assert partial.lstrip().startswith('<section id="results"') and "Allocated on node worker-1" in partial


def test_unknown_links_are_404(client):
    assert client.get("/s/aaaaaaaaaa").status_code == 404
    assert client.get("/s/aaaaaaaaaa.yaml").status_code == 404
    assert client.get("/s/aaaaaaaaaa/embed").status_code == 404
    missing = client.get("/api/v1/scenarios/aaaaaaaaaa")
    assert missing.status_code == 404 and "no shared scenario" in missing.json()["message"]
    assert client.get("/s/NOT-AN-ID").status_code == 404


def test_a_shared_page_from_an_older_playground_says_so(client, settings, tmp_path):
    row, _ = share(RunSettings(scenario=SIMPLE))
    SharedScenario.objects.filter(pk=row.pk).update(version="k8s-1.36+000000000000")
    settings.TEMPLATES = _templates_with_share_box(settings, tmp_path)
    body = client.get(f"/s/{row.id}").content.decode()
    assert "Shared with playground k8s-1.36+000000000000" in body


# ---- the API ---------------------------------------------------------------------------

def test_api_get_returns_the_stored_scenario_and_settings(client):
    gates = {"scheduler": {"DRAListTypeAttributes": True}}
    created = api_share_json(client, {"scenario": SIMPLE, "node": "worker-1", "gates": gates}).json()
    data = client.get(f"/api/v1/scenarios/{created['id']}").json()
    assert data["scenario"] == SIMPLE and data["node"] == "worker-1"
    assert data["gates"]["scheduler"]["DRAListTypeAttributes"] is True
    assert data["gates"]["apiserver"]["DRAListTypeAttributes"] is False
    assert set(data["gates"]["kubelet"]) == set(GATES)
    assert data["yaml"].endswith(f"/s/{created['id']}.yaml") and data["version"].startswith("k8s-1.37+")


@pytest.mark.parametrize("body, content_type, query, message", [
    (b"{not json", "application/json", "", "not JSON"),
    (b'{"kind": "List"}', "application/json", "", "application/yaml"),
    (b'{"scenario": 5}', "application/json", "", "must be a string"),
    (b'{"scenario": "a: 1", "gates": {"etcd": {}}}', "application/json", "", "unknown component"),
    (b'{"scenario": "a: 1", "gates": {"scheduler": {"Nope": true}}}', "application/json", "", "unknown feature gate"),
    (b'{"scenario": "a: 1", "gates": {"scheduler": {"DRAAdminAccess": 1}}}', "application/json", "", "true or false"),
    (b'{"scenario": "a: 1", "node": "' + b"n" * 300 + b'"}', "application/json", "", "node"),
    (b"a: 1", "application/yaml", "?featureGates=Nope=true", "unrecognized feature gate"),
    (b"a: 1", "application/yaml", "?featureGates=DRAAdminAccess=maybe", "invalid value"),
    (b"\xff\xfe bytes", "application/yaml", "", "UTF-8"),
    (b"a: 1\x00", "application/yaml", "", "NUL"),
    (b"  \n", "application/yaml", "", "empty"),
])
def test_api_refuses_bad_input_with_a_message(client, body, content_type, query, message):
    response = client.post(f"/api/v1/scenarios{query}", body, content_type=content_type)
    assert response.status_code == 400
    assert message in response.json()["message"]
    assert SharedScenario.objects.count() == 0


def test_api_only_creates_with_post(client):
    assert client.get("/api/v1/scenarios").status_code == 405


def test_api_needs_no_csrf_token():
    response = api_share(Client(enforce_csrf_checks=True), SIMPLE)
    assert response.status_code == 201


# ---- limits ----------------------------------------------------------------------------

def test_a_scenario_over_256_kib_is_refused_with_413_and_its_size(client):
    big = "#" * (MAX_SHARE_BYTES + 1)
    response = api_share(client, big)
    assert response.status_code == 413
    assert f"{MAX_SHARE_BYTES + 1:,} bytes" in response.json()["message"]
    assert "262,144" in response.json()["message"]
    page = client.post("/share", form_data(big), HTTP_HX_REQUEST="true")
    assert page.status_code == 413 and "262,144" in page.content.decode()
    exactly = api_share(client, "#" * MAX_SHARE_BYTES)
    assert exactly.status_code == 201


def test_an_oversize_form_body_is_413_not_a_crash(client, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    response = client.post("/share", form_data("#" * 5000))
    assert response.status_code == 413 and "limited to 262,144 bytes" in response.content.decode()


def test_shares_are_rate_limited_per_client_address(client, settings):
    settings.SHARE_RATE_LIMIT = "3/600"
    statuses = [api_share(client, f"# {i}\n").status_code for i in range(3)]
    refused = api_share(client, "# 4\n")
    assert statuses == [201, 201, 201]
    assert refused.status_code == 429 and 0 < int(refused["Retry-After"]) <= 600
    assert "Too many shares" in refused.json()["message"]
    form = client.post("/share", form_data("# 5\n"), HTTP_HX_REQUEST="true")
    assert form.status_code == 429 and "Too many shares" in form.content.decode()
    other = api_share(client, "# 6\n", REMOTE_ADDR="10.9.9.9")
    assert other.status_code == 201
    assert SharedScenario.objects.count() == 4
    # Reading is never limited.
    assert client.get(f"/api/v1/scenarios/{other.json()['id']}").status_code == 200


def test_forwarded_addresses_count_only_behind_a_configured_proxy(client, settings):
    settings.SHARE_RATE_LIMIT = "1/600"
    assert api_share(client, "# a\n", HTTP_X_FORWARDED_FOR="192.0.2.1").status_code == 201
    assert api_share(client, "# b\n", HTTP_X_FORWARDED_FOR="192.0.2.2").status_code == 429  # header ignored
    settings.PROXY_COUNT = 1
    assert api_share(client, "# c\n", HTTP_X_FORWARDED_FOR="203.0.113.7, 192.0.2.3").status_code == 201
    assert api_share(client, "# d\n", HTTP_X_FORWARDED_FOR="203.0.113.8, 192.0.2.3").status_code == 429


@pytest.mark.parametrize("remote, forwarded, proxies, expected", [
    ("192.0.2.1", "", 0, "192.0.2.1"),
    ("2001:db8:1:2:3:4:5:6", "", 0, "2001:db8:1:2::/64"),
    ("::ffff:192.0.2.9", "", 0, "192.0.2.9"),
    ("10.0.0.1", "198.51.100.1, 203.0.113.5", 1, "203.0.113.5"),
    ("10.0.0.1", "198.51.100.1, 203.0.113.5", 2, "198.51.100.1"),
    ("10.0.0.1", "", 1, "10.0.0.1"),
])
def test_client_address(rf, settings, remote, forwarded, proxies, expected):
    settings.PROXY_COUNT = proxies
    request = rf.get("/", REMOTE_ADDR=remote, HTTP_X_FORWARDED_FOR=forwarded)
    assert sharing.client_address(request) == expected


# ---- the page's Share button -----------------------------------------------------------

def test_share_button_without_javascript_posts_the_form_and_lands_on_the_link(client):
    response = client.post("/share", form_data(SIMPLE, node="worker-1"))
    assert response.status_code == 303
    row = SharedScenario.objects.get()
    assert response["Location"] == f"/s/{row.id}"
    assert row.node == "worker-1" and row.scenario == SIMPLE


def test_share_button_with_htmx_returns_the_link_box(client):
    response = client.post("/share", form_data(SIMPLE.replace("\n", "\r\n")), HTTP_HX_REQUEST="true")
    body = response.content.decode()
    row = SharedScenario.objects.get()
    assert response.status_code == 201
    assert f'value="http://testserver/s/{row.id}"' in body and "stored now" in body
    assert row.scenario == SIMPLE  # the browser's CRLF line breaks are the textarea's, not the scenario's
    fragment_url = re.search(r'href="(http://testserver/#s=[^"]+)"', body).group(1)
    assert read_fragment(fragment_url.split("#", 1)[1]).scenario == SIMPLE
    again = client.post("/share", form_data(SIMPLE), HTTP_HX_REQUEST="true")
    assert again.status_code == 200 and "already stored" in again.content.decode()
    assert api_share(client, SIMPLE).json()["id"] == row.id


def test_share_button_is_csrf_protected():
    strict = Client(enforce_csrf_checks=True)
    assert strict.post("/share", form_data(SIMPLE)).status_code == 403
    page = strict.get("/")
    token = page.cookies["csrftoken"].value
    response = strict.post("/share", form_data(SIMPLE), HTTP_X_CSRFTOKEN=token, HTTP_HX_REQUEST="true")
    assert response.status_code == 201


def test_refused_share_without_javascript_gets_a_page_that_says_why(client):
    response = client.post("/share", form_data(""))
    assert response.status_code == 400
    assert "nothing to share" in response.content.decode() and "Nothing was stored" in response.content.decode()


def _templates_with_share_box(settings, folder: Path):
    """index.html with the share box included, as the page will have it (added here until it is)."""
    original = (ROOT / "templates" / "index.html").read_text(encoding="utf-8")
    if "share_box.html" not in original:
        original = original.replace("</form>", '{% include "share_box.html" %}\n</form>', 1)
    (folder / "index.html").write_text(original, encoding="utf-8")
    templates = [dict(settings.TEMPLATES[0])]
    templates[0]["DIRS"] = [folder, *templates[0]["DIRS"]]
    return templates


def test_share_box_on_the_page_posts_the_form_fields_and_says_what_is_stored(client, settings, tmp_path):
    settings.TEMPLATES = _templates_with_share_box(settings, tmp_path)
    body = client.get("/").content.decode()
    box = body[body.index('id="share-box"'):]
    box = box[:box.index("</section>")]
    button = re.search(r"<button[^>]*share-button[^>]*>", box, re.S).group(0)
    assert 'form="playground"' in button and 'formaction="/share"' in button and 'formmethod="post"' in button
    assert 'hx-post="/share"' in button and 'hx-target="#share-result"' in button
    assert "Nothing is stored unless you press Share" in box and "keeps them for good" in box
    assert 'id="share-stateless"' in box and "share.js" in box
    assert ' name="' not in box  # nothing of the box is posted with the playground form
    defaults = json.loads(re.search(r'id="share-gate-defaults"[^>]*>(.*?)</script>', box, re.S).group(1))
    assert defaults == {name: info.default for name, info in GATES.items()}
    shared = api_share(client, SIMPLE).json()["id"]
    page = client.get(f"/s/{shared}").content.decode()
    assert f"Shared scenario <a href=\"http://testserver/s/{shared}\">" in page and "never" in page


# ---- fragment links --------------------------------------------------------------------

def test_fragment_links_round_trip_the_settings():
    settings = RunSettings(scenario=SIMPLE + "# ünïcode\n", node="worker-1",
                        gates={"scheduler": {"DRAListTypeAttributes": True}, "kubelet": {"DRADeviceTaints": False}})
    value = fragment(settings)
    assert value.startswith("s=") and re.fullmatch(r"s=[A-Za-z0-9_-]+", value)
    back = read_fragment("#" + value)
    assert (back.scenario, back.node, back.gates) == (settings.scenario, settings.node, settings.gates)


def test_fragment_is_raw_deflate_of_json_as_share_js_reads_it():
    import zlib

    value = fragment(RunSettings(scenario="a: 1\n"))[2:]
    data = json.loads(zlib.decompress(base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)), -15))
    assert data["v"] == 1 and data["scenario"] == "a: 1\n" and set(data["gates"]) == set(COMPONENT_KEYS)


def test_large_scenarios_get_no_fragment_link():
    import random

    rng = random.Random(7)
    noise = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(20000))
    assert fragment(RunSettings(scenario=f"# {noise}\n")) is None


def test_hostile_fragments_are_refused():
    import zlib

    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    bomb = packer.compress(b'{"v":1,"scenario":"' + b"a" * (64 * 1024 * 1024)) + packer.flush()
    with pytest.raises(ShareError):
        read_fragment("s=" + base64.urlsafe_b64encode(bomb).decode())
    with pytest.raises(ShareError):
        read_fragment("s=!!!")
    with pytest.raises(ShareError):
        read_fragment("x=abc")


# ---- share.js in a real browser (Debian's Chromium through Playwright; skipped without them) ----

# Playwright's sync API keeps an event loop in the test thread; these tests also read the database.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_FLAGS}


@pytest.fixture
def share_page(request, live_server, settings, tmp_path):
    """A browser page on the live server, whose index.html has the share box."""
    pytest.importorskip("playwright")
    settings.TEMPLATES = _templates_with_share_box(settings, tmp_path)
    browser = request.getfixturevalue("browser")
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    yield page
    context.close()


def page_outcome(page):
    return page.locator("#results .outcome h2")


@pytest.mark.django_db(transaction=True)
def test_a_fragment_link_fills_the_form_and_runs_it(share_page):
    from playwright.sync_api import expect

    example = gallery.get("compatibility-groups")
    gates = {c: {"DRADeviceCompatibilityGroups": True} for c in COMPONENT_KEYS}
    link = "/#" + fragment(RunSettings(scenario=example.scenario, node="worker-1", gates=gates))
    share_page.goto(link)
    expect(page_outcome(share_page)).to_contain_text("Allocated on node worker-1", timeout=15_000)
    assert share_page.locator("#scenario").input_value() == example.scenario
    assert share_page.locator("#node").input_value() == "worker-1"
    assert share_page.locator('input[name="gate-scheduler-DRADeviceCompatibilityGroups"]').is_checked()
    assert not share_page.locator('input[name="gate-scheduler-DRAListTypeAttributes"]').is_checked()
    expect(share_page.locator("#share-result")).to_contain_text("nothing is stored on the server")
    assert SharedScenario.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_link_without_storing_carries_the_form_as_the_server_reads_it(share_page):
    from playwright.sync_api import expect

    share_page.goto("/?example=version-skew")
    expect(share_page.locator("#share-stateless")).to_be_visible()
    share_page.locator("#share-stateless").click()
    expect(share_page.locator("#share-url")).to_have_value(re.compile(r"#s=[A-Za-z0-9_-]+$"))
    settings = read_fragment(share_page.locator("#share-url").input_value().split("#", 1)[1])
    example = gallery.get("version-skew")
    assert settings.scenario == example.scenario and settings.node == (example.node or "")
    assert settings.gates == run_settings.changed_gates(example.component_gates())
    assert SharedScenario.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_the_share_button_stores_the_form_and_shows_the_short_link(share_page):
    from playwright.sync_api import expect

    share_page.goto("/?example=simple-gpu")
    expect(page_outcome(share_page)).to_contain_text("Allocated")
    share_page.get_by_role("button", name="Share", exact=True).click()
    expect(share_page.locator("#share-url")).to_have_value(re.compile(r"/s/[a-z2-7]{10}$"))
    row = SharedScenario.objects.get()
    assert row.scenario == gallery.get("simple-gpu").scenario
    share_page.goto(share_page.locator("#share-url").input_value())
    expect(page_outcome(share_page)).to_contain_text("Allocated on node worker-1")
    expect(share_page.locator("#share-box")).to_contain_text(f"Shared scenario {row.id}")


@pytest.mark.django_db(transaction=True)
def test_a_refused_share_shows_its_reason_in_the_box(share_page, settings):
    from playwright.sync_api import expect

    settings.SHARE_RATE_LIMIT = "0/600"
    share_page.goto("/?example=simple-gpu")
    share_page.evaluate("() => { document.getElementById('scenario').value = '   '; }")
    share_page.get_by_role("button", name="Share", exact=True).click()
    expect(share_page.locator("#share-result .share-error")).to_contain_text("nothing to share")

