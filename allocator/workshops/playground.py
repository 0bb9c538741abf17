"""The one place workshops meet the page's runs: a lesson's variants are RunSettings, read from the
page's form here and run in this process (the CLI, the test suite) or in a worker (views), admitted
as the request's client; and the budget of a workshop share's lint.

Kept small on purpose: the page's form is shared with the rest of the playground, so nothing else
under allocator/workshops imports it.
"""
from __future__ import annotations

import time
from dataclasses import replace

from allocator.forms import read_run_form
from allocator.run_settings import RunSettings, run_in_process
from allocator.sharing import ShareError
from allocator.workshops.model import MAX_LESSONS, Variant, parse_workshop

# A workshop share runs every lesson's start and solution, then the lint's mutants and variants (at most
# MAX_LINT_TRIALS of them): all of them together get this much time (settings.WORKSHOP_LINT_BUDGET
# overrides it), and at most this many runs (settings.WORKSHOP_LINT_MAX_RUNS; by default every start and
# solution of the most lessons a workshop may have, and every trial).
MAX_LINT_TRIALS = 600  # the shipped 13-lesson workshop needs about 150
LINT_BUDGET_SECONDS = 10.0
LINT_MAX_RUNS = 2 * MAX_LESSONS + MAX_LINT_TRIALS


def run_request_for(variant: Variant) -> RunSettings:
    """The variant as the page runs it (a Variant is the page's RunSettings)."""
    return variant


def variant_from_form(data, prefix: str = "", *, client: str | None = None) -> Variant:
    """The page's form fields (scenario, node, gate-<component>-<gate>, the versions), optionally
    prefixed as `a-`; admitted as `client` when given."""
    if prefix:
        data = _Unprefixed(data, prefix)
    run = read_run_form(data)
    return replace(run, scenario=run.scenario.replace("\r\n", "\n"), client=client)


class _Unprefixed:
    def __init__(self, data, prefix):
        self.data, self.prefix = data, prefix

    def get(self, key, default=None):
        return self.data.get(self.prefix + key, default)

    def __contains__(self, key):
        return self.prefix + key in self.data


def run_inline(variant: Variant):
    """(scenario, outcome) in this process: for the CLI and the test suite."""
    return run_in_process(variant)


def run_in_worker(variant: Variant):
    """(scenario, outcome) bounded in a worker process and cached: for views. The variant must be
    admitted (`Variant.admitted(client)`); one that is not is refused (worker.NotAdmitted)."""
    from allocator.worker import run_bounded

    return run_bounded(variant)


class LintStopped(ShareError):
    """A workshop share whose lint ran out of its budget, or whose client is over its run limits."""


class LintRuns:
    """The runs of one workshop share's lint: each admitted as the sharing client (so its limits and
    its lower priority for heavy runs apply), all of them within one time budget. Past the budget
    the lint stops with a 400 naming the lesson it got to, and the client is charged one slow run.

    `lint(text, run=LintRuns(text, client))`: the lessons are read again here (cheap beside the runs)
    only to name the one the lint stopped at."""

    def __init__(self, text: str, client: str, *, budget: float | None = None, max_runs: int | None = None,
                 run=run_in_worker):
        from django.conf import settings

        if budget is None:
            budget = float(getattr(settings, "WORKSHOP_LINT_BUDGET", LINT_BUDGET_SECONDS))
        if max_runs is None:
            max_runs = int(getattr(settings, "WORKSHOP_LINT_MAX_RUNS", LINT_MAX_RUNS))
        self.max_runs = max_runs
        self.text = text
        self._lessons = None
        self.client = client
        self.budget = budget
        self.spent = 0.0
        self.runs = 0
        self._run = run
        self._at = 0  # index of the lesson the last run belonged to (the lint goes in lesson order)

    @property
    def lessons(self) -> tuple:
        # Read on the first run only: by then the share has passed its size check and the lint its parse.
        if self._lessons is None:
            workshop, _ = parse_workshop(self.text)
            self._lessons = workshop.lessons if workshop is not None else ()
        return self._lessons

    def _lesson_of(self, variant: Variant):
        for index in range(self._at, len(self.lessons)):
            lesson = self.lessons[index]
            if variant == lesson.start or variant == lesson.solution:
                self._at = index
                return lesson
        return self.lessons[self._at] if self.lessons else None

    def _stopped_at(self, lesson) -> str:
        return f"lesson {lesson.number} ({lesson.title})" if lesson is not None else "its first lesson"

    def __call__(self, variant: Variant):
        from allocator import fairness

        lesson = self._lesson_of(variant)
        if self.spent >= self.budget or self.runs >= self.max_runs:
            fairness.charge_slow_run(self.client)
            spent = (f"took more than {self.budget:g} s to check in all ({self.runs} runs)" if self.spent >= self.budget
                     else f"need more than {self.max_runs} runs to check")
            raise LintStopped(
                f"The workshop's exercises {spent}; the check stopped at {self._stopped_at(lesson)}. Make the "
                f"lessons' scenarios smaller (fewer devices or claims, or pick a node), or share fewer lessons.")
        started = time.monotonic()
        try:
            return self._run(variant.admitted(self.client))
        except fairness.Throttled as exc:
            raise LintStopped(f"{exc.message} (the check stopped at {self._stopped_at(lesson)})", 429) from None
        finally:
            self.spent += time.monotonic() - started
            self.runs += 1
