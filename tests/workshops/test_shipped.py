"""The shipped workshops pass the lint: every lesson's start fails its checks, its solution passes."""
import pytest

from allocator.workshops.library import shipped, shipped_files
from allocator.workshops.lint import lint


@pytest.mark.parametrize("path", shipped_files(), ids=lambda p: p.name)
def test_shipped_workshop_lints_clean(path):
    workshop, problems = lint(path.read_text(encoding="utf-8"))
    assert [p.render(path.name) for p in problems] == []
    assert workshop.title


def test_dra_in_90_minutes_fits_two_45_minute_parts_with_pods_early():
    workshop = shipped()["dra-in-90-minutes"]
    titles = [lesson.title for lesson in workshop.lessons]
    expected = ["A first claim", "Pods and claim templates", "Why is my claim pending?", "CEL selectors",
                "allocationMode All", "firstAvailable", "distinctAttribute", "Partitionable", "Version skew",
                "Admin access", "taints and tolerations", "Optional node operations", "RBAC"]
    assert all(word.lower() in title.lower() for word, title in zip(expected, titles, strict=True))
    minutes = [lesson.minutes for lesson in workshop.lessons]
    assert all(minutes) and sum(minutes[:7]) <= 45 and sum(minutes[7:]) <= 45
    assert len({lesson.id for lesson in workshop.lessons}) == len(workshop.lessons)
    skew = workshop.lessons[8]
    assert skew.compare is not None  # the version-skew lesson opens in compare mode
    gate = "DRADeviceCompatibilityGroups"  # alpha, off by default: only values that differ are kept
    assert skew.start.gates["apiserver"] == {gate: True} and gate not in skew.start.gates.get("scheduler", {})
    assert skew.compare.gates["scheduler"] == {gate: True}
    assert all(lesson.hints and lesson.solution for lesson in workshop.lessons)


def test_every_exercise_has_a_kind_of_lesson_of_its_own():
    """distinctAttribute, admin access with the namespace label, taints and allocationMode All each get an
    exercise whose checks read the idea (the request's shape or the claim's constraint)."""
    workshop = shipped()["dra-in-90-minutes"]
    specs = [check.spec for lesson in workshop.lessons for check in lesson.checks]
    assert any(s.get("constraint") == "distinctAttribute" for s in specs)
    assert any(s.get("adminAccess") is True for s in specs)
    assert any(s.get("tolerates") for s in specs)
    assert any(s.get("allocationMode") == "All" and "request" in s for s in specs)
    assert any("Namespace/monitoring" in lesson.editable for lesson in workshop.lessons)
    assert any("statusWrite" in s for s in specs)


def test_dra_newer_features_is_one_idea_per_lesson_in_about_50_minutes():
    workshop = shipped()["dra-newer-features"]
    ids = [lesson.id for lesson in workshop.lessons]
    assert ids == ["counters", "compatibility-groups", "consumable-capacity", "match-attribute", "device-taint-rule",
                   "binding-conditions"]
    minutes = [lesson.minutes for lesson in workshop.lessons]
    assert all(minutes) and 45 <= sum(minutes) <= 55 and "About 50 minutes" in workshop.summary
    assert all(lesson.hints and lesson.solution and lesson.wrong for lesson in workshop.lessons)
    groups = workshop.lessons[1]  # alpha in 1.37, off by default: the lesson turns it on everywhere
    gate = "DRADeviceCompatibilityGroups"
    assert all(groups.start.gate_value(component, gate) for component in ("apiserver", "scheduler", "kubelet"))
    specs = {lesson.id: [check.spec for check in lesson.checks] for lesson in workshop.lessons}
    assert any("counter" in s for s in specs["counters"]) and any("selects" in s for s in specs["counters"])
    assert any(s.get("gate") == gate for s in specs["compatibility-groups"])
    assert any(s.get("capacity") == "bandwidth" for s in specs["consumable-capacity"])
    assert any(s.get("constraint") == "matchAttribute" for s in specs["match-attribute"])
    assert workshop.lessons[4].editable == ("DeviceTaintRule",)  # the attendee is the admin there
    assert any(s.get("code") == "taint" for s in specs["device-taint-rule"])


def test_the_binding_conditions_lesson_checks_what_the_scheduler_waits_for():
    """The attendee is the driver's author: the checks read the allocation (the conditions the scheduler
    waits for in PreBind, the node bindsToNode pins), never the slice's text, and each declared wrong
    answer fails the check it is about."""
    from allocator.workshops.lint import check_lesson

    lesson = next(lesson for lesson in shipped()["dra-newer-features"].lessons if lesson.id == "binding-conditions")
    assert lesson.editable == ("ResourceSlice/fabric-gpus",)
    specs = {check.id: check.spec for check in lesson.checks}
    assert specs["waits-a"]["bindingConditions"] == ["fabric.example.com/attached"]
    assert specs["pinned-b"]["pinned"] is True
    failing = {wrong.why: {r.id for r in check_lesson(lesson, wrong.variant)[0] if not r.ok} for wrong in lesson.wrong}
    by_start = {why.split(",")[0]: ids for why, ids in failing.items()}
    assert by_start["without bindsToNode the allocation of an allNodes device names no node"] == {"pinned-a", "pinned-b"}
    assert by_start["bindsToNode alone pins the node"] == {"waits-a", "waits-b"}
    assert "trainer-b" in by_start["a pool for worker-1 alone pins the allocation"]
    gate_off = next(ids for why, ids in failing.items() if why.startswith("with the gate off in the scheduler"))
    assert {"trainer-a", "trainer-b"} <= gate_off  # the devices are not allocated at all
    korean = next(lesson for lesson in shipped_ko() if lesson.id == "binding-conditions")
    assert "PreBind" in korean.text and "바인딩 조건" in korean.text and korean.language == "ko"


def shipped_ko():
    from allocator.workshops.library import get

    return get("dra-newer-features", "ko").lessons
