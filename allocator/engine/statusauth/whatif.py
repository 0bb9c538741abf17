"""Who may write an allocated claim's status: every writer the scenario implies, every write.

A status write passes, in order, the front door (the request's own verb on
`resourceclaims/status`, 403 Forbidden when RBAC does not allow it) and then, with
DRAResourceClaimGranularStatusAuthorization on in the kube-apiserver, the status strategy's
checks (422 Invalid with one field error per failed check):

- binding: a change of `status.allocation` or `status.reservedFor` needs the verb on
  `resourceclaims/binding` at cluster scope with no name, which only a ClusterRoleBinding grants;
- driver: with DRAResourceClaimDeviceStatus on and the claim still allocated, each driver whose
  `status.devices` entries change needs `associated-node:<verb>` (tried first, and only for a
  service account whose token names exactly the one node the allocation is pinned to) or
  `arbitrary-node:<verb>` on `resourceclaims/driver` named after the driver in the claim's
  namespace.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from allocator.engine.statusauth.rbac import (
    NODE_NAME_KEY,
    SA_PREFIX,
    Attributes,
    Authorizer,
    Binding,
    Decision,
    PolicyRule,
    RBACObjects,
    Role,
    Subject,
    UserInfo,
    aggregate_errors,
    go_quote,
)
from allocator.engine.validation import dns_label_errors, dns_subdomain_errors
from allocator.engine.workloads import daemon_nodes

GRANULAR_GATE = "DRAResourceClaimGranularStatusAuthorization"
DEVICE_STATUS_GATE = "DRAResourceClaimDeviceStatus"
AUTHENTICATED = "system:authenticated"
FRONT_DOOR, BINDING, ASSOCIATED, ARBITRARY = "front door", "binding", "associated node", "arbitrary node"
VERBS = {"PUT": "update", "PATCH": "patch", "APPLY": "patch", "update": "update", "patch": "patch"}


# --- who writes ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Writer:
    key: str  # stable id: "kube-scheduler", "plugin:ns/ds@node", "identity"
    label: str
    role: str  # scheduler, controller, plugin, identity
    user: UserInfo
    verb: str  # update (PUT) or patch (PATCH, server-side apply)
    node: str | None = None  # the node its token names
    drivers: tuple | None = None  # a plugin's drivers; None: it may try any write


def service_account_user(namespace: str, name: str, node: str | None = None) -> UserInfo:
    """A service account's pod-bound token: its groups, and the node of the pod it is bound to."""
    groups = ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", AUTHENTICATED)
    extra = ((NODE_NAME_KEY, (node,)),) if node else ()
    return UserInfo(f"{SA_PREFIX}{namespace}:{name}", groups, extra)


def scheduler_writer() -> Writer:
    return Writer("kube-scheduler", "kube-scheduler", "scheduler",
                  UserInfo("system:kube-scheduler", (AUTHENTICATED,)), "update")


def controller_writer() -> Writer:
    # kube-controller-manager runs each controller as its own service account
    return Writer("resource-claim-controller", "resource-claim controller", "controller",
                  service_account_user("kube-system", "resource-claim-controller"), "update")


def identity_writer(*, user: str = "", groups=(), service_account: str = "", node: str | None = None,
                    verb: str = "PUT") -> Writer:
    """An identity the user names: a service account `ns/name` (its token's groups, and the node
    name a pod-bound token carries), or a user with groups (every authenticated user is also in
    system:authenticated); PUT is `update`, PATCH and apply are `patch`."""
    method = VERBS.get(verb) or VERBS.get(str(verb).upper())
    if method is None:
        raise ValueError(f"verb {verb!r}: expected PUT, PATCH or APPLY")
    if service_account:
        namespace, _, name = service_account.partition("/")
        if not namespace or not name:
            raise ValueError(f"service account {service_account!r}: expected namespace/name")
        u = service_account_user(namespace, name, node)
        label = f"service account {namespace}/{name}" + (f" on {node}" if node else "")
    else:
        if not user:
            raise ValueError("an identity needs a user name or a service account")
        extra = ((NODE_NAME_KEY, (node,)),) if node else ()
        u = UserInfo(user, tuple(dict.fromkeys(tuple(groups) + (AUTHENTICATED,))), extra)
        label = f"user {user}" + (f" on {node}" if node else "")
    return Writer("identity", f"{label} ({'PUT' if method == 'update' else 'PATCH'})", "identity", u, method, node)


def plugin_writers(objects: RBACObjects, nodes: dict) -> list[Writer]:
    """One writer per plugin pod: the DaemonSet controller runs one on every node the template's
    node name, node selector and required node affinity match and whose taints its pods tolerate."""
    writers = []
    for workload in objects.workloads:
        if workload.raw is not None:
            on, _ = daemon_nodes(workload.raw, nodes)
        else:
            on = [n for n in sorted(nodes) if all(
                (getattr(nodes[n], "labels", {}) or {}).get(k) == v for k, v in workload.node_selector.items())]
        for node_name in on:
            writers.append(Writer(
                f"plugin:{workload.key}@{node_name}", f"{workload.name} on {node_name}", "plugin",
                service_account_user(workload.namespace, workload.service_account, node_name), "update",
                node_name, workload.drivers,
            ))
    return writers


# --- what is written ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ClaimState:
    namespace: str
    name: str
    allocation: dict  # status.allocation as the API holds it
    reserved_for: tuple = ()

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def drivers(self) -> list:
        results = ((self.allocation.get("devices") or {}).get("results") or [])
        return sorted({r.get("driver") for r in results if isinstance(r, dict) and r.get("driver")})

    def device_entries(self, driver: str) -> list:
        results = ((self.allocation.get("devices") or {}).get("results") or [])
        out = []
        for r in results:
            if isinstance(r, dict) and r.get("driver") == driver:
                entry = {"driver": driver, "pool": r.get("pool", ""), "device": r.get("device", "")}
                if r.get("shareID"):
                    entry["shareID"] = r["shareID"]
                if entry not in out:
                    out.append(entry)
        return out


@dataclass(frozen=True)
class Write:
    key: str  # allocate, reserve, deallocate, devices:<driver>
    label: str
    old: dict  # status before
    new: dict  # status after
    driver: str | None = None


def writes_for(claim: ClaimState) -> list[Write]:
    allocated = {"allocation": claim.allocation}
    reserved = dict(allocated, reservedFor=[{"resource": "pods", "name": "pod-0", "uid": "pod-0-uid"}])
    writes = [
        Write("allocate", "set status.allocation", {}, allocated),
        Write("reserve", "add to status.reservedFor", allocated, reserved),
    ]
    for driver in claim.drivers:
        writes.append(Write(f"devices:{driver}", f"write {driver}'s status.devices", allocated,
                            dict(allocated, devices=claim.device_entries(driver)), driver))
    writes.append(Write("deallocate", "deallocate (clear status.allocation)", allocated, {}))
    return writes


# --- the checks ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Check:
    name: str  # front door, binding, associated node, arbitrary node
    allowed: bool
    reason: str
    attributes: str  # what was asked of RBAC, e.g. `update resourceclaims/binding (cluster scope)`
    decision: Decision | None = None

    def as_dict(self) -> dict:
        d = self.decision
        out = {"check": self.name, "allowed": self.allowed, "reason": self.reason, "asked": self.attributes}
        if d is not None and d.allowed:
            out["binding"] = f"{d.binding.kind} {d.binding.key}" + (" (bootstrap)" if d.binding.bootstrap else "")
            out["role"] = f"{d.role.kind} {d.role.key}" + (" (bootstrap)" if d.role.bootstrap else "")
            out["rule"] = f"rules[{d.rule_index}]: {d.rule.describe()}"
        return out


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    status: int  # 200, 403 (front door) or 422 (a status check)
    failed: tuple  # names of the checks that failed
    message: str  # what the client would read; "" when allowed
    checks: tuple  # of Check, in the order the apiserver makes them

    def as_dict(self) -> dict:
        return {"allowed": self.allowed, "status": self.status, "failed": list(self.failed),
                "message": self.message, "checks": [c.as_dict() for c in self.checks]}


def _sanitize(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def forbidden(user: UserInfo, attrs: Attributes, reason: str) -> str:
    """The apiserver's Forbidden message for a request RBAC did not allow."""
    resource = attrs.resource + ("/" + attrs.subresource if attrs.subresource else "")
    scope = (f"in the namespace {go_quote(attrs.namespace)}" if attrs.namespace else "at the cluster scope")
    msg = _sanitize(f"User {go_quote(user.name)} cannot {attrs.verb} resource {go_quote(resource)} "
                    f"in API group {go_quote(attrs.api_group)} {scope}")
    text = f"{msg}: {reason}" if reason else msg
    what = f"{attrs.resource}.{attrs.api_group}"
    return f"{what} {go_quote(attrs.name)} is forbidden: {text}" if attrs.name else f"{what} is forbidden: {text}"


def _asked(attrs: Attributes) -> str:
    where = f"in {attrs.namespace}" if attrs.namespace else "at cluster scope"
    named = f" named {attrs.name}" if attrs.name else ""
    return f"{attrs.verb} {attrs.resource}/{attrs.subresource}{named} {where}"


def _node_from_allocation(allocation: dict | None) -> str:
    selector = (allocation or {}).get("nodeSelector")
    if not isinstance(selector, dict):
        return ""
    terms = selector.get("nodeSelectorTerms") or []
    if len(terms) != 1 or not isinstance(terms[0], dict):
        return ""
    term = terms[0]
    fields = term.get("matchFields") or []
    if term.get("matchExpressions") or len(fields) != 1:
        return ""
    f = fields[0]
    values = f.get("values") or []
    if f.get("key") != "metadata.name" or f.get("operator") != "In" or len(values) != 1:
        return ""
    return values[0]


def _associated(user: UserInfo, node: str) -> bool:
    """A service account whose token names exactly one, well-formed node: the allocation's."""
    if not node or not user.name.startswith(SA_PREFIX):
        return False
    parts = user.name[len(SA_PREFIX):].split(":")
    if len(parts) != 2 or dns_label_errors(parts[0]) or dns_subdomain_errors(parts[1]):
        return False
    names = user.extra_values(NODE_NAME_KEY)
    return len(names) == 1 and not dns_subdomain_errors(names[0]) and names[0] == node


def _modified_drivers(old: dict, new: dict) -> list:
    def key(d):
        return (d.get("driver", ""), d.get("pool", ""), d.get("device", ""), d.get("shareID") or "")

    before = {key(d): d for d in old.get("devices") or []}
    drivers = set()
    for d in new.get("devices") or []:
        k = key(d)
        prior = before.pop(k, None)
        if prior is None or prior != d:
            drivers.add(d.get("driver", ""))
    drivers.update(d.get("driver", "") for d in before.values())
    return sorted(drivers)


def judge(authorizer: Authorizer, user: UserInfo, verb: str, namespace: str, name: str, old: dict, new: dict,
          *, granular: bool = True, device_status: bool = True) -> Verdict:
    """One status write by one caller, as the kube-apiserver decides it."""
    attrs = Attributes(verb, namespace, name, subresource="status")
    decision = authorizer.authorize(user, attrs)
    front = Check(FRONT_DOOR, decision.allowed, decision.reason, _asked(attrs), decision)
    if not decision.allowed:
        return Verdict(False, 403, (FRONT_DOOR,), forbidden(user, attrs, decision.reason), (front,))
    checks = [front]
    errors: list[str] = []
    failed: list[str] = []
    if not granular:
        return Verdict(True, 200, (), "", tuple(checks))
    if old.get("allocation") != new.get("allocation") or (old.get("reservedFor") or []) != (new.get("reservedFor") or []):
        battrs = Attributes(verb, "", "", subresource="binding")
        d = authorizer.authorize(user, battrs)
        checks.append(Check(BINDING, d.allowed, d.reason, _asked(battrs), d))
        if not d.allowed:
            failed.append(BINDING)
            errors.append(
                "status.allocation: Forbidden: changing status.allocation or status.reservedFor requires "
                f'resource="resourceclaims/binding", verb="{verb}" permission: {forbidden(user, battrs, d.reason)}')
    if device_status and new.get("allocation") is not None:
        drivers = _modified_drivers(old, new)
        if drivers:
            associated = _associated(user, _node_from_allocation(new.get("allocation")))
            verbs = ([f"associated-node:{verb}"] if associated else []) + [f"arbitrary-node:{verb}"]
            for driver in drivers:
                first = None
                for v in verbs:
                    dattrs = Attributes(v, namespace, driver, subresource="driver")
                    d = authorizer.authorize(user, dattrs)
                    check_name = ASSOCIATED if v.startswith("associated-node:") else ARBITRARY
                    checks.append(Check(check_name, d.allowed, d.reason, _asked(dattrs), d))
                    if d.allowed:
                        first = None
                        break
                    if first is None:
                        first = (check_name, forbidden(user, dattrs, d.reason))
                if first is not None:
                    failed.extend(c.name for c in checks[-len(verbs):] if not c.allowed)
                    errors.append(
                        "status.devices: Forbidden: changing status.devices requires "
                        f'resource="resourceclaims/driver", verb="[{" ".join(verbs)}]" permission: {first[1]}')
    if errors:
        message = f"ResourceClaim.resource.k8s.io {go_quote(name)} is invalid: {aggregate_errors(errors)}"
        return Verdict(False, 422, tuple(dict.fromkeys(failed)), message, tuple(checks))
    return Verdict(True, 200, (), "", tuple(checks))


# --- what would fix a refusal ---------------------------------------------------------------------

SUGGESTED = "playground:suggested"


def _missing_rule(verdict: Verdict, verb: str, driver: str | None) -> PolicyRule:
    failed = verdict.failed[0]
    if failed == FRONT_DOOR:
        return PolicyRule((verb,), ("resource.k8s.io",), ("resourceclaims/status",))
    if failed == BINDING:
        return PolicyRule((verb,), ("resource.k8s.io",), ("resourceclaims/binding",))
    prefix = "associated-node" if failed == ASSOCIATED or ASSOCIATED in verdict.failed else "arbitrary-node"
    return PolicyRule((f"{prefix}:{verb}",), ("resource.k8s.io",), ("resourceclaims/driver",),
                      (driver,) if driver else ())


def _subject_for(user: UserInfo) -> Subject:
    if user.name.startswith(SA_PREFIX) and user.name.count(":") == 3:
        namespace, name = user.name[len(SA_PREFIX):].split(":")
        return Subject("ServiceAccount", name, namespace)
    return Subject("User", user.name, "", "rbac.authorization.k8s.io")


def fixes(objects: RBACObjects, writer: "Writer", claim: "ClaimState", write: "Write", *, granular: bool,
          device_status: bool) -> list:
    """The rules a ClusterRole bound to this writer (by a ClusterRoleBinding) would need for the
    write to pass, found by adding them one refusal at a time; `objects` already aggregated."""
    added: list = []
    for _ in range(4):
        trial = RBACObjects(dict(objects.cluster_roles), dict(objects.roles), dict(objects.cluster_role_bindings),
                            dict(objects.role_bindings))
        if added:
            trial.cluster_roles[SUGGESTED] = Role("ClusterRole", "", SUGGESTED, tuple(added))
            trial.cluster_role_bindings[SUGGESTED] = Binding(
                "ClusterRoleBinding", "", SUGGESTED, "ClusterRole", SUGGESTED, (_subject_for(writer.user),))
        verdict = judge(Authorizer(trial), writer.user, writer.verb, claim.namespace, claim.name, write.old,
                        write.new, granular=granular, device_status=device_status)
        if verdict.allowed:
            return added
        added.append(_missing_rule(verdict, writer.verb, write.driver))
    return added


# --- the grid -----------------------------------------------------------------------------------


@dataclass
class ClaimGrid:
    claim: ClaimState
    pinned_node: str
    writes: list  # of Write
    cells: dict = field(default_factory=dict)  # (writer key, write key) -> Verdict
    fixes: dict = field(default_factory=dict)  # (writer key, write key) -> [PolicyRule] for a refusal


@dataclass
class StatusWriters:
    granular: bool
    device_status: bool
    bootstrap: bool
    writers: list  # of Writer
    claims: list  # of ClaimGrid
    omitted: int = 0  # allocated claims left out past MAX_CLAIMS

    def as_dict(self) -> dict:
        return {
            "omittedClaims": self.omitted,
            "gates": {GRANULAR_GATE: self.granular, DEVICE_STATUS_GATE: self.device_status},
            "bootstrapPolicy": self.bootstrap,
            "writers": [{"key": w.key, "label": w.label, "user": w.user.as_dict(), "verb": w.verb,
                         "node": w.node, "drivers": list(w.drivers) if w.drivers is not None else None}
                        for w in self.writers],
            "claims": [
                {
                    "claim": g.claim.key,
                    "pinnedToNode": g.pinned_node or None,
                    "cells": [
                        {"writer": wk, "write": key, **verdict.as_dict(),
                         **({"fix": [r.as_dict() for r in g.fixes[(wk, key)]]} if (wk, key) in g.fixes else {})}
                        for (wk, key), verdict in g.cells.items()
                    ],
                }
                for g in self.claims
            ],
        }


def applies(writer: Writer, write: Write) -> bool:
    """A plugin writes device entries of the drivers it serves, and nothing else."""
    if writer.role != "plugin":
        return True
    if write.driver is None:
        return False
    return writer.drivers is None or not writer.drivers or write.driver in writer.drivers


MAX_CLAIMS = 50  # a cluster dump may hold thousands of allocated claims; the grid shows the first


def status_writers(*, objects: RBACObjects, claims: list, nodes: dict, granular: bool, device_status: bool,
                   bootstrap: bool = True, identities: tuple = ()) -> StatusWriters:
    """The grid for every claim (the first MAX_CLAIMS): scheduler, controller, each plugin pod,
    and the named identities."""
    omitted = max(0, len(claims) - MAX_CLAIMS)
    claims = claims[:MAX_CLAIMS]
    objects = (objects.with_bootstrap() if bootstrap else objects).aggregated()
    authorizer = Authorizer(objects)
    writers = [scheduler_writer(), controller_writer(), *plugin_writers(objects, nodes), *identities]
    grids = []
    for claim in claims:
        grid = ClaimGrid(claim, _node_from_allocation(claim.allocation), writes_for(claim))
        for writer in writers:
            for write in grid.writes:
                if not applies(writer, write):
                    continue
                verdict = grid.cells[(writer.key, write.key)] = judge(
                    authorizer, writer.user, writer.verb, claim.namespace, claim.name, write.old, write.new,
                    granular=granular, device_status=device_status)
                if not verdict.allowed:
                    grid.fixes[(writer.key, write.key)] = fixes(objects, writer, claim, write, granular=granular,
                                                                device_status=device_status)
        grids.append(grid)
    return StatusWriters(granular, device_status, bootstrap, writers, grids, omitted)


# --- one driver's plugin, one node-local claim ----------------------------------------------------


@dataclass(frozen=True)
class PluginAnswer:
    driver: str
    writer: Writer
    verdicts: dict  # verb (update, patch) -> Verdict
    fixes: dict  # verb -> [PolicyRule] for a refusal

    def as_dict(self) -> dict:
        return {
            "driver": self.driver, "writer": self.writer.label,
            "verbs": {verb: {**v.as_dict(), "fix": [r.as_dict() for r in self.fixes.get(verb, [])]}
                      for verb, v in self.verdicts.items()},
        }


def plugin_device_status(objects: RBACObjects, *, driver: str, service_account: str, node: str = "node-1",
                         namespace: str = "default", bootstrap: bool = True, granular: bool = True,
                         device_status: bool = True, pinned: bool = True) -> PluginAnswer:
    """May the plugin pod of `driver` on `node` (running as `service_account`, ns/name) write its
    status.devices entries of a claim allocated there (pinned to the node, or not), by PUT and
    by PATCH; and what rules a refusal is missing."""
    objects = (objects.with_bootstrap() if bootstrap else objects).aggregated()
    authorizer = Authorizer(objects)
    allocation = {"devices": {"results": [{"request": "req", "driver": driver, "pool": node, "device": "dev-0"}]}}
    if pinned:
        allocation["nodeSelector"] = {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [node]}]}]}
    claim = ClaimState(namespace, "claim", allocation)
    write = next(w for w in writes_for(claim) if w.driver == driver)
    sa_namespace, _, sa_name = service_account.partition("/")
    verdicts, fixed = {}, {}
    writer = None
    for verb in ("update", "patch"):
        writer = Writer(f"plugin:{service_account}@{node}", f"{driver} plugin ({service_account}) on {node}",
                        "plugin", service_account_user(sa_namespace, sa_name, node), verb, node, (driver,))
        verdicts[verb] = judge(authorizer, writer.user, verb, namespace, claim.name, write.old, write.new,
                               granular=granular, device_status=device_status)
        if not verdicts[verb].allowed:
            fixed[verb] = fixes(objects, writer, claim, write, granular=granular, device_status=device_status)
    return PluginAnswer(driver, writer, verdicts, fixed)
