"""Reading a scenario: load the stream, validate every object, build the typed model."""
from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace

from allocator.engine import cel, convert
from allocator.engine.apiserver import drop_disabled_fields
from allocator.engine.gates import FeatureGates
from allocator.engine.loader import Loaded, gc_paused, load_scenario
from allocator.engine.objects import (
    DeviceClass,
    Node,
    ObjectFieldError,
    build_claim,
    build_device_class,
    build_node,
    build_pod,
    build_slice,
    build_template,
)
from allocator.engine import podgroups, statusauth, workloads
from allocator.engine.problems import DROPPED_ON_CREATE, ERROR, IGNORED_KIND, WARNING, Problem, field_path
from allocator.engine.taintrules import build_taint_rule, tainted_slices
from allocator.engine.validation import is_decoding_error, validate

RESOURCE_KINDS = {"DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate", "DeviceTaintRule"}
CORE_KINDS = {"Node", "Pod", "Namespace"}
ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access"


@dataclass
class Scenario:
    loaded: Loaded | None
    classes: dict = field(default_factory=dict)  # name -> DeviceClass
    slices: list = field(default_factory=list)  # ResourceSlice, input order
    nodes: dict = field(default_factory=dict)  # name -> Node
    claims: list = field(default_factory=list)  # ResourceClaim, input order
    templates: list = field(default_factory=list)  # ResourceClaimTemplate, input order
    pods: list = field(default_factory=list)  # Pod, input order
    problems: list = field(default_factory=list)  # errors and warnings
    refs: dict = field(default_factory=dict)  # (kind, name) -> position of the object in the input
    namespaces: dict = field(default_factory=dict)  # name -> labels, from Namespace objects
    conversions: dict = field(default_factory=dict)  # position -> Conversion, for older resource.k8s.io
    taint_rules: list = field(default_factory=list)  # DeviceTaintRule, input order
    rbac: statusauth.RBACObjects = field(default_factory=statusauth.RBACObjects)  # roles, bindings, plugins
    workloads: list = field(default_factory=list)  # workloads.Workload, input order
    pod_workloads: dict = field(default_factory=dict)  # pod key -> the workload its controller made it for
    daemon_pods: dict = field(default_factory=dict)  # pod key -> node, for the pods made for DaemonSets
    pod_groups: dict = field(default_factory=dict)  # namespace/name -> podgroups.PodGroup

    def scheduler_slices(self, gates: FeatureGates) -> list:
        """The slices as kube-scheduler lists them: with DRADeviceTaintRules, rules' taints added."""
        if not self.taint_rules or not gates.enabled("DRADeviceTaintRules"):
            return self.slices
        return tainted_slices(self.slices, self.taint_rules)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == ERROR]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == WARNING]

    def for_display(self) -> "Scenario":
        """The scenario as a page shows it beside the outcome: without the loader's source index
        and without device lists (a cluster dump's slices hold most of it; a page needs their
        nodes and pools only), so that it is cheap to send between processes and to cache."""
        slices = [replace(s, devices=(), shared_counters=()) for s in self.slices]
        return replace(self, loaded=None, slices=slices)

    def locate(self, problem: Problem) -> Problem:
        """Fill in the source line of a problem that knows its object and path (for an object
        written in an older version, the path as written)."""
        if problem.line is not None or problem.ref is None or self.loaded is None:
            return problem
        conversion = self.conversions.get(problem.ref)
        if conversion is not None and problem.path:
            problem = replace(problem, path=conversion.source_path(problem.path))
        position = self.loaded.line_of(problem.ref, problem.path)
        if position is None:
            return problem
        return problem.with_location(*position)


def object_name(data: dict) -> str:
    meta = data.get("metadata")
    if not isinstance(meta, dict):
        meta = {}
    name = meta.get("name")
    if not isinstance(name, str):
        name = ""
    namespace = meta.get("namespace")
    if not isinstance(namespace, str):
        namespace = ""
    kind = data.get("kind")
    if kind in ("ResourceClaim", "ResourceClaimTemplate", "Pod"):
        namespace = namespace or "default"
    return f"{namespace}/{name}" if namespace and name else name


def _cel_check(expression: str, compile_, options=None):
    try:
        program = compile_(expression, options or cel.Options(stored=True, list_type_attributes=True))
    except cel.CelCompileError as exc:
        if exc.message.startswith("must evaluate to "):
            return ("invalid", exc.message)  # a result of the wrong type: compiled, then refused
        return ("invalid", f"compilation failed: {exc.message}")
    if program.estimated_cost > cel.COST_LIMIT:
        return ("forbidden", "too complex, exceeds cost limit")
    return None


@functools.lru_cache(maxsize=2048)
def cel_check(expression: str):
    """Validation's view of a selector: compile errors and the cost limit."""
    return _cel_check(expression, cel.compile_selector)


@functools.lru_cache(maxsize=2048)
def _derived_check(expression: str):
    """The same for a derived attribute, whose value is a scalar or a list of scalars."""
    return _cel_check(expression, cel.compile_derived_attribute)


cel_check.derived = _derived_check


@functools.lru_cache(maxsize=8)
def _created_cel_check(list_type_attributes: bool, consumable_capacity: bool):
    """Validation of a new expression on create: the apiserver's gates decide what it declares."""
    options = cel.Options(stored=False, list_type_attributes=list_type_attributes,
                          consumable_capacity=consumable_capacity)

    @functools.lru_cache(maxsize=2048)
    def check(expression: str):
        return _cel_check(expression, cel.compile_selector, options)

    @functools.lru_cache(maxsize=2048)
    def derived(expression: str):
        return _cel_check(expression, cel.compile_derived_attribute, options)

    check.derived = derived
    return check


def _cel_check_for(gates: FeatureGates | None):
    if gates is None:
        return cel_check  # stored objects: every field and function declared
    return _created_cel_check(gates.enabled("DRAListTypeAttributes"), gates.enabled("DRAConsumableCapacity"))


def _lenient(path: tuple, message: str) -> bool:
    """Rules relaxed to warnings: an empty counter map, which upstream's allocator tests use
    to show how the allocator treats a pool that refers to missing counters."""
    return bool(path) and path[-1] == "counters" and message.startswith("Required value")


def _undecodable(original: dict, created: dict) -> list:
    """The wrong-type errors of the fields an apiserver with some gates off drops on create (an
    empty one too: `{}` where a list belongs is dropped without a warning, and still refused)."""
    return [fe for fe in validate(original) if is_decoding_error(fe.message) and not _has_path(created, fe.path)]


def _has_path(obj, path: tuple) -> bool:
    for part in path:
        if isinstance(obj, dict) and part in obj:
            obj = obj[part]
        elif isinstance(obj, list) and isinstance(part, int) and 0 <= part < len(obj):
            obj = obj[part]
        else:
            return False
    return True


def read_scenario(text: str | bytes, *, apiserver_gates: FeatureGates | None = None) -> Scenario:
    """Load and check a scenario. With `apiserver_gates`, objects are created afresh under those
    gates (gated fields dropped, as a skewed kube-apiserver would); otherwise they count as stored."""
    with gc_paused():  # objects by the hundred thousand, none of them garbage yet
        return _read(text, apiserver_gates)


def _read(text: str | bytes, apiserver_gates: FeatureGates | None) -> Scenario:
    loaded = load_scenario(text)
    scenario = Scenario(loaded=loaded)
    scenario.problems.extend(loaded.problems)
    ignored: dict[str, int] = {}
    converted: dict[tuple, list] = {}  # (version, kind) -> [count, moves, first ref, first name]
    seen: dict[tuple, tuple] = {}
    pod_positions: list[int] = []  # input position of each of scenario.pods
    for index, raw in enumerate(loaded.objects):
        data = raw.data
        kind, api_version = data.get("kind"), data.get("apiVersion")
        name = object_name(data)
        memo = raw.memo  # shared with every later read of the same document text
        if convert.convertible(data):
            conversion = memo.get("v1")
            if conversion is None:
                conversion = memo["v1"] = convert.to_v1(data)
            scenario.conversions[raw.ref] = conversion
            entry = converted.setdefault((api_version, kind), [0, {}, raw.ref, name])
            entry[0] += 1
            entry[1].update(dict.fromkeys(conversion.moves))
            for path in conversion.unknown:  # paths as written: located now, not mapped again
                scenario.problems.append(Problem(
                    f'unknown field "{field_path(path)}"', kind=kind, name=name, path=path,
                    severity=WARNING, ref=raw.ref).with_location(*(loaded.line_of(raw.ref, path) or (None, None))))
            data, api_version = conversion.data, conversion.data["apiVersion"]
        understood = (api_version == "resource.k8s.io/v1" and kind in RESOURCE_KINDS) or (
            api_version == "v1" and kind in CORE_KINDS
        )
        if not understood and podgroups.understood(api_version, kind):
            group, found = podgroups.read_pod_group(data, raw.ref, kind=kind, name=name)
            scenario.problems.extend(found)
            if group is not None and group.key in scenario.pod_groups:
                scenario.problems.append(Problem(f"PodGroup {group.key} appears more than once; a cluster holds "
                                                 "one object per name", kind=kind, name=name,
                                                 path=("metadata", "name"), ref=raw.ref))
            elif group is not None:
                scenario.pod_groups[group.key] = group
            continue
        if not understood and workloads.understood(api_version, kind):
            scenario.workloads.append(workloads.read_workload(data, raw.ref, index))
        if not understood and statusauth.understood(api_version, kind):
            scenario.problems.extend(statusauth.read_into(scenario.rbac, data, raw.ref, memo, kind=kind, name=name))
            continue
        if not understood and workloads.understood(api_version, kind):
            continue
        if not understood:
            if kind in RESOURCE_KINDS and isinstance(api_version, str) and api_version.startswith("resource.k8s.io/"):
                scenario.problems.append(Problem(
                    f"{api_version} is not supported: the playground reads resource.k8s.io/v1 and converts "
                    "v1beta1 and v1beta2; write this object as resource.k8s.io/v1",
                    kind=kind, name=name, path=("apiVersion",), ref=raw.ref))
            else:
                count, first = ignored.get(f"{api_version} {kind}", (0, raw.ref))
                ignored[f"{api_version} {kind}"] = (count + 1, first)
            continue
        if apiserver_gates is not None:
            created = memo.get(("created", apiserver_gates))
            if created is None:
                created = memo[("created", apiserver_gates)] = drop_disabled_fields(data, apiserver_gates)
            undropped, (data, dropped) = data, created
            for path, gate in dropped:
                scenario.problems.append(Problem(
                    f"dropped on create: the kube-apiserver has {gate} disabled",
                    kind=kind, name=name, path=path, severity=WARNING, code=DROPPED_ON_CREATE, ref=raw.ref))
        field_errors = memo.get(("valid", apiserver_gates))
        if field_errors is None:
            field_errors = validate(data, cel_check=_cel_check_for(apiserver_gates), gates=apiserver_gates)
            if apiserver_gates is not None and undropped != data:
                # Decoding comes before the drop: a dropped field of the wrong type is still refused.
                field_errors = _undecodable(undropped, data) + field_errors
            memo[("valid", apiserver_gates)] = field_errors
        bad = False
        for fe in field_errors:
            severity, message = fe.severity, fe.message
            if severity == ERROR and _lenient(fe.path, message):
                severity = WARNING
                message += " (the apiserver would refuse this; the playground shows what the allocator does with it)"
            scenario.problems.append(
                Problem(message, kind=kind, name=name, path=fe.path, severity=severity, ref=raw.ref)
            )
            bad = bad or severity == ERROR
        if bad:
            continue
        if (kind, name) in seen:
            scenario.problems.append(Problem(
                f"{kind} {name} appears more than once (first at document {seen[(kind, name)][0] + 1}); "
                "a cluster holds one object per name",
                kind=kind, name=name, path=("metadata", "name"), ref=raw.ref))
            continue
        seen[(kind, name)] = raw.ref
        scenario.refs[(kind, name)] = raw.ref
        try:
            if kind == "ResourceSlice":
                # Built once per document text, position and gates: read-only from here on (the
                # CEL view each device makes on first use is a function of the device alone).
                # Only the latest is kept: moving the document makes a new one.
                key = (apiserver_gates, raw.ref, len(scenario.slices))
                kept = memo.get("slice")
                if kept is None or kept[0] != key:
                    kept = memo["slice"] = (key, build_slice(data, raw.ref, order=len(scenario.slices)))
                scenario.slices.append(kept[1])
            else:
                _add_object(scenario, kind, data, raw.ref, index)
                if kind == "Pod":
                    pod_positions.append(index)
        except ObjectFieldError as exc:
            scenario.problems.append(Problem(exc.message, kind=kind, name=name, path=exc.path, ref=raw.ref))
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            scenario.problems.append(Problem(f"cannot read object: {exc}", kind=kind, name=name, ref=raw.ref))
    for (version, kind), (count, moves, ref, name) in converted.items():
        if len(moves) > 1:
            moves.pop("same fields as v1", None)
        more = f"; so are {count - 1} more {kind} object{'s' if count > 2 else ''} in {version}" if count > 1 else ""
        scenario.problems.append(Problem(
            f"{version} read as resource.k8s.io/v1, converted as the apiserver does ({', '.join(moves)}){more}",
            kind=kind, name=name, path=("apiVersion",), severity=WARNING, ref=ref))
    for what, (count, ref) in ignored.items():
        kind = what.rsplit(" ", 1)[-1]
        import difflib  # only for a kind the playground does not read

        close = difflib.get_close_matches(kind, sorted(RESOURCE_KINDS | CORE_KINDS), n=1, cutoff=0.8)
        hint = f"did you mean {close[0]}? " if close else ""
        scenario.problems.append(Problem(
            f"{what}: ignored ({count} object{'s' if count > 1 else ''}); {hint}the playground reads "
            "resource.k8s.io/v1 DeviceClass, ResourceSlice, ResourceClaim, ResourceClaimTemplate, DeviceTaintRule, v1 Node, Pod, "
            "Namespace, apps/v1 Deployment, ReplicaSet, StatefulSet, DaemonSet and batch/v1 Job, CronJob",
            path=("kind",), severity=WARNING, code=IGNORED_KIND, ref=ref))
    if scenario.workloads:
        _add_workload_pods(scenario, pod_positions, apiserver_gates)
    _admin_access_admission(scenario)
    scenario.problems = [scenario.locate(p) for p in scenario.problems]
    return scenario


def _add_object(scenario: Scenario, kind: str, data: dict, ref, index: int) -> None:
    if kind == "DeviceClass":
        device_class: DeviceClass = build_device_class(data, ref)
        scenario.classes[device_class.name] = device_class
    elif kind == "ResourceClaim":
        scenario.claims.append(build_claim(data, ref))
    elif kind == "Node":
        node: Node = build_node(data, ref)
        scenario.nodes[node.name] = node
    elif kind == "ResourceClaimTemplate":
        scenario.templates.append(build_template(data, ref))
    elif kind == "Pod":
        scenario.pods.append(build_pod(data, ref))
    elif kind == "DeviceTaintRule":
        scenario.taint_rules.append(build_taint_rule(data))
    elif kind == "Namespace":
        labels = (data.get("metadata") or {}).get("labels") or {}
        scenario.namespaces[(data.get("metadata") or {}).get("name", "")] = {str(k): str(v) for k, v in labels.items()}


def _add_workload_pods(scenario: Scenario, positions: list, apiserver_gates: FeatureGates | None) -> None:
    """The pods the scenario's workloads' controllers would create, each validated as the apiserver
    validates the workload's pod template, placed among the other pods in input order."""
    expansion = workloads.expand(scenario.workloads, pods=scenario.pods, nodes=scenario.nodes, gates=apiserver_gates)
    scenario.problems.extend(expansion.problems)
    if not scenario.pods and expansion.pods and all(
            m.node is not None and not workloads.asks_for_devices(m.raw) for m in expansion.pods):
        # Only plugin-like DaemonSet pods: they would turn a claims run into a pod run without a pod
        # that asks for devices; the claims are allocated as written instead.
        scenario.problems.append(Problem(
            f"the DaemonSets' {len(expansion.pods)} pod{'s' if len(expansion.pods) > 1 else ''} ask for no "
            "devices and the scenario has no other pod: the claims are allocated as written, and these pods "
            "are not scheduled", kind=expansion.pods[0].kind, name=expansion.pods[0].key, path=("spec",),
            severity=WARNING, ref=expansion.pods[0].ref))
        return
    ordered = list(zip(positions, range(len(positions)), scenario.pods))
    for made in expansion.pods:
        bad = False
        for fe in validate(made.raw, cel_check=_cel_check_for(apiserver_gates), gates=apiserver_gates):
            path = made.base + tuple(fe.path) if fe.path[:1] in (("spec",), ("metadata",)) else made.base
            scenario.problems.append(Problem(fe.message, kind=made.kind, name=made.key, path=path, severity=fe.severity,
                                             ref=made.ref))
            bad = bad or fe.severity == ERROR
        if bad:
            continue
        try:
            pod = build_pod(made.raw, made.ref)
        except (ObjectFieldError, ValueError, TypeError, KeyError, AttributeError) as exc:
            message = exc.message if isinstance(exc, ObjectFieldError) else f"cannot read the pod template: {exc}"
            path = made.base + tuple(exc.path) if isinstance(exc, ObjectFieldError) else made.base
            scenario.problems.append(Problem(message, kind=made.kind, name=made.key, path=path, ref=made.ref))
            continue
        if ("Pod", pod.key) in scenario.refs:
            continue  # named as a pod of the input already
        scenario.refs[("Pod", pod.key)] = made.ref
        scenario.pod_workloads[pod.key] = made.workload
        if made.node is not None:
            scenario.daemon_pods[pod.key] = made.node
        ordered.append((made.index, len(ordered), pod))
    ordered.sort(key=lambda item: (item[0], item[1]))
    scenario.pods = [pod for _, _, pod in ordered]


def _admin_access_admission(scenario: Scenario) -> None:
    """Admission: adminAccess needs the admin-access label on the claim's namespace.

    Checked where the scenario includes that Namespace object; without one the label is unknown.
    """
    objects = [("ResourceClaim", c.raw, c.key, c.namespace, ("spec",)) for c in scenario.claims]
    for template in scenario.templates:
        objects.append(("ResourceClaimTemplate", template.raw, template.key, template.namespace, ("spec", "spec")))
    for kind, raw, key, namespace, base in objects:
        labels = scenario.namespaces.get(namespace)
        if labels is None or labels.get(ADMIN_ACCESS_LABEL) == "true":
            continue
        spec = raw
        for part in base:
            spec = (spec or {}).get(part) or {}
        for ri, request in enumerate(((spec.get("devices") or {}).get("requests") or [])):
            if ((request or {}).get("exactly") or {}).get("adminAccess") is True:
                scenario.problems.append(Problem(
                    f"admin access to devices requires the `{ADMIN_ACCESS_LABEL}: true` label on the "
                    f"containing namespace {namespace}",
                    kind=kind, name=key, path=base + ("devices", "requests", ri, "exactly", "adminAccess"),
                    ref=scenario.refs.get((kind, key))))
