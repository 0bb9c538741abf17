"""What the Kubernetes apiserver would reject, for the kinds a scenario holds.

`validate` takes one object exactly as YAML parsed it (plain dicts, lists and
scalars, any of which may be of the wrong type) and returns every problem as a
`FieldError` with a path relative to the object. Three layers, like the
apiserver:

1. decoding: a value of the wrong JSON type is an error at its path and is not
   looked into any further;
2. server-side field validation in "Warn" mode: a field the v1 types do not
   have is a warning;
3. the resource.k8s.io validation rules (names, limits, one-of fields, request
   policies, ...) with the apiserver's limits and message wording.

Defaults the apiserver applies before validating are honoured (an empty
allocation mode is ExactCount, count 0 becomes 1, an empty toleration operator
is Equal, metadata of cluster-scoped objects loses its namespace).
"""
from __future__ import annotations

import datetime
import json
import re
from dataclasses import dataclass

from . import apitypes
from .cel import MAX_EXPRESSION_LENGTH as CEL_EXPRESSION_MAX_LENGTH
from .cel.library import MAX_ATTRIBUTE_VALUE_LENGTH as ATTRIBUTE_VALUE_MAX_LENGTH
from .cel.library import MAX_ATTRIBUTE_VALUES as ATTRIBUTE_VALUES_MAX
from .gates import FeatureGates
from .problems import ERROR, WARNING, field_path
from .quantity import Quantity, QuantityError
from .semver import is_semver

# A time as Go's time.Parse(time.RFC3339, ...) takes it (metav1.Time's decoding): fractions allowed.
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})")

RESOURCE_API_VERSION = "resource.k8s.io/v1"
CORE_API_VERSION = "v1"

# API limits (resource.k8s.io/v1).
REQUESTS_MAX = 32
SUBREQUESTS_MAX = 8
CONSTRAINTS_MAX = 32
CONFIG_MAX = 32
ALLOCATION_CONFIG_MAX = 2 * CONFIG_MAX  # class and claim configuration
RESULTS_MAX = 32
RESERVED_FOR_MAX = 256
SELECTORS_MAX = 32
DERIVED_ATTRIBUTES_MAX = 32
TAINTS_MAX = 16  # a request's tolerations are documented as at most 16 too, but 1.37.2 checks no limit
DEVICES_MAX = 128
DEVICES_MAX_ADVANCED = 64  # with taints, counter consumption or list attributes
COUNTER_SETS_MAX = 8
COUNTERS_PER_SET_MAX = 32
CONSUMPTIONS_PER_DEVICE_MAX = 2
COUNTERS_PER_CONSUMPTION_MAX = 32
COMPATIBILITY_GROUPS_MAX = 2
ATTRIBUTES_AND_CAPACITIES_MAX = 32
BINDING_CONDITIONS_MAX = 4
VALID_VALUES_MAX = 10
OPAQUE_PARAMETERS_MAX_LENGTH = 10 * 1024
DRIVER_NAME_MAX_LENGTH = 63
POOL_NAME_MAX_LENGTH = 253
C_IDENTIFIER_MAX_LENGTH = 32
ANNOTATIONS_MAX_BYTES = 256 * 1024
_INT64_MAX = 2**63 - 1
_INT64_MIN = -(2**63)

ALLOCATION_MODES = ("All", "ExactCount")
TAINT_EFFECTS = ("NoExecute", "NoSchedule", "None")
TOLERATION_OPERATORS = ("Equal", "Exists")
SKIP_NODE_OPERATIONS = ("*", "NodePrepareResources", "NodeUnprepareResources")
CONFIG_SOURCES = ("FromClaim", "FromClass")
NODE_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")

NODE_PREPARE_MESSAGE = "NodePrepareResources cannot be skipped unless NodeUnprepareResources is also skipped"


@dataclass(frozen=True)
class FieldError:
    """One problem: where in the object (keys and list indexes) and what."""

    path: tuple
    message: str
    severity: str = ERROR


def is_decoding_error(message: str) -> bool:
    """Whether the apiserver refuses this before validating (the JSON cannot become the type)."""
    return (message.startswith("Invalid value: ") and ": expected " in message) or (
        "quantities must match the regular expression" in message)


_DEFAULT_GATES = FeatureGates()  # the 1.37 defaults: one object, so its values are worked out once


# Given a CEL expression: None if it compiles within the cost limit,
# ("invalid", detail) for a compile error, ("forbidden", detail) for cost.
CelCheck = "Callable[[str], tuple[str, str] | None]"  # an annotation only: typing stays unimported


def validate(obj: dict, *, cel_check: CelCheck | None = None, gates: FeatureGates | None = None) -> list[FieldError]:
    """Every problem the apiserver would report for `obj` (errors and warnings); `gates` are the
    apiserver's (1.37 defaults when not given), for the few rules that depend on them."""
    if not isinstance(obj, dict):
        return [FieldError((), f"Invalid value: {_show(obj)}: expected object")]
    kind = obj.get("kind")
    if kind == "List":
        return _validate_list(obj, cel_check, gates)
    handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
    if handler is None:
        return []  # not a kind the playground reads; the scenario loader reports it
    checker = _Checker(kind, cel_check, gates or _DEFAULT_GATES)
    handler(checker, obj)
    return checker.problems


def _validate_list(obj: dict, cel_check, gates) -> list[FieldError]:
    items = obj.get("items")
    if items is None:
        return []
    if not isinstance(items, list):
        return [FieldError(("items",), f"Invalid value: {_show(items)}: expected array")]
    problems = []
    for index, item in enumerate(items):
        if isinstance(item, dict) and item.get("kind") == "List":
            continue  # kubectl never nests lists; nothing sensible to check
        for problem in validate(item, cel_check=cel_check, gates=gates):
            problems.append(FieldError(("items", index) + problem.path, problem.message, problem.severity))
    return problems


# ---------------------------------------------------------------------------
# Name formats and their messages (apimachinery wording)

_DNS_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_SUBDOMAIN_FMT = _DNS_LABEL_FMT + "(\\." + _DNS_LABEL_FMT + ")*"
_DNS_LABEL_RE = re.compile(_DNS_LABEL_FMT)
_DNS_SUBDOMAIN_RE = re.compile(_DNS_SUBDOMAIN_FMT)
_DNS_LABEL_MESSAGE = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_DNS_SUBDOMAIN_CASELESS_MESSAGE = (
    "an RFC 1123 subdomain must consist of alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS_SUBDOMAIN_MESSAGE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_KEY_RE = re.compile(_LABEL_KEY_FMT)
_LABEL_KEY_MESSAGE = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)
_LABEL_VALUE_FMT = "(" + _LABEL_KEY_FMT + ")?"
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)
_LABEL_VALUE_MESSAGE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_C_IDENTIFIER_FMT = "[A-Za-z_][A-Za-z0-9_]*"
_C_IDENTIFIER_RE = re.compile(_C_IDENTIFIER_FMT)
_C_IDENTIFIER_MESSAGE = (
    "a valid C identifier must start with alphabetic character or '_', "
    "followed by a string of alphanumeric characters or '_'"
)
_HEX = frozenset("0123456789abcdefABCDEF")


def _regex_error(message: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{message} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{example}', " for example in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{fmt}')"


def _max_length_error(limit: int, unit: str = "characters") -> str:
    return f"must be no more than {limit} {unit}"


def _nbytes(text: str) -> int:
    if text.isascii():  # a flag of the string: no need to encode it
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


GENERATED_SUFFIX = "xxxxx"
GENERATED_NAME_NOTE = (f"(the apiserver appends 5 random characters to generateName; the playground shows them as "
                       f"{GENERATED_SUFFIX})")


def generated_name(prefix: str) -> str:
    """The name the apiserver makes from generateName, with the playground's stand-in for its random part."""
    raw = prefix.encode("utf-8", "surrogatepass")
    return raw[:58].decode("utf-8", "replace") + GENERATED_SUFFIX


def _mask_trailing_dash(prefix: str) -> str:
    """generateName is checked as a name with its trailing '-' and the byte before it read as 'a'
    (random characters follow the dash)."""
    raw = prefix.encode("utf-8", "surrogatepass")
    if len(raw) > 1 and raw.endswith(b"-"):
        return (raw[:-2] + b"a").decode("utf-8", "replace")
    return prefix


def dns_label_errors(value: str, *, declarative: bool = False) -> list[str]:
    """RFC 1123 label problems; the declarative check (a `k8s-short-name` field) counts bytes."""
    if len(value) <= 63 and _DNS_LABEL_RE.fullmatch(value):
        return []  # the common case at once (what the pattern matches is ASCII: characters are bytes)
    errors = []
    if _nbytes(value) > 63:
        errors.append(_max_length_error(63, "bytes" if declarative else "characters"))
    if not _DNS_LABEL_RE.fullmatch(value):
        if _DNS_SUBDOMAIN_RE.fullmatch(value):
            errors.append("must not contain dots")
        else:
            errors.append(_regex_error(_DNS_LABEL_MESSAGE, _DNS_LABEL_FMT, "my-name", "123-abc"))
    return errors


def dns_subdomain_errors(value: str, *, declarative: bool = False) -> list[str]:
    if len(value) <= 253 and _DNS_SUBDOMAIN_RE.fullmatch(value):
        return []  # the common case at once (what the pattern matches is ASCII: characters are bytes)
    errors = []
    if _nbytes(value) > 253:
        errors.append(_max_length_error(253, "bytes" if declarative else "characters"))
    if not _DNS_SUBDOMAIN_RE.fullmatch(value):
        errors.append(_regex_error(_DNS_SUBDOMAIN_MESSAGE, _DNS_SUBDOMAIN_FMT, "example.com"))
    return errors


def label_key_errors(value: str) -> list[str]:
    """Label key ("qualified name"): optional DNS-subdomain prefix, '/', name. Kubernetes 1.37 has
    one label key check for both validations, and its lengths are said in bytes."""
    if len(value) <= 63 and _LABEL_KEY_RE.fullmatch(value):
        return []  # a valid key without a prefix (the pattern has no slash and matches only ASCII)
    parts = value.split("/")
    errors = []
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            errors.extend("prefix part " + message for message in dns_subdomain_errors(prefix, declarative=True))
    else:
        return [
            "a valid label key "
            + _regex_error(_LABEL_KEY_MESSAGE, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errors.append("name part must be non-empty")
    elif _nbytes(name) > 63:
        errors.append("name part " + _max_length_error(63, "bytes"))
    if not _LABEL_KEY_RE.fullmatch(name):
        errors.append("name part " + _regex_error(_LABEL_KEY_MESSAGE, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc"))
    return errors


def label_value_errors(value: str, *, declarative: bool = False) -> list[str]:
    """Label value problems. Kubernetes 1.37 has one label value check for both the handwritten
    and the declarative validation, and it counts (and says) bytes."""
    if len(value) <= 63 and _LABEL_VALUE_RE.fullmatch(value):
        return []  # the common case at once (what the pattern matches is ASCII: characters are bytes)
    errors = []
    if _nbytes(value) > 63:
        errors.append(_max_length_error(63, "bytes"))
    if not _LABEL_VALUE_RE.fullmatch(value):
        errors.append(_regex_error(_LABEL_VALUE_MESSAGE, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errors


def c_identifier_errors(value: str) -> list[str]:
    if _C_IDENTIFIER_RE.fullmatch(value):
        return []
    return [_regex_error(_C_IDENTIFIER_MESSAGE, _C_IDENTIFIER_FMT, "my_name", "MY_NAME", "MyName")]


def _is_semver(text: str) -> bool:
    return text.isascii() and is_semver(text)


def _uuid_error(text: str) -> str | None:
    """The apiserver's complaint about a share ID, or None if it is a normalized UUID."""

    def canonical(s: str) -> bool:
        return (
            len(s) == 36
            and all(s[i] == "-" for i in (8, 13, 18, 23))
            and all(c in _HEX for i, c in enumerate(s) if i not in (8, 13, 18, 23))
        )

    length = len(text)
    if length == 36:
        parseable = canonical(text)
    elif length == 38:
        parseable = text[0] == "{" and text[-1] == "}" and canonical(text[1:-1])
    elif length == 45:
        parseable = text[:9].lower() == "urn:uuid:" and canonical(text[9:])
    elif length == 32:
        parseable = all(c in _HEX for c in text)
    else:
        return f"error validating uid: invalid UUID length: {length}"
    if not parseable:
        return "error validating uid: invalid UUID format"
    if length != 36 or text != text.lower():
        return (
            "uid must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` "
            "with lowercase hexadecimal characters"
        )
    return None


# ---------------------------------------------------------------------------
# Rendering values the way field errors print them

def _show(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (datetime.date, datetime.datetime)):
        return json.dumps(value.isoformat())
    if isinstance(value, Quantity):
        return json.dumps(str(value))
    if isinstance(value, (dict, list)):
        text = ""
        try:
            for piece in _json_pieces(value):
                text += piece
                if len(text) > 80:
                    break
        except (ValueError, TypeError):
            text = "{...}" if isinstance(value, dict) else "[...]"
        return text if len(text) <= 80 else text[:77] + "..."
    return json.dumps(str(value), ensure_ascii=False)


def _go_json(value) -> str:
    """A value as Go's json.Marshal writes it: compact, non-ASCII kept, `<`, `>`, `&` escaped."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                         ("\u2029", "\\u2029")):
        text = text.replace(char, escape)
    return text


def _go_node_selector_terms(terms: list | None) -> str:
    """The node selector terms as the apiserver prints them in "must have exactly one node selector
    term": its internal []core.NodeSelectorTerm through json.Marshal, so with Go's field names (the
    internal types have no JSON tags) and a missing list as null."""
    def requirements(items):
        if items is None:
            return None
        return [{"Key": r.get("key", ""), "Operator": r.get("operator", ""), "Values": r.get("values")}
                for r in items if isinstance(r, dict)]
    if terms is None:
        return "null"
    return _go_json([{"MatchExpressions": requirements(t.get("matchExpressions")),
                      "MatchFields": requirements(t.get("matchFields"))} for t in terms if isinstance(t, dict)])


def _json_pieces(value):
    """The text of `json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)`,
    piece by piece, so that a caller can stop early: a value built from YAML aliases may be
    small in memory and gigabytes as text."""
    frames: list = []  # [items, closing bracket, first, container] for each container being written
    item, pending = value, True
    while True:
        if pending:
            if isinstance(item, (dict, list)):
                if any(item is frame[3] for frame in frames):
                    raise ValueError("Circular reference detected")
                is_dict = isinstance(item, dict)
                yield "{" if is_dict else "["
                frames.append([iter(item.items() if is_dict else item), "}" if is_dict else "]", True, item])
            else:
                yield json.dumps(item, ensure_ascii=False, default=str)
        if not frames:
            return
        frame = frames[-1]
        following = next(frame[0], _END)
        if following is _END:
            frames.pop()
            yield frame[1]
            pending = False
            continue
        if not frame[2]:
            yield ","
        frame[2] = False
        if frame[1] == "}":
            key, item = following
            yield _json_key(key) + ":"
        else:
            item = following
        pending = True


_END = object()


def _json_key(key) -> str:
    if isinstance(key, str):
        return json.dumps(key, ensure_ascii=False)
    if isinstance(key, bool) or key is None:
        return f'"{json.dumps(key)}"'
    if isinstance(key, (int, float)):
        return json.dumps(json.dumps(key))
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def _json_nbytes_over(value, limit: int) -> bool:
    """Whether the JSON text of `value` is longer than `limit` UTF-8 bytes, written only as far
    as needed to tell."""
    total = 0
    for piece in _json_pieces(value):
        total += len(piece) if piece.isascii() else _nbytes(piece)
        if total > limit:
            return True
    return False


def _key_str(key) -> str:
    """A mapping key as JSON sees it once YAML has been converted."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    if isinstance(key, (datetime.date, datetime.datetime)):
        return key.isoformat()
    return str(key)


# ---------------------------------------------------------------------------
# Field sets of the v1 types (for unknown-field warnings), from their Go types (apitypes.json)

_OBJECT_META_FIELDS = frozenset(apitypes.fields("ObjectMeta"))
# ObjectMeta's fields checked one by one (Checker.metadata); the rest are checked by their Go type
# as the apiserver decodes them (Checker.meta_types).
_META_CHECKED = frozenset({"name", "generateName", "namespace", "labels", "annotations", "ownerReferences"})
_META_DECODED_AS = {"string": "string", "int64": "integer", "*int64": "integer", "Time": "time", "*Time": "time",
                    "[]string": "strings"}


def _meta_typed_fields() -> tuple[tuple[str, str], ...]:
    typed = []
    for key, go_type in sorted(apitypes.fields("ObjectMeta").items()):
        if key in _META_CHECKED:
            continue
        if go_type in _META_DECODED_AS:
            typed.append((key, _META_DECODED_AS[go_type]))
        elif go_type.startswith("[]"):
            typed.append((key, "list"))
        else:  # a new kind of field in ObjectMeta: apitypes.json was regenerated, this was not
            raise ValueError(f"ObjectMeta.{key}: no decoding check for Go type {go_type}")
    return tuple(typed)


_META_TYPED_FIELDS = _meta_typed_fields()
_META_TYPED_KEYS = frozenset(key for key, _ in _META_TYPED_FIELDS)
_META_NAME_KEYS = frozenset({"name", "generateName", "namespace"})
_TOP_FIELDS = frozenset({"apiVersion", "kind", "metadata", "spec"})
_TOP_FIELDS_WITH_STATUS = _TOP_FIELDS | {"status"}
_SLICE_SPEC_FIELDS = frozenset(apitypes.fields("ResourceSliceSpec"))
_POOL_FIELDS = frozenset(apitypes.fields("ResourcePool"))
_COUNTER_SET_FIELDS = frozenset(apitypes.fields("CounterSet"))
_COUNTER_FIELDS = frozenset(apitypes.fields("Counter"))
DEVICE_FIELDS = frozenset(apitypes.fields("Device"))
_NODE_ALLOCATABLE_FIELDS = frozenset(apitypes.fields("NodeAllocatableResource"))
_NODE_ALLOCATABLE_MAPPING_FIELDS = frozenset(apitypes.fields("NodeAllocatableMapping"))
_NODE_ALLOCATABLE_OVERHEAD_FIELDS = frozenset(apitypes.fields("NodeAllocatableOverhead"))
_NODE_ALLOCATABLE_MAPPING_MEMBERS = "`capacityKey`, `deviceMultiplier`"
_CONSUMPTION_FIELDS = frozenset(apitypes.fields("DeviceCounterConsumption"))
_CAPACITY_FIELDS = frozenset(apitypes.fields("DeviceCapacity"))
_REQUEST_POLICY_FIELDS = frozenset(apitypes.fields("CapacityRequestPolicy"))
_RANGE_FIELDS = frozenset(apitypes.fields("CapacityRequestPolicyRange"))
_ATTRIBUTE_FIELDS = ("int", "bool", "string", "version", "ints", "bools", "strings", "versions")
_ATTRIBUTE_FIELD_SET = frozenset(_ATTRIBUTE_FIELDS)
_LIST_ATTRIBUTE_KINDS = ("ints", "bools", "strings", "versions")
_LIST_KIND_SET = frozenset(_LIST_ATTRIBUTE_KINDS)
_ATTRIBUTE_MEMBERS = ", ".join(f"`{kind}`" for kind in _ATTRIBUTE_FIELDS)

_SCALARS = (str, int, bool)
_TAINT_FIELDS = frozenset(apitypes.fields("DeviceTaint"))
_NODE_SELECTOR_FIELDS = frozenset(apitypes.fields("NodeSelector"))
_TERM_FIELDS = frozenset(apitypes.fields("NodeSelectorTerm"))
_REQUIREMENT_FIELDS = frozenset(apitypes.fields("NodeSelectorRequirement"))
_CLAIM_SPEC_FIELDS = frozenset(apitypes.fields("ResourceClaimSpec"))
_DEVICE_CLAIM_FIELDS = frozenset(apitypes.fields("DeviceClaim"))
_REQUEST_FIELDS = frozenset(apitypes.fields("DeviceRequest"))
_EXACT_FIELDS = frozenset(apitypes.fields("ExactDeviceRequest"))
_SUBREQUEST_FIELDS = frozenset(apitypes.fields("DeviceSubRequest"))
_CAPACITY_REQUIREMENTS_FIELDS = frozenset(apitypes.fields("CapacityRequirements"))
_SELECTOR_FIELDS = frozenset(apitypes.fields("DeviceSelector"))
_CEL_FIELDS = frozenset(apitypes.fields("CELDeviceSelector"))
_DERIVED_FIELDS = frozenset(apitypes.fields("DeviceDerivedAttribute"))
_CONSTRAINT_FIELDS = frozenset(apitypes.fields("DeviceConstraint"))
_CLAIM_CONFIG_FIELDS = frozenset(apitypes.fields("DeviceClaimConfiguration"))
_CLASS_CONFIG_FIELDS = frozenset(apitypes.fields("DeviceClassConfiguration"))
_OPAQUE_FIELDS = frozenset(apitypes.fields("OpaqueDeviceConfiguration"))
_TOLERATION_FIELDS = frozenset(apitypes.fields("DeviceToleration"))
_ALLOCATION_FIELDS = frozenset(apitypes.fields("AllocationResult"))
_ALLOCATION_DEVICES_FIELDS = frozenset(apitypes.fields("DeviceAllocationResult"))
_CONSUMER_FIELDS = ("apiGroup", "resource", "name", "uid")
_CONSUMER_FIELD_SET = frozenset(_CONSUMER_FIELDS)
_RESULT_FIELDS = frozenset(apitypes.fields("DeviceRequestAllocationResult"))
_ALLOCATION_CONFIG_FIELDS = frozenset(apitypes.fields("DeviceAllocationConfiguration"))
_CLASS_SPEC_FIELDS = frozenset(apitypes.fields("DeviceClassSpec"))
_TEMPLATE_SPEC_FIELDS = frozenset(apitypes.fields("ResourceClaimTemplateSpec"))
_POD_CLAIM_FIELDS = frozenset({"name", "resourceClaimName", "resourceClaimTemplateName"})


class _Checker:
    """Collects the problems of one object while walking it."""

    def __init__(self, kind: str, cel_check: CelCheck | None, gates: FeatureGates, *, memos_of=None):
        self.kind = kind
        self.cel_check = cel_check
        self.gates = gates
        self.problems: list[FieldError] = []
        # Pure checks whose input recurs within an object (an attribute name, a one-value attribute,
        # a label key) keep what they found valid, for this object only: nothing learned outlives
        # the call. Only valid inputs are kept, so every problem is still found where it is.
        if memos_of is None:
            self.good_names: set = set()  # qualified names (attributes, capacities)
            self.good_attributes: set = set()  # (kind, value class, value) of one-value attributes
            self.good_label_keys: set = set()
            self.good_domains: set = set()  # the domains of good qualified names
        else:
            self.good_names, self.good_attributes = memos_of.good_names, memos_of.good_attributes
            self.good_label_keys, self.good_domains = memos_of.good_label_keys, memos_of.good_domains

    # -- recording ----------------------------------------------------------

    def add(self, path: tuple, message: str, severity: str = ERROR) -> None:
        self.problems.append(FieldError(tuple(path), message, severity))

    def invalid(self, path, value, detail: str = "") -> None:
        self.add(path, f"Invalid value: {_show(value)}" + (f": {detail}" if detail else ""))

    def invalid_each(self, path, value, details: list[str]) -> None:
        for detail in details:
            self.invalid(path, value, detail)

    def required(self, path, detail: str = "") -> None:
        self.add(path, "Required value" + (f": {detail}" if detail else ""))

    def forbidden(self, path, detail: str) -> None:
        self.add(path, f"Forbidden: {detail}")

    def too_long(self, path, limit: int, unit: str = "bytes") -> None:
        self.add(path, f"Too long: may not be more than {limit} {unit}")

    def too_many(self, path, actual: int, limit: int) -> None:
        self.add(path, f"Too many: {actual}: must have at most {limit} items")

    def duplicate(self, path, value) -> None:
        self.add(path, f"Duplicate value: {_show(value)}")

    def unsupported(self, path, value, supported) -> None:
        choices = ", ".join(json.dumps(choice) for choice in supported)
        self.add(path, f"Unsupported value: {_show(value)}: supported values: {choices}")

    def not_found(self, path, value) -> None:
        self.add(path, f"Not found: {_show(value)}")

    def warn(self, path, message: str) -> None:
        self.add(path, message, WARNING)

    def type_error(self, path, value, expected: str) -> None:
        self.add(path, f"Invalid value: {_show(value)}: expected {expected}")

    # -- decoding -----------------------------------------------------------
    # Each `as_*` returns the value when it has the right type, None when it is
    # absent (null) or of the wrong type; the latter is reported here.

    def as_object(self, value, path) -> dict | None:
        if value is None or isinstance(value, dict):
            return value
        self.type_error(path, value, "object")
        return None

    def as_array(self, value, path) -> list | None:
        if value is None or isinstance(value, list):
            return value
        self.type_error(path, value, "array")
        return None

    def as_string(self, value, path) -> str | None:
        if value is None or isinstance(value, str):
            return value
        if isinstance(value, datetime.date):  # YAML timestamps; JSON keeps them as text
            return value.isoformat()
        self.type_error(path, value, "string")
        return None

    def as_int(self, value, path) -> int | None:
        if value is None:
            return None
        if isinstance(value, int) and not isinstance(value, bool):
            if _INT64_MIN <= value <= _INT64_MAX:
                return value
            self.type_error(path, value, "a 64-bit integer")
            return None
        self.type_error(path, value, "integer")
        return None

    def as_bool(self, value, path) -> bool | None:
        if value is None or isinstance(value, bool):
            return value
        self.type_error(path, value, "boolean")
        return None

    def as_quantity(self, value, path) -> Quantity | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            self.type_error(path, value, "quantity")
            return None
        try:
            return Quantity.parse(value)
        except QuantityError as err:
            self.invalid(path, value, str(err))
            return None

    # The field getters: the value at `key` decoded as its `as_*` does. An absent field or one of
    # the right type is returned at once (most fields of most objects are absent), without the
    # field's path, which only a problem needs.

    def obj(self, d: dict, key: str, path) -> dict | None:
        value = d.get(key)
        if value is None or value.__class__ is dict:
            return value
        return self.as_object(value, path + (key,))

    def array(self, d: dict, key: str, path) -> list | None:
        value = d.get(key)
        if value is None or value.__class__ is list:
            return value
        return self.as_array(value, path + (key,))

    def string(self, d: dict, key: str, path) -> str | None:
        value = d.get(key)
        if value is None or value.__class__ is str:
            return value
        return self.as_string(value, path + (key,))

    def integer(self, d: dict, key: str, path) -> int | None:
        value = d.get(key)
        if value is None or (value.__class__ is int and _INT64_MIN <= value <= _INT64_MAX):
            return value
        return self.as_int(value, path + (key,))

    def boolean(self, d: dict, key: str, path) -> bool | None:
        value = d.get(key)
        if value is None or value.__class__ is bool:
            return value
        return self.as_bool(value, path + (key,))

    def quantity(self, d: dict, key: str, path) -> Quantity | None:
        return self.as_quantity(d.get(key), path + (key,))

    def required_string(self, d: dict, key: str, path) -> str | None:
        """The non-empty string at `key`; reports Required when it is missing or empty."""
        raw = d.get(key)
        if raw is None or raw == "":
            self.required(path + (key,))
            return None
        return self.as_string(raw, path + (key,))

    def items(self, values: list, path, *, null_as=None):
        """(index, item path, item) for a list; null items become `null_as` (Go's zero value)."""
        for index, item in enumerate(values):
            yield index, path + (index,), (null_as if item is None else item)

    def object_items(self, values: list, path):
        """(index, item path, object) for a list of objects, skipping ill-typed items."""
        for index, item in enumerate(values):
            if item.__class__ is not dict:
                item = self.as_object({} if item is None else item, path + (index,))
                if item is None:
                    continue
            yield index, path + (index,), item

    def string_items(self, values: list, path):
        """(index, item path, string) for a list of strings, skipping ill-typed items."""
        for index, item in enumerate(values):
            if item.__class__ is not str:
                item = self.as_string("" if item is None else item, path + (index,))
                if item is None:
                    continue
            yield index, path + (index,), item

    def map_items(self, mapping: dict, path):
        """(key as a string, value path, value) for a map."""
        for key, value in mapping.items():
            name = key if key.__class__ is str else _key_str(key)
            yield name, path + (name,), value

    def fields(self, d: dict, known, path) -> None:
        """Warn about keys the v1 type does not have (server-side field validation, Warn mode)."""
        if d.keys() <= known:  # `known` is a frozenset
            return
        for key in d:
            name = key if key.__class__ is str else _key_str(key)
            if name not in known:
                self.warn(path + (name,), f'unknown field "{field_path(path + (name,))}"')

    # -- names ----------------------------------------------------------------

    def dns_label(self, value: str, path) -> None:
        errors = dns_label_errors(value)
        if errors:
            self.invalid_each(path, value, errors)

    def dns_subdomain(self, value: str, path) -> None:
        errors = dns_subdomain_errors(value)
        if errors:
            self.invalid_each(path, value, errors)

    def label_name(self, value: str, path) -> None:
        errors = label_key_errors(value)
        if errors:
            self.invalid_each(path, value, errors)

    def label_value(self, value: str, path) -> None:
        errors = label_value_errors(value)
        if errors:
            self.invalid_each(path, value, errors)

    def short_name(self, value: str, path) -> None:
        """A field checked declaratively as a `k8s-short-name` (a DNS label)."""
        self.invalid_each(path, value, dns_label_errors(value, declarative=True))

    def name_label(self, d: dict, key: str, path) -> str | None:
        """A name that must be a DNS label: a missing one is the empty name, which is not a
        label (the apiserver says Invalid, not Required). Returns a non-empty name."""
        value = self.as_string("" if d.get(key) is None else d.get(key), path + (key,))
        if value is None:
            return None
        self.dns_label(value, path + (key,))
        return value or None

    def required_dns_label(self, d: dict, key: str, path, *, declarative: bool = False) -> str | None:
        value = self.required_string(d, key, path)
        if value is not None:
            (self.short_name if declarative else self.dns_label)(value, path + (key,))
        return value

    def driver_name(self, value: str | None, path, *, caseless: bool = False) -> None:
        """CSI driver name rules: required, at most 63 bytes, lower-cased form a DNS subdomain.
        A `caseless` field is also checked declaratively, and says so in its wording."""
        if not value:
            self.required(path)
            return
        if caseless and len(value) > DRIVER_NAME_MAX_LENGTH:
            # the declarative maxLength counts characters and says so; its error stands for the
            # handwritten one, which counts bytes and alone speaks for a name of few, wide characters
            self.too_long(path, DRIVER_NAME_MAX_LENGTH, "characters")
        elif _nbytes(value) > DRIVER_NAME_MAX_LENGTH:
            self.too_long(path, DRIVER_NAME_MAX_LENGTH)
        errors = dns_subdomain_errors(value.lower(), declarative=caseless)
        if caseless:
            errors = [e.replace(_DNS_SUBDOMAIN_MESSAGE, _DNS_SUBDOMAIN_CASELESS_MESSAGE)
                      .replace("'example.com'", "'Example.com'") for e in errors]
        self.invalid_each(path, value, errors)

    def pool_name(self, value: str | None, path) -> None:
        if not value:
            self.required(path)
            return
        if _nbytes(value) > POOL_NAME_MAX_LENGTH:
            self.too_long(path, POOL_NAME_MAX_LENGTH)
        for part in value.split("/"):
            self.dns_subdomain(part, path)

    def c_identifier(self, value: str, path) -> None:
        if _nbytes(value) > C_IDENTIFIER_MAX_LENGTH:
            self.too_long(path, C_IDENTIFIER_MAX_LENGTH)
        self.invalid_each(path, value, c_identifier_errors(value))

    def _declarative_qualified_name(self, name: str, path) -> None:
        parts = name.split("/")
        if len(parts) == 1:
            self.c_identifier(parts[0], path)
        elif len(parts) == 2:
            prefix, identifier = parts
            if not prefix:
                self.invalid(path, "", "prefix must not be empty")
            else:
                if _nbytes(prefix) > 63:
                    self.too_long(path, 63)
                for error in dns_subdomain_errors(prefix, declarative=True):
                    self.invalid(path, prefix, "prefix: " + error)
            if not identifier:
                self.invalid(path, "", "name must not be empty")
            else:
                if _nbytes(identifier) > C_IDENTIFIER_MAX_LENGTH:
                    self.too_long(path, C_IDENTIFIER_MAX_LENGTH)
                self.invalid_each(path, identifier, c_identifier_errors(identifier))

    def qualified_name(self, name: str, path) -> None:
        """Attribute / capacity name: `identifier` or `domain/identifier`."""
        if name in self.good_names:  # the same few names come back on every device
            return
        found = len(self.problems)
        self._qualified_name(name, path)
        if len(self.problems) == found:
            self.good_names.add(name)

    def _qualified_name(self, name: str, path) -> None:
        parts = name.split("/")
        if len(parts) == 1:
            self.c_identifier(parts[0], path)
        elif len(parts) == 2:
            domain, identifier = parts
            if not domain:
                self.invalid(path, "", "the domain must not be empty")
            else:
                self.driver_name(domain, path)
            if not identifier:
                self.invalid(path, "", "the name must not be empty")
            else:
                self.c_identifier(identifier, path)
        else:
            self.invalid(path, name, "must not contain more than one slash")

    def fully_qualified_name(self, name: str, path, *, declarative: bool = False) -> None:
        """`domain/identifier`. Where it is checked declaratively (constraints), the wording
        differs and more than one slash goes unremarked, as upstream's own TODO says."""
        if declarative:
            self._declarative_qualified_name(name, path)
        else:
            self.qualified_name(name, path)
        if "/" not in name:
            self.invalid(path, name, "a fully qualified name must be a domain and a name separated by a slash")

    # -- metadata -------------------------------------------------------------

    def metadata(self, obj: dict, *, namespaced: bool, declarative_name: bool = False) -> None:
        """ObjectMeta. `declarative_name`: 1.37 checks the name declaratively (`k8s-long-name`, a
        DeviceClass), which counts bytes where the handwritten check says characters."""
        if FAST_PATH and _plain_metadata(self, obj.get("metadata"), namespaced):
            return
        path = ("metadata",)
        meta = self.obj(obj, "metadata", ())
        if meta is None:
            if obj.get("metadata") is None:
                self.required(path + ("name",), "name or generateName is required")
            return
        self.fields(meta, _OBJECT_META_FIELDS, path)
        name = self.string(meta, "name", path)
        generate_name = self.string(meta, "generateName", path)
        if name:
            self.invalid_each(path + ("name",), name, dns_subdomain_errors(name, declarative=declarative_name))
        elif generate_name and not meta.get("name"):
            # The apiserver names the object first: the prefix (cut to 58 bytes) and 5 random characters.
            generated = generated_name(generate_name)
            for error in dns_subdomain_errors(generated, declarative=declarative_name):
                self.add(path + ("name",), f"Invalid value: {_show(generated)}: {error}\n{GENERATED_NAME_NOTE}")
        elif not generate_name and not (meta.get("name") or meta.get("generateName")):
            self.required(path + ("name",), "name or generateName is required")
        if generate_name and not declarative_name:  # the declarative check looks at the generated name alone
            self.invalid_each(path + ("generateName",), generate_name, dns_subdomain_errors(_mask_trailing_dash(generate_name)))
        namespace = self.string(meta, "namespace", path)
        if namespace:
            if namespaced:
                self.dns_label(namespace, path + ("namespace",))
            else:
                self.warn(path + ("namespace",), f"ignored: {self.kind} is cluster-scoped")
        if meta.keys() <= _META_NAME_KEYS:
            return  # no labels, annotations, owners or other fields to check
        self.labels(meta, path)
        self.annotations(meta, path)
        self.owner_references(meta, path)
        self.meta_types(meta, path)

    def meta_types(self, meta: dict, path) -> None:
        """The rest of ObjectMeta as the apiserver decodes it: a value of another type (or a time
        that is not RFC 3339) is refused before any check runs. The fields and their types come
        from ObjectMeta's Go type (apitypes.json)."""
        if meta.keys().isdisjoint(_META_TYPED_KEYS):
            return  # most objects have a name, labels, annotations and nothing else
        for key, decoded_as in _META_TYPED_FIELDS:
            if decoded_as == "string":
                self.string(meta, key, path)
            elif decoded_as == "integer":
                self.integer(meta, key, path)
            elif decoded_as == "time":
                value = meta.get(key)
                if value is None or isinstance(value, (datetime.date, datetime.datetime)):
                    continue  # null is the zero time; a YAML timestamp is sent as RFC 3339 text
                if not isinstance(value, str):
                    self.invalid(path + (key,), value, "expected string")
                elif not _RFC3339.fullmatch(value):  # refused while decoding, as a value of the wrong type is
                    self.invalid(path + (key,), value, "expected an RFC 3339 time")
            elif decoded_as == "strings":
                for _ in self.string_items(self.array(meta, key, path) or [], path + (key,)):
                    pass
            else:
                self.array(meta, key, path)

    def owner_references(self, meta: dict, path) -> None:
        """Each owner reference names its owner fully; at most one is the controller."""
        references = self.array(meta, "ownerReferences", path)
        controller = ""
        for _, item_path, ref in self.object_items(references or [], path + ("ownerReferences",)):
            values = {key: self.string(ref, key, item_path) for key in ("apiVersion", "kind", "name", "uid")}
            for key in ("controller", "blockOwnerDeletion"):
                self.boolean(ref, key, item_path)
            api_version = values["apiVersion"]
            if not api_version:
                self.required(item_path + ("apiVersion",), "must not be empty")
            elif api_version.count("/") > 1 or api_version.endswith("/") or api_version == "/":
                self.invalid(item_path + ("apiVersion",), api_version, "must be <group>/<version> or <version>")
            for key in ("kind", "name", "uid"):
                if not values[key]:
                    self.required(item_path + (key,), "must not be empty")
            if ref.get("controller") is True:
                this = f"{values['kind'] or ''}/{values['name'] or ''}"
                if controller:
                    self.add(path + ("ownerReferences",), f"Invalid value: {_go_owner_references(references)}: "
                             + 
                             f'Only one reference can have Controller set to true. Found "true" in references '
                             f"for {controller} and {this}")
                else:
                    controller = this

    def labels(self, meta: dict, path, key: str = "labels") -> None:
        labels = self.obj(meta, key, path)
        if not labels:
            return
        labels_path = path + (key,)
        for name, value_path, value in self.map_items(labels, labels_path):
            # Like the apiserver, both key and value problems are reported on the map.
            self.label_name(name, labels_path)
            value = self.as_string("" if value is None else value, value_path)
            if value is not None:
                self.label_value(value, labels_path)

    def annotations(self, meta: dict, path) -> None:
        annotations = self.obj(meta, "annotations", path)
        if not annotations:
            return
        annotations_path = path + ("annotations",)
        total = 0
        for name, value_path, value in self.map_items(annotations, annotations_path):
            self.invalid_each(annotations_path, name, label_key_errors(name.lower()))
            value = self.as_string("" if value is None else value, value_path)
            total += _nbytes(name) + _nbytes(value or "")
        if total > ANNOTATIONS_MAX_BYTES:
            self.too_long(annotations_path, ANNOTATIONS_MAX_BYTES)

    def api_version(self, obj: dict, expected: str) -> bool:
        """True if the object is in the API version whose shape is validated here."""
        raw = obj.get("apiVersion")
        if raw is None or raw == "":
            self.required(("apiVersion",))
            return True
        version = self.as_string(raw, ("apiVersion",))
        if version is None:
            return True
        if version != expected:
            self.unsupported(("apiVersion",), version, [expected])
            return False
        return True

    # -- node selectors -------------------------------------------------------

    def node_selector(self, selector: dict, path, *, exactly_one: bool = False) -> list | None:
        """Validate a NodeSelector; returns its terms (when they are a list). Where exactly one
        term is allowed the caller reports missing terms."""
        self.fields(selector, _NODE_SELECTOR_FIELDS, path)
        terms_path = path + ("nodeSelectorTerms",)
        terms = self.array(selector, "nodeSelectorTerms", path)
        if terms is None:
            if selector.get("nodeSelectorTerms") is None and not exactly_one:
                self.required(terms_path, "must have at least one node selector term")
            return None
        if not terms:
            if not exactly_one:
                self.required(terms_path, "must have at least one node selector term")
            return terms
        for _, term_path, term in self.object_items(terms, terms_path):
            self.fields(term, _TERM_FIELDS, term_path)
            expressions = self.array(term, "matchExpressions", term_path)
            for _, req_path, requirement in self.object_items(expressions or [], term_path + ("matchExpressions",)):
                self.node_selector_requirement(requirement, req_path)
            match_fields = self.array(term, "matchFields", term_path)
            for _, req_path, requirement in self.object_items(match_fields or [], term_path + ("matchFields",)):
                self.node_field_requirement(requirement, req_path)
        return terms

    def _requirement_parts(self, requirement: dict, path):
        self.fields(requirement, _REQUIREMENT_FIELDS, path)
        key = self.string(requirement, "key", path)
        operator = self.string(requirement, "operator", path)
        if requirement.get("operator") is None:
            operator = ""  # missing or null decodes to the empty operator, which no selector knows
        raw_values = requirement.get("values")
        values = self.array(requirement, "values", path)
        values_ok = raw_values is None or values is not None
        strings = list(self.string_items(values or [], path + ("values",)))
        return key, operator, (values or []), values_ok, strings

    def node_selector_requirement(self, requirement: dict, path) -> None:
        key, operator, values, values_ok, strings = self._requirement_parts(requirement, path)
        values_path = path + ("values",)
        if operator is not None and values_ok:
            if operator in ("In", "NotIn"):
                if not values:
                    self.required(values_path, "must be specified when `operator` is 'In' or 'NotIn'")
            elif operator in ("Exists", "DoesNotExist"):
                if values:
                    self.forbidden(values_path, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
            elif operator in ("Gt", "Lt"):
                if len(values) != 1:
                    self.required(values_path, "must be specified single value when `operator` is 'Lt' or 'Gt'")
            else:
                self.invalid(path + ("operator",), operator, "not a valid selector operator")
        if key is not None or requirement.get("key") is None:
            self.label_name(key or "", path + ("key",))
        for _, item_path, value in strings:
            self.label_value(value, item_path)

    def node_field_requirement(self, requirement: dict, path) -> None:
        key, operator, values, values_ok, strings = self._requirement_parts(requirement, path)
        if operator is not None and values_ok:
            if operator in ("In", "NotIn"):
                if len(values) != 1:
                    self.required(
                        path + ("values",),
                        "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                    )
            else:
                self.invalid(path + ("operator",), operator, "not a valid selector operator")
        if key is None and requirement.get("key") is not None:
            return
        if key != "metadata.name":
            self.invalid(path + ("key",), key or "", "not a valid field selector key")
            return
        for _, item_path, value in strings:
            self.dns_subdomain(value, item_path)

    # -- CEL --------------------------------------------------------------------

    def cel_expression(self, holder: dict, path, derived: bool = False) -> None:
        """`holder.expression`: bounded in size and compiled by `cel_check` (a missing expression
        is the empty one, which does not compile)."""
        expression_path = path + ("expression",)
        expression = self.string(holder, "expression", path)
        if expression is None:
            if holder.get("expression") is not None:
                return  # of the wrong type: reported
            expression = ""
        if _nbytes(expression) > CEL_EXPRESSION_MAX_LENGTH:
            self.too_long(expression_path, CEL_EXPRESSION_MAX_LENGTH)
            return  # the apiserver does not compile oversized expressions
        if self.cel_check is None:
            return
        # A checker may offer `.derived` for derived attributes (their value need not be a bool).
        check = getattr(self.cel_check, "derived", self.cel_check) if derived else self.cel_check
        outcome = check(expression)
        if outcome is None:
            return
        kind, detail = outcome
        if kind == "invalid":
            self.invalid(expression_path, expression, detail)
        elif kind == "forbidden":
            self.forbidden(expression_path, detail)
        elif kind == "required":
            self.required(expression_path, detail)
        else:
            self.add(expression_path, f"Internal error: {detail}")

    def selectors(self, holder: dict, path) -> None:
        selectors_path = path + ("selectors",)
        selectors = self.array(holder, "selectors", path)
        if not selectors:
            return
        if len(selectors) > SELECTORS_MAX:
            self.too_many(selectors_path, len(selectors), SELECTORS_MAX)
            return
        for _, selector_path, selector in self.object_items(selectors, selectors_path):
            self.fields(selector, _SELECTOR_FIELDS, selector_path)
            cel = self.obj(selector, "cel", selector_path)
            if cel is None:
                if selector.get("cel") is None:
                    self.required(selector_path + ("cel",))
                continue
            self.fields(cel, _CEL_FIELDS, selector_path + ("cel",))
            self.cel_expression(cel, selector_path + ("cel",))

    # -- configuration ------------------------------------------------------------

    def opaque_config(self, config: dict, path) -> None:
        """DeviceConfiguration (inlined into its holder): exactly the `opaque` member."""
        opaque_path = path + ("opaque",)
        opaque = self.obj(config, "opaque", path)
        if opaque is None:
            if config.get("opaque") is None:
                self.required(opaque_path)
            return
        self.fields(opaque, _OPAQUE_FIELDS, opaque_path)
        driver = self.string(opaque, "driver", opaque_path)
        if driver is not None or opaque.get("driver") is None:
            self.driver_name(driver, opaque_path + ("driver",), caseless=True)
        self.raw_parameters(opaque, opaque_path)

    def raw_parameters(self, opaque: dict, path) -> None:
        parameters_path = path + ("parameters",)
        if "parameters" not in opaque or opaque["parameters"] is None:
            self.required(parameters_path)
            return
        parameters = opaque["parameters"]
        try:
            too_long = _json_nbytes_over(parameters, OPAQUE_PARAMETERS_MAX_LENGTH)
        except (ValueError, TypeError):
            self.invalid(parameters_path, "<value omitted>", "must be a valid JSON object")
            return
        if too_long:
            self.too_long(parameters_path, OPAQUE_PARAMETERS_MAX_LENGTH)
        elif not isinstance(parameters, dict):
            self.invalid(parameters_path, "<value omitted>", "must be a valid JSON object")

    # -- tolerations, taints, binding conditions ---------------------------------

    def device_tolerations(self, holder: dict, path) -> None:
        tolerations_path = path + ("tolerations",)
        tolerations = self.array(holder, "tolerations", path)
        if not tolerations:
            return
        for _, item_path, toleration in self.object_items(tolerations, tolerations_path):
            self.device_toleration(toleration, item_path)

    def device_toleration(self, toleration: dict, path) -> None:
        self.fields(toleration, _TOLERATION_FIELDS, path)
        key = self.string(toleration, "key", path)
        if key:
            self.label_name(key, path + ("key",))
        operator = self.string(toleration, "operator", path)
        value = self.string(toleration, "value", path)
        if operator == "Exists":
            if value:
                self.invalid(path + ("value",), value, "must be empty for operator `Exists`")
        elif operator in ("Equal", "", None):  # an empty operator defaults to Equal
            if value is not None:
                self.label_value(value, path + ("value",))
        else:
            self.unsupported(path + ("operator",), operator, TOLERATION_OPERATORS)
        effect = self.string(toleration, "effect", path)
        if effect and effect not in TAINT_EFFECTS:
            self.unsupported(path + ("effect",), effect, TAINT_EFFECTS)
        seconds = self.integer(toleration, "tolerationSeconds", path)
        if seconds is not None and effect is not None and effect != "NoExecute":
            # Accepted by the apiserver, but it has no effect.
            self.warn(path + ("tolerationSeconds",), "ignored: tolerationSeconds only applies to effect NoExecute")

    def device_taint(self, taint: dict, path) -> None:
        self.fields(taint, _TAINT_FIELDS, path)
        key = self.string(taint, "key", path)
        if key is not None or taint.get("key") is None:
            self.label_name(key or "", path + ("key",))
        value = self.string(taint, "value", path)
        if value:  # checked declaratively
            self.invalid_each(path + ("value",), value, label_value_errors(value, declarative=True))
        effect = self.string(taint, "effect", path)
        if effect is None and taint.get("effect") is None or effect == "":
            self.required(path + ("effect",))
        elif effect is not None and effect not in TAINT_EFFECTS:
            self.unsupported(path + ("effect",), effect, TAINT_EFFECTS)
        self.string(taint, "timeAdded", path)

    def binding_conditions(self, holder: dict, path) -> None:
        if holder.get("bindingConditions") is None and holder.get("bindingFailureConditions") is None:
            return  # neither list: nothing to check
        lists = {}
        for key in ("bindingConditions", "bindingFailureConditions"):
            list_path = path + (key,)
            values = self.array(holder, key, path) or []
            if len(values) > BINDING_CONDITIONS_MAX:
                self.too_many(list_path, len(values), BINDING_CONDITIONS_MAX)
                strings = [(i, p, v) for i, p, v in self.items(values, list_path, null_as="") if isinstance(v, str)]
            else:
                strings = list(self.string_items(values, list_path))
                for _, item_path, condition in strings:
                    self.label_name(condition, item_path)
            lists[key] = (values, strings)
        conditions, condition_items = lists["bindingConditions"]
        failures, failure_items = lists["bindingFailureConditions"]
        seen = set()
        for _, item_path, condition in condition_items:
            if condition in seen:
                self.duplicate(item_path, condition)
            seen.add(condition)
        condition_set = seen
        seen = set()
        for _, item_path, condition in failure_items:
            if condition in seen:
                self.duplicate(item_path, condition)
            seen.add(condition)
            if condition in condition_set:
                self.invalid(item_path, condition, "bindingFailureConditions must not overlap with bindingConditions")
        # A list that is not there shows as null, an empty one as [].
        if not conditions and failures:
            detail = "bindingConditions are required to use bindingFailureConditions"
            self.invalid(path + ("bindingConditions",), holder.get("bindingConditions"), detail)
        if not failures and conditions:
            detail = "bindingFailureConditions are required to use bindingConditions"
            self.invalid(path + ("bindingFailureConditions",), holder.get("bindingFailureConditions"), detail)

    def skip_node_operations(self, holder: dict, path) -> None:
        list_path = path + ("skipNodeOperations",)
        operations = self.array(holder, "skipNodeOperations", path)
        if not operations:
            return
        seen = []
        for _, item_path, operation in self.string_items(operations, list_path):
            if operation in seen:
                self.duplicate(item_path, operation)
                continue
            seen.append(operation)
            if operation not in SKIP_NODE_OPERATIONS:
                self.unsupported(item_path, operation, SKIP_NODE_OPERATIONS)
        if "NodePrepareResources" in seen and "NodeUnprepareResources" not in seen and "*" not in seen:
            shown = [op for op in operations if isinstance(op, str)]
            self.invalid(list_path, shown, NODE_PREPARE_MESSAGE)


# ---------------------------------------------------------------------------
# The fast path: parts that are plainly valid
#
# Nearly every object is valid, and the walk above spends most of its time building paths and
# asking accessors about parts it finds nothing wrong with. For the parts that come by the hundred
# (metadata, devices, requests) a predicate asks first, in one pass and without paths, whether the
# part has a plain shape in which the walk would find nothing; only when it cannot tell does the
# walk run, and the walk alone words every problem, so what a user reads, and in which order, is
# the walk's. A predicate may say no to a valid part (that costs time only), never yes to a part
# with a problem: tests/engine/test_validation_fast.py compares both on generated objects and on
# broken ones. Rarer parts inside a plain one are judged by the walk itself on a scratch checker.

FAST_PATH = True  # the tests turn it off to compare the two


def _quiet(c: _Checker, check, *args) -> bool:
    """Whether the walk's `check(checker, *args)` finds nothing (run on a scratch checker that
    shares the call's memos, so that nothing is recorded)."""
    scratch = _Checker(c.kind, c.cel_check, c.gates, memos_of=c)
    check(scratch, *args)
    return not scratch.problems


# The name patterns above, written so that the matcher never backtracks (possessive repeats: a label
# is runs of letters and digits joined by runs of dashes), which halves their cost; they accept
# exactly the same strings (tests/engine/test_validation_fast.py). The caseless subdomain is the
# lower-case one after .lower() (explicit ASCII ranges: no IGNORECASE, which would take the Kelvin
# sign for a "k"; a name it refuses goes to the walk, which judges it).
_FAST_LABEL_FMT = "[a-z0-9]++(?:-++[a-z0-9]++)*+"
_FAST_SUBDOMAIN_FMT = f"{_FAST_LABEL_FMT}(?:\\.{_FAST_LABEL_FMT})*+"
_FAST_CASELESS_SUBDOMAIN_FMT = _FAST_SUBDOMAIN_FMT.replace("a-z0-9", "A-Za-z0-9")
_fast_label = re.compile(_FAST_LABEL_FMT).fullmatch
_fast_subdomain = re.compile(_FAST_SUBDOMAIN_FMT).fullmatch
_fast_caseless_subdomain = re.compile(_FAST_CASELESS_SUBDOMAIN_FMT).fullmatch


def _plain_subdomain(value) -> bool:
    return value.__class__ is str and len(value) <= 253 and _fast_subdomain(value) is not None


def _plain_label(value) -> bool:
    return value.__class__ is str and len(value) <= 63 and _fast_label(value) is not None


def _plain_label_key(c: _Checker, key) -> bool:
    if key.__class__ is not str:
        return False  # (and perhaps not hashable)
    if key in c.good_label_keys:
        return True
    if label_key_errors(key):
        return False
    c.good_label_keys.add(key)
    return True


def _plain_label_value(value) -> bool:
    """A string label value (the pattern matches ASCII only: characters are bytes)."""
    return value.__class__ is str and len(value) <= 63 and _LABEL_VALUE_RE.fullmatch(value) is not None


def _plain_qualified_name(c: _Checker, name) -> bool:
    """`identifier` or `domain/identifier` as Checker.qualified_name takes it, sharing its memo; the
    domain, a driver name, is kept too (most names of a slice share one)."""
    if name.__class__ is not str:
        return False
    if name in c.good_names:
        return True
    domain, slash, identifier = name.partition("/")
    if not slash:
        identifier = domain
    # an ASCII identifier is a C identifier
    if len(identifier) > C_IDENTIFIER_MAX_LENGTH or not identifier.isascii() or not identifier.isidentifier():
        return False
    if slash and domain not in c.good_domains:
        if len(domain) > DRIVER_NAME_MAX_LENGTH or _fast_caseless_subdomain(domain) is None:
            return False
        c.good_domains.add(domain)
    c.good_names.add(name)
    return True


def _plain_quantity(value) -> bool:
    if value.__class__ is not str and value.__class__ is not int:
        return False
    try:
        Quantity.parse(value)
    except QuantityError:
        return False
    return True


def _plain_metadata(c: _Checker, meta, namespaced: bool) -> bool:
    """ObjectMeta with a valid name and at most a namespace, labels and annotations."""
    if meta.__class__ is not dict or not meta.keys() <= _PLAIN_META_KEYS or not _plain_subdomain(meta.get("name")):
        return False
    namespace = meta.get("namespace")
    if namespace is not None and namespace != "" and not (namespaced and _plain_label(namespace)):
        return False
    labels = meta.get("labels")
    if labels is not None:
        if labels.__class__ is not dict:
            return False
        for key, value in labels.items():
            if not _plain_label_key(c, key) or (value is not None and not _plain_label_value(value)):
                return False
    annotations = meta.get("annotations")
    if annotations is not None:
        if annotations.__class__ is not dict:
            return False
        total = 0
        for key, value in annotations.items():
            if key.__class__ is not str or label_key_errors(key.lower()):
                return False
            if value is None:
                value = ""
            elif value.__class__ is not str:
                return False
            total += _nbytes(key) + _nbytes(value)
        if total > ANNOTATIONS_MAX_BYTES:
            return False
    return True


_DEFAULT_ONLY = frozenset({"default"})
_PLAIN_META_KEYS = frozenset({"name", "namespace", "labels", "annotations"})
_NONE: dict = {}  # an absent map, never written to


def _plain_list_attribute(kind, items: list) -> bool:
    if not items:
        return False
    if kind == "ints":
        return all(item.__class__ is int and _INT64_MIN <= item <= _INT64_MAX for item in items)
    if kind == "bools":
        return all(item.__class__ is bool for item in items)
    if kind == "strings":
        return all(item.__class__ is str and _nbytes(item) <= ATTRIBUTE_VALUE_MAX_LENGTH for item in items)
    if kind == "versions":
        return all(item.__class__ is str and _nbytes(item) <= ATTRIBUTE_VALUE_MAX_LENGTH and _is_semver(item)
                   for item in items)
    return False


def _plain_attributes(c: _Checker, attributes: dict) -> bool:
    """Each attribute one value of its kind under a qualified name, and not too many values."""
    good_names = c.good_names
    values = 0
    for name, attribute in attributes.items():
        if name not in good_names and not _plain_qualified_name(c, name):
            return False
        if attribute.__class__ is not dict or len(attribute) != 1:
            return False
        for kind, raw in attribute.items():
            cls = raw.__class__
            if cls is int:
                if kind != "int" or not _INT64_MIN <= raw <= _INT64_MAX:
                    return False
            elif cls is str:
                if len(raw) > ATTRIBUTE_VALUE_MAX_LENGTH or not raw.isascii():
                    return False  # too long; or perhaps, in bytes: the walk says
                if kind != "string" and (kind != "version" or not is_semver(raw)):
                    return False
            elif cls is bool:
                if kind != "bool":
                    return False
            elif cls is list:
                if not _plain_list_attribute(kind, raw):
                    return False
                values += len(raw) - 1
            else:
                return False
        values += 1
    return values <= ATTRIBUTE_VALUES_MAX


def _plain_capacities(c: _Checker, capacities: dict, allow_multiple: bool) -> bool:
    good_names = c.good_names
    for name, entry in capacities.items():
        if name not in good_names and not _plain_qualified_name(c, name):
            return False
        if entry is None:
            continue  # the zero capacity
        if entry.__class__ is not dict or not entry.keys() <= _CAPACITY_FIELDS:
            return False
        value = entry.get("value")
        if value is not None and not _plain_quantity(value):
            return False
        policy = entry.get("requestPolicy")
        if policy is not None:
            if not allow_multiple or policy.__class__ is not dict:
                return False
            if policy.keys() <= _DEFAULT_ONLY:  # a default and no choices: nothing to compare
                default = policy.get("default")
                if default is not None and not _plain_quantity(default):
                    return False
            elif not _quiet(c, _capacity, entry, (), allow_multiple):
                return False
    return True


def _plain_taint(c: _Checker, taint) -> bool:
    if taint.__class__ is not dict or not taint.keys() <= _TAINT_FIELDS:
        return False
    value, time_added = taint.get("value"), taint.get("timeAdded")
    return (_plain_label_key(c, taint.get("key")) and taint.get("effect") in TAINT_EFFECTS
            and (value is None or value == "" or _plain_label_value(value))
            and (time_added is None or time_added.__class__ is str))


def _plain_driver(value) -> bool:
    """A driver name as Checker.driver_name takes it (a DNS subdomain once lower-cased, 63 bytes)."""
    return (value.__class__ is str and len(value) <= DRIVER_NAME_MAX_LENGTH
            and _fast_caseless_subdomain(value) is not None)


def _plain_counters(counters, limit: int) -> bool:
    if counters.__class__ is not dict or not counters or len(counters) > limit:
        return False
    for name, counter in counters.items():
        if not _plain_label(name):
            return False
        if counter is not None:
            if counter.__class__ is not dict or not counter.keys() <= _COUNTER_FIELDS:
                return False
            value = counter.get("value")
            if value is not None and not _plain_quantity(value):
                return False
    return True


def _plain_counter_holders(holders: list, limit: int, fields, key: str, counters_limit: int) -> bool:
    """Counter sets (named by `name`) or a device's counter consumptions (by `counterSet`, with at
    most two compatibility groups): each named once, each with counters."""
    if len(holders) > limit:
        return False
    seen = set()
    for holder in holders:
        if holder.__class__ is not dict or not holder.keys() <= fields:
            return False
        name = holder.get(key)
        if not _plain_label(name) or name in seen:
            return False
        seen.add(name)
        if not _plain_counters(holder.get("counters"), counters_limit):
            return False
        groups = holder.get("compatibilityGroups")
        if groups is not None and (groups.__class__ is not list or len(groups) > COMPATIBILITY_GROUPS_MAX or not all(
                _plain_label(group) for group in groups) or len(set(groups)) != len(groups)):
            return False
    return True


def _plain_binding_conditions(c: _Checker, holder: dict) -> bool:
    conditions, failures = holder.get("bindingConditions"), holder.get("bindingFailureConditions")
    if conditions is None and failures is None:
        return True
    if (conditions.__class__ is not list or failures.__class__ is not list or not conditions or not failures
            or len(conditions) > BINDING_CONDITIONS_MAX or len(failures) > BINDING_CONDITIONS_MAX):
        return False
    for condition in conditions + failures:
        if not _plain_label_key(c, condition):
            return False
    distinct = set(conditions)
    return len(distinct) == len(conditions) and len(set(failures)) == len(failures) and distinct.isdisjoint(failures)


def _plain_requirement(c: _Checker, requirement) -> bool:
    """A node selector's label requirement."""
    if requirement.__class__ is not dict or not requirement.keys() <= _REQUIREMENT_FIELDS:
        return False
    if not _plain_label_key(c, requirement.get("key")):
        return False
    values = requirement.get("values")
    count = 0
    if values is not None:
        if values.__class__ is not list:
            return False
        for value in values:
            if not _plain_label_value(value):
                return False
        count = len(values)
    operator = requirement.get("operator")
    if operator == "In" or operator == "NotIn":
        return count > 0
    if operator == "Exists" or operator == "DoesNotExist":
        return count == 0
    if operator == "Gt" or operator == "Lt":
        return count == 1
    return False


def _plain_field_requirement(requirement) -> bool:
    """A node selector's field requirement: the node's name, one value."""
    if requirement.__class__ is not dict or not requirement.keys() <= _REQUIREMENT_FIELDS:
        return False
    values, operator = requirement.get("values"), requirement.get("operator")
    return (requirement.get("key") == "metadata.name" and (operator == "In" or operator == "NotIn")
            and values.__class__ is list and len(values) == 1 and _plain_subdomain(values[0]))


def _plain_node_selector(c: _Checker, selector) -> bool:
    """A NodeSelector with at least one term (Checker.node_selector)."""
    if selector.__class__ is not dict or not selector.keys() <= _NODE_SELECTOR_FIELDS:
        return False
    terms = selector.get("nodeSelectorTerms")
    if terms.__class__ is not list or not terms:
        return False
    for term in terms:
        if term.__class__ is not dict or not term.keys() <= _TERM_FIELDS:
            return False
        if not (_plain_items(term.get("matchExpressions"), lambda r: _plain_requirement(c, r))
                and _plain_items(term.get("matchFields"), _plain_field_requirement)):
            return False
    return True


def _plain_items(items, plain) -> bool:
    """An optional list: absent, or a list whose every item `plain` passes."""
    return items is None or (items.__class__ is list and all(plain(item) for item in items))


def _plain_pool(pool) -> bool:
    if pool.__class__ is not dict or not pool.keys() <= _POOL_FIELDS:
        return False
    name, count, generation = pool.get("name"), pool.get("resourceSliceCount"), pool.get("generation")
    return (_plain_pool_name(name)
            and count.__class__ is int and 0 < count <= _INT64_MAX
            and (generation is None or (generation.__class__ is int and 0 <= generation <= _INT64_MAX)))


def _plain_skip_node_operations(operations) -> bool:
    if operations is None:
        return True
    if operations.__class__ is not list:
        return False
    for operation in operations:
        if operation not in SKIP_NODE_OPERATIONS:
            return False
    return len(set(operations)) == len(operations) and (
        "NodePrepareResources" not in operations or "NodeUnprepareResources" in operations or "*" in operations)


def _plain_slice_head(c: _Checker, spec: dict) -> bool:
    """A ResourceSlice spec but for its devices and counter sets: driver, pool, where its devices
    are, the operations it skips."""
    if not spec.keys() <= _PLAIN_SLICE_SPEC_KEYS or not _plain_driver(spec.get("driver")) or not _plain_pool(
            spec.get("pool")):
        return False
    chosen = 0
    node_name, selector = spec.get("nodeName"), spec.get("nodeSelector")
    if node_name is not None:
        if not _plain_subdomain(node_name):
            return False
        chosen += 1
    if selector is not None:
        if not _plain_node_selector(c, selector) or len(selector["nodeSelectorTerms"]) != 1:
            return False
        chosen += 1
    all_nodes, per_device = spec.get("allNodes"), spec.get("perDeviceNodeSelection")
    if all_nodes is not None:
        if all_nodes is not True:
            return False
        chosen += 1
    if per_device is not None:
        if per_device is not True:
            return False
        chosen += 1
    devices, counter_sets = spec.get("devices"), spec.get("sharedCounters")
    return (chosen == 1 and (devices is None or counter_sets is None)
            and (devices is None or devices.__class__ is list)
            and (counter_sets is None or counter_sets.__class__ is list)
            and _plain_skip_node_operations(spec.get("skipNodeOperations")))


_PLAIN_SLICE_SPEC_KEYS = _SLICE_SPEC_FIELDS - {"partitionTypeAttribute"}


def _plain_selectors(c: _Checker, selectors) -> bool:
    """DeviceSelectors (Checker.selectors): CEL expressions that compile within the cost limit."""
    if selectors.__class__ is not list or len(selectors) > SELECTORS_MAX:
        return False
    check = c.cel_check
    for selector in selectors:
        if selector.__class__ is not dict or not selector.keys() <= _SELECTOR_FIELDS:
            return False
        cel = selector.get("cel")
        if cel.__class__ is not dict or not cel.keys() <= _CEL_FIELDS:
            return False
        expression = cel.get("expression")
        if expression.__class__ is not str or _nbytes(expression) > CEL_EXPRESSION_MAX_LENGTH:
            return False
        if check is not None and check(expression) is not None:
            return False
    return True


def _plain_toleration(c: _Checker, toleration) -> bool:
    """A request's DeviceToleration (Checker.device_toleration), warnings included."""
    if toleration.__class__ is not dict or not toleration.keys() <= _TOLERATION_FIELDS:
        return False
    get = toleration.get
    key, operator, value, effect = get("key"), get("operator"), get("value"), get("effect")
    if key is not None and (key.__class__ is not str or (key and not _plain_label_key(c, key))):
        return False
    if value is not None and value.__class__ is not str:
        return False
    if operator == "Exists":
        if value:
            return False
    elif operator is None or operator == "Equal" or operator == "":
        if value is not None and not _plain_label_value(value):
            return False
    else:
        return False
    if effect is not None and effect != "" and effect not in TAINT_EFFECTS:
        return False
    seconds = get("tolerationSeconds")
    return seconds is None or (seconds.__class__ is int and _INT64_MIN <= seconds <= _INT64_MAX
                               and (effect is None or effect == "NoExecute"))


def _plain_request_body(c: _Checker, body: dict, sub: bool, reference: str, constrained: dict) -> bool:
    """What _request_body checks (and, for an exact request, its fields and adminAccess)."""
    if not body.keys() <= (_SUBREQUEST_FIELDS if sub else _EXACT_FIELDS):
        return False
    get = body.get
    if not _plain_subdomain(get("deviceClassName")):
        return False
    selectors = get("selectors")
    if selectors is not None and not _plain_selectors(c, selectors):
        return False
    if get("derivedAttributes") is not None and not _quiet(c, _derived_attributes, body, (), reference, constrained):
        return False
    mode, count = get("allocationMode"), get("count")
    if count is None:
        count = 0
    elif count.__class__ is not int or not _INT64_MIN <= count <= _INT64_MAX:
        return False
    if mode == "All":
        if count != 0:
            return False
    elif mode is None or mode == "ExactCount" or mode == "":  # an empty mode is ExactCount, count 0 is 1
        if count < 0:
            return False
    else:
        return False
    if not _plain_items(get("tolerations"), lambda t: _plain_toleration(c, t)):
        return False
    capacity = get("capacity")
    if capacity is not None:
        if capacity.__class__ is not dict or not capacity.keys() <= _CAPACITY_REQUIREMENTS_FIELDS:
            return False
        amounts = capacity.get("requests")
        if amounts is not None:
            if amounts.__class__ is not dict:
                return False
            for amount in amounts.values():
                if not _plain_quantity(amount):
                    return False
    admin = get("adminAccess")
    return admin is None or admin.__class__ is bool


def _plain_request(c: _Checker, request, constrained: dict) -> bool:
    """What _request checks: a named request, exactly one way of asking."""
    if request.__class__ is not dict or not request.keys() <= _REQUEST_FIELDS:
        return False
    name = request.get("name")
    if not _plain_label(name):
        return False
    exactly, first = request.get("exactly"), request.get("firstAvailable")
    if first is None:
        return exactly.__class__ is dict and _plain_request_body(c, exactly, False, name, constrained)
    if exactly is not None or first.__class__ is not list or not first or len(first) > SUBREQUESTS_MAX:
        return False
    seen = set()
    for sub in first:
        if sub.__class__ is not dict:
            return False
        sub_name = sub.get("name")
        if not _plain_label(sub_name) or sub_name in seen:
            return False
        seen.add(sub_name)
        if not _plain_request_body(c, sub, True, f"{name}/{sub_name}", constrained):
            return False
    return True


def _plain_request_refs(refs, names: dict) -> bool:
    """References to requests and subrequests of the claim, each once (_request_refs)."""
    if refs.__class__ is not list or len(refs) > REQUESTS_MAX:
        return False
    for ref in refs:
        if ref.__class__ is not str:
            return False
        request, slash, sub = ref.partition("/")
        if slash:
            subs = names.get(request)
            if not subs or sub not in subs or not _plain_label(sub):
                return False
        elif request not in names:
            return False
        if not _plain_label(request):
            return False
    return len(set(refs)) == len(refs)


def _plain_opaque(opaque) -> bool:
    """An opaque configuration (Checker.opaque_config): a driver and a JSON object within the size."""
    if opaque.__class__ is not dict or not opaque.keys() <= _OPAQUE_FIELDS or not _plain_driver(opaque.get("driver")):
        return False
    parameters = opaque.get("parameters")
    if parameters.__class__ is not dict:
        return False
    try:
        return not _json_nbytes_over(parameters, OPAQUE_PARAMETERS_MAX_LENGTH)
    except (ValueError, TypeError):
        return False


def _plain_constraint(constraint, names: dict) -> bool:
    """A constraint (_constraint): its requests, and one attribute, `domain/identifier`."""
    if constraint.__class__ is not dict or not constraint.keys() <= _CONSTRAINT_FIELDS:
        return False
    refs = constraint.get("requests")
    if refs is not None and not _plain_request_refs(refs, names):
        return False
    match, distinct = constraint.get("matchAttribute"), constraint.get("distinctAttribute")
    if (match is None) == (distinct is None):
        return False
    attribute = distinct if match is None else match
    if attribute.__class__ is not str:
        return False
    # checked declaratively: the domain as written (lower case), no case folding
    domain, slash, identifier = attribute.partition("/")
    return (bool(slash) and len(domain) <= 63 and _DNS_SUBDOMAIN_RE.fullmatch(domain) is not None
            and len(identifier) <= C_IDENTIFIER_MAX_LENGTH and identifier.isascii() and identifier.isidentifier())


def _plain_claim_devices(c: _Checker, requests: list, constraints: list, configs: list, names: dict,
                         constrained: dict) -> bool:
    """A DeviceClaim's requests, constraints and configuration (_claim_spec's lists)."""
    if len(requests) > REQUESTS_MAX or len(constraints) > CONSTRAINTS_MAX or len(configs) > CONFIG_MAX:
        return False
    seen = set()
    for request in requests:
        if not _plain_request(c, request, constrained) or request["name"] in seen:
            return False
        seen.add(request["name"])
    for constraint in constraints:
        if not _plain_constraint(constraint, names):
            return False
    for config in configs:
        if config.__class__ is not dict or not config.keys() <= _CLAIM_CONFIG_FIELDS:
            return False
        refs = config.get("requests")
        if (refs is not None and not _plain_request_refs(refs, names)) or not _plain_opaque(config.get("opaque")):
            return False
    return True


def _plain_pool_name(name) -> bool:
    """Subdomains joined by slashes (Checker.pool_name)."""
    if name.__class__ is not str or len(name) > POOL_NAME_MAX_LENGTH:
        return False
    if "/" not in name:
        return _fast_subdomain(name) is not None
    return all(_fast_subdomain(part) is not None for part in name.split("/"))


def _plain_result(c: _Checker, result, names: dict) -> bool:
    """An allocation result (_result)."""
    if result.__class__ is not dict or not result.keys() <= _RESULT_FIELDS:
        return False
    get = result.get
    request = get("request")
    if (request.__class__ is not str or not _plain_request_refs([request], names) or not _plain_driver(get("driver"))
            or not _plain_pool_name(get("pool")) or not _plain_label(get("device"))):
        return False
    admin, share_id, consumed = get("adminAccess"), get("shareID"), get("consumedCapacity")
    if admin is not None and admin.__class__ is not bool:
        return False
    if share_id is not None and (share_id.__class__ is not str or _uuid_error(share_id) is not None):
        return False
    if consumed is not None:
        if consumed.__class__ is not dict:
            return False
        for amount in consumed.values():
            if not _plain_quantity(amount):
                return False
    if not _plain_items(get("tolerations"), lambda t: _plain_toleration(c, t)):
        return False
    return _plain_binding_conditions(c, result) and _plain_skip_node_operations(get("skipNodeOperations"))


def _plain_allocation(c: _Checker, allocation: dict, names: dict) -> bool:
    """A claim's status.allocation (_allocation)."""
    if not allocation.keys() <= _ALLOCATION_FIELDS:
        return False
    stamp, devices, selector = (allocation.get("allocationTimestamp"), allocation.get("devices"),
                                allocation.get("nodeSelector"))
    if stamp is not None and stamp.__class__ is not str:
        return False
    if selector is not None and not _plain_node_selector(c, selector):
        return False
    if devices is None:
        return True
    if devices.__class__ is not dict or not devices.keys() <= _ALLOCATION_DEVICES_FIELDS:
        return False
    results, configs = devices.get("results"), devices.get("config")
    if results is not None:
        if results.__class__ is not list or len(results) > RESULTS_MAX:
            return False
        for result in results:
            if not _plain_result(c, result, names):
                return False
    if configs is not None:
        if configs.__class__ is not list or len(configs) > ALLOCATION_CONFIG_MAX:
            return False
        for config in configs:
            if (config.__class__ is not dict or not config.keys() <= _ALLOCATION_CONFIG_FIELDS
                    or config.get("source") not in CONFIG_SOURCES):
                return False
            refs = config.get("requests")
            if (refs is not None and not _plain_request_refs(refs, names)) or not _plain_opaque(config.get("opaque")):
                return False
    return True


def _plain_class_spec(c: _Checker, spec: dict) -> bool:
    """A DeviceClass spec without an extended resource name."""
    if not spec.keys() <= _PLAIN_CLASS_SPEC_KEYS:
        return False
    selectors, configs = spec.get("selectors"), spec.get("config")
    if selectors is not None and not _plain_selectors(c, selectors):
        return False
    if configs is not None:
        if configs.__class__ is not list or len(configs) > CONFIG_MAX:
            return False
        for config in configs:
            if (config.__class__ is not dict or not config.keys() <= _CLASS_CONFIG_FIELDS
                    or not _plain_opaque(config.get("opaque"))):
                return False
    return True


_PLAIN_CLASS_SPEC_KEYS = _CLASS_SPEC_FIELDS - {"extendedResourceName"}


def _plain_device(c: _Checker, device: dict, per_device: bool) -> bool:
    """What _device checks, for a device the walk would find nothing wrong with."""
    keys = device.keys()
    if not keys <= DEVICE_FIELDS:
        return False
    get = device.get
    if not _plain_label(get("name")):
        return False
    allow_multiple = get("allowMultipleAllocations")
    if allow_multiple is not None and allow_multiple.__class__ is not bool:
        return False
    attributes, capacities = get("attributes"), get("capacity")
    if attributes is None:
        attributes = _NONE
    elif attributes.__class__ is not dict:
        return False
    if capacities is None:
        capacities = _NONE
    elif capacities.__class__ is not dict:
        return False
    if len(attributes) + len(capacities) > ATTRIBUTES_AND_CAPACITIES_MAX:
        return False
    if attributes and not _plain_attributes(c, attributes):
        return False
    if capacities and not _plain_capacities(c, capacities, allow_multiple is True):
        return False
    if keys <= _SIMPLE_DEVICE_KEYS:
        return not per_device  # which node a device is on is said by the slice, or by each device
    return _plain_device_rest(c, device, capacities, per_device)


_SIMPLE_DEVICE_KEYS = frozenset({"name", "attributes", "capacity", "allowMultipleAllocations"})


def _plain_device_rest(c: _Checker, device: dict, capacities: dict, per_device: bool) -> bool:
    get = device.get
    binds = get("bindsToNode")
    if binds is not None and binds.__class__ is not bool:
        return False
    taints = get("taints")
    if taints is not None:
        if taints.__class__ is not list or len(taints) > TAINTS_MAX:
            return False
        for taint in taints:
            if not _plain_taint(c, taint):
                return False
    consumptions = get("consumesCounters")
    if consumptions is not None and (consumptions.__class__ is not list or not _plain_counter_holders(
            consumptions, CONSUMPTIONS_PER_DEVICE_MAX, _CONSUMPTION_FIELDS, "counterSet", COUNTERS_PER_CONSUMPTION_MAX)):
        return False
    node_name, selector, all_nodes = get("nodeName"), get("nodeSelector"), get("allNodes")
    if per_device:
        chosen = 0
        if node_name is not None:
            if not _plain_subdomain(node_name):
                return False
            chosen += 1
        if selector is not None:
            if not _plain_node_selector(c, selector):
                return False
            chosen += 1
        if all_nodes is not None:
            if all_nodes is not True:
                return False
            chosen += 1
        if chosen != 1:
            return False
    elif node_name is not None or selector is not None or all_nodes is not None:
        return False
    if not _plain_binding_conditions(c, device):
        return False
    resources = get("nodeAllocatableResources")
    return resources is None or (resources.__class__ is dict and (
        not resources or _quiet(c, _node_allocatable_resources, device, capacities, ())))


# ---------------------------------------------------------------------------
# DeviceClass

def _device_class(c: _Checker, obj: dict) -> None:
    if not c.api_version(obj, RESOURCE_API_VERSION):
        return
    c.fields(obj, _TOP_FIELDS, ())
    c.metadata(obj, namespaced=False, declarative_name=True)
    spec = c.obj(obj, "spec", ())
    if spec is None or (FAST_PATH and _plain_class_spec(c, spec)):
        return
    path = ("spec",)
    c.fields(spec, _CLASS_SPEC_FIELDS, path)
    c.selectors(spec, path)
    configs = c.array(spec, "config", path)
    if configs:
        if len(configs) > CONFIG_MAX:
            c.too_many(path + ("config",), len(configs), CONFIG_MAX)
        else:
            for _, item_path, config in c.object_items(configs, path + ("config",)):
                c.fields(config, _CLASS_CONFIG_FIELDS, item_path)
                c.opaque_config(config, item_path)
    name = c.string(spec, "extendedResourceName", path)
    if name is not None:
        c.invalid_each(path + ("extendedResourceName",), name, extended_resource_name_errors(name))


def extended_resource_name_errors(name: str) -> list[str]:
    """Extended resources live outside the kubernetes.io domain, are not quota "requests."
    names, and must still form a label key when quota prefixes them (the declarative
    format check, which names each problem)."""
    errors = []
    if "/" not in name:
        errors.append("a name must be a domain-prefixed path, such as 'example.com/my-prop'")
    elif "kubernetes.io/" in name:
        errors.append('must not have "kubernetes.io/" domain')
    if name.startswith("requests."):
        errors.append('must not have "requests." prefix')
    return errors + label_key_errors("requests." + name)


# ---------------------------------------------------------------------------
# ResourceSlice

def _resource_slice(c: _Checker, obj: dict) -> None:
    if not c.api_version(obj, RESOURCE_API_VERSION):
        return
    c.fields(obj, _TOP_FIELDS, ())
    c.metadata(obj, namespaced=False)
    raw_spec = obj.get("spec")
    spec = c.obj(obj, "spec", ())
    if spec is None:
        if raw_spec is None:
            spec = {}  # a missing spec fails like an empty one
        else:
            return
    _slice_spec(c, spec, ("spec",))


def _slice_spec(c: _Checker, spec: dict, path: tuple) -> None:
    if FAST_PATH and _plain_slice_head(c, spec):
        devices, counter_sets = spec.get("devices"), spec.get("sharedCounters")
        if devices:
            _devices(c, devices, path + ("devices",), spec.get("perDeviceNodeSelection") is True)
        if counter_sets and not _plain_counter_holders(counter_sets, COUNTER_SETS_MAX, _COUNTER_SET_FIELDS, "name",
                                                       COUNTERS_PER_SET_MAX):
            _counter_sets(c, counter_sets, path + ("sharedCounters",))
        return
    c.fields(spec, _SLICE_SPEC_FIELDS, path)
    driver = c.string(spec, "driver", path)
    if driver is not None or spec.get("driver") is None:
        c.driver_name(driver, path + ("driver",))

    pool_path = path + ("pool",)
    pool = c.obj(spec, "pool", path)
    if pool is not None or spec.get("pool") is None:
        pool = pool or {}
        c.fields(pool, _POOL_FIELDS, pool_path)
        name = c.string(pool, "name", pool_path)
        if name is not None or pool.get("name") is None:
            c.pool_name(name, pool_path + ("name",))
        count = c.integer(pool, "resourceSliceCount", pool_path)
        if (count is not None or pool.get("resourceSliceCount") is None) and (count or 0) <= 0:
            c.invalid(pool_path + ("resourceSliceCount",), count or 0, "must be greater than zero")
        generation = c.integer(pool, "generation", pool_path)
        if generation is not None and generation < 0:
            c.invalid(pool_path + ("generation",), generation, "must be greater than or equal to zero")

    chosen = []
    if spec.get("nodeName") is not None:
        node_name = c.string(spec, "nodeName", path)
        if node_name == "":
            c.invalid(path + ("nodeName",), "", "must be either unset or set to a non-empty string")
        else:
            chosen.append("`nodeName`")
            if node_name is not None:
                c.dns_subdomain(node_name, path + ("nodeName",))
    if spec.get("nodeSelector") is not None:
        chosen.append("`nodeSelector`")
        selector = c.obj(spec, "nodeSelector", path)
        if selector is not None:
            terms = c.node_selector(selector, path + ("nodeSelector",))
            if (terms is None and selector.get("nodeSelectorTerms") is None) or (terms is not None and len(terms) != 1):
                terms_path = path + ("nodeSelector", "nodeSelectorTerms")
                c.add(terms_path, f"Invalid value: {_go_node_selector_terms(terms)}: must have exactly one node selector term")
    per_device = False
    for key in ("allNodes", "perDeviceNodeSelection"):
        if spec.get(key) is None:
            continue
        flag = c.boolean(spec, key, path)
        if flag is False:
            c.invalid(path + (key,), False, "must be either unset or set to true")
        else:
            chosen.append(f"`{key}`")
            per_device = per_device or (key == "perDeviceNodeSelection" and flag is True)
    if not chosen:
        c.required(path, "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required")
    elif len(chosen) > 1:
        c.invalid(
            path,
            "{" + ", ".join(chosen) + "}",
            "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, "
            "but multiple fields are set",
        )

    if spec.get("sharedCounters") is not None and spec.get("devices") is not None:
        c.invalid(path, "", "only one of `sharedCounters` or `devices` is allowed")

    devices = c.array(spec, "devices", path)
    if devices:
        _devices(c, devices, path + ("devices",), per_device)

    counter_sets = c.array(spec, "sharedCounters", path)
    if counter_sets:
        _counter_sets(c, counter_sets, path + ("sharedCounters",))

    if spec.get("partitionTypeAttribute") is not None:
        name = c.string(spec, "partitionTypeAttribute", path)
        if name is not None:
            _partition_type_attribute(c, name, driver or "", devices or [], path)

    c.skip_node_operations(spec, path)


def _has_entries(device, key: str) -> bool:
    return isinstance(device, dict) and isinstance(device.get(key), list) and len(device[key]) > 0


def _has_list_attributes(device) -> bool:
    attributes = device.get("attributes") if isinstance(device, dict) else None
    if not isinstance(attributes, dict):
        return False
    for value in attributes.values():
        if isinstance(value, dict):
            for kind, members in value.items():
                if kind in _LIST_KIND_SET and members is not None:
                    return True
    return False


def _devices(c: _Checker, devices: list, path: tuple, per_device: bool) -> None:
    if len(devices) > DEVICES_MAX_ADVANCED:  # at most that many is within either limit
        advanced = any(
            _has_entries(device, "taints") or _has_entries(device, "consumesCounters") or _has_list_attributes(device)
            for device in devices
        )
        limit = DEVICES_MAX_ADVANCED if advanced else DEVICES_MAX
        if len(devices) > limit:
            c.too_many(path, len(devices), limit)
            return
    fast = FAST_PATH
    seen = set()
    for index, device in enumerate(devices):
        if device.__class__ is not dict:
            device = c.as_object({} if device is None else device, path + (index,))
            if device is None:
                continue
            _device(c, device, path + (index,), per_device)
        elif not (fast and _plain_device(c, device, per_device)):
            _device(c, device, path + (index,), per_device)
        name = device.get("name")
        name = "" if name is None else name
        if isinstance(name, str):
            if name in seen:
                c.duplicate(path + (index,), name)
            seen.add(name)


def _device(c: _Checker, device: dict, path: tuple, per_device: bool) -> None:
    c.fields(device, DEVICE_FIELDS, path)
    name = c.name_label(device, "name", path)
    allow_multiple = c.boolean(device, "allowMultipleAllocations", path) is True
    c.boolean(device, "bindsToNode", path)

    attributes = c.obj(device, "attributes", path) or {}
    capacities = c.obj(device, "capacity", path) or {}
    total = len(attributes) + len(capacities)
    if total > ATTRIBUTES_AND_CAPACITIES_MAX:
        limit = ATTRIBUTES_AND_CAPACITIES_MAX
        c.invalid(path, total, f"the total number of attributes and capacities must not exceed {limit}")
    values = _count_attribute_values(attributes)
    if values > ATTRIBUTE_VALUES_MAX:
        c.invalid(path, values, f"the total number of attribute values must not exceed {ATTRIBUTE_VALUES_MAX}")

    attributes_path = path + ("attributes",)
    for key, attribute in attributes.items():
        name = key if key.__class__ is str else _key_str(key)
        c.qualified_name(name, attributes_path)
        if attribute.__class__ is not dict:
            attribute = c.as_object({} if attribute is None else attribute, attributes_path + (name,))
            if attribute is None:
                continue
        _attribute(c, attribute, attributes_path, name)

    capacity_path = path + ("capacity",)
    for key, entry_path, entry in c.map_items(capacities, capacity_path):
        c.qualified_name(key, capacity_path)
        entry = c.as_object({} if entry is None else entry, entry_path)
        if entry is not None:
            _capacity(c, entry, entry_path, allow_multiple)

    taints = c.array(device, "taints", path)
    if taints:
        if len(taints) > TAINTS_MAX:
            c.too_many(path + ("taints",), len(taints), TAINTS_MAX)
        else:
            for _, taint_path, taint in c.object_items(taints, path + ("taints",)):
                c.device_taint(taint, taint_path)

    consumptions = c.array(device, "consumesCounters", path)
    if consumptions:
        _consumptions(c, consumptions, path + ("consumesCounters",))

    _device_node_selection(c, device, path, per_device)
    c.binding_conditions(device, path)
    _node_allocatable_resources(c, device, capacities, path)


def _count_attribute_values(attributes: dict) -> int:
    count = 0
    for attribute in attributes.values():
        if not isinstance(attribute, dict):
            count += 1
            continue
        listed = 0
        for kind, values in attribute.items():  # an attribute has one member or a few, not all eight
            if kind in _LIST_KIND_SET and isinstance(values, list):
                listed += len(values)
        count += listed or 1
    return count


def _attribute(c: _Checker, attribute: dict, attributes_path: tuple, name: str) -> None:
    # An attribute of one scalar value is judged by its kind and value alone, and the same few
    # (`{int: 0}`, `{version: 1.2.0}`) come back on every device: those found valid are kept.
    memo = None
    if len(attribute) == 1:
        for kind, raw in attribute.items():
            if raw.__class__ in _SCALARS:
                memo = (kind, raw.__class__, raw)  # the class too: True == 1, but {int: true} is wrong
        if memo in c.good_attributes:
            return
    found = len(c.problems)
    _attribute_checked(c, attribute, attributes_path + (name,))
    if memo is not None and len(c.problems) == found:
        c.good_attributes.add(memo)


def _attribute_checked(c: _Checker, attribute: dict, path: tuple) -> None:
    c.fields(attribute, _ATTRIBUTE_FIELD_SET, path)
    present = [kind for kind in _ATTRIBUTE_FIELDS if attribute.get(kind) is not None]
    for kind in present:
        value_path = path + (kind,)
        raw = attribute[kind]
        if kind == "int":
            c.as_int(raw, value_path)
        elif kind == "bool":
            c.as_bool(raw, value_path)
        elif kind in ("string", "version"):
            text = c.as_string(raw, value_path)
            if text is not None:
                _attribute_text(c, text, value_path, kind == "version")
        else:
            items = c.as_array(raw, value_path)
            if items is None:
                continue
            if not items:
                c.invalid(value_path, items, "must not be empty if specified")
            for _, item_path, item in c.items(items, value_path):
                if kind == "ints":
                    c.as_int(item, item_path)
                elif kind == "bools":
                    c.as_bool(item, item_path)
                else:
                    text = c.as_string("" if item is None else item, item_path)
                    if text is not None:
                        _attribute_text(c, text, item_path, kind == "versions")
    # The union is checked declaratively: a member is set when it is not empty. The older
    # handwritten rule (a member is set when it is given) still speaks when the two disagree.
    given = [kind for kind in present if attribute[kind] != []]
    if not given:
        c.invalid(path, "", f"must specify one of: {_ATTRIBUTE_MEMBERS}")
    elif len(given) > 1:
        c.invalid(path, "{" + ", ".join(given) + "}", f"must specify exactly one of: {_ATTRIBUTE_MEMBERS}")
    elif len(present) > 1:
        c.add(path, f"Invalid value: {_go_attribute(attribute)}: exactly one value must be specified")


_GO_ATTRIBUTE_FIELDS = (("int", "IntValue"), ("bool", "BoolValue"), ("string", "StringValue"),
                        ("version", "VersionValue"), ("ints", "IntValues"), ("bools", "BoolValues"),
                        ("strings", "StringValues"), ("versions", "VersionValues"))


def _go_attribute(attribute: dict) -> str:
    """An attribute as the apiserver prints its internal form (Go field names, every field)."""
    return "{" + ",".join(f'"{go}":{json.dumps(attribute.get(kind), ensure_ascii=False, separators=(",", ":"))}'
                          for kind, go in _GO_ATTRIBUTE_FIELDS) + "}"


def _go_owner_references(references: list) -> str:
    keys = ("apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion")
    return _go_json([{k: ref.get(k, "") for k in keys if k in ref or k in keys[:4]} if isinstance(ref, dict) else ref
                     for ref in references])


def _go_json(value) -> str:
    """JSON as Go's encoder writes it (HTML characters escaped)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _ordered(value: dict, keys: tuple, *, required: tuple = ()) -> dict:
    """The fields of a v1 struct in declaration order, empty optional ones left out."""
    return {k: value.get(k, "") for k in keys if k in required or value.get(k) not in (None, "", [], {}, 0)
            or (k in value and isinstance(value.get(k), bool))}


def _stored_exact(request: dict, *, sub: bool) -> dict:
    out = dict(request)
    if not out.get("allocationMode"):
        out["allocationMode"] = "ExactCount"
    if out["allocationMode"] == "ExactCount" and not out.get("count"):
        out["count"] = 1
    if isinstance(out.get("selectors"), list):
        out["selectors"] = [{"cel": _ordered(x.get("cel") or {}, ("expression",), required=("expression",))}
                            if isinstance(x, dict) and isinstance(x.get("cel"), dict) else x for x in out["selectors"]]
    if isinstance(out.get("tolerations"), list):
        out["tolerations"] = [_ordered(dict(t, operator=t.get("operator") or "Equal"),
                                       ("key", "operator", "value", "effect", "tolerationSeconds"))
                              if isinstance(t, dict) else t for t in out["tolerations"]]
    capacity = out.get("capacity")
    if isinstance(capacity, dict):
        # A pointer to a struct: shown even when empty; only its known field is kept.
        amounts = capacity.get("requests") if isinstance(capacity.get("requests"), dict) else {}
        out["capacity"] = {"requests": {name: _stored_quantity(amounts[name]) for name in sorted(amounts, key=str)}}
        if not amounts:
            out["capacity"] = {}
    if isinstance(out.get("derivedAttributes"), list):
        out["derivedAttributes"] = [_ordered(a, ("name", "expression"), required=("name", "expression"))
                                    if isinstance(a, dict) else a for a in out["derivedAttributes"]]
    keys = ("deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations", "capacity",
            "derivedAttributes")
    required = ("deviceClassName",) + (("capacity",) if isinstance(out.get("capacity"), dict) else ())
    if sub:
        return _ordered(out, ("name",) + tuple(k for k in keys if k != "adminAccess"), required=("name",) + required)
    return _ordered(out, keys, required=required)


def _stored_request_json(request: dict) -> str:
    """A request as the apiserver prints it in a duplicate-value error: the v1 form, defaults applied."""
    out = {"name": request.get("name") or ""}
    if isinstance(request.get("exactly"), dict):
        out["exactly"] = _stored_exact(request["exactly"], sub=False)
    if isinstance(request.get("firstAvailable"), list) and request["firstAvailable"]:
        out["firstAvailable"] = [_stored_exact(x, sub=True) if isinstance(x, dict) else x
                                 for x in request["firstAvailable"]]
    return _go_json(out)


def _attribute_text(c: _Checker, text: str, path: tuple, is_version: bool) -> None:
    if is_version and not _is_semver(text):
        c.invalid(path, text, "must be a string compatible with semver.org spec 2.0.0")
    if _nbytes(text) > ATTRIBUTE_VALUE_MAX_LENGTH:
        c.too_long(path, ATTRIBUTE_VALUE_MAX_LENGTH)


def _capacity(c: _Checker, entry: dict, path: tuple, allow_multiple: bool) -> None:
    c.fields(entry, _CAPACITY_FIELDS, path)
    value = c.quantity(entry, "value", path)
    if entry.get("requestPolicy") is None:
        return
    policy_path = path + ("requestPolicy",)
    policy = c.obj(entry, "requestPolicy", path)
    if policy is None:
        return
    if not allow_multiple:
        c.forbidden(policy_path, "allowMultipleAllocations must be true")
        _policy_quantities(c, policy, policy_path)  # still decoded: a bad one refuses the object first
        return
    if value is None and entry.get("value") is None:
        value = Quantity.from_int(0)  # an unset value decodes as zero
    _request_policy(c, policy, policy_path, value)


def _policy_quantities(c: _Checker, policy: dict, path: tuple) -> None:
    c.quantity(policy, "default", path)
    values = policy.get("validValues")
    for _, item_path, item in c.items(values if isinstance(values, list) else [], path + ("validValues",)):
        c.as_quantity(item, item_path)
    bounds = policy.get("validRange")
    if isinstance(bounds, dict):
        for key in ("min", "max", "step"):
            c.quantity(bounds, key, path + ("validRange",))


def _request_policy(c: _Checker, policy: dict, path: tuple, capacity: Quantity | None) -> None:
    c.fields(policy, _REQUEST_POLICY_FIELDS, path)
    default = c.quantity(policy, "default", path)
    default_bad = default is None and policy.get("default") is not None
    raw_values = c.array(policy, "validValues", path)
    values_path = path + ("validValues",)
    valid_values = [c.as_quantity(item, item_path) for _, item_path, item in c.items(raw_values or [], values_path)]
    raw_range = c.obj(policy, "validRange", path)
    has_range = policy.get("validRange") is not None
    if raw_values and has_range:
        c.forbidden(
            path, 'exactly one policy can be specified, cannot specify "validValues" and "validRange" at the same time'
        )
        return
    if capacity is None or default_bad:
        return  # the arithmetic below needs every operand
    if raw_values:
        if default is None:
            c.required(path + ("default",), "required when validValues is defined")
        elif all(q is not None for q in valid_values):
            _valid_values(c, default, capacity, valid_values, values_path)
    elif has_range:
        if default is None:
            c.required(path + ("default",), "required when validRange is defined")
        elif raw_range is not None:
            _valid_range(c, default, capacity, raw_range, path + ("validRange",))


def _valid_values(c: _Checker, default: Quantity, capacity: Quantity, values: list, path: tuple) -> None:
    for i in range(len(values) - 1):
        if values[i] > values[i + 1]:
            c.invalid(path + (i + 1,), str(values[i + 1]), "values must be sorted in ascending order")
    found_default = False
    if len(values) > VALID_VALUES_MAX:
        c.too_many(path, len(values), VALID_VALUES_MAX)
    else:
        seen = set()
        for index, option in enumerate(values):
            if option > capacity:
                c.invalid(path + (index,), str(option), f"option is larger than capacity value: {capacity}")
            if option == default:
                found_default = True
            # the exact decimal value with fractional ranges (DRAFractionalCapacityRange), else Value()
            fractional = c.gates.enabled("DRAFractionalCapacityRange")
            key = format(option.value.normalize(), "f") if fractional else str(option.int_value())
            if key in seen:
                c.duplicate(path + (index,), key)
            seen.add(key)
    if not found_default:
        c.invalid(path, str(default), "default value is not valid according to the requestPolicy")


def _valid_range(c: _Checker, default: Quantity, capacity: Quantity, bounds: dict, path: tuple) -> None:
    c.fields(bounds, _RANGE_FIELDS, path)
    raw = {key: bounds.get(key) for key in ("min", "max", "step")}
    low, high, step = (c.quantity(bounds, key, path) for key in ("min", "max", "step"))
    if (high is None and raw["max"] is not None) or (step is None and raw["step"] is not None):
        return  # reported as a decoding error already
    if low is None:
        if raw["min"] is None:
            c.required(path + ("min",), "required when validRange is defined")
        return
    if low > capacity:
        c.invalid(path + ("min",), str(low), f"min is larger than capacity value: {capacity}")
    if default < low:
        c.invalid(path + ("default",), str(default), f"default is less than min: {low}")
    if high is not None:
        if low > high:
            c.invalid(path + ("max",), str(low), f"min is larger than max: {high}")
        if high > capacity:
            c.invalid(path + ("max",), str(high), f"max is larger than capacity value: {capacity}")
        if default > high:
            c.invalid(path + ("default",), str(default), f"default is more than max: {high}")
    operands = {"default": default, "min": low, "max": high, "step": step}
    # With fractional range values (DRAFractionalCapacityRange, off by default in 1.37)
    # the step arithmetic works in milli-units, which must be exact.
    use_milli = c.gates.enabled("DRAFractionalCapacityRange") and any(
        q is not None and not q.is_integer() for q in operands.values())
    if use_milli:
        unsafe = False
        for name, q in operands.items():
            if q is not None and not _fits_milli(q):
                c.invalid(path + (name,), str(q), "value cannot be represented as a milli value")
                unsafe = True
        if unsafe:
            return
    if step is None:
        return
    if step.sign() <= 0:
        c.invalid(path + ("step",), str(step), "must be greater than zero")
        return
    one_step = low.add(step)
    if one_step > capacity:
        c.invalid(path + ("step",), str(step), f"one step {one_step} is larger than capacity value: {capacity}")
    if not use_milli:
        unsafe = False
        for name, q in operands.items():
            if q is None:
                continue
            if q.sign() < 0:
                c.invalid(path + (name,), str(q), "must be greater than or equal to 0")
                unsafe = True
            elif q.value > _INT64_MAX:
                c.invalid(path + (name,), str(q), f"must not be larger than {_INT64_MAX}")
                unsafe = True
        if unsafe:
            return
    for value in (default, high):
        if value is None:
            continue
        if use_milli:
            offset, unit = value.milli_value() - low.milli_value(), step.milli_value()
        else:
            offset, unit = value.int_value() - low.int_value(), step.int_value()
        if unit and offset % unit != 0:
            c.invalid(path + ("step",), str(value), f"value is not a multiple of a given step ({step}) from ({low})")


def _fits_milli(q: Quantity) -> bool:
    milli = q.value * 1000
    return milli == milli.to_integral_value() and _INT64_MIN <= milli <= _INT64_MAX


def _consumptions(c: _Checker, consumptions: list, path: tuple) -> None:
    if len(consumptions) > CONSUMPTIONS_PER_DEVICE_MAX:
        c.too_many(path, len(consumptions), CONSUMPTIONS_PER_DEVICE_MAX)
        return
    seen = set()
    for _, item_path, consumption in c.object_items(consumptions, path):
        c.fields(consumption, _CONSUMPTION_FIELDS, item_path)
        counter_set = c.required_dns_label(consumption, "counterSet", item_path, declarative=True)
        _counters(c, consumption, item_path, COUNTERS_PER_CONSUMPTION_MAX)
        _compatibility_groups(c, consumption, item_path)
        key = counter_set if counter_set is not None else _empty_name(consumption, "counterSet")
        if key is not None:
            if key in seen:
                # Checked declaratively (a list keyed by counterSet): the whole entry is shown, as stored.
                c.add(item_path, f"Duplicate value: {_stored_consumption_json(consumption)}")
            seen.add(key)


def _stored_quantity(value):
    """A quantity as the apiserver writes it back (null decodes as zero)."""
    if value is None:
        return "0"
    try:
        return str(Quantity.parse(value))
    except (QuantityError, ValueError):
        return value


def _stored_consumption_json(consumption: dict) -> str:
    """A counter consumption in its v1 form (counters by name, quantities canonical; no counters at
    all when there are none: the field is `omitempty`)."""
    out = {"counterSet": consumption.get("counterSet") or ""}
    counters = consumption.get("counters")
    if isinstance(counters, dict) and counters:
        out["counters"] = {name: ({"value": _stored_quantity(c.get("value"))} if isinstance(c, dict) else c)
                           for name, c in sorted(counters.items(), key=lambda item: str(item[0]))}
    if consumption.get("compatibilityGroups"):
        out["compatibilityGroups"] = consumption["compatibilityGroups"]
    return _go_json(out)


def _counters(c: _Checker, holder: dict, path: tuple, limit: int) -> None:
    counters_path = path + ("counters",)
    counters = c.obj(holder, "counters", path)
    if counters is None:
        if holder.get("counters") is None:
            c.required(counters_path)
        return
    if not counters:
        c.required(counters_path)
        return
    if len(counters) > limit:
        c.too_many(counters_path, len(counters), limit)
        return
    for name, counter_path, counter in c.map_items(counters, counters_path):
        c.dns_label(name, counters_path)
        counter = c.as_object({} if counter is None else counter, counter_path)
        if counter is not None:
            c.fields(counter, _COUNTER_FIELDS, counter_path)
            c.quantity(counter, "value", counter_path)  # any quantity is a valid counter


def _empty_name(holder: dict, key: str) -> str | None:
    """The empty name when it is unset or empty (it still counts for uniqueness); None when ill-typed."""
    return "" if holder.get(key) in (None, "") else None


def _compatibility_groups(c: _Checker, consumption: dict, path: tuple) -> None:
    groups_path = path + ("compatibilityGroups",)
    groups = c.array(consumption, "compatibilityGroups", path)
    if not groups:
        return
    if len(groups) > COMPATIBILITY_GROUPS_MAX:  # the size check stands alone (a set: no duplicates either)
        c.too_many(groups_path, len(groups), COMPATIBILITY_GROUPS_MAX)
        for _ in c.string_items(groups, groups_path):
            pass  # but every item is still decoded
        return
    seen = set()
    for _, item_path, group in c.string_items(groups, groups_path):
        c.dns_label(group, item_path)
        if group in seen:
            c.duplicate(item_path, group)
        seen.add(group)


def _device_node_selection(c: _Checker, device: dict, path: tuple, per_device: bool) -> None:
    if not per_device:
        if (device.get("nodeName") is not None or device.get("nodeSelector") is not None
                or device.get("allNodes") is not None):
            c.invalid(
                path,
                None,
                "`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` "
                "is set to true in the ResourceSlice spec",
            )
        return
    chosen = []
    if device.get("nodeName") is not None:
        node_name = c.string(device, "nodeName", path)
        if node_name == "":
            c.invalid(path + ("nodeName",), "", "must not be empty")
        else:
            chosen.append("`nodeName`")
            if node_name is not None:
                c.dns_subdomain(node_name, path + ("nodeName",))
    if device.get("nodeSelector") is not None:
        chosen.append("`nodeSelector`")
        selector = c.obj(device, "nodeSelector", path)
        if selector is not None:
            c.node_selector(selector, path + ("nodeSelector",))
    if device.get("allNodes") is not None:
        flag = c.boolean(device, "allNodes", path)
        if flag is False:
            c.invalid(path + ("allNodes",), False, "must be either unset or set to true")
        else:
            chosen.append("`allNodes`")
    message = (
        "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
        "`perDeviceNodeSelection` is set to true in the ResourceSlice spec"
    )
    if not chosen:
        c.required(path, message)
    elif len(chosen) > 1:
        c.invalid(path, "{" + ", ".join(chosen) + "}", message)


def _node_allocatable_resources(c: _Checker, device: dict, capacities: dict, path: tuple) -> None:
    resources_path = path + ("nodeAllocatableResources",)
    resources = c.obj(device, "nodeAllocatableResources", path)
    if not resources:
        return
    capacity_names = {_key_str(key) for key in capacities}
    for name, key_path, entry in c.map_items(resources, resources_path):
        if name not in ("cpu", "memory") and not name.startswith("hugepages-"):
            c.invalid(key_path, name, "must be a node allocatable resource name")
        entry = c.as_object({} if entry is None else entry, key_path)
        if entry is None:
            continue
        c.fields(entry, _NODE_ALLOCATABLE_FIELDS, key_path)
        if entry.get("mapping") is None and entry.get("overhead") is None:
            c.required(key_path, "at least one of mapping or overhead must be set")
        mapping = c.obj(entry, "mapping", key_path)
        if mapping is not None:
            mapping_path = key_path + ("mapping",)
            c.fields(mapping, _NODE_ALLOCATABLE_MAPPING_FIELDS, mapping_path)
            # A union, checked declaratively: a member is set when it is given.
            given = [k for k in ("capacityKey", "deviceMultiplier") if mapping.get(k) is not None]
            if not given:
                c.invalid(mapping_path, "", f"must specify one of: {_NODE_ALLOCATABLE_MAPPING_MEMBERS}")
            elif len(given) > 1:
                c.invalid(mapping_path, "{" + ", ".join(given) + "}",
                          f"must specify exactly one of: {_NODE_ALLOCATABLE_MAPPING_MEMBERS}")
            capacity_key = c.string(mapping, "capacityKey", mapping_path)
            multiplier = c.quantity(mapping, "capacityMultiplier", mapping_path)
            if capacity_key is not None:
                if capacity_key == "":
                    c.invalid(mapping_path + ("capacityKey",), "", "capacityKey must not be an empty string")
                elif capacity_key not in capacity_names:
                    c.not_found(mapping_path + ("capacityKey",), capacity_key)
                if mapping.get("capacityMultiplier") is None:
                    c.required(
                        mapping_path + ("capacityMultiplier",), "capacityMultiplier is required when capacityKey is set"
                    )
            if multiplier is not None:
                # Its sign is checked only beside a capacityKey.
                if multiplier.sign() <= 0 and mapping.get("capacityKey") is not None:
                    c.invalid(mapping_path + ("capacityMultiplier",), str(multiplier), "must be positive")
                if mapping.get("capacityKey") is None:
                    c.required(
                        mapping_path + ("capacityKey",), "capacityKey is required when capacityMultiplier is set"
                    )
            per_device = c.quantity(mapping, "deviceMultiplier", mapping_path)
            if per_device is not None and per_device.sign() <= 0:
                c.invalid(mapping_path + ("deviceMultiplier",), str(per_device), "must be positive")
        overhead = c.obj(entry, "overhead", key_path)
        if overhead is not None:
            overhead_path = key_path + ("overhead",)
            c.fields(overhead, _NODE_ALLOCATABLE_OVERHEAD_FIELDS, overhead_path)
            if overhead.get("perPod") is None and overhead.get("perContainer") is None:
                c.invalid(overhead_path, "", "at least one of perPod or perContainer must be set")
                continue
            for key in ("perPod", "perContainer"):
                amount = c.quantity(overhead, key, overhead_path)
                if amount is not None and amount.sign() < 0:
                    c.invalid(overhead_path + (key,), str(amount), "must be non-negative")


def _counter_sets(c: _Checker, counter_sets: list, path: tuple) -> None:
    if len(counter_sets) > COUNTER_SETS_MAX:
        c.too_many(path, len(counter_sets), COUNTER_SETS_MAX)
        return
    seen = set()
    for _, item_path, counter_set in c.object_items(counter_sets, path):
        c.fields(counter_set, _COUNTER_SET_FIELDS, item_path)
        name = c.required_dns_label(counter_set, "name", item_path, declarative=True)
        _counters(c, counter_set, item_path, COUNTERS_PER_SET_MAX)
        key = name if name is not None else _empty_name(counter_set, "name")
        if key is not None:
            if key in seen:
                # Checked declaratively (a list keyed by name): the whole entry is shown, as stored.
                c.add(item_path, f"Duplicate value: {_stored_counter_set_json(counter_set)}")
            seen.add(key)


def _stored_counter_set_json(counter_set: dict) -> str:
    """A counter set in its v1 form (name, then counters by name with canonical quantities; no
    counters at all when there are none: the field is `omitempty`)."""
    out = {"name": counter_set.get("name") or ""}
    counters = counter_set.get("counters")
    if isinstance(counters, dict) and counters:
        out["counters"] = {name: ({"value": _stored_quantity(c.get("value"))} if isinstance(c, dict) else c)
                           for name, c in sorted(counters.items(), key=lambda item: str(item[0]))}
    return _go_json(out)


def _partition_type_attribute(c: _Checker, name: str, driver: str, devices: list, path: tuple) -> None:
    attribute_path = path + ("partitionTypeAttribute",)
    if not any(_has_entries(device, "consumesCounters") for device in devices):
        c.invalid(attribute_path, name, "may only be set on a slice which declares devices that consume counters")
        return
    before = len(c.problems)
    c.fully_qualified_name(name, attribute_path)
    if len(c.problems) > before:
        return  # no device can carry a malformed name
    bare = name[len(driver) + 1:] if driver and name.startswith(driver + "/") else ""
    for index, device in enumerate(devices):
        if not _has_entries(device, "consumesCounters"):
            continue
        attributes = device.get("attributes")
        attributes = attributes if isinstance(attributes, dict) else {}
        found = name in attributes or (bare and bare in attributes)
        attribute = attributes.get(name) if name in attributes else attributes.get(bare) if bare else None
        where = path + ("devices", index, "attributes", name)
        if not found:
            c.required(
                where, "device consumes counters and `partitionTypeAttribute` names this attribute, so it must be set"
            )
        elif not (isinstance(attribute, dict) and attribute.get("string") is not None):
            c.invalid(where, attribute, "must be a string value because `partitionTypeAttribute` names this attribute")


# ---------------------------------------------------------------------------
# ResourceClaim and ResourceClaimTemplate

def _resource_claim(c: _Checker, obj: dict) -> None:
    if not c.api_version(obj, RESOURCE_API_VERSION):
        return
    c.fields(obj, _TOP_FIELDS_WITH_STATUS, ())
    c.metadata(obj, namespaced=True)
    spec = c.obj(obj, "spec", ())
    request_names = {}
    if spec is not None:
        request_names = _claim_spec(c, spec, ("spec",))
    status = c.obj(obj, "status", ())
    if status is not None:
        allocation = c.obj(status, "allocation", ("status",))
        if allocation is not None and not (FAST_PATH and _plain_allocation(c, allocation, request_names)):
            _allocation(c, allocation, ("status", "allocation"), request_names)
        _reserved_for(c, status, allocation is not None or status.get("allocation") is not None)


def _reserved_for(c: _Checker, status: dict, allocated: bool) -> None:
    """The claim's consumers: each names its resource, name and UID; no UID twice."""
    path = ("status", "reservedFor")
    consumers = c.array(status, "reservedFor", ("status",))
    if not consumers:
        return
    if len(consumers) > RESERVED_FOR_MAX:
        c.too_many(path, len(consumers), RESERVED_FOR_MAX)
    else:
        seen = set()
        for _, item_path, consumer in c.object_items(consumers, path):
            c.fields(consumer, _CONSUMER_FIELD_SET, item_path)
            values = {key: c.string(consumer, key, item_path) for key in _CONSUMER_FIELDS}
            for key in ("resource", "name", "uid"):
                if not values[key] and (values[key] is not None or consumer.get(key) is None):
                    c.required(item_path + (key,))
            uid = values["uid"] if values["uid"] is not None else ("" if consumer.get("uid") is None else None)
            if uid is not None:
                if uid in seen:
                    c.duplicate(item_path, uid)
                seen.add(uid)
    if not allocated:
        c.forbidden(path, "may not be specified when `allocated` is not set")


def _resource_claim_template(c: _Checker, obj: dict) -> None:
    if not c.api_version(obj, RESOURCE_API_VERSION):
        return
    c.fields(obj, _TOP_FIELDS, ())
    c.metadata(obj, namespaced=True)
    spec = c.obj(obj, "spec", ())
    if spec is None:
        return
    path = ("spec",)
    c.fields(spec, _TEMPLATE_SPEC_FIELDS, path)
    meta = c.obj(spec, "metadata", path)
    if meta is not None:
        meta_path = path + ("metadata",)
        c.fields(meta, _OBJECT_META_FIELDS, meta_path)
        c.annotations(meta, meta_path)
        c.labels(meta, meta_path)
        for key, value in meta.items():
            name = _key_str(key)
            if name in _OBJECT_META_FIELDS - {"labels", "annotations"} and value not in (None, "", 0, [], {}):
                c.forbidden(meta_path + (name,), "cannot be set for a resource claim template")
    claim_spec = c.obj(spec, "spec", path)
    if claim_spec is not None:
        _claim_spec(c, claim_spec, path + ("spec",))


def _claim_spec(c: _Checker, spec: dict, path: tuple) -> dict:
    """Validate a ResourceClaimSpec; returns the request names (request -> subrequests or None)."""
    c.fields(spec, _CLAIM_SPEC_FIELDS, path)
    devices = c.obj(spec, "devices", path)
    if devices is None:
        return {}
    path = path + ("devices",)
    c.fields(devices, _DEVICE_CLAIM_FIELDS, path)
    requests = c.array(devices, "requests", path) or []
    constraints = c.array(devices, "constraints", path) or []
    configs = c.array(devices, "config", path) or []
    names = _gather_request_names(requests)
    constrained = _constraint_attributes(constraints)
    if FAST_PATH and _plain_claim_devices(c, requests, constraints, configs, names, constrained):
        return names

    requests_path = path + ("requests",)
    if len(requests) > REQUESTS_MAX:
        c.too_many(requests_path, len(requests), REQUESTS_MAX)
    else:
        seen = set()
        for _, item_path, request in c.object_items(requests, requests_path):
            _request(c, request, item_path, constrained)
            name = request.get("name")
            name = "" if name is None else name
            if isinstance(name, str):
                if name in seen:
                    # Checked declaratively (a list keyed by name): the whole request is shown, as stored.
                    c.add(item_path, f"Duplicate value: {_stored_request_json(request)}")
                seen.add(name)

    constraints_path = path + ("constraints",)
    if len(constraints) > CONSTRAINTS_MAX:
        c.too_many(constraints_path, len(constraints), CONSTRAINTS_MAX)
    else:
        for _, item_path, constraint in c.object_items(constraints, constraints_path):
            _constraint(c, constraint, item_path, names)

    configs_path = path + ("config",)
    if len(configs) > CONFIG_MAX:
        c.too_many(configs_path, len(configs), CONFIG_MAX)
    else:
        for _, item_path, config in c.object_items(configs, configs_path):
            c.fields(config, _CLAIM_CONFIG_FIELDS, item_path)
            _request_refs(c, config, item_path, names)
            c.opaque_config(config, item_path)
    return names


def _gather_request_names(requests: list) -> dict:
    names = {}
    for request in requests:
        if not isinstance(request, dict) or not isinstance(request.get("name"), str):
            continue
        subrequests = request.get("firstAvailable")
        if isinstance(subrequests, list) and subrequests:
            names[request["name"]] = {
                sub["name"] for sub in subrequests if isinstance(sub, dict) and isinstance(sub.get("name"), str)
            }
        else:
            names[request["name"]] = None
    return names


def _constraint_attributes(constraints: list) -> dict:
    """Which attribute names the constraints use, per request reference ("" = every request)."""
    used: dict[str, set] = {}
    for constraint in constraints:
        if not isinstance(constraint, dict):
            continue
        attribute = constraint.get("matchAttribute")
        if attribute is None:
            attribute = constraint.get("distinctAttribute")
        if not isinstance(attribute, str):
            continue
        refs = constraint.get("requests")
        refs = [ref for ref in refs if isinstance(ref, str)] if isinstance(refs, list) and refs else [""]
        for ref in refs:
            used.setdefault(ref, set()).add(attribute)
    return used


def _request(c: _Checker, request: dict, path: tuple, constrained: dict) -> None:
    c.fields(request, _REQUEST_FIELDS, path)
    name = c.name_label(request, "name", path)
    raw_first = request.get("firstAvailable")
    has_first = raw_first is not None and (not isinstance(raw_first, list) or len(raw_first) > 0)
    has_exactly = request.get("exactly") is not None
    if not has_first and not has_exactly:
        c.required(path, "exactly one of `exactly` or `firstAvailable` is required")
        if raw_first is not None:
            c.array(request, "firstAvailable", path)
    elif has_first and has_exactly:
        c.invalid(path, None, "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set")
        c.array(request, "firstAvailable", path)
        c.obj(request, "exactly", path)
    elif has_first:
        subrequests = c.array(request, "firstAvailable", path)
        if subrequests is not None:
            _subrequests(c, subrequests, path + ("firstAvailable",), name or "", constrained)
    else:
        exactly = c.obj(request, "exactly", path)
        if exactly is not None:
            c.fields(exactly, _EXACT_FIELDS, path + ("exactly",))
            _request_body(c, exactly, path + ("exactly",), name or "", constrained)
            c.boolean(exactly, "adminAccess", path + ("exactly",))


def _subrequests(c: _Checker, subrequests: list, path: tuple, parent: str, constrained: dict) -> None:
    if len(subrequests) > SUBREQUESTS_MAX:
        c.too_many(path, len(subrequests), SUBREQUESTS_MAX)
        return
    seen = set()
    for _, item_path, sub in c.object_items(subrequests, path):
        c.fields(sub, _SUBREQUEST_FIELDS, item_path)
        name = c.name_label(sub, "name", item_path)
        _request_body(c, sub, item_path, f"{parent}/{name or ''}", constrained, sub=True)
        key = sub.get("name")
        key = "" if key is None else key
        if isinstance(key, str):
            if key in seen:  # keyed by name, checked declaratively: shown whole, as stored
                c.add(item_path, f"Duplicate value: {_go_json(_stored_exact(sub, sub=True))}")
            seen.add(key)


def _request_body(c: _Checker, body: dict, path: tuple, reference: str, constrained: dict, *,
                  sub: bool = False) -> None:
    """The fields an exact request and a subrequest share. A subrequest's class name is checked
    declaratively in 1.37 (its length said in bytes), an exact request's by hand."""
    class_name = c.required_string(body, "deviceClassName", path)
    if class_name is not None:
        c.invalid_each(path + ("deviceClassName",), class_name, dns_subdomain_errors(class_name, declarative=sub))
    c.selectors(body, path)
    _derived_attributes(c, body, path, reference, constrained)
    _allocation_mode(c, body, path)
    c.device_tolerations(body, path)
    capacity = c.obj(body, "capacity", path)
    if capacity is not None:
        capacity_path = path + ("capacity",)
        c.fields(capacity, _CAPACITY_REQUIREMENTS_FIELDS, capacity_path)
        amounts = c.obj(capacity, "requests", capacity_path)
        requests_path = capacity_path + ("requests",)
        # 1.37.2 validates neither the names of a request's capacity nor their number (only the
        # amounts decode as quantities); a name no device has simply matches no device.
        for _, amount_path, amount in c.map_items(amounts or {}, requests_path):
            c.as_quantity(amount, amount_path)


def _allocation_mode(c: _Checker, body: dict, path: tuple) -> None:
    mode = c.string(body, "allocationMode", path)
    if mode is None and body.get("allocationMode") is not None:
        return  # not a string: reported already
    count = c.integer(body, "count", path)
    if count is None:
        if body.get("count") is not None:
            return  # not an integer: reported already
        count = 0
    if mode == "All":
        if count != 0:
            c.invalid(path + ("count",), count, "must not be specified when allocationMode is 'All'")
    elif mode in (None, "", "ExactCount"):
        # An empty mode is ExactCount, and a count of 0 means "unset" and becomes 1.
        if count < 0:
            c.invalid(path + ("count",), count, "must be greater than zero")
    else:
        c.unsupported(path + ("allocationMode",), mode, ALLOCATION_MODES)


def _derived_attributes(c: _Checker, body: dict, path: tuple, reference: str, constrained: dict) -> None:
    list_path = path + ("derivedAttributes",)
    attributes = c.array(body, "derivedAttributes", path)
    if not attributes:
        return
    if len(attributes) > DERIVED_ATTRIBUTES_MAX:
        c.too_many(list_path, len(attributes), DERIVED_ATTRIBUTES_MAX)
    seen = set()
    for _, item_path, attribute in c.object_items(attributes, list_path):
        c.fields(attribute, _DERIVED_FIELDS, item_path)
        name = c.required_string(attribute, "name", item_path)
        if name is not None:
            c.fully_qualified_name(name, item_path + ("name",))
            if not _used_by_constraint(name, reference, constrained):
                c.invalid(
                    item_path + ("name",),
                    name,
                    "must be referenced by at least one matchAttribute or distinctAttribute constraint targeting this request",
                )
            if name in seen:
                c.duplicate(item_path, name)
            seen.add(name)
        if attribute.get("expression") in (None, ""):
            c.required(item_path + ("expression",))
        else:
            c.cel_expression(attribute, item_path, derived=True)


def _used_by_constraint(name: str, reference: str, constrained: dict) -> bool:
    parent = reference.split("/", 1)[0]
    return any(name in constrained.get(ref, ()) for ref in ("", reference, parent))


def _request_refs(c: _Checker, holder: dict, path: tuple, names: dict) -> None:
    """`requests`: a set of references to requests ("req") or subrequests ("req/sub")."""
    refs_path = path + ("requests",)
    refs = c.array(holder, "requests", path)
    if not refs:
        return
    if len(refs) > REQUESTS_MAX:
        c.too_many(refs_path, len(refs), REQUESTS_MAX)
        return
    seen = set()
    for _, item_path, ref in c.string_items(refs, refs_path):
        _request_ref(c, ref, item_path, names)
        if ref in seen:
            c.duplicate(item_path, ref)
        seen.add(ref)


_REF_MESSAGE = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"


def _request_ref(c: _Checker, ref: str, path: tuple, names: dict) -> None:
    segments = ref.split("/")
    if len(segments) > 2:
        c.invalid(path, ref, _REF_MESSAGE)
        return
    for segment in segments:
        c.dns_label(segment, path)
    request, _, sub = ref.partition("/")
    known = request in names and (len(segments) == 1 or sub in (names[request] or ()))
    if not known:
        c.invalid(path, ref, _REF_MESSAGE)


def _constraint(c: _Checker, constraint: dict, path: tuple, names: dict) -> None:
    c.fields(constraint, _CONSTRAINT_FIELDS, path)
    _request_refs(c, constraint, path, names)
    match = constraint.get("matchAttribute") is not None
    distinct = constraint.get("distinctAttribute") is not None
    if match and distinct:
        c.invalid(
            path,
            "{`matchAttribute`, `distinctAttribute`}",
            'exactly one of "matchAttribute" or "distinctAttribute" is required, but multiple fields are set',
        )
    elif not match and not distinct:
        # The apiserver's wording, odd as it is; without consumable capacity only matchAttribute exists.
        if c.gates.enabled("DRAConsumableCapacity"):
            c.required(path, 'exactly one of "matchAttribute" or "distinctAttribute" is required, but multiple fields are set')
        else:
            c.required(path + ("matchAttribute",))
    for key in ("matchAttribute", "distinctAttribute"):
        if constraint.get(key) is None:
            continue
        name = c.string(constraint, key, path)
        if name is not None:  # given, even empty: checked as a name
            c.fully_qualified_name(name, path + (key,), declarative=True)


# -- status.allocation of an already-allocated claim ----------------------------

def _allocation(c: _Checker, allocation: dict, path: tuple, names: dict) -> None:
    c.fields(allocation, _ALLOCATION_FIELDS, path)
    c.string(allocation, "allocationTimestamp", path)
    devices = c.obj(allocation, "devices", path)
    if devices is not None:
        devices_path = path + ("devices",)
        c.fields(devices, _ALLOCATION_DEVICES_FIELDS, devices_path)
        results = c.array(devices, "results", devices_path) or []
        results_path = devices_path + ("results",)
        if len(results) > RESULTS_MAX:
            c.too_many(results_path, len(results), RESULTS_MAX)
        else:
            for _, item_path, result in c.object_items(results, results_path):
                _result(c, result, item_path, names)
        configs = c.array(devices, "config", devices_path) or []
        configs_path = devices_path + ("config",)
        if len(configs) > ALLOCATION_CONFIG_MAX:
            c.too_many(configs_path, len(configs), ALLOCATION_CONFIG_MAX)
        else:
            for _, item_path, config in c.object_items(configs, configs_path):
                c.fields(config, _ALLOCATION_CONFIG_FIELDS, item_path)
                source = c.required_string(config, "source", item_path)
                if source is not None and source not in CONFIG_SOURCES:
                    c.unsupported(item_path + ("source",), source, CONFIG_SOURCES)
                _request_refs(c, config, item_path, names)
                c.opaque_config(config, item_path)
    selector = c.obj(allocation, "nodeSelector", path)
    if selector is not None:
        c.node_selector(selector, path + ("nodeSelector",))


def _result(c: _Checker, result: dict, path: tuple, names: dict) -> None:
    c.fields(result, _RESULT_FIELDS, path)
    request = c.as_string("" if result.get("request") is None else result["request"], path + ("request",))
    if request is not None:  # an empty reference is not a name: Invalid, as upstream says
        _request_ref(c, request, path + ("request",), names)
    driver = c.string(result, "driver", path)
    if driver is not None or result.get("driver") is None:
        c.driver_name(driver, path + ("driver",))
    pool = c.string(result, "pool", path)
    if pool is not None or result.get("pool") is None:
        c.pool_name(pool, path + ("pool",))
    c.name_label(result, "device", path)
    c.boolean(result, "adminAccess", path)
    c.binding_conditions(result, path)
    tolerations = c.array(result, "tolerations", path)
    if tolerations:
        for _, item_path, toleration in c.object_items(tolerations, path + ("tolerations",)):
            c.device_toleration(toleration, item_path)
    share_id = c.string(result, "shareID", path)
    if share_id is not None:
        problem = _uuid_error(share_id)
        if problem:
            c.invalid(path + ("shareID",), share_id, problem)
    consumed = c.obj(result, "consumedCapacity", path)
    for _, amount_path, amount in c.map_items(consumed or {}, path + ("consumedCapacity",)):
        c.as_quantity(amount, amount_path)
    c.skip_node_operations(result, path)


# ---------------------------------------------------------------------------
# Node and Pod (only what the playground reads)

def _node(c: _Checker, obj: dict) -> None:
    if not c.api_version(obj, CORE_API_VERSION):
        return
    c.fields(obj, _TOP_FIELDS_WITH_STATUS, ())
    c.metadata(obj, namespaced=False)
    c.obj(obj, "spec", ())
    status = c.obj(obj, "status", ())
    if status is not None:
        features = c.array(status, "declaredFeatures", ("status",))
        if features:
            list(c.string_items(features, ("status", "declaredFeatures")))


def _pod(c: _Checker, obj: dict) -> None:
    if not c.api_version(obj, CORE_API_VERSION):
        return
    c.fields(obj, _TOP_FIELDS_WITH_STATUS, ())
    c.metadata(obj, namespaced=True)
    c.obj(obj, "status", ())
    spec = c.obj(obj, "spec", ())
    if spec is None:
        return
    path = ("spec",)
    claims = c.array(spec, "resourceClaims", path)
    if claims:
        seen = set()
        for _, item_path, claim in c.object_items(claims, path + ("resourceClaims",)):
            c.fields(claim, _POD_CLAIM_FIELDS, item_path)
            name = c.string(claim, "name", item_path)
            if not name:
                if name is not None or claim.get("name") is None:
                    c.required(item_path + ("name",))
            elif name in seen:
                c.duplicate(item_path + ("name",), name)
            else:
                c.dns_label(name, item_path + ("name",))
                seen.add(name)
            has_claim = claim.get("resourceClaimName") is not None
            has_template = claim.get("resourceClaimTemplateName") is not None
            if has_claim and has_template:
                c.invalid(
                    item_path, claim, "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified"
                )
            elif not has_claim and not has_template:
                shown = _go_json({"Name": claim.get("name") or "", "ResourceClaimName": claim.get("resourceClaimName"),
                                  "ResourceClaimTemplateName": claim.get("resourceClaimTemplateName")})
                c.add(item_path, f"Invalid value: {shown}: must specify one of: `resourceClaimName`, "
                      "`resourceClaimTemplateName`")
            for key in ("resourceClaimName", "resourceClaimTemplateName"):
                value = c.string(claim, key, item_path)
                if value is not None:
                    c.dns_subdomain(value, item_path + (key,))
    node_name = c.string(spec, "nodeName", path)
    if node_name:
        c.dns_subdomain(node_name, path + ("nodeName",))
    c.labels(spec, path, key="nodeSelector")
    _pod_affinity_types(c, spec, path)
    tolerations = c.array(spec, "tolerations", path)
    for _, item_path, toleration in c.object_items(tolerations or [], path + ("tolerations",)):
        _pod_toleration(c, toleration, item_path)
    _pod_quantities(c, spec, obj.get("status"))


def _pod_quantities(c: _Checker, spec: dict, status) -> None:
    """Every quantity of a Pod decodes, or the apiserver refuses the Pod before validating it (a
    quantity's error names no field). Only values inside objects of the right shape are read here:
    a wrong shape elsewhere is a decoding error of a field the playground does not check."""
    def resource_list(holder, key, path):
        amounts = holder.get(key) if isinstance(holder, dict) else None
        if isinstance(amounts, dict):
            for _, amount_path, amount in c.map_items(amounts, path + (key,)):
                c.as_quantity(amount, amount_path)

    def requirements(holder, key, path):
        resources = holder.get(key) if isinstance(holder, dict) else None
        for limit in ("limits", "requests"):
            resource_list(resources, limit, path + (key,))

    def divisor(holder, path):
        ref = holder.get("resourceFieldRef") if isinstance(holder, dict) else None
        if isinstance(ref, dict):
            c.as_quantity(ref.get("divisor"), path + ("resourceFieldRef", "divisor"))

    def each(holder, key, path):
        items = holder.get(key) if isinstance(holder, dict) else None
        if isinstance(items, list):
            for index, item in enumerate(items):
                if isinstance(item, dict):
                    yield path + (key, index), item

    path = ("spec",)
    for key in ("containers", "initContainers", "ephemeralContainers"):
        for item_path, container in each(spec, key, path):
            requirements(container, "resources", item_path)
            for env_path, env in each(container, "env", item_path):
                value_from = env.get("valueFrom")
                divisor(value_from, env_path + ("valueFrom",))
    resource_list(spec, "overhead", path)
    requirements(spec, "resources", path)
    for volume_path, volume in each(spec, "volumes", path):
        empty_dir = volume.get("emptyDir")
        if isinstance(empty_dir, dict):
            c.as_quantity(empty_dir.get("sizeLimit"), volume_path + ("emptyDir", "sizeLimit"))
        ephemeral = volume.get("ephemeral")
        template = ephemeral.get("volumeClaimTemplate") if isinstance(ephemeral, dict) else None
        claim_spec = template.get("spec") if isinstance(template, dict) else None
        requirements(claim_spec, "resources", volume_path + ("ephemeral", "volumeClaimTemplate", "spec"))
        for item_path, item in each(volume.get("downwardAPI"), "items", volume_path + ("downwardAPI",)):
            divisor(item, item_path)
        for source_path, source in each(volume.get("projected"), "sources", volume_path + ("projected",)):
            for item_path, item in each(source.get("downwardAPI"), "items", source_path + ("downwardAPI",)):
                divisor(item, item_path)
    if isinstance(status, dict):
        resource_list(status, "allocatedResources", ("status",))
        requirements(status, "resources", ("status",))
        for key in ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses"):
            for item_path, container in each(status, key, ("status",)):
                resource_list(container, "allocatedResources", item_path)
                requirements(container, "resources", item_path)


_REQUIRED, _PREFERRED = "requiredDuringSchedulingIgnoredDuringExecution", "preferredDuringSchedulingIgnoredDuringExecution"


def _pod_affinity_types(c: _Checker, spec: dict, path: tuple) -> None:
    """The shape of `spec.affinity` as the apiserver decodes it (objects, lists and strings where its Go
    types have them): a value of another type is refused there, before any scheduling reads it."""
    affinity = c.obj(spec, "affinity", path)
    if not affinity:
        return
    path = path + ("affinity",)
    node = c.obj(affinity, "nodeAffinity", path)
    if node:
        node_path = path + ("nodeAffinity",)
        required = c.obj(node, _REQUIRED, node_path)
        if required:
            terms = c.array(required, "nodeSelectorTerms", node_path + (_REQUIRED,))
            for _, term_path, term in c.object_items(terms or [], node_path + (_REQUIRED, "nodeSelectorTerms")):
                _node_term_types(c, term, term_path)
        preferred = c.array(node, _PREFERRED, node_path)
        for _, item_path, item in c.object_items(preferred or [], node_path + (_PREFERRED,)):
            term = c.obj(item, "preference", item_path)
            if term:
                _node_term_types(c, term, item_path + ("preference",))
    for key in ("podAffinity", "podAntiAffinity"):
        pods = c.obj(affinity, key, path)
        if pods:
            for when in (_REQUIRED, _PREFERRED):
                items = c.array(pods, when, path + (key,))
                for _ in c.object_items(items or [], path + (key, when)):
                    pass  # each term an object; the scheduler's pod affinity is not modelled


def _node_term_types(c: _Checker, term: dict, path: tuple) -> None:
    for key in ("matchExpressions", "matchFields"):
        requirements = c.array(term, key, path)
        for _, item_path, requirement in c.object_items(requirements or [], path + (key,)):
            c.string(requirement, "key", item_path)
            c.string(requirement, "operator", item_path)
            values = c.array(requirement, "values", item_path)
            for index, value in enumerate(values or []):
                if not isinstance(value, str):
                    c.invalid(item_path + ("values", index), value, "expected string")


def _pod_toleration(c: _Checker, toleration: dict, path: tuple) -> None:
    c.fields(toleration, _TOLERATION_FIELDS, path)
    key = c.string(toleration, "key", path)
    operator = c.string(toleration, "operator", path)
    value = c.string(toleration, "value", path)
    effect = c.string(toleration, "effect", path)
    seconds = c.integer(toleration, "tolerationSeconds", path)
    if key:
        c.label_name(key, path + ("key",))
    operator_known = operator is not None or toleration.get("operator") is None
    if not key and toleration.get("key") in (None, "") and operator_known and operator != "Exists":
        c.invalid(
            path + ("operator",),
            operator or "",
            'operator must be Exists when `key` is empty, which means "match all values and all keys"',
        )
    if seconds is not None and effect != "NoExecute":
        c.invalid(path + ("effect",), effect or "", "effect must be 'NoExecute' when `tolerationSeconds` is set")
    if operator in (None, "", "Equal"):
        if value is not None:
            errors = label_value_errors(value)
            if errors:
                c.invalid(path + ("operator",), value, ";".join(errors))
    elif operator == "Exists":
        if value:
            c.invalid(path + ("operator",), value, "value must be empty when `operator` is 'Exists'")
    else:
        c.unsupported(path + ("operator",), operator, TOLERATION_OPERATORS)
    if effect and effect not in NODE_TAINT_EFFECTS:
        c.unsupported(path + ("effect",), effect, NODE_TAINT_EFFECTS)


_HANDLERS = {
    "DeviceClass": _device_class,
    "ResourceSlice": _resource_slice,
    "ResourceClaim": _resource_claim,
    "ResourceClaimTemplate": _resource_claim_template,
    "Node": _node,
    "Pod": _pod,
}
