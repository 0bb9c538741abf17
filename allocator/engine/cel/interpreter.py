"""Compiles a checked expression into nested Python closures that evaluate it.

Every closure takes the evaluation state and returns a value, raising
EvalError for CEL errors. Runtime cost is counted the way cel-go's cost
tracker does under the Kubernetes estimator: one unit per variable and
per field or index step, calls as the Kubernetes and cel-go trackers price
them, 10/30 for building lists/maps (constant literals are folded for free),
and comprehensions pay for every evaluated condition and step.
"""
from __future__ import annotations

import operator
import time

from ..quantity import Quantity
from ..semver import Version
from . import ast
from . import types as t
from .checker import Checked
from .inputs import DeviceInput
from .errors import CelCostLimitError, CelInterruptedError, EvalError
from .library import MAX_BUILT_SIZE, Function, in_operator, index_value, no_overload
from .values import (
    EMPTY_MAP,
    MISSING,
    OPTIONAL_NONE,
    DomainMap,
    ErrorValue,
    Optional,
    TypeValue,
    Uint,
    equal,
    format_value,
    go_type_name,
    map_find,
    type_name,
)

INTERRUPT_CHECK_EVERY = 100

_CONVERTED_ERRORS = (TypeError, ValueError, AttributeError, IndexError, KeyError, OverflowError, ZeroDivisionError)


class State:
    __slots__ = ("cost", "limit", "deadline", "slots", "device", "iterations")

    def __init__(self, device, limit: int, deadline, slot_count: int):
        self.cost = 0
        self.limit = limit
        self.deadline = deadline
        # Comprehension steps of the whole evaluation, nested ones included: the deadline is
        # checked every INTERRUPT_CHECK_EVERY of them, however short each single loop is.
        self.iterations = 0
        self.slots = [None] * slot_count
        self.device = device


def _over_limit():
    raise CelCostLimitError()


# -- runtime sizes and costs ------------------------------------------------------------


def actual_size(value) -> int:
    if isinstance(value, (str, bytes, list, tuple, dict)):
        return len(value)
    if type(value) is Optional and value.present:
        return actual_size(value.value)
    return 1


def _ceil_div(n: int, d: int) -> int:
    return -(-n // d)


def _cost_contains_ip(extra: int):
    """containsIP / containsCIDR: compare the CIDR's bytes twice (containsCIDR: mask and compare
    prefix lengths too), plus a scan of the other side when it is a string."""
    def cost(args):
        cidr_size = actual_size(args[0])
        total = _ceil_div(2 * cidr_size, 10)
        if extra:
            total += _ceil_div(cidr_size, 10) + 1
        if isinstance(args[1], str):
            total += _ceil_div(actual_size(args[1]), 10)
        return total
    return cost


def _traversal(value) -> int:
    if isinstance(value, (str, bytes)):
        return len(value) // 10
    if isinstance(value, (list, tuple)):
        return sum(_traversal(v) for v in value)
    if isinstance(value, dict):
        return sum(_traversal(k) + _traversal(v) for k, v in value.items())
    return 1


def _cost_string_scan(args):
    return _ceil_div(actual_size(args[0]), 10)


def _cost_string_double_scan(args):
    return _ceil_div(actual_size(args[0]), 5)


def _cost_regex(args):
    return _ceil_div(1 + actual_size(args[0]), 10) * _ceil_div(actual_size(args[1]), 4)


def _cost_traversal(args):
    return _traversal(args[0])


def _cost_join(args):
    items = args[0]
    separator = args[1] if len(args) > 1 else ""
    length = sum(len(x) for x in items if isinstance(x, str))
    if len(items) > 1 and isinstance(separator, str):
        length += (len(items) - 1) * len(separator)
    if length > MAX_BUILT_SIZE:
        _over_limit()
    return _ceil_div(length, 5)


def _cost_sets(weight):
    def cost(args):
        return 1 + int(actual_size(args[0]) * actual_size(args[1]) * weight)
    return cost


def _cost_self_compare(position):
    def cost(args):
        items = args[position]
        size = actual_size(items)
        weight = 2.0
        if size and isinstance(items, (list, tuple)) and isinstance(items[0], (str, bytes)):
            weight += 0.1
        return int(size * size * weight) + 11
    return cost


def _cost_flatten(args):
    depth = args[1] if len(args) == 2 else 1
    return int(depth * actual_size(args[0])) + 11


def _cost_min_size(args):
    return _ceil_div(min(actual_size(args[0]), actual_size(args[1])), 10)


def _cost_sum_size(args):
    return _ceil_div(actual_size(args[0]) + actual_size(args[1]), 10)


def _cost_contains(args):
    return _ceil_div(actual_size(args[0]), 10) * _ceil_div(actual_size(args[1]), 10)


def _cost_in_list(args):
    return actual_size(args[1])


_COST_BY_FUNCTION = {
    "isSorted": _cost_traversal, "sum": _cost_traversal, "max": _cost_traversal,
    "min": _cost_traversal, "indexOf": _cost_traversal, "lastIndexOf": _cost_traversal,
    "includes": _cost_traversal,
    "lowerAscii": _cost_string_scan, "upperAscii": _cost_string_scan,
    "substring": _cost_string_scan, "trim": _cost_string_scan,
    "replace": _cost_string_double_scan, "split": _cost_string_double_scan,
    "join": _cost_join,
    "find": _cost_regex, "findAll": _cost_regex,
    "quantity": _cost_string_scan, "isQuantity": _cost_string_scan,
    "semver": _cost_string_scan, "isSemver": _cost_string_scan,
}
_UNIT_COST_FUNCTIONS = {
    "sign", "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan",
    "compareTo", "add", "sub", "major", "minor", "patch",
}
_COST_BY_OVERLOAD = {
    "list_sets_contains_list": _cost_sets(1), "list_sets_intersects_list": _cost_sets(1),
    "list_sets_equivalent_list": _cost_sets(2),
    "list_flatten": _cost_flatten, "list_flatten_int": _cost_flatten,
    "list_distinct": _cost_self_compare(0),
    "starts_with_string": _cost_string_scan, "ends_with_string": _cost_string_scan,
    "string_to_bytes": _cost_string_scan, "bytes_to_string": _cost_string_scan,
    "strings_quote": _cost_string_scan, "string_format": _cost_string_scan,
    "in_list": _cost_in_list,
    "add_string": _cost_sum_size, "add_bytes": _cost_sum_size,
    "matches_string": _cost_regex, "contains_string": _cost_contains,
    "string_to_ip": _cost_string_scan, "is_ip": _cost_string_scan, "ip_is_canonical": _cost_string_double_scan,
    "string_to_cidr": _cost_string_scan, "is_cidr": _cost_string_scan, "string_to_url": _cost_string_scan,
    "cidr_contains_ip_ip": _cost_contains_ip(0), "cidr_contains_ip_string": _cost_contains_ip(0),
    "cidr_contains_cidr": _cost_contains_ip(2), "cidr_contains_cidr_string": _cost_contains_ip(2),
}
for _relation in ("less", "greater", "less_equals", "greater_equals"):
    for _kind in ("string", "bytes"):
        _COST_BY_OVERLOAD[f"{_relation}_{_kind}"] = _cost_min_size
_COST_BY_OVERLOAD["equals"] = _cost_min_size
_COST_BY_OVERLOAD["not_equals"] = _cost_min_size
for _kind in ("int", "uint", "double", "bool", "string", "bytes"):
    _COST_BY_OVERLOAD[f"list_{_kind}_sort"] = _cost_self_compare(0)
    _COST_BY_OVERLOAD[f"list_{_kind}_sortByAssociatedKeys"] = _cost_self_compare(1)
# Output-sized list results are priced after the call.
_RESULT_SIZED = {"list_slice", "lists_range", "list_reverse"}


def call_cost(function: str, overload_id: str):
    """An int for fixed-cost calls, else a function of the evaluated arguments."""
    if overload_id in _COST_BY_OVERLOAD and overload_id.startswith("list_sets"):
        return _COST_BY_OVERLOAD[overload_id]
    if function in _COST_BY_FUNCTION:
        return _COST_BY_FUNCTION[function]
    if function in _UNIT_COST_FUNCTIONS:
        return 1
    return _COST_BY_OVERLOAD.get(overload_id, 1)


# -- field selection ---------------------------------------------------------------------

DEVICE_FIELDS = ("driver", "attributes", "capacity", "allowMultipleAllocations")


def device_field(device, field: str):
    if field == "driver":
        return device.driver
    if field == "attributes":
        return DomainMap(device.attributes)
    if field == "capacity":
        return DomainMap(device.capacity)
    if field == "allowMultipleAllocations":
        return bool(device.allow_multiple_allocations)
    raise EvalError(f"no such key: {field}")


def _is_device(value) -> bool:
    return type(value) is DeviceInput


def select_field(obj, field: str):
    if isinstance(obj, dict):
        value = map_find(obj, field)
        if value is MISSING:
            raise EvalError(f"no such key: {field}")
        return value
    if type(obj) is Optional:
        return optional_select(obj, field)
    if _is_device(obj):
        return device_field(obj, field)
    if isinstance(obj, (list, tuple)):
        raise EvalError("unsupported index type 'string' in list")
    raise EvalError(f"no such key: {field}")


def optional_select(obj, field: str):
    if type(obj) is Optional:
        if not obj.present:
            return OPTIONAL_NONE
        obj = obj.value
    if isinstance(obj, dict):
        value = map_find(obj, field)
        return OPTIONAL_NONE if value is MISSING else Optional(value)
    if _is_device(obj):
        return Optional(device_field(obj, field))
    raise EvalError(f"no such key: {field}")


def has_field(obj, field: str) -> bool:
    if isinstance(obj, DomainMap):
        return True  # its lookup never misses, and has() asks the lookup
    if isinstance(obj, dict):
        return map_find(obj, field) is not MISSING
    if type(obj) is Optional:
        return obj.present and has_field(obj.value, field)
    if _is_device(obj):
        return field in DEVICE_FIELDS
    return False


def index_any(container, key):
    if type(container) is Optional:
        return optional_index(container, key)
    return index_value(container, key)


def optional_index(container, key):
    if type(container) is Optional:
        if not container.present:
            return OPTIONAL_NONE
        container = container.value
    if isinstance(container, dict):
        value = map_find(container, key)
        return OPTIONAL_NONE if value is MISSING else Optional(value)
    if isinstance(container, (list, tuple)):
        try:
            value = index_value(container, key)
        except EvalError as exc:
            if exc.message.startswith("index out of bounds"):
                return OPTIONAL_NONE
            raise
        return Optional(value)
    raise EvalError(f"no such key: {format_value(key)}")


# -- the compiler ------------------------------------------------------------------------------


class _Local:
    __slots__ = ("slot", "may_hold_error")

    def __init__(self, slot: int, may_hold_error: bool):
        self.slot = slot
        self.may_hold_error = may_hold_error


_NOT_CONSTANT = object()
_RELATIONS = {
    "_<_": operator.lt, "_<=_": operator.le, "_>_": operator.gt, "_>=_": operator.ge,
}
_FOLDABLE_RESULTS = (bool, int, float, str, bytes, Quantity, Version, TypeValue)


class Compiler:
    def __init__(self, checked: Checked, functions: dict):
        self.checked = checked
        self.functions = functions
        self.slot_count = 0

    def new_slot(self) -> int:
        self.slot_count += 1
        return self.slot_count - 1

    def compile(self, e, scope: dict):
        """Returns (closure, constant value or _NOT_CONSTANT)."""
        if isinstance(e, ast.Literal):
            value = e.value
            return (lambda st: value), value
        if isinstance(e, ast.Ident):
            return self.compile_ident(e, scope), _NOT_CONSTANT
        if isinstance(e, ast.Select):
            return self.compile_select(e, scope), _NOT_CONSTANT
        if isinstance(e, ast.Call):
            return self.compile_call(e, scope), _NOT_CONSTANT
        if isinstance(e, ast.CreateList):
            return self.compile_list(e, scope)
        if isinstance(e, ast.CreateMap):
            return self.compile_map(e, scope)
        if isinstance(e, ast.CreateStruct):
            raise EvalError(f"unknown type {e.type_name}")
        return self.compile_comprehension(e, scope), _NOT_CONSTANT

    def fn(self, e, scope):
        return self.compile(e, scope)[0]

    # -- identifiers and selection ----------------------------------------------------------

    def compile_ident(self, e, scope):
        name = e.name.lstrip(".")
        local = scope.get(name) if not e.name.startswith(".") else None
        if local is not None:
            slot = local.slot
            if local.may_hold_error:
                def read_local(st):
                    st.cost += 1
                    value = st.slots[slot]
                    if type(value) is ErrorValue:
                        raise value.error
                    return value
                return read_local

            def read_iter(st):
                st.cost += 1
                return st.slots[slot]
            return read_iter
        ref = self.checked.refs.get(e.id)
        if ref is not None and ref.kind == "type":
            from .library import TYPE_IDENT_VALUES

            value = TypeValue(TYPE_IDENT_VALUES[name])
            return lambda st: value
        if name == "device":
            def read_device(st):
                st.cost += 1
                return st.device
            return read_device
        raise EvalError(f"no such attribute(s): {name}")

    def compile_select(self, e, scope):
        field = e.field
        if e.test_only:
            operand = self.fn(e.operand, scope)

            def presence(st):
                return has_field(operand(st), field)
            return presence
        if self._is_device_ident(e.operand, scope) and field in DEVICE_FIELDS:
            return self._device_select(field)
        operand = self.fn(e.operand, scope)
        operand_type = self.checked.type_of(e.operand)
        if operand_type.kind == t.MAP:
            def select_map(st):
                obj = operand(st)
                st.cost += 1
                if type(obj) is dict:
                    try:
                        return obj[field]
                    except KeyError:
                        raise EvalError(f"no such key: {field}") from None
                return select_field(obj, field)
            return select_map

        def select(st):
            obj = operand(st)
            st.cost += 1
            return select_field(obj, field)
        return select

    def _is_device_ident(self, e, scope) -> bool:
        if not isinstance(e, ast.Ident) or e.name != "device" or "device" in scope:
            return False
        ref = self.checked.refs.get(e.id)
        return ref is not None and ref.kind == "variable"

    def _device_select(self, field: str):
        if field == "driver":
            def driver(st):
                st.cost += 2
                return st.device.driver
            return driver
        if field == "allowMultipleAllocations":
            def multi(st):
                st.cost += 2
                return bool(st.device.allow_multiple_allocations)
            return multi
        attribute = "attributes" if field == "attributes" else "capacity"

        def domains(st):
            st.cost += 2
            return DomainMap(getattr(st.device, attribute))
        return domains

    # -- calls -------------------------------------------------------------------------------

    def compile_call(self, e, scope):
        function = e.function
        if function == "_&&_":
            return self._logical(e, scope, False)
        if function == "_||_":
            return self._logical(e, scope, True)
        if function == "_?_:_":
            return self._conditional(e, scope)
        if function == "@not_strictly_false":
            return self._not_strictly_false(e, scope)
        if function == "_[_]":
            return self._index(e, scope)
        if function == "_[?_]":
            container, key = (self.fn(a, scope) for a in e.args)

            def opt_index(st):
                c = container(st)
                k = key(st)
                st.cost += 1
                return optional_index(c, k)
            return opt_index
        if function == "_?._":
            operand = self.fn(e.args[0], scope)
            field = e.args[1].value

            def opt_select(st):
                obj = operand(st)
                st.cost += 1
                return optional_select(obj, field)
            return opt_select
        if function in ("_==_", "_!=_"):
            return self._equality(e, scope, function == "_!=_")
        if function == "@in":
            fast = self._set_membership(e, scope)
            if fast is not None:
                return fast
        if function in _RELATIONS:
            fast = self._relation(e, scope)
            if fast is not None:
                return fast
        return self._generic_call(e, scope)

    def _set_membership(self, e, scope):
        """`x in [literals]` is a set lookup without a call cost, as cel-go optimises it."""
        ref = self.checked.refs.get(e.id)
        if ref is None or ref.overload_ids != ("in_list",):
            return None
        element, items = e.args
        _, constant = self.compile(items, scope)
        if constant is _NOT_CONSTANT or not all(type(item) in (bool, int, Uint, float, str) for item in constant):
            return None
        if not constant:
            return lambda st: False
        needle = self.fn(element, scope)

        def member(st):
            return in_operator(needle(st), constant)
        return member

    def _relation(self, e, scope):
        """`<` and friends on two ints need no dispatch (doubles must reject NaN)."""
        left_type, right_type = (self.checked.type_of(a) for a in e.args)
        if not (left_type.kind == t.INT and right_type.kind == t.INT):
            return None
        left, right = (self.fn(a, scope) for a in e.args)
        op = _RELATIONS[e.function]

        def relation(st):
            a = left(st)
            b = right(st)
            st.cost += 1
            return op(a, b)
        return relation

    def _logical(self, e, scope, is_or: bool):
        left, right = (self.fn(a, scope) for a in e.args)
        stop = is_or

        def logical(st):
            error = None
            try:
                lhs = left(st)
            except EvalError as exc:
                error = exc
            else:
                if lhs is stop:
                    return stop
                if type(lhs) is not bool:
                    error = EvalError("no such overload")
            try:
                rhs = right(st)
            except EvalError as exc:
                if error is None:
                    error = exc
            else:
                if rhs is stop:
                    return stop
                if type(rhs) is not bool and error is None:
                    error = EvalError("no such overload")
            if error is not None:
                raise error
            return not stop
        return logical

    def _conditional(self, e, scope):
        cond, if_true, if_false = (self.fn(a, scope) for a in e.args)

        def conditional(st):
            c = cond(st)
            if c is True:
                return if_true(st)
            if c is False:
                return if_false(st)
            raise EvalError("no such overload")
        return conditional

    def _not_strictly_false(self, e, scope):
        arg = self.fn(e.args[0], scope)

        def not_strictly_false(st):
            st.cost += 1
            try:
                return arg(st) is not False
            except EvalError:
                return True
        return not_strictly_false

    def _index(self, e, scope):
        container_expr, key_expr = e.args
        key, key_const = self.compile(key_expr, scope)
        if (
            isinstance(container_expr, ast.Select)
            and self._is_device_ident(container_expr.operand, scope)
            and container_expr.field in ("attributes", "capacity")
            and type(key_const) is str
        ):
            attribute = container_expr.field

            def domain(st):
                st.cost += 3
                return getattr(st.device, attribute).get(key_const, EMPTY_MAP)
            return domain
        container = self.fn(container_expr, scope)
        if type(key_const) is str:
            def index_const(st):
                c = container(st)
                st.cost += 1
                if type(c) is dict:
                    try:
                        return c[key_const]
                    except KeyError:
                        raise EvalError(f"no such key: {key_const}") from None
                return index_any(c, key_const)
            return index_const

        def index(st):
            c = container(st)
            k = key(st)
            st.cost += 1
            return index_any(c, k)
        return index

    def _equality(self, e, scope, negate: bool):
        (left, left_const), (right, right_const) = (self.compile(a, scope) for a in e.args)
        left_type, right_type = (self.checked.type_of(a) for a in e.args)
        strings = left_type.kind == t.STRING and right_type.kind == t.STRING
        if strings and type(right_const) is str:
            limit = len(right_const)

            def eq_string_literal(st):
                a = left(st)
                st.cost += -(-min(len(a), limit) // 10)
                return (a != right_const) if negate else (a == right_const)
            return eq_string_literal
        if strings:
            def eq_strings(st):
                a = left(st)
                b = right(st)
                st.cost += -(-min(len(a), len(b)) // 10)
                return (a != b) if negate else (a == b)
            return eq_strings

        def eq(st):
            a = left(st)
            b = right(st)
            st.cost += _cost_min_size((a, b))
            result = equal(a, b)
            return (not result) if negate else result
        return eq

    def _generic_call(self, e, scope):
        ref = self.checked.refs.get(e.id)
        function: Function = self.functions[e.function.lstrip(".")]
        overload_ids = ref.overload_ids if ref is not None else ()
        impl = function.implementation(overload_ids)
        overload_id = overload_ids[0] if len(overload_ids) == 1 else ""
        nodes = ([e.target] if e.target is not None else []) + list(e.args)
        compiled = [self.compile(node, scope) for node in nodes]
        arg_fns = [f for f, _ in compiled]
        cost = call_cost(function.name, overload_id)
        result_sized = overload_id in _RESULT_SIZED
        name = function.name
        if compiled and all(const is not _NOT_CONSTANT for _, const in compiled) and not result_sized:
            folded = self._fold(impl, cost, [const for _, const in compiled])
            if folded is not None:
                return folded

        def invoke(args):
            try:
                return impl(*args)
            except EvalError:
                raise
            except RecursionError:
                raise
            except _CONVERTED_ERRORS:
                raise no_overload(name, *args) from None

        if name == "_+_":
            return self._add_call(arg_fns, overload_id, invoke)
        if type(cost) is int and not result_sized:
            if len(arg_fns) == 1:
                (only,) = arg_fns

                def call1(st):
                    value = only(st)
                    st.cost += cost
                    try:
                        return impl(value)
                    except EvalError:
                        raise
                    except _CONVERTED_ERRORS:
                        raise no_overload(name, value) from None
                return call1
            if len(arg_fns) == 2:
                first, second = arg_fns

                def call2(st):
                    a = first(st)
                    b = second(st)
                    st.cost += cost
                    try:
                        return impl(a, b)
                    except EvalError:
                        raise
                    except _CONVERTED_ERRORS:
                        raise no_overload(name, a, b) from None
                return call2

            def call_fixed(st):
                args = [f(st) for f in arg_fns]
                st.cost += cost
                return invoke(args)
            return call_fixed

        def call_priced(st):
            args = [f(st) for f in arg_fns]
            if type(cost) is int:
                st.cost += cost
            else:
                st.cost += cost(args)
            if st.cost > st.limit:
                _over_limit()
            result = invoke(args)
            if result_sized:
                st.cost += actual_size(result) + 11 - 1
                if st.cost > st.limit:
                    _over_limit()
            if isinstance(result, (str, bytes, list)) and len(result) > MAX_BUILT_SIZE:
                _over_limit()
            return result
        return call_priced

    @staticmethod
    def _fold(impl, cost, args):
        """Precompute a call on constants (e.g. `quantity("40Gi")`); the cost is still charged."""
        try:
            value = impl(*args)
            price = cost if type(cost) is int else cost(args)
        except Exception:
            return None
        if type(value) not in _FOLDABLE_RESULTS:
            return None

        def folded(st):
            st.cost += price
            return value
        return folded

    def _add_call(self, arg_fns, overload_id, invoke):
        first, second = arg_fns
        sized = overload_id in ("add_string", "add_bytes")

        def add_call(st):
            a = first(st)
            b = second(st)
            if sized:
                st.cost += _cost_sum_size((a, b))
            else:
                st.cost += 1
            if isinstance(a, (str, bytes, list, tuple)) and isinstance(b, (str, bytes, list, tuple)):
                if len(a) + len(b) > MAX_BUILT_SIZE:
                    _over_limit()
                if st.cost > st.limit:
                    _over_limit()
            return invoke((a, b))
        return add_call

    # -- aggregates -------------------------------------------------------------------------------

    def compile_list(self, e, scope):
        compiled = [self.compile(element, scope) for element in e.elements]
        optional = e.optional_indices
        if all(const is not _NOT_CONSTANT for _, const in compiled) and not optional:
            value = [const for _, const in compiled]
            return (lambda st: value), value
        fns = [f for f, _ in compiled]
        if not optional:
            def build_list(st):
                items = [f(st) for f in fns]
                st.cost += 10
                return items
            return build_list, _NOT_CONSTANT
        flags = [position in optional for position in range(len(fns))]

        def build_optional_list(st):
            items = []
            for f, is_optional in zip(fns, flags):
                value = f(st)
                if is_optional:
                    if type(value) is not Optional:
                        raise EvalError(
                            f"cannot initialize optional list element from non-optional value {format_value(value)}"
                        )
                    if not value.present:
                        continue
                    value = value.value
                items.append(value)
            st.cost += 10
            return items
        return build_optional_list, _NOT_CONSTANT

    def compile_map(self, e, scope):
        entries = [
            (self.compile(entry.key, scope), self.compile(entry.value, scope), entry.optional)
            for entry in e.entries
        ]
        if all(k[1] is not _NOT_CONSTANT and v[1] is not _NOT_CONSTANT and not o for k, v, o in entries):
            try:
                value = {}
                for (_, key), (_, val), _ in entries:
                    _check_key(key)
                    value[key] = val
            except EvalError:
                pass
            else:
                return (lambda st: value), value
        compiled = [(k[0], v[0], o) for k, v, o in entries]

        def build_map(st):
            out = {}
            for key_fn, value_fn, is_optional in compiled:
                key = key_fn(st)
                _check_key(key)
                value = value_fn(st)
                if is_optional:
                    if type(value) is not Optional:
                        raise EvalError(
                            f"cannot initialize optional entry '{format_value(key)}' "
                            f"from non-optional value {format_value(value)}"
                        )
                    if not value.present:
                        out.pop(key, None)
                        continue
                    value = value.value
                out[key] = value
            st.cost += 30
            return out
        return build_map, _NOT_CONSTANT

    # -- comprehensions -----------------------------------------------------------------------

    def compile_comprehension(self, e, scope):
        accu_slot = self.new_slot()
        accu_scope = dict(scope)
        accu_scope[e.accu_var] = _Local(accu_slot, True)
        init = self.fn(e.accu_init, scope)
        if ast.is_bind(e):
            result = self.fn(e.result, accu_scope)

            def bind(st):
                try:
                    st.slots[accu_slot] = init(st)
                except EvalError as exc:
                    st.slots[accu_slot] = ErrorValue(exc)
                return result(st)
            return bind
        iter_range = self.fn(e.iter_range, scope)
        iter_scope = dict(accu_scope)
        first_slot = self.new_slot()
        iter_scope[e.iter_var] = _Local(first_slot, False)
        two_vars = e.iter_var2 is not None
        second_slot = -1
        if two_vars:
            second_slot = self.new_slot()
            iter_scope[e.iter_var2] = _Local(second_slot, False)
        condition = self.fn(e.loop_condition, iter_scope)
        step = self.fn(e.loop_step, iter_scope)
        result = self.fn(e.result, accu_scope)
        always_true = isinstance(e.loop_condition, ast.Literal) and e.loop_condition.value is True

        def fold(st):
            collection = iter_range(st)
            slots = st.slots
            try:
                slots[accu_slot] = init(st)
            except EvalError as exc:
                slots[accu_slot] = ErrorValue(exc)
            if isinstance(collection, (list, tuple)):
                pairs = enumerate(collection) if two_vars else collection
            elif isinstance(collection, dict):
                pairs = list(collection.items()) if two_vars else list(collection)
            else:
                raise EvalError(f"got '{go_type_name(collection)}', expected iterable type")
            limit = st.limit
            deadline = st.deadline
            for item in pairs:
                if two_vars:
                    slots[first_slot], slots[second_slot] = item
                else:
                    slots[first_slot] = item
                if not always_true:
                    try:
                        if condition(st) is False:
                            break
                    except EvalError:
                        pass
                try:
                    slots[accu_slot] = step(st)
                except EvalError as exc:
                    slots[accu_slot] = ErrorValue(exc)
                if st.cost > limit:
                    _over_limit()
                if deadline is not None:
                    st.iterations += 1
                    if st.iterations % INTERRUPT_CHECK_EVERY == 0 and time.monotonic() > deadline:
                        raise CelInterruptedError()
            return result(st)
        return fold


def _check_key(key):
    if not (type(key) in (str, int, bool) or isinstance(key, int)):
        raise EvalError(f"unsupported key type: {type_name(key)}")


def compile_program(checked: Checked, functions: dict):
    compiler = Compiler(checked, functions)
    root = compiler.fn(checked.expr, {})
    return root, compiler.slot_count
