"""The playground's forms: the page's form (scenario, node, gates per component) and the JSON body
the API takes. Both turn into a RunRequest."""
from __future__ import annotations


from django import forms
from django.conf import settings
from django.utils.datastructures import MultiValueDict

from allocator.engine.gates import COMPONENT_KEYS, COMPONENTS, GATES, GateError, parse_gates, parse_version_flag
from allocator.runs import MAX_SCENARIO_BYTES, RunRequest, scenario_text
from allocator.sharing import (
    MAX_NODE_CHARS,
    ShareError,
    check_gates,
    check_node,
    check_versions,
    load_json,
    uniform_gates,
)

TRUE_VALUES = ("on", "true", "1")


def gate_field_name(component: str, gate: str) -> str:
    return f"gate-{component}-{gate}"


class PlaygroundForm(forms.Form):
    """The page's form. With `gates-submitted=1` (the page always sends it) an unchecked box means
    off; without it (a hand-made POST) only the gates named in the data change."""

    scenario = forms.CharField(required=False, strip=False)
    node = forms.CharField(required=False, max_length=MAX_NODE_CHARS)
    example = forms.SlugField(required=False)  # the gallery example the text came from, if any
    reset_gates = forms.BooleanField(required=False)  # the gates table's "reset to defaults" without JavaScript

    def __init__(self, data=None, files=None, **kwargs):
        super().__init__(data, files, **kwargs)
        # Any text goes to the engine, which names what is wrong with it (a NUL included) and where.
        self.fields["scenario"].validators = []

    def add_prefix(self, field_name):
        # Field names as the page writes them: "reset-gates", not "reset_gates".
        return field_name.replace("_", "-")

    def versions(self) -> dict:
        """`emulated-<component>` and `mincompat-<component>`: the page's version control."""
        if self.cleaned_data.get("reset_gates"):
            return {}
        out = {}
        for component, _ in COMPONENTS:
            chosen = {}
            for field, key in (("emulated", "emulated"), ("mincompat", "minCompat")):
                value = str(self.data.get(f"{field}-{component}") or "").strip()
                if value:
                    try:
                        chosen[key] = parse_version_flag(value)
                    except GateError:
                        chosen[key] = value  # the run says what is wrong with it
            if chosen:
                out[component] = chosen
        return out

    def gates(self, versions: dict | None = None) -> dict:
        if self.cleaned_data.get("reset_gates"):
            return {}
        submitted = self.data.get("gates-submitted") == "1"
        versions = versions or {}
        gates: dict = {}
        for component, _ in COMPONENTS:
            chosen = {}
            at = RunRequest("", versions=versions).component_features(component)
            for name in GATES:
                key = gate_field_name(component, name)
                if key not in self.data:
                    spec = at.spec(name)
                    # A locked gate's box is shown disabled, and a disabled box is not sent.
                    if not submitted or spec.locked:
                        continue
                # A checkbox per gate and component: read as they come, not as form fields.
                value = str(self.data.get(key) or "").strip() in TRUE_VALUES
                if value != at.default(name):
                    chosen[name] = value
            if chosen:
                gates[component] = chosen
        return gates

    def run_request(self) -> RunRequest:
        """The run this form asks for; call after is_valid(). An over-long node name is dropped. A file
        opened on the page (`scenario-file`, too large to edit as text there) is the scenario."""
        data = self.cleaned_data
        scenario = data.get("scenario", "")
        upload = self.files.get("scenario-file") if self.files else None
        if upload is not None:
            scenario = scenario_text(upload.read(MAX_SCENARIO_BYTES + 1))
        versions = self.versions()
        return RunRequest(scenario=scenario, node=data.get("node") or "", gates=self.gates(versions), versions=versions)


def json_form_data(body: bytes) -> MultiValueDict:
    """The page's form as its script sends it: a JSON object of field name -> list of values.
    A long scenario URL-encoded is mostly escapes, which cost the server far more to read than
    JSON does. Raises ShareError (status 400) for anything else."""
    try:
        data = load_json(body.decode("utf-8"), "the form")
    except ShareError:
        raise
    except (UnicodeDecodeError, ValueError) as exc:
        raise ShareError(f"the form could not be read: it is not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ShareError("the form could not be read: it is not a JSON object of fields")
    limit = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS  # as for a URL-encoded form
    if limit is not None and sum(len(v) if isinstance(v, list) else 1 for v in data.values()) > limit:
        raise ShareError(f"the form could not be read: it has more than {limit} values")
    fields = MultiValueDict()
    for name, values in data.items():
        values = values if isinstance(values, list) else [values]
        if not all(isinstance(value, str) for value in values):
            raise ShareError(f"the form could not be read: field “{name}” is not text")
        fields.setlist(name, values)
    return fields


def read_run_form(data) -> RunRequest:
    form = PlaygroundForm(data)
    form.is_valid()  # every field is optional; an invalid one is left out of cleaned_data
    return form.run_request()


JSON_SHAPE = ('a JSON body is {"scenario": "<YAML>", "node": "...", "gates": {"scheduler": {"Gate": true}}}; '
              "send a scenario as it is with Content-Type: application/yaml")


def read_api_body(request, body: bytes, *, decode: bool = True) -> RunRequest:
    """What the API was asked: a JSON body {"scenario", "node", "gates"}, or a YAML body with
    `?node=` and `?featureGates=` (applied to every component). Raises ShareError (status 400).
    With decode=False a YAML body stays bytes, for the engine's loader to report bad encodings."""
    if request.content_type == "application/json":
        try:
            data = load_json(body.decode("utf-8"), "request body")  # refuses deep nesting with a 400
        except ShareError:
            raise
        except (UnicodeDecodeError, ValueError) as exc:
            raise ShareError(f"request body is not JSON: {exc}") from None
        if not isinstance(data, dict) or "scenario" not in data:
            raise ShareError(JSON_SHAPE)
        if not isinstance(data["scenario"], str):
            raise ShareError("scenario must be a string of YAML or JSON")
        return RunRequest(scenario=data["scenario"], node=check_node(data.get("node")), gates=check_gates(data.get("gates")),
                          versions=check_versions(data.get("versions")))
    scenario = body
    if decode:
        try:
            scenario = body.decode("utf-8")
        except UnicodeDecodeError:
            raise ShareError("request body is not UTF-8 text") from None
    versions = {}
    for param, key in (("emulatedVersion", "emulated"), ("minCompatibilityVersion", "minCompat")):
        if request.GET.get(param):
            try:
                versions[key] = parse_version_flag(request.GET[param])
            except GateError as exc:
                raise ShareError(f"{param}: {exc}") from None
    try:
        gates, _ = parse_gates(request.GET.get("featureGates", ""))  # whether the components start: the run
    except GateError as exc:
        raise ShareError(f"featureGates: {exc}") from None
    return RunRequest(scenario=scenario, node=request.GET.get("node", "") or "", gates=uniform_gates(gates),
                      versions={c: dict(versions) for c in COMPONENT_KEYS} if versions else {})

