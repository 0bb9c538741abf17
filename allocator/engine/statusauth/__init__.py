"""Granular status authorization: who may write an allocated claim's status, under which RBAC.

`rbac` reads and validates the RBAC objects (and the plugin workloads that run as service
accounts) and holds the RBAC authorizer; `whatif` judges every status write of every writer.
"""
from __future__ import annotations

from allocator.engine.problems import Problem
from allocator.engine.statusauth.rbac import RBACObjects, read_object, understood

__all__ = ["RBACObjects", "read_into", "understood"]


def read_into(objects: RBACObjects, data: dict, ref, memo: dict, *, kind: str, name: str) -> list[Problem]:
    """Validate one RBAC object, ServiceAccount or plugin DaemonSet and add it to `objects`;
    the problems found, located by the caller."""
    read = memo.get("statusauth")
    if read is None:
        read = memo["statusauth"] = read_object(data, ref)
    obj, errors = read
    problems = [Problem(e.message, kind=kind, name=name, path=e.path, severity=e.severity, ref=ref) for e in errors]
    if problems:
        return problems
    key = getattr(obj, "key", None) or f"{obj.namespace}/{obj.name}"
    existing = _existing(objects, obj)
    if existing:
        return [Problem(f"{kind} {key} appears more than once; a cluster holds one object per name",
                        kind=kind, name=name, path=("metadata", "name"), ref=ref)]
    objects.add(obj)
    return []


def _existing(objects: RBACObjects, obj) -> bool:
    from allocator.engine.statusauth.rbac import Binding, PluginWorkload, Role, ServiceAccount
    if isinstance(obj, Role):
        return (obj.name in objects.cluster_roles) if obj.kind == "ClusterRole" else (
            (obj.namespace, obj.name) in objects.roles)
    if isinstance(obj, Binding):
        return (obj.name in objects.cluster_role_bindings) if obj.kind == "ClusterRoleBinding" else (
            (obj.namespace, obj.name) in objects.role_bindings)
    if isinstance(obj, ServiceAccount):
        return (obj.namespace, obj.name) in objects.service_accounts
    if isinstance(obj, PluginWorkload):
        return any(w.key == obj.key for w in objects.workloads)
    return False
