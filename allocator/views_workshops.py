"""Workshop pages: the list, a workshop's lessons, a lesson in the playground with its checks,
shared workshops (`/w/<id>`), and the compare view."""
from __future__ import annotations

import difflib
from dataclasses import dataclass, replace

from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from allocator import compare as comparing
from allocator import rooms
from allocator.engine.gates import COMPONENTS, GATES
from allocator.middleware import refuses_oversize
from allocator.models import SharedWorkshop
from allocator.sharing import MAX_SHARE_BYTES, ShareError, client_address, fragment, load_json, rate_limited
from allocator.pages import rate_message, render_run
from allocator.workshops import library, markdown
from allocator.workshops.lint import check_lesson
from allocator.workshops.model import Workshop, parse_workshop
from allocator.workshops.playground import LintRuns, run_in_worker, run_request_for, variant_from_form
from allocator.workshops.store import WorkshopRefused, share_workshop


@dataclass(frozen=True)
class Source:
    """Where a workshop comes from: shipped (by slug) or shared (by id); names its URLs."""

    kind: str  # "shipped" or "shared"
    ident: str
    workshop: Workshop | None

    @property
    def key(self) -> str:  # the browser's localStorage key for progress
        return f"dra-workshop:{self.kind}:{self.ident}"

    def _name(self, what: str) -> str:
        return ("workshop-" if self.kind == "shipped" else "shared-workshop-") + what

    def overview_url(self) -> str:
        return reverse(self._name("overview"), args=[self.ident])

    def download_url(self) -> str:
        return reverse(self._name("download"), args=[self.ident])

    def lesson_url(self, number: int) -> str:
        return reverse(self._name("lesson"), args=[self.ident, number])

    def lesson_base(self) -> str:
        """A lesson's address without its number, for the browser's "Continue at step n"."""
        return self.lesson_url(1)[:-1]

    def check_url(self, number: int) -> str:
        return reverse(self._name("check"), args=[self.ident, number])


def _language(request) -> str:
    """`?lang=ko`, else the language the request was answered in (English is the fallback)."""
    return request.GET.get("lang") or getattr(request, "LANGUAGE_CODE", "") or ""


def _shipped(slug: str, request=None) -> Source:
    workshop = library.get(slug, _language(request) if request is not None else "")
    if workshop is None:
        raise Http404("no such workshop")
    return Source("shipped", slug, workshop)


def _shared(share_id: str) -> Source:
    row = get_object_or_404(SharedWorkshop, pk=share_id)
    workshop, problems = parse_workshop(row.text)
    if workshop is None:  # stored rows passed the lint; a later format change could still refuse one
        raise Http404(problems[0].message if problems else "this workshop no longer reads")
    return Source("shared", share_id, workshop)


@require_safe
def workshop_list(request):
    language = _language(request)
    workshops = [(slug, library.get(slug, language) or w, reverse("workshop-overview", args=[slug]))
                 for slug, w in library.shipped().items()]
    return render(request, "workshops/list.html", {"workshops": workshops})


def _overview(request, source: Source):
    lessons = [(lesson, source.lesson_url(lesson.number)) for lesson in source.workshop.lessons]
    return render(request, "workshops/overview.html", {
        "source": source, "workshop": source.workshop, "lessons": lessons,
        "summary_html": markdown.render(source.workshop.summary),
        "share_links": _share_links(request, source) if source.kind == "shared" else None,
    })


def _share_links(request, source: Source) -> dict:
    return {"url": request.build_absolute_uri(reverse("shared-workshop-overview", args=[source.ident])),
            "api": request.build_absolute_uri(reverse("api-shared-workshop", args=[source.ident]))}


def _lesson_page(request, source: Source, number: int, *, variant=None, results=None, status=200):
    lesson = source.workshop.lesson(number)
    if lesson is None:
        raise Http404("no such lesson")
    total = len(source.workshop.lessons)
    keep = "?present=1" if request.GET.get("present") == "1" else ""  # presenter mode follows the steps
    solution = lesson.solution or lesson.start
    compare_url = ""
    comparison = None
    if lesson.compare is not None:  # the lesson opens in compare mode: its two variants side by side
        compare_url = reverse("compare") + "?c=" + comparing.encode(lesson.start, lesson.compare)
        comparison = _comparison(request, lesson.start, lesson.compare)
    room = rooms.room_of(request, kind=source.kind, ident=source.ident)
    extra = {
        "source": source,
        "workshop": source.workshop,
        "lesson": lesson,
        "lesson_lang": lesson.language,
        "room": room,
        "room_url": reverse("room", args=[room.id]) if room is not None else "",
        "lesson_text": markdown.render(lesson.text),
        "lesson_task": markdown.render_inline(lesson.task),
        "hints_html": [markdown.render_inline(h) for h in lesson.hints],
        "step": number,
        "steps": total,
        "prev_url": source.lesson_url(number - 1) + keep if number > 1 else "",
        "next_url": source.lesson_url(number + 1) + keep if number < total else "",
        "check_url": source.check_url(number),
        "lesson_url": source.lesson_url(number),
        "compare_url": compare_url,
        "comparison": comparison,
        "lesson_data": {
            "key": source.key, "step": number, "steps": total,
            "start": _variant_json(lesson.start), "solution": _variant_json(solution),
        },
        "solution_text": solution.scenario,
        "solution_changes": _changes(lesson.start.scenario, solution.scenario),
        "solution_settings": _settings_text(lesson, solution),
        "check_results": results,
        "all_passed": bool(results) and all(r.ok for r in results),
    }
    return render_run(request, run_request_for(variant or lesson.start), template="workshops/lesson.html",
                      extra=extra, status=status)


def _changes(start: str, solution: str) -> str:
    """What the solution changes in the start, as a unified diff (empty when only settings change)."""
    if start == solution:
        return ""
    lines = difflib.unified_diff(start.splitlines(), solution.splitlines(), "start", "solution", lineterm="", n=2)
    return "\n".join(lines)


def _variant_json(variant) -> dict:
    """What the browser puts back on Reset or Show solution: every gate's value per component at the
    variant's own versions (RunSettings.gate_value), so the boxes never fall back on the binary's defaults,
    and those versions for the version selects."""
    return {"scenario": variant.scenario, "node": variant.node,
            "gates": {component: {name: variant.gate_value(component, name) for name in GATES}
                      for component, _ in COMPONENTS},
            "versions": {component: {"emulated": variant.versions.get(component, {}).get("emulated", ""),
                                     "minCompat": variant.versions.get(component, {}).get("minCompat", "")}
                         for component, _ in COMPONENTS}}


def _settings_text(lesson, solution) -> str:
    """The solution's node and gates in words, when they differ from the start (gate and component names as
    Kubernetes writes them, the words around them in the page's language)."""
    parts = []
    if solution.node != lesson.start.node:
        parts.append(gettext("node: %(node)s") % {"node": solution.node or gettext("any node")})
    if solution.gates != lesson.start.gates:
        for component, values in sorted(solution.gates.items()):
            parts.append(f"{component}: " + ", ".join((gettext("%(gate)s=on") if v else gettext("%(gate)s=off"))
                                                      % {"gate": g} for g, v in sorted(values.items())))
        if not solution.gates:
            parts.append(gettext("every feature gate at its default"))
    return "; ".join(parts)


def _check(request, source: Source, number: int):
    lesson = source.workshop.lesson(number)
    if lesson is None:
        raise Http404("no such lesson")
    try:
        form = request.POST
    except RequestDataTooBig:
        form = {}
    variant = variant_from_form(form, client=client_address(request))
    results, _ = check_lesson(lesson, variant, run=run_in_worker)
    rooms.record_check(request, kind=source.kind, ident=source.ident, lesson=lesson, results=results)  # joined a room?
    if request.htmx:
        return render(request, "workshops/lesson.html#check-result", {
            "check_results": results, "all_passed": all(r.ok for r in results),
            "next_url": source.lesson_url(number + 1) if number < len(source.workshop.lessons) else "",
            "step": number, "lesson_lang": lesson.language,
        })
    return _lesson_page(request, source, number, variant=variant, results=results)


# ---- shipped workshops -------------------------------------------------------------------

@require_safe
def workshop_overview(request, slug: str):
    return _overview(request, _shipped(slug, request))


@require_safe
def workshop_lesson(request, slug: str, number: int):
    return _lesson_page(request, _shipped(slug, request), number)


@require_POST
def workshop_check(request, slug: str, number: int):
    return _check(request, _shipped(slug, request), number)


def _yaml_file(text: str, name: str) -> HttpResponse:
    response = HttpResponse(text, content_type="application/yaml; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}.yaml"'
    return response


@require_safe
def workshop_download(request, slug: str):
    """The shipped workshop's file, to edit and share as one's own."""
    text = library.source_text(slug)
    if text is None:
        raise Http404("no such workshop")
    return _yaml_file(text, slug)


# ---- shared workshops --------------------------------------------------------------------


@require_safe
def shared_workshop_download(request, share_id: str):
    row = get_object_or_404(SharedWorkshop, pk=share_id)
    return _yaml_file(row.text, f"workshop-{share_id}")


@require_safe
def shared_workshop_overview(request, share_id: str):
    return _overview(request, _shared(share_id))


@require_safe
def shared_workshop_lesson(request, share_id: str, number: int):
    return _lesson_page(request, _shared(share_id), number)


@require_POST
def shared_workshop_check(request, share_id: str, number: int):
    return _check(request, _shared(share_id), number)


# ---- compare -----------------------------------------------------------------------------

@require_http_methods(["GET", "HEAD", "POST"])
def compare(request):
    """`/compare?c=...`: A and B side by side with their differences. The form POSTs (CSRF) and
    is redirected to the link that holds both sides."""
    if request.method == "POST":
        try:
            form = request.POST
        except RequestDataTooBig:
            return _compare_page(request, None, None, error="The comparison is too large.", status=413)
        a = variant_from_form(form, "a-")
        b = variant_from_form(form, "b-")
        if not b.scenario.strip():  # B left empty: the same text as A, other settings
            b = replace(b, scenario=a.scenario)
        b = replace(b, node=a.node)  # both sides run on the same node
        response = redirect(reverse("compare") + "?c=" + comparing.encode(a, b))
        response.status_code = 303
        return response
    value = request.GET.get("c")
    if value:
        try:
            a, b = comparing.decode(value)
        except ShareError as exc:
            return _compare_page(request, None, None, error=exc.message, status=exc.status)
    else:
        a, b = _default_comparison()
    return _compare_page(request, a, b)


def _default_comparison():
    """The version-skew lesson of the shipped workshop: the scheduler's gate off (A) and on (B)."""
    for workshop in library.shipped().values():
        for lesson in workshop.lessons:
            if lesson.compare is not None:
                return lesson.start, lesson.compare
    raise Http404("nothing to compare")


def _compare_page(request, a, b, *, error=None, status=200):
    context = {"error": error}
    if a is not None:
        context.update(_comparison(request, a, b))
        context.update({"components": COMPONENTS, "gate_rows": _gate_rows(a, b)})
    return render(request, "workshops/compare.html", context, status=status)


def _comparison(request, a, b) -> dict:
    """Both sides run on the same node, and what differs: the context of compare.html#comparison."""
    b = replace(b, node=a.node)  # both sides run on the same node, whatever the link says
    sides = []
    outcomes = []
    for label, variant in (("A", a), ("B", b)):
        scenario, outcome = run_in_worker(variant.admitted(client_address(request)))
        outcomes.append(outcome)
        stateless = fragment(run_request_for(variant))
        sides.append({"label": label, "variant": variant, "settings": run_request_for(variant),
                      "playground_url": reverse("index") + "#" + stateless if stateless else "",
                      "outcome": outcome,
                      "pools": outcome.explanation.pools if outcome.explanation is not None else []})
    return {
        "sides": sides,
        "differences": comparing.differences(*outcomes),
        "same_text": a.scenario == b.scenario,
        "link": request.build_absolute_uri(reverse("compare") + "?c=" + comparing.encode(a, b)),
        "gate_differences": _gate_differences(a, b),
    }


def _gate_differences(a, b) -> list[str]:
    """"DRADeviceCompatibilityGroups on kube-scheduler: off in A, on in B" for every gate value that differs."""
    out = []
    for name, info in GATES.items():
        for key, label in COMPONENTS:
            va, vb = a.gate_value(key, name), b.gate_value(key, name)
            if va != vb:
                out.append(f"{name} on {label}: {'on' if va else 'off'} in A, {'on' if vb else 'off'} in B")
    return out


def _gate_rows(a, b) -> list:
    """Every gate with its value per component on each side; differing rows flagged."""
    rows = []
    for name, info in GATES.items():
        cells = [{"side": side, "key": key, "label": label, "value": variant.gate_value(key, name)}
                 for side, variant in (("a", a), ("b", b)) for key, label in COMPONENTS]
        half = len(cells) // 2
        differs = [c["value"] for c in cells[:half]] != [c["value"] for c in cells[half:]]
        rows.append({"name": name, "stage": info.stage, "cells": cells, "differs": differs})
    return rows


# ---- sharing a workshop (CSRF-protected page and cookie-less API, rate-limited like scenario shares) ----

def _share_page(request, *, text="", problems=None, message=None, status=200, retry_after=None):
    response = render(request, "workshops/share.html", {
        "text": text, "problems": problems or [], "message": message,
        "example_text": _example_workshop_text() if not text else "",
    }, status=status)
    if retry_after:
        response["Retry-After"] = str(retry_after)
    return response


def _example_workshop_text() -> str:
    files = library.shipped_files()
    return files[0].read_text(encoding="utf-8") if files else ""


def _share_too_large(request, size_text: str):
    """A body over the server's limit (the middleware's refusal), in the share page's own words."""
    return _share_page(request, message=_too_large_message(size_text), status=413)


def _api_share_too_large(request, size_text: str):
    return _api_error(_too_large_message(size_text), 413)


def _too_large_message(size_text: str) -> str:
    return f"The workshop is {size_text}; shared workshops are limited to {MAX_SHARE_BYTES:,} bytes (256 KiB)."


@refuses_oversize(_share_too_large)
@require_http_methods(["GET", "HEAD", "POST"])
def workshop_share(request):
    """The "Share workshop" page: paste a workshop file; it is linted, stored and opened at /w/<id>."""
    if request.method != "POST":
        return _share_page(request)
    try:
        form = request.POST
    except RequestDataTooBig:
        return _share_page(request, message=_too_large(request), status=413)
    wait = rate_limited(request, scope="share")
    if wait:
        return _share_page(request, text=form.get("workshop", ""), message=rate_message(wait), status=429,
                           retry_after=wait)
    text = form.get("workshop", "")
    try:
        row, _ = share_workshop(text, run=LintRuns(text, client_address(request)))
    except WorkshopRefused as exc:
        return _share_page(request, text=text, problems=exc.problems, message=exc.message, status=400)
    except ShareError as exc:
        return _share_page(request, text=text if exc.status != 413 else "", message=exc.message, status=exc.status)
    response = redirect("shared-workshop-overview", share_id=row.id)
    response.status_code = 303
    return response


def _too_large(request) -> str:
    try:
        size = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        size = 0
    return _too_large_message(f"{size:,} bytes")


def _api_error(message: str, status: int, **extra) -> JsonResponse:
    return JsonResponse({"message": message, **extra}, status=status, json_dumps_params={"ensure_ascii": False})


@refuses_oversize(_api_share_too_large)
@csrf_exempt
@require_POST
def api_workshop_share(request):
    """`POST /api/v1/workshops` (the workshop YAML as the body, or JSON {"workshop": "..."})
    -> 201 {id, url, api, created}; 400 {message, problems: [{message, line, lesson}]} when it does not lint."""
    try:
        body = request.body
    except RequestDataTooBig:
        return _api_error(_too_large(request), 413)
    wait = rate_limited(request, scope="share")
    if wait:
        response = _api_error(rate_message(wait), 429)
        response["Retry-After"] = str(wait)
        return response
    try:
        text = _api_text(request, body)
        row, created = share_workshop(text, run=LintRuns(text, client_address(request)))
    except WorkshopRefused as exc:
        return _api_error(exc.message, 400, problems=[p.as_dict() for p in exc.problems])
    except ShareError as exc:
        return _api_error(exc.message, exc.status)
    source = Source("shared", row.id, None)
    data = {"id": row.id, **_share_links(request, source), "created": created}
    response = JsonResponse(data, status=201)
    response["Location"] = data["url"]
    return response


def _api_text(request, body: bytes) -> str:
    if len(body) > MAX_SHARE_BYTES:
        raise ShareError(f"The workshop is {len(body):,} bytes; shared workshops are limited to "
                         f"{MAX_SHARE_BYTES:,} bytes (256 KiB).", 413)
    try:
        decoded = body.decode("utf-8")
    except UnicodeDecodeError:
        raise ShareError("request body is not UTF-8 text") from None
    if request.content_type == "application/json":
        try:
            data = load_json(decoded, "request body")  # refuses deep nesting with a 400
        except ShareError:
            raise
        except ValueError as exc:
            raise ShareError(f"request body is not JSON: {exc}") from None
        if not isinstance(data, dict) or not isinstance(data.get("workshop"), str):
            raise ShareError('a JSON body is {"workshop": "<the workshop YAML>"}')
        return data["workshop"]
    return decoded


@require_safe
def api_shared_workshop(request, share_id: str):
    """`GET /api/v1/workshops/<id>` -> the stored workshop text, title, version, created."""
    row = SharedWorkshop.objects.filter(pk=share_id).first()
    if row is None:
        return _api_error(f"no shared workshop {share_id}", 404)
    source = Source("shared", row.id, None)
    data = {"id": row.id, **_share_links(request, source), "title": row.title, "workshop": row.text,
            "version": row.version, "created": row.created.isoformat()}
    response = JsonResponse(data, json_dumps_params={"ensure_ascii": False})
    response["Cache-Control"] = "public, max-age=31536000, immutable"
    return response
