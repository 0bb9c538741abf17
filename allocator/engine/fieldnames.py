"""What the editor offers to complete: the fields each kind knows, the scenario's own attribute names
and values, and the CEL functions of the selector environment.

The field sets are validation's own (the ones that raise unknown-field warnings), placed at the
paths where validation checks them, so the editor never offers a field the playground would warn
about. A path is the keys from the object's root, with `[]` for an item of a list.
"""
from __future__ import annotations

import re

from allocator.engine import validation as v
from allocator.engine.cel.functions import FUNCTIONS
from allocator.engine.cel.interpreter import DEVICE_FIELDS as DEVICE_FIELDS


def _under(prefix: str, tree: dict) -> dict:
    """`tree`'s paths below `prefix` (a path starting `[]` is the prefix's list items)."""
    return {(prefix + path if path.startswith("[") else f"{prefix}.{path}" if path else prefix): fields
            for path, fields in tree.items()}


_META = {"metadata": v._OBJECT_META_FIELDS}
_SELECTORS = {"[]": v._SELECTOR_FIELDS, "[].cel": v._CEL_FIELDS}  # a list of CEL selectors


def _config(fields: frozenset) -> dict:
    """A config list: its items' fields (the claim's, the class's or the allocation's), and their opaque part."""
    return {"[]": fields, "[].opaque": v._OPAQUE_FIELDS}


_NODE_SELECTOR = {
    "": v._NODE_SELECTOR_FIELDS,
    "nodeSelectorTerms[]": v._TERM_FIELDS,
    "nodeSelectorTerms[].matchExpressions[]": v._REQUIREMENT_FIELDS,
    "nodeSelectorTerms[].matchFields[]": v._REQUIREMENT_FIELDS,
}
_EXACT = {
    "": v._EXACT_FIELDS,
    **_under("selectors", _SELECTORS),
    "tolerations[]": v._TOLERATION_FIELDS,
    "capacity": v._CAPACITY_REQUIREMENTS_FIELDS,
    "derivedAttributes[]": v._DERIVED_FIELDS,
}


_SLICE = {
    "": v._TOP_FIELDS, **_META,
    "spec": v._SLICE_SPEC_FIELDS,
    "spec.pool": v._POOL_FIELDS,
    **_under("spec.nodeSelector", _NODE_SELECTOR),
    "spec.sharedCounters[]": v._COUNTER_SET_FIELDS,
    "spec.devices[]": v.DEVICE_FIELDS,
    "spec.devices[].attributes.*": frozenset(v._ATTRIBUTE_FIELDS),
    "spec.devices[].capacity.*": v._CAPACITY_FIELDS,
    "spec.devices[].capacity.*.requestPolicy": v._REQUEST_POLICY_FIELDS,
    "spec.devices[].capacity.*.requestPolicy.validRange": v._RANGE_FIELDS,
    "spec.devices[].consumesCounters[]": v._CONSUMPTION_FIELDS,
    "spec.devices[].consumesCounters[].counters.*": v._COUNTER_FIELDS,
    "spec.devices[].taints[]": v._TAINT_FIELDS,
    **_under("spec.devices[].nodeSelector", _NODE_SELECTOR),
    "spec.devices[].nodeAllocatableResources.*": v._NODE_ALLOCATABLE_FIELDS,
    "spec.devices[].nodeAllocatableResources.*.mapping": v._NODE_ALLOCATABLE_MAPPING_FIELDS,
    "spec.devices[].nodeAllocatableResources.*.overhead": v._NODE_ALLOCATABLE_OVERHEAD_FIELDS,
}
_CLAIM_SPEC = {
    "": v._CLAIM_SPEC_FIELDS,
    "devices": v._DEVICE_CLAIM_FIELDS,
    "devices.requests[]": v._REQUEST_FIELDS,
    **_under("devices.requests[].exactly", _EXACT),
    **_under("devices.requests[].firstAvailable[]", {**_EXACT, "": v._SUBREQUEST_FIELDS}),
    "devices.constraints[]": v._CONSTRAINT_FIELDS,
    **_under("devices.config", _config(v._CLAIM_CONFIG_FIELDS)),
}
_CLAIM = {
    "": v._TOP_FIELDS_WITH_STATUS, **_META,
    **_under("spec", _CLAIM_SPEC),
    "status.allocation": v._ALLOCATION_FIELDS,
    "status.allocation.devices": v._ALLOCATION_DEVICES_FIELDS,
    "status.allocation.devices.results[]": v._RESULT_FIELDS,
    **_under("status.allocation.devices.config", _config(v._ALLOCATION_CONFIG_FIELDS)),
}
_CLASS = {
    "": v._TOP_FIELDS, **_META,
    "spec": v._CLASS_SPEC_FIELDS,
    **_under("spec.selectors", _SELECTORS),
    **_under("spec.config", _config(v._CLASS_CONFIG_FIELDS)),
}
_TEMPLATE = {"": v._TOP_FIELDS, **_META, "spec": frozenset({"metadata", "spec"}), **_under("spec.spec", _CLAIM_SPEC)}

KIND_FIELDS = {
    "ResourceSlice": _SLICE,
    "ResourceClaim": _CLAIM,
    "DeviceClass": _CLASS,
    "ResourceClaimTemplate": _TEMPLATE,
}

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def field_names() -> dict:
    """{kind: {path: [field, ...]}} for the editor's field completion."""
    return {kind: {path: sorted(fields) for path, fields in tree.items()} for kind, tree in KIND_FIELDS.items()}


def cel_functions() -> dict:
    """The selector environment's named functions: `global` ones are called as `f(x)`, `member`
    ones as `x.f()`; operators (`_+_`, `!_`) are left out."""
    global_names, member_names = set(), set()
    for name, function in FUNCTIONS.items():
        if not _IDENTIFIER.match(name):
            continue
        for overload in function.overloads:
            (member_names if overload.member else global_names).add(name)
    # The macros are CEL's grammar, not functions of the environment.
    macros = ["all", "exists", "exists_one", "filter", "has", "map"]
    return {"global": sorted(global_names), "member": sorted(member_names), "macros": macros,
            "device": list(DEVICE_FIELDS)}


VALUES_SHOWN = 12


def scenario_words(scenario) -> dict:
    """The slices' own names for CEL: {"drivers": [...], "attributes": {domain: {name: {"kind", "values",
    "devices"}}}, "capacity": {domain: {name: {...}}}}. An attribute name written without a domain
    belongs to its driver's domain, as `device.attributes["<driver>"].<name>` reads it."""
    attributes: dict = {}
    capacity: dict = {}
    drivers: dict = {}
    for slice_ in scenario.slices:
        drivers[slice_.driver] = None
        for device in slice_.devices:
            for name, value in device.attributes.items():
                entry = _entry(attributes, device.driver, name)
                entry["kind"] = entry.get("kind") or value.kind
                _note(entry, _shown(value.value))
            for name, held in device.capacity.items():
                _note(_entry(capacity, device.driver, name), str(held.value))
    return {"drivers": list(drivers), "attributes": attributes, "capacity": capacity}


def _entry(table: dict, driver: str, name: str) -> dict:
    domain, _, short = name.rpartition("/")
    entry = table.setdefault(domain or driver, {}).setdefault(short, {"kind": None, "values": [], "devices": 0})
    entry["devices"] += 1
    return entry


def _note(entry: dict, shown: str) -> None:
    if shown not in entry["values"] and len(entry["values"]) < VALUES_SHOWN:
        entry["values"].append(shown)


def _shown(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_shown(item) for item in value) + "]"
    return str(value)
