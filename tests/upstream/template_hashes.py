"""pod-template-hash and controller-revision-hash: the engine's (allocator/engine/templatehash.py)
against kube-controller-manager's.

The podhash oracle (tests/kube/cmd/podhash) creates a Deployment, DaemonSet or StatefulSet as the
apiserver does and hashes its template as that controller does (ComputeHash, or the StatefulSet's
ControllerRevision). Compared: the pods' label value, and (to name the first difference) what was
hashed: go-spew's dump, or the StatefulSet's JSON patch. Templates come from two places: generated ones (plain
`random`, a seed per case, drawing the fields the workload generator and the real manifests use
and the ones the apiserver defaults) and every workload's template in ../shared/realworld.
"""
from __future__ import annotations

import json
import os
import random
from pathlib import Path

import yaml

from tests.upstream import kube_build
from tests.upstream.batch import BatchProcess

REALWORLD = Path(os.environ.get("DRA_REALWORLD", "/work/shared/realworld"))
WORKLOAD_KINDS = {"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob"}


class HashOracle(BatchProcess):
    name = "the podhash oracle"

    def __init__(self):
        super().__init__(kube_build.build("podhash"))

    def ask(self, template: dict, *, gates: dict | None = None, collision_count: int | None = None,
            kind: str = "Deployment", name: str = "d") -> dict:
        """The oracle's answer for a workload of `kind` with this template: `hash`, and `label`, the
        value the controller puts in its pods' pod-template-hash or controller-revision-hash."""
        spec = {"selector": {"matchLabels": {"x": "y"}}, "template": template}
        if kind == "StatefulSet":
            spec["serviceName"] = "svc"
        workload = {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name, "namespace": "default"},
                    "spec": spec}
        if collision_count is not None:
            workload["status"] = {"collisionCount": collision_count}
        return self.request({"object": json.dumps(workload), "gates": gates or {}})


def _pick(rng: random.Random, chance: float) -> bool:
    return rng.random() < chance


def _container(rng: random.Random, name: str) -> dict:
    c = {"name": name, "image": rng.choice(["nginx", "nginx:1.27", "nginx:latest", "registry.example.com:5000/app",
                                             "registry.example.com:5000/app:2.1", "busybox@sha256:" + "a" * 64,
                                             "ghcr.io/org/img:v1@sha256:" + "b" * 64])}
    if _pick(rng, 0.5):
        c["command"] = rng.choice([["sh", "-c", "sleep 9999"], ["/bin/app"], []])
    if _pick(rng, 0.3):
        c["args"] = ["--v=4"]
    if _pick(rng, 0.7):
        resources = {}
        if _pick(rng, 0.8):
            resources["requests"] = {"cpu": rng.choice(["100m", "1", "0.5", "1500m", 2, "250m"]),
                                     **({"memory": rng.choice(["64Mi", "1Gi", "512M", "1e3", "1.5Gi"])} if _pick(rng, 0.6) else {})}
        if _pick(rng, 0.4):
            resources["limits"] = {"cpu": rng.choice(["2", "0.0005", "1m", "0.0001", "1000m", "0.1", "2e3", "1k"]),
                                   "nvidia.com/gpu": 1,
                                   **({"memory": rng.choice(["100Mi", "2e6", "12345678901", "1.25Ki", "0"])}
                                      if _pick(rng, 0.5) else {})}
        if _pick(rng, 0.5):
            resources["claims"] = [{"name": "gpu"}] + ([{"name": "other", "request": "r"}] if _pick(rng, 0.3) else [])
        c["resources"] = resources
    if _pick(rng, 0.4):
        c["ports"] = [{"containerPort": 8080, **({"name": "http"} if _pick(rng, 0.5) else {}),
                       **({"protocol": "UDP"} if _pick(rng, 0.3) else {})}]
    if _pick(rng, 0.4):
        c["env"] = [{"name": "A", "value": "1"},
                    {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]
        if _pick(rng, 0.3):
            c["env"].append({"name": "C", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k", "optional": True}}})
    if _pick(rng, 0.3):
        probe = rng.choice([{"httpGet": {"port": rng.choice([8080, "http"])}}, {"exec": {"command": ["true"]}},
                            {"tcpSocket": {"port": 80}}, {"grpc": {"port": 9000}}])
        if _pick(rng, 0.5):
            probe["periodSeconds"] = 5
        c[rng.choice(["livenessProbe", "readinessProbe", "startupProbe"])] = probe
    if _pick(rng, 0.2):
        c["lifecycle"] = {"preStop": {"httpGet": {"port": 80, "path": "/stop"}}}
    if _pick(rng, 0.3):
        c["securityContext"] = rng.choice([{"privileged": True}, {"runAsNonRoot": True, "runAsUser": 1000},
                                           {"capabilities": {"add": ["SYS_ADMIN"]}}, {}])
    if _pick(rng, 0.05):  # fields gates guard, on by default in 1.37.2
        c["resizePolicy"] = [{"resourceName": "cpu", "restartPolicy": "NotRequired"}]
    if _pick(rng, 0.05):
        c["securityContext"] = {"procMount": "Default"}
    if _pick(rng, 0.3):
        c["volumeMounts"] = [{"name": "data", "mountPath": "/data", **({"readOnly": True} if _pick(rng, 0.5) else {})}]
    for key, value in (("imagePullPolicy", "Never"), ("terminationMessagePolicy", "FallbackToLogsOnError"),
                       ("workingDir", "/w"), ("tty", True), ("stdin", False)):
        if _pick(rng, 0.1):
            c[key] = value
    return c


def _volume(rng: random.Random) -> dict:
    source = rng.choice([
        {}, {"emptyDir": {}}, {"emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}}, {"hostPath": {"path": "/dev"}},
        {"hostPath": {"path": "/var/lib/kubelet/plugins", "type": "DirectoryOrCreate"}},
        {"configMap": {"name": "cm"}}, {"secret": {"secretName": "s", "defaultMode": 256}},
        {"persistentVolumeClaim": {"claimName": "pvc"}},
        {"downwardAPI": {"items": [{"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}}]}},
        {"projected": {"sources": [{"serviceAccountToken": {"path": "token"}}, {"configMap": {"name": "cm"}}]}},
        {"csi": {"driver": "csi.example.com", "volumeAttributes": {"a": "b"}}},
        {"ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"],
                                                        "resources": {"requests": {"storage": "1Gi"}}}}}},
    ])
    return {"name": "data", **source}


def template(seed: int) -> dict:
    """A generated pod template for one seed."""
    rng = random.Random(seed)
    meta = {}
    if _pick(rng, 0.9):
        meta["labels"] = {"app": f"a{seed % 7}", **({"tier": "b", "z": ""} if _pick(rng, 0.4) else {})}
    if _pick(rng, 0.3):
        meta["annotations"] = {"example.com/note": "x y"}
    spec: dict = {"containers": [_container(rng, "main")] + ([_container(rng, "side")] if _pick(rng, 0.2) else [])}
    if _pick(rng, 0.2):
        spec["initContainers"] = [_container(rng, "init")]
    if _pick(rng, 0.4):
        spec["resourceClaims"] = [{"name": "gpu", rng.choice(["resourceClaimTemplateName", "resourceClaimName"]): "one-gpu"}]
    if _pick(rng, 0.3):
        spec["schedulingGroup"] = {"podGroupName": "group-a"}
    if _pick(rng, 0.3):
        spec["nodeSelector"] = {"gpu": "yes"}
    if _pick(rng, 0.3):
        spec["tolerations"] = rng.choice([[{"key": "nvidia.com/gpu", "operator": "Exists"}],
                                          [{"key": "k", "value": "v", "effect": "NoSchedule", "tolerationSeconds": 5}],
                                          [{"operator": "Exists"}]])
    if _pick(rng, 0.2):
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["yes"]}]}]}}}
    if _pick(rng, 0.3):
        spec["volumes"] = [_volume(rng)]
    for key, value in (("restartPolicy", rng.choice(["Never", "OnFailure", "Always"])), ("hostNetwork", True),
                       ("dnsPolicy", "ClusterFirstWithHostNet"), ("serviceAccountName", "sa"), ("serviceAccount", "old"),
                       ("priorityClassName", "high"), ("terminationGracePeriodSeconds", 0), ("hostPID", True),
                       ("automountServiceAccountToken", False), ("runtimeClassName", "nvidia"),
                       ("securityContext", {"runAsUser": 0, "fsGroup": 2000}), ("schedulerName", "other"),
                       ("enableServiceLinks", False), ("imagePullSecrets", [{"name": "reg"}]),
                       ("topologySpreadConstraints", [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                                       "labelSelector": {"matchLabels": {"app": "a"}}}]),
                       ("overhead", {"cpu": "250m"}), ("resources", {"requests": {"cpu": "1"}}),
                       ("priority", 5), ("shareProcessNamespace", True), ("subdomain", "s"), ("hostname", "h")):
        if _pick(rng, 0.08):
            spec[key] = value
    if _pick(rng, 0.05):
        spec["hostUsers"] = False
    return {"metadata": meta, "spec": spec} if meta or _pick(rng, 0.5) else {"spec": spec}


def gates(seed: int) -> dict:
    """The apiserver's gates for a generated template (each keeps every field the generator draws)."""
    return random.Random(seed * 7919).choice([{}, {}, {"GenericWorkload": True}])


def realworld_templates(kinds=WORKLOAD_KINDS) -> list[tuple[str, dict]]:
    """(where, template) of every workload of these kinds in the real manifests that YAML reads."""
    found = []
    for path in sorted(REALWORLD.rglob("*.y*ml")):
        try:
            docs = list(yaml.safe_load_all(path.read_text()))
        except (yaml.YAMLError, UnicodeDecodeError):
            continue  # a Helm template, not YAML
        for i, doc in enumerate(docs):
            if not isinstance(doc, dict) or doc.get("kind") not in kinds:
                continue
            spec = doc.get("spec") or {}
            if doc["kind"] == "CronJob":
                spec = ((spec.get("jobTemplate") or {}).get("spec")) or {}
            if isinstance(spec.get("template"), dict):
                found.append((f"{path.relative_to(REALWORLD)} #{i} {doc['kind']}", spec["template"]))
    return found
