"""The workshop lint: located mistakes, starts that must fail and solutions that must pass."""
from pathlib import Path

import pytest
from django.core.management import call_command

from allocator.workshops.lint import lint

TINY = (Path(__file__).parent / "files" / "tiny.yaml").read_text()


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def messages(problems):
    return [(p.line, p.message) for p in problems]


def test_tiny_workshop_is_clean():
    workshop, problems = lint(TINY)
    assert problems == []
    assert workshop.lessons[0].title == "Take the smaller GPU"
    assert len(workshop.lessons[0].hints) == 2


def test_check_naming_an_unknown_claim_is_located():
    text = TINY.replace("- claim: single-gpu", "- claim: double-gpu")
    _, problems = lint(text)
    [problem] = problems
    assert problem.line == line_of(text, "- claim: double-gpu")
    assert "claim default/double-gpu" in problem.message and "default/single-gpu" in problem.message
    assert problem.lesson == 1


def test_bad_pattern_is_located():
    text = TINY.replace("devices: [gpu-0]", "match: 'gpu-(0'")
    _, problems = lint(text)
    assert [p.line for p in problems] == [line_of(text, "match: 'gpu-(0'")]
    assert "bad pattern" in problems[0].message


def test_missing_message_and_missing_task_are_located():
    text = TINY.replace("    message: Leave the ResourceSlice as it is.\n", "").replace(
        "  task: Make the claim take gpu-0 without touching the slice.\n", "")
    _, problems = lint(text)
    found = messages(problems)
    assert (line_of(text, "- unchanged:"), "missing field message in a unchanged check: what the attendee reads "
            "when it fails") in found
    assert any(m == "missing field task" for _, m in found)


def test_unknown_check_kind_code_and_gate_are_located():
    text = TINY.replace("  - unchanged: [ResourceSlice]\n", "  - row: gpu-0\n    claim: single-gpu\n    code: selektor\n"
                        "  - gate: DRANoSuchGate\n    value: true\n    message: x\n  - frobnicate: 1\n    message: x\n"
                        "  - unchanged: [ResourceSlice]\n")
    _, problems = lint(text)
    found = messages(problems)
    assert any(line == line_of(text, "code: selektor") and "unknown reason code 'selektor'" in m for line, m in found)
    assert any(line == line_of(text, "gate: DRANoSuchGate") and "unknown feature gate" in m for line, m in found)
    assert any(line == line_of(text, "- frobnicate") and "unknown check" in m for line, m in found)


def test_start_that_already_passes_is_refused():
    text = TINY.replace('quantity("40Gi")', 'quantity("16Gi")', 1)
    _, problems = lint(text)
    assert messages(problems) == [(line_of(text, "- title: Take"), "the starting scenario already passes every "
                                   "check: the attendee has nothing to do")]


def test_solution_that_fails_a_check_names_the_check():
    text = TINY.replace("        - name: gpu-0\n", "        - name: gpu-zero\n")  # the solution's slice only
    assert text != TINY
    _, problems = lint(text)
    found = messages(problems)
    assert (line_of(text, "- claim: single-gpu"), "the solution fails this check (claim single-gpu gets gpu-0): "
            "The claim should get gpu-0.") in found
    assert any("Leave the ResourceSlice" in m for _, m in found)


def test_yaml_errors_and_aliases_are_located():
    _, problems = lint("title: x\nlessons: [\n")
    assert problems[0].message.startswith("not valid YAML") and problems[0].line
    _, problems = lint("title: &t x\nsummary: *t\nlessons: []\n")
    assert "aliases" in problems[0].message


def test_checkworkshop_command_prints_located_problems(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text(TINY.replace("- claim: single-gpu", "- claim: nope"))
    with pytest.raises(SystemExit) as exit:
        call_command("checkworkshop", str(bad))
    assert exit.value.code == 1
    out = capsys.readouterr().out
    assert f"{bad}:{line_of(bad.read_text(), '- claim: nope')} (lesson 1): the claim check names claim default/nope" in out
    good = tmp_path / "good.yaml"
    good.write_text(TINY)
    call_command("checkworkshop", str(good))
    assert "1 lesson(s), 2 check(s), all good" in capsys.readouterr().out


def test_checks_naming_unknown_devices_and_counter_sets_are_located():
    text = TINY.replace("  - unchanged: [ResourceSlice]\n", "  - row: gpu-7\n    claim: single-gpu\n    code: selector\n"
                        "    message: x\n  - counter: memory\n    counterSet: nope\n    free: 1Gi\n    message: x\n"
                        "  - unchanged: [ResourceSlice]\n")
    _, problems = lint(text)
    found = messages(problems)
    assert (line_of(text, "- row: gpu-7"), "the row check names device gpu-7, which no ResourceSlice of the lesson "
            "has") in found
    assert (line_of(text, "- counter: memory"), "the counter check names counter set nope, which the lesson's "
            "slices do not have (counter sets: none)") in found


def test_a_workshop_may_not_ask_for_endless_runs():
    from allocator.workshops.model import MAX_LESSONS, parse_workshop

    lesson = TINY.split("lessons:\n", 1)[1]
    text = TINY.split("lessons:\n", 1)[0] + "lessons:\n" + lesson * (MAX_LESSONS + 1)
    workshop, problems = parse_workshop(text)
    assert len(workshop.lessons) == MAX_LESSONS
    assert [p.message for p in problems] == [f"a workshop has at most {MAX_LESSONS} lessons"]


HOLES = (Path(__file__).parent / "files" / "holes.yaml").read_text()


def test_the_mutation_lint_finds_every_hole_of_a_seeded_workshop():
    """One lesson per hole issue 22 found in the old workshop; the lint reports each, at its lesson."""
    workshop, problems = lint(HOLES)
    found = {}
    for problem in problems:
        found.setdefault(problem.lesson, []).append(problem.message)
    expected = {
        1: "the declared wrong answer “another request name” passes every check",
        2: "the declared wrong answer “exactly two L4” passes every check",
        3: "the declared wrong answer “both pinned by pcieRoot selectors” passes every check",
        4: "a wrong answer passes every check: the selectors of DeviceClass gpu.nvidia.com replaced by true",
        6: "the declared wrong answer “a selector that is always true” passes every check",
        7: "a wrong answer passes every check: DRAOptionalNodeOperations turned off in scheduler",
        8: "a right answer fails: the documents in reverse order fails “claim mig-job gets gpu-0-mig-3g20gb-9-0”",
        9: "the starting scenario is invalid: Node gpu-node-1: metadata.labels",
    }
    assert len(workshop.lessons) == len(expected) + 1
    # lesson 5 makes an allocated claim editable: rewriting its allocation is refused by construction
    assert 5 not in found
    for lesson, message in expected.items():
        assert any(m.startswith(message) for m in found.get(lesson, [])), (lesson, found.get(lesson))
    # lesson 2's check names only the devices: the lint still tries the solution's prioritized list the
    # other way round (issue 22: "with the subrequests in the wrong order"), and that wrong answer survives
    assert any(m.startswith("a wrong answer passes every check: the subrequests of gpu in ResourceClaim "
                            "default/inference reversed") for m in found[2]), found[2]


def test_a_surviving_mutant_is_reported_with_its_diff():
    _, problems = lint(HOLES)
    [problem] = [p for p in problems if p.lesson == 4 and "DeviceClass gpu.nvidia.com" in p.message]
    assert "--- solution\n+++ mutant\n" in problem.message and "+      expression: 'true'" in problem.message


def test_a_check_that_raises_is_a_broken_check_for_the_lint():
    from allocator.workshops.checks import REGISTRY, ClaimCheck

    class Raising(ClaimCheck):
        def passes(self, spec, attempt):
            raise ZeroDivisionError("division by zero")

    saved = REGISTRY["claim"]
    REGISTRY["claim"] = Raising()
    try:
        _, problems = lint(TINY)
    finally:
        REGISTRY["claim"] = saved
    assert any(p.message == "the check (claim single-gpu gets gpu-0) is broken on the start: ZeroDivisionError: "
               "division by zero" for p in problems)
    assert not any("the solution fails this check (claim" in p.message for p in problems)


def test_solutions_are_merge_patches_over_the_start():
    text = TINY.split("  solution:\n")[0] + """  solution:
    patch:
    - kind: ResourceClaim
      metadata: {name: single-gpu}
      spec:
        devices:
          requests:
          - name: gpu
            exactly:
              deviceClassName: gpu.example.com
              selectors:
              - cel: {expression: 'device.capacity["gpu.example.com"].memory.compareTo(quantity("16Gi")) >= 0'}
"""
    workshop, problems = lint(text)
    assert problems == []
    solution = workshop.lessons[0].solution.scenario
    assert "# Two GPUs from the example driver" in solution  # untouched documents are kept as written
    assert 'quantity("16Gi")' in solution and 'quantity("40Gi")' not in solution
    bad, problems = lint(text.replace("metadata: {name: single-gpu}", "metadata: {}"))
    assert any("a patch names its object with kind and metadata.name" in p.message for p in problems)


def test_the_shipped_workshop_survives_its_mutants_and_keeps_its_variants():
    from allocator.workshops.library import shipped
    from allocator.workshops.lint import mutants_of, variants_of

    workshop = shipped()["dra-in-90-minutes"]
    assert sum(len(mutants_of(lesson)) for lesson in workshop.lessons) >= 50
    assert all(len(variants_of(lesson)) >= 2 for lesson in workshop.lessons)


def test_the_mutation_lint_of_a_shared_workshop_is_bounded():
    from allocator.workshops.library import shipped
    from allocator.workshops.lint import trials_needed
    from allocator.workshops.store import MAX_LINT_TRIALS

    workshop, problems = lint(TINY, max_trials=2)
    assert [p.message for p in problems] == [f"the lint would run {trials_needed(workshop)} wrong answers, mutants "
                                             "and variants; a shared workshop may need at most 2: share it in parts"]
    assert trials_needed(shipped()["dra-in-90-minutes"]) <= MAX_LINT_TRIALS  # the shipped one could be shared
