"""Rendering the playground page (or its results partial, for htmx) for a run: shared by the page,
the short links and the embed view."""
from __future__ import annotations

from django.shortcuts import render

from allocator import gallery
from allocator.panels import page_context
from allocator.runs import MAX_SCENARIO_BYTES, RunRequest
from allocator.worker import run_bounded


def too_large(size: int) -> str:
    return f"The scenario is {size:,} bytes; the limit is {MAX_SCENARIO_BYTES:,} bytes."


def render_run(request, run: RunRequest, *, template="index.html", status=200, origin=None, refused=None,
               extra=None):
    """Run the engine (unless the text is empty or too large) and render `template`, or only its
    `results` partial for htmx. `origin` is the gallery example the text came from, for the
    "reset to the example" link; the example's notes show only while the text is still the example's."""
    size = len(run.scenario.encode("utf-8", "surrogatepass"))
    if refused or size > MAX_SCENARIO_BYTES:
        context = page_context(run, None, None, refused=refused or too_large(size))
        status = 413
    elif not run.scenario.strip():
        context = page_context(run, None, None)
        context["empty"] = True
    else:
        scenario, outcome = run_bounded(run)
        context = page_context(run, scenario, outcome)
    example = gallery.with_scenario(run.scenario)
    context["example"] = example
    context["origin"] = example or origin
    context.update(extra or {})
    if request.htmx:
        # htmx swaps only 2xx answers; a refusal must replace the old result to be seen.
        return render(request, f"{template}#results", context, status=200 if status == 413 else status)
    return render(request, template, context, status=status)
