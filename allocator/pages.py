"""Rendering the playground page (or its results partial, for htmx) for a run: shared by the page,
the short links and the embed view."""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from functools import lru_cache

from django.shortcuts import render
from django.utils.translation import get_language

from allocator import gallery
from allocator.engine.run import ALLOCATED, together_failure
from allocator.engine.scenario import read_scenario
from allocator.panels import page_context
from allocator.fairness import Throttled
from allocator.run_settings import MAX_SCENARIO_BYTES, RunSettings
from allocator.sharing import client_address
from allocator.worker import run_bounded


# The Kubernetes documentation of DRA, by page language (English for any other).
DRA_DOCS = {
    "en": "https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/",
    "ko": "https://kubernetes.io/ko/docs/concepts/scheduling-eviction/dynamic-resource-allocation/",
}


def dra_docs(language: str | None) -> str:
    return DRA_DOCS.get((language or "en").split("-")[0], DRA_DOCS["en"])


def too_large(size: int | str) -> str:
    size_text = f"{size:,} bytes" if isinstance(size, int) else size
    return f"The scenario is {size_text}; the limit is {MAX_SCENARIO_BYTES:,} bytes."


def rate_message(wait: int) -> str:
    """The refusal of a share (of a scenario or a workshop) while its client's share limit holds."""
    minutes = max(1, round(wait / 60))
    return (f"Too many shares from your address in a short time. Try again in about {minutes} "
            f"minute{'s' if minutes != 1 else ''}.")


def presenting(request) -> bool:
    """`?present=1`: big fonts and high contrast for a projector (the `present` class on <html>)."""
    return request.GET.get("present") == "1"


def render_run(request, run: RunSettings, *, template="index.html", status=200, origin=None, refused=None,
               extra=None, fold_status_writers=False):
    """Run the engine (unless the text is empty or too large) and render `template`, or only its
    `results` partial for htmx. `origin` is the gallery example the text came from, for the
    "reset to the example" link; the example's notes show only while the text is still the example's.
    With `fold_status_writers` (the playground, until its reader asks) the status-writers grid of a
    scenario without RBAC objects is a button, not built. The run is admitted as the request's client."""
    run = run.admitted(client_address(request))
    size = len(run.scenario.encode("utf-8", "surrogatepass"))
    retry_after = None
    if not refused and size > MAX_SCENARIO_BYTES:
        refused, status = too_large(size), 413
    scenario = outcome = None
    if not refused and run.scenario.strip():
        try:
            scenario, outcome = run_bounded(run)
        except Throttled as exc:  # this client has too many runs going, or too many slow ones
            refused, status, retry_after = exc.message, 429, exc.retry_after
    dropped = getattr(outcome, "node_dropped", None)
    if dropped:  # run_settings' node rule: the run took any node, and so does the page's Node menu
        run = replace(run, node="")
    if refused:
        context = page_context(run, None, None, refused=refused)
        status = status if status != 200 else 413
    else:
        # each panel cuts big lists to its bound
        context = page_context(run, scenario, outcome, fold_status_writers=fold_status_writers)
        context["empty"] = not run.scenario.strip()
    context["node_dropped"] = dropped
    context["status_writers_asked"] = not fold_status_writers
    # Several pending claims failed together: offer to judge each alone (engine/run.py).
    if outcome is not None:
        context["alone_allocated"] = sum(1 for a in outcome.alone or () if a.outcome == ALLOCATED)
        context["pending_claim_count"] = sum(1 for c in (scenario.claims if scenario else ()) if c.allocation is None)
    context["claims_together"] = (scenario is not None and outcome is not None and not refused
                                  and together_failure(scenario, outcome))
    outcome = context.get("outcome")
    if outcome is not None:
        context["node_unknown"] = outcome.unknown_node is not None
        # "Allocated" for no claim at all reads as success; a typo'd kind leaves nothing to allocate.
        context["nothing_pending"] = outcome.outcome == ALLOCATED and not outcome.claims and not outcome.pods
    example = gallery.with_scenario(run.scenario)
    if origin is not None and example is None and not refused and not edited_from(origin, scenario):
        origin = None  # a whole file pasted over the example: nothing of it is left
    context.update({
        "example": example,
        "origin": example or origin,
        "all_examples": gallery.all_examples(),
        "default_example": gallery.DEFAULT,
        "presenting": presenting(request),
        "dra_docs": dra_docs(get_language()),
    })
    context.update(extra or {})
    if request.htmx:
        # htmx swaps only 2xx answers; a refusal must replace the old result to be seen.
        response = render(request, f"{template}#results", context, status=200 if status in (400, 413, 429) else status)
    else:
        response = render(request, template, context, status=status)
    if retry_after:
        response["Retry-After"] = str(retry_after)
    return response


@lru_cache(maxsize=64)
def _example_objects(text: str) -> frozenset:
    return frozenset(read_scenario(text).refs)


def edited_from(example, scenario) -> bool:
    """Whether a text is still "edited from" a gallery example: it keeps at least one of the
    example's objects (the same kind and name). A file pasted over the whole example keeps none."""
    if scenario is None:  # a run stopped by a bound reads nothing: keep what the page said
        return True
    return not _example_objects(example.scenario).isdisjoint(scenario.refs)


KIND_LINE = re.compile(r"^kind:\s*([A-Za-z]+)\s*$", re.MULTILINE)


def _plural(kind: str) -> str:
    return kind + ("es" if kind.endswith("s") else "s")


def describe(text: str) -> tuple[str, str]:
    """(title, description) of a scenario for link previews: its first comment line, and what it holds."""
    comment = next((line.lstrip("#").strip() for line in text.splitlines()
                    if line.startswith("#") and line.lstrip("#").strip()), "")
    counts = Counter(KIND_LINE.findall(text))
    holds = ", ".join(f"{n} {_plural(kind) if n > 1 else kind}" for kind, n in counts.most_common())
    title = comment or (f"DRA scenario: {holds}" if holds else "DRA scenario")
    description = f"{comment} — {holds}" if comment and holds else (comment or holds or "An empty scenario")
    return title, description + ". Open it to see what the DRA allocator picks, and why."
