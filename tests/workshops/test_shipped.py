"""The shipped workshops pass the lint: every lesson's start fails its checks, its solution passes."""
import pytest

from allocator.workshops.library import shipped, shipped_files
from allocator.workshops.lint import lint


@pytest.mark.parametrize("path", shipped_files(), ids=lambda p: p.name)
def test_shipped_workshop_lints_clean(path):
    workshop, problems = lint(path.read_text(encoding="utf-8"))
    assert [p.render(path.name) for p in problems] == []
    assert workshop.title


def test_dra_in_90_minutes_covers_the_syllabus_in_order():
    workshop = shipped()["dra-in-90-minutes"]
    titles = [lesson.title for lesson in workshop.lessons]
    assert len(titles) >= 12
    expected = ["A first claim", "Why is my claim pending?", "CEL selectors", "firstAvailable", "Partitionable",
                "MIG", "compatibility groups", "Version skew", "Consumable capacity", "matchAttribute",
                "Optional node operations", "Granular status authorization", "Pods and claim templates"]
    assert all(word.lower() in title.lower() for word, title in zip(expected, titles, strict=True))
    skew = workshop.lessons[7]
    assert skew.compare is not None  # the version-skew lesson opens in compare mode
    gate = "DRADeviceCompatibilityGroups"  # alpha, off by default: only values that differ are kept
    assert skew.start.gates["apiserver"] == {gate: True} and gate not in skew.start.gates.get("scheduler", {})
    assert skew.compare.gates["scheduler"] == {gate: True}
    assert all(lesson.hints and lesson.solution for lesson in workshop.lessons)
