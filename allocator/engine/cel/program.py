"""Compiling expressions into programs, and evaluating programs on devices."""
from __future__ import annotations

import functools
import sys

from . import ast
from . import types as t
from .checker import Env, check, validate
from .cost import estimate
from .errors import CelCompileError, CelCostLimitError, CelRuntimeError, EvalError, Source, compile_error
from .inputs import DeviceInput, Options
from .interpreter import State, compile_program
from .functions import FUNCTIONS
from .library import INCLUDES, TYPE_IDENTS, compile_regex
from .parser import parse
from .types import parse_type
from .values import DomainMap, type_name

# Kubernetes' per-evaluation limit for DRA selectors (CELSelectorExpressionMaxCost).
COST_LIMIT = 1_000_000
# Kubernetes' limit on the expression length (CELSelectorExpressionMaxLength).
MAX_EXPRESSION_LENGTH = 10 * 1024

_RECURSION_HEADROOM = 10_000


def _environment(options: Options) -> tuple[Env, t.CelType]:
    list_types = options.stored or options.list_type_attributes
    # Without list-type attributes upstream declares attribute values as `any`,
    # which cannot be iterated and is the only non-bool result a selector may have.
    attribute_type = t.DYN_TYPE if list_types else t.ANY_TYPE
    fields = {
        "driver": t.STRING_TYPE,
        "attributes": t.map_of(t.STRING_TYPE, t.map_of(t.STRING_TYPE, attribute_type)),
        "capacity": t.map_of(t.STRING_TYPE, t.map_of(t.STRING_TYPE, t.QUANTITY_TYPE)),
    }
    if options.stored or options.consumable_capacity:
        fields["allowMultipleAllocations"] = t.BOOL_TYPE
    functions = dict(FUNCTIONS)
    if list_types:
        functions.update(INCLUDES)
    env = Env(
        variables={"device": t.struct(t.DEVICE_TYPE_NAME)},
        structs={t.DEVICE_TYPE_NAME: fields, t.QUANTITY_TYPE.name: {}, t.SEMVER_TYPE.name: {}},
        functions=functions,
        type_idents={name: parse_type(spec) for name, spec in TYPE_IDENTS.items()},
    )
    return env, attribute_type


@functools.lru_cache(maxsize=16)
def _cached_environment(options: Options):
    return _environment(options)


def _describe(x: t.CelType) -> str:
    return "any" if x.kind == t.ANY else str(x)


class Program:
    """A compiled expression; evaluation is thread-safe and re-entrant."""

    __slots__ = ("expression", "estimated_cost", "result_type", "_root", "_slot_count")

    def __init__(self, expression: str, estimated_cost: int, result_type: str, root, slot_count: int):
        self.expression = expression
        self.estimated_cost = estimated_cost
        self.result_type = result_type
        self._root = root
        self._slot_count = slot_count

    def __repr__(self):
        return f"Program({self.expression!r}, result_type={self.result_type!r}, estimated_cost={self.estimated_cost})"

    def evaluate_value(self, device: DeviceInput, *, cost_limit: int = COST_LIMIT, deadline: float | None = None):
        """The value of the expression for this device; raises CelRuntimeError."""
        return self.evaluate_with_cost(device, cost_limit=cost_limit, deadline=deadline)[0]

    def evaluate_with_cost(self, device: DeviceInput, *, cost_limit: int = COST_LIMIT, deadline: float | None = None):
        """(value, actual runtime cost) — the cost cel-go's tracker would report."""
        state = State(device, cost_limit, deadline, self._slot_count)
        try:
            value = self._root(state)
        except RecursionError:
            raise CelRuntimeError("max recursion depth exceeded") from None
        if state.cost > cost_limit:
            raise _cost_error()
        if type(value) is DomainMap:
            value = dict(value)
        return value, state.cost

    def evaluate(self, device: DeviceInput, *, cost_limit: int = COST_LIMIT, deadline: float | None = None) -> bool:
        """Whether the selector matches; a non-bool result is a runtime error as upstream."""
        state = State(device, cost_limit, deadline, self._slot_count)
        try:
            value = self._root(state)
        except RecursionError:
            raise CelRuntimeError("max recursion depth exceeded") from None
        if state.cost > cost_limit:
            raise _cost_error()
        if value is True or value is False:
            return value
        name = type_name(value)
        raise CelRuntimeError(
            f"CEL result of type {name} could not be converted to bool: "
            f"type conversion error from '{name}' to 'bool'"
        )


def _cost_error():
    return CelCostLimitError()


def _ensure_recursion_headroom():
    # Checking and compiling recurse over the expression tree (depth is capped
    # by the parser); make sure the interpreter allows that much.
    if sys.getrecursionlimit() < _RECURSION_HEADROOM:
        sys.setrecursionlimit(_RECURSION_HEADROOM)


def _literal_regex_issues(checked) -> list:
    """Kubernetes compiles constant find()/findAll() patterns when building the program."""
    problems = []
    stack = [checked.expr]
    while stack:
        node = stack.pop()
        stack.extend(ast.children(node))
        if isinstance(node, ast.Call) and node.function in ("find", "findAll") and node.target is not None and node.args:
            pattern = node.args[0]
            if isinstance(pattern, ast.Literal) and type(pattern.value) is str:
                try:
                    compile_regex(pattern.value)
                except EvalError as exc:
                    problems.append(exc.message)
    return problems


def _checked(expression: str, options: Options):
    """Parsed and type-checked: (checked, result type), or the compile error. What comes after
    (the result's type as a selector or a derived attribute must have it, then the program) is
    worked out by the caller."""
    if not isinstance(expression, str):
        raise CelCompileError("expression must be a string")
    _ensure_recursion_headroom()
    source = Source(expression)
    parsed = parse(expression)
    if parsed.issues:
        raise compile_error(source, parsed.issues)
    env, attribute_type = _cached_environment(options)
    checked, issues = check(parsed.expr, env, parsed.offsets)
    if issues:
        raise compile_error(source, issues)
    issues = validate(checked)
    if issues:
        raise compile_error(source, issues)
    return checked, checked.type_of(checked.expr)


def _result_type_refusal(output: t.CelType, options: Options, selector) -> CelCompileError | None:
    """A selector's result must be bool (or dynamic), a derived attribute's a scalar or a list of them."""
    if selector is True and output != t.BOOL_TYPE and output != _cached_environment(options)[1]:
        return CelCompileError(f"must evaluate to bool or the unknown type, not {_describe(output)}")
    if selector == DERIVED and not _derived_type_allowed(output, options.stored or options.list_type_attributes):
        kinds = "a primitive scalar (string, integer, boolean, semver)"
        if options.stored or options.list_type_attributes:
            kinds += " or a list of these scalars"
        return CelCompileError(f"must evaluate to {kinds}, not {_describe(output)}")
    return None


def _program(expression: str, options: Options, checked, output: t.CelType) -> Program:
    _ensure_recursion_headroom()
    regex_problems = _literal_regex_issues(checked)
    if regex_problems:
        raise CelCompileError(f"program instantiation failed: {regex_problems[0]}")
    estimated = estimate(checked)[1]
    root, slot_count = compile_program(checked, _cached_environment(options)[0].functions)
    return Program(expression, estimated, _describe(output), root, slot_count)


def _guarded(build, *args):
    """What `build(*args)` gives, its compile error included (errors are answers too: kept alike)."""
    try:
        return build(*args)
    except CelCompileError as exc:
        return exc
    except RecursionError:
        return CelCompileError("expression recursion limit exceeded: 250")


# Every environment for stored expressions declares the same (see _environment: `stored` declares
# every field and function whatever the gates say), so one key serves them all: the validation of a
# stored object and the scheduler (whose list-type gate may differ) compile an expression once. The
# caches are keyed by the options' values (a tuple hashes without calling back into Python).
_STORED = (True, True, True)  # Options(list_type_attributes, consumable_capacity, stored)


@functools.lru_cache(maxsize=4096)
def _checked_cached(expression: str, key: tuple):
    return _guarded(_checked, expression, Options(*key))


@functools.lru_cache(maxsize=4096)
def _program_cached(expression: str, key: tuple):
    return _guarded(_program, expression, Options(*key), *_checked_cached(expression, key))


@functools.lru_cache(maxsize=4096)
def _compile_cached(expression: str, key: tuple, selector):
    result = _checked_cached(expression, key)
    if isinstance(result, CelCompileError):
        return result
    return _result_type_refusal(result[1], Options(*key), selector) or _program_cached(expression, key)


def _compile(expression: str, options: Options, selector) -> Program:
    key = _STORED if options.stored else (options.list_type_attributes, options.consumable_capacity, False)
    result = _compile_cached(expression, key, selector)
    if isinstance(result, CelCompileError):
        raise CelCompileError(result.message, result.line, result.column)
    return result


def compile_selector(expression: str, options: Options = Options()) -> Program:
    """Compile a device selector: the result must be bool (or dynamic). Cached."""
    return _compile(expression, options, True)


DERIVED = "derived"
_DERIVED_ELEMENTS = (t.BOOL_TYPE, t.INT_TYPE, t.STRING_TYPE, t.ANY_TYPE, t.DYN_TYPE, t.SEMVER_TYPE)


def _derived_type_allowed(output: t.CelType, lists: bool) -> bool:
    if output in _DERIVED_ELEMENTS:
        return True
    return lists and output.kind == t.LIST and output.params[0] in _DERIVED_ELEMENTS


def compile_derived_attribute(expression: str, options: Options = Options()) -> Program:
    """Compile a request's derived attribute as validation does: a scalar, or a list of scalars. Cached."""
    return _compile(expression, options, DERIVED)


def compile_expression(expression: str, options: Options = Options()) -> Program:
    """Compile an expression of any result type (derived attributes). Cached."""
    return _compile(expression, options, False)

