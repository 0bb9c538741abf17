"""Apiserver validation of scenario objects: types, unknown fields and the DRA rules."""
import copy
import dataclasses
import glob
import os
import random
import time

import pytest
import yaml

from allocator.engine.scenario import cel_check as scenario_cel_check
from allocator.engine.gates import FeatureGates
from allocator.engine.validation import FieldError, validate

DNS_LABEL_DETAIL = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
DNS_SUBDOMAIN_DETAIL = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
REALWORLD = "/work/shared/realworld"


# -- builders ---------------------------------------------------------------


def device_class():
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": "gpu.example.com"},
        "spec": {
            "selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}],
            "config": [{"opaque": {"driver": "gpu.example.com", "parameters": {"kind": "GpuConfig"}}}],
        },
    }


def resource_slice():
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "worker-1-gpu", "uid": "abc", "resourceVersion": "12", "managedFields": [{}]},
        "spec": {
            "driver": "gpu.example.com",
            "pool": {"name": "worker-1", "generation": 1, "resourceSliceCount": 1},
            "nodeName": "worker-1",
            "devices": [
                {
                    "name": "gpu-0",
                    "attributes": {
                        "model": {"string": "a100"},
                        "index": {"int": 0},
                        "healthy": {"bool": True},
                        "driverVersion": {"version": "1.2.3-rc.1+build.5"},
                        "resource.kubernetes.io/pcieRoot": {"string": "pci0000:00"},
                    },
                    "capacity": {"memory": {"value": "40Gi"}, "cores": {"value": 108}},
                    "taints": [{"key": "example.com/maintenance", "value": "soon", "effect": "NoSchedule"}],
                    "bindsToNode": True,
                    "bindingConditions": ["example.com/ready"],
                    "bindingFailureConditions": ["example.com/failed"],
                },
                {
                    "name": "nic-0",
                    "allowMultipleAllocations": True,
                    "capacity": {
                        "bandwidth": {
                            "value": "10G",
                            "requestPolicy": {"default": "1G", "validRange": {"min": "1G", "max": "10G", "step": "1G"}},
                        },
                        "queues": {"value": 8, "requestPolicy": {"default": 2, "validValues": [1, 2, 4, 8]}},
                    },
                },
            ],
        },
    }


def partitioned_slice():
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "worker-1-parts"},
        "spec": {
            "driver": "gpu.example.com",
            "pool": {"name": "example.com/worker-1", "generation": 0, "resourceSliceCount": 2},
            "perDeviceNodeSelection": True,
            "devices": [
                {
                    "name": "mig-0",
                    "nodeName": "worker-1",
                    "consumesCounters": [
                        {"counterSet": "gpu-0", "counters": {"memory": {"value": "4Gi"}}, "compatibilityGroups": ["mig"]}
                    ],
                },
                {
                    "name": "mig-1",
                    "allNodes": True,
                    "consumesCounters": [{"counterSet": "gpu-0", "counters": {"memory": {"value": "4Gi"}}}],
                },
                {
                    "name": "mig-2",
                    "nodeSelector": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [{"key": "example.com/rack", "operator": "In", "values": ["a"]}],
                                "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["worker-1"]}],
                            }
                        ]
                    },
                },
            ],
            "skipNodeOperations": ["NodePrepareResources", "NodeUnprepareResources"],
        },
    }


def counter_slice():
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "worker-1-counters"},
        "spec": {
            "driver": "gpu.example.com",
            "pool": {"name": "example.com/worker-1", "generation": 0, "resourceSliceCount": 2},
            "allNodes": True,
            "sharedCounters": [{"name": "gpu-0", "counters": {"memory": {"value": "8Gi"}}}],
        },
    }


def resource_claim():
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "two-gpus", "namespace": "default", "labels": {"app": "demo"}},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpu",
                        "exactly": {
                            "deviceClassName": "gpu.example.com",
                            "allocationMode": "ExactCount",
                            "count": 2,
                            "selectors": [{"cel": {"expression": "device.attributes['gpu.example.com'].model == 'a100'"}}],
                            "adminAccess": False,
                            "tolerations": [{"key": "example.com/maintenance", "operator": "Exists", "effect": "NoSchedule"}],
                            "capacity": {"requests": {"memory": "4Gi"}},
                            "derivedAttributes": [{"name": "derived/numa", "expression": "1"}],
                        },
                    },
                    {
                        "name": "nic",
                        "firstAvailable": [
                            {"name": "fast", "deviceClassName": "nic.example.com", "allocationMode": "All"},
                            {"name": "slow", "deviceClassName": "nic.example.com", "count": 1},
                        ],
                    },
                ],
                "constraints": [
                    {"requests": ["gpu", "nic/fast"], "matchAttribute": "resource.kubernetes.io/pcieRoot"},
                    {"requests": ["gpu"], "matchAttribute": "derived/numa"},
                    {"distinctAttribute": "gpu.example.com/index"},
                ],
                "config": [{"requests": ["nic"], "opaque": {"driver": "nic.example.com", "parameters": {"mtu": 9000}}}],
            }
        },
    }


def allocated_claim():
    claim = resource_claim()
    claim["status"] = {
        "allocation": {
            "devices": {
                "results": [
                    {"request": "gpu", "driver": "gpu.example.com", "pool": "worker-1", "device": "gpu-0"},
                    {
                        "request": "nic/fast",
                        "driver": "nic.example.com",
                        "pool": "worker-1",
                        "device": "eth1",
                        "adminAccess": False,
                        "shareID": "8d6c3f0e-2b1a-4c5d-9e8f-0a1b2c3d4e5f",
                        "consumedCapacity": {"bandwidth": "1G"},
                        "tolerations": [{"operator": "Exists"}],
                        "skipNodeOperations": ["*"],
                    },
                ],
                "config": [{"source": "FromClass", "opaque": {"driver": "gpu.example.com", "parameters": {}}}],
            },
            "nodeSelector": {
                "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["worker-1"]}]}]
            },
            "allocationTimestamp": "2026-01-01T00:00:00Z",
        },
        "reservedFor": [{"resource": "pods", "name": "p", "uid": "1"}],
        "devices": [],
    }
    return claim


def claim_template():
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "one-gpu", "namespace": "team-a"},
        "spec": {
            "metadata": {"labels": {"app": "demo"}, "annotations": {"example.com/note": "hi"}},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
        },
    }


def node():
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "worker-1", "labels": {"example.com/rack": "a", "kubernetes.io/hostname": "worker-1"}},
        "status": {"declaredFeatures": ["DRAOptionalNodeOperations"]},
    }


def pod():
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "app"},
        "spec": {
            "nodeName": "worker-1",
            "nodeSelector": {"example.com/rack": "a"},
            "tolerations": [{"key": "example.com/x", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}],
            "resourceClaims": [
                {"name": "gpu", "resourceClaimName": "two-gpus"},
                {"name": "nic", "resourceClaimTemplateName": "one-gpu"},
            ],
            "containers": [{"name": "c", "image": "busybox"}],
        },
    }


ALL_BUILDERS = [
    device_class,
    resource_slice,
    partitioned_slice,
    counter_slice,
    resource_claim,
    allocated_claim,
    claim_template,
    node,
    pod,
]


def messages(obj, **kwargs):
    """{field path tuple: [messages]} of the problems of `obj`."""
    out = {}
    for problem in validate(obj, **kwargs):
        out.setdefault(problem.path, []).append(problem.message)
    return out


def errors(obj, **kwargs):
    return [p for p in validate(obj, **kwargs) if p.severity == "error"]


def warnings(obj, **kwargs):
    return [p for p in validate(obj, **kwargs) if p.severity == "warning"]


def the_error(obj, path, **kwargs):
    found = [p.message for p in errors(obj, **kwargs) if p.path == path]
    assert len(found) == 1, (path, validate(obj, **kwargs))
    return found[0]


def slice_device(obj, index=0):
    return obj["spec"]["devices"][index]


def exact(obj, index=0):
    return obj["spec"]["devices"]["requests"][index]["exactly"]


# -- valid objects ----------------------------------------------------------


@pytest.mark.parametrize("build", ALL_BUILDERS, ids=lambda b: b.__name__)
def test_valid_objects_have_no_problems(build):
    assert validate(build()) == []


def test_unknown_kinds_are_left_to_the_scenario_loader():
    assert validate({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"a": 1}}) == []


def test_field_error_is_a_frozen_record_with_error_default():
    problem = FieldError(("spec",), "Required value")
    assert problem.severity == "error"
    with pytest.raises(dataclasses.FrozenInstanceError):
        problem.message = "x"


# -- rule 1: types ------------------------------------------------------------


def test_string_where_integer_belongs_is_a_type_error():
    claim = resource_claim()
    exact(claim)["count"] = "abc"
    assert the_error(claim, ("spec", "devices", "requests", 0, "exactly", "count")) == 'Invalid value: "abc": expected integer'


@pytest.mark.parametrize("value", [1.0, 1.5, True])
def test_floats_and_bools_are_not_integers(value):
    obj = resource_slice()
    obj["spec"]["pool"]["generation"] = value
    message = the_error(obj, ("spec", "pool", "generation"))
    assert message.endswith(": expected integer")


def test_integer_beyond_int64_is_a_type_error():
    obj = resource_slice()
    obj["spec"]["pool"]["generation"] = 2**63
    assert "64-bit integer" in the_error(obj, ("spec", "pool", "generation"))


def test_bool_is_not_a_valid_string():
    obj = resource_slice()
    obj["spec"]["driver"] = True
    assert the_error(obj, ("spec", "driver")) == "Invalid value: true: expected string"


def test_scalar_where_object_belongs_is_reported_and_not_descended_into():
    claim = resource_claim()
    claim["spec"]["devices"]["requests"][0]["exactly"] = "gpu.example.com"
    problems = validate(claim)
    assert [(p.path, p.message) for p in problems] == [
        (("spec", "devices", "requests", 0, "exactly"), 'Invalid value: "gpu.example.com": expected object')
    ]


def test_list_where_map_belongs_is_a_type_error():
    obj = resource_slice()
    slice_device(obj)["attributes"] = [{"model": {"string": "a100"}}]
    assert the_error(obj, ("spec", "devices", 0, "attributes")).endswith(": expected object")


def test_map_where_list_belongs_is_a_type_error():
    obj = resource_slice()
    obj["spec"]["devices"] = {"gpu-0": {}}
    assert the_error(obj, ("spec", "devices")).endswith(": expected array")


def test_yaml_integers_are_valid_quantities_but_bools_are_not():
    obj = resource_slice()
    slice_device(obj)["capacity"]["memory"]["value"] = 4096
    assert validate(obj) == []
    slice_device(obj)["capacity"]["memory"]["value"] = True
    assert the_error(obj, ("spec", "devices", 0, "capacity", "memory", "value")) == "Invalid value: true: expected quantity"


def test_malformed_quantity_uses_the_apimachinery_message():
    obj = resource_slice()
    slice_device(obj)["capacity"]["memory"]["value"] = "1 Gi"
    assert the_error(obj, ("spec", "devices", 0, "capacity", "memory", "value")) == (
        "Invalid value: \"1 Gi\": quantities must match the regular expression "
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )


def test_wrong_types_at_several_depths_all_reported_without_exceptions():
    claim = resource_claim()
    claim["metadata"]["labels"] = ["app"]
    exact(claim)["selectors"][0]["cel"] = 7
    exact(claim)["tolerations"][0]["tolerationSeconds"] = "30"
    claim["spec"]["devices"]["requests"][1]["firstAvailable"][1]["count"] = [1]
    claim["spec"]["devices"]["constraints"][0]["requests"] = [["gpu"]]
    claim["spec"]["devices"]["config"][0]["opaque"]["driver"] = 3
    paths = {p.path for p in errors(claim)}
    assert paths >= {
        ("metadata", "labels"),
        ("spec", "devices", "requests", 0, "exactly", "selectors", 0, "cel"),
        ("spec", "devices", "requests", 0, "exactly", "tolerations", 0, "tolerationSeconds"),
        ("spec", "devices", "requests", 1, "firstAvailable", 1, "count"),
        ("spec", "devices", "constraints", 0, "requests", 0),
        ("spec", "devices", "config", 0, "opaque", "driver"),
    }


def test_non_object_input_is_a_single_type_error():
    assert validate(["not", "an", "object"]) == [FieldError((), 'Invalid value: ["not","an","object"]: expected object')]


# -- rule 2: unknown fields -------------------------------------------------------


def test_unknown_field_is_a_warning_in_kubernetes_wording():
    claim = resource_claim()
    claim["spec"]["devices"]["foo"] = 1
    assert warnings(claim) == [FieldError(("spec", "devices", "foo"), 'unknown field "spec.devices.foo"', "warning")]
    assert errors(claim) == []


def test_unknown_fields_are_found_at_depth_and_in_lists():
    obj = resource_slice()
    slice_device(obj)["capacity"]["memory"]["size"] = "1"
    obj["spec"]["pool"]["Name"] = "case matters"
    obj["status"] = {}
    found = {p.message for p in warnings(obj)}
    assert found == {
        'unknown field "spec.devices[0].capacity.memory.size"',
        'unknown field "spec.pool.Name"',
        'unknown field "status"',
    }


def test_subrequests_have_no_admin_access_field():
    claim = resource_claim()
    claim["spec"]["devices"]["requests"][1]["firstAvailable"][0]["adminAccess"] = True
    assert [p.message for p in warnings(claim)] == [
        'unknown field "spec.devices.requests[1].firstAvailable[0].adminAccess"'
    ]


def test_server_managed_metadata_and_claim_status_are_not_warned_about():
    claim = allocated_claim()
    claim["metadata"].update(uid="1", creationTimestamp="2026-01-01T00:00:00Z", ownerReferences=[], finalizers=["x"])
    claim["status"]["somethingNew"] = {"x": 1}
    assert validate(claim) == []
    claim["metadata"]["colour"] = "blue"
    assert [p.message for p in warnings(claim)] == ['unknown field "metadata.colour"']


# -- rule 3: metadata ---------------------------------------------------------------


def test_missing_name_is_required():
    obj = device_class()
    del obj["metadata"]["name"]
    assert the_error(obj, ("metadata", "name")) == "Required value: name or generateName is required"
    del obj["metadata"]
    assert the_error(obj, ("metadata", "name")) == "Required value: name or generateName is required"


def test_generate_name_stands_in_for_name_and_may_end_in_a_dash():
    obj = resource_claim()
    obj["metadata"] = {"generateName": "gpu-claim-"}
    assert validate(obj) == []


def test_name_must_be_a_dns_subdomain():
    obj = resource_claim()
    obj["metadata"]["name"] = "Two_GPUs"
    assert the_error(obj, ("metadata", "name")) == f'Invalid value: "Two_GPUs": {DNS_SUBDOMAIN_DETAIL}'


def test_namespace_must_be_a_dns_label():
    obj = claim_template()
    obj["metadata"]["namespace"] = "team.a"
    assert the_error(obj, ("metadata", "namespace")) == 'Invalid value: "team.a": must not contain dots'


def test_namespace_on_cluster_scoped_objects_is_only_a_warning():
    for build in (device_class, resource_slice, node):
        obj = build()
        obj["metadata"]["namespace"] = "default"
        problems = validate(obj)
        assert [(p.path, p.severity) for p in problems] == [(("metadata", "namespace"), "warning")]


def test_label_keys_and_values_are_checked():
    obj = node()
    obj["metadata"]["labels"] = {"example.com/": "x", "ok": "-bad-"}
    found = messages(obj)[("metadata", "labels")]
    assert 'Invalid value: "example.com/": name part must be non-empty' in found
    assert any(m.startswith('Invalid value: "-bad-": a valid label must be an empty string') for m in found)


def test_wrong_api_version_stops_validation():
    obj = resource_claim()
    obj["apiVersion"] = "resource.k8s.io/v1beta1"
    obj["spec"] = "garbage"
    assert [p.message for p in validate(obj)] == [
        'Unsupported value: "resource.k8s.io/v1beta1": supported values: "resource.k8s.io/v1"'
    ]


# -- rule 4: claims -----------------------------------------------------------------


def test_request_name_must_be_a_dns_label():
    claim = resource_claim()
    claim["spec"]["devices"]["requests"][0]["name"] = "Req"
    assert the_error(claim, ("spec", "devices", "requests", 0, "name")) == f'Invalid value: "Req": {DNS_LABEL_DETAIL}'


def test_request_names_are_unique_and_at_most_32():
    claim = resource_claim()
    requests = claim["spec"]["devices"]["requests"]
    requests.append(copy.deepcopy(requests[1]))
    # Shown whole, in its stored v1 form (the apiserver checks the list declaratively).
    assert the_error(claim, ("spec", "devices", "requests", 2)) == (
        'Duplicate value: {"name":"nic","firstAvailable":[{"name":"fast","deviceClassName":"nic.example.com",'
        '"allocationMode":"All"},{"name":"slow","deviceClassName":"nic.example.com","allocationMode":"ExactCount",'
        '"count":1}]}'
    )
    requests[:] = [{"name": f"r{i}", "exactly": {"deviceClassName": "c"}} for i in range(33)]
    claim["spec"]["devices"]["constraints"] = []
    claim["spec"]["devices"]["config"] = []
    assert the_error(claim, ("spec", "devices", "requests")) == "Too many: 33: must have at most 32 items"


def test_request_needs_exactly_one_of_exactly_and_first_available():
    claim = resource_claim()
    claim["spec"]["devices"]["requests"][1]["firstAvailable"] = []
    assert the_error(claim, ("spec", "devices", "requests", 1)) == (
        "Required value: exactly one of `exactly` or `firstAvailable` is required"
    )
    claim["spec"]["devices"]["requests"][1]["firstAvailable"] = [{"name": "a", "deviceClassName": "c"}]
    claim["spec"]["devices"]["requests"][1]["exactly"] = {"deviceClassName": "c"}
    assert the_error(claim, ("spec", "devices", "requests", 1)) == (
        "Invalid value: null: exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"
    )


def test_first_available_allows_one_to_eight_unique_subrequests():
    claim = resource_claim()
    subs = claim["spec"]["devices"]["requests"][1]["firstAvailable"]
    subs[1]["name"] = "fast"
    assert the_error(claim, ("spec", "devices", "requests", 1, "firstAvailable", 1)) == (
        'Duplicate value: {"name":"fast","deviceClassName":"nic.example.com","allocationMode":"ExactCount","count":1}'
    )
    subs[:] = [{"name": f"s{i}", "deviceClassName": "c"} for i in range(9)]
    claim["spec"]["devices"]["constraints"][0]["requests"] = ["gpu"]
    assert the_error(claim, ("spec", "devices", "requests", 1, "firstAvailable")) == "Too many: 9: must have at most 8 items"


def test_device_class_name_is_required_and_a_dns_subdomain():
    claim = resource_claim()
    exact(claim)["deviceClassName"] = ""
    assert the_error(claim, ("spec", "devices", "requests", 0, "exactly", "deviceClassName")) == "Required value"
    exact(claim)["deviceClassName"] = "GPU"
    assert the_error(claim, ("spec", "devices", "requests", 0, "exactly", "deviceClassName")) == (
        f'Invalid value: "GPU": {DNS_SUBDOMAIN_DETAIL}'
    )


def test_allocation_mode_must_be_known():
    claim = resource_claim()
    exact(claim)["allocationMode"] = "Some"
    assert the_error(claim, ("spec", "devices", "requests", 0, "exactly", "allocationMode")) == (
        'Unsupported value: "Some": supported values: "All", "ExactCount"'
    )


def test_count_rules_follow_defaulting():
    claim = resource_claim()
    path = ("spec", "devices", "requests", 0, "exactly", "count")
    for mode in (None, "", "ExactCount"):
        exact(claim)["allocationMode"] = mode
        exact(claim)["count"] = 0  # defaults to 1
        assert errors(claim) == []
        exact(claim)["count"] = -1
        assert the_error(claim, path) == "Invalid value: -1: must be greater than zero"
    exact(claim)["allocationMode"] = "All"
    exact(claim)["count"] = 0
    assert errors(claim) == []
    exact(claim)["count"] = 2
    assert the_error(claim, path) == "Invalid value: 2: must not be specified when allocationMode is 'All'"


def test_selectors_need_cel_and_at_most_32():
    claim = resource_claim()
    exact(claim)["selectors"] = [{}]
    assert the_error(claim, ("spec", "devices", "requests", 0, "exactly", "selectors", 0, "cel")) == "Required value"
    exact(claim)["selectors"] = [{"cel": {"expression": "true"}}] * 33
    assert the_error(claim, ("spec", "devices", "requests", 0, "exactly", "selectors")) == (
        "Too many: 33: must have at most 32 items"
    )


def test_cel_expression_length_limit_is_checked_before_compiling():
    calls = []

    def cel_check(expression):
        calls.append(expression)

    claim = resource_claim()
    exact(claim)["selectors"][0]["cel"]["expression"] = "true" + " " * 10237
    assert the_error(claim, ("spec", "devices", "requests", 0, "exactly", "selectors", 0, "cel", "expression"), cel_check=cel_check) == (
        "Too long: may not be more than 10240 bytes"
    )
    assert "true" + " " * 10237 not in calls
    exact(claim)["selectors"][0]["cel"]["expression"] = "true" + " " * 10236
    assert errors(claim, cel_check=cel_check) == []


def test_cel_check_results_become_invalid_and_forbidden_errors():
    def cel_check(expression):
        if "undeclared" in expression:
            return ("invalid", "compilation failed: ERROR: <input>:1:1: undeclared reference to 'undeclared'")
        if "expensive" in expression:
            return ("forbidden", "too complex, exceeds cost limit")
        return None

    claim = resource_claim()
    path = ("spec", "devices", "requests", 0, "exactly", "selectors", 0, "cel", "expression")
    exact(claim)["selectors"][0]["cel"]["expression"] = "undeclared"
    assert the_error(claim, path, cel_check=cel_check) == (
        "Invalid value: \"undeclared\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'undeclared'"
    )
    exact(claim)["selectors"][0]["cel"]["expression"] = "expensive"
    assert the_error(claim, path, cel_check=cel_check) == "Forbidden: too complex, exceeds cost limit"
    # Every expression of the claim and of classes goes through the same check.
    seen = []
    validate(resource_claim(), cel_check=lambda e: seen.append(e))
    validate(device_class(), cel_check=lambda e: seen.append(e))
    assert len(seen) == 3


def test_toleration_rules():
    claim = resource_claim()
    base = ("spec", "devices", "requests", 0, "exactly", "tolerations", 0)
    tolerations = exact(claim)["tolerations"]
    tolerations[0] = {"key": "k", "operator": "Exists", "value": "v"}
    assert the_error(claim, base + ("value",)) == 'Invalid value: "v": must be empty for operator `Exists`'
    tolerations[0] = {"key": "k", "value": "v", "effect": "NoSchedule"}  # empty operator is Equal
    assert errors(claim) == []
    tolerations[0] = {"key": "k", "operator": "Gt"}
    assert the_error(claim, base + ("operator",)) == 'Unsupported value: "Gt": supported values: "Equal", "Exists"'
    tolerations[0] = {"key": "k", "operator": "Exists", "effect": "PreferNoSchedule"}
    assert the_error(claim, base + ("effect",)) == (
        'Unsupported value: "PreferNoSchedule": supported values: "NoExecute", "NoSchedule", "None"'
    )
    tolerations[0] = {"key": "a/b/c", "operator": "Exists"}
    assert the_error(claim, base + ("key",)).startswith('Invalid value: "a/b/c": a valid label key')
    tolerations[0] = {"operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}
    assert errors(claim) == []
    assert [p.path for p in warnings(claim)] == [base + ("tolerationSeconds",)]
    # "The maximum number of tolerations is 16", the API documents; 1.37.2 enforces no limit.
    tolerations[:] = [{"operator": "Exists"}] * 17
    assert errors(claim) == []


def test_capacity_requests_need_quantities_but_any_names():
    """1.37.2 checks that each requested amount is a quantity, not the names (stored regression
    capacity-request-names-are-not-validated)."""
    claim = resource_claim()
    exact(claim)["capacity"]["requests"] = {"bad name": "1", "memory": "lots"}
    found = messages(claim)
    path = ("spec", "devices", "requests", 0, "exactly", "capacity", "requests")
    assert path not in found
    assert found[path + ("memory",)][0].startswith('Invalid value: "lots": quantities must match')


def test_constraints_need_exactly_one_attribute_with_a_domain():
    claim = resource_claim()
    constraints = claim["spec"]["devices"]["constraints"]
    constraints[2] = {}
    assert the_error(claim, ("spec", "devices", "constraints", 2)) == (
        'Required value: exactly one of "matchAttribute" or "distinctAttribute" is required, but multiple fields are set'
    )
    constraints[2] = {"matchAttribute": "a.com/x", "distinctAttribute": "a.com/y"}
    assert "but multiple fields are set" in the_error(claim, ("spec", "devices", "constraints", 2))
    constraints[2] = {"matchAttribute": "pcieRoot"}
    assert the_error(claim, ("spec", "devices", "constraints", 2, "matchAttribute")) == (
        'Invalid value: "pcieRoot": a fully qualified name must be a domain and a name separated by a slash'
    )
    constraints.extend({"matchAttribute": "a.com/x"} for _ in range(30))
    assert the_error(claim, ("spec", "devices", "constraints")) == "Too many: 33: must have at most 32 items"


def test_request_references_must_name_requests_or_subrequests():
    claim = resource_claim()
    refs = claim["spec"]["devices"]["constraints"][0]["requests"]
    path = ("spec", "devices", "constraints", 0, "requests")
    detail = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"
    refs[:] = ["gpu", "nic", "nic/slow", "gpu", "other", "gpu/x", "a/b/c"]
    found = messages(claim)
    assert found[path + (3,)] == ['Duplicate value: "gpu"']
    assert found[path + (4,)] == [f'Invalid value: "other": {detail}']
    assert found[path + (5,)] == [f'Invalid value: "gpu/x": {detail}']
    assert found[path + (6,)] == [f'Invalid value: "a/b/c": {detail}']
    claim["spec"]["devices"]["config"][0]["requests"] = ["nope"]
    assert the_error(claim, ("spec", "devices", "config", 0, "requests", 0)) == f'Invalid value: "nope": {detail}'


def test_claim_config_needs_opaque_driver_and_object_parameters():
    claim = resource_claim()
    config = claim["spec"]["devices"]["config"]
    config[0] = {}
    assert the_error(claim, ("spec", "devices", "config", 0, "opaque")) == "Required value"
    config[0] = {"opaque": {"driver": "", "parameters": [1]}}
    found = messages(claim)
    assert found[("spec", "devices", "config", 0, "opaque", "driver")] == ["Required value"]
    assert found[("spec", "devices", "config", 0, "opaque", "parameters")] == [
        'Invalid value: "<value omitted>": must be a valid JSON object'
    ]
    config[0] = {"opaque": {"driver": "d.example.com", "parameters": {"blob": "x" * 10240}}}
    assert the_error(claim, ("spec", "devices", "config", 0, "opaque", "parameters")) == (
        "Too long: may not be more than 10240 bytes"
    )
    config[:] = [{"opaque": {"driver": "d", "parameters": {}}}] * 33
    assert the_error(claim, ("spec", "devices", "config")) == "Too many: 33: must have at most 32 items"


def test_parameters_that_share_one_long_string_are_measured_without_writing_them_out():
    """10 KB aliased 100,000 times (YAML `*s`) is one string in memory and a gigabyte as JSON."""
    shared = "x" * 10_000
    claim = resource_claim()
    claim["spec"]["devices"]["config"][0] = {
        "opaque": {"driver": "d.example.com", "parameters": {"copies": [shared] * 100_000, "wrong": 5}}}
    claim["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] = [shared] * 100_000
    start = time.process_time()  # CPU time: the bound is on the work, whatever else the machine runs

    found = messages(claim)

    assert time.process_time() - start < 2
    assert found[("spec", "devices", "config", 0, "opaque", "parameters")] == [
        "Too long: may not be more than 10240 bytes"]
    wrong_type = found[("spec", "devices", "requests", 0, "exactly", "deviceClassName")][0]
    assert wrong_type.startswith('Invalid value: ["xxxx') and len(wrong_type) < 200


def test_admin_access_must_be_a_boolean():
    claim = resource_claim()
    exact(claim)["adminAccess"] = "yes"
    assert the_error(claim, ("spec", "devices", "requests", 0, "exactly", "adminAccess")) == (
        'Invalid value: "yes": expected boolean'
    )


def test_derived_attributes_need_a_domain_a_constraint_and_a_compiling_expression():
    claim = resource_claim()
    derived = exact(claim)["derivedAttributes"]
    base = ("spec", "devices", "requests", 0, "exactly", "derivedAttributes")
    derived.append({"name": "derived/unused", "expression": "bad"})
    found = messages(claim, cel_check=lambda e: ("invalid", "syntax error") if e == "bad" else None)
    assert found[base + (1, "name")] == [
        'Invalid value: "derived/unused": must be referenced by at least one matchAttribute or '
        "distinctAttribute constraint targeting this request"
    ]
    assert found[base + (1, "expression")] == ['Invalid value: "bad": syntax error']
    derived[1] = {"name": "numa", "expression": ""}
    found = messages(claim)
    assert 'Invalid value: "numa": a fully qualified name must be a domain and a name separated by a slash' in found[
        base + (1, "name")
    ]
    # An empty or missing expression is Required (declaratively); the empty one is not compiled.
    compiled = messages(claim, cel_check=scenario_cel_check)
    assert compiled[base + (1, "expression")] == ["Required value"]
    derived[:] = [{"name": "derived/numa", "expression": "1"}] * 33
    assert "Too many: 33: must have at most 32 items" in messages(claim)[base]


def test_claim_with_five_different_problems_reports_all_five():
    claim = resource_claim()
    exact(claim)["deviceClassName"] = ""  # 1
    exact(claim)["count"] = -3  # 2
    exact(claim)["tolerations"][0]["effect"] = "Sometimes"  # 3
    claim["spec"]["devices"]["constraints"][0]["requests"] = ["gpu", "missing"]  # 4
    claim["spec"]["devices"]["config"][0]["opaque"]["driver"] = "bad_driver"  # 5
    found = errors(claim)
    assert [p.path for p in found] == [
        ("spec", "devices", "requests", 0, "exactly", "deviceClassName"),
        ("spec", "devices", "requests", 0, "exactly", "count"),
        ("spec", "devices", "requests", 0, "exactly", "tolerations", 0, "effect"),
        ("spec", "devices", "constraints", 0, "requests", 1),
        ("spec", "devices", "config", 0, "opaque", "driver"),
    ]


# -- rule 4: device classes and templates -----------------------------------------


def test_device_class_selectors_and_config_are_checked():
    obj = device_class()
    obj["spec"]["selectors"].append({"cel": {}})
    obj["spec"]["config"].append({"opaque": {"driver": "x.example.com"}})
    found = messages(obj)
    assert messages(obj, cel_check=scenario_cel_check)[("spec", "selectors", 1, "cel", "expression")][0].startswith(
        'Invalid value: "": compilation failed: ERROR: <input>:1:0: Syntax error:')
    assert found[("spec", "config", 1, "opaque", "parameters")] == ["Required value"]
    obj = device_class()
    obj["spec"]["config"] = [{"opaque": {"driver": "x", "parameters": {}}}] * 33
    assert the_error(obj, ("spec", "config")) == "Too many: 33: must have at most 32 items"


def test_device_class_extended_resource_name():
    obj = device_class()
    obj["spec"]["extendedResourceName"] = "example.com/gpu"
    assert validate(obj) == []
    obj["spec"]["extendedResourceName"] = "kubernetes.io/gpu"
    assert the_error(obj, ("spec", "extendedResourceName")) == (
        'Invalid value: "kubernetes.io/gpu": must not have "kubernetes.io/" domain'
    )


def test_template_spec_is_a_claim_spec_and_its_metadata_is_limited():
    obj = claim_template()
    obj["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] = -1
    obj["spec"]["metadata"]["name"] = "fixed"
    found = messages(obj)
    assert found[("spec", "spec", "devices", "requests", 0, "exactly", "count")] == [
        "Invalid value: -1: must be greater than zero"
    ]
    assert found[("spec", "metadata", "name")] == ["Forbidden: cannot be set for a resource claim template"]
    obj["spec"]["metadata"]["labels"] = {"a": "b c"}
    assert ("spec", "metadata", "labels") in messages(obj)


# -- rule 4: resource slices ---------------------------------------------------------


def test_driver_name_follows_csi_rules():
    obj = resource_slice()
    obj["spec"]["driver"] = "GPU.Example.com"  # upper case passes: the check lower-cases first
    assert validate(obj) == []
    obj["spec"]["driver"] = "gpu_example.com"
    assert the_error(obj, ("spec", "driver")) == f'Invalid value: "gpu_example.com": {DNS_SUBDOMAIN_DETAIL}'
    obj["spec"]["driver"] = "a" * 64
    assert "Too long: may not be more than 63 bytes" in messages(obj)[("spec", "driver")]
    del obj["spec"]["driver"]
    assert the_error(obj, ("spec", "driver")) == "Required value"


def test_pool_name_generation_and_slice_count():
    obj = resource_slice()
    pool = obj["spec"]["pool"]
    pool.update(name="example.com/Worker", generation=-1, resourceSliceCount=0)
    found = messages(obj)
    assert found[("spec", "pool", "name")] == [f'Invalid value: "Worker": {DNS_SUBDOMAIN_DETAIL}']
    assert found[("spec", "pool", "generation")] == ["Invalid value: -1: must be greater than or equal to zero"]
    assert found[("spec", "pool", "resourceSliceCount")] == ["Invalid value: 0: must be greater than zero"]
    pool.update(name="a" * 254, generation=0, resourceSliceCount=1)
    assert "Too long: may not be more than 253 bytes" in messages(obj)[("spec", "pool", "name")]


def test_slice_needs_exactly_one_node_selection():
    obj = resource_slice()
    del obj["spec"]["nodeName"]
    assert the_error(obj, ("spec",)) == (
        "Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
    )
    obj["spec"].update(nodeName="worker-1", allNodes=True)
    assert the_error(obj, ("spec",)) == (
        'Invalid value: "{`nodeName`, `allNodes`}": exactly one of `nodeName`, `nodeSelector`, `allNodes`, '
        "`perDeviceNodeSelection` is required, but multiple fields are set"
    )
    obj["spec"].update(nodeName="", allNodes=False)
    found = messages(obj)
    assert found[("spec", "nodeName")] == ['Invalid value: "": must be either unset or set to a non-empty string']
    assert found[("spec", "allNodes")] == ["Invalid value: false: must be either unset or set to true"]


def test_slice_node_selector_needs_exactly_one_valid_term():
    obj = resource_slice()
    del obj["spec"]["nodeName"]
    term = {"matchExpressions": [{"key": "rack", "operator": "In", "values": ["a"]}]}
    obj["spec"]["nodeSelector"] = {"nodeSelectorTerms": [term, term]}
    assert the_error(obj, ("spec", "nodeSelector", "nodeSelectorTerms")).endswith(": must have exactly one node selector term")
    obj["spec"]["nodeSelector"] = {"nodeSelectorTerms": []}
    assert messages(obj)[("spec", "nodeSelector", "nodeSelectorTerms")] == [
        "Required value: must have at least one node selector term",
        "Invalid value: []: must have exactly one node selector term",
    ]


@pytest.mark.parametrize(
    "requirement, where, message",
    [
        ({"key": "k", "operator": "In"}, "values", "Required value: must be specified when `operator` is 'In' or 'NotIn'"),
        (
            {"key": "k", "operator": "Exists", "values": ["a"]},
            "values",
            "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        ),
        (
            {"key": "k", "operator": "Gt", "values": ["1", "2"]},
            "values",
            "Required value: must be specified single value when `operator` is 'Lt' or 'Gt'",
        ),
        ({"key": "k", "operator": "Near", "values": ["a"]}, "operator", 'Invalid value: "Near": not a valid selector operator'),
    ],
)
def test_node_selector_requirement_operators_and_values(requirement, where, message):
    obj = resource_slice()
    del obj["spec"]["nodeName"]
    obj["spec"]["nodeSelector"] = {"nodeSelectorTerms": [{"matchExpressions": [requirement]}]}
    path = ("spec", "nodeSelector", "nodeSelectorTerms", 0, "matchExpressions", 0, where)
    assert the_error(obj, path) == message


def test_node_selector_match_fields_only_support_metadata_name():
    obj = resource_slice()
    del obj["spec"]["nodeName"]
    fields = [{"key": "metadata.uid", "operator": "In", "values": ["x"]}, {"key": "metadata.name", "operator": "Exists"}]
    obj["spec"]["nodeSelector"] = {"nodeSelectorTerms": [{"matchFields": fields}]}
    found = messages(obj)
    base = ("spec", "nodeSelector", "nodeSelectorTerms", 0, "matchFields")
    assert found[base + (0, "key")] == ['Invalid value: "metadata.uid": not a valid field selector key']
    assert found[base + (1, "operator")] == ['Invalid value: "Exists": not a valid selector operator']


def test_per_device_node_selection():
    obj = partitioned_slice()
    devices = obj["spec"]["devices"]
    message = (
        "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
        "`perDeviceNodeSelection` is set to true in the ResourceSlice spec"
    )
    del devices[1]["allNodes"]
    devices[0]["allNodes"] = True
    found = messages(obj)
    assert found[("spec", "devices", 0)] == [f'Invalid value: "{{`nodeName`, `allNodes`}}": {message}']
    assert found[("spec", "devices", 1)] == [f"Required value: {message}"]
    obj = resource_slice()
    slice_device(obj)["allNodes"] = True
    assert the_error(obj, ("spec", "devices", 0)) == (
        "Invalid value: null: `nodeName`, `nodeSelector` and `allNodes` can only be set if "
        "`perDeviceNodeSelection` is set to true in the ResourceSlice spec"
    )


def test_device_limit_is_128_or_64_with_advanced_features():
    obj = resource_slice()
    obj["spec"]["devices"] = [{"name": f"d{i}"} for i in range(128)]
    assert validate(obj) == []
    obj["spec"]["devices"].append({"name": "d128"})
    assert the_error(obj, ("spec", "devices")) == "Too many: 129: must have at most 128 items"
    for extra in (
        {"taints": [{"key": "k", "effect": "None"}]},
        {"consumesCounters": [{"counterSet": "s", "counters": {"c": {"value": "1"}}}]},
        {"attributes": {"models": {"strings": ["a"]}}},
    ):
        obj["spec"]["devices"] = [{"name": f"d{i}"} for i in range(65)]
        obj["spec"]["devices"][0].update(extra)
        assert the_error(obj, ("spec", "devices")) == "Too many: 65: must have at most 64 items"


def test_device_names_are_unique_dns_labels():
    obj = resource_slice()
    obj["spec"]["devices"][1]["name"] = "gpu-0"
    assert the_error(obj, ("spec", "devices", 1)) == 'Duplicate value: "gpu-0"'
    obj["spec"]["devices"][1]["name"] = "gpu.1"
    assert the_error(obj, ("spec", "devices", 1, "name")) == 'Invalid value: "gpu.1": must not contain dots'


def test_shared_counters_rules():
    obj = counter_slice()
    sets = obj["spec"]["sharedCounters"]
    sets.append({"name": "gpu-0", "counters": {}})
    found = messages(obj)
    assert found[("spec", "sharedCounters", 1, "counters")] == ["Required value"]
    # declarative (a list keyed by name): the whole entry as stored, empty counters left out
    assert found[("spec", "sharedCounters", 1)] == ['Duplicate value: {"name":"gpu-0"}']
    sets[1] = {"name": "Gpu", "counters": {f"c{i}": {"value": 1} for i in range(33)}}
    found = messages(obj)
    assert found[("spec", "sharedCounters", 1, "counters")] == ["Too many: 33: must have at most 32 items"]
    assert found[("spec", "sharedCounters", 1, "name")] == [f'Invalid value: "Gpu": {DNS_LABEL_DETAIL}']
    sets[:] = [{"name": f"s{i}", "counters": {"c": {"value": 1}}} for i in range(9)]
    assert the_error(obj, ("spec", "sharedCounters")) == "Too many: 9: must have at most 8 items"


def test_devices_and_shared_counters_exclude_each_other():
    obj = counter_slice()
    obj["spec"]["devices"] = []
    assert the_error(obj, ("spec",)) == 'Invalid value: "": only one of `sharedCounters` or `devices` is allowed'


def test_attribute_and_capacity_names_are_qualified_names():
    obj = resource_slice()
    attributes = slice_device(obj)["attributes"]
    attributes["/model"] = {"string": "x"}
    attributes["gpu.example.com/"] = {"string": "x"}
    attributes["bad_domain_/x"] = {"string": "x"}
    attributes["a" * 33] = {"int": 1}
    attributes["a/b/c"] = {"int": 1}
    found = messages(obj)[("spec", "devices", 0, "attributes")]
    assert 'Invalid value: "": the domain must not be empty' in found
    assert 'Invalid value: "": the name must not be empty' in found
    assert "Too long: may not be more than 32 bytes" in found
    assert 'Invalid value: "a/b/c": must not contain more than one slash' in found
    assert any(m.startswith('Invalid value: "bad_domain_": a lowercase RFC 1123 subdomain') for m in found)


def test_attributes_and_capacities_are_at_most_32_together():
    obj = resource_slice()
    device = slice_device(obj)
    device["attributes"] = {f"a{i}": {"int": i} for i in range(20)}
    device["capacity"] = {f"c{i}": {"value": i} for i in range(13)}
    assert the_error(obj, ("spec", "devices", 0)) == "Invalid value: 33: the total number of attributes and capacities must not exceed 32"


def test_attribute_value_is_exactly_one_of_eight_kinds():
    obj = resource_slice()
    attributes = slice_device(obj)["attributes"]
    attributes["model"] = {}
    path = ("spec", "devices", 0, "attributes", "model")
    assert the_error(obj, path) == (
        'Invalid value: "": must specify one of: `int`, `bool`, `string`, `version`, `ints`, `bools`, `strings`, `versions`'
    )
    attributes["model"] = {"string": "a", "int": 1}
    assert the_error(obj, path) == (
        'Invalid value: "{int, string}": must specify exactly one of: `int`, `bool`, `string`, `version`, `ints`, '
        '`bools`, `strings`, `versions`'
    )
    attributes["model"] = {"strings": []}
    assert the_error(obj, path + ("strings",)) == "Invalid value: []: must not be empty if specified"
    attributes["model"] = {"ints": [1, "2"], "bools": None}
    assert the_error(obj, path + ("ints", 1)) == 'Invalid value: "2": expected integer'


def test_string_and_version_values_are_limited_to_64_bytes_and_versions_are_semver():
    obj = resource_slice()
    attributes = slice_device(obj)["attributes"]
    attributes["model"] = {"string": "x" * 65}
    attributes["driverVersion"] = {"version": "v1.2"}
    attributes["versions"] = {"versions": ["1.0.0", "01.0.0"]}
    found = messages(obj)
    base = ("spec", "devices", 0, "attributes")
    assert found[base + ("model", "string")] == ["Too long: may not be more than 64 bytes"]
    assert found[base + ("driverVersion", "version")] == [
        'Invalid value: "v1.2": must be a string compatible with semver.org spec 2.0.0'
    ]
    assert found[base + ("versions", "versions", 1)] == [
        'Invalid value: "01.0.0": must be a string compatible with semver.org spec 2.0.0'
    ]


def test_attribute_values_are_at_most_48():
    obj = resource_slice()
    slice_device(obj)["attributes"] = {"list": {"ints": list(range(49))}}
    assert the_error(obj, ("spec", "devices", 0)) == "Invalid value: 49: the total number of attribute values must not exceed 48"


def test_counter_consumption_rules():
    obj = partitioned_slice()
    consumes = slice_device(obj)["consumesCounters"]
    consumes.append({"counterSet": "gpu-0", "counters": {}})
    found = messages(obj)
    base = ("spec", "devices", 0, "consumesCounters")
    # counters is `omitempty` in v1: the empty map is left out of the value shown (as kube-apiserver 1.37.2 shows it)
    assert found[base + (1,)] == ['Duplicate value: {"counterSet":"gpu-0"}']
    assert found[base + (1, "counters")] == ["Required value"]
    consumes[1] = {"counters": {"Memory": {"value": "1"}}}
    found = messages(obj)
    assert found[base + (1, "counterSet")] == ["Required value"]
    assert found[base + (1, "counters")] == [f'Invalid value: "Memory": {DNS_LABEL_DETAIL}']
    consumes.append({"counterSet": "c", "counters": {"a": {"value": 1}}})
    assert the_error(obj, base) == "Too many: 3: must have at most 2 items"


def test_compatibility_groups_are_at_most_two_unique_dns_labels():
    obj = partitioned_slice()
    consumption = slice_device(obj)["consumesCounters"][0]
    base = ("spec", "devices", 0, "consumesCounters", 0, "compatibilityGroups")
    consumption["compatibilityGroups"] = ["mig", "mig"]
    assert the_error(obj, base + (1,)) == 'Duplicate value: "mig"'
    consumption["compatibilityGroups"] = ["a", "a", "C"]  # over the limit, the size is the only error
    assert messages(obj) == {base: ["Too many: 3: must have at most 2 items"]}


def test_taint_rules():
    obj = resource_slice()
    taints = slice_device(obj)["taints"]
    base = ("spec", "devices", 0, "taints", 0)
    taints[0] = {"key": "k", "value": "v"}
    assert the_error(obj, base + ("effect",)) == "Required value"
    taints[0] = {"key": "k", "effect": "PreferNoSchedule"}
    assert the_error(obj, base + ("effect",)) == (
        'Unsupported value: "PreferNoSchedule": supported values: "NoExecute", "NoSchedule", "None"'
    )
    taints[0] = {"key": "", "value": "not valid!", "effect": "None", "timeAdded": "2026-01-01T00:00:00Z"}
    found = messages(obj)
    assert 'Invalid value: "": name part must be non-empty' in found[base + ("key",)]
    assert found[base + ("value",)][0].startswith('Invalid value: "not valid!": a valid label must be')
    taints[:] = [{"key": "k", "effect": "None"}] * 17
    assert the_error(obj, base[:-1]) == "Too many: 17: must have at most 16 items"


def test_binding_condition_rules():
    obj = resource_slice()
    device = slice_device(obj)
    base = ("spec", "devices", 0)
    device["bindingConditions"] = ["a", "a"]
    device["bindingFailureConditions"] = ["a"]
    found = messages(obj)
    assert found[base + ("bindingConditions", 1)] == ['Duplicate value: "a"']
    assert found[base + ("bindingFailureConditions", 0)] == [
        'Invalid value: "a": bindingFailureConditions must not overlap with bindingConditions'
    ]
    device["bindingConditions"] = ["a", "b", "c", "d", "e"]
    device["bindingFailureConditions"] = []
    found = messages(obj)
    assert found[base + ("bindingConditions",)] == ["Too many: 5: must have at most 4 items"]
    assert found[base + ("bindingFailureConditions",)] == [
        "Invalid value: []: bindingFailureConditions are required to use bindingConditions"
    ]
    device["bindingConditions"] = []
    device["bindingFailureConditions"] = ["x"]
    assert the_error(obj, base + ("bindingConditions",)) == (
        "Invalid value: []: bindingConditions are required to use bindingFailureConditions"
    )


def policy_slice(policy, value="10G"):
    obj = resource_slice()
    obj["spec"]["devices"][1]["capacity"] = {"bandwidth": {"value": value, "requestPolicy": policy}}
    return obj


POLICY = ("spec", "devices", 1, "capacity", "bandwidth", "requestPolicy")


def test_request_policy_requires_allow_multiple_allocations():
    obj = resource_slice()
    slice_device(obj)["capacity"]["memory"]["requestPolicy"] = {"default": "1Gi"}
    assert the_error(obj, ("spec", "devices", 0, "capacity", "memory", "requestPolicy")) == (
        "Forbidden: allowMultipleAllocations must be true"
    )


def test_request_policy_is_valid_values_or_valid_range_with_a_default():
    obj = policy_slice({"default": "1G", "validValues": ["1G"], "validRange": {"min": "1G"}})
    assert the_error(obj, POLICY) == (
        'Forbidden: exactly one policy can be specified, cannot specify "validValues" and "validRange" at the same time'
    )
    obj = policy_slice({"validValues": ["1G"]})
    assert the_error(obj, POLICY + ("default",)) == "Required value: required when validValues is defined"
    obj = policy_slice({"validRange": {"min": "1G"}})
    assert the_error(obj, POLICY + ("default",)) == "Required value: required when validRange is defined"
    obj = policy_slice({"default": "1G", "validRange": {"max": "2G"}})
    assert the_error(obj, POLICY + ("validRange", "min")) == "Required value: required when validRange is defined"


def test_valid_values_rules():
    obj = policy_slice({"default": "3G", "validValues": ["2G", "1G", "1G", "20G"]})
    found = messages(obj)
    base = POLICY + ("validValues",)
    assert found[base + (1,)] == ['Invalid value: "1G": values must be sorted in ascending order']
    assert found[base + (2,)] == ['Duplicate value: "1000000000"']
    assert found[base + (3,)] == ['Invalid value: "20G": option is larger than capacity value: 10G']
    assert found[base] == ['Invalid value: "3G": default value is not valid according to the requestPolicy']
    obj = policy_slice({"default": "1", "validValues": list(range(1, 12))}, value=100)
    assert messages(obj)[base] == [
        "Too many: 11: must have at most 10 items",
        'Invalid value: "1": default value is not valid according to the requestPolicy',
    ]


def test_valid_range_bounds():
    obj = policy_slice({"default": "500M", "validRange": {"min": "20G", "max": "15G"}})
    found = messages(obj)
    base = POLICY + ("validRange",)
    assert found[base + ("min",)] == ['Invalid value: "20G": min is larger than capacity value: 10G']
    assert found[base + ("default",)] == ['Invalid value: "500M": default is less than min: 20G']
    assert found[base + ("max",)] == [
        'Invalid value: "20G": min is larger than max: 15G',
        'Invalid value: "15G": max is larger than capacity value: 10G',
    ]
    obj = policy_slice({"default": "9G", "validRange": {"min": "1G", "max": "8G"}})
    assert the_error(obj, base + ("default",)) == 'Invalid value: "9G": default is more than max: 8G'


def test_valid_range_step_arithmetic_is_exact():
    base = POLICY + ("validRange", "step")
    obj = policy_slice({"default": "1G", "validRange": {"min": "1G", "step": "0"}})
    assert the_error(obj, base) == 'Invalid value: "0": must be greater than zero'
    obj = policy_slice({"default": "1G", "validRange": {"min": "6G", "step": "5G"}})
    assert "one step 11G is larger than capacity value: 10G" in messages(obj)[base][0]
    obj = policy_slice({"default": "2500M", "validRange": {"min": "1G", "max": "9G", "step": "1G"}})
    assert the_error(obj, base) == 'Invalid value: "2500M": value is not a multiple of a given step (1G) from (1G)'
    obj = policy_slice({"default": "2G", "validRange": {"min": "1G", "max": "9500M", "step": "1G"}})
    assert the_error(obj, base) == 'Invalid value: "9500M": value is not a multiple of a given step (1G) from (1G)'
    # Fractional ranges work in milli-units with DRAFractionalCapacityRange (off by default in 1.37:
    # then every value is read rounded up to an integer).
    fractional = FeatureGates((("DRAFractionalCapacityRange", True),))
    obj = policy_slice({"default": "1500m", "validRange": {"min": "500m", "step": "500m"}}, value="4")
    assert validate(obj, gates=fractional) == []
    obj = policy_slice({"default": "1600m", "validRange": {"min": "500m", "step": "500m"}}, value="4")
    assert the_error(obj, base, gates=fractional) == (
        'Invalid value: "1600m": value is not a multiple of a given step (500m) from (500m)')
    assert errors(obj) == []
    obj = policy_slice({"default": "1", "validRange": {"min": "1u", "step": "1"}}, value="4")
    assert the_error(obj, POLICY + ("validRange", "min"), gates=fractional) == (
        'Invalid value: "1u": value cannot be represented as a milli value')
    assert errors(obj) == []


def test_skip_node_operations_rules():
    obj = partitioned_slice()
    path = ("spec", "skipNodeOperations")
    obj["spec"]["skipNodeOperations"] = ["NodePrepareResources"]
    assert the_error(obj, path) == (
        'Invalid value: ["NodePrepareResources"]: NodePrepareResources cannot be skipped unless '
        "NodeUnprepareResources is also skipped"
    )
    obj["spec"]["skipNodeOperations"] = ["NodePrepareResources", "*"]
    assert validate(obj) == []
    obj["spec"]["skipNodeOperations"] = ["Everything", "*", "*"]
    found = messages(obj)
    assert found[path + (0,)] == [
        'Unsupported value: "Everything": supported values: "*", "NodePrepareResources", "NodeUnprepareResources"'
    ]
    assert found[path + (2,)] == ['Duplicate value: "*"']


def test_partition_type_attribute_needs_consuming_devices_with_a_string_attribute():
    obj = partitioned_slice()
    obj["spec"]["partitionTypeAttribute"] = "gpu.example.com/profile"
    slice_device(obj)["attributes"] = {"profile": {"string": "1g"}}  # bare name in the driver's domain
    slice_device(obj, 1)["attributes"] = {"gpu.example.com/profile": {"int": 1}}
    found = messages(obj)
    assert ("spec", "devices", 0, "attributes", "gpu.example.com/profile") not in found
    assert found[("spec", "devices", 1, "attributes", "gpu.example.com/profile")][0].endswith(
        "must be a string value because `partitionTypeAttribute` names this attribute"
    )
    obj = resource_slice()
    obj["spec"]["partitionTypeAttribute"] = "gpu.example.com/profile"
    assert the_error(obj, ("spec", "partitionTypeAttribute")).endswith(
        "may only be set on a slice which declares devices that consume counters"
    )


# -- rule 5: allocation results of already-allocated claims ------------------------


RESULTS = ("status", "allocation", "devices", "results")


def test_allocation_result_fields_are_required():
    claim = allocated_claim()
    claim["status"]["allocation"]["devices"]["results"][0] = {"adminAccess": "no"}
    found = messages(claim)
    for key in ("driver", "pool"):
        assert found[RESULTS + (0, key)] == ["Required value"]
    for key in ("request", "device"):  # an empty name is not a DNS label: Invalid, as upstream says
        assert found[RESULTS + (0, key)][0].startswith('Invalid value: "": a lowercase RFC 1123 label')
    assert found[RESULTS + (0, "adminAccess")] == ['Invalid value: "no": expected boolean']


def test_allocation_result_request_must_exist_in_the_claim():
    claim = allocated_claim()
    claim["status"]["allocation"]["devices"]["results"][0]["request"] = "nic/medium"
    assert the_error(claim, RESULTS + (0, "request")).startswith('Invalid value: "nic/medium": must be the name of a request')


def test_share_id_must_be_a_lowercase_uuid():
    claim = allocated_claim()
    result = claim["status"]["allocation"]["devices"]["results"][1]
    result["shareID"] = "8D6C3F0E-2B1A-4C5D-9E8F-0A1B2C3D4E5F"
    assert the_error(claim, RESULTS + (1, "shareID")).endswith(
        "uid must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase hexadecimal characters"
    )
    result["shareID"] = "share-1"
    assert the_error(claim, RESULTS + (1, "shareID")) == 'Invalid value: "share-1": error validating uid: invalid UUID length: 7'


def test_allocation_result_maps_lists_and_limits():
    claim = allocated_claim()
    result = claim["status"]["allocation"]["devices"]["results"][1]
    result["consumedCapacity"] = {"bandwidth": "much"}
    result["tolerations"] = [{"operator": "Maybe"}]
    result["bindingConditions"] = ["ready"]
    result["skipNodeOperations"] = ["NodePrepareResources"]
    found = messages(claim)
    assert found[RESULTS + (1, "consumedCapacity", "bandwidth")][0].startswith('Invalid value: "much": quantities must')
    assert found[RESULTS + (1, "tolerations", 0, "operator")][0].startswith('Unsupported value: "Maybe"')
    assert found[RESULTS + (1, "bindingFailureConditions")] == [
        "Invalid value: null: bindingFailureConditions are required to use bindingConditions"
    ]
    assert found[RESULTS + (1, "skipNodeOperations")][0].endswith(
        "NodePrepareResources cannot be skipped unless NodeUnprepareResources is also skipped"
    )
    claim = allocated_claim()
    claim["status"]["allocation"]["devices"]["results"] *= 17
    assert the_error(claim, RESULTS) == "Too many: 34: must have at most 32 items"


def test_allocation_node_selector_is_a_valid_node_selector():
    claim = allocated_claim()
    claim["status"]["allocation"]["nodeSelector"] = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name"}]}]}
    assert ("status", "allocation", "nodeSelector", "nodeSelectorTerms", 0, "matchFields", 0, "key") not in messages(claim)
    claim["status"]["allocation"]["nodeSelector"] = {"nodeSelectorTerms": "worker-1"}
    assert the_error(claim, ("status", "allocation", "nodeSelector", "nodeSelectorTerms")).endswith("expected array")


def test_allocation_config_source_must_be_known():
    claim = allocated_claim()
    claim["status"]["allocation"]["devices"]["config"][0]["source"] = "FromSomewhere"
    assert the_error(claim, ("status", "allocation", "devices", "config", 0, "source")) == (
        'Unsupported value: "FromSomewhere": supported values: "FromClaim", "FromClass"'
    )


# -- Node, Pod and List -----------------------------------------------------------------


def test_node_needs_a_dns_subdomain_name_valid_labels_and_string_features():
    obj = node()
    obj["metadata"]["name"] = "Worker_1"
    obj["metadata"]["labels"]["bad key!"] = "x"
    obj["status"]["declaredFeatures"].append(7)
    found = messages(obj)
    assert found[("metadata", "name")] == [f'Invalid value: "Worker_1": {DNS_SUBDOMAIN_DETAIL}']
    assert found[("metadata", "labels")][0].startswith('Invalid value: "bad key!": name part must consist of')
    assert found[("status", "declaredFeatures", 1)] == ["Invalid value: 7: expected string"]


def test_pod_resource_claims_need_a_name_and_exactly_one_source():
    obj = pod()
    claims = obj["spec"]["resourceClaims"]
    claims[0]["resourceClaimTemplateName"] = "one-gpu"
    claims[1] = {"name": "gpu"}
    claims.append({"resourceClaimName": "x"})
    found = messages(obj)
    base = ("spec", "resourceClaims")
    assert found[base + (0,)][0].endswith("at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified")
    assert found[base + (1, "name")] == ['Duplicate value: "gpu"']
    assert found[base + (1,)][0].endswith("must specify one of: `resourceClaimName`, `resourceClaimTemplateName`")
    assert found[base + (2, "name")] == ["Required value"]


def test_pod_node_name_node_selector_and_tolerations():
    obj = pod()
    obj["spec"]["nodeName"] = "Worker_1"
    obj["spec"]["nodeSelector"] = {"rack": ["a"]}
    obj["spec"]["tolerations"] = [{"operator": "Equal", "value": "x"}, {"key": "k", "effect": "NoSchedule", "tolerationSeconds": 3}]
    found = messages(obj)
    assert found[("spec", "nodeName")] == [f'Invalid value: "Worker_1": {DNS_SUBDOMAIN_DETAIL}']
    assert found[("spec", "nodeSelector", "rack")] == ['Invalid value: ["a"]: expected string']
    assert found[("spec", "tolerations", 0, "operator")] == [
        'Invalid value: "Equal": operator must be Exists when `key` is empty, which means "match all values and all keys"'
    ]
    assert found[("spec", "tolerations", 1, "effect")] == [
        "Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set"
    ]


def test_list_items_are_validated_with_item_paths():
    claim = resource_claim()
    exact(claim)["count"] = -1
    found = validate({"apiVersion": "v1", "kind": "List", "items": [device_class(), claim, "junk"]})
    assert [(p.path, p.message) for p in found] == [
        (("items", 1, "spec", "devices", "requests", 0, "exactly", "count"), "Invalid value: -1: must be greater than zero"),
        (("items", 2), 'Invalid value: "junk": expected object'),
    ]


# -- robustness -------------------------------------------------------------------------


def _garbage(rng, depth=0):
    choice = rng.randrange(10 if depth < 3 else 7)
    if choice == 0:
        return None
    if choice == 1:
        return rng.choice([0, -1, 1, 2**63, -(2**64), 7])
    if choice == 2:
        return rng.choice([0.5, 1.0, -3.25, float("inf"), float("nan")])
    if choice == 3:
        return rng.choice([True, False])
    if choice in (4, 5):
        return rng.choice(["", "x", "Bad Name", "a/b/c", "1 Gi", "4Gi", "-1", "*", "All", "In", "é" * 70, "a" * 300])
    if choice == 6:
        return {}
    if choice in (7, 8):
        return {rng.choice(["name", "value", "x", 1, None, True]): _garbage(rng, depth + 1) for _ in range(rng.randrange(3))}
    return [_garbage(rng, depth + 1) for _ in range(rng.randrange(4))]


def _positions(value, path=()):
    """Every path to a value inside a document (the document itself excluded)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield path + (key,)
            yield from _positions(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield path + (index,)
            yield from _positions(item, path + (index,))


def _replace(doc, path, new):
    target = doc
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = new


def test_random_garbage_in_every_field_position_never_raises():
    rng = random.Random(20260701)
    bases = [build() for build in ALL_BUILDERS]
    cel = lambda expression: ("invalid", "nope") if len(expression) % 3 == 0 else None  # noqa: E731
    variants = 0
    for base in bases:
        positions = list(_positions(base))
        for position in positions:
            for _ in range(4):
                doc = copy.deepcopy(base)
                _replace(doc, position, _garbage(rng))
                for problem in validate(doc, cel_check=cel):
                    assert isinstance(problem.message, str) and isinstance(problem.path, tuple)
                variants += 1
    for _ in range(2000):  # several positions at once, including new keys
        doc = copy.deepcopy(rng.choice(bases))
        for _ in range(rng.randrange(1, 6)):
            positions = list(_positions(doc))
            if not positions:
                break
            position = rng.choice(positions)
            try:
                _replace(doc, position, _garbage(rng))
            except (KeyError, IndexError, TypeError):
                continue
            if rng.random() < 0.3:
                parent = doc
                for part in position[:-1]:
                    parent = parent[part]
                if isinstance(parent, dict):
                    parent[rng.choice(["extra", "spec", "name", 5])] = _garbage(rng)
        validate(doc, cel_check=cel)
        variants += 1
    assert variants >= 3000


def test_self_referencing_yaml_anchors_do_not_loop():
    doc = yaml.safe_load(
        """
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaim
        metadata: {name: c, labels: &labels {a: *labels}}
        spec:
          devices:
            requests: &requests
            - {name: r, exactly: {deviceClassName: c, selectors: *requests}}
            config:
            - opaque: {driver: d.example.com, parameters: &params {self: *params}}
        """
    )
    found = messages(doc)
    assert found[("metadata", "labels", "a")] == ["Invalid value: {...}: expected string"]
    assert found[("spec", "devices", "config", 0, "opaque", "parameters")] == [
        'Invalid value: "<value omitted>": must be a valid JSON object'
    ]


def _realworld_documents():
    for path in sorted(glob.glob(os.path.join(REALWORLD, "**", "*"), recursive=True)):
        if not path.endswith((".yaml", ".yml")):
            continue
        try:
            with open(path, encoding="utf-8") as handle:
                documents = list(yaml.safe_load_all(handle))
        except (yaml.YAMLError, UnicodeDecodeError):
            continue  # Helm and Go templates are not YAML until rendered
        for document in documents:
            if isinstance(document, dict):
                yield path, document


@pytest.mark.skipif(not os.path.isdir(REALWORLD), reason="real-world corpus not available")
def test_real_world_manifests_validate_without_exceptions():
    checked = 0
    for path, document in _realworld_documents():
        problems = validate(document)
        assert all(isinstance(p, FieldError) for p in problems), path
        if document.get("kind") in ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate", "Node", "Pod", "List"):
            checked += 1
    assert checked > 50
