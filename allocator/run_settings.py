"""One run's settings: the scenario text, the node, gate values and versions per component, and who
asks (the client the admission counts). The page, the API, share rows and `#s=` links, the gallery,
workshop lessons, Check and compare all hold a `RunSettings`, read by the readers here:

- one validator per part (`check_node`, `check_gates`, `check_versions`), with one wording wherever
  the settings come from (a problem is reported through a callback: raised for a request, located
  for a lesson);
- one defaulter (`full_gates`: every gate's value per component at that component's versions);
- one differ (`changed_gates`: only the values that differ from those defaults), for what holds
  every gate (links, share rows, the page's boxes) and for lessons and gallery entries; an API
  request's values are kept as given, as a component keeps the `--feature-gates` it was started with.

A run from the web goes through `allocator.worker.run_bounded`, which admits it by its client: a
RunSettings without one is refused there, so no path can skip the per-client limits.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

from allocator.engine.gates import (
    ALPHA,
    BETA,
    COMPONENT_KEYS,
    COMPONENTS,
    EMULATED_CHOICES,
    GA,
    GATES,
    KNOWN_GATES,
    ComponentGates,
    FeatureGates,
    GateError,
    parse_version_flag,
)
from allocator.engine.run import ANY_NODE, BARE_NODE, Outcome, allocate_text
from allocator.engine.scenario import Scenario

MAX_SCENARIO_BYTES = 32 * 1024 * 1024  # the page and the API; a 1,000-node GPU cluster dump is about 30 MB
MAX_NODE_CHARS = 253  # a Node name is a DNS subdomain
# Interactive runs stay short; the CLI allows more.
WEB_MAX_STEPS = 300_000
WEB_TIME_LIMIT = 3.0
# The client of a run that no request asked for (the test suite, a server warming up): not counted.
UNCOUNTED = ""
VERSION_KEYS = ("emulated", "minCompat")
# The run-settings keys of a lesson (or its solution, or its compare side) in a workshop file.
LESSON_KEYS = frozenset({"node", "gates", "componentGates", "versions", "componentVersions"})


class SettingsError(ValueError):
    """Run settings that cannot be read (a form, a request body, a link): 400 with the message."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.message = message
        self.status = status


Problem = Callable[[str, tuple], None]  # (message, path of the offending value)


def raise_problem(message: str, path: tuple) -> None:
    """The callback for requests: the first problem refuses them, named by its path."""
    where = ".".join(str(p) for p in path)
    if not where or message.startswith(f"{path[-1]} "):
        raise SettingsError(message)
    raise SettingsError(f"{where}: {message}")


@dataclass
class GateRow:
    name: str
    stage: str
    summary: str
    locked: bool  # on the scheduler, at its versions
    values: dict  # component -> bool
    default: bool
    disabled_on: dict = field(default_factory=dict)  # component -> locked there at the value it has
    refused_on: str = ""  # the component that would not start because of this gate

    @property
    def skewed(self) -> bool:
        return len(set(self.values.values())) > 1


VERBS = ("PUT", "PATCH", "APPLY")


@dataclass(frozen=True)
class WhatIf:
    """The status-writers what-if: "as service account ns/name (or user with groups) on node N, by
    PUT or PATCH", and whether the cluster has the bootstrap roles. The page's what-if form and the
    API name the same fields; the run judges the identity's status writes with the rest."""

    service_account: str = ""
    user: str = ""
    groups: tuple = ()
    node: str = ""
    verb: str = "PUT"
    bootstrap: bool = True

    @property
    def named(self) -> bool:
        return bool(self.service_account or self.user)

    def writer(self):
        """The engine's writer for the identity (ValueError when it names none, or badly)."""
        from allocator.engine.statusauth.whatif import identity_writer

        return identity_writer(user=self.user, groups=self.groups, service_account=self.service_account,
                               node=self.node or None, verb=self.verb)

    def run_options(self) -> dict:
        options = {"bootstrap_rbac": self.bootstrap}
        if self.named:
            options["status_identities"] = (self.writer(),)
        return options

    def as_key(self) -> dict:
        return {"serviceAccount": self.service_account, "user": self.user, "groups": list(self.groups),
                "node": self.node, "verb": self.verb, "bootstrapRbac": self.bootstrap}


@dataclass(frozen=True)
class RunSettings:
    scenario: str | bytes
    node: str = ""
    gates: dict = field(default_factory=dict)  # component -> {gate: bool}, only values that differ from defaults
    # component -> {"emulated": "1.36", "minCompat": "1.36"}; missing or "" = as started without the flag
    versions: dict = field(default_factory=dict)
    # Who asks (an address, as the share limit counts it); None until a request admits the run.
    # Not part of what the run is: two settings that differ only here are equal.
    client: str | None = field(default=None, compare=False)
    what_if: WhatIf | None = None  # the API's status what-if (the page asks its panel separately)
    # A node the scenario names nowhere (no Node object, no slice's nodeName, nothing else): see
    # `node_rule`. Only the API keeps it, as the CLI's --node does.
    keep_unnamed_node: bool = False
    # Each pending claim allocated alone against the same slices, instead of together as one pod's
    # claims (the scheduler's rule): the page's "judge each claim alone".
    each_claim_alone: bool = False

    @property
    def node_rule(self) -> str:
        """The one rule for a node the scenario does not name. The page, share links, lessons and
        the gallery never use it silently: the run takes any node and the results say which node
        was dropped (a node chosen before an edit, or named by a link, is otherwise a wrong answer
        for every pasted file). The API answers as `manage.py allocate --node` does: a node of that
        name without labels, with a warning."""
        return BARE_NODE if self.keep_unnamed_node else ANY_NODE

    def admitted(self, client: str) -> "RunSettings":
        return replace(self, client=client)

    def component_features(self, component: str) -> FeatureGates:
        chosen = self.versions.get(component, {})
        return FeatureGates(tuple(sorted(self.gates.get(component, {}).items())),
                            chosen.get("emulated", ""), chosen.get("minCompat", ""))

    def component_gates(self) -> ComponentGates:
        parts = {c: self.component_features(c) for c, _ in COMPONENTS}
        return ComponentGates(parts["apiserver"], parts["scheduler"], parts["kubelet"])

    def full_gates(self) -> dict:
        return full_gates(self.gates, self.versions)

    def gate_value(self, component: str, name: str) -> bool:
        """The value of gate `name` on `component`: as given, else its default at the component's
        versions. The one place a gate's value is worked out."""
        return self.component_features(component).enabled(name)

    def with_gate(self, component: str, name: str, value: bool) -> "RunSettings":
        """These settings with one gate set on one component (only values that differ from the
        defaults at the component's versions are kept)."""
        gates = {c: dict(v) for c, v in self.gates.items()}
        gates.setdefault(component, {})[name] = value
        return replace(self, gates=changed_gates(gates, self.versions))

    def link_data(self) -> dict:
        """The settings as links and share rows hold them: every gate's value (so a link keeps its
        meaning if a later playground changes a default), and the versions only when chosen (links
        without versions keep their old bytes)."""
        data = {"node": self.node, "gates": self.full_gates()}
        if self.versions:
            data["versions"] = self.versions
        if self.each_claim_alone:  # only when set: links and shares without it keep their old bytes
            data["eachClaimAlone"] = True
        return data

    def gate_rows(self) -> dict:
        """Gates grouped by maturity (on the scheduler), each with its value per component."""
        features = {c: self.component_features(c) for c, _ in COMPONENTS}
        refused = self.component_gates().refusal()
        groups: dict = {ALPHA: [], BETA: [], GA: []}
        for info in GATES.values():
            values, disabled_on = {}, {}
            for component, _ in COMPONENTS:
                values[component] = features[component].enabled(info.name)
                spec = features[component].spec(info.name)
                # A box stays switchable when it holds a value its lock refuses, so it can be put right.
                disabled_on[component] = spec.locked and values[component] == spec.default
            spec = features["scheduler"].spec(info.name)
            row = GateRow(info.name, spec.stage, info.summary, spec.locked, values, spec.default, disabled_on,
                          refused[0] if refused and refused[1] == info.name else "")
            groups.setdefault(spec.stage, []).append(row)
        return {stage: rows for stage, rows in groups.items() if rows}

    @property
    def skewed(self) -> bool:
        return (any(row.skewed for rows in self.gate_rows().values() for row in rows)
                or len({(f.emulated_version, f.min_compat_version)
                        for f in (self.component_features(c) for c, _ in COMPONENTS)}) > 1)

    @property
    def version_controls(self) -> list[dict]:
        """The page's version control per component: the chosen versions and the choices."""
        out = []
        for component, label in COMPONENTS:
            chosen = self.versions.get(component, {})
            out.append({"key": component, "label": label, "emulated": chosen.get("emulated", ""),
                        "minCompat": chosen.get("minCompat", ""), "choices": EMULATED_CHOICES})
        return out

    @property
    def max_bytes(self) -> int:
        return MAX_SCENARIO_BYTES


# ---- the validators ---------------------------------------------------------------------------

def check_node(node, problem: Problem = raise_problem, path: tuple = ("node",)) -> str:
    if node is None:
        return ""
    if not isinstance(node, str):
        problem("node must be a string", path)
        return ""
    if len(node) > MAX_NODE_CHARS or "\x00" in node or "\n" in node:
        problem(f"node must be a node name of at most {MAX_NODE_CHARS} characters", path)
        return ""
    return node


def check_gate_values(values, problem: Problem, path: tuple) -> dict:
    """`{gate: bool}` for one component (or every one): any gate the components know (the page shows
    the DRA gates and what they depend on; the gates related to those can be set too, as on the CLI)."""
    if not isinstance(values, dict):
        problem("gates must be a mapping of gate: true|false", path)
        return {}
    clean = {}
    for name, value in values.items():
        if name not in KNOWN_GATES:
            problem(f"unknown feature gate {name!r}", path + (name,))
        elif not isinstance(value, bool):
            problem(f"gate {name} must be true or false", path + (name,))
        else:
            clean[name] = value
    return clean


def _check_components(raw, problem: Problem, path: tuple, read, shape: str) -> dict:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        problem(f"{path[-1]} must map a component to {shape}", path)
        return {}
    clean = {}
    for component, values in raw.items():
        if component not in COMPONENT_KEYS:
            problem(f"unknown component {component!r} (expected one of {', '.join(COMPONENT_KEYS)})",
                    path + (component,))
            continue
        clean[component] = read(values, problem, path + (component,))
    return clean


def check_gates(raw, problem: Problem = raise_problem, path: tuple = ("gates",)) -> dict:
    """`{component: {gate: bool}}`: the values as given (not yet compared with the defaults)."""
    return _check_components(raw, problem, path, check_gate_values, "{gate: true|false}")


def check_version_values(values, problem: Problem, path: tuple, *, lenient: bool = False) -> dict:
    """`{"emulated": "1.36", "minCompat": "1.35"}` for one component (or every one). `lenient` keeps a
    version that does not parse as given, for the run to refuse with the component's own words."""
    if not isinstance(values, dict) or set(values) - set(VERSION_KEYS):
        problem('versions must be a mapping with "emulated" and/or "minCompat"', path)
        return {}
    chosen = {}
    for key, value in values.items():
        if not isinstance(value, str):
            problem(f"{key} must be a version string such as \"1.36\"", path + (key,))
            continue
        try:
            chosen[key] = parse_version_flag(value) if value else ""
        except GateError as exc:
            if lenient:
                chosen[key] = value
            else:
                problem(str(exc), path + (key,))
    return {k: v for k, v in chosen.items() if v}


def check_versions(raw, problem: Problem = raise_problem, path: tuple = ("versions",)) -> dict:
    """`{component: {"emulated": "X.Y", "minCompat": "X.Y"}}`."""
    clean = _check_components(raw, problem, path, check_version_values, '{"emulated": "X.Y", "minCompat": "X.Y"}')
    return {c: v for c, v in clean.items() if v}


def check_what_if(raw, problem: Problem = raise_problem, path: tuple = ("whatIf",)) -> WhatIf | None:
    """`{"serviceAccount": "ns/name" | "user": "...", "groups": [...] or "a,b", "node": "...",
    "verb": "PUT"|"PATCH"|"APPLY", "bootstrapRbac": true}`: the page's what-if form, in the API."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        problem("whatIf must be a mapping (serviceAccount or user, groups, node, verb, bootstrapRbac)", path)
        return None
    allowed = {"serviceAccount", "user", "groups", "node", "verb", "bootstrapRbac"}
    for key in raw:
        if key not in allowed:
            problem(f"unknown field {key!r} (expected one of {', '.join(sorted(allowed))})", path + (key,))
            return None
    texts = {}
    for key in ("serviceAccount", "user", "node", "verb"):
        value = raw.get(key) or ""
        if not isinstance(value, str):
            problem(f"{key} must be a string", path + (key,))
            return None
        texts[key] = value.strip()
    groups = raw.get("groups") or ()
    if isinstance(groups, str):
        groups = [g for g in groups.split(",")]
    if not isinstance(groups, (list, tuple)) or not all(isinstance(g, str) for g in groups):
        problem("groups must be a list of group names (or one string of them, comma-separated)", path + ("groups",))
        return None
    bootstrap = raw.get("bootstrapRbac", True)
    if not isinstance(bootstrap, bool):
        problem("bootstrapRbac must be true or false", path + ("bootstrapRbac",))
        return None
    verb = (texts["verb"] or "PUT").upper()
    if verb not in VERBS:
        problem(f"verb {texts['verb']!r}: expected PUT, PATCH or APPLY", path + ("verb",))
        return None
    what_if = WhatIf(texts["serviceAccount"], texts["user"], tuple(g.strip() for g in groups if g.strip()),
                     texts["node"], verb, bootstrap)
    if what_if.named:
        try:
            what_if.writer()
        except ValueError as exc:
            problem(str(exc), path)
            return None
    return what_if


# ---- the defaulter and the differ -------------------------------------------------------------

def _features_at(versions: dict, component: str) -> FeatureGates:
    chosen = versions.get(component, {})
    features = FeatureGates((), chosen.get("emulated", ""), chosen.get("minCompat", ""))
    try:
        features.emulated_version, features.min_compat_version
    except GateError:  # a version the run will refuse: compare with the binary's defaults meanwhile
        return FeatureGates()
    return features


def full_gates(gates: dict, versions: dict | None = None) -> dict:
    """A value for every shown gate on every component: the given ones, else the default at the
    component's versions (and a related gate where one was set)."""
    out = {}
    for component in COMPONENT_KEYS:
        given = gates.get(component, {})
        at = _features_at(versions or {}, component)
        names = sorted(set(GATES) | {name for name in given if name in KNOWN_GATES})
        out[component] = {name: bool(given.get(name, at.default(name))) for name in names}
    return out


def changed_gates(gates: dict, versions: dict | None = None) -> dict:
    """Only the values that differ from the defaults at each component's versions, as a RunSettings
    holds them."""
    out = {}
    for component in COMPONENT_KEYS:
        at = _features_at(versions or {}, component)
        chosen = {name: value for name, value in (gates.get(component) or {}).items()
                  if name in KNOWN_GATES and value != at.default(name)}
        if chosen:
            out[component] = chosen
    return out


def uniform(values: dict) -> dict:
    """One set of values (gates or versions) for every component."""
    return {component: dict(values) for component in COMPONENT_KEYS} if values else {}


# ---- the readers ------------------------------------------------------------------------------

def check_each_claim_alone(value, problem: Problem = raise_problem, path: tuple = ("eachClaimAlone",)) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        problem("eachClaimAlone must be true or false", path)
        return False
    return value


def from_request(scenario, *, node=None, gates=None, versions=None, what_if=None, each_claim_alone=None,
                 problem: Problem = raise_problem, client: str | None = None) -> RunSettings:
    """Settings as an API client names them: gate values taken as the components take their
    `--feature-gates` (a value given is a value set, even when it is the default: a component
    refuses setting a pre-alpha gate at all), versions and the what-if per component."""
    versions = check_versions(versions, problem)
    return RunSettings(scenario=scenario, node=check_node(node, problem), gates=check_gates(gates, problem),
                       versions=versions, what_if=check_what_if(what_if, problem), client=client,
                       keep_unnamed_node=True, each_claim_alone=check_each_claim_alone(each_claim_alone, problem))


def from_link(scenario, *, node=None, gates=None, versions=None, each_claim_alone=None,
              problem: Problem = raise_problem) -> RunSettings:
    """Settings as a share row, a `#s=` link or a compare side holds them: every gate's value per
    component (`full_gates`), of which the values that differ from the defaults at the component's
    versions are kept (`changed_gates`)."""
    versions = check_versions(versions, problem)
    return RunSettings(scenario=scenario, node=check_node(node, problem),
                       gates=changed_gates(check_gates(gates, problem), versions), versions=versions,
                       each_claim_alone=check_each_claim_alone(each_claim_alone, problem))


def from_share_row(row) -> RunSettings:
    """A stored share: every gate as it was when shared, and its versions (none before they existed),
    and whether each claim was judged alone."""
    return from_link(row.scenario, node=row.node, gates=row.gates, versions=getattr(row, "versions", None) or {},
                     each_claim_alone=bool(getattr(row, "each_claim_alone", False)))


def from_lesson(data: dict, problem: Problem, path: tuple, *, base: RunSettings | None,
                scenario: str) -> RunSettings:
    """A lesson's start, solution or compare side: `node`, `gates` (every component) with
    `componentGates` (per component) over them, `versions` with `componentVersions` the same way.
    What the data leaves out comes from `base` (the start), or the defaults."""
    node = check_node(data["node"], problem, path + ("node",)) if "node" in data else (base.node if base else "")
    if "versions" in data or "componentVersions" in data or base is None:
        versions = _uniform_then_per_component(data, "versions", "componentVersions", problem, path,
                                               check_version_values, check_versions)
        versions = {c: v for c, v in versions.items() if v}
    else:
        versions = base.versions
    if "gates" in data or "componentGates" in data or base is None:
        values = _uniform_then_per_component(data, "gates", "componentGates", problem, path,
                                             check_gate_values, check_gates)
        gates = changed_gates(values, versions)
    else:
        gates = base.gates
    return RunSettings(scenario=scenario, node=node, gates=gates, versions=versions)


def _uniform_then_per_component(data, every: str, per: str, problem, path, read_one, read_per) -> dict:
    out: dict = {c: {} for c in COMPONENT_KEYS}
    if data.get(every) is not None:
        out = uniform(read_one(data[every], problem, path + (every,))) or out
    for component, values in read_per(data.get(per), problem, path + (per,)).items():
        out[component].update(values)
    return out


def from_example(*, scenario: str, node: str | None, gates: dict, component_gates: dict,
                 versions: dict | None = None) -> RunSettings:
    """A gallery entry: `gates` for every component, `componentGates` over them, `versions` for every
    component. The index is ours, so a mistake in it is a bug: it raises."""
    values = {c: {**gates, **component_gates.get(c, {})} for c in COMPONENT_KEYS}
    chosen = uniform(check_version_values(versions or {}, raise_problem, ("versions",)))
    return RunSettings(scenario=scenario, node=node or "",
                       gates=changed_gates(check_gates(values), chosen), versions=chosen)


def scenario_text(data: bytes) -> str:
    """An uploaded file as text: UTF-8 (or UTF-16 with its byte order mark, as PowerShell
    writes); anything else with U+FFFD for the bytes that are not text, which the loader then
    reports where they are."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", "replace")
    return data.decode("utf-8", "replace")


def run_in_process(run: RunSettings) -> tuple[Scenario, Outcome]:
    """One engine run in this process, with the web's bounds (objects count as created under the
    apiserver's gates when they differ): the outcome, and the scenario as the page shows it
    (`Scenario.for_display`). Views use `worker.run_bounded`, which calls this in a worker."""
    gates = run.component_gates()
    replay = gates.apiserver != gates.scheduler
    scenario, outcome = allocate_text(
        run.scenario,
        node_name=run.node or None,
        unnamed_node=run.node_rule,
        each_claim_alone=run.each_claim_alone,
        gates=gates,
        max_steps=WEB_MAX_STEPS,
        time_limit=WEB_TIME_LIMIT,
        replay_create=replay,
        **(run.what_if.run_options() if run.what_if is not None else {}),
    )
    return scenario.for_display(), outcome
