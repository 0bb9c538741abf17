"""Turning the picks of a successful search into `status.allocation`, as the scheduler writes it."""
from __future__ import annotations

from allocator.engine.allocate import Fatal
from allocator.engine.gates import STABLE, AllocatorFeatures
from allocator.engine.nodematch import single_node_selector
from allocator.engine.objects import Requirement, ResourceClaim


def _toleration(raw: dict) -> dict:
    """A request toleration as stored by the apiserver (operator defaults to Equal), in API field order."""
    out = {}
    for key in ("key", "operator", "value", "effect", "tolerationSeconds"):
        value = raw.get(key)
        if key == "operator" and not value:
            value = "Equal"
        if value not in (None, ""):
            out[key] = value
    return out


def _result_entry(pick, slice_, features: AllocatorFeatures) -> dict:
    rd, device = pick.rd, pick.device
    entry = {"request": rd.name, "driver": device.driver, "pool": device.pool, "device": device.name}
    if rd.request.admin_access:
        entry["adminAccess"] = True
    if rd.request.raw_tolerations:
        entry["tolerations"] = [_toleration(t) for t in rd.request.raw_tolerations]
    if features.device_binding:
        if device.binding_conditions:
            entry["bindingConditions"] = list(device.binding_conditions)
        if device.binding_failure_conditions:
            entry["bindingFailureConditions"] = list(device.binding_failure_conditions)
    if pick.share_id is not None:
        entry["shareID"] = pick.share_id
    if pick.consumed:
        entry["consumedCapacity"] = {name: str(amount) for name, amount in pick.consumed.items()}
    if slice_.skip_node_operations and features.experimental_variant:
        entry["skipNodeOperations"] = list(slice_.skip_node_operations)
    return entry


def _config(claim: ResourceClaim, picks, chosen_sub: dict, ci: int) -> list:
    """Class configs (FromClass) for each request's class, then matching claim configs (FromClaim)."""
    # The name each request is reported under (`req` or `req/sub`), in claim order.
    reported: list[tuple[str, str, object]] = []
    for ri, request in enumerate(claim.requests):
        if request.exactly is not None:
            reported.append((request.name, request.name, None))
        else:
            sub = request.first_available[chosen_sub.get((ci, ri), 0)]
            reported.append((request.name, f"{request.name}/{sub.name}", sub))

    class_of = {}
    for pick in picks:
        class_of.setdefault(pick.rd.request_index, pick.rd.device_class)

    config: list[dict] = []
    entries_by_class: dict[str, list[dict]] = {}
    for ri, (_, name, _) in enumerate(reported):
        device_class = class_of.get(ri)
        if device_class is None:
            continue
        if device_class.name in entries_by_class:
            for entry in entries_by_class[device_class.name]:
                entry["requests"].append(name)
            continue
        produced = []
        for item in device_class.config:
            entry = {"source": "FromClass", "requests": [name]}
            entry.update({k: v for k, v in item.items() if k != "requests"})
            produced.append(entry)
            config.append(entry)
        entries_by_class[device_class.name] = produced

    for item in claim.config:
        if not item.requests:
            config.append({"source": "FromClaim", **item.raw})
            continue
        listed = set(item.requests)
        if any(parent in listed or name in listed for parent, name, _ in reported):
            config.append({"source": "FromClaim", "requests": list(item.requests), **item.raw})

    for entry in config:
        requests = entry.get("requests")
        if requests is None:
            continue
        listed = set(requests)
        if all(parent in listed or name in listed for parent, name, _ in reported):
            del entry["requests"]
    # Kubernetes writes `source` and `requests` before the driver-specific part.
    return [_ordered(entry) for entry in config]


def _ordered(entry: dict) -> dict:
    out = {"source": entry["source"]}
    if "requests" in entry:
        out["requests"] = entry["requests"]
    out.update({k: v for k, v in entry.items() if k not in ("source", "requests")})
    return out


def _node_selector(picks, slice_of, node_name: str, claim_name: str, features: AllocatorFeatures) -> dict | None:
    """One accumulated term from the slices' (or devices') selectors; a node name pins the node."""
    fields: list[Requirement] = []
    expressions: list[Requirement] = []
    for pick in picks:
        device = pick.device
        s = slice_of(device)
        if s.per_device_node_selection:
            node, selector = device.node_name, device.node_selector
        else:
            node, selector = s.node_name, s.node_selector
        # The stable allocator does not know bindsToNode: such a device does not pin the node.
        if node or (device.binds_to_node and features.variant != STABLE):
            return single_node_selector(node_name)
        if selector is not None and selector.terms:
            if len(selector.terms) != 1:
                raise Fatal(f"create NodeSelector for claim {claim_name}: unsupported "
                            f"ResourceSlice.NodeSelector with {len(selector.terms)} terms")
            term = selector.terms[0]
            for source, target in ((term.match_fields, fields), (term.match_expressions, expressions)):
                for req in source:
                    if not any(req.same_as(have) for have in target):
                        target.append(req)
    term = {}
    if expressions:
        term["matchExpressions"] = [r.as_dict() for r in expressions]
    if fields:
        term["matchFields"] = [r.as_dict() for r in fields]
    return {"nodeSelectorTerms": [term]} if term else None


def build_allocation(allocator, ci: int) -> dict:
    """`status.allocation` for claim ci of a successful search (built once, then reused)."""
    built = allocator.allocations.get(ci)
    if built is not None:
        return built
    claim = allocator.claims[ci]
    picks = allocator.results[ci]

    def slice_of(device):
        return allocator.slice_of_device[id(device)]

    allocation: dict = {
        "devices": {
            "results": [_result_entry(p, slice_of(p.device), allocator.features) for p in picks],
        }
    }
    config = _config(claim, picks, allocator.selected_sub, ci)
    if config:
        allocation["devices"]["config"] = config
    selector = _node_selector(picks, slice_of, allocator.node.name, claim.name, allocator.features)
    if selector is not None:
        allocation["nodeSelector"] = selector
    allocator.allocations[ci] = allocation
    return allocation
