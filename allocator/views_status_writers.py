"""The what-if form of the status-writers panel: the same run as the page (cached), judged again
for the identity the form names; answers the panel alone (an htmx fragment, or a page of its own
without JavaScript)."""
from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST

from allocator import panel_status_writers
from allocator.panels import status_writer_claims
from allocator.fairness import Throttled
from allocator.forms import FormError, PlaygroundForm, json_form_data
from allocator.sharing import client_address
from allocator.worker import run_bounded


@require_POST
def status_writers(request):
    # the page's script sends its forms as JSON (htmx json-form); without JavaScript, a plain POST
    try:
        data = json_form_data(request.body) if request.content_type == "application/json" else request.POST
    except FormError as exc:
        return HttpResponse(exc.message, status=exc.status, content_type="text/plain; charset=utf-8")
    form = PlaygroundForm(data, request.FILES)
    form.is_valid()  # every field is optional; a bad one is left out of cleaned_data
    run = form.run_settings().admitted(client_address(request))
    try:
        scenario, outcome = run_bounded(run)
    except Throttled as exc:
        response = HttpResponse(exc.message, status=429, content_type="text/plain; charset=utf-8")
        response["Retry-After"] = str(exc.retry_after)
        return response
    view = panel_status_writers.build(outcome, scenario, run, panel_status_writers.Identity.from_data(data))
    if view is None:
        return HttpResponse("No claim is allocated: there is no status to write.", status=404,
                            content_type="text/plain; charset=utf-8")
    return render(request, "panels/status_writers.html", {"status_writers": view, "status_writers_url": request.path,
                                                          **status_writer_claims(view, scenario)})
