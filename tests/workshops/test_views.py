"""Workshop pages: the list, a lesson in the playground, Check through htmx and as a plain form."""
import re
from pathlib import Path
from html import escape

import pytest
from django.test import Client

from allocator.engine.gates import GATES
from allocator.engine.gates import COMPONENTS
from allocator.workshops.library import shipped

pytestmark = pytest.mark.django_db
COMPONENT_KEYS = [key for key, _ in COMPONENTS]
WORKSHOP = shipped()["dra-in-90-minutes"]
SKEW = next(lesson.number for lesson in WORKSHOP.lessons if lesson.compare is not None)  # the version-skew lesson


def form_data(variant):
    data = {"scenario": variant.scenario, "node": variant.node, "gates-submitted": "1"}
    for component in COMPONENT_KEYS:
        for name in GATES:
            if variant.gate_value(component, name):  # at the variant's own versions
                data[f"gate-{component}-{name}"] = "on"
    return data


def check_marks(body: str) -> list[tuple[str, str]]:
    return re.findall(r'<li class="check-(ok|failed)">.*?<span class="check-label">(.*?)</span>', body, re.S)


def test_workshop_list_and_overview_link_every_lesson(client):
    body = client.get("/workshops/").content.decode()
    assert "DRA in 90 minutes" in body and 'href="/workshops/dra-in-90-minutes/"' in body
    body = client.get("/workshops/dra-in-90-minutes/").content.decode()
    for lesson in WORKSHOP.lessons:
        assert f'href="/workshops/dra-in-90-minutes/{lesson.number}"' in body


def test_lesson_page_is_the_playground_with_the_lesson_panel(client):
    response = client.get("/workshops/dra-in-90-minutes/4")
    body = response.content.decode()
    assert response.status_code == 200
    assert '<aside id="lesson"' in body and "4. CEL selectors and attributes" in body
    assert "<strong>Task:</strong> <code>big-model</code> got the 40GB card" in body  # Markdown, inline
    assert 'name="scenario"' in body and "NVIDIA A100 80GB PCIe" in body  # the start in the editor
    assert 'href="/workshops/dra-in-90-minutes/3"' in body and 'href="/workshops/dra-in-90-minutes/5"' in body
    assert 'id="lesson-data"' in body and 'formaction="/workshops/dra-in-90-minutes/4/check"' in body
    assert "✔ Allocated on node gpu-node-1" in body  # the result panel of the start


def test_the_version_skew_lesson_opens_in_compare_mode(client):
    body = client.get(f"/workshops/dra-in-90-minutes/{SKEW}").content.decode()
    comparison = body[body.index('id="lesson-comparison"'):]
    side_a = comparison[comparison.index('id="side-a"'):comparison.index('id="side-b"')]
    side_b = comparison[comparison.index('id="side-b"'):]
    side_b = side_b[:side_b.index("</section>")]
    assert "incomplete" in side_a and "Cannot allocate" in side_a
    assert "incomplete" not in side_b and "Allocated on node gpu-node-1" in side_b
    assert "DRADeviceCompatibilityGroups on kube-scheduler: off in A, on in B" in comparison
    assert 'id="lesson-comparison"' not in client.get("/workshops/dra-in-90-minutes/3").content.decode()


def test_lesson_page_keeps_presenter_mode_across_steps(client):
    body = client.get("/workshops/dra-in-90-minutes/3?present=1").content.decode()
    assert 'href="/workshops/dra-in-90-minutes/4?present=1"' in body


def test_version_skew_lesson_starts_with_the_skewed_gate_and_links_compare(client):
    body = client.get(f"/workshops/dra-in-90-minutes/{SKEW}").content.decode()
    assert "version skew" in body
    assert 'class="lesson-compare" href="/compare?c=' in body
    assert not re.search(r'name="gate-scheduler-DRADeviceCompatibilityGroups"[^>]*checked', body)
    assert re.search(r'name="gate-apiserver-DRADeviceCompatibilityGroups"[^>]*checked', body)


def test_unknown_workshop_or_step_is_404(client):
    assert client.get("/workshops/nope/").status_code == 404
    assert client.get("/workshops/dra-in-90-minutes/0").status_code == 404
    assert client.get(f"/workshops/dra-in-90-minutes/{len(WORKSHOP.lessons) + 1}").status_code == 404


def test_check_with_htmx_lists_failures_with_their_messages(client):
    lesson = WORKSHOP.lesson(3)
    response = client.post("/workshops/dra-in-90-minutes/3/check", form_data(lesson.start), HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert response.status_code == 200
    assert body.lstrip().startswith('<div id="check-result"')
    assert ("failed", "claim jax-test is allocated") in check_marks(body)
    # the message quotes the engine's why headline for the claim
    assert re.search(r"jax-test is still pending: [^<{]*default/jax-test[^<{]*</span>", body), body
    assert 'data-all-passed="0"' in body


def test_a_korean_check_message_quotes_the_headline_in_korean(client):
    """The ko.yaml message of lesson 3 quotes `{why}`: on a Korean page the headline is the wording
    layer's Korean sentence, on an English page the engine's English."""
    lesson = WORKSHOP.lesson(3)
    url = "/workshops/dra-in-90-minutes/3/check"
    korean = client.post(url, form_data(lesson.start), HTTP_HX_REQUEST="true", HTTP_ACCEPT_LANGUAGE="ko").content.decode()
    message = re.search(r'<span class="check-message">(jax-test가 아직 보류 중이에요[^<]*)</span>', korean)
    assert message, korean
    assert "클레임 default/jax-test" in message.group(1) and "of claim" not in message.group(1)
    english = client.post(url, form_data(lesson.start), HTTP_HX_REQUEST="true",
                          HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert re.search(r"jax-test is still pending: [^<{]*of claim default/jax-test", english), english


def test_check_passes_the_solution_and_links_the_next_step(client):
    lesson = WORKSHOP.lesson(3)
    body = client.post("/workshops/dra-in-90-minutes/3/check", form_data(lesson.solution),
                       HTTP_HX_REQUEST="true").content.decode()
    assert all(mark == "ok" for mark, _ in check_marks(body)) and len(check_marks(body)) == len(lesson.checks)
    assert 'data-all-passed="1"' in body and 'href="/workshops/dra-in-90-minutes/4"' in body


def test_check_reads_the_gates_of_the_form(client):
    lesson = WORKSHOP.lesson(SKEW)
    body = client.post(f"/workshops/dra-in-90-minutes/{SKEW}/check", form_data(lesson.start),
                       HTTP_HX_REQUEST="true").content.decode()
    assert "The kube-scheduler still runs with DRADeviceCompatibilityGroups off." in body
    body = client.post(f"/workshops/dra-in-90-minutes/{SKEW}/check", form_data(lesson.solution),
                       HTTP_HX_REQUEST="true").content.decode()
    assert 'data-all-passed="1"' in body


def test_check_without_javascript_renders_the_page_with_the_attendees_text(client):
    lesson = WORKSHOP.lesson(3)
    edited = lesson.start.scenario.replace("count: 4", "count: 2")
    data = form_data(lesson.start) | {"scenario": edited}
    body = client.post("/workshops/dra-in-90-minutes/3/check", data).content.decode()
    assert "count: 2" in body and '<aside id="lesson"' in body
    assert ("ok", "claim jax-test is allocated") in check_marks(body)


def test_check_is_csrf_protected():
    strict = Client(enforce_csrf_checks=True)
    lesson = WORKSHOP.lesson(1)
    assert strict.post("/workshops/dra-in-90-minutes/1/check", form_data(lesson.start)).status_code == 403


def test_lesson_text_is_markdown_without_raw_html():
    from allocator.workshops.markdown import render

    html = render("**bold** <script>alert(1)</script> [x](javascript:alert(1))")
    assert "<strong>bold</strong>" in html and "<script>" not in html and 'href="javascript' not in html


@pytest.mark.parametrize("number", range(1, len(WORKSHOP.lessons) + 1))
def test_every_shipped_lesson_fails_at_its_start_and_passes_with_its_solution_through_the_check_view(client, number):
    """Between them the lessons use every kind of check, each failing with its message and then passing."""
    lesson = WORKSHOP.lesson(number)
    url = f"/workshops/dra-in-90-minutes/{number}/check"
    body = client.post(url, form_data(lesson.start), HTTP_HX_REQUEST="true").content.decode()
    marks = check_marks(body)
    assert len(marks) == len(lesson.checks) and ("failed" in {mark for mark, _ in marks})
    for check, (mark, _) in zip(lesson.checks, marks):
        if mark == "failed":
            # `{why}` becomes the engine's why headline for the claim
            assert f'<span class="check-message">{escape(check.message.split("{why}")[0])}' in body
    body = client.post(url, form_data(lesson.solution), HTTP_HX_REQUEST="true").content.decode()
    assert [mark for mark, _ in check_marks(body)] == ["ok"] * len(lesson.checks)


NEWER = shipped()["dra-newer-features"]


@pytest.mark.parametrize("number", range(1, len(NEWER.lessons) + 1))
def test_every_newer_features_lesson_fails_at_its_start_and_passes_with_its_solution_through_the_check_view(
        client, number):
    lesson = NEWER.lesson(number)
    url = f"/workshops/dra-newer-features/{number}/check"
    marks = check_marks(client.post(url, form_data(lesson.start), HTTP_HX_REQUEST="true").content.decode())
    assert len(marks) == len(lesson.checks) and "failed" in {mark for mark, _ in marks}
    body = client.post(url, form_data(lesson.solution), HTTP_HX_REQUEST="true").content.decode()
    assert [mark for mark, _ in check_marks(body)] == ["ok"] * len(lesson.checks)


def test_the_binding_conditions_lesson_reads_in_korean(client):
    number = next(lesson.number for lesson in NEWER.lessons if lesson.id == "binding-conditions")
    page = client.get(f"/workshops/dra-newer-features/{number}", HTTP_ACCEPT_LANGUAGE="ko").content.decode()
    assert "바인딩 조건: 스케줄러가 기다리는 디바이스" in page
    body = client.post(f"/workshops/dra-newer-features/{number}/check", form_data(NEWER.lesson(number).start),
                       HTTP_HX_REQUEST="true", HTTP_ACCEPT_LANGUAGE="ko").content.decode()
    assert ("failed", "클레임 gpu-a가 고른 노드에 고정됨") in check_marks(body)


def test_the_shipped_lessons_use_every_kind_of_check():
    from allocator.workshops.checks import REGISTRY

    # consumable capacity left the 90-minute cut; test_checks.py covers its check
    assert {check.kind for lesson in WORKSHOP.lessons for check in lesson.checks} == set(REGISTRY) - {"capacity"}


def test_check_says_an_invalid_scenario_is_invalid_and_where(client):
    lesson = WORKSHOP.lesson(1)
    broken = lesson.start.scenario.replace("name: gpu-node-1\n---", "name: gpu-node-1\n  labels: [1]\n---", 1)
    line = next(i for i, text in enumerate(broken.splitlines(), 1) if "labels: [1]" in text)
    body = client.post("/workshops/dra-in-90-minutes/1/check", form_data(lesson.start) | {"scenario": broken},
                       HTTP_HX_REQUEST="true").content.decode()
    assert ("failed", "the scenario is valid") in check_marks(body)
    assert "The scenario is invalid: Node gpu-node-1: metadata.labels" in body and f"(line {line})" in body


def test_check_names_a_protected_object_the_attendee_changed(client):
    lesson = WORKSHOP.lesson(1)
    rewritten = lesson.solution.scenario.replace(
        'device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "gpu"', "'true'")
    assert rewritten != lesson.solution.scenario
    body = client.post("/workshops/dra-in-90-minutes/1/check", form_data(lesson.solution) | {"scenario": rewritten},
                       HTTP_HX_REQUEST="true").content.decode()
    assert check_marks(body)[0] == ("failed", "objects you do not own are unchanged")
    assert "You changed what you do not own here: DeviceClass gpu.nvidia.com." in body


def test_the_solution_shows_what_it_changes_from_the_start(client):
    body = client.get("/workshops/dra-in-90-minutes/3").content.decode()
    changes = body[body.index('<pre class="solution-changes">'):]
    changes = changes[:changes.index("</pre>")]
    assert "--- start" in changes and "+++ solution" in changes
    assert "-        count: 4" in changes and "+        count: 3" in changes


@pytest.mark.django_db
def test_a_korean_lesson_page_has_korean_words_and_check_labels(client):
    from django.utils import translation

    with translation.override("en"):  # the request activates Korean in this thread
        page = client.get("/workshops/dra-in-90-minutes/9", HTTP_ACCEPT_LANGUAGE="ko").content.decode()
        checked = client.post("/workshops/dra-in-90-minutes/9/check", {"scenario": "kind: [", "node": ""},
                              HTTP_ACCEPT_LANGUAGE="ko").content.decode()
    assert '<h1 class="lesson-title" lang="ko">9. 버전 차이(skew): 스케줄러에서 꺼진 게이트</h1>' in page
    assert "DRADeviceCompatibilityGroups=켜짐" in page and "=on" not in page  # the solution's settings
    assert "시나리오가 유효함" in checked  # the built-in check of an invalid scenario, in Korean
    assert "DRADeviceCompatibilityGroups가 scheduler에서 켜져 있음" in checked  # the lesson's label, from ko.yaml


@pytest.mark.django_db
def test_the_browser_gets_the_gate_values_at_the_lessons_versions(client, tmp_path, monkeypatch):
    """Reset and Show solution put back gates from `lesson-data`: at a lesson's emulated 1.35 the
    DRAPartitionableDevices box is off (its default there), not on (the 1.37 binary's default)."""
    import json

    from allocator.workshops import library

    text = (Path(__file__).parent / "files" / "tiny.yaml").read_text()
    text = text.replace("  node: worker-1\n", '  node: worker-1\n  versions: {emulated: "1.35"}\n', 1)
    (tmp_path / "skewed.yaml").write_text(text)
    monkeypatch.setattr(library, "SHIPPED_DIR", tmp_path)
    library.clear()
    try:
        body = client.get("/workshops/skewed/1").content.decode()
    finally:
        library.clear()
    data = json.loads(re.search(r'<script id="lesson-data" type="application/json">(.*?)</script>', body, re.S).group(1))
    for variant in ("start", "solution"):
        gates = data[variant]["gates"]
        assert set(gates) == {"apiserver", "scheduler", "kubelet"}
        assert gates["scheduler"]["DRAPartitionableDevices"] is False  # its default at 1.35
        assert gates["scheduler"]["DRAPrioritizedList"] is True
    assert "defaults" not in data
    assert data["start"]["versions"]["scheduler"] == {"emulated": "1.35", "minCompat": ""}  # for the selects
    # the page's own boxes agree with what the browser will put back
    assert not re.search(r'name="gate-scheduler-DRAPartitionableDevices"[^>]*checked', body)
