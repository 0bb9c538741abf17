"""Objects through the playground's validation and through kube-apiserver 1.37.2's create path, compared.

The oracle (`tests/kube/cmd/validate/`) is a Go program built on k8s.io/kubernetes
v1.37.2: per object it decodes strictly into the v1 type, defaults, converts to the
internal type and runs the registry strategy (gated field drops, handwritten and
declarative validation, CEL compilation and cost). It is built once into the
gitignored `tests/kube/.build/` and driven in batch mode: one process, one JSON line
per scenario.

Compared per object: valid or not; the set of (field path, error type) pairs; the
message of each error the playground reports (its wording claims to be the
apiserver's); the fields dropped on create. An object the apiserver cannot decode
(a value of the wrong JSON type) is compared by validity alone: the apiserver stops at
the first such value and names no list index, the playground names them all.
"""
from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from allocator.engine.cel.errors import SYNTAX_WORDING_NOTE
from allocator.engine.gates import GATES, parse_gates
from allocator.engine.problems import DROPPED_ON_CREATE, ERROR
from allocator.engine.scenario import read_scenario
from allocator.engine.validation import GENERATED_NAME_NOTE, is_decoding_error
from tests.upstream import kube_build
from tests.upstream.batch import BatchProcess

KUBE_DIR = Path(__file__).resolve().parent.parent / "kube"
SOURCE_DIR = KUBE_DIR / "cmd" / "validate"
BUILD_DIR = Path(os.environ.get("DRA_KUBE_BUILD_DIR", KUBE_DIR / ".build"))
VALIDATOR_BIN = BUILD_DIR / "validate"

# field.ErrorType names and the words the apiserver prints for them.
ERROR_TYPES = {
    "Not found": "FieldValueNotFound",
    "Required value": "FieldValueRequired",
    "Duplicate value": "FieldValueDuplicate",
    "Invalid value": "FieldValueInvalid",
    "Unsupported value": "FieldValueNotSupported",
    "Forbidden": "FieldValueForbidden",
    "Too long": "FieldValueTooLong",
    "Too many": "FieldValueTooMany",
    "Internal error": "InternalError",
    "Invalid value type": "FieldValueTypeInvalid",
}
LENIENT_SUFFIX = " (the apiserver would refuse this; the playground shows what the allocator does with it)"
# Kinds the oracle takes through create; Pods only for the fields the playground checks.
KINDS = {("resource.k8s.io/v1", k) for k in
         ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate", "DeviceTaintRule")}
KINDS.add(("v1", "Pod"))
# What the playground does not check yet: a claim's device status (conditions, network data),
# written by drivers, never read by the allocator. Upstream's findings there are left out.
NOT_MODELLED = ("status.devices",)
POD_FIELDS = ("metadata.", "spec.resourceClaims", "spec.nodeName", "spec.nodeSelector", "spec.tolerations")


class ValidatorUnavailable(Exception):
    """Go is not installed, or the oracle does not build."""


def go_binary() -> str | None:
    return shutil.which("go")


def build_validator() -> Path:
    """Build the oracle unless an up-to-date binary is there (one builder at a time)."""
    go = go_binary()
    if go is None:
        raise ValidatorUnavailable("Go is not installed: the apiserver differential tests need `go` on PATH")
    try:
        return kube_build.build("validate")  # every oracle of tests/kube at once
    except kube_build.KubeBuildError as exc:
        raise ValidatorUnavailable(str(exc)) from None


class Validator(BatchProcess):
    """One oracle process in batch mode; ask() sends a scenario and reads every object's answer."""

        # stderr holds klog's notes (gates set, declarative validation mismatches): not answers.
    name = "the apiserver oracle"

    def __init__(self, binary: Path | None = None):
        super().__init__(binary or build_validator(), quiet=True)

    def ask(self, scenario: str, *, gates: str = "") -> dict:
        return self.request({"scenario": scenario, "featureGates": gates})


_MAP_KEY = re.compile(r"\[([^\]]*[^\]0-9][^\]]*|)\]")


def playground_path(path: str) -> str:
    """Kubernetes writes a map key as `attributes[model]`, the playground as `attributes.model`."""
    return _MAP_KEY.sub(lambda m: "." + m.group(1), path)


def error_type(message: str) -> str:
    """The field.ErrorType a message begins with ("Required value" -> FieldValueRequired)."""
    head = message.split(":", 1)[0]
    return ERROR_TYPES.get(head, "?")


@dataclass
class Found:
    """One object as the playground saw it."""

    errors: list = field(default_factory=list)  # (field, type, message)
    decode: bool = False  # a value of the wrong JSON type
    dropped: set = field(default_factory=set)
    other: list = field(default_factory=list)  # errors that are not validation (for the report)


def ours(scenario: str, *, gates: str = "") -> dict:
    """The playground's findings per object position ((doc, item) with item -1 outside a List)."""
    parsed, _ = parse_gates(gates)
    scen = read_scenario(scenario.encode(), apiserver_gates=parsed)
    found: dict[tuple, Found] = {}
    for problem in scen.problems:
        if problem.ref is None:
            continue
        key = (problem.ref[0] + 1, problem.ref[1] if len(problem.ref) > 1 else -1)
        entry = found.setdefault(key, Found())
        if problem.code == DROPPED_ON_CREATE:
            entry.dropped.add(problem.field)
            continue
        message = problem.message
        lenient = message.endswith(LENIENT_SUFFIX)
        if problem.severity != ERROR and not lenient:
            continue
        # The name the apiserver generates is shown with a stand-in for its random part, and so does the
        # oracle (its generator appends the same stand-in); the note saying so is the playground's own.
        message = message.removesuffix(LENIENT_SUFFIX).removesuffix("\n" + GENERATED_NAME_NOTE)
        if error_type(message) == "?":
            entry.other.append(problem.render())
            continue
        if is_decoding_error(message):
            entry.decode = True
        entry.errors.append((problem.field, error_type(message), message))
    return found


@dataclass
class Comparison:
    disagreements: list
    compared: int
    skipped: list


def compare(found: dict, theirs: dict, *, label: str = "") -> Comparison:
    """Object by object: validity, (field, type) pairs, messages, dropped fields."""
    if theirs.get("error", "").startswith("yaml:"):
        # Go's YAML reader refuses what the playground's reads (templates with `{{ }}`): not validation.
        return Comparison([], 0, [f"{label}: Go's YAML reader refuses it: {theirs['error']}"])
    if theirs.get("error"):
        return Comparison([f"{label}: the oracle refused the request: {theirs['error']}"], 0, [])
    out, compared, skipped = [], 0, []
    for obj in theirs["objects"]:
        if (obj["apiVersion"], obj["kind"]) not in KINDS:
            continue
        where = f"{label} document {obj['doc']}" + (f" item {obj['item']}" if obj["item"] >= 0 else "") + \
            f" {obj['kind']} {obj['name']}"
        mine = found.get((obj["doc"], obj["item"]), Found())
        compared += 1
        diffs = compare_object(obj, mine)
        out += [f"{where}: {d}" for d in diffs]
    return Comparison(out, compared, skipped)


def compare_object(obj: dict, mine: Found) -> list[str]:
    upstream_errors = [dict(e, field=playground_path(e["field"])) for e in obj["errors"]
                       if not e["field"].startswith(NOT_MODELLED)]
    if obj["kind"] == "Pod":
        upstream_errors = [e for e in upstream_errors if e["field"].startswith(POD_FIELDS)]
    up_invalid = obj["outcome"] == "decode-error" or bool(upstream_errors)
    my_invalid = bool(mine.errors) or bool(mine.other)
    if obj["outcome"] == "decode-error":
        if obj["kind"] == "Pod" and not _pod_field_checked(obj["decode"]):
            return []
        if any(f" {path}" in obj["decode"] for path in NOT_MODELLED):
            return []
        if not mine.decode and any(t == "FieldValueTooMany" for _, t, _ in mine.errors):
            return []  # known gap: the items of a list over its limit are not type-checked (both refuse it)
        if not mine.decode:
            return [f"upstream cannot decode it ({obj['decode']}); ours: "
                    f"{mine.errors or mine.other or 'valid'}"]
        return []
    if mine.decode:
        return [f"ours reports a wrong type ({mine.errors}); upstream decodes it: {obj['outcome']} {upstream_errors}"]
    if obj["kind"] == "ResourceClaim" and upstream_errors and not any(
            e["field"].startswith("status") for e in upstream_errors):
        # A status is written after the create; a claim refused on create never gets that far.
        mine = Found([e for e in mine.errors if not e[0].startswith("status")], mine.decode, mine.dropped, mine.other)
    diffs = []
    if up_invalid != my_invalid:
        diffs.append(f"valid: ours {not my_invalid} {mine.errors + mine.other}, upstream {not up_invalid} "
                     f"{[(e['field'], e['type'], e['message']) for e in upstream_errors]}")
        return diffs
    # Known gap: the playground does not look into the items of a list over its limit, the
    # apiserver does; both refuse the object with the same Too many. What the playground does
    # report inside such a list is still compared.
    over = tuple(f + "[" for f, t, _ in mine.errors if t == "FieldValueTooMany")
    my_pairs = {(f, t) for f, t, _ in mine.errors}
    if over:
        upstream_errors = [e for e in upstream_errors
                           if not e["field"].startswith(over) or (e["field"], e["type"]) in my_pairs]
    up_pairs = {(e["field"], e["type"]) for e in upstream_errors}
    if up_pairs != my_pairs:
        diffs.append(f"errors: only ours {sorted(my_pairs - up_pairs)}, only upstream {sorted(up_pairs - my_pairs)}; "
                     f"upstream: {[(e['field'], e['message']) for e in upstream_errors if (e['field'], e['type']) not in my_pairs]}; "
                     f"ours: {[(f, m) for f, t, m in mine.errors if (f, t) not in up_pairs]}")
    up_messages = {(e["field"], e["message"]) for e in upstream_errors}
    for f, t, m in mine.errors:
        if (f, t) in up_pairs and (f, m) not in up_messages:
            theirs = [e["message"] for e in upstream_errors if (e["field"], e["type"]) == (f, t)]
            if any(_marked_syntax_error_agrees(m, other) for other in theirs):
                continue
            diffs.append(f"message at {f}: ours {m!r}, upstream {theirs!r}")
    if not up_invalid:
        up_dropped = {playground_path(p) for p in obj.get("dropped") or []}
        if up_dropped != mine.dropped:
            diffs.append(f"dropped on create: ours {sorted(mine.dropped)}, upstream {sorted(up_dropped)}")
    return diffs


def _marked_syntax_error_agrees(ours: str, theirs: str) -> bool:
    """A CEL syntax error the playground marks as worded its own way (SYNTAX_WORDING_NOTE): cel-go's
    ANTLR parser words each error by the state of its prediction and recovers to report more. Every
    error the playground reports must still be one of cel-go's, in order, word for word; the one
    it marks must be at the same place and be a syntax error there too."""
    if not ours.endswith("\n" + SYNTAX_WORDING_NOTE):
        return False
    mine, upstream = _cel_errors(ours.removesuffix("\n" + SYNTAX_WORDING_NOTE)), _cel_errors(theirs)
    if mine is None or upstream is None or mine[0] != upstream[0]:
        return False
    rest = iter(upstream[1:])
    for error in mine[1:]:
        header = error.split(" Syntax error: ", 1)[0] + " Syntax error: "
        if not any(other == error or (" Syntax error: " in error and other.startswith(header)) for other in rest):
            return False
    return True


def _cel_errors(message: str) -> list[str] | None:
    """A compilation message split into what precedes its first error and each error."""
    head, mark, tail = message.partition("ERROR: <input>:")
    if not mark:
        return None
    return [head] + ["ERROR: <input>:" + part for part in tail.split("\nERROR: <input>:")]


_GO_FIELD = re.compile(r"Go struct field \w+\.(\S+) of type")


def _pod_field_checked(decode_error: str) -> bool:
    """Whether a Pod's decoding error is in a field the playground checks."""
    found = _GO_FIELD.search(decode_error)
    return found is None or (found.group(1) + ".").startswith(tuple(p.rstrip(".") + "." for p in POD_FIELDS))


def gate_text(gates: dict | None) -> str:
    return ",".join(f"{k}={str(v).lower()}" for k, v in (gates or {}).items())


def settable(gates: dict | None) -> dict:
    """The gates 1.37.2 lets a component set: a locked gate may only restate its default."""
    return {k: v for k, v in (gates or {}).items() if not (k in GATES and GATES[k].locked and GATES[k].default != v)}
