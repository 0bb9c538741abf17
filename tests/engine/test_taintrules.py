"""DeviceTaintRule objects: their taints reach the devices they select, as the scheduler sees them."""
import yaml

from allocator.engine.gates import ComponentGates, gates_from_dict
from allocator.engine.run import allocate_text

BASE = [
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}},
    {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
     "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}},
    {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
     "spec": {"driver": "gpu.example.com", "nodeName": "node-1",
              "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
              "devices": [{"name": "gpu-0"}, {"name": "gpu-1"}]}},
]


def rule(selector, effect="NoSchedule", name="r"):
    spec = {"taint": {"key": "maintenance", "value": "true", "effect": effect}}
    if selector is not None:
        spec["deviceSelector"] = selector
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": name}, "spec": spec}


def claim(count=1, tolerate=False):
    exactly = {"deviceClassName": "gpu", "count": count}
    if tolerate:
        exactly["tolerations"] = [{"key": "maintenance", "operator": "Exists"}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": exactly}]}}}


def devices(objects, **gates):
    _, outcome = allocate_text(yaml.safe_dump_all(objects), node_name="node-1",
                               gates=ComponentGates.uniform(gates_from_dict(gates)))
    if outcome.outcome != "allocated":
        return outcome.outcome
    return [r["device"] for r in outcome.claims[0]["status"]["allocation"]["devices"]["results"]]


def test_a_rule_taints_the_device_it_selects():
    assert devices(BASE + [rule({"driver": "gpu.example.com", "device": "gpu-0"}), claim()]) == ["gpu-1"]


def test_a_rule_selecting_a_whole_pool_leaves_nothing_untainted():
    assert devices(BASE + [rule({"pool": "p"}), claim()]) == "unsatisfiable"
    assert devices(BASE + [rule({"pool": "p"}), claim(tolerate=True)]) == ["gpu-0"]


def test_a_rule_without_a_selector_selects_nothing():
    assert devices(BASE + [rule(None), claim(count=2)]) == ["gpu-0", "gpu-1"]


def test_effect_none_only_informs():
    assert devices(BASE + [rule({"device": "gpu-0"}, effect="None"), claim()]) == ["gpu-0"]


def test_rules_apply_only_with_their_gate():
    objects = BASE + [rule({"device": "gpu-0"}), claim()]
    assert devices(objects, DRADeviceTaintRules=False) == ["gpu-0"]
    assert devices(objects, DRADeviceTaints=False, DRADeviceTaintRules=False) == ["gpu-0"]
