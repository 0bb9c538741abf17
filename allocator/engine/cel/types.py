"""CEL types as the type checker sees them."""
from __future__ import annotations

DYN = "dyn"
ANY = "any"
ERROR = "error"
BOOL = "bool"
INT = "int"
UINT = "uint"
DOUBLE = "double"
STRING = "string"
BYTES = "bytes"
NULL = "null_type"
LIST = "list"
MAP = "map"
TYPE = "type"
OPAQUE = "opaque"
STRUCT = "struct"
TYPE_PARAM = "type_param"
TIMESTAMP = "timestamp"
DURATION = "duration"

_PRIMITIVE_KINDS = (BOOL, INT, UINT, DOUBLE, STRING, BYTES)


class CelType:
    """A checked type: a kind, a name and type parameters. Immutable and hashable."""

    __slots__ = ("kind", "name", "params", "_hash")

    def __init__(self, kind: str, name: str, params: tuple = ()):
        self.kind = kind
        self.name = name
        self.params = params
        self._hash = hash((kind, name, params))

    def __eq__(self, other):
        return (
            isinstance(other, CelType)
            and self.kind == other.kind
            and self.name == other.name
            and self.params == other.params
        )

    def __hash__(self):
        return self._hash

    def __repr__(self):
        return f"CelType({self})"

    def __str__(self):
        """cel-go's Type.String(): declared name plus parameters."""
        if not self.params:
            return self.name
        return f"{self.name}({', '.join(str(p) for p in self.params)})"

    def format(self) -> str:
        """cel-go's FormatCELType, used in checker messages."""
        if self.kind == ANY:
            return "any"
        if self.kind == ERROR:
            return "!error!"
        if self.kind == NULL:
            return "null"
        if self.kind == TYPE_PARAM:
            return self.name
        if not self.params:
            return self.name
        return f"{self.name}({', '.join(p.format() for p in self.params)})"

    def equivalent(self, other: "CelType") -> bool:
        """Equal up to the names of type parameters."""
        if self.kind != other.kind or len(self.params) != len(other.params):
            return False
        if self.kind != TYPE_PARAM and self.name != other.name:
            return False
        return all(a.equivalent(b) for a, b in zip(self.params, other.params))


DYN_TYPE = CelType(DYN, "dyn")
ANY_TYPE = CelType(ANY, "google.protobuf.Any")
ERROR_TYPE = CelType(ERROR, "*error*")
BOOL_TYPE = CelType(BOOL, "bool")
INT_TYPE = CelType(INT, "int")
UINT_TYPE = CelType(UINT, "uint")
DOUBLE_TYPE = CelType(DOUBLE, "double")
STRING_TYPE = CelType(STRING, "string")
BYTES_TYPE = CelType(BYTES, "bytes")
NULL_TYPE = CelType(NULL, "null_type")
TYPE_TYPE = CelType(TYPE, "type")
TIMESTAMP_TYPE = CelType(TIMESTAMP, "google.protobuf.Timestamp")
DURATION_TYPE = CelType(DURATION, "google.protobuf.Duration")
QUANTITY_TYPE = CelType(STRUCT, "kubernetes.Quantity")
SEMVER_TYPE = CelType(STRUCT, "kubernetes.Semver")
IP_TYPE = CelType(STRUCT, "net.IP")
CIDR_TYPE = CelType(STRUCT, "net.CIDR")
URL_TYPE = CelType(STRUCT, "kubernetes.URL")
DEVICE_TYPE_NAME = "kubernetes.DRADevice"


def list_of(elem: CelType) -> CelType:
    return CelType(LIST, "list", (elem,))


def map_of(key: CelType, value: CelType) -> CelType:
    return CelType(MAP, "map", (key, value))


def optional_of(elem: CelType) -> CelType:
    return CelType(OPAQUE, "optional_type", (elem,))


def type_of(elem: CelType | None = None) -> CelType:
    return CelType(TYPE, "type", (elem,) if elem is not None else ())


def type_param(name: str) -> CelType:
    return CelType(TYPE_PARAM, name)


def struct(name: str) -> CelType:
    return CelType(STRUCT, name)


def is_optional(t: CelType) -> bool:
    return t.kind == OPAQUE and t.name == "optional_type"


_NAMED = {
    "dyn": DYN_TYPE,
    "any": ANY_TYPE,
    "bool": BOOL_TYPE,
    "int": INT_TYPE,
    "uint": UINT_TYPE,
    "double": DOUBLE_TYPE,
    "string": STRING_TYPE,
    "bytes": BYTES_TYPE,
    "null_type": NULL_TYPE,
    "type": TYPE_TYPE,
    "timestamp": TIMESTAMP_TYPE,
    "duration": DURATION_TYPE,
    "Quantity": QUANTITY_TYPE,
    "Semver": SEMVER_TYPE,
    "IP": IP_TYPE,
    "CIDR": CIDR_TYPE,
    "URL": URL_TYPE,
}


_PARSED: dict[str, CelType] = {}  # the library declares ~770 types in ~60 spellings; types are immutable


def parse_type(text: str) -> CelType:
    """Parse a declaration shorthand: `int`, `list(A)`, `map(K, V)`, `optional(V)`, `type(A)`.

    Single upper-case letters are type parameters.
    """
    known = _PARSED.get(text)
    if known is not None:
        return known
    result, rest = _parse_type(text.replace(" ", ""))
    if rest:
        raise ValueError(f"bad type {text!r}")
    _PARSED[text] = result
    return result


def _parse_type(text: str):
    index = 0
    while index < len(text) and (text[index].isalnum() or text[index] in "_."):
        index += 1
    name, rest = text[:index], text[index:]
    params = []
    if rest.startswith("("):
        rest = rest[1:]
        while True:
            param, rest = _parse_type(rest)
            params.append(param)
            if rest.startswith(","):
                rest = rest[1:]
                continue
            if not rest.startswith(")"):
                raise ValueError(f"bad type {text!r}")
            rest = rest[1:]
            break
    if name == "list":
        return list_of(params[0]), rest
    if name == "map":
        return map_of(params[0], params[1]), rest
    if name == "optional":
        return optional_of(params[0]), rest
    if name == "type":
        return type_of(params[0] if params else None), rest
    if len(name) == 1 and name.isupper():
        return type_param(name), rest
    return _NAMED[name], rest
