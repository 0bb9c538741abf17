"""Static worst-case cost estimate, as cel-go's estimator computes it for DRA selectors.

Combines cel-go's checker cost model, the Kubernetes library estimator and the
size hints the DRA compiler declares for `device` (maximum map sizes and string
lengths), so that `estimated_cost` matches `CompilationResult.MaxCost`.
"""
from __future__ import annotations

import math

from . import ast
from . import types as t
from .checker import Checked
from .library import MAX_ATTRIBUTE_VALUE_LENGTH, MAX_ATTRIBUTE_VALUES

U64 = (1 << 64) - 1
UNKNOWN = (0, U64)

STRING_FACTOR = 0.1
REGEX_FACTOR = 0.25
LIST_CREATE = 10
MAP_CREATE = 30
STRUCT_CREATE = 40

# API limits the DRA compiler declares as maximum sizes.
MAX_DOMAIN_LENGTH = 63
MAX_ID_LENGTH = 32
MAX_DRIVER_LENGTH = 63
MAX_ATTRIBUTES_PER_DEVICE = 32
ATTRIBUTE_MAX_ELEMENTS = max(MAX_ATTRIBUTE_VALUE_LENGTH, MAX_ATTRIBUTE_VALUES)


def _add(x: int, y: int) -> int:
    return min(x + y, U64)


def _mul(x: int, y: int) -> int:
    return min(x * y, U64)


def _factor(x: int, factor: float) -> int:
    if x > 0 and factor > 0 and x > U64 / factor:
        return U64
    value = math.ceil(float(x) * factor)
    return U64 if value >= 2 ** 64 else int(value)


def add(a: tuple, b: tuple) -> tuple:
    return _add(a[0], b[0]), _add(a[1], b[1])


def mul(a: tuple, b: tuple) -> tuple:
    return _mul(a[0], b[0]), _mul(a[1], b[1])


def factor(a: tuple, f: float) -> tuple:
    return _factor(a[0], f), _factor(a[1], f)


def union(a: tuple, b: tuple) -> tuple:
    return min(a[0], b[0]), max(a[1], b[1])


def fixed(value: int) -> tuple:
    return value, value


class _Decl:
    """The part of Kubernetes' DeclType the size estimator walks."""

    def __init__(self, max_elements: int = 0, fields=None, key=None, elem=None):
        self.max_elements = max_elements
        self.fields = fields or {}
        self.key = key
        self.elem = elem


_ATTRIBUTE = _Decl(ATTRIBUTE_MAX_ELEMENTS)
_DOMAIN = _Decl(MAX_DOMAIN_LENGTH)
_ID = _Decl(MAX_ID_LENGTH)
_QUANTITY = _Decl(0)
_DEVICE = _Decl(0, fields={
    "driver": _Decl(MAX_DRIVER_LENGTH),
    "allowMultipleAllocations": _Decl(1),
    "attributes": _Decl(
        MAX_ATTRIBUTES_PER_DEVICE, key=_DOMAIN,
        elem=_Decl(MAX_ATTRIBUTES_PER_DEVICE, key=_ID, elem=_ATTRIBUTE),
    ),
    "capacity": _Decl(
        MAX_ATTRIBUTES_PER_DEVICE, key=_DOMAIN,
        elem=_Decl(MAX_ATTRIBUTES_PER_DEVICE, key=_ID, elem=_QUANTITY),
    ),
})


def device_size(path) -> tuple | None:
    """The DRA size estimator: maximum sizes of values reachable from `device`."""
    if not path or path[0] != "device":
        return None
    node = _DEVICE
    for name in path[1:]:
        if name in ("@items", "@values"):
            if node.elem is None:
                return None
            node = node.elem
        elif name == "@keys":
            if node.key is None:
                return None
            node = node.key
        else:
            field = node.fields.get(name)
            if field is None:
                if node.elem is _ATTRIBUTE:
                    node = _ATTRIBUTE
                    continue
                return None
            node = field
    return 0, node.max_elements


class _Node:
    """What estimator hooks see of an argument: path, type, expression, computed size."""

    __slots__ = ("path", "type", "expr", "size")

    def __init__(self, path, type_, expr, size):
        self.path = path
        self.type = type_
        self.expr = expr
        self.size = size


class _Entry:
    __slots__ = ("container", "key", "val")

    def __init__(self, container: str, key: tuple, val: tuple):
        self.container = container
        self.key = key
        self.val = val


def _entry_union(a, b):
    if a is None or b is None:
        return None
    return _Entry(a.container, union(a.key, b.key), union(a.val, b.val))


_SCALAR_KINDS = (t.BOOL, t.DOUBLE, t.DURATION, t.INT, t.TIMESTAMP, t.UINT)
_STRING_RELATIONS = {
    "less_string", "greater_string", "less_equals_string", "greater_equals_string",
    "less_bytes", "greater_bytes", "less_equals_bytes", "greater_equals_bytes",
    "equals", "not_equals",
}
# Parsers of the IP, CIDR and URL libraries cost a scan of their string (isURL is a plain call).
_STRING_PARSERS = {"string_to_ip", "is_ip", "string_to_cidr", "is_cidr", "string_to_url"}
# An IPv4 or IPv6 address: 4 to 16 bytes.
_ADDRESS_BYTES = (4, 16)
_UNIT_EQUALITY = (t.QUANTITY_TYPE.name, t.SEMVER_TYPE.name, t.IP_TYPE.name, t.CIDR_TYPE.name, t.URL_TYPE.name)
_UNIT_FUNCTIONS = {
    "sign", "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan",
    "compareTo", "add", "sub", "major", "minor", "patch",
}


class Estimator:
    def __init__(self, checked: Checked):
        self.checked = checked
        self.paths: dict[int, list] = {}
        self.locals: dict[str, list] = {}
        self.sizes: dict[int, tuple] = {}
        self.entries: dict[int, _Entry] = {}

    # -- bookkeeping --------------------------------------------------------------------

    def type_of(self, e):
        return self.checked.type_of(e)

    def push(self, name, expr, path, size, entry):
        self.locals.setdefault(name, []).append((expr.id, path, size, entry))

    def push_value(self, name, expr):
        """A variable bound to an expression's value (accumulators, cel.bind)."""
        self.push(name, expr, self.path_of(expr), self.size_of(expr), self.entry_of(expr))

    def pop(self, name):
        self.locals[name].pop()

    def peek(self, name):
        stack = self.locals.get(name)
        return stack[-1] if stack else None

    def path_of(self, e) -> list:
        if isinstance(e, ast.Ident):
            local = self.peek(e.name)
            if local is not None:
                return list(local[1] or [])
        return list(self.paths.get(e.id) or [])

    def size_of(self, e) -> tuple | None:
        cached = self.sizes.get(e.id)
        if cached is not None:
            return cached
        literal = _expr_size(e)
        if literal is not None:
            return literal
        hinted = device_size(self.path_of(e))
        if hinted is not None:
            self.sizes[e.id] = hinted
            return hinted
        type_ = self.type_of(e)
        if _is_scalar(type_):
            return fixed(1)
        if isinstance(e, ast.Ident):
            local = self.peek(e.name)
            if local is not None and local[2] is not None:
                return local[2]
        return None

    def size_or_unknown(self, e) -> tuple:
        size = self.size_of(e)
        return UNKNOWN if size is None else size

    def entry_of(self, e):
        found = self.entries.get(e.id)
        if found is not None:
            return found
        if isinstance(e, ast.Ident):
            local = self.peek(e.name)
            if local is not None and local[3] is not None:
                return local[3]
        return None

    def node(self, e) -> _Node:
        path = self.path_of(e)
        if path and path[0] in (ast.ACCUMULATOR, "@result"):
            path = None
        return _Node(path, self.type_of(e), e, self.size_of(e))

    # -- cost ---------------------------------------------------------------------------

    def cost(self, e) -> tuple:
        if isinstance(e, ast.Literal):
            return 0, 0
        if isinstance(e, ast.Ident):
            local = self.peek(e.name)
            self.paths[e.id] = list(local[1] or []) if local is not None else [e.name]
            return 1, 1
        if isinstance(e, ast.Select):
            return self.cost_select(e)
        if isinstance(e, ast.Call):
            return self.cost_call(e)
        if isinstance(e, ast.CreateList):
            return self.cost_list(e)
        if isinstance(e, ast.CreateMap):
            return self.cost_map(e)
        if isinstance(e, ast.CreateStruct):
            total = (0, 0)
            for field in e.fields:
                total = add(total, self.cost(field.value))
            return add(total, fixed(STRUCT_CREATE))
        if ast.is_bind(e):
            return self.cost_bind(e)
        return self.cost_comprehension(e)

    def cost_select(self, e) -> tuple:
        if e.test_only:
            # Kubernetes keeps has() free (PresenceTestHasCost(false)).
            return self.cost(e.operand)
        total = self.cost(e.operand)
        if self.type_of(e.operand).kind in (t.MAP, t.STRUCT, t.TYPE_PARAM):
            total = add(total, fixed(1))
        self.paths[e.id] = self.path_of(e.operand) + [e.field]
        return total

    def cost_list(self, e) -> tuple:
        total = (0, 0)
        item = (0, 0) if not e.elements else (U64, 0)
        for element in e.elements:
            total = add(total, self.cost(element))
            item = union(item, self.size_or_unknown(element))
        self.entries[e.id] = _Entry(t.LIST, fixed(1), item)
        return add(total, fixed(LIST_CREATE))

    def cost_map(self, e) -> tuple:
        total = (0, 0)
        key = value = (0, 0) if not e.entries else (U64, 0)
        for entry in e.entries:
            total = add(total, self.cost(entry.key))
            total = add(total, self.cost(entry.value))
            key = union(key, self.size_or_unknown(entry.key))
            value = union(value, self.size_or_unknown(entry.value))
        self.entries[e.id] = _Entry(t.MAP, key, value)
        return add(total, fixed(MAP_CREATE))

    def _container_kind(self, entry, range_expr) -> str:
        if entry is not None:
            return entry.container
        return self.type_of(range_expr).kind

    def cost_comprehension(self, e) -> tuple:
        total = self.cost(e.iter_range)
        total = add(total, self.cost(e.accu_init))
        self.push_value(e.accu_var, e.accu_init)
        entry = self.entry_of(e.iter_range)
        container = self._container_kind(entry, e.iter_range)
        range_path = self.path_of(e.iter_range)
        if e.iter_var2 is not None:
            key_sub = "@indices" if container == t.LIST else "@keys"
            value_sub = "@items" if container == t.LIST else "@values"
            self.push(e.iter_var, e.iter_range, range_path + [key_sub], entry.key if entry else None, None)
            self.push(e.iter_var2, e.iter_range, range_path + [value_sub], entry.val if entry else None, None)
        else:
            if container == t.LIST:
                self.push(e.iter_var, e.iter_range, range_path + ["@items"], entry.val if entry else None, None)
            else:
                self.push(e.iter_var, e.iter_range, range_path + ["@keys"], entry.key if entry else None, None)
        loop = self.cost(e.loop_condition)
        step = self.cost(e.loop_step)
        self.pop(e.iter_var)
        if e.iter_var2 is not None:
            self.pop(e.iter_var2)
        total = add(total, self.cost(e.result))
        self.pop(e.accu_var)
        count = self.size_or_unknown(e.iter_range)
        total = add(total, mul(count, add(step, loop)))
        if isinstance(e.accu_init, ast.Literal):
            size = self.size_of(e.accu_init)
            if size is not None:
                self.sizes[e.id] = size
        elif isinstance(e.accu_init, (ast.CreateList, ast.CreateMap)):
            self.sizes[e.id] = count
            step_entry = self.entry_of(e.loop_step)
            if step_entry is not None:
                self.entries[e.id] = step_entry
        return total

    def cost_bind(self, e) -> tuple:
        total = self.cost(e.iter_range)
        total = add(total, self.cost(e.accu_init))
        self.push_value(e.accu_var, e.accu_init)
        total = add(total, self.cost(e.result))
        self.pop(e.accu_var)
        self.copy_sizes(e, e.result)
        return total

    def copy_sizes(self, dst, src):
        size = self.size_of(src)
        if size is not None:
            self.sizes[dst.id] = size
        entry = self.entry_of(src)
        if entry is not None:
            self.entries[dst.id] = entry

    def cost_call(self, e) -> tuple:
        if e.function == "dyn" and e.target is None and len(e.args) == 1:
            arg_cost = self.cost(e.args[0])
            self.copy_sizes(e, e.args[0])
            return add(fixed(1), arg_cost)
        arg_costs = []
        arg_nodes = []
        for arg in e.args:
            arg_costs.append(self.cost(arg))
            arg_nodes.append(self.node(arg))
        ref = self.checked.refs.get(e.id)
        if ref is None or not ref.overload_ids:
            return 0, 0
        total = (0, 0)
        target = None
        if e.target is not None:
            total = self.cost(e.target)
            target = self.node(e.target)
        fn_cost = (U64, 0)
        result_size = None
        for overload_id in ref.overload_ids:
            call_cost, size = self.function_cost(e, e.function, overload_id, target, arg_nodes, arg_costs)
            fn_cost = union(fn_cost, call_cost)
            if size is not None:
                result_size = size if result_size is None else union(result_size, size)
            if overload_id == "index_list" and e.args:
                entry = self.entry_of(e.args[0])
                result_size = entry.val if entry else None
                self.paths[e.id] = self.path_of(e.args[0]) + ["@items"]
            elif overload_id == "index_map" and e.args:
                entry = self.entry_of(e.args[0])
                result_size = entry.val if entry else None
                self.paths[e.id] = self.path_of(e.args[0]) + ["@values"]
            if result_size is None:
                result_size = self.size_of(e)
        if result_size is not None:
            self.sizes[e.id] = result_size
        return add(total, fn_cost)

    # -- per-function estimates ---------------------------------------------------------------

    def est_size(self, node: _Node) -> tuple:
        if node.size is not None:
            return node.size
        hinted = device_size(node.path)
        return UNKNOWN if hinted is None else hinted

    def function_cost(self, e, function, overload_id, target, args, arg_costs):
        arg_sum = (0, 0)
        for c in arg_costs:
            arg_sum = add(arg_sum, c)
        special = self.library_estimate(function, overload_id, target, args)
        if special is not None:
            cost, size = special
            return add(cost, arg_sum), size
        if overload_id == "string_format" and target is not None:
            return add(factor(self.node_size(target), STRING_FACTOR), arg_sum), None
        if overload_id in ("string_to_bytes", "bytes_to_string", "strings_quote") and len(args) == 1:
            size = self.node_size(args[0])
            if overload_id == "string_to_bytes":
                result = (size[0], _mul(size[1], 4))
            elif overload_id == "bytes_to_string":
                result = (size[0] // 4, size[1])
            else:
                result = (_add(size[0], 2), _add(_mul(size[1], 2), 2))
            return add(factor(size, STRING_FACTOR), arg_sum), result
        if overload_id in ("starts_with_string", "ends_with_string") and len(args) == 1:
            return add(factor(self.node_size(args[0]), STRING_FACTOR), arg_sum), None
        if overload_id == "in_list" and len(args) == 2:
            return add(factor(self.node_size(args[1]), 1), arg_sum), None
        if overload_id == "matches_string" and target is not None and len(args) == 1:
            str_cost = factor(add(self.node_size(target), fixed(1)), STRING_FACTOR)
            regex_cost = factor(self.node_size(args[0]), REGEX_FACTOR)
            return add(mul(str_cost, regex_cost), arg_sum), None
        if overload_id == "contains_string" and target is not None and len(args) == 1:
            str_cost = factor(self.node_size(target), STRING_FACTOR)
            sub_cost = factor(self.node_size(args[0]), STRING_FACTOR)
            return add(mul(str_cost, sub_cost), arg_sum), None
        if overload_id in ("logical_or", "logical_and"):
            lhs, rhs = arg_costs
            return (lhs[0], add(lhs, rhs)[1]), None
        if overload_id == "conditional":
            size = union(self.node_size(args[1]), self.node_size(args[2]))
            entry = _entry_union(self.entry_of(args[1].expr), self.entry_of(args[2].expr))
            if entry is not None:
                self.entries[e.id] = entry
            cond, if_true, if_false = arg_costs
            return add(cond, union(if_true, if_false)), size
        if overload_id in ("add_string", "add_bytes", "add_list") and len(args) == 2:
            size = add(self.node_size(args[0]), self.node_size(args[1]))
            entry = _entry_union(self.entry_of(args[0].expr), self.entry_of(args[1].expr))
            if entry is not None:
                self.entries[e.id] = entry
            if overload_id == "add_list":
                return add(fixed(1), arg_sum), size
            return add(factor(size, STRING_FACTOR), arg_sum), size
        if overload_id in _STRING_RELATIONS:
            lhs, rhs = self.node_size(args[0]), self.node_size(args[1])
            smallest = min(lhs[1], rhs[1])
            low = 1 if smallest > 0 else 0
            return add(factor((low, smallest), STRING_FACTOR), arg_sum), None
        return add(fixed(1), arg_sum), None

    def node_size(self, node: _Node) -> tuple:
        return UNKNOWN if node.size is None else node.size

    def library_estimate(self, function, overload_id, target, args):
        """Estimates registered by extension libraries, DRA and the Kubernetes estimator."""
        if overload_id in ("list_sets_contains_list", "list_sets_intersects_list", "list_sets_equivalent_list"):
            if len(args) != 2:
                return None
            weight = 2 if overload_id == "list_sets_equivalent_list" else 1
            return add(factor(mul(self.est_size(args[0]), self.est_size(args[1])), weight), fixed(1)), None
        ext_list = self.list_extension_estimate(overload_id, target, args)
        if ext_list is not None:
            return ext_list
        return self.kubernetes_estimate(function, overload_id, target, args)

    def list_extension_estimate(self, overload_id, target, args):
        def allocating(cost_factor: float, size: tuple):
            cost = add(add(factor(size, cost_factor), fixed(1)), fixed(LIST_CREATE))
            return cost, size

        if overload_id == "list_slice" and target is not None and len(args) == 2:
            size = self.est_size(target)
            start = _literal_uint(args[0], 0)
            end = _literal_uint(args[1], size[1])
            return allocating(1, fixed(max(end - start, 0)))
        if overload_id == "lists_range" and target is None and len(args) == 1:
            return allocating(1, fixed(_literal_uint(args[0], U64)))
        if overload_id == "list_reverse" and target is not None and not args:
            return allocating(1, self.est_size(target))
        if overload_id in ("list_flatten", "list_flatten_int") and target is not None and len(args) <= 1:
            depth = _literal_uint(args[0], U64) if args else 1
            return allocating(float(depth), self.est_size(target))
        if overload_id == "list_distinct" and target is not None and not args:
            size = self.est_size(target)
            return allocating(2.0, mul(size, size))
        if overload_id.endswith("_sort") and overload_id.startswith("list_") and target is not None and not args:
            elem = overload_id[len("list_"):-len("_sort")]
            size = self.est_size(target)
            return allocating(2.0 + (STRING_FACTOR if elem in ("string", "bytes") else 0), mul(size, size))
        if overload_id.endswith("_sortByAssociatedKeys") and target is not None and len(args) == 1:
            elem = overload_id[len("list_"):-len("_sortByAssociatedKeys")]
            size = self.est_size(args[0])
            return allocating(2.0 + (STRING_FACTOR if elem in ("string", "bytes") else 0), mul(size, size))
        return None

    def kubernetes_estimate(self, function, overload_id, target, args):
        if function in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf", "includes"):
            if target is None:
                return None
            element = self.list_element(target)
            if element is not None:
                element_cost = (1, 1)
                if element.type.kind in (t.STRING, t.BYTES):
                    element_cost = add(element_cost, factor(self.est_size(element), STRING_FACTOR))
                return mul(self.est_size(target), element_cost), None
            if function == "includes":
                return mul(self.est_size(target), (1, 1)), None
            return factor(self.est_size(target), STRING_FACTOR), None
        if function in ("lowerAscii", "upperAscii", "substring", "trim"):
            if target is None:
                return None
            size = self.est_size(target)
            return factor(size, STRING_FACTOR), size
        if function == "replace":
            if target is None or len(args) < 2:
                return None
            return self.replace_estimate(target, args)
        if function == "split":
            if target is None:
                return None
            size = self.est_size(target)
            most = size[1]
            if len(args) > 1 and isinstance(args[1].expr, ast.Literal) and type(args[1].expr.value) is int:
                most = args[1].expr.value % (1 << 64)
            return factor(size, 2 * STRING_FACTOR), (0, most)
        if function == "join":
            if target is None:
                return None
            size = (0, 0)
            list_size = self.est_size(target)
            element = self.list_element(target)
            if element is not None:
                size = mul(list_size, self.est_size(element))
            if args:
                separator = self.est_size(args[0])
                separators = (max(list_size[0] - 1, 0), max(list_size[1] - 1, 0))
                size = add(size, mul(separator, separators))
            return factor(size, STRING_FACTOR), size
        if function in ("find", "findAll"):
            if target is None or not args:
                return None
            size = self.est_size(target)
            str_cost = factor(add(size, fixed(1)), STRING_FACTOR)
            regex_cost = factor(self.est_size(args[0]), REGEX_FACTOR)
            return mul(str_cost, regex_cost), (0, size[1])
        if overload_id == "cidr_ip":
            return fixed(1), None
        if overload_id == "ip_is_canonical" and args:
            return factor(self.est_size(args[0]), 2 * STRING_FACTOR), None
        if function in ("containsIP", "containsCIDR") and args:
            # Comparing two addresses' bytes; containsCIDR also masks and compares prefix lengths.
            call = factor(add(_ADDRESS_BYTES, _ADDRESS_BYTES), STRING_FACTOR)
            if function == "containsCIDR":
                call = add(add(call, factor(_ADDRESS_BYTES, STRING_FACTOR)), fixed(1))
            if overload_id.endswith("_string"):
                call = add(call, factor(self.est_size(args[0]), STRING_FACTOR))
            return call, None
        if function in ("quantity", "isQuantity", "semver", "isSemver") or overload_id in _STRING_PARSERS:
            if not args:
                return None
            return factor(self.est_size(args[0]), STRING_FACTOR), None
        if function in _UNIT_FUNCTIONS:
            return fixed(1), None
        if function == "_==_" and len(args) == 2:
            lhs, rhs = args[0].type, args[1].type
            if lhs == rhs and lhs.kind == t.STRUCT and lhs.name in _UNIT_EQUALITY:
                return fixed(1), None
        return None

    def replace_estimate(self, target, args):
        size = self.est_size(target)
        old = self.est_size(args[0])
        new = self.est_size(args[1])
        count_min = count_max = 0
        kept_min = kept_max = 0
        if old[0] == 0:
            count_max = size[1] + 1 if size[1] < U64 else size[1]
            kept_max = size[1]
        elif new[1] <= old[0]:
            count_max = 0
            kept_max = size[1]
        else:
            count_max = math.ceil(size[1] / old[0])
        if old[1] == 0:
            count_min = size[0] + 1 if size[0] < U64 else size[0]
            kept_min = size[0]
        elif old[1] <= new[0]:
            count_min = 0
            kept_min = size[0]
        else:
            count_min = math.ceil(size[0] / old[1])
        result = add(mul((count_min, count_max), new), (kept_min, kept_max))
        return factor(size, 2 * STRING_FACTOR), result

    def list_element(self, node: _Node):
        if node.type.kind not in (t.LIST, t.MAP, t.OPAQUE, t.TYPE) or not node.type.params:
            return None
        path = node.path + ["@items"] if node.path else None
        return _Node(path, node.type.params[0], None, None)


def _literal_uint(node: _Node, default: int) -> int:
    expr = node.expr
    if not isinstance(expr, ast.Literal) or type(expr.value) is not int:
        return default
    return max(expr.value, 0)


def _expr_size(e) -> tuple | None:
    if isinstance(e, ast.Literal):
        value = e.value
        if isinstance(value, str):
            return fixed(len(value))
        if isinstance(value, bytes):
            return fixed(len(value))
        return fixed(1)
    if isinstance(e, ast.CreateList):
        return fixed(len(e.elements))
    if isinstance(e, ast.CreateMap):
        return fixed(len(e.entries))
    return None


def _is_scalar(x) -> bool:
    if x.kind in _SCALAR_KINDS:
        return True
    if t.is_optional(x):
        return _is_scalar(x.params[0])
    return False


def estimate(checked: Checked) -> tuple:
    """(min, max) cost of the checked expression."""
    return Estimator(checked).cost(checked.expr)
