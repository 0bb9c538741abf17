"""RBAC objects of a scenario and the RBAC authorizer's decision over them.

Roles, bindings and service accounts are read and validated as the kube-apiserver validates
them (rbac.authorization.k8s.io/v1 and v1 ServiceAccount); a driver's kubelet-plugin DaemonSet
is read only for what the status what-if needs: its namespace, service account and nodes.

The authorizer walks ClusterRoleBindings and then, for a namespaced request, the namespace's
RoleBindings, and allows on the first rule that matches; it never denies. Bindings are walked in
name order: a real apiserver walks its informer cache, whose order is unspecified, so when
several bindings allow, the one a real cluster names may differ (the decision does not).
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache

from allocator.engine.validation import (
    FieldError,
    dns_label_errors,
    dns_subdomain_errors,
    label_key_errors,
    label_value_errors,
)

RBAC_GROUP = "rbac.authorization.k8s.io"
RBAC_VERSION = f"{RBAC_GROUP}/v1"
RBAC_KINDS = ("ClusterRole", "Role", "ClusterRoleBinding", "RoleBinding")
CORE_RBAC_KINDS = ("ServiceAccount",)
WORKLOAD_KINDS = ("DaemonSet",)  # apps/v1
NAMESPACED = {"Role", "RoleBinding", "ServiceAccount", "DaemonSet"}
DRIVER_ANNOTATION = "dra.playground/driver"  # names the driver(s) a plugin workload serves
SA_PREFIX = "system:serviceaccount:"
NODE_NAME_KEY = "authentication.kubernetes.io/node-name"


def understood(api_version, kind) -> bool:
    return (
        (api_version == RBAC_VERSION and kind in RBAC_KINDS)
        or (api_version == "v1" and kind in CORE_RBAC_KINDS)
        or (api_version == "apps/v1" and kind in WORKLOAD_KINDS)
    )


# --- types --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PolicyRule:
    verbs: tuple = ()
    api_groups: tuple = ()
    resources: tuple = ()
    resource_names: tuple = ()
    non_resource_urls: tuple = ()

    def as_dict(self) -> dict:
        out = {"verbs": list(self.verbs)}
        for key, value in (("apiGroups", self.api_groups), ("resources", self.resources),
                           ("resourceNames", self.resource_names), ("nonResourceURLs", self.non_resource_urls)):
            if value:
                out[key] = list(value)
        return out

    def describe(self) -> str:
        parts = [f"verbs={','.join(self.verbs)}"]
        if self.api_groups:
            groups = ",".join(g or '""' for g in self.api_groups)
            parts.append(f"apiGroups={groups}")
        if self.resources:
            parts.append(f"resources={','.join(self.resources)}")
        if self.resource_names:
            parts.append(f"resourceNames={','.join(self.resource_names)}")
        if self.non_resource_urls:
            parts.append(f"nonResourceURLs={','.join(self.non_resource_urls)}")
        return " ".join(parts)


@dataclass(frozen=True)
class Requirement:
    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist
    values: tuple = ()


@dataclass(frozen=True)
class LabelSelector:
    requirements: tuple  # of Requirement; empty matches every object

    def matches(self, labels: dict) -> bool:
        for r in self.requirements:
            present = r.key in labels
            if r.operator == "In" and not (present and labels[r.key] in r.values):
                return False
            if r.operator == "NotIn" and present and labels[r.key] in r.values:
                return False
            if r.operator == "Exists" and not present:
                return False
            if r.operator == "DoesNotExist" and present:
                return False
        return True


@dataclass(frozen=True)
class Role:
    kind: str  # Role or ClusterRole
    namespace: str  # "" for a ClusterRole
    name: str
    rules: tuple  # of PolicyRule; for an aggregated ClusterRole, as aggregation left them
    labels: dict = field(default_factory=dict, compare=False)
    selectors: tuple | None = None  # aggregationRule.clusterRoleSelectors; None without aggregationRule
    bootstrap: bool = False
    ref: tuple | None = field(default=None, compare=False)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


@dataclass(frozen=True)
class Subject:
    kind: str  # User, Group, ServiceAccount
    name: str
    namespace: str = ""
    api_group: str = ""

    def describe(self, binding_namespace: str) -> str:
        if self.kind == "ServiceAccount":
            return f"{self.kind} {go_quote(self.name + '/' + (self.namespace or binding_namespace))}"
        return f"{self.kind} {go_quote(self.name)}"

    def applies_to(self, user: "UserInfo", namespace: str) -> bool:
        if self.kind == "User":
            return user.name == self.name
        if self.kind == "Group":
            return self.name in user.groups
        if self.kind == "ServiceAccount":
            sa_namespace = self.namespace or namespace
            return bool(sa_namespace) and user.name == f"{SA_PREFIX}{sa_namespace}:{self.name}"
        return False


@dataclass(frozen=True)
class Binding:
    kind: str  # RoleBinding or ClusterRoleBinding
    namespace: str
    name: str
    role_kind: str
    role_name: str
    subjects: tuple  # of Subject
    bootstrap: bool = False
    ref: tuple | None = field(default=None, compare=False)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    def describe(self, subject: Subject) -> str:
        shown = self.name + "/" + self.namespace if self.kind == "RoleBinding" else self.name
        return (f"{self.kind} {go_quote(shown)} of {self.role_kind} {go_quote(self.role_name)} to "
                f"{subject.describe(self.namespace)}")


@dataclass(frozen=True)
class ServiceAccount:
    namespace: str
    name: str
    ref: tuple | None = field(default=None, compare=False)

    @property
    def username(self) -> str:
        return f"{SA_PREFIX}{self.namespace}:{self.name}"


@dataclass(frozen=True)
class PluginWorkload:
    """A driver's kubelet plugin: a DaemonSet whose pods run as one service account."""

    kind: str
    namespace: str
    name: str
    service_account: str
    node_selector: dict  # spec.template.spec.nodeSelector
    drivers: tuple  # the drivers it serves, when it says; empty: any driver of the claim
    ref: tuple | None = field(default=None, compare=False)
    raw: dict | None = field(default=None, compare=False, repr=False)  # the DaemonSet, for its pods' nodes

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True)
class UserInfo:
    name: str
    groups: tuple = ()
    extra: tuple = ()  # ((key, (values...)), ...)

    def extra_values(self, key: str) -> tuple:
        return next((values for k, values in self.extra if k == key), ())

    def as_dict(self) -> dict:
        return {"name": self.name, "groups": list(self.groups), "extra": {k: list(v) for k, v in self.extra}}


@dataclass
class RBACObjects:
    """The scenario's RBAC objects, and the bootstrap ones unless turned off."""

    cluster_roles: dict = field(default_factory=dict)  # name -> Role
    roles: dict = field(default_factory=dict)  # (namespace, name) -> Role
    cluster_role_bindings: dict = field(default_factory=dict)  # name -> Binding
    role_bindings: dict = field(default_factory=dict)  # (namespace, name) -> Binding
    service_accounts: dict = field(default_factory=dict)  # (namespace, name) -> ServiceAccount
    workloads: list = field(default_factory=list)  # PluginWorkload, input order

    @property
    def empty(self) -> bool:
        return not (self.cluster_roles or self.roles or self.cluster_role_bindings or self.role_bindings
                    or self.service_accounts or self.workloads)

    def add(self, obj) -> None:
        if isinstance(obj, Role):
            (self.cluster_roles if obj.kind == "ClusterRole" else self.roles)[
                obj.name if obj.kind == "ClusterRole" else (obj.namespace, obj.name)] = obj
        elif isinstance(obj, Binding):
            (self.cluster_role_bindings if obj.kind == "ClusterRoleBinding" else self.role_bindings)[
                obj.name if obj.kind == "ClusterRoleBinding" else (obj.namespace, obj.name)] = obj
        elif isinstance(obj, ServiceAccount):
            self.service_accounts[(obj.namespace, obj.name)] = obj
        elif isinstance(obj, PluginWorkload):
            self.workloads.append(obj)

    def with_bootstrap(self) -> "RBACObjects":
        """These objects over the 1.37.2 bootstrap roles and bindings: an object the user wrote
        replaces the bootstrap one of the same name."""
        base = bootstrap_objects()
        return RBACObjects(
            cluster_roles={**base.cluster_roles, **self.cluster_roles},
            roles={**base.roles, **self.roles},
            cluster_role_bindings={**base.cluster_role_bindings, **self.cluster_role_bindings},
            role_bindings={**base.role_bindings, **self.role_bindings},
            service_accounts=dict(self.service_accounts),
            workloads=list(self.workloads),
        )

    def aggregated(self) -> "RBACObjects":
        """Aggregated ClusterRoles filled in as kube-controller-manager's clusterrole-aggregation
        controller does: the union of the rules of every other ClusterRole a selector matches,
        roles in name order, each rule once; repeated until nothing changes."""
        roles = dict(self.cluster_roles)
        names = sorted(roles)
        for _ in range(len(names) + 2):
            changed = False
            for name in names:
                role = roles[name]
                if role.selectors is None:
                    continue
                rules: list = []
                for selector in role.selectors:
                    for other_name in names:
                        other = roles[other_name]
                        if other_name == name or not selector.matches(other.labels):
                            continue
                        for rule in other.rules:
                            if rule not in rules:
                                rules.append(rule)
                if tuple(rules) != role.rules:
                    roles[name] = Role(role.kind, role.namespace, role.name, tuple(rules), role.labels,
                                       role.selectors, role.bootstrap, role.ref)
                    changed = True
            if not changed:
                break
        return RBACObjects(roles, dict(self.roles), dict(self.cluster_role_bindings),
                           dict(self.role_bindings), dict(self.service_accounts), list(self.workloads))


# --- the authorizer -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Attributes:
    verb: str
    namespace: str
    name: str
    api_group: str = "resource.k8s.io"
    resource: str = "resourceclaims"
    subresource: str = ""


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str  # as RBAC words it: "RBAC: allowed by ...", or "" / "RBAC: <errors>" when not
    binding: Binding | None = None
    role: Role | None = None
    rule: PolicyRule | None = None
    rule_index: int | None = None


def rule_allows(rule: PolicyRule, attrs: Attributes) -> bool:
    combined = attrs.resource + ("/" + attrs.subresource if attrs.subresource else "")
    return (
        any(v == "*" or v == attrs.verb for v in rule.verbs)
        and any(g == "*" or g == attrs.api_group for g in rule.api_groups)
        and any(
            r == "*" or r == combined
            or (attrs.subresource and len(r) == len(attrs.subresource) + 2 and r.startswith("*/")
                and r.endswith(attrs.subresource))
            for r in rule.resources
        )
        and (not rule.resource_names or attrs.name in rule.resource_names)
    )


class Authorizer:
    """RBAC over one set of objects (aggregation already applied)."""

    def __init__(self, objects: RBACObjects):
        self.objects = objects
        self._cluster_bindings = [objects.cluster_role_bindings[k] for k in sorted(objects.cluster_role_bindings)]
        self._bindings_by_namespace: dict = {}
        for (namespace, name) in sorted(objects.role_bindings):
            self._bindings_by_namespace.setdefault(namespace, []).append(objects.role_bindings[(namespace, name)])
        # Which bindings name a user or a group, so a request walks only those (in the same order):
        # the bootstrap policy alone has dozens of bindings, and the page asks ~170 questions a run.
        self._cluster_index = _subject_index(self._cluster_bindings, "")
        self._namespace_index = {namespace: _subject_index(bindings, namespace)
                                 for namespace, bindings in self._bindings_by_namespace.items()}

    def _role_for(self, binding: Binding, namespace: str):
        if binding.role_kind == "Role":
            role = self.objects.roles.get((namespace, binding.role_name))
            return role, None if role else f"role.rbac.authorization.k8s.io {go_quote(binding.role_name)} not found"
        if binding.role_kind == "ClusterRole":
            role = self.objects.cluster_roles.get(binding.role_name)
            return role, None if role else (
                f"clusterrole.rbac.authorization.k8s.io {go_quote(binding.role_name)} not found")
        return None, f"unsupported role reference kind: {go_quote(binding.role_kind)}"

    def authorize(self, user: UserInfo, attrs: Attributes) -> Decision:
        errors: list[str] = []
        walks = [(self._cluster_bindings, self._cluster_index, "")]
        if attrs.namespace:
            walks.append((self._bindings_by_namespace.get(attrs.namespace, []),
                          self._namespace_index.get(attrs.namespace, {}), attrs.namespace))
        keys = [("user", user.name)] + [("group", group) for group in user.groups]
        for bindings, index, namespace in walks:
            # A binding none of whose subjects names this user or one of its groups applies not
            # (Subject.applies_to), so only the ones the index names are walked, in order.
            for position in sorted({p for key in keys for p in index.get(key, ())}):
                binding = bindings[position]
                subject = next((s for s in binding.subjects if s.applies_to(user, namespace)), None)
                if subject is None:
                    continue
                role, error = self._role_for(binding, namespace)
                if error:
                    errors.append(error)
                    continue
                for index, rule in enumerate(role.rules):
                    if rule_allows(rule, attrs):
                        return Decision(True, f"RBAC: allowed by {binding.describe(subject)}", binding, role, rule, index)
        return Decision(False, f"RBAC: {aggregate_errors(errors)}" if errors else "")


def _subject_index(bindings: list, namespace: str) -> dict:
    """("user", name) or ("group", name) -> the positions of the bindings with a subject that can
    apply to it: a User by its name, a Group by its name, a ServiceAccount by its user name (in its
    own namespace, else the binding's; none for a ClusterRoleBinding, as Subject.applies_to says)."""
    index: dict = {}
    for position, binding in enumerate(bindings):
        for subject in binding.subjects:
            if subject.kind == "User":
                key = ("user", subject.name)
            elif subject.kind == "Group":
                key = ("group", subject.name)
            elif subject.kind == "ServiceAccount" and (subject.namespace or namespace):
                key = ("user", f"{SA_PREFIX}{subject.namespace or namespace}:{subject.name}")
            else:
                continue
            positions = index.setdefault(key, [])
            if not positions or positions[-1] != position:
                positions.append(position)
    return index


def aggregate_errors(messages: list[str]) -> str:
    """Several errors as one, the way Kubernetes joins them: each distinct message once."""
    if len(messages) == 1:
        return messages[0]
    distinct = list(dict.fromkeys(messages))
    return distinct[0] if len(distinct) == 1 else "[" + ", ".join(distinct) + "]"


_PLAIN = re.compile(r'[ !#-\[\]-~]*')  # printable ASCII but `"` and `\`: kept as they are


@lru_cache(maxsize=4096)
def go_quote(text: str) -> str:
    """A string as Go's %q prints it (printable characters kept, the rest escaped). Names repeat
    in every reason the status-writers grid gives, so they are quoted once."""
    if _PLAIN.fullmatch(text):
        return f'"{text}"'
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif ch.isprintable() or ch == " ":
            out.append(ch)
        elif code < 0x80:
            out.append(f"\\x{code:02x}")
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


# --- reading and validation ---------------------------------------------------------------------


class _Checker:
    def __init__(self):
        self.errors: list[FieldError] = []

    def add(self, path, message):
        self.errors.append(FieldError(tuple(path), message))

    def required(self, path, detail=""):
        self.add(path, "Required value" + (f": {detail}" if detail else ""))

    def invalid(self, path, value, detail):
        self.add(path, f"Invalid value: {_show(value)}: {detail}")

    def unsupported(self, path, value, supported):
        self.add(path, f"Unsupported value: {_show(value)}: supported values: "
                       + ", ".join(json.dumps(s) for s in supported))

    def typed(self, holder: dict, key: str, path: tuple, kind: type, expected: str):
        value = holder.get(key)
        if value is None:
            return None
        if kind is str and isinstance(value, str):
            return value
        if kind is dict and isinstance(value, dict):
            return value
        if kind is list and isinstance(value, list):
            return value
        self.invalid(path + (key,), value, f"expected {expected}")
        return None

    def strings(self, holder: dict, key: str, path: tuple) -> tuple:
        items = self.typed(holder, key, path, list, "array")
        if not items:
            return ()
        out = []
        for i, item in enumerate(items):
            if isinstance(item, str):
                out.append(item)
            else:
                self.invalid(path + (key, i), item, "expected string")
        return tuple(out)


def _show(value) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def path_segment_errors(name: str) -> list[str]:
    """RBAC names may be anything a URL path segment can hold."""
    if name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{bad}'" for bad in ("/", "%") if bad in name]


def _metadata(c: _Checker, data: dict, kind: str, name_errors) -> tuple[str, str, dict]:
    meta = c.typed(data, "metadata", (), dict, "object") or {}
    name = c.typed(meta, "name", ("metadata",), str, "string") or ""
    if not name:
        c.required(("metadata", "name"), "name or generateName is required")
    for message in name_errors(name) if name else ():
        c.invalid(("metadata", "name"), name, message)
    namespace = ""
    if kind in NAMESPACED:
        namespace = c.typed(meta, "namespace", ("metadata",), str, "string") or "default"
        for message in dns_label_errors(namespace):
            c.invalid(("metadata", "namespace"), namespace, message)
    labels = c.typed(meta, "labels", ("metadata",), dict, "object") or {}
    clean = {}
    for key, value in labels.items():
        key_s = str(key)
        value_s = "" if value is None else str(value) if not isinstance(value, (dict, list)) else None
        for message in label_key_errors(key_s):
            c.invalid(("metadata", "labels"), key_s, message)
        if value_s is None:
            c.invalid(("metadata", "labels"), value, "expected string")
            continue
        for message in label_value_errors(value_s):
            c.invalid(("metadata", "labels"), value_s, message)
        clean[key_s] = value_s
    return namespace, name, clean


def _rules(c: _Checker, data: dict, namespaced: bool) -> tuple:
    rules = []
    for i, rule in enumerate(c.typed(data, "rules", (), list, "array") or []):
        path = ("rules", i)
        if not isinstance(rule, dict):
            c.invalid(path, rule, "expected object")
            continue
        r = PolicyRule(
            verbs=c.strings(rule, "verbs", path),
            api_groups=c.strings(rule, "apiGroups", path),
            resources=c.strings(rule, "resources", path),
            resource_names=c.strings(rule, "resourceNames", path),
            non_resource_urls=c.strings(rule, "nonResourceURLs", path),
        )
        if not r.verbs:
            c.required(path + ("verbs",), "verbs must contain at least one value")
        if r.non_resource_urls:
            if namespaced:
                c.invalid(path + ("nonResourceURLs",), list(r.non_resource_urls),
                          "namespaced rules cannot apply to non-resource URLs")
            if r.api_groups or r.resources or r.resource_names:
                c.invalid(path + ("nonResourceURLs",), list(r.non_resource_urls),
                          "rules cannot apply to both regular resources and non-resource URLs")
        else:
            if not r.api_groups:
                c.required(path + ("apiGroups",), "resource rules must supply at least one api group")
            if not r.resources:
                c.required(path + ("resources",), "resource rules must supply at least one resource")
        rules.append(r)
    return tuple(rules)


_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def _selectors(c: _Checker, data: dict) -> tuple | None:
    rule = c.typed(data, "aggregationRule", (), dict, "object")
    if rule is None:
        return None
    path = ("aggregationRule", "clusterRoleSelectors")
    items = c.typed(rule, "clusterRoleSelectors", ("aggregationRule",), list, "array") or []
    if not items:
        c.required(path, "at least one clusterRoleSelector required if aggregationRule is non-nil")
    selectors = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            c.invalid(path + (i,), item, "expected object")
            continue
        requirements = []
        for key, value in (c.typed(item, "matchLabels", path + (i,), dict, "object") or {}).items():
            key_s, value_s = str(key), "" if value is None else str(value)
            for message in label_key_errors(key_s):
                c.invalid(path + (i, "matchLabels"), key_s, message)
            for message in label_value_errors(value_s):
                c.invalid(path + (i, "matchLabels"), value_s, message)
            requirements.append(Requirement(key_s, "In", (value_s,)))
        for j, expr in enumerate(c.typed(item, "matchExpressions", path + (i,), list, "array") or []):
            epath = path + (i, "matchExpressions", j)
            if not isinstance(expr, dict):
                c.invalid(epath, expr, "expected object")
                continue
            key = c.typed(expr, "key", epath, str, "string") or ""
            operator = c.typed(expr, "operator", epath, str, "string") or ""
            values = c.strings(expr, "values", epath)
            for message in label_key_errors(key):
                c.invalid(epath + ("key",), key, message)
            if operator in ("In", "NotIn") and not values:
                c.required(epath + ("values",), "must be specified when `operator` is 'In' or 'NotIn'")
            elif operator in ("Exists", "DoesNotExist") and values:
                c.invalid(epath + ("values",), list(values), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
            elif operator not in _OPERATORS:
                c.invalid(epath + ("operator",), operator, "not a valid selector operator")
            for value in values:
                for message in label_value_errors(value):
                    c.invalid(epath + ("values",), value, message)
            requirements.append(Requirement(key, operator, values))
        selectors.append(LabelSelector(tuple(requirements)))
    return tuple(selectors)


def _subjects(c: _Checker, data: dict, namespaced: bool) -> tuple:
    subjects = []
    for i, item in enumerate(c.typed(data, "subjects", (), list, "array") or []):
        path = ("subjects", i)
        if not isinstance(item, dict):
            c.invalid(path, item, "expected object")
            continue
        kind = c.typed(item, "kind", path, str, "string") or ""
        name = c.typed(item, "name", path, str, "string") or ""
        namespace = c.typed(item, "namespace", path, str, "string") or ""
        api_group = c.typed(item, "apiGroup", path, str, "string") or ""
        if not api_group and kind in ("User", "Group"):
            api_group = RBAC_GROUP  # defaulted by the apiserver
        if not name:
            c.required(path + ("name",))
        if kind == "ServiceAccount":
            for message in dns_subdomain_errors(name) if name else ():
                c.invalid(path + ("name",), name, message)
            if api_group:
                c.unsupported(path + ("apiGroup",), api_group, [""])
            if not namespaced and not namespace:
                c.required(path + ("namespace",))
        elif kind in ("User", "Group"):
            if api_group != RBAC_GROUP:
                c.unsupported(path + ("apiGroup",), api_group, [RBAC_GROUP])
        else:
            c.unsupported(path + ("kind",), kind, ["ServiceAccount", "User", "Group"])
        subjects.append(Subject(kind, name, namespace, api_group))
    return tuple(subjects)


def _role_ref(c: _Checker, data: dict, kinds: list) -> tuple[str, str]:
    ref = c.typed(data, "roleRef", (), dict, "object") or {}
    api_group = c.typed(ref, "apiGroup", ("roleRef",), str, "string") or RBAC_GROUP  # defaulted
    kind = c.typed(ref, "kind", ("roleRef",), str, "string") or ""
    name = c.typed(ref, "name", ("roleRef",), str, "string") or ""
    if api_group != RBAC_GROUP:
        c.unsupported(("roleRef", "apiGroup"), api_group, [RBAC_GROUP])
    if kind not in kinds:
        c.unsupported(("roleRef", "kind"), kind, kinds)
    if not name:
        c.required(("roleRef", "name"))
    for message in path_segment_errors(name) if name else ():
        c.invalid(("roleRef", "name"), name, message)
    return kind, name


_PLUGIN_ARG = re.compile(r"^--?driver-name(?:=(.+))?$")


def _workload(c: _Checker, data: dict, namespace: str, name: str, ref) -> PluginWorkload:
    meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    spec = c.typed(data, "spec", (), dict, "object") or {}
    template = c.typed(spec, "template", ("spec",), dict, "object") or {}
    pod = c.typed(template, "spec", ("spec", "template"), dict, "object") or {}
    path = ("spec", "template", "spec")
    sa = (c.typed(pod, "serviceAccountName", path, str, "string")
          or c.typed(pod, "serviceAccount", path, str, "string") or "default")
    for message in dns_subdomain_errors(sa):
        c.invalid(path + ("serviceAccountName",), sa, message)
    selector = c.typed(pod, "nodeSelector", path, dict, "object") or {}
    drivers: list[str] = []
    annotation = ((meta.get("annotations") or {}) if isinstance(meta.get("annotations"), dict) else {}).get(
        DRIVER_ANNOTATION)
    if isinstance(annotation, str) and annotation.strip():
        drivers = [d.strip() for d in annotation.split(",") if d.strip()]
    else:
        for container in pod.get("containers") if isinstance(pod.get("containers"), list) else []:
            if not isinstance(container, dict):
                continue
            for env in container.get("env") if isinstance(container.get("env"), list) else []:
                if isinstance(env, dict) and env.get("name") == "DRIVER_NAME" and isinstance(env.get("value"), str):
                    drivers.append(env["value"])
            args = [a for key in ("args", "command") if isinstance(container.get(key), list)
                    for a in container[key] if isinstance(a, str)]
            for i, arg in enumerate(args):
                m = _PLUGIN_ARG.match(arg)
                if m:
                    value = m.group(1) or (args[i + 1] if i + 1 < len(args) else "")
                    if value:
                        drivers.append(value)
    return PluginWorkload("DaemonSet", namespace, name, sa, {str(k): str(v) for k, v in selector.items()},
                          tuple(dict.fromkeys(drivers)), ref, data)


def read_object(data: dict, ref=None, *, bootstrap: bool = False):
    """(typed object, field errors) for one RBAC object, ServiceAccount or plugin DaemonSet."""
    c = _Checker()
    kind = data.get("kind")
    name_errors = dns_subdomain_errors if kind in ("ServiceAccount", "DaemonSet") else path_segment_errors
    namespace, name, labels = _metadata(c, data, kind, name_errors)
    obj = None
    if kind in ("ClusterRole", "Role"):
        rules = _rules(c, data, namespaced=kind == "Role")
        selectors = _selectors(c, data) if kind == "ClusterRole" else None
        obj = Role(kind, namespace, name, rules, labels, selectors, bootstrap, ref)
    elif kind in ("ClusterRoleBinding", "RoleBinding"):
        role_kind, role_name = _role_ref(c, data, ["ClusterRole"] if kind == "ClusterRoleBinding" else ["Role", "ClusterRole"])
        subjects = _subjects(c, data, namespaced=kind == "RoleBinding")
        obj = Binding(kind, namespace, name, role_kind, role_name, subjects, bootstrap, ref)
    elif kind == "ServiceAccount":
        obj = ServiceAccount(namespace, name, ref)
    elif kind == "DaemonSet":
        obj = _workload(c, data, namespace, name, ref)
    return obj, c.errors


BOOTSTRAP_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bootstrap.json")  # no pathlib at start-up


@lru_cache(maxsize=1)
def bootstrap_data() -> dict:
    """The 1.37.2 bootstrap policy, as `tests/kube/cmd/authz --bootstrap` prints it from upstream."""
    with open(BOOTSTRAP_FILE, encoding="utf-8") as handle:
        return json.load(handle)


@lru_cache(maxsize=1)
def bootstrap_objects() -> RBACObjects:
    objects = RBACObjects()
    data = bootstrap_data()
    for key, kind in (("clusterRoles", "ClusterRole"), ("roles", "Role"),
                      ("clusterRoleBindings", "ClusterRoleBinding"), ("roleBindings", "RoleBinding")):
        for item in data.get(key) or []:
            obj, errors = read_object({"kind": kind, **item}, bootstrap=True)
            if errors:  # the data file is generated; a problem here is a bug, not input
                raise ValueError(f"bootstrap {kind} {item.get('metadata', {}).get('name')}: {errors[0]}")
            objects.add(obj)
    return objects
