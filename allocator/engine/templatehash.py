"""pod-template-hash as kube-controller-manager 1.37.2 computes it for a Deployment's pods.

The Deployment controller hashes the pod template it reads from the apiserver: the template as
created (decoded into the apps/v1 types, the apiserver's defaults applied, fields of disabled gates
dropped, stored and read back as protobuf), printed by go-spew in the form k8s.io/utils' dump gives
for hashing (every field of the Go struct in declaration order, with its Go type), run through
FNV-32a with the Deployment's collision count after it, and the decimal digits of the sum written
in the apiserver's safe alphabet.

The Go field order and types come from `podtemplate_types.json`, printed by the podhash oracle's
`--types` (tests/kube/cmd/podhash). What is reproduced exactly: every field of that tree, the
defaults the apiserver gives a Deployment's template, and quantities whose value fits the int64
form. What is not: a template created under gates that drop one of its fields (other than
spec.schedulingGroup and spec.resources, which are dropped as the gates say), a quantity that needs
the big-decimal form, a creation timestamp, or a value of the wrong JSON type. Then `TemplateHash.exact` is False and
the hash is this module's best effort: the page marks names that carry it.
"""
from __future__ import annotations

import copy
import functools
import json
import re
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

_TYPES_FILE = Path(__file__).with_name("podtemplate_types.json")
_SAFE = "bcdfghjklmnpqrstvwxz2456789"  # the apiserver's alphabet (rand.SafeEncodeString)

# Keys a feature gate guards somewhere in a pod template, and the gates that keep each on create (the
# apiserver drops the key when one is off). Created under gates that keep it, or read as stored, the
# key is hashed like any other; dropped, the template is hashed but not vouched for (a drop may clear
# more than the key). None: a key whose gate this module does not know.
GATED_KEYS = {
    "hostUsers": ("UserNamespacesSupport",), "hostnameOverride": ("HostnameOverride",),
    "resizePolicy": ("InPlacePodVerticalScaling",), "restartPolicyRules": ("ContainerRestartRules",),
    "stopSignal": ("ContainerStopSignals",), "fileKeyRef": ("EnvFiles",), "recursiveReadOnly": ("RecursiveReadOnlyMounts",),
    "procMount": ("ProcMountType",), "supplementalGroupsPolicy": ("SupplementalGroupsPolicy",),
    "nodeAffinityPolicy": ("NodeInclusionPolicyInPodTopologySpread",),
    "nodeTaintsPolicy": ("NodeInclusionPolicyInPodTopologySpread",),
    "matchLabelKeys": ("MatchLabelKeysInPodAffinity", "MatchLabelKeysInPodTopologySpread"),
    "mismatchLabelKeys": ("MatchLabelKeysInPodAffinity",), "clusterTrustBundle": ("ClusterTrustBundleProjection",),
    "podCertificate": ("PodCertificateRequest",), "image": ("ImageVolume",),
    "evictionResponders": None, "envFiles": None, "userNamespace": None, "seLinuxChangePolicy": None,
}
_NOT_GATED_AT = {"image": ("containers", "initContainers", "ephemeralContainers")}  # a container's image is plain


class Inexact(ValueError):
    """The template holds something this module does not reproduce exactly."""


@dataclass(frozen=True)
class TemplateHash:
    value: str
    exact: bool
    why: str = ""  # when not exact: what is not reproduced


@functools.lru_cache(maxsize=1)
def _types() -> dict:
    return json.loads(_TYPES_FILE.read_text())


# --- the hash ---------------------------------------------------------------------------------


def fnv32a(data: bytes) -> int:
    value = 0x811C9DC5
    for byte in data:
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


def safe_encode(text: str) -> str:
    return "".join(_SAFE[ord(ch) % len(_SAFE)] for ch in text)


def pod_template_hash(template: dict, collision_count: int | None = None, *, gates=None) -> TemplateHash:
    """The hash of a Deployment's `spec.template` (JSON form): created under the apiserver's `gates`
    (fields of disabled gates dropped), or with `gates=None` read as stored (nothing dropped)."""
    text, why = _rendered(template, gates, dump_for_hash)
    data = text.encode()
    if collision_count is not None:  # eight bytes: the count's four, little-endian, then four zeros
        data += int(collision_count & 0xFFFFFFFF).to_bytes(4, "little") + bytes(4)
    return TemplateHash(safe_encode(str(fnv32a(data))), not why, why)


def _rendered(template: dict, gates, render) -> tuple[str, str]:
    """(what is hashed, why it is only an estimate): `render` of the template as created, or, where
    this module cannot vouch for that, a stable JSON form of the template as given."""
    try:
        return render(created_template(template, gates=gates)), ""
    except (Inexact, ArithmeticError) as exc:
        why = str(exc) if isinstance(exc, Inexact) else "a quantity beyond the int64 form"
        return json.dumps(_string_keys(template), sort_keys=True, separators=(",", ":"), default=str), why


def _string_keys(value):
    """The value with every mapping key a string (YAML allows others), for a stable JSON form."""
    if isinstance(value, dict):
        return {str(k): _string_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_string_keys(v) for v in value]
    return value


# --- the template as the apiserver stores it ------------------------------------------------------


def _check_gated(value, gates, path: tuple = ()) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if key in GATED_KEYS and item is not None and not (
                    key in _NOT_GATED_AT and len(path) >= 2 and path[-2] in _NOT_GATED_AT[key]):
                needed = GATED_KEYS[key]
                if needed is None or not all(gates.enabled(g) for g in needed):
                    where = ".".join(map(str, path + (key,)))
                    raise Inexact(f"the template sets {where}, which the apiserver drops with "
                                  f"{' or '.join(needed) if needed else 'a feature gate'} off")
            _check_gated(item, gates, path + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check_gated(item, gates, path + (i,))


def created_template(template: dict, *, gates=None) -> dict:
    """The template with the apiserver's defaults for a Deployment (SetObjectDefaults_Deployment)
    and, given `gates`, their drops applied; raises Inexact where it cannot vouch for the result."""
    t = copy.deepcopy(template)
    if not isinstance(t, dict) or not isinstance(t.get("spec"), dict):
        raise Inexact("the template has no spec")
    meta = t.get("metadata")
    if isinstance(meta, dict) and meta.get("creationTimestamp") is not None:
        raise Inexact("the template sets metadata.creationTimestamp")
    spec = t["spec"]
    if gates is not None:  # created under these gates; without them the template is as stored, nothing dropped
        _check_gated(spec, gates, ("spec",))
        if not gates.enabled("DynamicResourceAllocation") and (spec.get("resourceClaims") or any(
                (_dict(c, "resources") or {}).get("claims") for c in _list(spec, "containers") + _list(spec, "initContainers"))):
            raise Inexact("DynamicResourceAllocation is off: the apiserver drops the template's claims")
        if not gates.enabled("GenericWorkload"):
            spec.pop("schedulingGroup", None)
        if not gates.enabled("PodLevelResources"):
            spec.pop("resources", None)

    # SetDefaults_PodSpec
    if not spec.get("serviceAccountName"):
        spec["serviceAccountName"] = spec.get("serviceAccount") or ""
    spec["serviceAccount"] = spec["serviceAccountName"]
    for key, value in (("dnsPolicy", "ClusterFirst"), ("restartPolicy", "Always"), ("schedulerName", "default-scheduler")):
        if not spec.get(key):
            spec[key] = value
    if spec.get("securityContext") is None:
        spec["securityContext"] = {}
    if spec.get("terminationGracePeriodSeconds") is None:
        spec["terminationGracePeriodSeconds"] = 30

    for volume in _list(spec, "volumes"):
        _default_volume(volume)
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for container in _list(spec, key):
            _default_container(container)
    if isinstance(spec.get("overhead"), dict):
        spec["overhead"] = _round_list(spec["overhead"])
    if isinstance(spec.get("resources"), dict):
        _round_resources(spec["resources"])
    return t


def _list(holder: dict, key: str) -> list:
    value = holder.get(key)
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _dict(holder: dict, key: str) -> dict | None:
    value = holder.get(key)
    return value if isinstance(value, dict) else None


def image_tag(image: str) -> str:
    """The tag ParseImageName finds: none and no digest is "latest"."""
    name, _, digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    tag = last.rpartition(":")[2] if ":" in last else ""
    return "latest" if not tag and not digest else tag


def _default_container(c: dict) -> None:
    if not c.get("imagePullPolicy"):
        c["imagePullPolicy"] = "Always" if image_tag(str(c.get("image") or "")) == "latest" else "IfNotPresent"
    if not c.get("terminationMessagePath"):
        c["terminationMessagePath"] = "/dev/termination-log"
    if not c.get("terminationMessagePolicy"):
        c["terminationMessagePolicy"] = "File"
    for port in _list(c, "ports"):
        if not port.get("protocol"):
            port["protocol"] = "TCP"
    for env in _list(c, "env"):
        source = _dict(env, "valueFrom")
        if source and _dict(source, "fieldRef") is not None and not source["fieldRef"].get("apiVersion"):
            source["fieldRef"]["apiVersion"] = "v1"
    if isinstance(c.get("resources"), dict):
        _round_resources(c["resources"])
    for key in ("livenessProbe", "readinessProbe", "startupProbe"):
        probe = _dict(c, key)
        if probe is None:
            continue
        for field_, value in (("timeoutSeconds", 1), ("periodSeconds", 10), ("successThreshold", 1), ("failureThreshold", 3)):
            if not probe.get(field_):
                probe[field_] = value
        if _dict(probe, "httpGet") is not None:
            _default_http_get(probe["httpGet"])
        if _dict(probe, "grpc") is not None and probe["grpc"].get("service") is None:
            probe["grpc"]["service"] = ""
    lifecycle = _dict(c, "lifecycle") or {}
    for key in ("postStart", "preStop"):
        handler = _dict(lifecycle, key)
        if handler and _dict(handler, "httpGet") is not None:
            _default_http_get(handler["httpGet"])


def _default_http_get(action: dict) -> None:
    if not action.get("path"):
        action["path"] = "/"
    if not action.get("scheme"):
        action["scheme"] = "HTTP"


_VOLUME_SOURCES = (
    "hostPath", "emptyDir", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "secret", "nfs", "iscsi",
    "glusterfs", "persistentVolumeClaim", "rbd", "flexVolume", "cinder", "cephfs", "flocker", "downwardAPI", "fc",
    "azureFile", "configMap", "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk", "projected",
    "portworxVolume", "scaleIO", "storageos", "csi", "ephemeral", "image",
)


def _default_volume(v: dict) -> None:
    if all(v.get(key) is None for key in _VOLUME_SOURCES):
        v["emptyDir"] = {}
    if _dict(v, "hostPath") is not None and v["hostPath"].get("type") is None:
        v["hostPath"]["type"] = ""
    for key in ("secret", "configMap", "downwardAPI", "projected"):
        if _dict(v, key) is not None and v[key].get("defaultMode") is None:
            v[key]["defaultMode"] = 420
    if _dict(v, "iscsi") is not None and not v["iscsi"].get("iscsiInterface"):
        v["iscsi"]["iscsiInterface"] = "default"
    rbd = _dict(v, "rbd")
    if rbd is not None:
        for key, value in (("pool", "rbd"), ("user", "admin"), ("keyring", "/etc/ceph/keyring")):
            if not rbd.get(key):
                rbd[key] = value
    for item in _list(_dict(v, "downwardAPI") or {}, "items"):
        _default_field_ref(item)
    disk = _dict(v, "azureDisk")
    if disk is not None:
        for key, value in (("cachingMode", "ReadWrite"), ("fsType", "ext4"), ("readOnly", False), ("kind", "Shared")):
            if disk.get(key) is None:
                disk[key] = value
    for source in _list(_dict(v, "projected") or {}, "sources"):
        for item in _list(_dict(source, "downwardAPI") or {}, "items"):
            _default_field_ref(item)
        token = _dict(source, "serviceAccountToken")
        if token is not None and token.get("expirationSeconds") is None:
            token["expirationSeconds"] = 3600
    scale = _dict(v, "scaleIO")
    if scale is not None:
        for key, value in (("storageMode", "ThinProvisioned"), ("fsType", "xfs")):
            if not scale.get(key):
                scale[key] = value
    claim = _dict(_dict(v, "ephemeral") or {}, "volumeClaimTemplate")
    if claim is not None and _dict(claim, "spec") is not None:
        pvc = claim["spec"]
        if not pvc.get("volumeMode"):
            pvc["volumeMode"] = "Filesystem"
        if isinstance(pvc.get("resources"), dict):
            _round_resources(pvc["resources"])


def _default_field_ref(item: dict) -> None:
    ref = _dict(item, "fieldRef")
    if ref is not None and not ref.get("apiVersion"):
        ref["apiVersion"] = "v1"


def _round_resources(resources: dict) -> None:
    for key in ("limits", "requests"):
        if isinstance(resources.get(key), dict):
            resources[key] = _round_list(resources[key])


def _round_list(values: dict) -> dict:
    """SetDefaults_ResourceList: every quantity rounded up to milli units."""
    from allocator.engine.quantity import Quantity, QuantityError

    out = {}
    for name, raw in values.items():
        try:
            q = Quantity.parse(raw)
        except QuantityError:
            raise Inexact(f"{raw!r} is not a quantity") from None
        value = q.value
        exponent = value.as_tuple().exponent
        if isinstance(exponent, int) and exponent < -3:  # finer than milli: up, away from zero
            scaled = value.scaleb(3)
            whole = int(scaled)
            if whole != scaled:
                whole += 1 if value > 0 else -1
            value = Decimal(whole).scaleb(-3)
        out[name] = Quantity(value, q.format)
    return out


# --- go-spew's "%#v" of the Go value -----------------------------------------------------------


_SUFFIX_EXP = {"": 0, "n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_SUFFIX_BIN = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_NUMBER = re.compile(r"^([+-]?)(\d*)(?:\.(\d*))?(.*)$")


def quantity_fields(canonical: str) -> dict:
    """resource.Quantity's fields after ParseQuantity of its stored (canonical) string, the int64 form only."""
    if canonical == "0":
        return {"i": {"value": 0, "scale": 0}, "d": {"Dec": None}, "s": "0", "Format": "DecimalSI"}
    sign, whole, fraction, suffix = _NUMBER.match(canonical).groups()
    num, denom = whole.lstrip("0") or "0", fraction or ""
    if suffix in _SUFFIX_BIN:
        fmt, exponent = "BinarySI", _SUFFIX_BIN[suffix]
    elif suffix in _SUFFIX_EXP:
        fmt, exponent = "DecimalSI", _SUFFIX_EXP[suffix]
    elif re.fullmatch(r"[eE][+-]?\d+", suffix):
        fmt, exponent = "DecimalExponent", int(suffix[1:])
    else:
        raise Inexact(f"quantity {canonical}")
    if fmt == "BinarySI":
        if denom:
            raise Inexact(f"quantity {canonical}")
        precision = 15 - len(num) - int(exponent * 3 / 10) - 1
        mantissa, scale = 1 << exponent, 0
    else:
        precision = 18 - (len(num) + len(denom))
        mantissa, scale = 1, exponent
    if precision < 0:
        raise Inexact(f"quantity {canonical}")
    scale -= len(denom)
    if scale < -9:
        raise Inexact(f"quantity {canonical}")
    shifted = num + denom
    value = int(shifted) * mantissa
    if value >= 2**63:
        raise Inexact(f"quantity {canonical}")
    if sign == "-":
        value = -value
    if fmt == "BinarySI":
        cached = exponent % 10 == 0 and (int(shifted) & 7) != 0
    else:
        cached = scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"
    return {"i": {"value": value, "scale": scale}, "d": {"Dec": None}, "s": canonical if cached else "",
            "Format": fmt}


def _go_value(value, type_name: str, types: dict, path: str, as_json: bool = False):
    """A JSON value as the Go value of `type_name` holds it (after a protobuf round trip: empty lists
    and maps are nil): dicts by Go field name, None for nil; or, `as_json`, what encoding/json writes
    for that Go value (fields by JSON name, empty `omitempty` ones left out, embedded structs inline)."""
    t = types[type_name]
    kind = t["kind"]
    if type_name == "resource.Quantity":
        from allocator.engine.quantity import Quantity, QuantityError
        if value is None:
            value = "0"
        try:
            q = value if isinstance(value, Quantity) else Quantity.parse(value)
        except QuantityError:
            raise Inexact(f"{path}: not a quantity") from None
        fields = quantity_fields(str(q))  # raises Inexact beyond the int64 form
        return str(q) if as_json else fields
    if type_name == "intstr.IntOrString":
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            if value is None:
                return 0 if as_json else {"Type": 0, "IntVal": 0, "StrVal": ""}
            raise Inexact(f"{path}: not an int or a string")
        if as_json:
            return _go_int(value, path) if isinstance(value, int) else value
        return {"Type": 0, "IntVal": value, "StrVal": ""} if isinstance(value, int) else \
            {"Type": 1, "IntVal": 0, "StrVal": value}
    if type_name == "v1.Time":
        if value is not None:
            raise Inexact(f"{path}: a time")
        return None if as_json else {"Time": {"wall": 0, "ext": 0, "loc": None}}
    if kind == "ptr":
        return None if value is None else _go_value(value, t["elem"], types, path, as_json)
    if kind == "slice":
        if value is None or value == []:  # protobuf keeps no empty list
            return None
        if not isinstance(value, list) or as_json and types[t["elem"]]["kind"] == "uint8":
            raise Inexact(f"{path}: not a list")
        return [_go_value(item, t["elem"], types, f"{path}[{i}]", as_json) for i, item in enumerate(value)]
    if kind == "map":
        if value is None or value == {}:
            return None
        if not isinstance(value, dict):
            raise Inexact(f"{path}: not an object")
        return {str(k): _go_value(v, t["elem"], types, f"{path}.{k}", as_json) for k, v in value.items()}
    if kind == "struct":
        if value is None:
            value = {}
        if not isinstance(value, dict):
            raise Inexact(f"{path}: not an object")
        out = {}
        for f in t["fields"]:
            field_kind = types[f["type"]]["kind"]
            if as_json and f["json"] == "-":
                continue
            if not f["json"] and field_kind == "struct":  # an embedded struct: its fields are the holder's
                inner = _go_value(value, f["type"], types, path, as_json)
                if as_json:
                    out.update(inner)
                else:
                    out[f["name"]] = inner
                continue
            key = f["json"] or f["name"]
            item = _go_value(value.get(key), f["type"], types, f"{path}.{key}", as_json)
            if as_json and (f.get("omitzero") and item is None or f.get("omitempty") and _empty(item, field_kind)):
                continue
            out[key if as_json else f["name"]] = item
        return out
    if kind == "string":
        if value is None:
            return ""
        if not isinstance(value, str):
            raise Inexact(f"{path}: not a string")
        return value
    if kind == "bool":
        if value is None:
            return False
        if not isinstance(value, bool):
            raise Inexact(f"{path}: not a boolean")
        return value
    if kind.startswith(("int", "uint")):
        if value is None:
            return 0
        if isinstance(value, bool) or not isinstance(value, int):
            raise Inexact(f"{path}: not an integer")
        return _go_int(value, path) if as_json else value
    raise Inexact(f"{path}: a {kind}")


def _spew(value, type_name: str, types: dict, typed: bool, out: list) -> None:
    t = types[type_name]
    kind = t["kind"]
    if kind == "ptr":
        if value is None:
            out.append(f"({type_name})<nil>" if typed else "<nil>")
            return
        out.append(f"({type_name})" if typed else "<*>")
        _spew(value, t["elem"], types, False, out)
        return
    if typed:
        out.append(f"({type_name})")
    if kind in ("slice", "map") and value is None:
        out.append("<nil>")
    elif kind == "slice":
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(" ")
            _spew(item, t["elem"], types, False, out)
        out.append("]")
    elif kind == "map":
        out.append("map[")
        for i, key in enumerate(sorted(value, key=lambda k: k.encode())):
            if i:
                out.append(" ")
            _spew(key, t["key"], types, False, out)
            out.append(":")
            _spew(value[key], t["elem"], types, False, out)
        out.append("]")
    elif kind == "struct":
        out.append("{")
        for i, f in enumerate(t["fields"]):
            if i:
                out.append(" ")
            out.append(f"{f['name']}:")
            _spew(value[f["name"]], f["type"], types, True, out)
        out.append("}")
    elif kind == "bool":
        out.append("true" if value else "false")
    else:
        out.append(str(value))


def dump_for_hash(template: dict) -> str:
    """The template (as created_template gives it) as k8s.io/utils' dump.ForHash prints the Go value."""
    tree = _types()
    types, root = tree["types"], tree["root"]
    out: list = []
    _spew(_go_value(template, root, types, "template"), root, types, True, out)
    return "".join(out)


# --- controller-revision-hash -------------------------------------------------------------------
#
# A DaemonSet names its ControllerRevision `<ds>-<hash>` with the same ComputeHash over its template
# as a Deployment, and labels its pods with that hash. A StatefulSet's revision is made by
# history.NewControllerRevision: FNV-32 (not 32a) over the controller's patch, the JSON
# `{"spec":{"template":{...,"$patch":"replace"}}}` as Go's encoding/json writes the template (fields
# by their JSON tags, empty `omitempty` ones left out, keys sorted because the controller re-marshals
# a generic map), then the collision count's decimal digits (0 when the status has none); the pods'
# label is the revision's name, `<set>-<hash>`.


def fnv32(data: bytes) -> int:
    value = 0x811C9DC5
    for byte in data:
        value = ((value * 0x01000193) & 0xFFFFFFFF) ^ byte
    return value


def controller_revision_hash(kind: str, name: str, template: dict, collision_count: int | None = None, *,
                             gates=None) -> TemplateHash:
    """The `controller-revision-hash` label of a DaemonSet's or a StatefulSet's pods (see above)."""
    if kind == "DaemonSet":
        return pod_template_hash(template, collision_count, gates=gates)
    text, why = _rendered(template, gates, statefulset_patch)
    data = text.encode() + str(collision_count or 0).encode()
    return TemplateHash(f"{name[:223]}-{safe_encode(str(fnv32(data)))}", not why, why)


def statefulset_patch(template: dict) -> str:
    """The StatefulSet controller's patch of `spec.template` (as created_template gives it)."""
    tree = _types()
    body = _go_value(template, tree["root"], tree["types"], "template", as_json=True)
    body["$patch"] = "replace"
    text = json.dumps({"spec": {"template": body}}, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                          ("\u2029", "\\u2029")):
        text = text.replace(char, escaped)
    return text


def _empty(value, kind: str) -> bool:
    """Whether encoding/json's omitempty leaves out this value of a field of this Go kind: a nil
    pointer, an empty list, map or string, false, zero; never a struct."""
    if kind == "ptr":
        return value is None
    if kind in ("slice", "map"):
        return value is None or value in ([], {})
    if kind == "string":
        return value == ""
    if kind == "bool":
        return value is False
    if kind.startswith(("int", "uint", "float")):
        return value == 0
    return False


def _go_int(value: int, path: str) -> int:
    """An integer the controller's generic-map round trip (through float64) keeps as it is."""
    if abs(value) >= 2**53:
        raise Inexact(f"{path}: an integer beyond float64's exact range")
    return value
