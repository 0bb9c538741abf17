"""Hypothesis strategies for RBAC sets and claim status writes, to judge against the apiserver.

Everything drawn is valid RBAC (the apiserver would store it); rules use every matching form:
wildcards, exact and `*/subresource` resources, resourceNames (including `*` and the empty name,
neither of which is a wildcard), the node-aware verb prefixes; bindings name every subject kind,
roles that exist and roles that do not; ClusterRoles aggregate others by label. Callers are users
with groups and service accounts with no, one, two or a malformed node name in their token.
"""
from __future__ import annotations

from hypothesis import strategies as st

DRIVERS = ("gpu.example.com", "net.example.com")
NODES = ("node-a", "node-b")
NAMESPACES = ("default", "drv")
ROLE_NAMES = ("r0", "r1", "r2", "system:kube-scheduler")
VERBS = ("update", "patch", "*", "get", "associated-node:update", "associated-node:patch", "arbitrary-node:update",
         "arbitrary-node:patch", "associated-node:*", "arbitrary-node:*")
GROUPS = ("resource.k8s.io", "*", "", "apps")
RESOURCES = ("resourceclaims/status", "resourceclaims/binding", "resourceclaims/driver", "*/driver", "*/binding",
             "*/status", "*", "resourceclaims", "resourceclaims/*", "*/*", "*/drivers")
RESOURCE_NAMES = ("gpu.example.com", "net.example.com", "*", "", "c0")
USERS = ("alice", "system:kube-scheduler")
USER_GROUPS = ("devs", "system:authenticated", "system:serviceaccounts", "system:serviceaccounts:drv")
SERVICE_ACCOUNTS = (("drv", "plugin"), ("default", "plugin"), ("kube-system", "resource-claim-controller"))
LABELS = ({"agg": "dra"}, {"agg": "other"}, {}, {"agg": "dra", "tier": "node"})
RBAC = "rbac.authorization.k8s.io"


def rare(draw, n: int) -> bool:
    return draw(st.integers(0, n - 1)) == n - 1


def some(draw, items: tuple, min_size: int = 1, max_size: int = 3) -> list:
    """A few distinct items in one draw (a bit mask): cheaper than a list strategy, and it
    shrinks towards the first items."""
    mask = draw(st.integers(0, 2 ** len(items) - 1))
    chosen = [item for i, item in enumerate(items) if mask >> i & 1][:max_size]
    return chosen if len(chosen) >= min_size else list(items[:min_size])


@st.composite
def rules(draw) -> list:
    out = []
    for _ in range(draw(st.integers(1, 3))):
        rule = {
            "verbs": some(draw, VERBS),
            "apiGroups": some(draw, GROUPS, max_size=2),
            "resources": some(draw, RESOURCES),
        }
        if draw(st.booleans()):
            rule["resourceNames"] = some(draw, RESOURCE_NAMES, max_size=2)
        out.append(rule)
    return out


@st.composite
def selector(draw) -> dict:
    form = draw(st.sampled_from(("labels", "in", "notin", "exists", "doesnotexist", "empty")))
    if form == "labels":
        return {"matchLabels": {"agg": draw(st.sampled_from(("dra", "other")))}}
    if form == "empty":
        return {}
    op = {"in": "In", "notin": "NotIn", "exists": "Exists", "doesnotexist": "DoesNotExist"}[form]
    expr = {"key": draw(st.sampled_from(("agg", "tier"))), "operator": op}
    if op in ("In", "NotIn"):
        expr["values"] = some(draw, ("dra", "node", "other"), max_size=2)
    return {"matchExpressions": [expr]}


@st.composite
def cluster_role(draw, name: str) -> dict:
    role = {"metadata": {"name": name}}
    labels = draw(st.sampled_from(LABELS))
    if labels:
        role["metadata"]["labels"] = dict(labels)
    if rare(draw, 4):
        role["aggregationRule"] = {"clusterRoleSelectors": draw(st.lists(selector(), min_size=1, max_size=2))}
        if draw(st.booleans()):
            role["rules"] = draw(rules())  # stale rules the controller replaces
    else:
        role["rules"] = draw(rules())
    return role


@st.composite
def subject(draw, namespaced: bool) -> dict:
    kind = draw(st.sampled_from(("User", "Group", "ServiceAccount")))
    if kind == "User":
        return {"kind": "User", "apiGroup": RBAC, "name": draw(st.sampled_from(USERS))}
    if kind == "Group":
        return {"kind": "Group", "apiGroup": RBAC, "name": draw(st.sampled_from(USER_GROUPS))}
    namespace, name = draw(st.sampled_from(SERVICE_ACCOUNTS))
    out = {"kind": "ServiceAccount", "name": name}
    if not namespaced or draw(st.booleans()):
        out["namespace"] = namespace
    return out


@st.composite
def rbac_set(draw) -> dict:
    names = some(draw, ROLE_NAMES, max_size=4)
    cluster_roles = [draw(cluster_role(name)) for name in names]
    roles = []
    for _ in range(draw(st.integers(0, 2))):
        roles.append({"metadata": {"name": draw(st.sampled_from(ROLE_NAMES[:3])),
                                   "namespace": draw(st.sampled_from(NAMESPACES))}, "rules": draw(rules())})
    roles = list({(r["metadata"]["namespace"], r["metadata"]["name"]): r for r in roles}.values())
    crbs = []
    for i in range(draw(st.integers(0, 3))):
        crbs.append({"metadata": {"name": f"crb{i}"},
                     "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": draw(st.sampled_from(ROLE_NAMES))},
                     "subjects": draw(st.lists(subject(False), min_size=0, max_size=2))})
    rbs = []
    for i in range(draw(st.integers(0, 3))):
        rbs.append({"metadata": {"name": f"rb{i}", "namespace": draw(st.sampled_from(NAMESPACES))},
                    "roleRef": {"apiGroup": RBAC, "kind": draw(st.sampled_from(("Role", "ClusterRole"))),
                                "name": draw(st.sampled_from(ROLE_NAMES[:3]))},
                    "subjects": draw(st.lists(subject(True), min_size=0, max_size=2))})
    return {"clusterRoles": cluster_roles, "roles": roles, "clusterRoleBindings": crbs, "roleBindings": rbs}


@st.composite
def allocation(draw) -> dict:
    drivers = some(draw, DRIVERS, max_size=2)
    results = [{"request": f"req-{i}", "driver": d, "pool": "pool", "device": f"dev-{i}"} for i, d in enumerate(drivers)]
    out = {"devices": {"results": results}}
    form = draw(st.sampled_from(("node", "node", "labels", "two-nodes", "none", "two-terms")))
    node = draw(st.sampled_from(NODES))
    field = {"key": "metadata.name", "operator": "In", "values": [node]}
    if form == "node":
        out["nodeSelector"] = {"nodeSelectorTerms": [{"matchFields": [field]}]}
    elif form == "labels":
        out["nodeSelector"] = {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "rack", "operator": "In", "values": ["r1"]}]}]}
    elif form == "two-nodes":
        out["nodeSelector"] = {"nodeSelectorTerms": [{"matchFields": [dict(field, values=list(NODES))]}]}
    elif form == "two-terms":
        out["nodeSelector"] = {"nodeSelectorTerms": [{"matchFields": [field]}, {"matchFields": [field]}]}
    return out


def _entries(alloc: dict, drivers) -> list:
    return [{"driver": r["driver"], "pool": r["pool"], "device": r["device"]}
            for r in alloc["devices"]["results"] if r["driver"] in drivers]


@st.composite
def write(draw, alloc: dict) -> tuple:
    kind = draw(st.sampled_from(("allocate", "reserve", "devices", "devices-change", "devices-remove",
                                 "deallocate", "move", "nothing")))
    drivers = sorted({r["driver"] for r in alloc["devices"]["results"]})
    picked = some(draw, tuple(drivers), max_size=len(drivers))
    base = {"allocation": alloc}
    if kind == "allocate":
        return {}, base
    if kind == "reserve":
        return base, dict(base, reservedFor=[{"resource": "pods", "name": "p", "uid": "u1"}])
    if kind == "devices":
        return base, dict(base, devices=_entries(alloc, picked))
    if kind == "devices-change":
        old = dict(base, devices=_entries(alloc, drivers))
        changed = [dict(e, networkData={"interfaceName": "eth1"}) if e["driver"] in picked else e
                   for e in _entries(alloc, drivers)]
        return old, dict(base, devices=changed)
    if kind == "devices-remove":
        return dict(base, devices=_entries(alloc, drivers)), dict(base, devices=_entries(alloc, set(drivers) - set(picked)))
    if kind == "deallocate":
        return base, {}
    if kind == "move":
        other = draw(allocation())
        return dict(base, devices=_entries(alloc, drivers)), {"allocation": other, "devices": _entries(other, picked)}
    return base, base


@st.composite
def caller(draw) -> dict:
    if draw(st.booleans()):
        namespace, name = draw(st.sampled_from(SERVICE_ACCOUNTS))
        user = {"name": f"system:serviceaccount:{namespace}:{name}",
                "groups": ["system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"]}
    else:
        user = {"name": draw(st.sampled_from(USERS)),
                "groups": some(draw, USER_GROUPS, min_size=0, max_size=2)}
    nodes = draw(st.sampled_from(((), (), ("node-a",), ("node-b",), ("node-a", "node-b"), ("Node_A",))))
    if nodes:
        user["extra"] = {"authentication.kubernetes.io/node-name": list(nodes)}
    return user


@st.composite
def case(draw) -> dict:
    out = draw(rbac_set())
    out["bootstrap"] = rare(draw, 8)
    out["granular"] = not rare(draw, 8)
    out["deviceStatus"] = not rare(draw, 8)
    checks = []
    for _ in range(draw(st.integers(1, 4))):
        alloc = draw(allocation())
        old, new = draw(write(alloc))
        checks.append({"user": draw(caller()), "verb": draw(st.sampled_from(("update", "patch"))),
                       "namespace": draw(st.sampled_from(NAMESPACES)), "name": "c0", "old": old, "new": new})
    out["checks"] = checks
    return out
