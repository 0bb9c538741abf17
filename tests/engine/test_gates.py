"""Feature gates: parsing, 1.37 defaults, locked gates, and the apiserver's field dropping."""
import pytest

from allocator.engine.apiserver import drop_disabled_fields
from allocator.engine.gates import AllocatorFeatures, FeatureGates, GateError, parse_gates


def test_defaults_follow_kubernetes_1_37():
    gates = FeatureGates()
    assert gates.enabled("DRAPartitionableDevices")
    assert gates.enabled("DRAConsumableCapacity")
    assert not gates.enabled("DRADeviceCompatibilityGroups")
    assert not gates.enabled("DRAOptionalNodeOperations")


def test_gates_parse_like_the_kubernetes_flag():
    gates, warnings = parse_gates("DRADeviceCompatibilityGroups=true, DRAConsumableCapacity=false")
    assert gates.enabled("DRADeviceCompatibilityGroups")
    assert not gates.enabled("DRAConsumableCapacity")
    assert warnings == []


def test_switching_a_locked_gate_warns_but_is_honoured():
    gates, warnings = parse_gates("DRAAdminAccess=false")
    assert not gates.enabled("DRAAdminAccess")
    assert "locked" in warnings[0]


@pytest.mark.parametrize("text,message", [
    ("NoSuchGate=true", "unrecognized feature gate: NoSuchGate"),
    ("DRAAdminAccess=maybe", "invalid value of DRAAdminAccess=maybe"),
    ("DRAAdminAccess", "missing bool value for DRAAdminAccess"),
])
def test_bad_gate_settings_are_errors(text, message):
    with pytest.raises(GateError, match=message):
        parse_gates(text)


def test_compatibility_groups_need_partitionable_devices_too():
    gates, _ = parse_gates("DRADeviceCompatibilityGroups=true,DRAPartitionableDevices=false")
    assert not AllocatorFeatures.from_gates(gates).compatibility_groups


SLICE = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
    "spec": {"driver": "d", "nodeName": "n", "pool": {"name": "p", "resourceSliceCount": 1},
             "skipNodeOperations": ["*"],
             "devices": [{"name": "a", "consumesCounters": [
                 {"counterSet": "c", "counters": {"m": {"value": "1"}}, "compatibilityGroups": ["mig"]}],
                 "taints": [{"key": "k", "effect": "NoSchedule"}]}]},
}


def test_apiserver_drops_gated_fields_on_create_and_says_which():
    gates, _ = parse_gates("")
    stored, dropped = drop_disabled_fields(SLICE, gates)
    assert "compatibilityGroups" not in stored["spec"]["devices"][0]["consumesCounters"][0]
    assert "skipNodeOperations" not in stored["spec"]
    assert (("spec", "devices", 0, "consumesCounters", 0, "compatibilityGroups"), "DRADeviceCompatibilityGroups") in dropped
    assert SLICE["spec"]["skipNodeOperations"] == ["*"], "the input object is not modified"


def test_apiserver_with_partitionable_off_drops_counter_consumption():
    gates, _ = parse_gates("DRAPartitionableDevices=false,DRADeviceTaints=false")
    stored, dropped = drop_disabled_fields(SLICE, gates)
    device = stored["spec"]["devices"][0]
    assert "consumesCounters" not in device and "taints" not in device
