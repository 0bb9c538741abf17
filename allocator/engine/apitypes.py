"""The fields of the resource.k8s.io/v1 types and of ObjectMeta, as k8s.io/api v0.37.2 declares them.

`apitypes.json` is generated from the Go types by `tests/kube/cmd/apitypes` (a test regenerates it
where Go is present and compares). Each type maps its JSON field names to the field's Go type in a
small notation: a scalar kind (`string`, `bool`, `int64`, ...; a named type is written as its
underlying kind), a type name (a struct of the table, or one that decodes itself: `Time`,
`Quantity`, `RawExtension`, ...), or `*T`, `[]T`, `map[K]V` of those.
"""
from __future__ import annotations

import json
import os

DATA_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "apitypes.json")

with open(DATA_PATH, encoding="utf-8") as _file:
    _TABLE = json.load(_file)

TYPES: dict[str, dict[str, str]] = _TABLE["types"]


def fields(type_name: str) -> dict[str, str]:
    """JSON field name -> Go type of the struct `type_name` (KeyError for a type the table lacks)."""
    return TYPES[type_name]


def is_struct_pointer(go_type: str) -> bool:
    """A pointer to a struct: `{}` there decodes to a value, where a map or list would be empty."""
    return go_type.startswith("*") and go_type[1:] in TYPES
