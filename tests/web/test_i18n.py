"""The playground in Korean and English (issue 23): the catalogues, the language switch, and the
Korean a page shows — the chrome, the why, the gallery's notes — with Kubernetes' own messages kept."""
import ast
import gettext
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command
from django.test import override_settings
from django.utils import translation
from django.utils.html import escape

from allocator import gallery, wording
from allocator.engine.gates import SUMMARIES

ROOT = Path(__file__).resolve().parents[2]
LOCALE = ROOT / "locale"
DOMAINS = ("django", "djangojs")
HANGUL = re.compile(r"[가-힣]")
KO = {"HTTP_ACCEPT_LANGUAGE": "ko-KR,ko;q=0.9,en;q=0.5"}


# --- the catalogues ------------------------------------------------------------------------------------


def read_po(path: Path) -> list[dict]:
    """The entries of a .po file: msgid, msgid_plural, msgstr (index -> text) and flags."""
    entries, entry, key = [], None, None
    for line in path.read_text(encoding="utf-8").splitlines() + [""]:
        if not line.strip():
            if entry is not None and entry["msgid"] is not None:
                entries.append(entry)
            entry = None
            continue
        if entry is None:
            entry = {"msgid": None, "plural": None, "msgstr": {}, "flags": set()}
        if line.startswith("#,"):
            entry["flags"] |= {flag.strip() for flag in line[2:].split(",")}
        elif line.startswith("#"):
            continue
        elif line.startswith("msgid_plural "):
            key, entry["plural"] = "plural", ast.literal_eval(line[len("msgid_plural "):])
        elif line.startswith("msgid "):
            key, entry["msgid"] = "msgid", ast.literal_eval(line[len("msgid "):])
        elif line.startswith("msgstr["):
            index = int(line[len("msgstr["):line.index("]")])
            key, entry["msgstr"][index] = index, ast.literal_eval(line[line.index("]") + 2:])
        elif line.startswith("msgstr "):
            key, entry["msgstr"][0] = 0, ast.literal_eval(line[len("msgstr "):])
        elif line.startswith('"'):
            text = ast.literal_eval(line)
            if key == "msgid":
                entry["msgid"] += text
            elif key == "plural":
                entry["plural"] += text
            else:
                entry["msgstr"][key] += text
    return entries


def messages(domain: str) -> list[dict]:
    return [e for e in read_po(LOCALE / "ko" / "LC_MESSAGES" / f"{domain}.po") if e["msgid"]]


@pytest.mark.parametrize("domain", DOMAINS)
def test_the_korean_catalogue_has_no_untranslated_and_no_fuzzy_entry(domain):
    entries = messages(domain)
    assert len(entries) > (200 if domain == "django" else 25)
    untranslated = [e["msgid"] for e in entries if not all(e["msgstr"].values()) or not e["msgstr"]]
    fuzzy = [e["msgid"] for e in entries if "fuzzy" in e["flags"]]
    assert untranslated == [] and fuzzy == []
    if shutil.which("msgfmt"):  # GNU gettext's own count and format checks, where it is installed
        done = subprocess.run(["msgfmt", "--check", "--statistics", "-o", "/dev/null",
                               str(LOCALE / "ko" / "LC_MESSAGES" / f"{domain}.po")],
                              capture_output=True, text=True, check=True)
        assert "untranslated" not in done.stderr and "fuzzy" not in done.stderr, done.stderr


@pytest.mark.parametrize("domain", DOMAINS)
def test_the_committed_mo_says_what_the_po_says(domain):
    """The compiled catalogues are committed (a fresh `make run` needs no GNU gettext): each .mo
    must carry every translation of its .po, so an edited .po without `compilemessages` fails here."""
    with open(LOCALE / "ko" / "LC_MESSAGES" / f"{domain}.mo", "rb") as handle:
        compiled = gettext.GNUTranslations(handle)
    for e in messages(domain):
        if e["plural"] is None:
            assert compiled.gettext(e["msgid"]) == e["msgstr"][0], e["msgid"]
        else:
            assert compiled.ngettext(e["msgid"], e["plural"], 1) == e["msgstr"][0], e["msgid"]


@pytest.mark.skipif(not shutil.which("xgettext"), reason="GNU gettext is not installed: makemessages cannot run")
@pytest.mark.parametrize("domain", DOMAINS)
def test_the_catalogue_holds_every_string_the_sources_mark(domain, tmp_path, monkeypatch):
    """`makemessages` run afresh finds no string the committed catalogue lacks (nor one it no longer needs)."""
    # A copy of the marked sources, so makemessages writes its catalogue there and never into locale/.
    for part in ("allocator", "playground", "templates", "static/playground"):
        shutil.copytree(ROOT / part, tmp_path / part, ignore=shutil.ignore_patterns("__pycache__", "*.yaml"))
    monkeypatch.chdir(tmp_path)
    with override_settings(LOCALE_PATHS=[tmp_path / "locale"]):
        call_command("makemessages", locale=["ko"], domain=domain, verbosity=0)
    fresh = {(e["msgid"], e["plural"]) for e in read_po(tmp_path / "locale" / "ko" / "LC_MESSAGES" / f"{domain}.po")
             if e["msgid"]}
    committed = {(e["msgid"], e["plural"]) for e in messages(domain)}
    assert sorted(fresh - committed) == [] and sorted(committed - fresh) == []


def test_the_gate_help_has_a_catalogue_entry_for_every_gate_summary():
    assert set(SUMMARIES.values()) <= set(wording.GATE_SUMMARIES)


# --- the language of a page ----------------------------------------------------------------------------


def test_english_is_the_default_and_the_page_says_so(client):
    response = client.get("/")
    body = response.content.decode()
    assert response.headers["Content-Language"] == "en"
    assert '<html lang="en"' in body and "Allocate</button>" in body
    assert not HANGUL.search(re.sub(r'lang="ko">한국어</button>', "", body))


def test_a_browser_asking_for_korean_gets_the_page_in_korean(client):
    response = client.get("/", **KO)
    body = response.content.decode()
    assert response.headers["Content-Language"] == "ko"
    assert "Accept-Language" in response.headers["Vary"]
    assert '<html lang="ko"' in body
    assert "할당하기</button>" in body and "노드 worker-1에 할당됨" in body
    assert "플레이그라운드" in body and "기능 게이트(feature gate)" in body
    assert '<a class="brand" href="/" lang="en">DRA Playground</a>' in body


def test_the_header_switch_remembers_the_language_in_a_cookie(client):
    body = client.get("/").content.decode()
    assert 'action="/i18n/setlang/"' in body and 'name="language" value="ko"' in body
    response = client.post("/i18n/setlang/", {"language": "ko", "next": "/examples/"})
    assert response.status_code == 302 and response.headers["Location"] == "/examples/"
    assert response.cookies["django_language"].value == "ko"
    # Without Accept-Language the cookie decides; and it wins over a browser asking for English.
    assert '<html lang="ko"' in client.get("/examples/").content.decode()
    assert '<html lang="ko"' in client.get("/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    client.post("/i18n/setlang/", {"language": "en", "next": "/"})
    assert '<html lang="en"' in client.get("/", **KO).content.decode()


def test_the_scripts_get_their_strings_from_the_javascript_catalogue(client):
    body = client.get("/jsi18n/", **KO).content.decode()
    assert json.dumps("Copied") in body and json.dumps("복사했어요") in body
    page = client.get("/", **KO).content.decode()
    assert '<script src="/jsi18n/" defer></script>' in page


# --- the why in Korean, Kubernetes' words kept ------------------------------------------------------


def test_the_why_rows_of_an_example_read_in_korean(client):
    body = client.get("/?example=simple-gpu", **KO).content.decode()
    assert "이유(노드 worker-1)" in body
    assert "요청의 셀렉터 #0이(가) false예요: device.capacity" in body
    assert "✔ 선택됨" in body and "✘ 거부됨" in body


def test_a_claim_that_cannot_be_allocated_keeps_the_schedulers_message_with_a_korean_gloss(client):
    body = client.get("/?example=partitionable-devices", **KO).content.decode()
    assert "할당할 수 없음" in body
    message = re.search(r'<p class="message">(.*?)</p>', body, re.S).group(1)
    assert 'lang="en"' in message and "cannot allocate all claims" in message
    assert "이 노드에서는 모든 클레임을 함께 할당할 수 없어요." in message
    assert re.search(r"집합 gpu-0의 카운터 memory: 6Gi이\(가\) 필요한데 2Gi 남았어요", body)


def test_english_reasons_are_the_engines_own_text(client):
    """English stays the source of record: the page's reason is the JSON's reason, word for word."""
    scenario = gallery.get("partitionable-devices")
    api = client.post("/api/v1/allocate", data=scenario.scenario, content_type="application/yaml").json()
    body = client.get("/?example=partitionable-devices").content.decode()
    reasons = [row["reason"] for claim in api["explanation"]["claims"] for r in claim["requests"]
               for row in r["candidates"] if row["verdict"] == "rejected"]
    assert reasons and all(str(escape(reason)) in body for reason in reasons)


def test_every_refusal_the_gallery_shows_has_korean_words(client):
    """Each rejected or tried row of every gallery example is worded in Korean from its code and
    facts; an English reason on a Korean page would be marked lang="en" and fail here."""
    for example in gallery.all_examples():
        api = client.post("/api/v1/allocate", data=json.dumps(
            {"scenario": example.scenario, "node": example.node or "", "gates": example.component_gates()}),
            content_type="application/json").json()
        rows = [row for claim in (api.get("explanation") or {}).get("claims", []) for r in claim["requests"]
                for row in r["candidates"]]
        with translation.override("ko"):
            kept = [row["reason"] for row in rows if wording.row_reason(_Row(row)).lang]
        assert kept == [], example.slug


class _Row:
    """A why row as the JSON gives it, read with the attribute names of explanation.WhyRow."""

    def __init__(self, data: dict):
        self.verdict, self.code, self.reason = data["verdict"], data.get("code"), data["reason"]
        self.facts, self.held_by, self.would = data.get("facts"), data.get("heldBy"), data.get("would")


# --- the gallery's notes ---------------------------------------------------------------------------------


def korean_notes() -> dict:
    data = yaml.safe_load((ROOT / "allocator" / "examples" / "index.ko.yaml").read_text(encoding="utf-8"))
    return {entry["slug"]: entry for entry in data["examples"]}


def test_every_korean_gallery_entry_is_whole_and_names_a_real_example():
    slugs = {e.slug for e in gallery.all_examples()}
    for slug, entry in korean_notes().items():
        assert slug in slugs
        assert all(entry.get(key) and HANGUL.search(entry[key]) for key in wording.NOTE_KEYS), slug


def test_the_gallery_and_an_example_show_their_notes_in_korean(client):
    translated = korean_notes()
    body = client.get("/examples/", **KO).content.decode()
    for example in gallery.all_examples():
        if example.slug in translated:
            assert translated[example.slug]["title"] in body
            assert example.summary not in body
        else:  # an example without Korean notes yet is shown in English, marked so
            assert f'id="{example.slug}" lang="en"' in body
    page = client.get("/?example=simple-gpu", **KO).content.decode()
    assert "예시: 간단한 GPU 클레임." in page and "살펴볼 곳:" in page and "해 볼 것:" in page
    assert gallery.get("simple-gpu").look not in page


def test_the_english_gallery_is_unchanged(client):
    body = client.get("/examples/").content.decode()
    for example in gallery.all_examples():
        assert str(escape(example.summary)) in body


def test_the_headline_of_every_gallery_example_that_fails_reads_in_korean():
    """The engine's headline is a Sentence: its English for the JSON, its form and parts for the wording."""
    said = []
    for example in gallery.all_examples():
        outcome = _run(example)
        explanation = outcome.explanation
        if explanation is None or not explanation.headline:
            continue
        with translation.override("ko"):
            words = wording.headline(explanation)
        assert words.lang is None and HANGUL.search(words.text), (example.slug, words.text)
        assert wording.headline(explanation).text == explanation.headline  # English: the engine's own
        said.append(explanation.headline.form)
    assert len(said) >= 2


def _run(example):
    from allocator.run_settings import run_in_process

    _, outcome = run_in_process(example.run_settings())
    return outcome


def test_the_replay_says_a_refusal_the_why_table_holds_in_korean(client):
    body = client.get("/?example=simple-gpu", **KO).content.decode()
    data = json.loads(re.search(r'<script id="replay-data" type="application/json">(.*?)</script>', body, re.S)
                      .group(1).replace("\\u003C", "<").replace("\\u003E", ">").replace("\\u0026", "&"))
    assert any(text.startswith("요청의 셀렉터 #0이(가) false예요") for text in data["strings"])
    english = client.get("/?example=simple-gpu").content.decode()
    assert "request selector #0 is false" in english


# --- the error page ---------------------------------------------------------------------------------------


def _broken_view(request):
    raise RuntimeError("secret detail of the failure in allocator/engine/whatever.py")


# This module is also a URLconf for the test below: the project's URLs plus one view that raises.
from django.urls import path  # noqa: E402

from playground.urls import handler500, urlpatterns as _project_urls  # noqa: E402,F401

urlpatterns = [path("broken", _broken_view), *_project_urls]


@pytest.mark.parametrize(("accept", "lang", "title"), [("en", "en", "Something went wrong"),
                                                       ("ko-KR,ko;q=0.9", "ko", "문제가 생겼어요")])
@override_settings(ROOT_URLCONF=__name__, DEBUG=False)
def test_an_error_in_a_view_shows_the_500_page_in_the_pages_language_and_no_traceback(accept, lang, title):
    from django.test import Client

    response = Client(raise_request_exception=False).get("/broken", HTTP_ACCEPT_LANGUAGE=accept)
    body = response.content.decode()
    assert response.status_code == 500
    assert f'<html lang="{lang}">' in body and f"<h1>{title}</h1>" in body
    assert "Traceback" not in body and "RuntimeError" not in body and "secret detail" not in body
    assert "whatever.py" not in body


# --- the Pods panel's sentences, the scheduler's kept (issue 23) ----------------------------------------

from django.template import Context, Template  # noqa: E402

from allocator import compare, panel_status_writers  # noqa: E402
from allocator.engine.run import allocate_text  # noqa: E402
from tests.engine import cluster as k  # noqa: E402

PODS_TAGS = Template(
    "{% load wording_tags %}{% for pod in pods %}<div>{{ pod.outcome|pod_outcome }} | {{ pod|pod_message }}"
    "{% for n in pod.nodes %}<p>{% node_verdict pod n %} {% if not n.fits %}{{ n|node_reason }}{% endif %}</p>{% endfor %}"
    "{% for note in pod.notes %}<p>{% pod_note pod note %}</p>{% endfor %}<p>{{ pod|ranking_note }}</p></div>{% endfor %}")


def pods_page(text: str, language: str) -> str:
    _, outcome = allocate_text(text)
    with translation.override(language):
        return PODS_TAGS.render(Context({"pods": outcome.pods}))


def one_gpu_cluster(*pods) -> str:
    return k.dump(
        k.node("node-a", taints=[{"key": "gpu", "value": "only", "effect": "NoSchedule"}]),
        k.node("node-b", labels={"fabric": "yes"}), k.node("node-c", unschedulable=True), k.device_class(),
        k.resource_slice("node-b", [k.gpu("gpu-0", 0)]), k.template("one-gpu", k.claim_spec(k.request())), *pods)


def test_a_pending_pods_scheduler_line_stays_verbatim_with_a_korean_gloss_counted_from_its_nodes():
    text = one_gpu_cluster(k.pod("first", templates=[("gpu", "one-gpu")]),
                           k.pod("second", templates=[("gpu", "one-gpu")]))
    body = pods_page(text, "ko")
    english = pods_page(text, "en")
    message = "0/3 nodes are available: 1 cannot allocate all claims, 1 node(s) had untolerated taint(s), " \
              "1 node(s) were unschedulable."
    assert str(escape(message)) in english and "gloss" not in english and not HANGUL.search(english)
    assert f'<span lang="en">{escape(message)}</span> <span class="gloss">— 노드 3개 중 파드를 배치할 수 있는 ' \
           "노드가 없어요. 노드 1개는 모든 클레임을 함께 할당할 수 없어요. 노드 1개는 파드가 톨러레이션(toleration)으로 " \
           "허용하지 않는 테인트(taint)가 있어요. 노드 1개는 스케줄링할 수 없는 노드로 표시돼 있어요.</span>" in body
    # each node's reason: the scheduler's words, then what they mean
    assert '✘ 거부됨 <span lang="en">node(s) had untolerated taint(s)</span> <span class="gloss">— 파드가 ' in body
    assert "스케줄링됨 | " in body and "✔ 선택됨" in body
    assert '<span lang="en">Pending</span>' in body  # a Kubernetes phase stays English


def test_the_no_backtracking_explanation_reads_in_korean_from_its_data():
    prefers_b = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 100, "preference": {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-b"]}]}}]}}
    text = k.dump(k.node("node-a"), k.node("node-b", labels={"fabric": "yes"}), k.device_class(),
                  k.resource_slice("node-a", [k.gpu("gpu-0", 0)]), k.resource_slice("node-b", [k.gpu("gpu-0", 0)]),
                  k.template("one-gpu", k.claim_spec(k.request())),
                  k.pod("anywhere", templates=[("gpu", "one-gpu")], affinity=prefers_b),
                  k.pod("fabric-only", templates=[("gpu", "one-gpu")], node_selector={"fabric": "yes"}))
    body = pods_page(text, "ko")
    assert ("스케줄러는 파드를 한 번에 하나씩 배치하고 한 번 정한 배치를 다시 고치지 않아요. 그래서 이 순서로는 파드 "
            "하나가 Pending으로 남아요. 하지만 default/anywhere은(는) node-a에, default/fabric-only은(는) node-b에 "
            "두면 모든 파드가 들어가요") in body
    assert "never revisits" in pods_page(text, "en")


def test_a_tie_in_the_scores_is_explained_in_korean():
    text = k.dump(k.node("node-a"), k.node("node-b"), k.pod("web", requests={"cpu": "1", "memory": "1Gi"}))
    body = pods_page(text, "ko")
    assert "노드 2개가 최고 점수를 함께 받았어요(node-a, node-b)" in body and "share the best score" not in body


NOTES_TAGS = Template(
    "{% load wording_tags %}{% for pod in pods %}<div>{{ pod|pod_message }}{% for n in pod.nodes %}"
    "{% for d in n.details %}<p>{{ d|pod_detail }}</p>{% endfor %}{% endfor %}"
    "{% for note in pod.notes %}<p>{% pod_note pod note %}</p>{% endfor %}</div>{% endfor %}")


def notes_page(text: str, language: str) -> tuple[str, object]:
    _, outcome = allocate_text(text)
    with translation.override(language):
        return NOTES_TAGS.render(Context({"pods": outcome.pods})), outcome


def test_the_pods_notes_and_the_numbers_behind_a_nodes_reason_read_in_korean_from_their_data():
    big = k.pod("big", requests={"cpu": "2"})
    big["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    gated = k.pod("gated")
    gated["spec"]["schedulingGates"] = [{"name": "example.com/wait"}]
    grouped = k.pod("grouped")
    grouped["spec"]["schedulingGroup"] = {"podGroupName": "team"}
    text = k.dump(k.node("node-a", taints=[{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}],
                         allocatable={"cpu": "4", "memory": "4Gi", "pods": "110"}),
                  k.node("node-b", allocatable={"cpu": "1", "memory": "1Gi", "pods": "110"}),
                  big, gated, k.pod("orphan", templates=[("gpu", "no-such-template")]), grouped)
    body, outcome = notes_page(text, "ko")
    english, _ = notes_page(text, "en")
    assert not HANGUL.search(english) and 'lang="en"' not in english
    assert "cpu: the pod asks 2, 0 of 1 in use" in english and "taint dedicated=infra:NoSchedule is not tolerated" in english
    # the JSON keeps the engine's English, whatever the page's language
    from allocator.engine.report import to_json

    with translation.override("ko"):
        data = {p["name"]: p for p in json.loads(to_json(outcome))["pods"]}
    assert data["gated"]["notes"] == ["the scheduler does not try the pod until this is resolved (PreEnqueue)"]
    assert data["big"]["nodes"][1]["details"] == ["cpu: the pod asks 2, 0 of 1 in use"]
    # node details: the taint and NodeResourcesFit's numbers
    assert "<p>테인트 dedicated=infra:NoSchedule을(를) 허용하는 톨러레이션이 없어요</p>" in body
    assert "<p>cpu: 파드 요청 2, 사용 중 0 / 전체 1</p>" in body
    # not modelled: the plugin names stay
    assert "모델링하지 않음: 이 파드의 호스트 포트(NodePorts)." in body
    # scheduling gates: the plugin's message verbatim, glossed; PreEnqueue's note in Korean
    assert ('<span lang="en">waiting for scheduling gates: [example.com/wait]</span> <span class="gloss">— 스케줄링 '
            "게이트 example.com/wait가 모두 없어질 때까지 파드는 기다려요.</span>") in body
    assert "이 문제가 풀릴 때까지 스케줄러는 이 파드를 시도하지 않아요(PreEnqueue)" in body
    rows = pods_page(text, "ko").split("<div>")[2]  # the gated pod: its line, then each node's reason, glossed
    assert rows.count('<span lang="en">waiting for scheduling gates: [example.com/wait]</span> <span class="gloss">— '
                      "스케줄링 게이트 example.com/wait가 모두 없어질 때까지 파드는 기다려요.</span>") == 3
    # the resourceclaim controller's event message stays as Kubernetes writes it inside the Korean sentence
    assert ('resourceclaim 컨트롤러가 클레임을 만들 수 없어요(이벤트 FailedResourceClaimCreation: PodResourceClaim gpu: '
            "resource claim template &quot;no-such-template&quot;: resourceclaimtemplate.resource.k8s.io "
            "&quot;no-such-template&quot; not found)") in body
    assert "resourceclaim 컨트롤러가 이 파드의 리소스클레임을 아직 만들지 않았어요." in body
    # a PodGroup with GenericWorkload off
    assert "GenericWorkload 기능 게이트가 꺼져 있어요. 스케줄러는 파드그룹(PodGroup)을 모르고" in body
    notes = [n for p in body.split("<div>")[1:] for n in re.findall(r"<p>(.*?)</p>", p)]
    assert notes and not [n for n in notes if 'lang="en"' in n]


POOLS_TAGS = Template("{% load wording_tags %}{% for p in pools %}<li>{{ p.reason|pool_reason }}</li>{% endfor %}")


def test_a_pools_reason_reads_in_korean_and_the_allocators_own_words_stay_with_a_gloss():
    incomplete = k.dump(k.node("node-a"), k.device_class(), k.resource_slice("node-a", [k.gpu("gpu-0", 0)], count=2),
                        k.claim("one", k.claim_spec(k.request())))
    invalid = k.dump(k.node("node-b"), k.device_class(), k.resource_slice("node-b", [k.gpu("gpu-0", 0)], count=2),
                     k.resource_slice("node-b", [k.gpu("gpu-0", 0)], count=2, suffix="q9z8w"),
                     k.claim("one", k.claim_spec(k.request())))
    pages = {}
    for name, text, node in (("incomplete", incomplete, "node-a"), ("invalid", invalid, "node-b")):
        _, outcome = allocate_text(text, node_name=node)
        for language in ("en", "ko"):
            with translation.override(language):
                pages[name, language] = POOLS_TAGS.render(Context({"pools": outcome.explanation.pools}))
                if language == "ko" and name == "invalid":
                    report = wording.human_report(outcome)
    assert pages["incomplete", "en"] == "<li>1 of 2 slices (resourceSliceCount) of generation 1 are visible to the " \
        "scheduler</li>"
    assert pages["incomplete", "ko"] == "<li>세대 1의 슬라이스 2개(resourceSliceCount) 중 1개만 스케줄러에 보여요</li>"
    assert pages["invalid", "en"] == "<li>duplicate device name gpu-0</li>"
    assert pages["invalid", "ko"] == '<li><span lang="en">duplicate device name gpu-0</span> <span class="gloss">— ' \
        "풀의 디바이스 두 개가 같은 이름 gpu-0을(를) 써요.</span></li>"
    assert "풀 gpu.example.com/node-b: 유효하지 않음: duplicate device name gpu-0 (풀의 디바이스 두 개가" in report
    with translation.override("ko"):
        assert wording.slice_reason("it publishes sharedCounters and DRAPartitionableDevices is disabled").text == \
            "sharedCounters를 게시하는데 DRAPartitionableDevices 기능 게이트가 비활성화되어 있어요"


def test_the_scheduling_runs_warnings_and_a_pods_workload_read_in_korean_on_the_page_and_in_the_cli(client, capsys):
    from allocator import cli

    body = client.get("/?example=deployment-claim-template", **KO).content.decode()
    assert "파드: 호스트 포트, 볼륨, 우선순위는 검사하지 않고" in body and "host ports, volumes and priority" not in body
    english = client.get("/?example=deployment-claim-template").content.decode()
    assert "Pods: host ports, volumes and priority are not checked" in english
    path = ROOT / "allocator" / "examples" / "deployment-claim-template.yaml"
    assert cli.main([str(path), "--lang", "ko"]) == 0
    report = capsys.readouterr().out
    assert "\n경고: 파드: 호스트 포트, 볼륨, 우선순위는 검사하지 않고" in report
    assert re.search(r"\n  만든 곳: Deployment inference/server \(ReplicaSet inference/server-\w+\)\n", report)
    assert cli.main([str(path)]) == 0
    assert "Warning: Pods: host ports" in capsys.readouterr().out


def test_a_gang_and_a_shared_claim_are_said_in_korean_from_their_data():
    from allocator.engine.gates import ComponentGates, gates_from_dict
    from tests.engine.test_podgroups import cluster, member, pod_group

    on = ComponentGates.uniform(gates_from_dict({"DRAWorkloadResourceClaims": True, "GenericWorkload": True}))
    _, outcome = allocate_text(cluster(pod_group(min_count=2), member("t-0"), member("t-1")), gates=on)
    with translation.override("ko"):
        said = [wording.pod_note(outcome.pods[0], n) for n in outcome.pods[0].notes]
    assert [w.text for w in said if "갱(gang)" in w] == [
        "파드그룹(PodGroup) default/trainers는 갱(gang) 스케줄링을 요청해요(minCount 2). kube-scheduler는 대기 중인 "
        "그 파드를 한 번의 파드그룹 사이클에서 함께 다루고, 모두 바인딩하거나 하나도 바인딩하지 않아요"]
    held = k.claim("shared-gpu", k.claim_spec(k.request()), allocation=k.allocation_on("node-b", ("gpu", "gpu-0")),
                   reserved_for=["runner"])
    text = k.dump(k.node("node-a"), k.node("node-b"), k.device_class(), k.resource_slice("node-b", [k.gpu("gpu-0", 0)]),
                  held, k.pod("runner", claims=[("gpu", "shared-gpu")], node_name="node-b"),
                  k.pod("helper", claims=[("gpu", "shared-gpu")]))
    body, _ = notes_page(text, "ko")
    assert ("클레임 default/shared-gpu는 할당됐고 runner가 사용 중이에요. 파드가 이 클레임을 공유하므로, 그 할당을 쓸 수 있는 "
            "곳에서만 실행될 수 있어요") in body


def test_a_scheduling_runs_message_names_its_pod_in_korean_and_keeps_the_schedulers_words(client):
    text = one_gpu_cluster(k.pod("first", templates=[("gpu", "one-gpu")]),
                           k.pod("second", templates=[("gpu", "one-gpu")]), k.pod("third", templates=[("gpu", "one-gpu")]))
    message = "0/3 nodes are available: 1 cannot allocate all claims, 1 node(s) had untolerated taint(s), " \
              "1 node(s) were unschedulable."
    body = client.post("/", {"scenario": text, "gates-submitted": "1"}, HTTP_HX_REQUEST="true", **KO).content.decode()
    assert (f'<p class="message">파드 default/second: <span lang="en">{escape(message)}</span> (스케줄링되지 않은 파드 '
            "1개 더) <span class=\"gloss\">— 노드 3개 중") in body
    english = client.post("/", {"scenario": text, "gates-submitted": "1"}, HTTP_HX_REQUEST="true").content.decode()
    assert f'<p class="message">pod default/second: {escape(message)} (1 more pod not scheduled)' in english


ESTIMATED = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}, creationTimestamp: "2026-01-01T00:00:00Z"}
    spec:
      containers: [{name: web, image: web:1.0}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: nightly, namespace: default}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: job, image: job:1.0}]
"""


def test_a_pods_workload_and_an_estimated_hash_read_in_korean():
    _, outcome = allocate_text(ESTIMATED)
    web, job = (next(p.workload for p in outcome.pods if p.name.startswith(name)) for name in ("web-", "nightly-"))
    assert web.startswith("Deployment default/web (ReplicaSet default/web-") and web.endswith(", hash estimated)")
    with translation.override("ko"):
        label = wording.workload_label(web)
        assert label.text == web.replace(", hash estimated)", ", pod-template-hash는 추정값)")
        assert label.lang is None
        assert wording.workload_label(job).text == job == "Job default/nightly"
        assert "hash estimated" not in wording.workload_line(web, 2)
    with translation.override("en"):
        assert wording.workload_label(web) == web


def test_the_workload_line_and_score_labels_have_korean_words():
    with translation.override("ko"):
        assert wording.workload_line("Deployment default/web", 3) == \
            "Deployment default/web을(를) 위해 만든 파드(3개, 컨트롤러가 만드는 그대로)"
        assert wording.score_label("NodeAffinity") == "어피니티" and wording.score_label("DynamicResources") == "DRA"
    with translation.override("en"):
        assert wording.workload_line("Deployment default/web", 1).startswith("Pods made for Deployment default/web (1,")


# --- compare's table of differences --------------------------------------------------------------------


def test_the_compare_table_of_differences_reads_in_korean_and_its_data_stays_english(client):
    body = client.get("/compare", **KO).content.decode()
    table = body.split('id="differences"')[1].split("</section>")[0]
    assert re.search(r'<tr class="diff-outcome"><td><span class="badge">결과</span></td><th scope="row">결과</th>\s*'
                     r'<td class="side-a">할당할 수 없음</td><td class="side-b">gpu-node-1에서 할당됨</td>', table)
    assert re.search(r'<tr class="diff-claim"><td><span class="badge">클레임</span>.*?default/mig-job.*?'
                     r'<td class="side-a">보류 중</td><td class="side-b">할당됨: mig: gpu-node-1/', table, re.S)
    assert ">불완전함<" in table and ">사용 가능<" in table and ">선택됨<" in table
    english = client.get("/compare").content.decode().split('id="differences"')[1].split("</section>")[0]
    assert ">unsatisfiable<" in english and ">allocated on gpu-node-1<" in english and not HANGUL.search(english)


def test_a_difference_compares_as_its_english_data_whatever_the_page_language():
    from allocator.workshops.library import shipped

    lesson = next(lesson for w in shipped().values() for lesson in w.lessons if lesson.compare is not None)
    from allocator.workshops.playground import run_inline

    with translation.override("ko"):
        diffs = compare.differences(run_inline(lesson.start)[1], run_inline(lesson.compare)[1])
    outcome = next(d for d in diffs if d.kind == "outcome")
    assert (outcome.a, outcome.b) == ("unsatisfiable", "allocated on gpu-node-1")
    assert outcome.b.words == "gpu-node-1에서 할당됨"


# --- who may write a claim's status ---------------------------------------------------------------------


def test_the_status_writers_panel_words_its_rows_and_reasons_in_korean():
    from allocator.run_settings import RunSettings, run_in_process
    from tests.engine.test_statusauth import plugin_scenario

    settings = RunSettings(scenario=plugin_scenario())
    scenario, outcome = run_in_process(settings)
    named = panel_status_writers.Identity(service_account="drivers/plugin", node="worker-2", verb="PATCH")
    with translation.override("ko"):
        view = panel_status_writers.build(outcome, scenario, settings, named)
    local = next(c for c in view.claims if c.claim == "default/local-gpu")
    rows = {r.writer: r.cells for r in local.rows}
    assert {"kube-scheduler", "resource-claim controller", "노드 worker-1의 gpu-plugin",
            "노드 worker-2의 서비스 어카운트 drivers/plugin (PATCH)"} == set(rows)
    allowed = rows["노드 worker-1의 gpu-plugin"][2]
    assert allowed.reasons[-1].startswith('associated-node 검사: ClusterRoleBinding plugin') and allowed.reasons[-1].lang == "ko"
    refused = rows["노드 worker-2의 서비스 어카운트 drivers/plugin (PATCH)"][2]
    assert refused.failed == "arbitrary-node 검사"
    assert refused.message.startswith("ResourceClaim.resource.k8s.io")  # the apiserver's message, verbatim


# --- the CLI's report and the API's text in Korean ----------------------------------------------------------


def test_the_cli_report_in_korean_keeps_the_schedulers_message_and_json_stays_english(capsys, tmp_path):
    from allocator import cli

    path = tmp_path / "scenario.yaml"
    path.write_text(gallery.get("partitionable-devices").scenario, encoding="utf-8")
    assert cli.main([str(path), "--lang", "ko"]) == 1
    report = capsys.readouterr().out
    assert report.startswith("할당할 수 없음: 0/1 nodes are available: 1 cannot allocate all claims.\n")
    assert "이유(노드 worker-1):" in report and "집합 gpu-0의 카운터 memory: 6Gi이(가) 필요한데 2Gi 남았어요" in report
    assert cli.main([str(path), "--lang", "ko", "-o", "json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["message"].startswith("0/1 nodes are available") and not HANGUL.search(json.dumps(data, ensure_ascii=False))
    assert cli.main([str(path)]) == 1
    assert capsys.readouterr().out.startswith("Cannot allocate: 0/1 nodes")


def test_the_api_adds_a_korean_text_object_with_lang_ko_and_keeps_its_english_keys(client):
    scenario = gallery.get("partitionable-devices").scenario
    english = client.post("/api/v1/allocate", data=scenario, content_type="application/yaml").json()
    korean = client.post("/api/v1/allocate?lang=ko", data=scenario, content_type="application/yaml").json()
    text = korean.pop("text")
    assert korean == english and "text" not in english
    assert text["lang"] == "ko" and text["outcome"] == "할당할 수 없음"
    assert text["messageGloss"] == "노드 1개 중 파드를 배치할 수 있는 노드가 없어요. 노드 1개는 모든 클레임을 함께 할당할 수 없어요."
    assert HANGUL.search(text["headline"])
    reasons = {(r["claim"], r["device"]): r["reason"] for r in text["reasons"]}
    assert reasons[("default/training", "gpu-0-part-b")].startswith("집합 gpu-0의 카운터 memory")
    unknown = client.post("/api/v1/allocate?lang=xx", data=scenario, content_type="application/yaml").json()
    assert unknown == english


def test_the_apis_korean_text_says_a_pods_notes_and_its_gate_message_gloss(client):
    gated = k.pod("gated")
    gated["spec"]["schedulingGates"] = [{"name": "example.com/wait"}]
    scenario = k.dump(k.node("node-a"), gated)
    english = client.post("/api/v1/allocate", data=scenario, content_type="application/yaml").json()
    korean = client.post("/api/v1/allocate?lang=ko", data=scenario, content_type="application/yaml").json()
    text = korean.pop("text")
    assert korean == english
    assert english["pods"][0]["notes"] == ["the scheduler does not try the pod until this is resolved (PreEnqueue)"]
    pod = text["pods"][0]
    assert pod["message"] == "waiting for scheduling gates: [example.com/wait]"  # the plugin's words
    assert pod["messageGloss"] == "스케줄링 게이트 example.com/wait가 모두 없어질 때까지 파드는 기다려요."
    assert pod["notes"] == ["이 문제가 풀릴 때까지 스케줄러는 이 파드를 시도하지 않아요(PreEnqueue)"]


def test_the_apis_korean_text_says_the_runs_warnings_beside_the_english_ones(client):
    bare = k.node("node-a")
    bare["status"].pop("allocatable", None)
    scenario = k.dump(bare, k.pod("web"))
    english = client.post("/api/v1/allocate", data=scenario, content_type="application/yaml").json()
    korean = client.post("/api/v1/allocate?lang=ko", data=scenario, content_type="application/yaml").json()
    text = korean.pop("text")
    assert korean == english
    assert english["warnings"][-1]["message"] == (
        "node node-a: no status.allocatable, so CPU, memory and pod count are not checked there (a cluster dump has "
        "it; add it to a hand-written Node to model NodeResourcesFit)")
    assert [w["line"] for w in text["warnings"]] == [w["line"] for w in english["warnings"]]
    assert all(HANGUL.search(w["message"]) for w in text["warnings"]), text["warnings"]
    assert "node-a" in text["warnings"][-1]["message"]


# --- the glossary's terms in the catalogue ----------------------------------------------------------------

SPEC_GLOSSARY = Path("/work/shared/spec/glossary-ko.md")


def glossary_terms() -> list[tuple[str, str]]:
    """docs/glossary-ko.md's table of the terms the catalogue check reads: (English term, Korean word)."""
    text = (ROOT / "docs" / "glossary-ko.md").read_text(encoding="utf-8")
    table = text.split("## The terms the catalogue check reads", 1)[1]
    return [tuple(c.strip() for c in line.strip().strip("|").split("|"))
            for line in table.splitlines() if line.startswith("| ") and not line.startswith(("| term", "| ---"))]


# What the English term means is not what the glossary's term means here (reviewed; keep it short).
TERM_EXCEPTIONS = {
    ("role", "bootstrap roles"): "the bootstrap ClusterRole objects: a kind, 롤 (glossary: kind 롤, concept 역할)",
    ("share", "nodes share the best score"): "the verb, not a device's share (공유(share), glossary §3.7)",
}
# Outside the English words: code, placeholders, markup, and names with dots, colons, capitals or hyphens.
NOT_WORDS = re.compile(r"<code>.*?</code>|`[^`]*`|%\(\w+\)[sd]|\{\w+\}|<[^>]+>|\S*[./:_=\[\]{}]\S*"
                       r"|\b\w*[A-Z]\w*\b|\w+(-\w+)+")


def test_the_catalogue_uses_the_glossarys_korean_for_each_glossary_term_its_english_has():
    terms = glossary_terms()
    assert len(terms) > 80
    wrong = []
    for entry in messages("django"):
        english = NOT_WORDS.sub(" ", entry["msgid"])
        korean = " ".join(entry["msgstr"].values()).replace(" ", "")
        for term, word in terms:
            if "-" in term:
                found = term in entry["msgid"]
            else:
                found = re.search(r"(?<![\w-])" + re.escape(term).replace(r"\ ", " ") + r"(s|es|d|ed)?(?![\w-])",
                                  english, re.I)
            if found and word.replace(" ", "") not in korean and not any(
                    t == term and part in entry["msgid"] for t, part in TERM_EXCEPTIONS):
                wrong.append((term, word, entry["msgid"]))
    assert wrong == []


@pytest.mark.skipif(not SPEC_GLOSSARY.exists(), reason="the team's glossary (shared/spec/glossary-ko.md) is not here")
def test_each_term_of_the_check_is_the_team_glossarys_own():
    rows = [line for line in SPEC_GLOSSARY.read_text(encoding="utf-8").splitlines() if line.startswith("| ")]
    for term, word in glossary_terms():
        assert any(term in row.split("|")[1].lower() and word in re.sub(r"\(.*?\)", "", row.split("|")[2])
                   for row in rows), (term, word)


def test_every_refusal_the_replay_of_a_gallery_example_shows_reads_in_korean():
    """A refusal met at another moment of the search than the why table's (so with other facts) is
    said from its code; none stays English."""
    from allocator import panels

    met = 0
    for example in gallery.all_examples():
        explanation = _run(example).explanation
        if explanation is None or not explanation.trace.steps:
            continue
        with translation.override("ko"):
            strings = panels.replay_data(explanation)["strings"]
        english = explanation.trace.strings
        for step in explanation.trace.steps:
            if english[step[0]] == "reject":
                met += 1
                assert HANGUL.search(strings[step[5]]), (example.slug, english[step[5]])
        with translation.override("en"):
            assert panels.replay_data(explanation)["strings"] == english
    assert met > 20


def test_a_replay_refusal_the_why_table_does_not_hold_is_said_in_korean_with_its_own_numbers():
    """The replay keeps the facts of every refusal it meets (not in the JSON); one met at another moment
    than the why table's is said from them, so its numbers and names are the ones of that moment."""
    from allocator import panels
    from allocator.engine.report import to_json

    met = 0
    for example in gallery.all_examples():
        outcome = _run(example)
        explanation = outcome.explanation
        if explanation is None or not explanation.trace.steps:
            continue
        table = {row.reason for row in explanation.rows()}
        with translation.override("ko"):
            strings = panels.replay_data(explanation)["strings"]
        for index, refusal in explanation.trace.refusals.items():
            english = explanation.trace.strings[index]
            if english in table or not refusal["facts"]:
                continue
            met += 1
            values = [str(v) for v in refusal["facts"].values() if isinstance(v, (str, int))]
            assert values and all(v in strings[index] for v in values), (example.slug, english, strings[index])
            assert HANGUL.search(strings[index]) and strings[index] != english
        assert "refusals" not in json.dumps(json.loads(to_json(outcome, with_explanation=True)).get("explanation") or {})
    assert met >= 1


def test_the_cli_report_in_korean_words_pods_and_the_status_writers(capsys):
    from allocator import cli

    examples = ROOT / "allocator" / "examples"
    assert cli.main([str(examples / "pods.yaml"), "--lang", "ko"]) == 1
    report = capsys.readouterr().out
    assert "파드 ml/trainer-0: 노드 gpu-node-2에 스케줄링됨\n" in report
    assert ("  0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 cannot allocate all claims.\n"
            "  (노드 3개 중 파드를 배치할 수 있는 노드가 없어요. 노드 1개는 파드가 톨러레이션(toleration)으로 허용하지 않는 "
            "테인트(taint)가 있어요. 노드 2개는 모든 클레임을 함께 할당할 수 없어요.)\n") in report
    assert "스코어링: 실행 가능한 노드가 하나뿐이에요." in report and "이유(파드 ml/trainer-1, 노드 gpu-node-1):" in report
    assert cli.main([str(examples / "example-driver-rbac.yaml"), "--lang", "ko"]) == 0
    report = capsys.readouterr().out
    assert "각 클레임의 상태를 쓸 수 있는 주체:\n  default/local-gpu (노드 worker-1에 고정됨):" in report
    assert "노드 worker-1의 dra-example-driver-kubeletplugin, devices:gpu.example.com: 허용됨" in report
    assert '거부됨(422, arbitrary-node 검사): ResourceClaim.resource.k8s.io "local-gpu" is invalid' in report


def test_a_pod_waiting_in_prebind_for_binding_conditions_is_said_in_korean_with_the_event_verbatim():
    from tests.engine.test_pods import pod_result, two_gpu_nodes

    text = k.dump(*two_gpu_nodes(k.pod("trainer", templates=[("gpu", "single-gpu")])))
    text = text.replace("name: gpu-0\n", "name: gpu-0\n      bindingConditions: [dra.example.com/attached]\n"
                        "      bindingFailureConditions: [dra.example.com/failed]\n      bindsToNode: true\n")
    _, outcome = allocate_text(text)
    trainer = pod_result(outcome, "trainer")
    with translation.override("ko"):
        [said] = [wording.pod_note(trainer, n).text for n in trainer.notes if "PreBind" in n]
    assert said.startswith("아직 바인딩되지 않았어요: 클레임 default/trainer-gpu-")
    assert ("PreBind에서 기다리며(이벤트 \"waiting for binding conditions for device on node node-b\") 600초까지 "
            "5초마다 확인해요") in said
    assert "bindingFailureCondition(dra.example.com/failed)이 True가 되거나 시간이 다 되면 이번 시도는 실패해요" in said


def test_gated_pods_of_a_short_gang_and_of_a_missing_group_are_said_in_korean():
    from allocator.engine.gates import ComponentGates, gates_from_dict
    from tests.engine.test_podgroups import cluster, member, pod_group

    groups = ComponentGates.uniform(gates_from_dict({"DRAWorkloadResourceClaims": True, "GenericWorkload": True}))
    runs = [(cluster(pod_group(min_count=3), member("t-0"), member("t-1")), "갱(gang) 스케줄링을 요청하고(minCount 3)",
             "파드는 갱(gang) default/trainers의 파드가 3개가 될 때까지 스케줄링 큐 밖에서 기다려요(지금 2개)."),
            (cluster(member("t-0", group="absent")), "파드그룹(PodGroup) default/absent에 속하지만",
             "파드는 파드그룹(PodGroup) default/absent가 생길 때까지 스케줄링 큐 밖에서 기다려요.")]
    for text, korean, gloss in runs:
        _, outcome = allocate_text(text, gates=groups)
        pod = outcome.pods[0]
        assert not any(n.startswith("not modelled:") for n in pod.notes), pod.notes
        with translation.override("ko"):
            said = [wording.pod_note(pod, n).text for n in pod.notes]
            assert wording.pod_message_gloss(pod) == gloss
        assert any(korean in s and "GangScheduling PreEnqueue" in s for s in said), said


def test_a_failed_gang_names_the_pod_that_did_not_fit_in_korean():
    from allocator.engine.gates import ComponentGates, gates_from_dict
    from tests.engine.test_podgroups import cluster, member, pod_group

    on = ComponentGates.uniform(gates_from_dict({"DRAWorkloadResourceClaims": True, "GenericWorkload": True}))
    _, outcome = allocate_text(cluster(pod_group(claims=(), min_count=3), member("t-0"), member("t-1"),
                                       member("t-2")), gates=on)
    placed, failing = outcome.pods[0], outcome.pods[2]
    with translation.override("ko"):
        said = [wording.pod_note(placed, n).text for n in placed.notes]
        blocked = [wording.pod_note(failing, n).text for n in failing.notes]
        assert wording.pod_message_gloss(placed) == (
            "파드그룹을 스케줄링할 수 없으므로(minCount (3) cannot be satisfied: 2 scheduled, 0 remaining) 그 파드는 "
            "하나도 바인딩되지 않아요.")
    assert ("파드그룹(PodGroup) default/trainers는 갱(gang)이고(minCount 3) 파드 default/t-2가 들어맞지 않으므로"
            "(0/2 nodes are available: 2 cannot allocate all claims.) 스케줄링될 수 있는 파드가 3개보다 적어요. "
            "kube-scheduler는 그 파드를 하나도 바인딩하지 않으므로, 이 파드는 노드를 찾았는데도 Pending으로 남아요") in said
    assert any(b.startswith("파드그룹(PodGroup) default/trainers는 갱(gang)이에요(minCount 3). 이 파드가 들어맞지 않으므로")
               for b in blocked), blocked


WORKLOADS = """
apiVersion: v1
kind: Node
metadata: {name: node-a}
---
apiVersion: v1
kind: Node
metadata: {name: node-b}
spec:
  taints: [{key: gpu, value: "true", effect: NoSchedule}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: default}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: agent, image: agent:1.0}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: idle, namespace: default}
spec:
  replicas: 0
  selector: {matchLabels: {app: idle}}
  template:
    metadata: {labels: {app: idle}}
    spec:
      containers: [{name: idle, image: idle:1.0}]
"""


def test_a_workloads_own_notes_are_said_in_korean_from_their_data():
    _, outcome = allocate_text(WORKLOADS)
    english = [str(w.message) for w in outcome.warnings if w.kind in ("DaemonSet", "Deployment")]
    assert "no pod on 1 node (node-b: the pods do not tolerate the node's taint gpu=true:NoSchedule)" in english
    assert "0 replicas: its controller creates no pods" in english
    with translation.override("ko"):
        said = [wording.warning_message(w.message).text for w in outcome.warnings if w.kind in ("DaemonSet", "Deployment")]
        lines = [wording.warning_line(w) for w in outcome.warnings if w.kind == "DaemonSet"]
    assert "파드 없음: 노드 1개(node-b: 파드가 노드의 테인트 gpu=true:NoSchedule를 용인하지 않아요)" in said
    assert "레플리카 0개: 컨트롤러가 파드를 만들지 않아요" in said
    assert any("파드 없음: 노드 1개" in line for line in lines)


def test_a_workload_that_makes_no_pods_says_so_in_korean_keeping_the_apiservers_words():
    broken = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\nspec:\n  replicas: 1\n"
        "---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: train, namespace: default}\nspec:\n"
        "  template: {spec: {containers: [{name: c, image: x}]}}\n  parallelism: many\n")
    _, outcome = allocate_text(broken + "---\n" + k.dump(k.node("node-a")))
    english = {w.kind: str(w.message) for w in outcome.warnings if w.kind in ("Deployment", "Job")}
    assert english["Deployment"] == ("Required value: a pod template (template.spec) is needed to make pods "
                                     "(so no pods are made)")
    with translation.override("ko"):
        said = {w.kind: wording.warning_message(w.message) for w in outcome.warnings if w.kind in ("Deployment", "Job")}
    assert said["Deployment"].text == ("Required value: a pod template (template.spec) is needed to make pods "
                                       "(그래서 파드를 만들지 않아요)")
    assert said["Job"].text == 'Invalid value: "many": must be an integer (그래서 파드를 만들지 않아요)' and said["Job"].lang is None


def test_the_pods_panel_says_what_a_pods_claims_add_to_its_requests_in_english_and_korean(client):
    """DRANodeAllocatableResources: the scheduled pod's claim adds the 4 CPUs its device maps."""
    from tests.engine.test_noderesources import NODE_ALLOCATABLE

    text = NODE_ALLOCATABLE.replace('cpu: "6"', 'cpu: "3"')
    data = {"scenario": text, "gates-submitted": "1",
            **{f"gate-{component}-DRANodeAllocatableResources": "on" for component in ("apiserver", "scheduler", "kubelet")}}
    english = client.post("/", data, HTTP_HX_REQUEST="true").content.decode()
    korean = client.post("/", data, HTTP_HX_REQUEST="true", **KO).content.decode()
    claim = "<code>with-claim-r-bdmb8</code> cpu 4"
    assert f'<p class="muted node-allocatable">added by its claims’ devices (node-allocatable resources): {claim}</p>' in english
    assert f'<p class="muted node-allocatable">클레임의 디바이스가 더하는 노드 할당 가능 리소스: {claim}</p>' in korean


def test_a_pod_refused_for_what_its_claims_add_says_why_in_english_and_korean(client):
    """DRA found the device, but 6 CPUs asked and the 4 it maps do not fit 8: the Why says so, not that no
    node got as far as the DRA search."""
    from tests.engine.test_noderesources import NODE_ALLOCATABLE

    data = {"scenario": NODE_ALLOCATABLE, "gates-submitted": "1",
            **{f"gate-{component}-DRANodeAllocatableResources": "on" for component in ("apiserver", "scheduler", "kubelet")}}
    english = client.post("/", data, HTTP_HX_REQUEST="true").content.decode()
    korean = client.post("/", data, HTTP_HX_REQUEST="true", **KO).content.decode()
    assert "Why: DRA found devices for the pod’s claims on node-0, but with the CPU, memory or hugepages" in english
    assert "no node got as far as the DRA search" not in english
    assert "이유: DRA가 node-0에서 파드의 클레임에 쓸 디바이스를 찾았지만" in korean
    assert "cpu: the pod asks 10 (4 of it for its claims&#x27; devices), 0 of 8 in use" in english
    assert "cpu: 파드 요청 10(그중 4는 클레임의 디바이스 몫), 사용 중 0 / 전체 8" in korean


def test_the_kept_node_allocatable_statuses_note_is_said_in_korean():
    from tests.engine.test_noderesources import ON, NODE_ALLOCATABLE

    stale = NODE_ALLOCATABLE.replace(
        "metadata: {name: plain, namespace: default}",
        "metadata: {name: plain, namespace: default}\nstatus:\n  nodeAllocatableResourceClaimStatuses:\n"
        "  - {resourceClaimName: old, mapping: [{name: cpu, quantity: '1'}]}")
    _, outcome = allocate_text(stale, gates=ON)
    pod = outcome.pods[1]
    with translation.override("ko"):
        said = [wording.pod_note(pod, n).text for n in pod.notes]
    assert said == ["모델링하지 않음: 이 보류 중인 파드에는 이미 status.nodeAllocatableResourceClaimStatuses가 있어요. "
                    "kube-scheduler는 자기가 계산한 상태를 쓸 때 클레임 이름으로 이 상태에 병합하지만(전략적 병합 패치), "
                    "플레이그라운드는 자기가 계산한 상태만 보여 줘요"]
