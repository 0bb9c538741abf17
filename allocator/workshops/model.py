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
      solution: {patch: [...], node: ..., gates: ..., componentGates: ..., versions: ...}   # patches over the start
      compare: {gates: ..., componentGates: ..., scenario: ...}   # optional: open in compare mode
      slug: first-claim  # the lesson's stable id (translations key on it); its number otherwise
      minutes: 8         # the time it takes in class
      editable: [ResourceSlice/nic-pool]   # objects the attendee may change besides claims and pods
      wrong:             # answers that must fail a check: patches over the solution, with why
      - why: pinning the device by name is not the idea
        patch: [...]     # and/or node, gates, componentGates
        over: start      # patch the start instead of the solution
      lint: {addClaim: false}   # this lesson's devices leave no room for an unrelated claim

A solution (or a wrong answer) is a `scenario:` or, better, a `patch:` (patches.py: JSON merge patches
per object). Reading a file gives the workshop plus located problems; `lint.py` adds the runs.
"""
from __future__ import annotations

from dataclasses import dataclass

from allocator import run_settings
from allocator.run_settings import RunSettings
from allocator.workshops.checks import parse_check
from allocator.workshops.patches import PatchError, apply_patches
from allocator.workshops.source import Located, SourceError, read_located

WORKSHOP_KEYS = {"title", "summary", "lessons", "slug"}
LESSON_KEYS = {"title", "text", "task", "scenario", "checks", "hints", "solution", "compare", "slug",
               "minutes", "editable", "wrong", "lint"} | run_settings.LESSON_KEYS
VARIANT_KEYS = {"scenario"} | run_settings.LESSON_KEYS
PATCHED_KEYS = VARIANT_KEYS | {"patch"}
WRONG_KEYS = PATCHED_KEYS | {"why", "over"}
LINT_KEYS = {"addClaim"}
# Linting runs every lesson's start and solution; a shared workshop may not ask for endless runs.
MAX_LESSONS = 60
MAX_CHECKS = 40


@dataclass(frozen=True)
class WorkshopProblem:
    """A mistake in a workshop file, at its line (the engine's Problem is a scenario's)."""

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
class Wrong:
    """A declared wrong answer: it must fail a check, for the reason `why`."""

    variant: Variant
    why: str
    line: int | None = None


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
    minutes: int | None = None
    editable: tuple = ()  # refs: Kind, Kind/name, Kind/namespace/name
    wrong: tuple = ()  # of Wrong
    add_claim: bool = True  # lint may add an unrelated claim, which must not change the verdict
    language: str = "en"  # the language of its words (a translation sets it)

    @property
    def id(self) -> str:
        """Stable across edits of the workshop: the slug, else the number."""
        return self.slug or str(self.number)


@dataclass(frozen=True)
class Workshop:
    title: str
    summary: str
    lessons: tuple
    slug: str = ""
    language: str = "en"  # the language of its words (translations.py); English is the source of record

    def lesson(self, number: int) -> Lesson | None:
        if 1 <= number <= len(self.lessons):
            return self.lessons[number - 1]
        return None


class _Reader:
    def __init__(self, located: Located):
        self.located = located
        self.problems: list[WorkshopProblem] = []
        self.lesson: int | None = None

    def problem(self, message: str, path: tuple):
        self.problems.append(WorkshopProblem(message, self.located.line(path), self.lesson))

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


def _patched(reader: _Reader, data: dict, path: tuple, base: Variant, keys: set, what: str) -> dict:
    """`data` with its `patch` (over `base`) turned into the scenario it gives."""
    reader.unknown_keys(data, keys, path, what)
    if "patch" not in data:
        return data
    out = {k: v for k, v in data.items() if k != "patch"}
    if "scenario" in data:
        reader.problem(f"{what} has a scenario or a patch, not both", path + ("patch",))
        return out
    try:
        out["scenario"] = apply_patches(base.scenario, data["patch"])
    except PatchError as exc:
        where = path + ("patch",) + ((exc.index,) if exc.index is not None else ())
        reader.problem(f"{what}: {exc.message}", where)
    return out


def parse_workshop(text: str) -> tuple[Workshop | None, list[WorkshopProblem]]:
    """The workshop in `text` and every located mistake in its format (checks included)."""
    try:
        located = read_located(text)
    except SourceError as exc:
        return None, [WorkshopProblem(exc.message, exc.line)]
    reader = _Reader(located)
    data = located.data
    if not isinstance(data, dict):
        return None, [WorkshopProblem("a workshop file is a mapping with title, summary and lessons", 1)]
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
            check = parse_check(raw_check, path + ("checks", ci), reader, ci)
            if check is not None:
                checks.append(check)
        hints = raw.get("hints") or []
        if not isinstance(hints, list) or not all(isinstance(h, str) for h in hints):
            reader.problem("hints must be a list of strings", path + ("hints",))
            hints = []
        ids = [c.id for c in checks]
        for ci, check in enumerate(checks):
            if check.id in ids[:ci]:
                reader.problem(f"two checks have the id {check.id!r}: ids are what translations key on",
                               path + ("checks", ci))
        solution = None
        if isinstance(raw.get("solution"), dict):
            solution_data = _patched(reader, raw["solution"], path + ("solution",), start, PATCHED_KEYS,
                                     "the solution")
            solution = reader.variant(solution_data, path + ("solution",), base=start, what="the solution")
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
        wrong = []
        raw_wrong = raw.get("wrong") or []
        if not isinstance(raw_wrong, list):
            reader.problem("wrong must list wrong answers: {why, patch (over the solution), gates, ...}",
                           path + ("wrong",))
            raw_wrong = []
        for wi, item in enumerate(raw_wrong):
            where = path + ("wrong", wi)
            if not isinstance(item, dict) or not isinstance(item.get("why"), str) or not item["why"].strip():
                reader.problem("a wrong answer is a mapping with why (what it gets wrong) and a patch or settings",
                               where)
                continue
            over = item.get("over", "solution")
            if over not in ("solution", "start"):
                reader.problem("over must be solution (the default) or start: what the wrong answer patches",
                               where + ("over",))
            base = start if over == "start" or solution is None else solution
            item_data = _patched(reader, dict(item), where, base, WRONG_KEYS, "a wrong answer")
            item_data.pop("why", None)
            item_data.pop("over", None)
            wrong.append(Wrong(reader.variant(item_data, where, base=base, what="a wrong answer"), item["why"],
                               located.line(where)))
        editable = raw.get("editable") or []
        if not isinstance(editable, list) or not all(isinstance(e, str) and e for e in editable):
            reader.problem("editable must list objects: Kind, Kind/name or Kind/namespace/name", path + ("editable",))
            editable = []
        minutes = raw.get("minutes")
        if minutes is not None and (not isinstance(minutes, int) or isinstance(minutes, bool) or minutes <= 0):
            reader.problem("minutes must be a whole number of minutes", path + ("minutes",))
            minutes = None
        lint_options = raw.get("lint") or {}
        if not isinstance(lint_options, dict):
            reader.problem("lint must be a mapping such as {addClaim: false}", path + ("lint",))
            lint_options = {}
        reader.unknown_keys(lint_options, LINT_KEYS, path + ("lint",), "lint")
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
            minutes=minutes,
            editable=tuple(editable),
            wrong=tuple(wrong),
            add_claim=lint_options.get("addClaim") is not False,
        ))
    reader.lesson = None
    workshop = Workshop(title=title, summary=summary, lessons=tuple(lessons),
                        slug=reader.string(data.get("slug"), ("slug",)))
    return workshop, reader.problems
