"""What a kube-apiserver with some DRA gates off keeps of an object when it is created.

Gated fields are silently cleared on create; objects already stored keep them
(ratcheting), which is how a scheduler can later meet fields it does not know.
The playground treats scenario objects as stored unless asked to replay their
creation under the apiserver's gates.
"""
from __future__ import annotations

import copy

from allocator.engine import apitypes
from allocator.engine.gates import FeatureGates

ATTRIBUTE_LIST_KINDS = ("ints", "bools", "strings", "versions")


class _Dropper:
    def __init__(self, gates: FeatureGates):
        self.on = gates.enabled
        self.dropped: list[tuple[tuple, str]] = []

    def drop(self, holder: dict, of: str, key: str, path: tuple, gate: str, *, only_if=None) -> None:
        """Clear field `key` of `holder`, a value of Go type `of` (a struct of apitypes.json)."""
        if not isinstance(holder, dict) or key not in holder:
            return
        value = holder[key]
        if only_if is not None and not only_if(value):
            return
        if value is None:
            return
        del holder[key]
        # An empty list or map is not stored either way: nothing lost. An empty object where the
        # Go type is a pointer to a struct (a request's capacity, a requestPolicy, a nodeSelector)
        # decodes to a value that the drop then clears: lost, as the apiserver sees it.
        if value != [] and (value != {} or apitypes.is_struct_pointer(apitypes.fields(of)[key])):
            self.dropped.append((path + (key,), gate))


def _dicts(items):
    return [(i, item) for i, item in enumerate(items or ()) if isinstance(item, dict)] if isinstance(items, list) else []


def _slice(d: _Dropper, spec: dict) -> None:
    base = ("spec",)
    if not d.on("DRAPartitionableDevices"):
        d.drop(spec, "ResourceSliceSpec", "sharedCounters", base, "DRAPartitionableDevices")
        d.drop(spec, "ResourceSliceSpec", "perDeviceNodeSelection", base, "DRAPartitionableDevices")
    if not d.on("DRAOptionalNodeOperations"):
        d.drop(spec, "ResourceSliceSpec", "skipNodeOperations", base, "DRAOptionalNodeOperations")
    binding = d.on("DRADeviceBindingConditions") and d.on("DRAResourceClaimDeviceStatus")
    for i, device in _dicts(spec.get("devices")):
        path = base + ("devices", i)
        if not d.on("DRAPartitionableDevices"):
            for key in ("consumesCounters", "nodeName", "nodeSelector", "allNodes"):
                d.drop(device, "Device", key, path, "DRAPartitionableDevices")
        elif not d.on("DRADeviceCompatibilityGroups"):
            for j, consumption in _dicts(device.get("consumesCounters")):
                d.drop(consumption, "DeviceCounterConsumption", "compatibilityGroups", path + ("consumesCounters", j),
                       "DRADeviceCompatibilityGroups")
        if not d.on("DRADeviceTaints"):
            d.drop(device, "Device", "taints", path, "DRADeviceTaints")
        if not binding:
            for key in ("bindingConditions", "bindingFailureConditions", "bindsToNode"):
                d.drop(device, "Device", key, path, "DRADeviceBindingConditions")
        if not d.on("DRAConsumableCapacity"):
            d.drop(device, "Device", "allowMultipleAllocations", path, "DRAConsumableCapacity")
            capacity = device.get("capacity")
            if isinstance(capacity, dict):
                for name, entry in capacity.items():
                    d.drop(entry, "DeviceCapacity", "requestPolicy", path + ("capacity", name), "DRAConsumableCapacity")
        if not d.on("DRANodeAllocatableResources"):
            d.drop(device, "Device", "nodeAllocatableResources", path, "DRANodeAllocatableResources")
        if not d.on("DRAListTypeAttributes"):
            attributes = device.get("attributes")
            if isinstance(attributes, dict):
                for name, value in attributes.items():
                    for kind in ATTRIBUTE_LIST_KINDS:
                        d.drop(value, "DeviceAttribute", kind, path + ("attributes", name), "DRAListTypeAttributes")


def _request(d: _Dropper, request: dict, path: tuple, *, subrequest: bool) -> None:
    of = "DeviceSubRequest" if subrequest else "ExactDeviceRequest"
    if not d.on("DRAConsumableCapacity"):
        d.drop(request, of, "capacity", path, "DRAConsumableCapacity")
    if not d.on("DRADeviceTaints"):
        d.drop(request, of, "tolerations", path, "DRADeviceTaints")
    if not d.on("DRADerivedAttributes"):
        d.drop(request, of, "derivedAttributes", path, "DRADerivedAttributes")
    if not subrequest and not d.on("DRAAdminAccess"):
        d.drop(request, of, "adminAccess", path, "DRAAdminAccess")


def _claim_spec(d: _Dropper, spec: dict, base: tuple) -> None:
    devices = spec.get("devices") if isinstance(spec, dict) else None
    if not isinstance(devices, dict):
        return
    for i, request in _dicts(devices.get("requests")):
        path = base + ("devices", "requests", i)
        if isinstance(request.get("exactly"), dict):
            _request(d, request["exactly"], path + ("exactly",), subrequest=False)
        if not d.on("DRAPrioritizedList"):
            d.drop(request, "DeviceRequest", "firstAvailable", path, "DRAPrioritizedList")
        for j, sub in _dicts(request.get("firstAvailable")):
            _request(d, sub, path + ("firstAvailable", j), subrequest=True)
    if not d.on("DRAConsumableCapacity"):
        for i, constraint in _dicts(devices.get("constraints")):
            d.drop(constraint, "DeviceConstraint", "distinctAttribute", base + ("devices", "constraints", i), "DRAConsumableCapacity")


# What the status update that writes an allocation drops while a gate is off (the claim was just
# created, so nothing of the feature is in use yet): result fields, by gate.
_STATUS_RESULT_FIELDS = (
    ("DRAConsumableCapacity", ("shareID", "consumedCapacity")),
    ("DRADeviceBindingConditions", ("bindingConditions", "bindingFailureConditions")),
    ("DRAOptionalNodeOperations", ("skipNodeOperations",)),
)


def _claim_status(d: _Dropper, status) -> None:
    allocation = status.get("allocation") if isinstance(status, dict) else None
    devices = allocation.get("devices") if isinstance(allocation, dict) else None
    results = devices.get("results") if isinstance(devices, dict) else None
    for gate, keys in _STATUS_RESULT_FIELDS:
        if d.on(gate):
            continue
        for i, result in _dicts(results):
            for key in keys:
                d.drop(result, "DeviceRequestAllocationResult", key, ("status", "allocation", "devices", "results", i), gate)


def drop_disabled_fields(data: dict, gates: FeatureGates) -> tuple[dict, list[tuple[tuple, str]]]:
    """A copy of the object as an apiserver with these gates would store it on create,
    and the (path, gate) of every field it dropped."""
    kind = data.get("kind")
    if kind not in ("ResourceSlice", "ResourceClaim", "ResourceClaimTemplate", "DeviceClass"):
        return data, []
    out = copy.deepcopy(data)
    dropper = _Dropper(gates)
    spec = out.get("spec")
    if not isinstance(spec, dict):
        return out, []
    if kind == "DeviceClass":
        if not dropper.on("DRAExtendedResource"):
            dropper.drop(spec, "DeviceClassSpec", "extendedResourceName", ("spec",), "DRAExtendedResource")
    elif kind == "ResourceSlice":
        _slice(dropper, spec)
    elif kind == "ResourceClaim":
        _claim_spec(dropper, spec, ("spec",))
    else:
        _claim_spec(dropper, spec.get("spec") or {}, ("spec", "spec"))
    if kind == "ResourceClaim":
        _claim_status(dropper, out.get("status"))
    return out, dropper.dropped
