"""Thin views: read the request, run the engine, render a page or one of its partials."""
from __future__ import annotations

from django.core.exceptions import RequestDataTooBig
from django.db import connection
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from allocator import gallery, safe_cache
from allocator.fairness import Throttled
from allocator.engine.gates import GateError, parse_gates
from allocator.engine.report import outcome_data
from allocator.middleware import refuses_oversize
from allocator.panels import page_context
from allocator.playground import (
    MAX_SCENARIO_BYTES,
    Settings,
    settings_from_form,
)
from allocator.sharing import client_address, uniform_gates
from allocator.worker import run_bounded


def _too_large(size: int | str) -> str:
    size_text = f"{size:,} bytes" if isinstance(size, int) else size
    return f"The scenario is {size_text}; the limit is {MAX_SCENARIO_BYTES:,} bytes."


def _render_page(request, settings: Settings, *, template="index.html", status=200, example=None, refused=None,
                 extra=None):
    size = len(settings.scenario.encode("utf-8", "surrogatepass"))
    retry_after = None
    scenario = outcome = None
    if not refused and size > MAX_SCENARIO_BYTES:
        refused, status = _too_large(size), 413
    if not refused:
        try:
            scenario, outcome = run_bounded(settings, client=client_address(request))
        except Throttled as exc:
            refused, status, retry_after = exc.message, 429, exc.retry_after
    context = page_context(settings, scenario, outcome, refused=refused)
    context["example"] = example
    context.update(extra or {})
    if request.htmx:
        # htmx swaps only 2xx answers; a refusal must replace the old result to be seen.
        response = render(request, f"{template}#results", context, status=200 if status in (413, 429) else status)
    else:
        response = render(request, template, context, status=status)
    if retry_after:
        response["Retry-After"] = str(retry_after)
    return response


def _page_too_large(request, size_text: str):
    return _render_page(request, Settings(scenario=""), refused=_too_large(size_text), status=413)


@refuses_oversize(_page_too_large)
@require_http_methods(["GET", "POST"])
def index(request):
    """The playground: GET shows the default example; POST (plain form or htmx) shows a result."""
    if request.method == "POST":
        try:
            form = request.POST
        except RequestDataTooBig:
            size = int(request.META.get("CONTENT_LENGTH") or 0)
            return _render_page(request, Settings(scenario=""), refused=_too_large(size), status=413)
        return _render_page(request, settings_from_form(form))
    example = gallery.get(request.GET.get("example") or gallery.DEFAULT)
    if example is None:
        raise Http404("no such example")
    settings = Settings(scenario=example.scenario, node=example.node or "", gates=example.component_gates())
    return _render_page(request, settings, example=example)


@require_GET
def examples(request):
    return render(request, "examples.html", {"examples": gallery.all_examples()})


def _api_too_large(request, size_text: str):
    return JsonResponse({"outcome": "invalid", "message": _too_large(size_text)}, status=413)


@refuses_oversize(_api_too_large)
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
    try:
        _, outcome = run_bounded(
            Settings(scenario=body, node=request.GET.get("node") or "", gates=uniform_gates(gates)),
            client=client_address(request),
        )
    except Throttled as exc:
        response = JsonResponse({"message": exc.message}, status=429)
        response["Retry-After"] = str(exc.retry_after)
        return response
    data = outcome_data(outcome, with_explanation=True)
    status = 400 if outcome.outcome == "invalid" else 200
    return JsonResponse(data, status=status, json_dumps_params={"ensure_ascii": False})


@require_GET
def healthz(request):
    """Liveness: the process answers."""
    return HttpResponse("ok", content_type="text/plain")


@require_GET
def readyz(request):
    """Readiness, for a load balancer: the database and the cache, each with its state. Without
    the database nothing can be shared or opened (503); without the cache the playground still
    serves, only slower (200, "degraded")."""
    database = _database_status()
    cache = safe_cache.status()
    status = "ok" if database == cache == "ok" else ("unavailable" if database != "ok" else "degraded")
    response = JsonResponse({"database": database, "cache": cache, "status": status},
                            status=503 if database != "ok" else 200)
    response["Cache-Control"] = "no-store"
    return response


def _database_status() -> str:
    try:
        connection.ensure_connection()
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as exc:  # any driver error: refused, timed out, authentication
        return f"unavailable: {type(exc).__name__}: {exc}"
    return "ok"

