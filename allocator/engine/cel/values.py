"""Runtime values: the Python representation of CEL values and their core semantics.

int -> int, uint -> Uint, double -> float, bool -> bool, string -> str,
bytes -> bytes, null -> None, list -> list (tuples accepted), map -> dict,
optional -> Optional, type -> TypeValue, Quantity and Version from the engine.
"""
from __future__ import annotations

import math

from ..quantity import Quantity
from ..semver import Version
from .errors import EvalError
from .inputs import DeviceInput

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
UINT64_MAX = (1 << 64) - 1


class Uint(int):
    """A CEL uint; keeps its type through arithmetic done by the interpreter."""

    __slots__ = ()

    def __repr__(self):
        return f"{int(self)}u"


class TypeValue:
    """A runtime type value such as the result of `type(1)`; compared by name."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __eq__(self, other):
        return isinstance(other, TypeValue) and other.name == self.name

    def __hash__(self):
        return hash(("type", self.name))

    def __repr__(self):
        return self.name


class Optional:
    """CEL optional: `optional.of(x)` or `optional.none()`."""

    __slots__ = ("value", "present")

    def __init__(self, value=None, present: bool = True):
        self.value = value
        self.present = present

    def __repr__(self):
        return f"optional.of({self.value!r})" if self.present else "optional.none()"

    def __eq__(self, other):
        if not isinstance(other, Optional):
            return False
        if not self.present or not other.present:
            return self.present == other.present
        return equal(self.value, other.value) is True

    def __hash__(self):
        return hash(("optional", self.present))


OPTIONAL_NONE = Optional(None, False)


class ErrorValue:
    """An error captured as a value, as cel-go keeps it in a fold accumulator."""

    __slots__ = ("error",)

    def __init__(self, error: EvalError):
        self.error = error


class DomainMap(dict):
    """`device.attributes` / `device.capacity`: an unknown domain reads as an empty map."""

    __slots__ = ()

    def __missing__(self, key):
        return EMPTY_MAP


EMPTY_MAP: dict = {}

TYPE_NAMES = {
    bool: "bool", int: "int", Uint: "uint", float: "double", str: "string", bytes: "bytes",
    type(None): "null_type", list: "list", tuple: "list", dict: "map", DomainMap: "map",
    Optional: "optional_type", TypeValue: "type", Quantity: "kubernetes.Quantity",
    Version: "kubernetes.Semver",
    # Upstream hands `device` to CEL as a plain map.
    DeviceInput: "map",
}
_GO_TYPE_NAMES = {
    bool: "types.Bool", int: "types.Int", Uint: "types.Uint", float: "types.Double",
    str: "types.String", bytes: "types.Bytes", type(None): "types.Null",
    Optional: "*types.Optional", TypeValue: "*types.Type", Quantity: "cel.Quantity",
    Version: "cel.Semver",
}


def type_name(value) -> str:
    name = TYPE_NAMES.get(type(value))
    if name is not None:
        return name
    if isinstance(value, dict):
        return "map"
    if isinstance(value, (list, tuple)):
        return "list"
    return getattr(value, "cel_type_name", type(value).__name__)


def go_type_name(value) -> str:
    return _GO_TYPE_NAMES.get(type(value)) or type_name(value)


def type_value(value) -> TypeValue:
    return TypeValue(type_name(value))


def is_number(value) -> bool:
    t = type(value)
    return t is int or t is float or t is Uint


def check_int(value: int) -> int:
    if value < INT64_MIN or value > INT64_MAX:
        raise EvalError("integer overflow")
    return value


def check_uint(value: int) -> Uint:
    if value < 0 or value > UINT64_MAX:
        raise EvalError("unsigned integer overflow")
    return Uint(value)


# -- equality -----------------------------------------------------------------

_NOT_COMPARABLE = object()


def _mixed_compare(a, b) -> int:
    """Order two numbers of different CEL types as cel-go does.

    int/uint against int/uint compare exactly; a double against an int or uint
    converts the integer to double (so ints beyond 2^53 round), after cel-go's
    range checks against the int64 / uint64 bounds. NaN is screened by callers.
    """
    if type(a) is not float and type(b) is not float:
        return (a > b) - (a < b)
    if type(a) is float:
        return -_mixed_compare(b, a)
    # a is an int or uint, b is a double.
    if type(a) is Uint:
        if b < 0.0:
            return 1
        if b > 18446744073709551616.0:
            return -1
    else:
        if b < -9223372036854775808.0:
            return 1
        if b > 9223372036854775808.0:
            return -1
    x = float(a)
    return (x > b) - (x < b)


def _numeric_equal(a, b) -> bool:
    if type(a) is float or type(b) is float:
        if type(a) is float and type(b) is float:
            return a == b
        if (a != a) or (b != b):
            return False
        return _mixed_compare(a, b) == 0
    return int(a) == int(b)


def _equal(a, b):
    """True / False, or _NOT_COMPARABLE where cel-go yields an error value."""
    if a is None or b is None:
        return a is None and b is None
    ta, tb = type(a), type(b)
    if ta is tb and (ta is str or ta is bool or ta is bytes):
        return a == b
    if is_number(a):
        return is_number(b) and _numeric_equal(a, b)
    if ta is bool or ta is str or ta is bytes:
        return False
    if ta is Quantity:
        if tb is not Quantity:
            return _NOT_COMPARABLE
        return a.value == b.value
    if ta is Version:
        if tb is not Version:
            return _NOT_COMPARABLE
        return a.compare(b) == 0
    if isinstance(a, (list, tuple)):
        if not isinstance(b, (list, tuple)) or len(a) != len(b):
            return False
        for x, y in zip(a, b):
            if _equal(x, y) is False:
                return False
        return True
    if isinstance(a, dict):
        if not isinstance(b, dict) or len(a) != len(b):
            return False
        for key, value in a.items():
            other = map_find(b, key)
            if other is _MISSING:
                return False
            if _equal(value, other) is False:
                return False
        return True
    if ta is Optional:
        if tb is not Optional:
            return False
        if not a.present or not b.present:
            return a.present == b.present
        return _equal(a.value, b.value)
    if ta is TypeValue:
        return tb is TypeValue and a.name == b.name
    return a == b


def equal(a, b) -> bool:
    """CEL `==`: heterogeneous equality as cel-go implements it."""
    result = _equal(a, b)
    if result is _NOT_COMPARABLE:
        raise EvalError("no such overload")
    return result


# -- ordering -------------------------------------------------------------------


def compare(a, b, function: str) -> int:
    ta, tb = type(a), type(b)
    if is_number(a) and is_number(b):
        if ta is float and math.isnan(a) or tb is float and math.isnan(b):
            raise EvalError("NaN values cannot be ordered")
        if ta is tb:
            return (a > b) - (a < b)
        return _mixed_compare(a, b)
    if ta is tb and ta in (str, bytes, bool):
        return (a > b) - (a < b)
    if ta in (str, bytes, bool) or is_number(a):
        raise EvalError("no such overload")
    raise EvalError(f"no such overload: {function}")


# -- maps -------------------------------------------------------------------------

_MISSING = object()


def map_find(mapping: dict, key):
    """Look a key up with CEL key semantics (numeric keys compare across int, uint and double)."""
    if type(key) is str:
        try:
            return mapping[key]
        except KeyError:
            return _MISSING
    if type(key) is float:
        if not key.is_integer():
            return _MISSING
        key = int(key)
    try:
        value = mapping[key]
    except KeyError:
        return _MISSING
    except TypeError:
        raise EvalError(f"unsupported key type: {type_name(key)}") from None
    if isinstance(mapping, DomainMap) or not (type(key) is bool or is_number(key)):
        return value
    # Python treats True and 1 as the same key; CEL does not.
    for stored in mapping:
        if stored == key and (type(stored) is bool) == (type(key) is bool):
            return mapping[stored]
    return _MISSING


MISSING = _MISSING


def map_key_present(mapping: dict, key) -> bool:
    if isinstance(mapping, DomainMap):
        # Contains() of the wrapped map: real presence only.
        return dict.get(mapping, key, _MISSING) is not _MISSING
    return map_find(mapping, key) is not _MISSING


# -- printing ---------------------------------------------------------------------


def go_float(value: float) -> str:
    """Go's %g / strconv 'g' with shortest precision."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    text = repr(value)
    sign = ""
    if text.startswith("-"):
        sign, text = "-", text[1:]
    mantissa, _, exp = text.partition("e")
    exponent = int(exp) if exp else 0
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    point = len(whole) + exponent  # position of the decimal point in whole+frac
    leading = len(whole + frac) - len((whole + frac).lstrip("0"))
    point -= leading
    digits = digits.rstrip("0") or "0"
    exp10 = point - 1
    if exp10 < -4 or exp10 >= 6:
        body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{body}e{'+' if exp10 >= 0 else '-'}{abs(exp10):02d}"
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return f"{sign}{digits}{'0' * (point - len(digits))}"
    return f"{sign}{digits[:point]}.{digits[point:]}"


def format_value(value) -> str:
    """Go's %v of a CEL value, as used in error messages."""
    if value is None:
        return "NULL_VALUE"
    if type(value) is bool:
        return "true" if value else "false"
    if type(value) is float:
        return go_float(value)
    if isinstance(value, (list, tuple)):
        return "[" + " ".join(format_value(v) for v in value) + "]"
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)
