"""Share endpoints: the Share button, short links (`/s/<id>`, `.yaml`, `/embed`) and the JSON API."""
from __future__ import annotations

from dataclasses import replace

from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST, require_safe

from allocator.middleware import frameable, refuses_oversize
from allocator.models import SharedScenario
from allocator.forms import read_api_body, read_run_form
from allocator.run_settings import SettingsError
from allocator.sharing import (
    fragment,
    rate_limited,
    settings_of,
    share,
    too_large_message,
)
from allocator import gallery, wording
from allocator.pages import describe, rate_message, render_run
from allocator.version import VERSION


def _links(request, shared: SharedScenario) -> dict:
    absolute = request.build_absolute_uri
    return {
        "url": absolute(reverse("shared", args=[shared.id])),
        "yaml": absolute(reverse("shared-yaml", args=[shared.id])),
        "embed": absolute(reverse("shared-embed", args=[shared.id])),
    }


def _shared_context(request, shared: SharedScenario) -> dict:
    links = _links(request, shared)
    title, description = describe(shared.scenario)
    example = gallery.with_scenario(shared.scenario)
    if example is not None:  # a shared example keeps its notes, and its title in previews (in the page's language)
        notes = wording.example_notes(example)
        title, description = notes["title"], notes["summary"]
    return {"shared": shared, "shared_links": links, "playground_version": VERSION,
            "og_title": title, "og_description": description, "og_url": links["url"]}


def _get_shared(share_id: str) -> SharedScenario:
    shared = SharedScenario.objects.filter(pk=share_id).first()
    if shared is None:
        raise Http404(f"There is no shared scenario “{share_id}”.")
    return shared


def _content_length(request) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


# ---- the page's Share button -----------------------------------------------------------

def _share_refused(request, message: str, status: int, *, retry_after: int | None = None):
    if request.htmx:
        response = render(request, "share_box.html#share-result", {"share_error": message}, status=status)
    else:
        response = render(request, "share_refused.html", {"message": message}, status=status)
    if retry_after:
        response["Retry-After"] = str(retry_after)
    return response


@refuses_oversize(lambda request, size_text: _share_refused(request, too_large_message(size_text), 413))
@require_POST
def share_create(request):
    """The Share button (CSRF-protected form): htmx gets the link box, a plain form goes to the link."""
    try:
        form = request.POST
    except RequestDataTooBig:
        return _share_refused(request, too_large_message(_content_length(request)), 413)
    wait = rate_limited(request)
    if wait:
        message = rate_message(wait) + (" Meanwhile, “Link without storing” gives a link that carries the"
                                         " scenario itself: nothing is stored, so no limit applies.")
        return _share_refused(request, message, 429, retry_after=wait)
    run = read_run_form(form)
    # Browsers send a textarea's line breaks as CRLF; the scenario as typed has LF.
    run = replace(run, scenario=run.scenario.replace("\r\n", "\n"))
    try:
        shared, created = share(run)
    except SettingsError as exc:
        return _share_refused(request, exc.message, exc.status)
    if not request.htmx:
        response = redirect("shared", share_id=shared.id)
        response.status_code = 303
        return response
    links = _links(request, shared)
    stateless = fragment(settings_of(shared))
    context = {
        "shared": shared,
        "share_created": created,
        "share_links": links,
        "share_fragment_url": request.build_absolute_uri(reverse("index")) + "#" + stateless if stateless else "",
    }
    return render(request, "share_box.html#share-result", context, status=201 if created else 200)


# ---- short links -----------------------------------------------------------------------

@require_safe
def shared_page(request, share_id: str):
    """The editor with the shared scenario and its settings, and its result."""
    shared = _get_shared(share_id)
    return render_run(request, settings_of(shared), extra=_shared_context(request, shared))


@require_safe
def shared_yaml(request, share_id: str):
    """The scenario exactly as shared, ready for `kubectl apply -f`."""
    shared = _get_shared(share_id)
    response = HttpResponse(shared.scenario.encode("utf-8"), content_type="text/yaml; charset=utf-8")
    response["Content-Disposition"] = f'inline; filename="dra-scenario-{shared.id}.yaml"'
    # A shared scenario never changes, so anyone may cache it for good.
    response["Cache-Control"] = "public, max-age=31536000, immutable"
    response["Access-Control-Allow-Origin"] = "*"
    return response


@frameable
@require_safe
def shared_embed(request, share_id: str):
    """Read-only result and YAML for docs and slides; other sites may frame it."""
    shared = _get_shared(share_id)
    response = render_run(request, settings_of(shared), template="shared_embed.html",
                          extra=_shared_context(request, shared))
    response["Cache-Control"] = "public, max-age=300"
    return response


# ---- JSON API (no cookies, so no CSRF; rate-limited like the button) -------------------

def _api_error(message: str, status: int) -> JsonResponse:
    return JsonResponse({"message": message}, status=status, json_dumps_params={"ensure_ascii": False})


@refuses_oversize(lambda request, size_text: _api_error(too_large_message(size_text), 413))
@csrf_exempt
@require_POST
def api_share(request):
    """`POST /api/v1/scenarios` -> 201 {id, url, yaml, embed, created}."""
    try:
        body = request.body
    except RequestDataTooBig:
        return _api_error(too_large_message(_content_length(request)), 413)
    wait = rate_limited(request)
    if wait:
        response = _api_error(rate_message(wait), 429)
        response["Retry-After"] = str(wait)
        return response
    try:
        shared, created = share(read_api_body(request, body))
    except SettingsError as exc:
        return _api_error(exc.message, exc.status)
    data = {"id": shared.id, **_links(request, shared), "created": created}
    response = JsonResponse(data, status=201)
    response["Location"] = data["url"]
    return response


@require_safe
def api_shared(request, share_id: str):
    """`GET /api/v1/scenarios/<id>` -> the stored scenario and its settings."""
    shared = SharedScenario.objects.filter(pk=share_id).first()
    if shared is None:
        return _api_error(f"no shared scenario {share_id}", 404)
    data = {
        "id": shared.id,
        **_links(request, shared),
        "scenario": shared.scenario,
        "node": shared.node,
        "gates": shared.gates,
        "versions": shared.versions,
        "eachClaimAlone": shared.each_claim_alone,
        "version": shared.version,
        "created": shared.created.isoformat(),
    }
    response = JsonResponse(data, json_dumps_params={"ensure_ascii": False})
    response["Cache-Control"] = "public, max-age=31536000, immutable"
    return response
