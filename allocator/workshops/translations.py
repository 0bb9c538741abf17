"""A workshop's text in another language, as parallel content beside the English source of record.

`<slug>.<lang>.yaml` next to `<slug>.yaml` carries only words, keyed by stable ids: each lesson by its
`slug` (its number when it has none), each check by its `id` (its position when it has none).
Everything it leaves out, and every scenario, check and setting, comes from the English file:

    language: ko
    title: 90분 DRA
    summary: ...
    lessons:
      first-claim:
        title: 첫 번째 클레임
        text: |
          ...
        task: ...
        hints: [...]          # replaces the English hints when given
        checks:
          allocated: ...      # the failure message of the check with id `allocated`
          shape:              # or its message and its label (what it checks, beside ✓ / ✗)
            message: ...
            label: ...

`missing()` lists what a translation leaves in English (a lint warning, not an error: English is the
fallback), so `checkworkshop` can say which lessons and checks still need words.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from allocator.workshops.model import Workshop, WorkshopProblem
from allocator.workshops.source import SourceError, read_located

TOP_KEYS = {"language", "title", "summary", "lessons"}
LESSON_KEYS = {"title", "text", "task", "hints", "checks"}
CHECK_KEYS = {"message", "label"}


@dataclass(frozen=True)
class LessonText:
    title: str | None = None
    text: str | None = None
    task: str | None = None
    hints: tuple | None = None
    checks: dict = field(default_factory=dict)  # check id -> message
    labels: dict = field(default_factory=dict)  # check id -> label


@dataclass(frozen=True)
class Translation:
    language: str
    title: str | None
    summary: str | None
    lessons: dict  # lesson id -> LessonText


def parse_translation(text: str, workshop: Workshop) -> tuple[Translation | None, list[WorkshopProblem]]:
    """The translation in `text`, checked against the English `workshop`: every id must exist there."""
    try:
        located = read_located(text)
    except SourceError as exc:
        return None, [WorkshopProblem(exc.message, exc.line)]
    data = located.data
    problems: list[WorkshopProblem] = []

    def problem(message, path):
        problems.append(WorkshopProblem(message, located.line(path)))

    if not isinstance(data, dict):
        return None, [WorkshopProblem("a translation is a mapping with language, title, summary and lessons", 1)]
    for key in data:
        if key not in TOP_KEYS:
            problem(f"unknown field {key!r} in a translation (expected one of {', '.join(sorted(TOP_KEYS))})", (key,))
    language = data.get("language")
    if not isinstance(language, str) or not language:
        problem("missing field language (such as ko)", ())
        language = ""
    lessons_by_id = {lesson.id: lesson for lesson in workshop.lessons}
    lessons = {}
    raw_lessons = data.get("lessons") or {}
    if not isinstance(raw_lessons, dict):
        problem("lessons must map a lesson's id (its slug, or its number) to its text", ("lessons",))
        raw_lessons = {}
    for ident, raw in raw_lessons.items():
        path = ("lessons", ident)
        lesson = lessons_by_id.get(str(ident))
        if lesson is None:
            problem(f"no lesson has the id {ident!r} (ids: {', '.join(lessons_by_id)})", path)
            continue
        if not isinstance(raw, dict):
            problem("a lesson's translation is a mapping of title, text, task, hints and checks", path)
            continue
        for key in raw:
            if key not in LESSON_KEYS:
                problem(f"unknown field {key!r} in a lesson's translation", path + (key,))
        strings = {}
        for key in ("title", "text", "task"):
            if key in raw:
                if isinstance(raw[key], str):
                    strings[key] = raw[key]
                else:
                    problem(f"{key} must be a string", path + (key,))
        hints = raw.get("hints")
        if hints is not None and not (isinstance(hints, list) and all(isinstance(h, str) for h in hints)):
            problem("hints must be a list of strings", path + ("hints",))
            hints = None
        checks = raw.get("checks") or {}
        ids = {check.id for check in lesson.checks}
        clean, labels = {}, {}
        if not isinstance(checks, dict):
            problem("checks must map a check's id to its message", path + ("checks",))
            checks = {}
        for check_id, entry in checks.items():
            where = path + ("checks", check_id)
            if str(check_id) not in ids:
                problem(f"lesson {ident} has no check with the id {check_id!r} (ids: {', '.join(sorted(ids))})", where)
                continue
            if isinstance(entry, dict):
                for key in entry:
                    if key not in CHECK_KEYS:
                        problem(f"unknown field {key!r} in a check's translation (expected label or message)",
                                where + (key,))
                words = {k: entry[k] for k in CHECK_KEYS if k in entry}
            else:
                words = {"message": entry}
            for key, value in words.items():
                if not isinstance(value, str):
                    problem(f"a check's {key} must be a string", where)
                elif key == "message":
                    clean[str(check_id)] = value
                else:
                    labels[str(check_id)] = value
        lessons[str(ident)] = LessonText(hints=tuple(hints) if hints is not None else None, checks=clean,
                                         labels=labels, **strings)
    title = data.get("title") if isinstance(data.get("title"), str) else None
    summary = data.get("summary") if isinstance(data.get("summary"), str) else None
    return Translation(language, title, summary, lessons), problems


def translate(workshop: Workshop, translation: Translation) -> Workshop:
    """The workshop with the translation's words; English wherever the translation has none."""
    lessons = []
    for lesson in workshop.lessons:
        words = translation.lessons.get(lesson.id)
        if words is None:
            lessons.append(lesson)
            continue
        checks = tuple(replace(check, message=words.checks.get(check.id, check.message),
                               label=words.labels.get(check.id, check.label)) for check in lesson.checks)
        lessons.append(replace(
            lesson,
            title=words.title if words.title is not None else lesson.title,
            text=words.text if words.text is not None else lesson.text,
            task=words.task if words.task is not None else lesson.task,
            hints=words.hints if words.hints is not None else lesson.hints,
            checks=checks,
            language=translation.language if words.title is not None or words.text is not None else lesson.language,
        ))
    return replace(workshop, title=translation.title or workshop.title,
                   summary=translation.summary or workshop.summary, lessons=tuple(lessons),
                   language=translation.language)


def missing(workshop: Workshop, translation: Translation) -> list[WorkshopProblem]:
    """What the translation leaves in English, one warning per lesson, located at the English lesson."""
    out = []
    for lesson in workshop.lessons:
        words = translation.lessons.get(lesson.id)
        if words is None:
            out.append(WorkshopProblem(f"no {translation.language} text for lesson {lesson.id!r}: it shows in English",
                                       lesson.line, lesson.number))
            continue
        left = [key for key in ("title", "text", "task") if getattr(lesson, key) and getattr(words, key) is None]
        if lesson.hints and words.hints is None:
            left.append("hints")
        left += [f"the message of check {c.id!r}" for c in lesson.checks if c.message and c.id not in words.checks]
        left += [f"the label of check {c.id!r}" for c in lesson.checks if c.label and c.id not in words.labels]
        if left:
            out.append(WorkshopProblem(f"no {translation.language} text for lesson {lesson.id!r}: "
                                       + ", ".join(left) + " (shown in English)", lesson.line, lesson.number))
    return out
