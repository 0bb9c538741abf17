"""What the scenario editor asks the server: the words to complete, and Format."""
import json

from django.core.exceptions import RequestDataTooBig
from django.http import JsonResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from allocator.engine import fieldnames
from allocator.engine.scenario import read_scenario
from allocator.run_settings import MAX_SCENARIO_BYTES
from allocator.yamlformat import FormatRefused, format_yaml


def _scenario_text(request) -> str | None:
    try:
        body = request.body
    except RequestDataTooBig:
        return None
    if len(body) > MAX_SCENARIO_BYTES:
        return None
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    text = data.get("scenario") if isinstance(data, dict) else None
    return text if isinstance(text, str) else None


@require_GET
def editor_fields(request):
    """The kinds' fields and the CEL environment's functions: the same for every scenario."""
    response = JsonResponse({"fields": fieldnames.field_names(), "cel": fieldnames.cel_functions()})
    response["Cache-Control"] = "max-age=3600"
    return response


@require_POST
def editor_words(request):
    """The scenario's own drivers, attribute names and values, and capacity names (JSON body `{"scenario": ...}`)."""
    text = _scenario_text(request)
    if text is None:
        return JsonResponse({"error": _("The editor sent no scenario text.")}, status=400)
    return JsonResponse(fieldnames.scenario_words(read_scenario(text)))


@require_POST
def editor_format(request):
    """The text re-indented, or why it was left alone (the editor then keeps the user's text)."""
    text = _scenario_text(request)
    if text is None:
        return JsonResponse({"error": _("The editor sent no scenario text.")}, status=400)
    try:
        formatted, comments = format_yaml(text)
    except FormatRefused as exc:
        return JsonResponse({"error": _refusal(exc)}, status=422)
    return JsonResponse({"text": formatted, "comments": comments})


def _refusal(exc: FormatRefused) -> str:
    if exc.reason == "unreadable" and exc.line:
        return _("Format needs YAML that reads; line %(line)s does not. Fix it first; the text was not changed.") % {
            "line": exc.line}
    if exc.reason == "unreadable":
        return _("Format needs YAML that reads; fix it first. The text was not changed.")
    return _("Format could not re-indent this text without changing what it means; the text was not changed.")
