"""The published RBAC of real DRA drivers (../shared/realworld/rbac, see its SOURCES.md), one
install per entry: the files that go together, the driver, and the service account its kubelet
plugin (or, without one, the component) runs as."""
from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(os.environ.get("DRA_REALWORLD_RBAC", "/work/shared/realworld/rbac"))
EX = "dra-example-driver/deployments/helm/dra-example-driver/templates/"
NV = "dra-driver-nvidia-gpu/deployments/helm/dra-driver-nvidia-gpu/templates/"
CPU = "dra-driver-cpu/deployment/helm/dra-driver-cpu/templates/"
AMD = "amd-k8s-gpu-dra-driver/helm-charts-k8s/templates/"
TPU = "dra-driver-google-tpu/deployments/helm/dra-driver-google-tpu/templates/"
SRIOV = "dra-driver-sriov/deployments/helm/dra-driver-sriov/templates/"
RBLN = "rbln-k8s-dra-driver/deployments/helm/k8s-dra-driver-npu/templates/"
INTEL = "intel-resource-drivers-for-kubernetes/"
DRANET = "dranet/deployments/helm/dranet/templates/"
WEB = "kubernetes-website/content/en/docs/tasks/administer-cluster/hardening-dra."
WEB2 = "kubernetes-website/content/en/docs/concepts/security/hardening-guide/dynamic-resource-allocation."
K8S = "kubernetes/test/e2e/dra/test-driver/deploy/example/"


def rendered(prefix: str, *names: str) -> list:
    return [prefix + n + ".rendered.yaml" for n in names]


# (install, files, driver, service account ns/name, extra YAML to bind a role the files leave unbound)
INSTALLS = [
    ("dra-example-driver (helm)", rendered(EX, "clusterrole", "clusterrolebinding", "serviceaccount", "kubeletplugin"),
     "gpu.example.com", "dra-example-driver/dra-example-driver-service-account", ""),
    ("dra-driver-nvidia-gpu (helm)", rendered(NV, "rbac-kubeletplugin", "kubeletplugin"),
     "gpu.nvidia.com", "dra-driver-nvidia-gpu/dra-driver-nvidia-gpu-service-account-kubeletplugin", ""),
    ("dranet (helm)", rendered(DRANET, "rbac", "serviceaccount", "daemonset"), "dra.net", "kube-system/dranet", ""),
    ("dranet (install.yaml)", ["dranet/install.yaml"], "dra.net", "kube-system/dranet", ""),
    ("dranet (dranetctl-install.yaml)", ["dranet/examples/dranetctl-install.yaml"], "dra.net", "kube-system/dranet", ""),
    ("google/dranet (install.yaml)", ["dranet-google/install.yaml"], "dra.net", "kube-system/dranet", ""),
    ("dra-driver-cpu (helm)", rendered(CPU, "clusterrole", "clusterrolebinding", "serviceaccount", "daemonset"),
     "dra.cpu", "kube-system/dra-driver-cpu", ""),
    ("dra-driver-cpu (manifests/base)", [f"dra-driver-cpu/manifests/base/{n}-dracpu.part.yaml" for n in (
        "clusterrole", "clusterrolebinding", "serviceaccount", "daemonset")], "dra.cpu", "kube-system/dracpu", ""),
    ("dra-driver-memory", ["dra-driver-memory/hack/ci/install.tmpl.yaml"], "dra.memory", "kube-system/dramemory", ""),
    ("AMD k8s-gpu-dra-driver (helm)", rendered(AMD, "clusterrole", "clusterrolebinding", "serviceaccount", "kubeletplugin"),
     "gpu.amd.com", "k8s-gpu-dra-driver/k8s-gpu-dra-driver-service-account", ""),
    ("dra-driver-google-tpu (helm)", rendered(TPU, "clusterrole", "clusterrolebinding", "serviceaccount", "kubeletplugin"),
     "tpu.google.com", "dra-driver-google-tpu/dra-driver-google-tpu-service-account", ""),
    ("dra-driver-sriov (helm)", rendered(SRIOV, "clusterrole", "clusterrolebinding", "serviceaccount", "dra-driver"),
     "sriovnetwork.k8snetworkplumbingwg.io", "dra-driver-sriov/dra-driver-sriov-dra-driver-sriov-chart-service-account", ""),
    ("RBLN k8s-dra-driver-npu (helm)", rendered(RBLN, "clusterrole", "clusterrolebinding", "serviceaccount", "kubeletplugin"),
     "npu.rebellions.ai", "k8s-dra-driver-npu/k8s-dra-driver-npu-service-account", ""),
    ("Intel GPU (deployments/gpu/base)", [INTEL + "deployments/gpu/base/resource-driver.yaml"], "gpu.intel.com",
     "intel-gpu-resource-driver/intel-gpu-resource-driver-service-account", ""),
    ("Intel Gaudi (deployments/gaudi/base)", [INTEL + "deployments/gaudi/base/resource-driver.yaml"], "gaudi.intel.com",
     "intel-gaudi-resource-driver/intel-gaudi-resource-driver-service-account", ""),
    ("Intel QAT (deployments/qat/base)", [INTEL + "deployments/qat/base/resource-driver.yaml"], "qat.intel.com",
     "intel-qat-resource-driver/intel-qat-resource-driver-service-account", ""),
    ("Intel GPU (helm)", rendered(INTEL + "charts/intel-gpu-resource-driver/templates/", "clusterrole",
                                  "clusterrolebinding", "serviceaccount", "resource-driver"),
     "gpu.intel.com", "intel-gpu-resource-driver/intel-gpu-sa", ""),
    ("HAMi-DRA (helm)", rendered("hami-dra/charts/hami-dra/templates/hami-dra-driver/", "rbac"),
     "hami-core.project-hami.io", "kube-system/hami-dra-driver-service-account", ""),
    ("composable-dra-driver", ["composable-dra-driver/deployment.yaml"], "composable.example.com",
     "composable-dra/cdi-dra", ""),
    ("Kubernetes test driver (plugin-permissions.yaml)", [K8S + "plugin-permissions.yaml"], "test-driver.cdi.k8s.io",
     "dra-kubelet-plugin-namespace/dra-kubelet-plugin-service-account", ""),
    ("Kubernetes test driver (plugin-rbac.yaml)", [K8S + "plugin-rbac.yaml"], "test-driver.cdi.k8s.io",
     "default/dra-kubelet-plugin-service-account", ""),
    ("website: node-local status updater", [WEB + "block2-dra-node-driver-status-updater.yaml"], "dra.example.com",
     "dra-system/dra-plugin", "bind"),
    ("website: multi-node status updater", [WEB + "block3-dra-multinode-status-updater.yaml"], "dra.example.com",
     "dra-system/dra-plugin", "bind"),
    ("website (concepts): node-local status updater", [WEB2 + "block2-dra-node-driver-status-updater.yaml"],
     "dra.example.com", "dra-system/dra-plugin", "bind"),
    ("website (concepts): multi-node status updater", [WEB2 + "block3-dra-multinode-status-updater.yaml"],
     "dra.example.com", "dra-system/dra-plugin", "bind"),
]


def binding_yaml(text: str, service_account: str) -> str:
    """A ClusterRoleBinding of every ClusterRole in `text` to the service account (the website's
    examples show the roles alone)."""
    import yaml

    namespace, _, name = service_account.partition("/")
    out = []
    for doc in yaml.safe_load_all(text):
        if isinstance(doc, dict) and doc.get("kind") == "ClusterRole":
            role = doc["metadata"]["name"]
            out.append(
                "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\n"
                f"metadata: {{name: bind-{role}}}\nroleRef: {{apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, "
                f"name: {role}}}\nsubjects:\n- {{kind: ServiceAccount, name: {name}, namespace: {namespace}}}\n")
    return "".join(out)


def install_text(files: list, service_account: str, extra: str) -> str:
    texts = [(ROOT / f).read_text() for f in files]
    text = "\n---\n".join(texts)
    if extra == "bind":
        text += "\n" + binding_yaml(text, service_account)
    return text
