"""The workshop format: a workshop is an ordered list of lessons, each with checked exercises.

    title: DRA in 90 minutes
    summary: ...
    lessons:
    - title: A first claim
      text: |            # Markdown (raw HTML off)
      task: Make the claim fit.
      node: worker-1     # optional; "" tries every node
      gates: {DRADeviceCompatibilityGroups: true}       # every component
      componentGates: {scheduler: {DRADeviceCompatibilityGroups: false}}
      versions: {emulated: "1.36"}   # every component; componentVersions: {scheduler: {...}}
      scenario: |        # the starting scenario
      checks:            # see checks.py for every kind
      - outcome: allocated
        message: shown when this check fails
      hints: [one at a time]
      solution: {scenario: |, node: ..., gates: ..., componentGates: ..., versions: ...}
      compare: {gates: ..., componentGates: ..., scenario: ...}   # optional: open in compare mode

Reading a file gives the workshop plus located problems; `lint.py` adds the runs.
"""
from __future__ import annotations

from dataclasses import dataclass

from allocator import run_settings
from allocator.run_settings import RunSettings
from allocator.workshops.source import Located, SourceError, read_located

WORKSHOP_KEYS = {"title", "summary", "lessons", "slug"}
LESSON_KEYS = {"title", "text", "task", "scenario", "checks", "hints", "solution", "compare",
               "slug"} | run_settings.LESSON_KEYS
VARIANT_KEYS = {"scenario"} | run_settings.LESSON_KEYS
# Linting runs every lesson's start and solution; a shared workshop may not ask for endless runs.
MAX_LESSONS = 60
MAX_CHECKS = 40


@dataclass(frozen=True)
class Problem:
    """A mistake in a workshop file, at its line."""

    message: str
    line: int | None = None
    lesson: int | None = None  # 1-based

    def render(self, filename: str = "") -> str:
        where = f"{filename}:{self.line}" if filename and self.line else (f"line {self.line}" if self.line else filename)
        lesson = f" (lesson {self.lesson})" if self.lesson else ""
        return f"{where}{lesson}: {self.message}" if where else f"{self.message}{lesson}"

    def as_dict(self) -> dict:
        return {"message": self.message, "line": self.line, "lesson": self.lesson}


# A lesson's start, its solution, or a compare side: a scenario with its run settings.
Variant = RunSettings


@dataclass(frozen=True)
class Check:
    kind: str
    spec: dict
    message: str
    line: int | None
    label: str = ""


@dataclass(frozen=True)
class Lesson:
    number: int
    title: str
    text: str
    task: str
    start: Variant
    checks: tuple
    hints: tuple
    solution: Variant | None
    compare: Variant | None = None
    slug: str = ""
    line: int | None = None


@dataclass(frozen=True)
class Workshop:
    title: str
    summary: str
    lessons: tuple
    slug: str = ""

    def lesson(self, number: int) -> Lesson | None:
        if 1 <= number <= len(self.lessons):
            return self.lessons[number - 1]
        return None


class _Reader:
    def __init__(self, located: Located):
        self.located = located
        self.problems: list[Problem] = []
        self.lesson: int | None = None

    def problem(self, message: str, path: tuple):
        self.problems.append(Problem(message, self.located.line(path), self.lesson))

    def string(self, value, path, *, required=False, what="") -> str:
        if value is None:
            if required:
                self.problem(f"missing field {what or path[-1]}", path)
            return ""
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            self.problem(f"{what or path[-1]} must be a string", path)
            return ""
        return str(value)

    def unknown_keys(self, data: dict, allowed: set, path: tuple, what: str):
        for key in data:
            if key not in allowed:
                self.problem(f"unknown field {key!r} in {what} (expected one of {', '.join(sorted(allowed))})",
                             path + (key,))

    def variant(self, data: dict, path: tuple, *, base: Variant | None = None, what: str) -> Variant:
        scenario = data.get("scenario")
        if scenario is None:
            if base is None:
                self.problem(f"missing field scenario in {what}", path)
            scenario = base.scenario if base else ""
        elif not isinstance(scenario, str):
            self.problem(f"scenario in {what} must be a block of YAML text (use `scenario: |`)", path + ("scenario",))
            scenario = ""
        if "node" in data:
            data = {**data, "node": self.string(data["node"], path + ("node",))}
        return run_settings.from_lesson(data, self.problem, path, base=base, scenario=scenario)


def parse_workshop(text: str) -> tuple[Workshop | None, list[Problem]]:
    """The workshop in `text` and every located mistake in its format (checks included)."""
    from allocator.workshops.checks import parse_check  # checks import this module's types

    try:
        located = read_located(text)
    except SourceError as exc:
        return None, [Problem(exc.message, exc.line)]
    reader = _Reader(located)
    data = located.data
    if not isinstance(data, dict):
        return None, [Problem("a workshop file is a mapping with title, summary and lessons", 1)]
    reader.unknown_keys(data, WORKSHOP_KEYS, (), "the workshop")
    title = reader.string(data.get("title"), ("title",), required=True)
    summary = reader.string(data.get("summary"), ("summary",))
    raw_lessons = data.get("lessons")
    lessons = []
    if not isinstance(raw_lessons, list) or not raw_lessons:
        reader.problem("lessons must be a non-empty list", ("lessons",) if raw_lessons is not None else ())
        raw_lessons = []
    if len(raw_lessons) > MAX_LESSONS:
        reader.problem(f"a workshop has at most {MAX_LESSONS} lessons", ("lessons", MAX_LESSONS))
        raw_lessons = raw_lessons[:MAX_LESSONS]
    for index, raw in enumerate(raw_lessons):
        number = index + 1
        path = ("lessons", index)
        reader.lesson = number
        if not isinstance(raw, dict):
            reader.problem("a lesson must be a mapping", path)
            continue
        reader.unknown_keys(raw, LESSON_KEYS, path, "a lesson")
        start = reader.variant(raw, path, what="the lesson")
        checks = []
        raw_checks = raw.get("checks")
        if not isinstance(raw_checks, list) or not raw_checks:
            reader.problem("checks must be a non-empty list: every exercise is checked", path + ("checks",))
            raw_checks = []
        if len(raw_checks) > MAX_CHECKS:
            reader.problem(f"a lesson has at most {MAX_CHECKS} checks", path + ("checks", MAX_CHECKS))
            raw_checks = raw_checks[:MAX_CHECKS]
        for ci, raw_check in enumerate(raw_checks):
            check = parse_check(raw_check, path + ("checks", ci), reader)
            if check is not None:
                checks.append(check)
        hints = raw.get("hints") or []
        if not isinstance(hints, list) or not all(isinstance(h, str) for h in hints):
            reader.problem("hints must be a list of strings", path + ("hints",))
            hints = []
        solution = None
        if isinstance(raw.get("solution"), dict):
            reader.unknown_keys(raw["solution"], VARIANT_KEYS, path + ("solution",), "the solution")
            solution = reader.variant(raw["solution"], path + ("solution",), base=start, what="the solution")
        else:
            reader.problem("missing field solution (a scenario and/or settings that pass the checks)",
                           path + ("solution",) if "solution" in raw else path)
        compare = None
        if "compare" in raw:
            if isinstance(raw["compare"], dict):
                reader.unknown_keys(raw["compare"], VARIANT_KEYS, path + ("compare",), "compare")
                compare = reader.variant(raw["compare"], path + ("compare",), base=start, what="compare")
            else:
                reader.problem("compare must be a mapping (side B: scenario, node, gates)", path + ("compare",))
        lessons.append(Lesson(
            number=number,
            title=reader.string(raw.get("title"), path + ("title",), required=True),
            text=reader.string(raw.get("text"), path + ("text",)),
            task=reader.string(raw.get("task"), path + ("task",), required=True),
            start=start,
            checks=tuple(checks),
            hints=tuple(hints),
            solution=solution,
            compare=compare,
            slug=reader.string(raw.get("slug"), path + ("slug",)),
            line=located.line(path),
        ))
    reader.lesson = None
    workshop = Workshop(title=title, summary=summary, lessons=tuple(lessons),
                        slug=reader.string(data.get("slug"), ("slug",)))
    return workshop, reader.problems
