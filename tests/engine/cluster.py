"""Objects as a cluster prints them (`kubectl get ... -A -o yaml`): server fields included.

Every builder adds what the apiserver adds (uid, resourceVersion, creationTimestamp,
managedFields) so the tests read real-shaped dumps, not hand-trimmed manifests.
"""
from __future__ import annotations

import hashlib
import uuid

import yaml

DRIVER = "gpu.example.com"
STAMP = "2026-07-01T09:00:00Z"


def _uid(kind: str, name: str) -> str:
    return str(uuid.UUID(hashlib.md5(f"{kind}/{name}".encode()).hexdigest()))


def _meta(kind: str, name: str, namespace: str | None = None, manager: str = "kubectl-client-side-apply",
          **extra) -> dict:
    meta = {
        "creationTimestamp": STAMP,
        "managedFields": [{
            "apiVersion": "v1" if kind in ("Pod", "Node") else "resource.k8s.io/v1",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:metadata": {"f:labels": {}}, "f:spec": {}},
            "manager": manager,
            "operation": "Update",
            "time": STAMP,
        }],
        "name": name,
        "resourceVersion": str(1000 + len(name)),
        "uid": _uid(kind, f"{namespace}/{name}"),
    }
    if namespace is not None:
        meta["namespace"] = namespace
    meta.update(extra)
    return meta


def node(name: str, *, labels=None, taints=None, unschedulable=False, allocatable=None) -> dict:
    spec = {"podCIDR": "10.244.1.0/24", "providerID": f"kind://docker/dra/{name}"}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": _meta("Node", name, manager="kubelet",
                          labels={"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", **(labels or {})}),
        "spec": spec,
        "status": {
            "allocatable": allocatable if allocatable is not None else {"cpu": "16", "memory": "65843128Ki",
                                                                        "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                            "lastHeartbeatTime": STAMP, "lastTransitionTime": STAMP}],
            "nodeInfo": {"architecture": "amd64", "kubeletVersion": "v1.37.0", "operatingSystem": "linux"},
        },
    }


def device_class(name: str = DRIVER, expression: str | None = None) -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
        "metadata": _meta("DeviceClass", name, generation=1),
        "spec": {"selectors": [{"cel": {"expression": expression or f"device.driver == '{DRIVER}'"}}]},
    }


def gpu(name: str, index: int, **attributes) -> dict:
    attrs = {"index": {"int": index}, "model": {"string": "LATEST-GPU-MODEL"},
             "driverVersion": {"version": "1.0.0"}}
    attrs.update({k: {"string": v} for k, v in attributes.items()})
    return {"name": name, "attributes": attrs, "capacity": {"memory": {"value": "80Gi"}}}


def resource_slice(node_name: str, devices: list, *, api_version: str = "resource.k8s.io/v1",
                   suffix: str = "x7k2p", count: int = 1, counters=None) -> dict:
    spec = {"driver": DRIVER, "nodeName": node_name,
            "pool": {"name": node_name, "generation": 1, "resourceSliceCount": count}}
    if devices:
        spec["devices"] = devices
    if counters:
        spec["sharedCounters"] = counters
    name = f"{node_name}-{DRIVER}-{suffix}"
    owner = {"apiVersion": "v1", "controller": True, "kind": "Node", "name": node_name,
             "uid": _uid("Node", f"None/{node_name}")}
    return {
        "apiVersion": api_version, "kind": "ResourceSlice",
        "metadata": _meta("ResourceSlice", name, manager="gpu-kubeletplugin", generateName=f"{node_name}-{DRIVER}-",
                          generation=1, ownerReferences=[owner]),
        "spec": spec,
    }


def claim_spec(*requests: dict, constraints=None) -> dict:
    devices = {"requests": list(requests)}
    if constraints:
        devices["constraints"] = constraints
    return {"devices": devices}


def request(name: str = "gpu", device_class_name: str = DRIVER, count: int = 1, **fields) -> dict:
    exactly = {"allocationMode": "ExactCount", "count": count, "deviceClassName": device_class_name}
    exactly.update(fields)
    return {"name": name, "exactly": exactly}


def template(name: str, spec: dict, namespace: str = "default") -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": _meta("ResourceClaimTemplate", name, namespace),
        "spec": {"spec": spec},
    }


def claim(name: str, spec: dict, namespace: str = "default", *, allocation=None, reserved_for=None,
          owner_pod: str | None = None, pod_claim: str | None = None) -> dict:
    extra = {}
    if owner_pod:
        extra["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": owner_pod,
                                     "uid": pod_uid(owner_pod, namespace), "controller": True,
                                     "blockOwnerDeletion": True}]
        extra["annotations"] = {"resource.kubernetes.io/pod-claim-name": pod_claim or "gpu"}
    obj = {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": _meta("ResourceClaim", name, namespace, manager="kube-controller-manager", **extra),
        "spec": spec,
        "status": {},
    }
    if allocation is not None:
        obj["status"]["allocation"] = allocation
        obj["status"]["reservedFor"] = [
            {"resource": "pods", "name": p, "uid": pod_uid(p, namespace)} for p in reserved_for or ()]
    return obj


def allocation_on(node_name: str, *devices: tuple) -> dict:
    """status.allocation for (request, device) pairs on a node-local pool."""
    return {
        "allocationTimestamp": STAMP,
        "devices": {"results": [{"request": r, "driver": DRIVER, "pool": node_name, "device": d}
                                for r, d in devices]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]},
    }


def pod_uid(name: str, namespace: str = "default") -> str:
    return _uid("Pod", f"{namespace}/{name}")


def pod(name: str, *, namespace: str = "default", claims=(), templates=(), node_name=None, node_selector=None,
        affinity=None, tolerations=None, claim_statuses=None, requests=None, init=(), overhead=None,
        phase=None) -> dict:
    """A pod; `claims` are resourceClaimName entries and `templates` resourceClaimTemplateName
    entries, each as (pod claim name, object name). `requests` are the main container's
    resources.requests; `init` lists init containers as (requests, sidecar)."""
    resource_claims = [{"name": n, "resourceClaimName": c} for n, c in claims]
    resource_claims += [{"name": n, "resourceClaimTemplateName": t} for n, t in templates]
    spec = {
        "containers": [{"name": "main", "image": "registry.example.com/app:1.0",
                        "resources": {"claims": [{"name": rc["name"]} for rc in resource_claims]}}],
        "restartPolicy": "Never",
        "schedulerName": "default-scheduler",
        "tolerations": tolerations if tolerations is not None else [
            {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists",
             "tolerationSeconds": 300}],
    }
    if requests:
        spec["containers"][0]["resources"]["requests"] = dict(requests)
    if init:
        spec["initContainers"] = [
            {"name": f"init-{i}", "image": "registry.example.com/init:1.0", "resources": {"requests": dict(r)},
             **({"restartPolicy": "Always"} if sidecar else {})}
            for i, (r, sidecar) in enumerate(init)]
    if overhead:
        spec["overhead"] = dict(overhead)
    if resource_claims:
        spec["resourceClaims"] = resource_claims
    if node_name:
        spec["nodeName"] = node_name
    if node_selector:
        spec["nodeSelector"] = node_selector
    if affinity:
        spec["affinity"] = affinity
    status = {"phase": phase or ("Running" if node_name else "Pending"), "qosClass": "BestEffort"}
    if claim_statuses:
        status["resourceClaimStatuses"] = [{"name": n, "resourceClaimName": c} for n, c in claim_statuses]
    meta = _meta("Pod", name, namespace, labels={"app": name})
    meta["uid"] = pod_uid(name, namespace)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def dump(*items: dict) -> str:
    """A `kind: List` as kubectl prints it."""
    return yaml.safe_dump({"apiVersion": "v1", "items": list(items), "kind": "List",
                           "metadata": {"resourceVersion": ""}}, sort_keys=False)


def required_affinity(*terms: dict) -> dict:
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}
