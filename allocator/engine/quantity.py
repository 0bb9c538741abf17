"""Kubernetes resource.Quantity: exact parsing, arithmetic and canonical printing.

Rules follow apimachinery's Quantity: values are exact decimals rounded up
(away from zero) to a multiple of 1n, binary-SI input is capped at 2^63-1,
and printing uses the format family of the input with an integer mantissa —
except that a parsed quantity whose text apimachinery's fast path takes as
canonical prints as written (`+1`, `01`, `1.500k`), as its String() does.
"""
from __future__ import annotations

import decimal
import functools
import re
from decimal import Decimal

BINARY_SI = "BinarySI"
DECIMAL_SI = "DecimalSI"
DECIMAL_EXPONENT = "DecimalExponent"

FORMAT_ERROR = (
    "quantities must match the regular expression "
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
SUFFIX_ERROR = "unable to parse quantity's suffix"

_CTX = decimal.Context(prec=120, rounding=decimal.ROUND_HALF_EVEN, Emax=10_000, Emin=-10_000)
_NANO = Decimal("1e-9")
_INT64_MAX = 2**63 - 1

# The outer shape Kubernetes accepts; the suffix is interpreted afterwards.
_SHAPE = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[-+]?[0-9]*)\Z")
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_BY_EXPONENT = {exp: suffix for suffix, exp in _DECIMAL_SUFFIXES.items()}
_BINARY_BY_POWER = {power // 10: suffix for suffix, power in _BINARY_SUFFIXES.items()}
_EXPONENT_SUFFIX = re.compile(r"[eE]([-+]?[0-9]+)\Z")


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity."""


class Quantity:
    """An exact quantity with the format it prints in."""

    __slots__ = ("value", "format", "written")

    def __init__(self, value: Decimal, fmt: str = DECIMAL_SI, written: str | None = None):
        self.value = value
        self.format = fmt
        self.written = written  # the text as parsed, when Kubernetes keeps it to print

    # -- construction -----------------------------------------------------

    @staticmethod
    def parse(text) -> "Quantity":
        """Parse a quantity string (or a YAML integer) as Kubernetes does."""
        if type(text) is str:  # nearly always: straight to the parse
            return _parse_cached(text)
        if isinstance(text, bool):
            raise QuantityError(FORMAT_ERROR)
        if isinstance(text, int):
            text = str(text)
        elif isinstance(text, float):
            if text != text or text in (float("inf"), float("-inf")):
                raise QuantityError(FORMAT_ERROR)
            text = repr(text)
        if not isinstance(text, str):
            raise QuantityError(FORMAT_ERROR)
        return _parse_cached(text)

    @staticmethod
    def from_int(number: int, fmt: str = DECIMAL_SI) -> "Quantity":
        return Quantity(Decimal(number), fmt)

    @staticmethod
    def from_milli(milli: int, fmt: str = DECIMAL_SI) -> "Quantity":
        return Quantity(_CTX.divide(Decimal(milli), Decimal(1000)), fmt)

    def copy(self) -> "Quantity":
        return Quantity(self.value, self.format, self.written)

    # -- arithmetic and comparison ---------------------------------------

    def add(self, other: "Quantity") -> "Quantity":
        fmt = other.format if self.value == 0 else self.format
        return Quantity(_CTX.add(self.value, other.value), fmt)

    def sub(self, other: "Quantity") -> "Quantity":
        fmt = other.format if self.value == 0 else self.format
        return Quantity(_CTX.subtract(self.value, other.value), fmt)

    def cmp(self, other: "Quantity") -> int:
        return (self.value > other.value) - (self.value < other.value)

    def sign(self) -> int:
        return (self.value > 0) - (self.value < 0)

    def __eq__(self, other):
        return isinstance(other, Quantity) and self.value == other.value

    def __lt__(self, other: "Quantity"):
        return self.value < other.value

    def __le__(self, other: "Quantity"):
        return self.value <= other.value

    def __gt__(self, other: "Quantity"):
        return self.value > other.value

    def __ge__(self, other: "Quantity"):
        return self.value >= other.value

    def __hash__(self):
        return hash(self.value)

    def int_value(self) -> int:
        """Kubernetes Value(): rounded up (away from zero) to an integer."""
        return _round_up_int(self.value)

    def milli_value(self) -> int:
        """Kubernetes MilliValue(): value x 1000 rounded up (away from zero)."""
        return _round_up_int(self.value * 1000)

    def is_integer(self) -> bool:
        return self.value == self.value.to_integral_value()

    def as_float(self) -> float:
        return float(self.value)

    # -- printing ----------------------------------------------------------

    def __str__(self) -> str:
        if self.written is not None:
            return self.written
        return _canonical(self.value, self.format)

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"


def _round_up_int(value: Decimal) -> int:
    whole = int(value)  # truncates toward zero
    if Decimal(whole) != value:
        whole += 1 if value > 0 else -1
    return whole


@functools.lru_cache(maxsize=8192)
def _parse_cached(text: str) -> "Quantity":
    """Parsed quantities are shared: treat Quantity objects as immutable."""
    match = _SHAPE.match(text)
    if not match or len(text) > 256:
        raise QuantityError(FORMAT_ERROR)
    sign, whole, fraction, suffix = match.groups()
    if not whole and not fraction:
        raise QuantityError(FORMAT_ERROR)
    number = Decimal(f"{whole or '0'}.{fraction or ''}0")
    if suffix in _BINARY_SUFFIXES:
        fmt = BINARY_SI
        amount = _CTX.multiply(number, Decimal(2 ** _BINARY_SUFFIXES[suffix]))
    elif suffix in _DECIMAL_SUFFIXES:
        fmt = DECIMAL_SI
        amount = number.scaleb(_DECIMAL_SUFFIXES[suffix], _CTX)
    else:
        exponent = _EXPONENT_SUFFIX.match(suffix)
        if not exponent:
            raise QuantityError(SUFFIX_ERROR)
        power = int(exponent.group(1))
        if abs(power) > 1000:
            raise QuantityError(SUFFIX_ERROR)
        fmt = DECIMAL_EXPONENT
        amount = number.scaleb(power, _CTX)
    if amount != 0 and amount.as_tuple().exponent < -9:
        amount = amount.quantize(_NANO, rounding=decimal.ROUND_UP, context=_CTX)
    if fmt == BINARY_SI:
        if amount > _INT64_MAX:
            amount = Decimal(_INT64_MAX)
        if 0 < amount < 1:
            fmt = DECIMAL_SI
    if sign == "-":
        amount = -amount
    return Quantity(amount, fmt, text if _kept_as_written(text, whole, fraction, suffix) else None)


def _kept_as_written(text: str, whole: str, fraction: str | None, suffix: str) -> bool:
    """Whether apimachinery's ParseQuantity keeps `text` as the quantity's string: its fast path
    (an int64 mantissa at a scale of at least nano) keeps a text it considers canonical, checking
    the digits and the scale only, so a leading `+` or zeros, or `1.500k`, print as written."""
    if text == "0":
        return True
    num = whole.lstrip("0") or "0"
    denom = fraction or ""
    if suffix in _BINARY_SUFFIXES:
        exponent = _BINARY_SUFFIXES[suffix]
        if denom:
            return False
        precision = 15 - len(num) - exponent * 3 // 10 - 1
        scale = 0
    else:
        exponent = _DECIMAL_SUFFIXES[suffix] if suffix in _DECIMAL_SUFFIXES else int(suffix[1:])
        precision = 18 - (len(num) + len(denom))
        scale = exponent
    if precision < 0:
        return False
    scale -= len(denom)
    if scale < -9:
        return False
    shifted = num + denom
    value = int(shifted)
    if value > _INT64_MAX:
        return False
    if suffix in _BINARY_SUFFIXES:
        return value << exponent <= _INT64_MAX and value & 7 != 0
    return scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"


def _canonical(value: Decimal, fmt: str) -> str:
    if value == 0:
        return "0"
    if fmt == BINARY_SI and (-1024 < value < 1024 or value != value.to_integral_value()):
        fmt = DECIMAL_SI
    if fmt == BINARY_SI:
        mantissa, power = int(value), 0
        while mantissa % 1024 == 0 and power < 6:
            mantissa //= 1024
            power += 1
        return f"{mantissa}{_BINARY_BY_POWER.get(power, '')}"
    sign, digits, exponent = value.normalize(_CTX).as_tuple()
    mantissa = int("".join(map(str, digits)))
    shift = exponent % 3  # lower the exponent to a multiple of three
    mantissa *= 10**shift
    exponent -= shift
    if sign:
        mantissa = -mantissa
    if fmt == DECIMAL_SI and exponent in _DECIMAL_BY_EXPONENT:
        return f"{mantissa}{_DECIMAL_BY_EXPONENT[exponent]}"
    return f"{mantissa}" if exponent == 0 else f"{mantissa}e{exponent}"

