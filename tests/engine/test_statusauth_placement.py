"""The status what-if's plugin pods are the ones the DaemonSet controller would create: the
template's node affinity and node selector, and the nodes' taints against its tolerations."""
from __future__ import annotations

import pytest

from allocator.engine.scenario import read_scenario
from allocator.engine.statusauth.whatif import plugin_writers
from tests.engine import cluster as k
from tests.engine.realworld_rbac import NV, ROOT, install_text

pytestmark = pytest.mark.skipif(not ROOT.is_dir(), reason=f"{ROOT} (the real-world RBAC files) is not here")

GPU = {"feature.node.kubernetes.io/pci-10de.present": "true"}


def test_nvidia_plugin_runs_only_on_gpu_nodes_whose_taints_it_tolerates():
    files = [NV + "rbac-kubeletplugin.rendered.yaml", NV + "kubeletplugin.rendered.yaml"]
    nodes = [
        k.node("gpu-plain", labels=GPU),
        k.node("gpu-tainted", labels=GPU, taints=[{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]),
        k.node("gpu-reserved", labels=GPU, taints=[{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]),
        k.node("gpu-by-label", labels={"nvidia.com/gpu.present": "true"}),
        k.node("cpu-only"),
    ]
    text = install_text(files, "", "") + "\n---\n" + k.dump(*nodes)
    scenario = read_scenario(text.encode())
    assert not scenario.errors, scenario.errors[0].render()
    on = [w.node for w in plugin_writers(scenario.rbac, scenario.nodes)]
    # the DaemonSet's required node affinity ORs its terms; nvidia.com/gpu:NoSchedule is tolerated,
    # dedicated=infra:NoSchedule is not; a node without a GPU label gets no plugin pod
    assert on == ["gpu-by-label", "gpu-plain", "gpu-tainted"]
    # and the scenario's own pods (none ask for devices) are said not to be scheduled
    assert any("ask for no devices" in w.message for w in scenario.warnings)


def test_a_node_selector_plugin_skips_the_nodes_it_does_not_select():
    ds = {"apiVersion": "apps/v1", "kind": "DaemonSet",
          "metadata": {"name": "plugin", "namespace": "drivers"},
          "spec": {"selector": {"matchLabels": {"app": "plugin"}}, "template": {
              "metadata": {"labels": {"app": "plugin"}},
              "spec": {"serviceAccountName": "plugin", "nodeSelector": {"gpu": "yes"},
                       "containers": [{"name": "p", "image": "x", "env": [{"name": "DRIVER_NAME",
                                                                           "value": "gpu.example.com"}]}]}}}}
    scenario = read_scenario(k.dump(k.node("a", labels={"gpu": "yes"}), k.node("b"), ds).encode())
    writers = plugin_writers(scenario.rbac, scenario.nodes)
    assert [(w.node, w.drivers) for w in writers] == [("a", ("gpu.example.com",))]
