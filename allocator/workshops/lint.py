"""Linting a workshop before the class: the format, the names its checks use, and the exercises,
and then an attempt to break every lesson.

Per lesson: the start must be valid and fail its checks (or the attendee has nothing to do); the
solution must pass them all; no check may raise; every declared `wrong:` answer must fail a check;
the automatic mutants of the solution must fail a check (the claim the lesson is about deleted,
each DeviceClass selector replaced by `true`, each protected object edited, each gate the lesson
names flipped on each component, each constraint and subrequest the lesson is about dropped);
and the automatic variants must still pass (documents reordered, YAML reformatted, an unrelated
claim added where the lesson allows it). A surviving mutant is reported with its diff.
`manage.py checkworkshop FILE` prints the result; sharing a workshop refuses one that does not lint clean.
"""
from __future__ import annotations

import copy
import difflib
import functools
from dataclasses import dataclass, replace

import yaml

from allocator.engine.gates import COMPONENT_KEYS
from allocator.engine.loader import load_scenario
from allocator.engine.scenario import read_scenario
from allocator.engine.vocabulary import OutcomeKind
from allocator.workshops.checks import NAMESPACED, PROTECTED_KINDS, Submission, claim_key, evaluate, matches_ref
from allocator.workshops.model import Lesson, Variant, Workshop, WorkshopProblem, parse_workshop
from allocator.workshops.patches import dump, identity
from allocator.workshops.playground import run_inline

MAX_DIFF_LINES = 30
MAX_MUTANTS = 30  # per lesson


def lint(text: str, *, run=run_inline, mutants: bool = True,
         max_trials: int | None = None) -> tuple[Workshop | None, list[WorkshopProblem]]:
    """The workshop and every problem found. `max_trials` bounds the mutants and variants run over the
    whole workshop (a shared workshop is linted on the server); past it the lint says so."""
    workshop, problems = parse_workshop(text)
    if workshop is None:
        return None, problems
    broken = {p.lesson for p in problems}
    if mutants and max_trials is not None:
        needed = trials_needed(workshop)
        if needed > max_trials:
            problems.append(WorkshopProblem(
                f"the lint would run {needed} wrong answers, mutants and variants; a shared workshop may need at "
                f"most {max_trials}: share it in parts", 1))
            return workshop, problems
    for lesson in workshop.lessons:
        found = _unknown_names(lesson)
        problems.extend(found)
        if found or lesson.number in broken or lesson.solution is None:
            continue
        problems.extend(_exercise_problems(lesson, run, mutants=mutants))
    problems.sort(key=lambda p: (p.line or 0, p.message))
    return workshop, problems


def trials_needed(workshop: Workshop) -> int:
    """How many wrong answers, mutants and variants the lint would run."""
    return sum(len(mutants_of(lesson)) + len(variants_of(lesson)) + len(lesson.wrong)
               for lesson in workshop.lessons if lesson.solution is not None)


def check_lesson(lesson: Lesson, variant, *, run=run_inline, start: Variant | None = None):
    """The check results for the attendee's `variant`, and the run's (scenario, outcome)."""
    start = start or lesson.start
    result = run(variant)
    scenario = result[0] if result[0] is not None else read_scenario(variant.scenario)  # a bound stopped the run
    attempt = Submission(variant=variant, outcome=result[1], start=start, scenario=scenario,
                         start_scenario=_parsed(start.scenario))
    return evaluate(lesson.checks, attempt, editable=lesson.editable), result


@functools.lru_cache(maxsize=64)
def _parsed(text: str):
    """A lesson's start, parsed once per text (every Check of every attendee reads its devices)."""
    return read_scenario(text)


def _exercise_problems(lesson: Lesson, run, *, mutants: bool) -> list[WorkshopProblem]:
    problems = []

    def problem(message, line=None):
        problems.append(WorkshopProblem(message, line or lesson.line, lesson.number))

    def broken_checks(results, what):
        for r in results:
            if r.broken:
                problem(f"the check ({r.label}) is broken on {what}: {r.broken}", r.line)

    start_results, (_, start_outcome) = check_lesson(lesson, lesson.start, run=run)
    expects_invalid = any(c.kind == "outcome" and c.spec["outcome"] == OutcomeKind.INVALID for c in lesson.checks)
    if start_outcome.outcome == OutcomeKind.INVALID and not expects_invalid:
        first = start_outcome.problems[0].render() if start_outcome.problems else start_outcome.message
        problem(f"the starting scenario is invalid: {first}")
    elif all(r.ok for r in start_results):
        problem("the starting scenario already passes every check: the attendee has nothing to do")
    broken_checks(start_results, "the start")
    solution_results, _ = check_lesson(lesson, lesson.solution, run=run)
    broken_checks(solution_results, "the solution")
    for result in solution_results:
        if not result.ok and not result.broken:
            problem(f"the solution fails this check ({result.label}): {result.message}", result.line)
    if not all(r.ok for r in solution_results):
        return problems
    for wrong in lesson.wrong:
        results, _ = check_lesson(lesson, wrong.variant, run=run)
        broken_checks(results, f"the wrong answer “{wrong.why}”")
        if all(r.ok for r in results):
            problem(f"the declared wrong answer “{wrong.why}” passes every check", wrong.line)
    if not mutants:
        return problems
    for mutant in mutants_of(lesson):
        results, _ = check_lesson(lesson, mutant.variant, run=run)
        broken_checks(results, f"a mutant ({mutant.what})")
        if all(r.ok for r in results):
            problem(f"a wrong answer passes every check: {mutant.what}\n{mutant.diff(lesson.solution)}")
    for variant in variants_of(lesson):
        results, _ = check_lesson(lesson, variant.variant, run=run, start=variant.start)
        failing = [r for r in results if not r.ok]
        if failing:
            problem(f"a right answer fails: {variant.what} fails “{failing[0].label}”: {failing[0].message}\n"
                    f"{variant.diff(lesson.solution)}")
    return problems


# ---- mutants and variants ------------------------------------------------------------------------


@dataclass(frozen=True)
class Trial:
    what: str
    variant: Variant
    start: Variant | None = None

    def diff(self, base: Variant) -> str:
        lines = list(difflib.unified_diff(base.scenario.splitlines(), self.variant.scenario.splitlines(),
                                          "solution", "mutant", lineterm="", n=1))
        if self.variant.gates != base.gates:
            lines.append(f"gates: {base.gates} -> {self.variant.gates}")
        if len(lines) > MAX_DIFF_LINES:
            lines = lines[:MAX_DIFF_LINES] + [f"... ({len(lines) - MAX_DIFF_LINES} more lines)"]
        return "\n".join(lines)


def _documents(text: str) -> list:
    """The scenario's objects as data, the items of a `kind: List` included (as the loader reads them)."""
    return [copy.deepcopy(obj.data) for obj in load_scenario(text).objects if isinstance(obj.data, dict)]


def _text(documents: list) -> str:
    return "\n---\n".join(dump(d).strip("\n") for d in documents) + "\n"


def _about(lesson: Lesson) -> dict:
    """What the lesson is about: the claims its checks name, and the constraints (claim, kind, attribute)
    and prioritized lists (claim, request) that its checks name or that its solution writes. A
    lesson whose checks never mention the solution's `firstAvailable` or constraint is still about it:
    dropping or reversing it must fail a check, or the checks do not test the idea."""
    claims, constraints, shapes = set(), [], []
    for check in lesson.checks:
        spec = check.spec
        for key in ("claim", "statusWrite"):
            if isinstance(spec.get(key), str):
                claims.add(claim_key(spec[key]))
        if check.kind == "constraint":
            constraints.append((claim_key(spec["claim"]), spec["constraint"], spec["attribute"]))
        if check.kind == "request" and "firstAvailable" in spec:
            shapes.append((claim_key(spec["claim"]), spec["request"]))
    for key, devices, before in _written_by_the_solution(lesson):
        claim = f"{key[1]}/{key[2]}"
        for constraint in devices.get("constraints") or []:
            if not isinstance(constraint, dict) or constraint in (before.get("constraints") or []):
                continue
            for kind in ("matchAttribute", "distinctAttribute"):
                if isinstance(constraint.get(kind), str) and (claim, kind, constraint[kind]) not in constraints:
                    constraints.append((claim, kind, constraint[kind]))
        old = {r.get("name"): r for r in before.get("requests") or [] if isinstance(r, dict)}
        for request in devices.get("requests") or []:
            if isinstance(request, dict) and isinstance(request.get("firstAvailable"), list) \
                    and request != old.get(request.get("name")) and (claim, request.get("name")) not in shapes:
                shapes.append((claim, request.get("name")))
    return {"claims": claims, "constraints": constraints, "shapes": shapes}


def _written_by_the_solution(lesson: Lesson):
    """(key, spec.devices in the solution, spec.devices at the start) of every claim and claim template
    the solution adds or changes."""
    start = {identity(d): d for d in _documents(lesson.start.scenario)}
    for data in _documents(lesson.solution.scenario):
        key = identity(data)
        if key is None or key[0] not in ("ResourceClaim", "ResourceClaimTemplate") or start.get(key) == data:
            continue
        devices = _devices_of(data)
        before = _devices_of(start[key]) if key in start else None
        if isinstance(devices, dict):
            yield key, devices, before if isinstance(before, dict) else {}


def _named_gates(lesson: Lesson) -> set:
    """(component, gate) pairs the lesson is about: its gate checks, and every gate its start or its
    solution sets, on every component."""
    named = {(c, gate) for variant in (lesson.start, lesson.solution) for values in variant.gates.values()
             for gate in values for c in COMPONENT_KEYS}
    for check in lesson.checks:
        if check.kind == "gate":
            component = check.spec.get("component", "all")
            for c in (COMPONENT_KEYS if component == "all" else (component,)):
                named.add((c, check.spec["gate"]))
    for c in COMPONENT_KEYS:
        before, after = lesson.start.gates.get(c, {}), lesson.solution.gates.get(c, {})
        for gate in set(before) | set(after):
            if lesson.start.gate_value(c, gate) != lesson.solution.gate_value(c, gate):
                named.add((c, gate))
    return named


def _devices_of(data: dict) -> dict | None:
    if data.get("kind") == "ResourceClaimTemplate":
        return ((data.get("spec") or {}).get("spec") or {}).get("devices")
    return (data.get("spec") or {}).get("devices")


def mutants_of(lesson: Lesson) -> list[Trial]:
    solution = lesson.solution
    documents = _documents(solution.scenario)
    about = _about(lesson)
    out, edits = [], []  # the mutants of the lesson's idea first; edits of protected objects after them

    def mutant(what, docs=None, gates=None, *, edit=False):
        text = _text(docs) if docs is not None else solution.scenario
        (edits if edit else out).append(
            Trial(what, replace(solution, scenario=text, gates=gates if gates is not None else solution.gates)))

    for i, data in enumerate(documents):
        key = identity(data)
        if key is None:
            continue
        kind, namespace, name = key
        label = f"{kind} {namespace + '/' if namespace else ''}{name}"
        if kind in ("ResourceClaim", "ResourceClaimTemplate") and f"{namespace}/{name}" in about["claims"]:
            mutant(f"{label} deleted", documents[:i] + documents[i + 1:])
        editable = any(matches_ref(ref, key) for ref in lesson.editable)
        if kind == "DeviceClass" and (data.get("spec") or {}).get("selectors"):
            changed = copy.deepcopy(data)
            changed["spec"]["selectors"] = [{"cel": {"expression": "true"}}]
            mutant(f"the selectors of {label} replaced by true", documents[:i] + [changed] + documents[i + 1:])
        if kind in PROTECTED_KINDS and not editable:
            changed = copy.deepcopy(data)
            changed.setdefault("metadata", {}).setdefault("labels", {})["lint.playground/edited"] = "true"
            mutant(f"{label} edited", documents[:i] + [changed] + documents[i + 1:], edit=True)
        if kind == "ResourceClaim" and (data.get("status") or {}).get("allocation"):
            changed = copy.deepcopy(data)
            moved = []
            for result in changed["status"]["allocation"].get("devices", {}).get("results") or []:
                other = _other_device(documents, result.get("driver"), result.get("pool"), result.get("device"))
                if other:
                    moved.append(f"{result.get('device')} -> {other}")
                    result["device"] = other
            if moved:
                mutant(f"the status of {label} rewritten ({', '.join(moved)})",
                       documents[:i] + [changed] + documents[i + 1:])
        devices = _devices_of(data) if kind in ("ResourceClaim", "ResourceClaimTemplate") else None
        if not isinstance(devices, dict):
            continue
        for claim, constraint, attribute in about["constraints"]:
            if claim != f"{namespace}/{name}":
                continue
            kept = [c for c in devices.get("constraints") or [] if c.get(constraint) != attribute]
            if len(kept) != len(devices.get("constraints") or []):
                changed = copy.deepcopy(data)
                _devices_of(changed)["constraints"] = kept
                mutant(f"the {constraint} constraint on {attribute} dropped from {label}",
                       documents[:i] + [changed] + documents[i + 1:])
        for claim, request_name in about["shapes"]:
            if claim != f"{namespace}/{name}":
                continue
            for ri, request in enumerate(devices.get("requests") or []):
                subs = request.get("firstAvailable") if isinstance(request, dict) else None
                if request.get("name") != request_name or not isinstance(subs, list):
                    continue
                for si in range(len(subs)):
                    if len(subs) < 2:
                        break
                    changed = copy.deepcopy(data)
                    del _devices_of(changed)["requests"][ri]["firstAvailable"][si]
                    mutant(f"subrequest {si + 1} of {request_name} dropped from {label}",
                           documents[:i] + [changed] + documents[i + 1:])
                if len(subs) > 1:
                    changed = copy.deepcopy(data)
                    _devices_of(changed)["requests"][ri]["firstAvailable"].reverse()
                    mutant(f"the subrequests of {request_name} in {label} reversed",
                           documents[:i] + [changed] + documents[i + 1:])
    for component, gate in sorted(_named_gates(lesson)):
        now = solution.gate_value(component, gate)
        flipped = solution.with_gate(component, gate, not now).gates
        mutant(f"{gate} turned {'off' if now else 'on'} in {component}", gates={c: v for c, v in flipped.items() if v})
    # A shared workshop is linted on the server: a lesson with hundreds of objects gets a bounded
    # number of runs (every protected object is checked by every run all the same).
    return (out + edits)[:MAX_MUTANTS]


def _other_device(documents: list, driver, pool, device) -> str | None:
    """Another device of the same driver and pool, for a mutant that moves an allocation."""
    for data in documents:
        spec = data.get("spec") if isinstance(data, dict) and data.get("kind") == "ResourceSlice" else None
        if not isinstance(spec, dict) or spec.get("driver") != driver or (spec.get("pool") or {}).get("name") != pool:
            continue
        for d in spec.get("devices") or []:
            if isinstance(d, dict) and d.get("name") not in (None, device):
                return d["name"]
    return None


UNRELATED = [
    {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "unrelated.lint.playground"},
     "spec": {"selectors": [{"cel": {"expression": 'device.driver == "unrelated.lint.playground"'}}]}},
    {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "unrelated-lint"},
     "spec": {"driver": "unrelated.lint.playground", "allNodes": True,
              "pool": {"name": "unrelated", "generation": 1, "resourceSliceCount": 1},
              "devices": [{"name": "unrelated-0"}]}},
]
UNRELATED_CLAIM = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
    "metadata": {"name": "unrelated-lint", "namespace": "default"},
    "spec": {"devices": {"requests": [{"name": "x", "exactly": {"deviceClassName": "unrelated.lint.playground"}}]}},
}


def variants_of(lesson: Lesson) -> list[Trial]:
    solution = lesson.solution
    documents = _documents(solution.scenario)
    out = [
        Trial("the documents in reverse order", replace(solution, scenario=_text(list(reversed(documents))))),
        Trial("the YAML reformatted", replace(solution, scenario="\n---\n".join(
            yaml.safe_dump(d, default_flow_style=True, sort_keys=True, width=100000).strip() for d in documents)
            + "\n")),
    ]
    if lesson.add_claim:
        start = replace(lesson.start, scenario=lesson.start.scenario.rstrip("\n") + "\n---\n" + _text(UNRELATED))
        text = _text(documents + UNRELATED + [UNRELATED_CLAIM])
        out.append(Trial("an unrelated claim added", replace(solution, scenario=text), start))
    return out


# ---- names the checks use ------------------------------------------------------------------------


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


def _unknown_names(lesson: Lesson) -> list[WorkshopProblem]:
    """Checks that name a claim, pod, device or counter set that neither the start nor the solution has."""
    names = _names(lesson.start.scenario)
    if lesson.solution is not None:
        names |= _names(lesson.solution.scenario)
    claims = {n for kind, n in names if kind == "ResourceClaim"}
    templates = {n for kind, n in names if kind == "ResourceClaimTemplate"}
    pods = {n for kind, n in names if kind == "Pod"}
    problems = []
    for check in lesson.checks:
        spec = check.spec
        claim = spec.get("claim") or spec.get("statusWrite")
        if isinstance(claim, str):
            allowed = claims | templates if check.kind in ("request", "constraint", "selects") else claims
            if claim_key(claim) not in allowed:
                known = ", ".join(sorted(allowed)) or "none"
                problems.append(WorkshopProblem(f"the {check.kind} check names claim {claim_key(claim)}, which the "
                                                f"lesson does not have (claims: {known})", check.line, lesson.number))
        devices = [spec["row"]] if check.kind == "row" else [spec["device"]] if check.kind == "capacity" else \
            list(spec["selects"]) if check.kind == "selects" else []
        for device in devices:
            if ("device", device) not in names:
                problems.append(WorkshopProblem(f"the {check.kind} check names device {device}, which no "
                                                f"ResourceSlice of the lesson has", check.line, lesson.number))
        if check.kind == "counter" and ("counterSet", spec["counterSet"]) not in names:
            known = ", ".join(sorted(n for kind, n in names if kind == "counterSet")) or "none"
            problems.append(WorkshopProblem(f"the counter check names counter set {spec['counterSet']}, which the "
                                            f"lesson's slices do not have (counter sets: {known})", check.line,
                                            lesson.number))
        if check.kind == "pod" and claim_key(spec["pod"]) not in pods:
            problems.append(WorkshopProblem(f"the pod check names pod {claim_key(spec['pod'])}, which the lesson "
                                            f"does not have (pods: {', '.join(sorted(pods)) or 'none'})", check.line,
                                            lesson.number))
    return problems
