"""Function declarations (for the checker) and their runtime implementations.

The set follows the Kubernetes base CEL environment as the DRA selector
compiler builds it: the CEL standard library with cross-type numeric
comparisons and optional types, the strings extension (version 2), sets,
lists (version 3), two-variable comprehensions, bindings, the Kubernetes
regex and lists libraries, and DRA's `includes()`. The Kubernetes quantity,
semver, IP/CIDR and URL libraries and CEL timestamps/durations are in modules
of their own (lib_*.py) that build on this one; `functions.py` loads them all.

An implementation receives evaluated arguments positionally (the receiver of
a member call first) and raises EvalError for CEL errors. One implementation
serves all overloads of a function; it dispatches on the runtime values.
"""
from __future__ import annotations

import math
import re
from functools import lru_cache


from .errors import CelCostLimitError, EvalError
from .types import CelType, parse_type
from .values import (
    INT64_MAX,
    INT64_MIN,
    MISSING,
    OPTIONAL_NONE,
    UINT64_MAX,
    DomainMap,
    Optional,
    TypeValue,
    Uint,
    check_int,
    check_uint,
    compare,
    equal,
    format_value,
    go_float,
    is_number,
    map_find,
    map_key_present,
    type_name,
    type_value,
)

# Device attributes hold at most this many values; includes() refuses longer lists.
MAX_ATTRIBUTE_VALUES = 48
# A string or version attribute value is at most this long.
MAX_ATTRIBUTE_VALUE_LENGTH = 64
MAX_REGEX_LENGTH = 16 * 1024
# Larger results (characters or elements) are refused: see _guard_size().
MAX_BUILT_SIZE = 20_000_000


class Overload:
    __slots__ = ("id", "args", "result", "member")

    def __init__(self, id: str, args: tuple, result: CelType, member: bool):
        self.id = id
        self.args = args
        self.result = result
        self.member = member


class Function:
    """A declared function; `factory(overload_ids)` may specialise the implementation."""

    __slots__ = ("name", "overloads", "impl", "factory")

    def __init__(self, name: str, overloads: list, impl=None, factory=None):
        self.name = name
        self.overloads = overloads
        self.impl = impl
        self.factory = factory

    def implementation(self, overload_ids: tuple):
        if self.factory is not None:
            return self.factory(overload_ids)
        return self.impl


def _split_top(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        current += ch
    if current.strip():
        parts.append(current.strip())
    return parts


def _overload(overload_id: str, signature: str) -> Overload:
    """`"(int, int) -> int"` declares a global overload, `"string.(int) -> string"` a member one."""
    left, _, result = signature.rpartition("->")
    left = left.strip()
    member = not left.startswith("(")
    if member:
        cut = left.index(".(")
        target, params = left[:cut], left[cut + 2:-1]
        args = [target] + _split_top(params)
    else:
        args = _split_top(left[1:-1])
    return Overload(overload_id, tuple(parse_type(a) for a in args), parse_type(result.strip()), member)


FUNCTIONS: dict[str, Function] = {}


def declare(name: str, *overloads: tuple, impl=None, factory=None, registry: dict | None = None):
    target = FUNCTIONS if registry is None else registry
    target[name] = Function(name, [_overload(oid, sig) for oid, sig in overloads], impl, factory)


def extend(name: str, *overloads: tuple, handles, impl):
    """Add overloads to a declared function: `impl` serves the calls `handles(*args)` accepts,
    the existing implementation every other call."""
    function = FUNCTIONS[name]
    function.overloads = function.overloads + [_overload(oid, sig) for oid, sig in overloads]
    previous = function.impl

    def call(*args):
        return impl(*args) if handles(*args) else previous(*args)

    function.impl = call


def no_overload(function: str, *args) -> EvalError:
    return EvalError(f"no such overload: {function}({', '.join(type_name(a) for a in args)})")


def _is_list(value) -> bool:
    return isinstance(value, (list, tuple))


# -- operators ------------------------------------------------------------------------


def _not(value):
    if type(value) is not bool:
        raise no_overload("!_", value)
    return not value


def _negate(value):
    t = type(value)
    if t is int:
        return check_int(-value)
    if t is float:
        return -value
    raise EvalError("no such overload: -_")


def _not_equal(a, b):
    return not equal(a, b)


def _less(a, b):
    return compare(a, b, "_<_") < 0


def _less_equal(a, b):
    return compare(a, b, "_<=_") <= 0


def _greater(a, b):
    return compare(a, b, "_>_") > 0


def _greater_equal(a, b):
    return compare(a, b, "_>=_") >= 0


def _add(a, b):
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        return check_int(a + b)
    if ta is str and tb is str:
        return a + b
    if ta is float and tb is float:
        return a + b
    if ta is Uint and tb is Uint:
        return check_uint(a + b)
    if _is_list(a) and _is_list(b):
        return list(a) + list(b)
    if ta is bytes and tb is bytes:
        return a + b
    if ta in (int, float, Uint, str, bytes) or _is_list(a):
        raise EvalError("no such overload")
    raise EvalError("no such overload: _+_")


def _arith(symbol: str, int_op, float_op):
    function = f"_{symbol}_"

    def impl(a, b):
        ta, tb = type(a), type(b)
        if ta is int and tb is int:
            return check_int(int_op(a, b))
        if ta is float and tb is float:
            return float_op(a, b)
        if ta is Uint and tb is Uint:
            return check_uint(int_op(a, b))
        if ta in (int, float, Uint):
            raise EvalError("no such overload")
        raise EvalError(f"no such overload: {function}")
    return impl


def _go_div(a: int, b: int) -> int:
    if b == 0:
        raise EvalError("division by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _go_mod(a: int, b: int) -> int:
    if b == 0:
        raise EvalError("modulus by zero")
    return a - b * _go_div(a, b)


def _float_div(a: float, b: float) -> float:
    try:
        return a / b
    except ZeroDivisionError:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _float_mul(a: float, b: float) -> float:
    return a * b


def _modulo(a, b):
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        return check_int(_go_mod(a, b))
    if ta is Uint and tb is Uint:
        if b == 0:
            raise EvalError("modulus by zero")
        return Uint(a % b)
    if ta in (int, float, Uint):
        raise EvalError("no such overload")
    raise EvalError("no such overload: _%_")


def _uint_div(a, b):
    if b == 0:
        raise EvalError("division by zero")
    return a // b


def _divide(a, b):
    ta, tb = type(a), type(b)
    if ta is Uint and tb is Uint:
        return Uint(_uint_div(a, b))
    return _divide_int_float(a, b)


_divide_int_float = _arith("/", _go_div, _float_div)


def index_value(container, key):
    """`container[key]` for lists and maps (optionals are handled by the interpreter)."""
    if isinstance(container, dict):
        value = map_find(container, key)
        if value is MISSING:
            raise EvalError(f"no such key: {format_value(key)}")
        return value
    if _is_list(container):
        position = _list_index(container, key)
        if position < 0 or position >= len(container):
            raise EvalError(f"index out of bounds: {format_value(key)}")
        return container[position]
    raise EvalError(f"no such key: {format_value(key)}")


def _list_index(container, key) -> int:
    t = type(key)
    if t is int or t is Uint:
        return int(key)
    if t is float:
        if not key.is_integer():
            raise EvalError(f"unsupported index value {go_float(key)} in list")
        return int(key)
    raise EvalError(f"unsupported index type '{type_name(key)}' in list")


def in_operator(element, container):
    if _is_list(container):
        for item in container:
            if equal(item, element):
                return True
        return False
    if isinstance(container, dict):
        return map_key_present(container, element)
    raise EvalError("no such overload")


def _size(value):
    if isinstance(value, (str, bytes, list, tuple, dict)):
        return len(value)
    raise no_overload("size", value)


# -- conversions -------------------------------------------------------------------

_INT_TEXT = re.compile(r"[+-]?[0-9]+\Z")
# What Go's strconv.ParseFloat accepts (underscore digit separators aside).
_FLOAT_TEXT = re.compile(
    r"(?:[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity)|nan)\Z",
    re.IGNORECASE,
)
_HEX_FLOAT_TEXT = re.compile(r"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+\Z")
_UINT_TEXT = re.compile(r"[0-9]+\Z")
_BOOL_TEXT = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True,
              "0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False}


def _conversion_error(value, target: str) -> EvalError:
    return EvalError(f"type conversion error from '{type_name(value)}' to '{target}'")


def _to_int(value):
    t = type(value)
    if t is int:
        return value
    if t is Uint:
        if value > INT64_MAX:
            raise EvalError("integer overflow")
        return int(value)
    if t is float:
        if math.isnan(value) or math.isinf(value) or not (INT64_MIN < value < INT64_MAX):
            raise EvalError("integer overflow")
        return int(value)
    if t is str:
        if _INT_TEXT.match(value):
            number = int(value)
            if INT64_MIN <= number <= INT64_MAX:
                return number
        raise _conversion_error(value, "int")
    raise _conversion_error(value, "int")


def _to_uint(value):
    t = type(value)
    if t is Uint:
        return value
    if t is int:
        if value < 0:
            raise EvalError("unsigned integer overflow")
        return Uint(value)
    if t is float:
        if math.isnan(value) or math.isinf(value) or not (0 <= value < 2.0 ** 64):
            raise EvalError("unsigned integer overflow")
        return Uint(int(value))
    if t is str:
        # Go's ParseUint takes no sign at all.
        if _UINT_TEXT.match(value):
            number = int(value)
            if number <= UINT64_MAX:
                return Uint(number)
        raise _conversion_error(value, "uint")
    raise _conversion_error(value, "uint")


def _to_double(value):
    t = type(value)
    if t is float:
        return value
    if t is int or t is Uint:
        return float(value)
    if t is str:
        try:
            if _FLOAT_TEXT.match(value):
                number = float(value)
            elif _HEX_FLOAT_TEXT.match(value):
                number = float.fromhex(value)
            else:
                number = None
        except (ValueError, OverflowError):
            number = None
        # ParseFloat reports a finite text that rounds to infinity as out of range.
        if number is not None and (not math.isinf(number) or "n" in value or "N" in value):
            return number
        raise _conversion_error(value, "double")
    raise _conversion_error(value, "double")


def _to_string(value):
    t = type(value)
    if t is str:
        return value
    if t is int or t is Uint:
        return str(int(value))
    if t is float:
        return go_float(value)
    if t is bool:
        return "true" if value else "false"
    if t is bytes:
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            raise EvalError("invalid UTF-8 in bytes, cannot convert to string") from None
    raise _conversion_error(value, "string")


def _to_bool(value):
    if type(value) is bool:
        return value
    if type(value) is str and value in _BOOL_TEXT:
        return _BOOL_TEXT[value]
    raise _conversion_error(value, "bool")


def _to_bytes(value):
    if type(value) is bytes:
        return value
    if type(value) is str:
        return value.encode("utf-8")
    raise _conversion_error(value, "bytes")


def _dyn(value):
    return value


# -- strings --------------------------------------------------------------------------

@lru_cache(maxsize=1)
def _re2():
    """The RE2 module and its options, imported for the first expression with a regex."""
    import re2

    options = re2.Options()
    options.max_mem = 8 << 20
    options.log_errors = False
    return re2, options


@lru_cache(maxsize=512)
def compile_regex(pattern: str):
    """RE2 semantics as Go's regexp; raises EvalError like cel-go's matches()."""
    if len(pattern) > MAX_REGEX_LENGTH:
        raise EvalError("error parsing regexp: expression too large")
    re2, options = _re2()
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        raise EvalError(f"error parsing regexp: {_go_regex_problem(exc)}") from None


# RE2's (C++) error texts and the Go regexp/syntax error codes they correspond to.
_GO_REGEX_CODES = {
    "missing ]": "missing closing ]",
    "missing )": "missing closing )",
    "unexpected )": "unexpected )",
    "bad repetition operator": "invalid nested repetition operator",
    "no argument for repetition operator": "missing argument to repetition operator",
    "invalid repetition size": "invalid repeat count",
    "invalid escape sequence": "invalid escape sequence",
    "invalid character class range": "invalid character class range",
    "invalid character class": "invalid character class",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid UTF-8": "invalid UTF-8",
    "invalid named capture group": "invalid named capture",
    "bad named capture group": "invalid named capture",
    "pattern too large - compile failed": "expression too large",
    "pattern too large - reverse compile failed": "expression too large",
}


def _go_regex_problem(exc) -> str:
    """Go's `<code>: `<fragment>`` text for an RE2 compile error."""
    raw = exc.args[0] if exc.args else ""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    if text.startswith("trailing \\"):
        return "trailing backslash at end of expression: ``"
    code, separator, fragment = text.partition(": ")
    go_code = _GO_REGEX_CODES.get(code)
    if go_code is None:
        return text
    if not separator:
        return go_code
    return f"{go_code}: `{fragment}`"


@lru_cache(maxsize=8192)
def _search(pattern: str, text: str):
    """The leftmost-first match of `pattern` in `text` (or None); memoised because the
    RE2 binding's per-call overhead dominates selector evaluation."""
    match = compile_regex(pattern).search(text)
    return None if match is None else match.group(0)


def _matches(text, pattern):
    if type(text) is not str or type(pattern) is not str:
        raise no_overload("matches", text, pattern)
    return _search(pattern, text) is not None


def _contains(text, sub):
    if type(text) is not str or type(sub) is not str:
        raise no_overload("contains", text, sub)
    return sub in text


def _starts_with(text, prefix):
    if type(text) is not str or type(prefix) is not str:
        raise no_overload("startsWith", text, prefix)
    return text.startswith(prefix)


def _ends_with(text, suffix):
    if type(text) is not str or type(suffix) is not str:
        raise no_overload("endsWith", text, suffix)
    return text.endswith(suffix)


def _char_at(text, index):
    if index < 0 or index > len(text):
        raise EvalError(f"index out of range: {index}")
    return text[index:index + 1]


def _string_index_of(text, sub, offset=0):
    # Released cel-go answers an empty substring with the offset itself, unchecked.
    if sub == "":
        return offset
    if offset < 0:
        raise EvalError(f"index out of range: {offset}")
    if offset >= len(text):
        return -1
    return text.find(sub, offset)


def _string_last_index_of(text, sub, offset=None):
    if offset is None:
        if sub == "":
            return len(text)
        return text.rfind(sub)
    if sub == "":
        return offset
    if offset < 0:
        raise EvalError(f"index out of range: {offset}")
    if offset >= len(text):
        return -1
    return text.rfind(sub, 0, offset + len(sub))


def _index_of(target, item, *offset):
    if type(target) is str:
        if type(item) is not str:
            raise no_overload("indexOf", target, item, *offset)
        return _string_index_of(target, item, *offset)
    if _is_list(target) and not offset:
        for position, element in enumerate(target):
            if equal(element, item):
                return position
        return -1
    raise no_overload("indexOf", target, item, *offset)


def _last_index_of(target, item, *offset):
    if type(target) is str:
        if type(item) is not str:
            raise no_overload("lastIndexOf", target, item, *offset)
        return _string_last_index_of(target, item, *offset)
    if _is_list(target) and not offset:
        for position in range(len(target) - 1, -1, -1):
            if equal(target[position], item):
                return position
        return -1
    raise no_overload("lastIndexOf", target, item, *offset)


def _ascii_map(text: str, upper: bool) -> str:
    if text.isascii():
        return text.upper() if upper else text.lower()
    return "".join((ch.upper() if upper else ch.lower()) if ch.isascii() else ch for ch in text)


def _lower_ascii(text):
    return _ascii_map(text, False)


def _upper_ascii(text):
    return _ascii_map(text, True)


def _replace(text, old, new, count=-1):
    if count < 0:
        count = -1
    hits = len(text) + 1 if old == "" else text.count(old)
    if count >= 0:
        hits = min(hits, count)
    _guard_size(len(text) + hits * max(len(new) - len(old), 0))
    return text.replace(old, new, count)


def _guard_size(size: int):
    """Refuse to build values cel-go would need gigabytes for; its cost tracker
    only looks at the inputs of these calls, so the budget cannot stop them."""
    if size > MAX_BUILT_SIZE:
        raise CelCostLimitError()


def _split(text, separator, limit=-1):
    if limit == 0:
        return []
    if separator == "":
        chars = list(text)
        if 0 < limit < len(chars):
            return chars[:limit - 1] + ["".join(chars[limit - 1:])]
        return chars
    if limit < 0:
        return text.split(separator)
    return text.split(separator, limit - 1)


def _substring(text, start, end=None):
    if end is None:
        if start < 0 or start > len(text):
            raise EvalError(f"index out of range: {start}")
        return text[start:]
    if start > end:
        raise EvalError(f"invalid substring range. start: {start}, end: {end}")
    if start < 0 or start > len(text):
        raise EvalError(f"index out of range: {start}")
    if end < 0 or end > len(text):
        raise EvalError(f"index out of range: {end}")
    return text[start:end]


# unicode.IsSpace: Latin-1 spaces plus the White_Space property.
_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)


def _trim(text):
    return text.strip(_SPACE)


def _join(items, separator=""):
    for item in items:
        if type(item) is not str:
            raise EvalError(f"join: invalid input: {format_value(item)}")
    return separator.join(items)


def _quote(text):
    out = ['"']
    escapes = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
               "\v": "\\v", "\\": "\\\\", '"': '\\"'}
    for ch in text:
        out.append(escapes.get(ch, ch))
    out.append('"')
    return "".join(out)


def _format(template, args):
    return format_string(template, args)


def format_string(template: str, args) -> str:
    out = []
    i, n, arg_index = 0, len(template), 0
    while i < n:
        ch = template[i]
        if ch != "%":
            out.append(ch)
            i += 1
            continue
        i += 1
        if i >= n:
            raise EvalError("unexpected end of string")
        if template[i] == "%":
            out.append("%")
            i += 1
            continue
        precision = None
        if template[i] == ".":
            j = i + 1
            while j < n and template[j].isdigit():
                j += 1
            if j == i + 1:
                raise EvalError("error while parsing precision: unable to find end of precision specifier")
            precision = int(template[i + 1:j])
            i = j
        if i >= n:
            raise EvalError("unexpected end of string")
        verb = template[i]
        i += 1
        if arg_index >= len(args):
            raise EvalError(f"index {arg_index} out of range")
        out.append(_format_clause(verb, precision, args[arg_index]))
        arg_index += 1
    return "".join(out)


def _format_clause(verb: str, precision, value) -> str:
    if verb == "s":
        return _format_s(value)
    if verb == "d":
        if type(value) in (int, Uint):
            return str(int(value))
        raise _format_error("decimal clause can only be used on integers", value)
    if verb in "fe":
        if type(value) in (int, Uint, float):
            number = float(value)
        elif type(value) is str and value in ("NaN", "Infinity", "-Infinity"):
            number = float(value.replace("Infinity", "inf"))
        else:
            raise EvalError(
                f"error during formatting: {'fixed-point' if verb == 'f' else 'scientific'} clause "
                f"can only be used on doubles, was given {type_name(value)}"
            )
        if math.isnan(number):
            return "NaN"
        if math.isinf(number):
            return "Infinity" if number > 0 else "-Infinity"
        digits = 6 if precision is None else precision
        if verb == "f":
            return f"{number:.{digits}f}"
        text = f"{number:.{digits}e}"
        return text
    if verb in "xX":
        if type(value) in (int, Uint):
            text = format(int(value), "x")
        elif type(value) is str:
            text = value.encode("utf-8").hex()
        elif type(value) is bytes:
            text = value.hex()
        else:
            raise _format_error("only integers, byte buffers, and strings can be formatted as hex", value)
        return text.upper() if verb == "X" else text
    if verb == "o":
        if type(value) in (int, Uint):
            return format(int(value), "o")
        raise _format_error("octal clause can only be used on integers", value)
    if verb == "b":
        if type(value) in (int, Uint):
            return format(int(value), "b")
        if type(value) is bool:
            return "1" if value else "0"
        raise _format_error("only integers and bools can be formatted as binary", value)
    raise EvalError(f"could not parse formatting clause: unrecognized formatting clause \"{verb}\"")


def _format_error(problem: str, value) -> EvalError:
    return EvalError(f"error during formatting: {problem}, was given {type_name(value)}")


_STRING_CLAUSE_TYPES = "strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps"


def _format_s(value) -> str:
    """`%s` as cel-go's strings extension (version < 4) prints a value."""
    t = type(value)
    if t is str:
        return value
    if t is bool:
        return "true" if value else "false"
    if t is int or t is Uint:
        return str(int(value))
    if t is float:
        return go_float(value)
    if t is bytes:
        return _bytes_as_string(value)
    if value is None:
        return "null"
    if t is TypeValue:
        return value.name
    if _is_list(value):
        return "[" + ", ".join(_format_member(v) for v in value) + "]"
    if isinstance(value, dict):
        return _format_map(value)
    raise _format_error(f"string clause can only be used on {_STRING_CLAUSE_TYPES}", value)


def _bytes_as_string(value: bytes) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise EvalError(
            'error during formatting: could not convert argument '
            '"invalid UTF-8 in bytes, cannot convert to string" to string'
        ) from None


def _format_member(value) -> str:
    """A list element or map value inside `%s`: printed as a CEL literal would be."""
    t = type(value)
    if t is str:
        return _go_quote(value)
    if t is bytes:
        return "b" + _go_quote(_bytes_as_string(value))
    if t is float:
        # Members use a fixed six-digit precision; non-finite values are quoted.
        if value != value:
            return '"NaN"'
        if value in (math.inf, -math.inf):
            return '"+Inf"' if value > 0 else '"-Inf"'
        return f"{value:.6f}"
    if t is int or t is Uint or t is bool or value is None or t is TypeValue or _is_list(value) or isinstance(value, dict):
        return _format_s(value)
    raise EvalError(f"error during formatting: no formatting function for {type_name(value)}")


def _format_map(value: dict) -> str:
    pairs = []
    for key, item in value.items():
        kt = type(key)
        if kt is str:
            key_text = _go_quote(key)
        elif kt is bool or kt is int or kt is Uint:
            key_text = _format_s(key)
        else:
            raise EvalError(f"error during formatting: no formatting function for map key of type {type_name(key)}")
        pairs.append((key_text, _format_member(item)))
    pairs.sort(key=lambda pair: pair[0])
    return "{" + ", ".join(f"{k}:{v}" for k, v in pairs) + "}"


_GO_QUOTE_ESCAPES = {"\a": "\\a"}


def _go_quote(text: str) -> str:
    """Go's strconv.Quote (the `%q` verb)."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        elif ch in _GO_CONTROL_ESCAPES:
            out.append(_GO_CONTROL_ESCAPES[ch])
        elif code < 0x80:
            out.append(f"\\x{code:02x}")
        elif 0xD800 <= code < 0xE000:
            out.append("\\ufffd")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


_GO_CONTROL_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def _strings_quote(text):
    return _quote(text)


# -- regex (Kubernetes) ----------------------------------------------------------------


def _find(text, pattern):
    found = _search(pattern, text)
    return "" if found is None else found


def _find_all(text, pattern, limit=-1):
    regex = compile_regex(pattern)
    if limit == 0:
        return []
    out = []
    position, last_end = 0, -1
    while position <= len(text):
        match = regex.search(text, position)
        if match is None:
            break
        start, end = match.span()
        if end == start and start == last_end:
            # Go skips an empty match adjacent to the previous one.
            position = start + 1
            continue
        out.append(match.group(0))
        last_end = end
        position = end if end > start else end + 1
        if 0 < limit <= len(out):
            break
    return out


# -- lists -----------------------------------------------------------------------------


def _ordered(items, function: str):
    for item in items:
        if not (is_number(item) or type(item) in (str, bytes, bool)):
            raise no_overload(function, item)


def _is_sorted(items):
    _ordered(items, "isSorted")
    for previous, current in zip(items, items[1:]):
        if compare(previous, current, "isSorted") > 0:
            return False
    return True


def _sum_factory(overload_ids: tuple):
    zero = 0
    if len(overload_ids) == 1:
        zero = {"list_uint_sum_uint": Uint(0), "list_double_sum_double": 0.0}.get(overload_ids[0], 0)

    def impl(items):
        total = zero
        for position, item in enumerate(items):
            if not is_number(item):
                raise no_overload("sum", item)
            total = item if position == 0 else _add(total, item)
        return total
    return impl


def _extreme(function: str, prefer: int):
    def impl(items):
        _ordered(items, function)
        if not items:
            raise EvalError(f"{function} called on empty list")
        best = items[0]
        for item in items[1:]:
            if compare(best, item, function) == prefer:
                best = item
        return best
    return impl


def _slice(items, start, end):
    if start < 0 or end < 0:
        raise EvalError(f"cannot slice({start}, {end}), negative indexes not supported")
    if start > end:
        raise EvalError(f"cannot slice({start}, {end}), start index must be less than or equal to end index")
    if len(items) < end:
        raise EvalError(f"cannot slice({start}, {end}), list is length {len(items)}")
    return list(items[start:end])


def _flatten(items, depth=1):
    if depth < 0:
        raise EvalError("level must be non-negative")
    out = []
    if len(items) > MAX_BUILT_SIZE:
        _guard_size(len(items))
    for item in items:
        if _is_list(item) and depth > 0:
            out.extend(_flatten(item, depth - 1))
        else:
            out.append(item)
    return out


def _sort_key_check(items):
    if not items:
        return
    first = type(items[0])
    for item in items:
        if not (is_number(item) or type(item) in (str, bytes, bool)):
            raise EvalError("list elements must be comparable")
        if type(item) is not first:
            raise EvalError("list elements must have the same type")


def _sort(items):
    _sort_key_check(items)
    return sorted(items)


def _sort_by_keys(items, keys):
    if len(items) != len(keys):
        raise EvalError(
            f"@sortByAssociatedKeys() expected a list of the same size as the associated keys list, "
            f"but got {len(items)} and {len(keys)} elements respectively."
        )
    _sort_key_check(keys)
    order = sorted(range(len(items)), key=lambda position: keys[position])
    return [items[position] for position in order]


def _range(count):
    _guard_size(count)
    return list(range(max(count, 0)))


def _reverse(items):
    if not _is_list(items):
        raise no_overload("reverse", items)
    return list(reversed(items))


def _distinct(items):
    out = []
    for item in items:
        if not any(equal(item, seen) for seen in out):
            out.append(item)
    return out


def includes(target, item):
    """DRA's includes(): list membership, or equality for a scalar."""
    if _is_list(target):
        for position, element in enumerate(target):
            if position >= MAX_ATTRIBUTE_VALUES:
                raise EvalError(
                    f"'includes' function cannot be applied to lists longer than {MAX_ATTRIBUTE_VALUES} values"
                )
            if _equal_true(element, item):
                return True
        return False
    return _equal_true(target, item)


def _equal_true(a, b) -> bool:
    try:
        return equal(a, b) is True
    except EvalError:
        return False


# -- sets ---------------------------------------------------------------------------------


def _set_contains(items, sub):
    return all(any(_equal_true(x, y) for x in items) for y in sub)


def _set_equivalent(a, b):
    return _set_contains(a, b) and _set_contains(b, a)


def _set_intersects(a, b):
    return any(_equal_true(x, y) for x in a for y in b)


# -- optionals --------------------------------------------------------------------------------


def _optional_of(value):
    return Optional(value)


def _is_zero(value) -> bool:
    if value is None:
        return True
    if type(value) in (bool, int, Uint, float, str, bytes):
        return not value
    if isinstance(value, (list, tuple, dict)):
        return len(value) == 0
    return False


def _optional_of_non_zero(value):
    return OPTIONAL_NONE if _is_zero(value) else Optional(value)


def _optional_none():
    return OPTIONAL_NONE


def _optional_value(opt):
    if type(opt) is not Optional:
        raise no_overload("value", opt)
    if not opt.present:
        raise EvalError("optional.none() dereference")
    return opt.value


def _optional_has_value(opt):
    if type(opt) is not Optional:
        raise no_overload("hasValue", opt)
    return opt.present


def _optional_or(opt, other):
    if type(opt) is not Optional:
        raise no_overload("or", opt, other)
    return opt if opt.present else other


def _optional_or_value(opt, default):
    if type(opt) is not Optional:
        raise no_overload("orValue", opt, default)
    return opt.value if opt.present else default


def _first(items):
    return Optional(items[0]) if items else OPTIONAL_NONE


def _last(items):
    return Optional(items[-1]) if items else OPTIONAL_NONE


def _unwrap(items):
    out = []
    for item in items:
        if type(item) is not Optional:
            raise EvalError(f"value {format_value(item)} is not optional")
        if item.present:
            out.append(item.value)
    return out


def _map_insert(mapping, key, *value):
    out = dict(mapping)
    if value:
        pairs = [(key, value[0])]
    else:
        pairs = list(key.items())
    for k, v in pairs:
        if map_find(out, k) is not MISSING:
            raise EvalError(f"insert failed: key {format_value(k)} already exists")
        out[k] = v
    return out


def typed(function: str, impl, *kinds):
    """Guard an implementation with the runtime types of its arguments."""
    def call(*args):
        for value, kind in zip(args, kinds):
            if kind is not None and type(value) not in kind:
                raise no_overload(function, *args)
        return impl(*args)
    return call


STRINGS = (str,)
_I = (int,)
_L = (list, tuple)
_M = (dict, DomainMap)


# -- declarations -------------------------------------------------------------------------------

_NUMERIC_RELATIONS = ("int64", "int"), ("uint64", "uint"), ("double", "double")


def _relation_overloads(name: str) -> list:
    out = [(f"{name}_bool", "(bool, bool) -> bool")]
    for left_id, left in _NUMERIC_RELATIONS:
        for right_id, right in _NUMERIC_RELATIONS:
            suffix = left_id if left_id == right_id else f"{left_id}_{right_id}"
            out.append((f"{name}_{suffix}", f"({left}, {right}) -> bool"))
    out += [(f"{name}_string", "(string, string) -> bool"), (f"{name}_bytes", "(bytes, bytes) -> bool")]
    return out


declare("_==_", ("equals", "(A, A) -> bool"), impl=equal)
declare("_!=_", ("not_equals", "(A, A) -> bool"), impl=_not_equal)
declare("_<_", *_relation_overloads("less"), impl=_less)
declare("_<=_", *_relation_overloads("less_equals"), impl=_less_equal)
declare("_>_", *_relation_overloads("greater"), impl=_greater)
declare("_>=_", *_relation_overloads("greater_equals"), impl=_greater_equal)
declare("_&&_", ("logical_and", "(bool, bool) -> bool"))
declare("_||_", ("logical_or", "(bool, bool) -> bool"))
declare("_?_:_", ("conditional", "(bool, A, A) -> A"))
declare("!_", ("logical_not", "(bool) -> bool"), impl=_not)
declare("@not_strictly_false", ("not_strictly_false", "(bool) -> bool"))
declare("-_", ("negate_int64", "(int) -> int"), ("negate_double", "(double) -> double"), impl=_negate)
declare(
    "_+_",
    ("add_bytes", "(bytes, bytes) -> bytes"), ("add_double", "(double, double) -> double"),
    ("add_int64", "(int, int) -> int"), ("add_list", "(list(A), list(A)) -> list(A)"),
    ("add_string", "(string, string) -> string"), ("add_uint64", "(uint, uint) -> uint"),
    impl=_add,
)
declare(
    "_-_",
    ("subtract_double", "(double, double) -> double"), ("subtract_int64", "(int, int) -> int"),
    ("subtract_uint64", "(uint, uint) -> uint"),
    impl=_arith("-", lambda a, b: a - b, lambda a, b: a - b),
)
declare(
    "_*_",
    ("multiply_double", "(double, double) -> double"), ("multiply_int64", "(int, int) -> int"),
    ("multiply_uint64", "(uint, uint) -> uint"),
    impl=_arith("*", lambda a, b: a * b, _float_mul),
)
declare(
    "_/_",
    ("divide_double", "(double, double) -> double"), ("divide_int64", "(int, int) -> int"),
    ("divide_uint64", "(uint, uint) -> uint"),
    impl=_divide,
)
declare("_%_", ("modulo_int64", "(int, int) -> int"), ("modulo_uint64", "(uint, uint) -> uint"), impl=_modulo)
declare(
    "_[_]",
    ("index_list", "(list(A), int) -> A"), ("index_map", "(map(A, B), A) -> B"),
    ("optional_list_index_int", "(optional(list(V)), int) -> optional(V)"),
    ("optional_map_index_value", "(optional(map(K, V)), K) -> optional(V)"),
)
declare(
    "_[?_]",
    ("list_optindex_optional_int", "(list(V), int) -> optional(V)"),
    ("optional_list_optindex_optional_int", "(optional(list(V)), int) -> optional(V)"),
    ("map_optindex_optional_value", "(map(K, V), K) -> optional(V)"),
    ("optional_map_optindex_optional_value", "(optional(map(K, V)), K) -> optional(V)"),
)
declare("_?._", ("select_optional_field", "(dyn, string) -> optional(V)"))
declare("@in", ("in_list", "(A, list(A)) -> bool"), ("in_map", "(A, map(A, B)) -> bool"), impl=in_operator)
declare(
    "size",
    ("size_bytes", "(bytes) -> int"), ("bytes_size", "bytes.() -> int"),
    ("size_list", "(list(A)) -> int"), ("list_size", "list(A).() -> int"),
    ("size_map", "(map(A, B)) -> int"), ("map_size", "map(A, B).() -> int"),
    ("size_string", "(string) -> int"), ("string_size", "string.() -> int"),
    impl=_size,
)
declare("type", ("type", "(A) -> type(A)"), impl=type_value)
declare("dyn", ("to_dyn", "(A) -> dyn"), impl=_dyn)
declare(
    "int",
    ("int64_to_int64", "(int) -> int"), ("uint64_to_int64", "(uint) -> int"),
    ("double_to_int64", "(double) -> int"), ("string_to_int64", "(string) -> int"),
    impl=_to_int,
)
declare(
    "uint",
    ("uint64_to_uint64", "(uint) -> uint"), ("int64_to_uint64", "(int) -> uint"),
    ("double_to_uint64", "(double) -> uint"), ("string_to_uint64", "(string) -> uint"),
    impl=_to_uint,
)
declare(
    "double",
    ("double_to_double", "(double) -> double"), ("int64_to_double", "(int) -> double"),
    ("uint64_to_double", "(uint) -> double"), ("string_to_double", "(string) -> double"),
    impl=_to_double,
)
declare(
    "string",
    ("string_to_string", "(string) -> string"), ("int64_to_string", "(int) -> string"),
    ("uint64_to_string", "(uint) -> string"), ("double_to_string", "(double) -> string"),
    ("bool_to_string", "(bool) -> string"), ("bytes_to_string", "(bytes) -> string"),
    impl=_to_string,
)
declare("bool", ("bool_to_bool", "(bool) -> bool"), ("string_to_bool", "(string) -> bool"), impl=_to_bool)
declare(
    "bytes",
    ("bytes_to_bytes", "(bytes) -> bytes"),
    ("string_to_bytes", "(string) -> bytes"),
    impl=_to_bytes,
)
declare("contains", ("contains_string", "string.(string) -> bool"), impl=_contains)
declare("startsWith", ("starts_with_string", "string.(string) -> bool"), impl=_starts_with)
declare("endsWith", ("ends_with_string", "string.(string) -> bool"), impl=_ends_with)
declare(
    "matches",
    ("matches", "(string, string) -> bool"), ("matches_string", "string.(string) -> bool"),
    impl=_matches,
)

# Optional types.
declare("optional.of", ("optional_of", "(V) -> optional(V)"), impl=_optional_of)
declare(
    "optional.ofNonZeroValue",
    ("optional_ofNonZeroValue", "(V) -> optional(V)"),
    impl=_optional_of_non_zero,
)
declare("optional.none", ("optional_none", "() -> optional(V)"), impl=_optional_none)
declare("value", ("optional_value", "optional(V).() -> V"), impl=_optional_value)
declare("hasValue", ("optional_hasValue", "optional(V).() -> bool"), impl=_optional_has_value)
declare("or", ("optional_or_optional", "optional(V).(optional(V)) -> optional(V)"), impl=_optional_or)
declare("orValue", ("optional_orValue_value", "optional(V).(V) -> V"), impl=_optional_or_value)
declare("first", ("list_first", "list(V).() -> optional(V)"), impl=typed("first", _first, _L))
declare("last", ("list_last", "list(V).() -> optional(V)"), impl=typed("last", _last, _L))
declare("optional.unwrap", ("optional_unwrap", "(list(optional(V))) -> list(V)"), impl=_unwrap)
declare("unwrapOpt", ("optional_unwrapOpt", "list(optional(V)).() -> list(V)"), impl=_unwrap)

# Two-variable comprehensions.
declare(
    "cel.@mapInsert",
    ("@mapInsert_map_key_value", "(map(K, V), K, V) -> map(K, V)"),
    ("@mapInsert_map_map", "(map(K, V), map(K, V)) -> map(K, V)"),
    impl=_map_insert,
)

# Strings extension, version 2.
declare("charAt", ("string_char_at_int", "string.(int) -> string"), impl=typed("charAt", _char_at, STRINGS, _I))
declare(
    "indexOf",
    ("string_index_of_string", "string.(string) -> int"),
    ("string_index_of_string_int", "string.(string, int) -> int"),
    ("list_a_index_of_int", "list(A).(A) -> int"),
    impl=_index_of,
)
declare(
    "lastIndexOf",
    ("string_last_index_of_string", "string.(string) -> int"),
    ("string_last_index_of_string_int", "string.(string, int) -> int"),
    ("list_a_last_index_of_int", "list(A).(A) -> int"),
    impl=_last_index_of,
)
declare(
    "lowerAscii",
    ("string_lower_ascii", "string.() -> string"),
    impl=typed("lowerAscii", _lower_ascii, STRINGS),
)
declare(
    "upperAscii",
    ("string_upper_ascii", "string.() -> string"),
    impl=typed("upperAscii", _upper_ascii, STRINGS),
)
declare(
    "replace",
    ("string_replace_string_string", "string.(string, string) -> string"),
    ("string_replace_string_string_int", "string.(string, string, int) -> string"),
    impl=typed("replace", _replace, STRINGS, STRINGS, STRINGS, _I),
)
declare(
    "split",
    ("string_split_string", "string.(string) -> list(string)"),
    ("string_split_string_int", "string.(string, int) -> list(string)"),
    impl=typed("split", _split, STRINGS, STRINGS, _I),
)
declare(
    "substring",
    ("string_substring_int", "string.(int) -> string"),
    ("string_substring_int_int", "string.(int, int) -> string"),
    impl=typed("substring", _substring, STRINGS, _I, _I),
)
declare("trim", ("string_trim", "string.() -> string"), impl=typed("trim", _trim, STRINGS))
declare(
    "join",
    ("list_join", "list(string).() -> string"), ("list_join_string", "list(string).(string) -> string"),
    impl=typed("join", _join, _L, STRINGS),
)
declare("format", ("string_format", "string.(list(dyn)) -> string"), impl=typed("format", _format, STRINGS, _L))
declare(
    "strings.quote",
    ("strings_quote", "(string) -> string"),
    impl=typed("strings.quote", _strings_quote, STRINGS),
)

# Sets extension.
declare(
    "sets.contains",
    ("list_sets_contains_list", "(list(A), list(A)) -> bool"),
    impl=typed("sets.contains", _set_contains, _L, _L),
)
declare(
    "sets.equivalent",
    ("list_sets_equivalent_list", "(list(A), list(A)) -> bool"),
    impl=typed("sets.equivalent", _set_equivalent, _L, _L),
)
declare(
    "sets.intersects",
    ("list_sets_intersects_list", "(list(A), list(A)) -> bool"),
    impl=typed("sets.intersects", _set_intersects, _L, _L),
)

# Lists extension, version 3.
_COMPARABLE = ("int", "uint", "double", "bool", "string", "bytes")
declare("slice", ("list_slice", "list(T).(int, int) -> list(T)"), impl=typed("slice", _slice, _L, _I, _I))
declare(
    "flatten",
    ("list_flatten", "list(list(T)).() -> list(T)"), ("list_flatten_int", "list(dyn).(int) -> list(dyn)"),
    impl=typed("flatten", _flatten, _L, _I),
)
declare(
    "sort",
    *((f"list_{t}_sort", f"list({t}).() -> list({t})") for t in _COMPARABLE),
    impl=typed("sort", _sort, _L),
)
declare(
    "@sortByAssociatedKeys",
    *((f"list_{t}_sortByAssociatedKeys", f"list(T).(list({t})) -> list(T)") for t in _COMPARABLE),
    impl=typed("@sortByAssociatedKeys", _sort_by_keys, _L, _L),
)
declare("lists.range", ("lists_range", "(int) -> list(int)"), impl=typed("lists.range", _range, _I))
declare("reverse", ("list_reverse", "list(T).() -> list(T)"), impl=_reverse)
declare("distinct", ("list_distinct", "list(T).() -> list(T)"), impl=typed("distinct", _distinct, _L))

# Kubernetes regex library.
declare("find", ("string_find_string", "string.(string) -> string"), impl=typed("find", _find, STRINGS, STRINGS))
declare(
    "findAll",
    ("string_find_all_string", "string.(string) -> list(string)"),
    ("string_find_all_string_int", "string.(string, int) -> list(string)"),
    impl=typed("findAll", _find_all, STRINGS, STRINGS, _I),
)

# Kubernetes lists library.
declare(
    "isSorted",
    *((f"list_{t}_is_sorted_bool", f"list({t}).() -> bool") for t in _COMPARABLE),
    impl=typed("isSorted", _is_sorted, _L),
)
declare(
    "sum",
    *((f"list_{t}_sum_{t}", f"list({t}).() -> {t}") for t in ("int", "uint", "double")),
    factory=_sum_factory,
)
declare(
    "max",
    *((f"list_{t}_max_{t}", f"list({t}).() -> {t}") for t in _COMPARABLE),
    impl=typed("max", _extreme("max", -1), _L),
)
declare(
    "min",
    *((f"list_{t}_min_{t}", f"list({t}).() -> {t}") for t in _COMPARABLE),
    impl=typed("min", _extreme("min", 1), _L),
)

# DRA: includes() (list-type attributes gate, or any stored expression).
INCLUDES: dict[str, Function] = {}
declare("includes", ("dra_includes_dyn_dyn", "dyn.(dyn) -> bool"), impl=includes, registry=INCLUDES)

# Identifiers that name types.
TYPE_IDENTS = {
    "int": "int", "uint": "uint", "double": "double", "bool": "bool", "string": "string",
    "bytes": "bytes", "list": "list(dyn)", "map": "map(dyn, dyn)", "null_type": "null_type",
    "type": "type", "optional_type": "optional(dyn)",
}
TYPE_IDENT_VALUES = {
    "int": "int", "uint": "uint", "double": "double", "bool": "bool", "string": "string",
    "bytes": "bytes", "list": "list", "map": "map", "null_type": "null_type", "type": "type",
    "optional_type": "optional_type",
}
