"""Static type checking with cel-go's overload resolution and type-parameter unification."""
from __future__ import annotations

from . import ast
from . import types as t
from .errors import Issue
from .library import Function
from .types import CelType

_PRIMITIVE_LIKE = (t.BOOL, t.BYTES, t.DOUBLE, t.INT, t.STRING, t.UINT, t.ANY, t.DURATION, t.TIMESTAMP, t.STRUCT)
_NULLABLE = (t.OPAQUE, t.STRUCT, t.ANY, t.DURATION, t.TIMESTAMP)


class Env:
    """What an expression may refer to: variables, struct fields, functions and type names."""

    def __init__(self, variables: dict, structs: dict, functions: dict, type_idents: dict):
        self.variables = variables
        self.structs = structs
        self.functions = functions
        self.type_idents = type_idents


class Reference:
    """What the checker resolved a node to: an identifier or a set of overloads."""

    __slots__ = ("name", "kind", "overload_ids")

    def __init__(self, name: str, kind: str, overload_ids: tuple = ()):
        self.name = name
        self.kind = kind  # "variable", "local", "type" or "function"
        self.overload_ids = overload_ids


class Checked:
    def __init__(self, expr, types: dict, refs: dict, offsets: dict):
        self.expr = expr
        self.types = types
        self.refs = refs
        self.offsets = offsets

    def type_of(self, e) -> CelType:
        return self.types.get(e.id, t.DYN_TYPE)


# -- assignability (the mapping is a dict from type-parameter name to type) -----------------


def _is_dyn_or_error(x: CelType) -> bool:
    return x.kind in (t.DYN, t.ANY, t.ERROR)


def _is_dyn(x: CelType) -> bool:
    return x.kind in (t.DYN, t.ANY)


def _assignable_null(x: CelType) -> bool:
    return x.kind in _NULLABLE or x.kind in (t.NULL, t.DYN)


def _assignable(m: dict, t1: CelType, t2: CelType) -> bool:
    k1, k2 = t1.kind, t2.kind
    if k2 == t.TYPE_PARAM:
        valid, has_sub = _valid_substitution(m, t1, t2)
        if valid:
            return True
        if has_sub:
            return False
    if k1 == t.TYPE_PARAM:
        return _valid_substitution(m, t2, t1)[0]
    if _is_dyn_or_error(t1) or _is_dyn_or_error(t2):
        return True
    if k1 == t.NULL:
        return _assignable_null(t2)
    if k2 == t.NULL:
        return _assignable_null(t1)
    if k1 in _PRIMITIVE_LIKE:
        return k1 == k2 and t1.name == t2.name and t1.params == t2.params
    if k1 == t.TYPE:
        return k2 == t.TYPE
    if k1 in (t.OPAQUE, t.LIST, t.MAP):
        return (
            k1 == k2 and t1.name == t2.name and len(t1.params) == len(t2.params)
            and all(_assignable(m, a, b) for a, b in zip(t1.params, t2.params))
        )
    return False


def _valid_substitution(m: dict, t1: CelType, t2: CelType) -> tuple[bool, bool]:
    if t1 == t2:
        return True, True
    sub = m.get(t2.name)
    if sub is not None:
        if t1 == sub:
            return True, True
        if _assignable(m, t1, sub):
            general = _most_general(t1, sub)
            if _not_referenced_in(m, t2, general):
                m[t2.name] = general
            return True, True
        return False, True
    if _not_referenced_in(m, t2, t1):
        m[t2.name] = t1
        return True, False
    return False, False


def _not_referenced_in(m: dict, param: CelType, within: CelType) -> bool:
    if param == within:
        return False
    if within.kind == t.TYPE_PARAM:
        sub = m.get(within.name)
        return True if sub is None else _not_referenced_in(m, param, sub)
    if within.kind in (t.OPAQUE, t.LIST, t.MAP, t.TYPE):
        return all(_not_referenced_in(m, param, p) for p in within.params)
    return True


def _less_specific(t1: CelType, t2: CelType) -> bool:
    if _is_dyn(t1) or t1.kind == t.TYPE_PARAM:
        return True
    if _is_dyn(t2) or t2.kind == t.TYPE_PARAM:
        return False
    if t1.kind != t2.kind:
        return False
    if t1.kind == t.OPAQUE:
        return (
            t1.name == t2.name and len(t1.params) == len(t2.params)
            and all(_less_specific(a, b) for a, b in zip(t1.params, t2.params))
        )
    if t1.kind in (t.LIST, t.MAP):
        return all(_less_specific(a, b) for a, b in zip(t1.params, t2.params))
    if t1.kind == t.TYPE:
        return True
    return t1 == t2


def _most_general(t1: CelType, t2: CelType) -> CelType:
    return t1 if _less_specific(t1, t2) else t2


def substitute(m: dict, x: CelType, to_dyn: bool) -> CelType:
    if x.kind == t.TYPE_PARAM:
        sub = m.get(x.name)
        if sub is not None:
            return substitute(m, sub, to_dyn)
        return t.DYN_TYPE if to_dyn else x
    if x.params:
        return CelType(x.kind, x.name, tuple(substitute(m, p, to_dyn) for p in x.params))
    return x


def _type_params(x: CelType, out: set):
    if x.kind == t.TYPE_PARAM:
        out.add(x.name)
    for p in x.params:
        _type_params(p, out)


def _signature(arg_types: list, is_member: bool) -> str:
    text = ""
    if is_member:
        text = arg_types[0].format() + "."
        arg_types = arg_types[1:]
    return text + "(" + ", ".join(a.format() for a in arg_types) + ")"


def _mismatch(expected: CelType, actual: CelType) -> str:
    return f"expected type '{expected.format()}' but found '{actual.format()}'"


def _qualified_name(e) -> str | None:
    if isinstance(e, ast.Ident):
        return e.name
    if isinstance(e, ast.Select) and not e.test_only:
        prefix = _qualified_name(e.operand)
        return None if prefix is None else f"{prefix}.{e.field}"
    return None


def _literal_type(value) -> CelType:
    from .values import Uint

    if value is None:
        return t.NULL_TYPE
    if type(value) is bool:
        return t.BOOL_TYPE
    if type(value) is Uint:
        return t.UINT_TYPE
    if type(value) is int:
        return t.INT_TYPE
    if type(value) is float:
        return t.DOUBLE_TYPE
    if type(value) is str:
        return t.STRING_TYPE
    return t.BYTES_TYPE


class Checker:
    def __init__(self, env: Env, offsets: dict):
        self.env = env
        self.offsets = offsets
        self.issues: list[Issue] = []
        self.types: dict[int, CelType] = {}
        self.refs: dict[int, Reference] = {}
        self.mapping: dict[str, CelType] = {}
        self.scopes: list[dict[str, CelType]] = []
        self.fresh = 0

    def error(self, node_id: int, message: str):
        self.issues.append(Issue(message, self.offsets.get(node_id)))

    def new_var(self) -> CelType:
        name = f"_var{self.fresh}"
        self.fresh += 1
        return t.type_param(name)

    def assignable(self, t1: CelType, t2: CelType) -> bool:
        trial = dict(self.mapping)
        if _assignable(trial, t1, t2):
            self.mapping = trial
            return True
        return False

    def set_type(self, e, x: CelType):
        self.types[e.id] = x

    def type_of(self, e) -> CelType:
        return self.types[e.id]

    # -- entry --------------------------------------------------------------------------

    def run(self, root) -> Checked:
        self.check(root)
        for node_id, x in self.types.items():
            self.types[node_id] = substitute(self.mapping, x, True)
        return Checked(root, self.types, self.refs, self.offsets)

    def check(self, e):
        if isinstance(e, ast.Literal):
            self.set_type(e, _literal_type(e.value))
        elif isinstance(e, ast.Ident):
            self.check_ident(e)
        elif isinstance(e, ast.Select):
            self.check_select(e)
        elif isinstance(e, ast.Call):
            self.check_call(e)
        elif isinstance(e, ast.CreateList):
            self.check_list(e)
        elif isinstance(e, ast.CreateMap):
            self.check_map(e)
        elif isinstance(e, ast.CreateStruct):
            for field in e.fields:
                self.check(field.value)
            self.error(e.id, f"undeclared reference to '{e.type_name}' (in container '')")
            self.set_type(e, t.ERROR_TYPE)
        else:
            self.check_comprehension(e)

    def resolve_ident(self, name: str):
        if name.startswith("."):
            name = name[1:]
        else:
            for scope in reversed(self.scopes):
                if name in scope:
                    return scope[name], Reference(name, "local")
        if name in self.env.variables:
            return self.env.variables[name], Reference(name, "variable")
        if name in self.env.type_idents:
            return t.type_of(self.env.type_idents[name]), Reference(name, "type")
        return None, None

    def check_ident(self, e):
        found, ref = self.resolve_ident(e.name)
        if found is None:
            self.set_type(e, t.ERROR_TYPE)
            self.error(e.id, f"undeclared reference to '{e.name}' (in container '')")
            return
        self.set_type(e, found)
        self.refs[e.id] = ref

    def check_select(self, e):
        result = self.select_field(e, e.operand, e.field, False)
        if e.test_only:
            result = t.BOOL_TYPE
        self.set_type(e, substitute(self.mapping, result, False))

    def select_field(self, e, operand, field: str, optional: bool) -> CelType:
        self.check(operand)
        operand_type = substitute(self.mapping, self.type_of(operand), False)
        target, was_optional = operand_type, False
        if t.is_optional(operand_type):
            target, was_optional = operand_type.params[0], True
        result = t.ERROR_TYPE
        if target.kind == t.MAP:
            result = target.params[1]
        elif target.kind == t.STRUCT:
            fields = self.env.structs.get(target.name)
            if fields is None:
                self.error(e.id, f"unexpected failed resolution of '{target.name}'")
            elif field in fields:
                result = fields[field]
            else:
                self.error(e.id, f"undefined field '{field}'")
        elif target.kind == t.TYPE_PARAM:
            self.assignable(t.DYN_TYPE, target)
            result = t.DYN_TYPE
        else:
            if not _is_dyn_or_error(target):
                self.error(e.id, f"type '{target.format()}' does not support field selection")
            result = t.DYN_TYPE
        if was_optional or optional:
            return t.optional_of(result)
        return result

    def check_call(self, e):
        if e.function == "_?._":
            self.check_opt_select(e)
            return
        for arg in e.args:
            self.check(arg)
        if e.target is None:
            fn = self.env.functions.get(e.function.lstrip("."))
            if fn is None:
                self.error(e.id, f"undeclared reference to '{e.function}' (in container '')")
                self.set_type(e, t.ERROR_TYPE)
                return
            self.resolve(e, fn, None, e.args)
            return
        prefix = _qualified_name(e.target)
        if prefix is not None:
            fn = self.env.functions.get(f"{prefix}.{e.function}".lstrip("."))
            if fn is not None:
                e.function = fn.name
                e.target = None
                self.resolve(e, fn, None, e.args)
                return
        self.check(e.target)
        fn = self.env.functions.get(e.function)
        if fn is None:
            self.set_type(e, t.ERROR_TYPE)
            self.error(e.id, f"undeclared reference to '{e.function}' (in container '')")
            return
        self.resolve(e, fn, e.target, e.args)

    def check_opt_select(self, e):
        operand, field = e.args
        if not (isinstance(field, ast.Literal) and type(field.value) is str):
            self.error(field.id, "unsupported optional field selection")
            self.set_type(e, t.ERROR_TYPE)
            return
        result = self.select_field(e, operand, field.value, True)
        self.set_type(field, t.STRING_TYPE)
        self.set_type(e, substitute(self.mapping, result, False))
        self.refs[e.id] = Reference("_?._", "function", ("select_optional_field",))

    def resolve(self, e, fn: Function, target, args):
        arg_types = ([self.type_of(target)] if target is not None else []) + [self.type_of(a) for a in args]
        arg_nodes = ([target] if target is not None else []) + list(args)
        if fn.name in ("_&&_", "_||_"):
            failed = False
            for node, arg_type in zip(arg_nodes, arg_types):
                if not self.assignable(arg_type, t.BOOL_TYPE):
                    self.error(node.id, f"expected type 'bool' but found '{arg_type.format()}'")
                    failed = True
            self.set_type(e, t.ERROR_TYPE if failed else t.BOOL_TYPE)
            self.refs[e.id] = Reference(fn.name, "function", (fn.overloads[0].id,))
            return
        result_type = None
        matched = []
        for overload in fn.overloads:
            if overload.member != (target is not None) or len(overload.args) != len(arg_types):
                continue
            params: set = set()
            for x in overload.args + (overload.result,):
                _type_params(x, params)
            declared_args, declared_result = overload.args, overload.result
            if params:
                fresh = {name: self.new_var() for name in sorted(params)}
                declared_args = tuple(substitute(fresh, a, False) for a in declared_args)
                declared_result = substitute(fresh, declared_result, False)
            trial = dict(self.mapping)
            if all(_assignable(trial, a, b) for a, b in zip(arg_types, declared_args)):
                self.mapping = trial
                matched.append(overload.id)
                fn_result = substitute(self.mapping, declared_result, False)
                if result_type is None:
                    result_type = fn_result
                elif not _is_dyn(result_type) and fn_result != result_type:
                    result_type = t.DYN_TYPE
        if result_type is None:
            shown = [substitute(self.mapping, a, True) for a in arg_types]
            self.error(
                e.id,
                f"found no matching overload for '{fn.name}' applied to '{_signature(shown, target is not None)}'",
            )
            self.set_type(e, t.ERROR_TYPE)
            return
        self.set_type(e, result_type)
        self.refs[e.id] = Reference(fn.name, "function", tuple(matched))

    def join_types(self, e, previous, current):
        if previous is None:
            return current
        if self.assignable(previous, current):
            return _most_general(previous, current)
        return t.DYN_TYPE

    def check_list(self, e):
        elem_type = None
        for position, element in enumerate(e.elements):
            self.check(element)
            element_type = self.type_of(element)
            if position in e.optional_indices:
                if t.is_optional(element_type):
                    element_type = element_type.params[0]
                elif not _is_dyn(element_type):
                    self.error(element.id, _mismatch(t.optional_of(element_type), element_type))
            elem_type = self.join_types(element, elem_type, element_type)
        self.set_type(e, t.list_of(elem_type if elem_type is not None else self.new_var()))

    def check_map(self, e):
        key_type = value_type = None
        for entry in e.entries:
            self.check(entry.key)
            key_type = self.join_types(entry.key, key_type, self.type_of(entry.key))
            self.check(entry.value)
            entry_type = self.type_of(entry.value)
            if entry.optional:
                if t.is_optional(entry_type):
                    entry_type = entry_type.params[0]
                elif not _is_dyn(entry_type):
                    self.error(entry.value.id, _mismatch(t.optional_of(entry_type), entry_type))
            value_type = self.join_types(entry.value, value_type, entry_type)
        if key_type is None:
            key_type, value_type = self.new_var(), self.new_var()
        self.set_type(e, t.map_of(key_type, value_type))

    def check_comprehension(self, e):
        self.check(e.iter_range)
        self.check(e.accu_init)
        range_type = substitute(self.mapping, self.type_of(e.iter_range), False)
        accu_type = self.type_of(e.accu_init)
        self.scopes.append({e.accu_var: accu_type})
        var2_type = None
        if range_type.kind == t.LIST:
            var_type = range_type.params[0]
            if e.iter_var2 is not None:
                var2_type, var_type = var_type, t.INT_TYPE
        elif range_type.kind == t.MAP:
            var_type = range_type.params[0]
            if e.iter_var2 is not None:
                var2_type = range_type.params[1]
        elif range_type.kind in (t.DYN, t.ERROR, t.TYPE_PARAM):
            self.assignable(t.DYN_TYPE, range_type)
            var_type = t.DYN_TYPE
            var2_type = t.DYN_TYPE
        else:
            self.error(
                e.iter_range.id,
                f"expression of type '{range_type.format()}' cannot be range of a comprehension "
                "(must be list, map, or dynamic)",
            )
            var_type = var2_type = t.ERROR_TYPE
        scope = {e.iter_var: var_type}
        if e.iter_var2 is not None:
            scope[e.iter_var2] = var2_type
        self.scopes.append(scope)
        self.check(e.loop_condition)
        self.assert_type(e.loop_condition, t.BOOL_TYPE)
        self.check(e.loop_step)
        self.assert_type(e.loop_step, accu_type)
        self.scopes.pop()
        self.check(e.result)
        self.scopes.pop()
        self.set_type(e, substitute(self.mapping, self.type_of(e.result), False))

    def assert_type(self, e, expected: CelType):
        actual = self.type_of(e)
        if not self.assignable(expected, actual):
            self.error(e.id, f"expected type '{expected.format()}' but found '{actual.format()}'")


def check(root, env: Env, offsets: dict) -> tuple[Checked, list]:
    checker = Checker(env, offsets)
    checked = checker.run(root)
    return checked, checker.issues


def validate(checked: Checked) -> list[Issue]:
    """Kubernetes' AST validators: homogeneous aggregate literals, literal regexes, timestamps and durations."""
    from .library import compile_regex
    from .errors import EvalError

    issues = []
    stack = [(checked.expr, False)]
    while stack:
        node, exempt = stack.pop()
        # Literal arguments of string.format() may mix types.
        inner_exempt = exempt or (isinstance(node, ast.Call) and node.function == "format")
        stack.extend((child, inner_exempt) for child in ast.children(node))
        if exempt:
            pass
        elif isinstance(node, ast.CreateList):
            first = None
            for position, element in enumerate(node.elements):
                element_type = checked.type_of(element)
                if position in node.optional_indices and t.is_optional(element_type):
                    element_type = element_type.params[0]
                if first is None:
                    first = element_type
                elif not first.equivalent(element_type):
                    issues.append(Issue(
                        f"expected type '{first.format()}' but found '{element_type.format()}'",
                        checked.offsets.get(element.id),
                    ))
                    break
        elif isinstance(node, ast.CreateMap):
            key_first = value_first = None
            for entry in node.entries:
                key_type = checked.type_of(entry.key)
                value_type = checked.type_of(entry.value)
                if entry.optional and t.is_optional(value_type):
                    value_type = value_type.params[0]
                if key_first is None:
                    key_first, value_first = key_type, value_type
                    continue
                if not key_first.equivalent(key_type):
                    issues.append(Issue(
                        f"expected type '{key_first.format()}' but found '{key_type.format()}'",
                        checked.offsets.get(entry.key.id),
                    ))
                if not value_first.equivalent(value_type):
                    issues.append(Issue(
                        f"expected type '{value_first.format()}' but found '{value_type.format()}'",
                        checked.offsets.get(entry.value.id),
                    ))
        elif (isinstance(node, ast.Call) and node.function in ("timestamp", "duration") and node.target is None
              and len(node.args) == 1 and isinstance(node.args[0], ast.Literal) and type(node.args[0].value) is str):
            from .lib_time import parse_duration, parse_timestamp

            try:
                (parse_timestamp if node.function == "timestamp" else parse_duration)(node.args[0].value)
            except EvalError:
                issues.append(Issue(f"invalid {node.function} argument", checked.offsets.get(node.args[0].id)))
        elif isinstance(node, ast.Call) and node.function == "matches" and node.args:
            pattern = node.args[0]
            if isinstance(pattern, ast.Literal) and type(pattern.value) is str:
                try:
                    compile_regex(pattern.value)
                except EvalError:
                    issues.append(Issue("invalid matches argument", checked.offsets.get(pattern.id)))
    return issues
