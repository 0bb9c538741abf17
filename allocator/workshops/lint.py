"""Linting a workshop before the class: the format, the names its checks use, and the exercises.

Every lesson's starting scenario must fail its checks (or the attendee has nothing to do) and
its solution must pass them all. `manage.py checkworkshop FILE` prints the result; sharing a
workshop refuses one that does not lint clean.
"""
from __future__ import annotations

from allocator.engine.loader import load_scenario
from allocator.workshops.checks import NAMESPACED, Submission, claim_key, evaluate
from allocator.workshops.model import Lesson, Problem, Workshop, parse_workshop
from allocator.workshops.playground import run_inline


def lint(text: str, *, run=run_inline) -> tuple[Workshop | None, list[Problem]]:
    workshop, problems = parse_workshop(text)
    if workshop is None:
        return None, problems
    broken = {p.lesson for p in problems}
    for lesson in workshop.lessons:
        found = _unknown_names(lesson)
        problems.extend(found)
        if found or lesson.number in broken or lesson.solution is None:
            continue
        problems.extend(_exercise_problems(lesson, run))
    problems.sort(key=lambda p: (p.line or 0, p.message))
    return workshop, problems


def check_lesson(lesson: Lesson, variant, *, run=run_inline):
    """The check results for the attendee's `variant`, and the run's (scenario, outcome)."""
    result = run(variant)
    return evaluate(lesson.checks, Submission(variant=variant, outcome=result[1], start=lesson.start)), result


def _exercise_problems(lesson: Lesson, run) -> list[Problem]:
    problems = []
    start_results, _ = check_lesson(lesson, lesson.start, run=run)
    if all(r.ok for r in start_results):
        problems.append(Problem("the starting scenario already passes every check: the attendee has nothing to do",
                                lesson.line, lesson.number))
    solution_results, _ = check_lesson(lesson, lesson.solution, run=run)
    for result in solution_results:
        if not result.ok:
            problems.append(Problem(f"the solution fails this check ({result.label}): {result.message}",
                                    result.line, lesson.number))
    return problems


def _names(text: str) -> set:
    """(kind, name) of every object, plus ("device", ...) in its three spellings and ("counterSet", name)."""
    loaded = load_scenario(text)
    names = set()
    for obj in loaded.objects:
        kind = obj.data.get("kind")
        meta = obj.data.get("metadata") or {}
        if isinstance(meta, dict) and isinstance(meta.get("name"), str):
            namespace = meta.get("namespace") or ("default" if kind in NAMESPACED else "")
            names.add((kind, f"{namespace}/{meta['name']}" if namespace else meta["name"]))
        if kind == "ResourceSlice":
            names |= _slice_names(obj.data.get("spec"))
    return names


def _slice_names(spec) -> set:
    if not isinstance(spec, dict):
        return set()
    driver = spec.get("driver") or ""
    pool = spec.get("pool") if isinstance(spec.get("pool"), dict) else {}
    pool = pool.get("name") or ""
    names = set()
    for device in spec.get("devices") or []:
        if isinstance(device, dict) and isinstance(device.get("name"), str):
            name = device["name"]
            names |= {("device", name), ("device", f"{pool}/{name}"), ("device", f"{driver}/{pool}/{name}")}
    for counter_set in spec.get("sharedCounters") or []:
        if isinstance(counter_set, dict) and isinstance(counter_set.get("name"), str):
            names.add(("counterSet", counter_set["name"]))
    return names


def _unknown_names(lesson: Lesson) -> list[Problem]:
    """Checks that name a claim, pod or node that neither the start nor the solution has."""
    names = _names(lesson.start.scenario)
    if lesson.solution is not None:
        names |= _names(lesson.solution.scenario)
    claims = {n for kind, n in names if kind == "ResourceClaim"}
    templates = {n for kind, n in names if kind == "ResourceClaimTemplate"}
    pods = {n for kind, n in names if kind == "Pod"}
    problems = []
    for check in lesson.checks:
        spec = check.spec
        claim = spec.get("claim") or spec.get("statusWriters")
        if isinstance(claim, str):
            allowed = claims | templates if check.kind == "selector" else claims
            if claim_key(claim) not in allowed:
                known = ", ".join(sorted(allowed)) or "none"
                problems.append(Problem(f"the {check.kind} check names claim {claim_key(claim)}, which the lesson "
                                        f"does not have (claims: {known})", check.line, lesson.number))
        device = spec.get("row") or (spec.get("device") if check.kind == "capacity" else None)
        if isinstance(device, str) and ("device", device) not in names:
            problems.append(Problem(f"the {check.kind} check names device {device}, which no ResourceSlice of the "
                                    f"lesson has", check.line, lesson.number))
        if check.kind == "counter" and ("counterSet", spec["counterSet"]) not in names:
            known = ", ".join(sorted(n for kind, n in names if kind == "counterSet")) or "none"
            problems.append(Problem(f"the counter check names counter set {spec['counterSet']}, which the lesson's "
                                    f"slices do not have (counter sets: {known})", check.line, lesson.number))
        if check.kind == "pod" and claim_key(spec["pod"]) not in pods:
            problems.append(Problem(f"the pod check names pod {claim_key(spec['pod'])}, which the lesson does not "
                                    f"have (pods: {', '.join(sorted(pods)) or 'none'})", check.line, lesson.number))
    return problems
