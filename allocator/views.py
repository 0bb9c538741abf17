"""Thin views: read the request, run the engine, render a page or one of its partials."""
from __future__ import annotations

from django.core.exceptions import RequestDataTooBig
from django.db import connection
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods

from allocator import answers, gallery, safe_cache
from allocator.fairness import Throttled
from allocator.forms import PlaygroundForm, json_form_data, read_api_body
from allocator.middleware import refuses_oversize
from allocator.pages import render_run, too_large
from allocator.run_settings import MAX_SCENARIO_BYTES, RunSettings, SettingsError
from allocator.worker import answer_bounded


def _page_too_large(request, size_text: str):
    return render_run(request, RunSettings(scenario=""), refused=too_large(size_text), status=413)


@refuses_oversize(_page_too_large)
@require_http_methods(["GET", "POST"])
def index(request):
    """The playground: GET shows an example; POST (plain form or htmx) shows a result."""
    if request.method == "POST":
        try:
            if request.content_type == "application/json":  # the page's script sends its form as JSON
                form = PlaygroundForm(json_form_data(request.body))
            else:
                form = PlaygroundForm(request.POST, request.FILES)
        except RequestDataTooBig:
            size = int(request.META.get("CONTENT_LENGTH") or 0)
            return render_run(request, RunSettings(scenario=""), refused=too_large(size), status=413)
        except SettingsError as exc:
            return render_run(request, RunSettings(scenario=""), refused=exc.message, status=exc.status)
        if getattr(request, "upload_too_large", False):  # see allocator/uploads.py
            size = int(request.META.get("CONTENT_LENGTH") or 0)
            return render_run(request, RunSettings(scenario=""), refused=too_large(size), status=413)
        form.is_valid()  # every field is optional; a bad one is left out of cleaned_data
        origin = gallery.get(form.cleaned_data.get("example") or "")
        asked = form.cleaned_data.get("status_writers") or (origin is not None and "status-writers" in origin.shows)
        return render_run(request, form.run_settings(), origin=origin, fold_status_writers=not asked)
    example = gallery.get(request.GET.get("example") or gallery.DEFAULT)
    if example is None:
        raise Http404(_("There is no example “%(name)s”.") % {"name": request.GET["example"]})
    return render_run(request, example.run_settings(), fold_status_writers="status-writers" not in example.shows)


@require_GET
def examples(request):
    return render(request, "examples.html", {"examples": gallery.all_examples()})


def _api_too_large(request, size_text: str):
    return JsonResponse({"outcome": "invalid", "message": too_large(size_text)}, status=413)


@refuses_oversize(_api_too_large)
@csrf_exempt
def api_allocate(request):
    """`POST /api/v1/allocate`: the JSON of `manage.py allocate -o json`, plus the explanation. The body is
    the scenario (`?node=`, `?featureGates=`) or the JSON `{"scenario", "node", "gates"}` that
    `/api/v1/scenarios` takes."""
    if request.method != "POST":
        response = JsonResponse({"outcome": "invalid", "message": "POST a scenario to /api/v1/allocate"}, status=405)
        response["Allow"] = "POST"
        return response
    try:
        body = request.body
    except RequestDataTooBig:
        return JsonResponse({"outcome": "invalid", "message": too_large(int(request.META.get("CONTENT_LENGTH") or 0))},
                            status=413)
    if len(body) > MAX_SCENARIO_BYTES:
        return JsonResponse({"outcome": "invalid", "message": too_large(len(body))}, status=413)
    try:
        run = read_api_body(request, body, decode=False)
        explain = answers.slice_from_query(request.GET)
    except (SettingsError, answers.SliceError) as exc:
        return JsonResponse({"outcome": "invalid", "message": getattr(exc, "message", str(exc))}, status=400)
    language = request.GET.get("lang", "en")  # `?lang=ko`: a `text` object beside the English keys (README "API")
    try:  # bounded (allocator/answers.py), and made in the worker: the whole explanation never comes here
        answer, outcome = answer_bounded(answers.Question(run, explain, len(body), with_rows=language != "en"))
    except Throttled as exc:
        response = JsonResponse({"message": exc.message}, status=429)
        response["Retry-After"] = str(exc.retry_after)
        return response
    status = 400 if outcome.outcome == "invalid" else 200
    if language != "en":
        answer = _with_text(answer, outcome, language)
    return HttpResponse(answer, status=status, content_type="application/json")


def _with_text(answer: bytes, outcome, language: str) -> bytes:
    from django.conf import settings
    from django.utils import translation

    from allocator import wording

    if language not in {code for code, _ in settings.LANGUAGES}:
        return answer  # an unknown language adds nothing: the English answer, as without ?lang=
    with translation.override(language):
        return wording.with_api_text(answer, outcome)


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

