"""Thin views: read the request, run the engine, render a page or one of its partials."""
from __future__ import annotations

from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from allocator import gallery
from allocator.engine.gates import GateError, parse_gates
from allocator.engine.report import outcome_data
from allocator.panels import page_context
from allocator.playground import (
    MAX_SCENARIO_BYTES,
    Settings,
    settings_from_form,
)
from allocator.sharing import uniform_gates
from allocator.summary import summarise
from allocator.worker import run_bounded


def _too_large(size: int) -> str:
    return f"The scenario is {size:,} bytes; the limit is {MAX_SCENARIO_BYTES:,} bytes."


def _render_page(request, settings: Settings, *, template="index.html", status=200, example=None, refused=None,
                 run=None, extra=None):
    size = len(settings.scenario.encode("utf-8", "surrogatepass"))
    if refused or size > MAX_SCENARIO_BYTES:
        context = page_context(settings, None, None, refused=refused or _too_large(size))
        status = 413
    else:
        scenario, outcome = (run or run_bounded)(settings)
        context = summarise(page_context(settings, scenario, outcome))
    context["example"] = example
    context.update(extra or {})
    if request.htmx:
        # htmx swaps only 2xx answers; a refusal must replace the old result to be seen.
        return render(request, f"{template}#results", context, status=200 if status == 413 else status)
    return render(request, template, context, status=status)


@require_http_methods(["GET", "POST"])
def index(request):
    """The playground: GET shows the default example; POST (plain form or htmx) shows a result."""
    if request.method == "POST":
        try:
            form = request.POST
        except RequestDataTooBig:
            size = int(request.META.get("CONTENT_LENGTH") or 0)
            return _render_page(request, Settings(scenario=""), refused=_too_large(size), status=413)
        if getattr(request, "upload_too_large", False):  # see allocator/uploads.py
            size = int(request.META.get("CONTENT_LENGTH") or 0)
            return _render_page(request, Settings(scenario=""), refused=_too_large(size), status=413)
        return _render_page(request, settings_from_form(form, request.FILES))
    example = gallery.get(request.GET.get("example") or gallery.DEFAULT)
    if example is None:
        raise Http404("no such example")
    settings = Settings(scenario=example.scenario, node=example.node or "", gates=example.component_gates())
    return _render_page(request, settings, example=example)


@require_GET
def examples(request):
    return render(request, "examples.html", {"examples": gallery.all_examples()})


@csrf_exempt
@require_POST
def api_allocate(request):
    """`POST /api/v1/allocate`: the JSON of `manage.py allocate -o json`, plus the explanation."""
    try:
        body = request.body
    except RequestDataTooBig:
        return JsonResponse({"outcome": "invalid", "message": _too_large(int(request.META.get("CONTENT_LENGTH") or 0))},
                            status=413)
    if len(body) > MAX_SCENARIO_BYTES:
        return JsonResponse({"outcome": "invalid", "message": _too_large(len(body))}, status=413)
    try:
        gates, _ = parse_gates(request.GET.get("featureGates", ""))  # locked-gate warnings come with the run
    except GateError as exc:
        return JsonResponse({"outcome": "invalid", "message": f"featureGates: {exc}"}, status=400)
    _, outcome = run_bounded(
        Settings(scenario=body, node=request.GET.get("node") or "", gates=uniform_gates(gates))
    )
    data = outcome_data(outcome, with_explanation=True)
    status = 400 if outcome.outcome == "invalid" else 200
    return JsonResponse(data, status=status, json_dumps_params={"ensure_ascii": False})


@require_GET
def healthz(request):
    return HttpResponse("ok", content_type="text/plain")

