"""The playground's forms: the page's form (scenario, node, gates and versions per component) and the
JSON body the API takes. Both are read into a RunSettings by run_settings' validators."""
from __future__ import annotations


from django import forms
from django.conf import settings
from django.utils.datastructures import MultiValueDict

from allocator import run_settings
from allocator.engine.gates import COMPONENTS, GATES, GateError, parse_gates, parse_version_flag
from allocator.run_settings import (
    MAX_NODE_CHARS,
    MAX_SCENARIO_BYTES,
    RunSettings,
    SettingsError,
    check_version_values,
    scenario_text,
)
from allocator.sharing import client_address, load_json


class FormError(SettingsError):
    """The page's form (or the API's body) could not be read at all: 400 with the message."""


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
    each_claim_alone = forms.BooleanField(required=False)  # "judge each claim alone" (the results' button)
    # The status-writers grid of a scenario without RBAC objects, which the page folds until asked.
    status_writers = forms.BooleanField(required=False)

    def __init__(self, data=None, files=None, **kwargs):
        super().__init__(data, files, **kwargs)
        # Any text goes to the engine, which names what is wrong with it (a NUL included) and where.
        self.fields["scenario"].validators = []

    def add_prefix(self, field_name):
        # Field names as the page writes them: "reset-gates", not "reset_gates".
        return field_name.replace("_", "-")

    def versions(self) -> dict:
        """`emulated-<component>` and `mincompat-<component>`: the page's version control. A version
        that does not parse is kept as given: the run says what is wrong with it."""
        if self.cleaned_data.get("reset_gates"):
            return {}
        raw = {component: {key: str(self.data.get(f"{field}-{component}") or "").strip()
                           for field, key in (("emulated", "emulated"), ("mincompat", "minCompat"))}
               for component, _ in COMPONENTS}
        chosen = {c: check_version_values(v, run_settings.raise_problem, ("versions", c), lenient=True)
                  for c, v in raw.items()}
        return {c: v for c, v in chosen.items() if v}

    def gate_values(self, versions: dict) -> dict:
        """The boxes as sent: {component: {gate: bool}}. With `gates-submitted=1` a box not sent is off,
        unless it is locked (a locked gate's box is shown disabled, and a disabled box is not sent)."""
        if self.cleaned_data.get("reset_gates"):
            return {}
        submitted = self.data.get("gates-submitted") == "1"
        values: dict = {}
        for component, _ in COMPONENTS:
            at = RunSettings("", versions=versions).component_features(component)
            for name in GATES:
                key = gate_field_name(component, name)
                if key not in self.data and (not submitted or _locked(at, name)):
                    continue
                # A checkbox per gate and component: read as they come, not as form fields.
                values.setdefault(component, {})[name] = str(self.data.get(key) or "").strip() in TRUE_VALUES
        return values

    def run_settings(self) -> RunSettings:
        """The run this form asks for; call after is_valid(). An over-long node name is dropped. A file
        opened on the page (`scenario-file`, too large to edit as text there) is the scenario."""
        data = self.cleaned_data
        scenario = data.get("scenario", "")
        upload = self.files.get("scenario-file") if self.files else None
        if upload is not None:
            scenario = scenario_text(upload.read(MAX_SCENARIO_BYTES + 1))
        versions = self.versions()
        return RunSettings(scenario=scenario, node=data.get("node") or "",
                           gates=run_settings.changed_gates(self.gate_values(versions), versions), versions=versions,
                           each_claim_alone=bool(data.get("each_claim_alone")))


def _locked(at, name: str) -> bool:
    try:
        return at.spec(name).locked
    except GateError:  # a version the run will refuse: the binary's own table meanwhile
        return GATES[name].locked


def json_form_data(body: bytes) -> MultiValueDict:
    """The page's form as its script sends it: a JSON object of field name -> list of values.
    A long scenario URL-encoded is mostly escapes, which cost the server far more to read than
    JSON does. Raises FormError (status 400) for anything else."""
    try:
        data = _load_json(body.decode("utf-8"), "the form")
    except FormError:
        raise
    except (UnicodeDecodeError, ValueError) as exc:
        raise FormError(f"the form could not be read: it is not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise FormError("the form could not be read: it is not a JSON object of fields")
    limit = settings.DATA_UPLOAD_MAX_NUMBER_FIELDS  # as for a URL-encoded form
    if limit is not None and sum(len(v) if isinstance(v, list) else 1 for v in data.values()) > limit:
        raise FormError(f"the form could not be read: it has more than {limit} values")
    fields = MultiValueDict()
    for name, values in data.items():
        values = values if isinstance(values, list) else [values]
        if not all(isinstance(value, str) for value in values):
            raise FormError(f"the form could not be read: field “{name}” is not text")
        fields.setlist(name, values)
    return fields


def _load_json(text: str, what: str):
    try:
        return load_json(text, what)
    except SettingsError as exc:  # nested too deeply
        raise FormError(exc.message) from None


def read_run_form(data, files=None) -> RunSettings:
    form = PlaygroundForm(data, files)
    form.is_valid()  # every field is optional; an invalid one is left out of cleaned_data
    return form.run_settings()


JSON_SHAPE = ('a JSON body is {"scenario": "<YAML>", "node": "...", "gates": {"scheduler": {"Gate": true}}, '
              '"versions": {"scheduler": {"emulated": "1.36"}}, "whatIf": {"user": "...", "groups": [...]}, '
              '"eachClaimAlone": false}; '
              "send a scenario as it is with Content-Type: application/yaml")


def read_api_body(request, body: bytes, *, decode: bool = True) -> RunSettings:
    """What the API was asked: a JSON body {"scenario", "node", "gates", "versions"}, or a YAML body
    with `?node=`, `?featureGates=`, `?emulatedVersion=` and `?minCompatibilityVersion=` (applied to
    every component). Raises SettingsError (status 400); the run is admitted as the request's client.
    With decode=False a YAML body stays bytes, for the engine's loader to report bad encodings."""
    if request.content_type == "application/json":
        try:
            data = _load_json(body.decode("utf-8"), "request body")  # refuses deep nesting with a 400
        except FormError:
            raise
        except (UnicodeDecodeError, ValueError) as exc:
            raise FormError(f"request body is not JSON: {exc}") from None
        if not isinstance(data, dict) or "scenario" not in data:
            raise FormError(JSON_SHAPE)
        if not isinstance(data["scenario"], str):
            raise FormError("scenario must be a string of YAML or JSON")
        return run_settings.from_request(data["scenario"], node=data.get("node"), gates=data.get("gates"),
                                        versions=data.get("versions"), what_if=data.get("whatIf"),
                                        each_claim_alone=data.get("eachClaimAlone"), client=client_address(request))
    scenario = body
    if decode:
        try:
            scenario = body.decode("utf-8")
        except UnicodeDecodeError:
            raise FormError("request body is not UTF-8 text") from None
    versions = {}
    for param, key in (("emulatedVersion", "emulated"), ("minCompatibilityVersion", "minCompat")):
        if request.GET.get(param):
            try:
                versions[key] = parse_version_flag(request.GET[param])
            except GateError as exc:
                raise FormError(f"{param}: {exc}") from None
    try:
        gates, _ = parse_gates(request.GET.get("featureGates", ""))  # whether the components start: the run
    except GateError as exc:
        raise FormError(f"featureGates: {exc}") from None
    return run_settings.from_request(scenario, node=request.GET.get("node", "") or "",
                                    gates=run_settings.uniform(dict(gates.values)),
                                    versions=run_settings.uniform(versions), what_if=_query_what_if(request.GET),
                                    each_claim_alone=_query_flag(request.GET, "eachClaimAlone"),
                                    client=client_address(request))


def _query_flag(query, name: str) -> bool:
    """`?name=1` or `?name=true` (any case); another value is a 400 naming the parameter."""
    value = query.get(name, "").strip().lower()
    if value in ("", "0", "false"):
        return False
    if value in ("1", "true"):
        return True
    raise FormError(f"{name}: expected true or false, not “{query[name]}”")


# The what-if as query parameters (a YAML body), named as the JSON body's whatIf fields.
WHAT_IF_PARAMS = {"asServiceAccount": "serviceAccount", "asUser": "user", "asGroups": "groups", "asNode": "node",
                  "asVerb": "verb"}


def _query_what_if(query) -> dict | None:
    given = {key: query[param] for param, key in WHAT_IF_PARAMS.items() if query.get(param)}
    if query.get("noBootstrapRbac"):
        given["bootstrapRbac"] = False
    return given or None

