"""Older resource.k8s.io versions read as the apiserver serves them in v1.

Clusters still hand out `resource.k8s.io/v1beta1` and `v1beta2` objects (old
manifests, `kubectl get` against an older default version). The apiserver
converts between versions field by field; these are the moves that matter:

- v1beta1 requests keep the request fields (deviceClassName, selectors,
  allocationMode, count, adminAccess, tolerations, capacity) flat; v1 nests
  them under `exactly`. A request gets `exactly` when any of them is set.
- v1beta1 devices hold everything but the name in `basic`; v1 devices are flat.
- v1beta1 slices write "no node name" as `nodeName: ""` and `allNodes: false`;
  v1 leaves both unset.
- v1beta2 has the v1 shape already.

After conversion, validation sees the v1 form. `Conversion.source_path` maps a
field path of the v1 form back to where it is written in the input, so a
problem still points at the user's line.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

V1 = "resource.k8s.io/v1"
V1BETA1 = "resource.k8s.io/v1beta1"
V1BETA2 = "resource.k8s.io/v1beta2"
CONVERTIBLE = (V1BETA1, V1BETA2)
KINDS = ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate")

_REQUEST_STAYS = ("name", "firstAvailable")  # every other request field moves under `exactly`


@dataclass(frozen=True)
class Conversion:
    data: dict  # the object in v1 form (a copy; the input is not touched)
    source_version: str
    kind: str
    moves: tuple  # what the conversion moved, in words, for the warning
    unknown: tuple = ()  # paths (as written) of fields this version does not have, dropped

    def source_path(self, path: tuple) -> tuple:
        """The path of a v1 field in the object as written. Idempotent: a path that is already
        in the written form comes back unchanged."""
        path = tuple(path)
        if self.source_version != V1BETA1:
            return path
        if self.kind in ("ResourceClaim", "ResourceClaimTemplate"):
            prefix = ("spec", "devices", "requests") if self.kind == "ResourceClaim" else (
                "spec", "spec", "devices", "requests")
            n = len(prefix)
            if path[:n] == prefix and len(path) > n + 1 and path[n + 1] == "exactly":
                return path[:n + 1] + path[n + 2:]
            return path
        if self.kind == "ResourceSlice":
            if path[:2] == ("spec", "devices") and len(path) > 3 and isinstance(path[2], int):
                if path[3] not in ("name", "basic"):
                    return path[:3] + ("basic",) + path[3:]
            return path
        return path


def convertible(data: dict) -> bool:
    return data.get("apiVersion") in CONVERTIBLE and data.get("kind") in KINDS


def to_v1(data: dict) -> Conversion:
    """The object as resource.k8s.io/v1. Call only when `convertible(data)`."""
    version, kind = data["apiVersion"], data["kind"]
    out = copy.deepcopy(data)
    out["apiVersion"] = V1
    if version == V1BETA2:
        return Conversion(out, version, kind, ("same fields as v1",))
    moves: list[str] = []
    unknown: list[tuple] = []
    spec = out.get("spec")
    if kind == "ResourceClaim" and isinstance(spec, dict):
        if _claim_spec(spec, ("spec",), unknown):
            moves.append("request fields moved under `exactly`")
    elif kind == "ResourceClaimTemplate" and isinstance(spec, dict) and isinstance(spec.get("spec"), dict):
        if _claim_spec(spec["spec"], ("spec", "spec"), unknown):
            moves.append("request fields moved under `exactly`")
    elif kind == "ResourceSlice" and isinstance(spec, dict):
        if _slice_spec(spec, unknown):
            moves.append("`basic` device fields moved into the device")
    return Conversion(out, version, kind, tuple(moves) or ("same fields as v1",), tuple(unknown))


def _claim_spec(spec: dict, at: tuple, unknown: list) -> bool:
    devices = spec.get("devices")
    if not isinstance(devices, dict) or not isinstance(devices.get("requests"), list):
        return False
    moved = False
    for index, request in enumerate(devices["requests"]):
        if not isinstance(request, dict):
            continue
        if "exactly" in request:
            # v1beta1 has no such field: the apiserver drops it while decoding.
            unknown.append(at + ("devices", "requests", index, "exactly"))
            del request["exactly"]
        main = {k: v for k, v in request.items() if k not in _REQUEST_STAYS}
        if not main:
            continue
        for key in main:
            del request[key]
        if any(_is_set(k, v) for k, v in main.items()):
            request["exactly"] = main
            moved = True
    return moved


def _is_set(key: str, value) -> bool:
    """Go's zero values mean "not set": an empty string, a zero count, a missing list or pointer."""
    if value is None:
        return False
    if key in ("deviceClassName", "allocationMode"):
        return value != ""
    if key == "count":
        return value != 0
    return True


def _slice_spec(spec: dict, unknown: list) -> bool:
    if spec.get("nodeName") == "":
        del spec["nodeName"]
    if spec.get("allNodes") is False:
        del spec["allNodes"]
    devices = spec.get("devices")
    if not isinstance(devices, list):
        return False
    moved = False
    for index, device in enumerate(devices):
        if not isinstance(device, dict):
            continue
        for key in [k for k in device if k not in ("name", "basic")]:
            unknown.append(("spec", "devices", index, key))
            del device[key]
        basic = device.pop("basic", None)
        if isinstance(basic, dict):
            device.update(basic)
            moved = True
        elif basic is not None:
            device["basic"] = basic  # the wrong type: validation reports it where it is written
    return moved
