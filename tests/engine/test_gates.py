"""Feature gates: parsing, 1.37 defaults, locked gates, and the apiserver's field dropping."""
import re

import pytest

from allocator.engine.apiserver import drop_disabled_fields
from allocator.engine.gates import ComponentGates, FeatureGates, GateError, parse_gates, parse_version_flag


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


def test_switching_a_locked_gate_is_refused_with_the_libraries_words():
    gates, _ = parse_gates("DRAAdminAccess=false")
    assert gates.refusals() == [("DRAAdminAccess", "cannot set feature gate DRAAdminAccess to false, "
                                                   "feature is locked to true")]
    assert ComponentGates.uniform(gates).refusal() == (
        "scheduler", "DRAAdminAccess",
        "kube-scheduler would not start: cannot set feature gate DRAAdminAccess to false, feature is locked to true")


def test_an_older_emulated_version_unlocks_what_was_not_yet_locked():
    gates, _ = parse_gates("DRAAdminAccess=false", emulated="1.35")
    assert gates.refusals() == [] and not gates.enabled("DRAAdminAccess")
    assert gates.min_compat_version == (1, 34)


def test_fractional_capacity_range_is_off_until_min_compatibility_reaches_1_37():
    assert not FeatureGates().enabled("DRAFractionalCapacityRange")
    assert FeatureGates(min_compat="1.37").enabled("DRAFractionalCapacityRange")


@pytest.mark.parametrize("text,emulated,min_compat,message", [
    ("DRADeviceTaints=false", "", "", "DRADeviceTaintRules is enabled, but depends on features that are disabled: "
                                      "[DRADeviceTaints]"),
    ("DRADeviceCompatibilityGroups=true,DRAPartitionableDevices=false", "", "",
     "DRADeviceCompatibilityGroups is enabled, but depends on features that are disabled: [DRAPartitionableDevices]"),
    ("DRAListTypeAttributes=false", "1.35", "", "cannot set feature gate DRAListTypeAttributes to false, feature is "
                                                "PreAlpha at emulated version 1.35, min compatibility version 1.34"),
    ("", "1.38", "", "emulation version 1.38 is not between [1.34, 1.37.0]"),
    ("", "1.36", "1.37", "minCompatibilityVersion version 1.37 is not between [1.34, 1.36]"),
])
def test_sets_the_scheduler_refuses(text, emulated, min_compat, message):
    gates, _ = parse_gates(text, emulated=emulated, min_compat=min_compat)
    assert [m for _, m in gates.refusals()] == [message]


@pytest.mark.parametrize("flag,message", [
    ("1.36.1", "patch version not allowed, got: kube=1.36.1"),
    ("1", 'illegal version string "1"'),
    ("x", 'could not parse "x" as version'),
    ("wardle=1.2", "component not registered: wardle"),
])
def test_version_flags_are_parsed_as_the_component_registry_parses_them(flag, message):
    with pytest.raises(GateError, match=re.escape(message)):
        parse_version_flag(flag)


@pytest.mark.parametrize("text,message", [
    ("NoSuchGate=true", "unrecognized feature gate: NoSuchGate"),
    ("DRAAdminAccess=maybe", "invalid value of DRAAdminAccess=maybe"),
    ("DRAAdminAccess", "missing bool value for DRAAdminAccess"),
])
def test_bad_gate_settings_are_errors(text, message):
    with pytest.raises(GateError, match=message):
        parse_gates(text)


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
    gates, _ = parse_gates("DRAPartitionableDevices=false,DRADeviceTaints=false,DRADeviceTaintRules=false")
    stored, dropped = drop_disabled_fields(SLICE, gates)
    device = stored["spec"]["devices"][0]
    assert "consumesCounters" not in device and "taints" not in device


def test_the_readme_gate_table_is_generated_from_the_data_file():
    from pathlib import Path

    from allocator.engine.gates import readme_table

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    between = readme.split("<!-- gate table: generated -->\n", 1)[1].split("<!-- end of gate table -->", 1)[0]
    assert between == readme_table()
