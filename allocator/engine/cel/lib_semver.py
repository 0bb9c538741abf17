"""The Kubernetes semver CEL library (version 1: with the normalisation flag), and the comparison
members quantities and versions share (`isGreaterThan`, `isLessThan`, `compareTo`)."""
from __future__ import annotations

from ..quantity import Quantity
from ..semver import SemverError, Version
from .errors import EvalError
from .library import STRINGS, declare, no_overload, typed


def parse_semver(text: str) -> Version:
    """Strict semver 2.0.0 (engine/semver.py) with blang/semver's messages as CEL errors."""
    try:
        return Version.parse(text)
    except SemverError as exc:
        raise EvalError(str(exc)) from None


def normalize_semver(text: str) -> str:
    """Kubernetes' lenient form: drop one `v`, strip leading zeros, pad to three parts."""
    if text.startswith("v"):
        text = text[1:]
    parts = text.split(".", 2)
    for position, part in enumerate(parts):
        if len(part) > 1:
            part = part.lstrip("0")
            if not part or part[0] not in "0123456789":
                part = "0" + part
            parts[position] = part
    if len(parts) < 3:
        if "+" in parts[-1] or "-" in parts[-1]:
            raise EvalError("short version cannot contain PreRelease/Build meta data")
        while len(parts) < 3:
            parts.append("0")
    return ".".join(parts)


def _semver(text, normalize=False):
    if normalize:
        text = normalize_semver(text)
    return parse_semver(text)


def _is_semver(text, normalize=False):
    try:
        _semver(text, normalize)
    except EvalError:
        return False
    return True


def _need_version(function: str, *values):
    for value in values:
        if type(value) is not Version:
            raise no_overload(function, *values)


def _v_major(v):
    _need_version("major", v)
    return v.major


def _v_minor(v):
    _need_version("minor", v)
    return v.minor


def _v_patch(v):
    _need_version("patch", v)
    return v.patch


def _ordering(function: str):
    def impl(a, b):
        ta, tb = type(a), type(b)
        if ta is Quantity and tb is Quantity:
            result = a.cmp(b)
        elif ta is Version and tb is Version:
            result = a.compare(b)
        else:
            raise no_overload(function, a, b)
        if function == "compareTo":
            return result
        return result == (1 if function == "isGreaterThan" else -1)
    return impl



# Kubernetes semver library, version 1 (normalisation flag).
declare(
    "semver",
    ("string_to_semver", "(string) -> Semver"), ("string_bool_to_semver", "(string, bool) -> Semver"),
    impl=typed("semver", _semver, STRINGS, (bool,)),
)
declare(
    "isSemver",
    ("is_semver_string", "(string) -> bool"), ("is_semver_string_bool", "(string, bool) -> bool"),
    impl=typed("isSemver", _is_semver, STRINGS, (bool,)),
)
declare("major", ("semver_major", "Semver.() -> int"), impl=_v_major)
declare("minor", ("semver_minor", "Semver.() -> int"), impl=_v_minor)
declare("patch", ("semver_patch", "Semver.() -> int"), impl=_v_patch)

# Comparison members shared by quantities and versions.
declare(
    "isGreaterThan",
    ("quantity_is_greater_than", "Quantity.(Quantity) -> bool"), ("semver_is_greater_than", "Semver.(Semver) -> bool"),
    impl=_ordering("isGreaterThan"),
)
declare(
    "isLessThan",
    ("quantity_is_less_than", "Quantity.(Quantity) -> bool"), ("semver_is_less_than", "Semver.(Semver) -> bool"),
    impl=_ordering("isLessThan"),
)
declare(
    "compareTo",
    ("quantity_compare_to", "Quantity.(Quantity) -> int"), ("semver_compare_to", "Semver.(Semver) -> int"),
    impl=_ordering("compareTo"),
)
