"""The parsed expression tree (macros already expanded), as in cel-go's AST."""
from __future__ import annotations


class Expr:
    __slots__ = ("id",)


class Literal(Expr):
    """`value` is int, Uint, float, str, bytes, bool or None."""

    __slots__ = ("value",)

    def __init__(self, id: int, value):
        self.id = id
        self.value = value


class Ident(Expr):
    __slots__ = ("name",)

    def __init__(self, id: int, name: str):
        self.id = id
        self.name = name


class Select(Expr):
    """`operand.field`; `test_only` marks the expansion of has()."""

    __slots__ = ("operand", "field", "test_only")

    def __init__(self, id: int, operand: Expr, field: str, test_only: bool = False):
        self.id = id
        self.operand = operand
        self.field = field
        self.test_only = test_only


class Call(Expr):
    """A function call; `target` is the receiver of a member call, else None."""

    __slots__ = ("function", "args", "target")

    def __init__(self, id: int, function: str, args: list, target: Expr | None = None):
        self.id = id
        self.function = function
        self.args = args
        self.target = target


class CreateList(Expr):
    __slots__ = ("elements", "optional_indices")

    def __init__(self, id: int, elements: list, optional_indices: frozenset = frozenset()):
        self.id = id
        self.elements = elements
        self.optional_indices = optional_indices


class MapEntry:
    __slots__ = ("id", "key", "value", "optional")

    def __init__(self, id: int, key: Expr, value: Expr, optional: bool = False):
        self.id = id
        self.key = key
        self.value = value
        self.optional = optional


class CreateMap(Expr):
    __slots__ = ("entries",)

    def __init__(self, id: int, entries: list):
        self.id = id
        self.entries = entries


class StructField:
    __slots__ = ("id", "name", "value", "optional")

    def __init__(self, id: int, name: str, value: Expr, optional: bool = False):
        self.id = id
        self.name = name
        self.value = value
        self.optional = optional


class CreateStruct(Expr):
    __slots__ = ("type_name", "fields")

    def __init__(self, id: int, type_name: str, fields: list):
        self.id = id
        self.type_name = type_name
        self.fields = fields


class Comprehension(Expr):
    """The fold every macro expands to; `iter_var2` is set for two-variable forms."""

    __slots__ = (
        "iter_var", "iter_var2", "iter_range", "accu_var", "accu_init",
        "loop_condition", "loop_step", "result",
    )

    def __init__(self, id, iter_range, iter_var, iter_var2, accu_var, accu_init, loop_condition, loop_step, result):
        self.id = id
        self.iter_range = iter_range
        self.iter_var = iter_var
        self.iter_var2 = iter_var2
        self.accu_var = accu_var
        self.accu_init = accu_init
        self.loop_condition = loop_condition
        self.loop_step = loop_step
        self.result = result


def children(e: Expr) -> list:
    """Direct sub-expressions, in evaluation order."""
    if isinstance(e, Select):
        return [e.operand]
    if isinstance(e, Call):
        return ([e.target] if e.target is not None else []) + list(e.args)
    if isinstance(e, CreateList):
        return list(e.elements)
    if isinstance(e, CreateMap):
        out = []
        for entry in e.entries:
            out.append(entry.key)
            out.append(entry.value)
        return out
    if isinstance(e, CreateStruct):
        return [f.value for f in e.fields]
    if isinstance(e, Comprehension):
        return [e.iter_range, e.accu_init, e.loop_condition, e.loop_step, e.result]
    return []


def is_bind(e: Comprehension) -> bool:
    """cel.bind() and optMap() expand to a fold over an empty list that never loops."""
    return (
        isinstance(e.iter_range, CreateList)
        and not e.iter_range.elements
        and isinstance(e.loop_condition, Literal)
        and e.loop_condition.value is False
        and e.accu_var != ACCUMULATOR
    )


ACCUMULATOR = "__result__"
UNUSED_ITER_VAR = "#unused"
