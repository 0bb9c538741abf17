"""Small builders for scenario YAML used across engine tests."""
from __future__ import annotations

import textwrap

import yaml

from allocator.engine.gates import ComponentGates, gates_from_dict
from allocator.engine.run import allocate_text


def gpu_class(name="gpu", driver="gpu.example.com") -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]},
    }


def node(name="worker-1", labels=None, declared=None) -> dict:
    obj = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels or {}}}
    if declared:
        obj["status"] = {"declaredFeatures": declared}
    return obj


def slice_(name, devices=None, *, driver="gpu.example.com", pool="pool", node_name="worker-1",
           count=1, generation=1, counters=None, **spec) -> dict:
    body = {"driver": driver, "pool": {"name": pool, "generation": generation, "resourceSliceCount": count}}
    if node_name is not None:
        body["nodeName"] = node_name
    if devices is not None:
        body["devices"] = devices
    if counters is not None:
        body["sharedCounters"] = counters
    body.update(spec)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name}, "spec": body}


def claim(name, requests, *, constraints=None, config=None, allocation=None, namespace="default") -> dict:
    devices = {"requests": requests}
    if constraints:
        devices["constraints"] = constraints
    if config:
        devices["config"] = config
    obj = {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": namespace}, "spec": {"devices": devices},
    }
    if allocation is not None:
        obj["status"] = {"allocation": allocation}
    return obj


def request(name="gpu", device_class="gpu", count=None, **fields) -> dict:
    exactly = {"deviceClassName": device_class}
    if count is not None:
        exactly["count"] = count
    exactly.update(fields)
    return {"name": name, "exactly": exactly}


def allocated(results, node_name="worker-1") -> dict:
    return {
        "devices": {"results": results},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]},
    }


def dump(*objects) -> str:
    return yaml.safe_dump_all(list(objects), sort_keys=False)


def run(objects_or_text, *, node="worker-1", gates=None, emulated="", **options):
    text = objects_or_text if isinstance(objects_or_text, str) else dump(*objects_or_text)
    component_gates = ComponentGates.uniform(gates_from_dict(gates or {}, emulated=emulated))
    _, outcome = allocate_text(textwrap.dedent(text), node_name=node, gates=component_gates, **options)
    return outcome


def devices_of(outcome, claim_name) -> list[str]:
    for c in outcome.claims:
        if c["metadata"]["name"] == claim_name:
            results = c.get("status", {}).get("allocation", {}).get("devices", {}).get("results", [])
            return [f"{r['request']}:{r['device']}" for r in results]
    raise KeyError(claim_name)


def results_of(outcome, claim_name) -> list[dict]:
    for c in outcome.claims:
        if c["metadata"]["name"] == claim_name:
            return c["status"]["allocation"]["devices"]["results"]
    raise KeyError(claim_name)


def reasons(outcome, claim_key, request_name) -> dict:
    """{device: reason} from the explanation for one request."""
    for c in outcome.explanation.as_dict()["claims"]:
        if c["claim"] == claim_key:
            for r in c["requests"]:
                if r["request"] == request_name:
                    return {cand["device"]: cand["reason"] for cand in r["candidates"]}
    raise KeyError((claim_key, request_name))
