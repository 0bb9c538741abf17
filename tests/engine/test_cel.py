"""The CEL selector environment: compile errors, runtime semantics, libraries and costs."""
from __future__ import annotations

import time

import pytest

from allocator.engine.cel import (
    CelCompileError,
    CelCostLimitError,
    CelError,
    CelInterruptedError,
    CelRuntimeError,
    DeviceInput,
    Options,
    compile_derived_attribute,
    compile_expression,
    compile_selector,
)
from allocator.engine.cel.errors import SYNTAX_WORDING_NOTE
from allocator.engine.cel.values import Uint
from allocator.engine.quantity import Quantity
from allocator.engine.semver import Version

DRIVER = "dra.example.com"
NEW_EXPRESSION = Options(stored=False, consumable_capacity=False, list_type_attributes=False)


def device(attributes=None, capacity=None, driver=DRIVER, multi=False) -> DeviceInput:
    """Build the CEL view of a device from qualified names, as the allocator does."""
    attrs: dict = {}
    caps: dict = {}
    for name, value in (attributes or {}).items():
        domain, _, ident = name.rpartition("/")
        attrs.setdefault(domain or driver, {})[ident] = value
    for name, value in (capacity or {}).items():
        domain, _, ident = name.rpartition("/")
        caps.setdefault(domain or driver, {})[ident] = Quantity.parse(value)
    return DeviceInput(driver=driver, attributes=attrs, capacity=caps, allow_multiple_allocations=multi)


GPU = device(
    attributes={
        "model": "a100",
        "index": 3,
        "healthy": True,
        "driverVersion": Version.parse("1.2.3"),
        "tags": ["fast", "nvlink"],
    },
    capacity={"memory": "80Gi"},
)


def value_of(expression: str, dev: DeviceInput = GPU):
    return compile_expression(expression).evaluate_value(dev)


def runtime_error(expression: str, dev: DeviceInput = GPU) -> str:
    with pytest.raises(CelRuntimeError) as info:
        compile_expression(expression).evaluate_value(dev)
    return info.value.message


def compile_error(expression: str, options: Options = Options()) -> CelCompileError:
    with pytest.raises(CelCompileError) as info:
        compile_selector(expression, options)
    return info.value


# -- compile errors ------------------------------------------------------------------------------


def test_undeclared_reference_is_reported_with_cel_go_framing():
    error = compile_error("noSuchVar")
    assert error.message == (
        "ERROR: <input>:1:1: undeclared reference to 'noSuchVar' (in container '')\n | noSuchVar\n | ^"
    )
    assert (error.line, error.column) == (1, 1)


def test_type_mismatch_names_the_overload_and_argument_types():
    error = compile_error('device.driver == 1')
    assert "found no matching overload for '_==_' applied to '(string, int)'" in error.message
    assert (error.line, error.column) == (1, 15)
    assert error.message.endswith(" | device.driver == 1\n | ..............^")


def test_error_location_counts_lines():
    error = compile_error('device.driver == "x" &&\n  device.nope')
    assert (error.line, error.column) == (2, 9)
    assert "undefined field 'nope'" in error.message


def test_bool_arithmetic_is_a_compile_error():
    error = compile_error("device.allowMultipleAllocations + 1")
    assert "found no matching overload for '_+_' applied to '(bool, int)'" in error.message


def test_quantities_have_no_less_than_operator():
    error = compile_error('quantity("1") < quantity("2")')
    assert "found no matching overload for '_<_' applied to '(kubernetes.Quantity, kubernetes.Quantity)'" in error.message


def test_quantity_sign_is_a_global_function_upstream():
    assert value_of('sign(quantity("-5"))') == -1
    assert "found no matching overload for 'sign'" in compile_error('quantity("1").sign() == 1').message


def test_non_bool_result_is_rejected_for_selectors():
    assert compile_error("1").message == "must evaluate to bool or the unknown type, not int"
    assert compile_error('device.attributes["x"]').message == (
        "must evaluate to bool or the unknown type, not map(string, dyn)"
    )


def test_dynamic_result_is_accepted_for_selectors():
    assert compile_selector('device.attributes["x"].flag').result_type == "dyn"


def test_compile_expression_accepts_any_result_type():
    program = compile_expression('device.attributes["dra.example.com"].index + 1')
    assert program.result_type == "int"
    assert program.evaluate_value(GPU) == 4


def test_syntax_errors_use_cel_go_framing():
    error = compile_error("?!")
    assert error.message.startswith("ERROR: <input>:1:1: Syntax error: extraneous input '?' expecting")  # as cel-go says
    assert "\n | ?!\n | ^\n" in error.message
    # ANTLR's lexer reads the character after a lone '=' (hoping for '==') and drops both.
    assert "Syntax error: token recognition error at: '= '" in compile_error('device.driver = "x"').message


def test_syntax_errors_cel_go_words_the_same_way_carry_no_note():
    # as cel-go 0.29.2 words them (tests/upstream/regressions/validation/cel-syntax-errors-as-cel-go-words-them)
    assert compile_error("a..b").message == (
        "ERROR: <input>:1:3: Syntax error: no viable alternative at input '..'\n | a..b\n | ..^")
    assert compile_error("[].null").message.startswith(
        "ERROR: <input>:1:4: Syntax error: mismatched input 'null' expecting IDENTIFIER")
    lexed_on = compile_error("a = b").message.split("\n")
    assert lexed_on[0] == "ERROR: <input>:1:3: Syntax error: token recognition error at: '= '"
    assert lexed_on[3] == "ERROR: <input>:1:5: Syntax error: extraneous input 'b' expecting <EOF>"
    assert SYNTAX_WORDING_NOTE not in compile_error("é").message
    assert compile_error("é").message.count("ERROR: <input>") == 2


def test_syntax_errors_worded_by_the_playground_say_so():
    assert compile_error("[1,").message.endswith("\n" + SYNTAX_WORDING_NOTE)  # cel-go: missing ']' at '<EOF>'


def test_a_trailing_comma_alone_makes_an_empty_list_or_map():
    assert compile_expression("[,]").result_type == "list(dyn)"
    assert compile_expression("{,}").result_type == "map(dyn, dyn)"


def test_an_undeclared_leading_dot_name_keeps_its_dot():
    assert "undeclared reference to '.a' (in container '')" in compile_error(".a").message


def test_reserved_identifier_is_rejected():
    assert "reserved identifier: if" in compile_error("if").message


def test_macro_misuse_is_reported_at_the_argument():
    error = compile_error("[1].all(1, true)")
    assert "argument must be a simple name" in error.message
    assert (error.line, error.column) == (1, 9)


def test_mixed_type_list_literal_is_rejected():
    assert "expected type 'int' but found 'string'" in compile_error('[1, "a"].size() == 2').message


def test_mixed_format_arguments_are_allowed():
    assert value_of("'%s has %d'.format(['gpu', 2])") == "gpu has 2"


def test_invalid_literal_regex_is_a_compile_error():
    assert "invalid matches argument" in compile_error('device.driver.matches("(")').message


def test_deeply_nested_parentheses_fail_fast_without_recursion_error():
    # CPU time, not wall time: the bound is on the work done, whatever else the machine runs.
    start = time.process_time()
    error = compile_error("(" * 5000 + "true" + ")" * 5000)
    assert time.process_time() - start < 2
    assert error.message == "ERROR: <input>:-1:0: expression recursion limit exceeded: 250"
    assert error.line is None


def test_deeply_nested_lists_and_calls_fail():
    assert "recursion limit exceeded" in compile_error("[" * 300 + "]" * 300 + " == []").message
    assert "recursion limit exceeded" in compile_error("size(" * 300 + "'a'" + ")" * 300 + " > 0").message


def test_long_operator_chains_hit_the_depth_limit():
    assert "max recursion depth exceeded" in compile_error("1" + " + 1" * 300 + " > 0").message
    assert "max recursion depth exceeded" in compile_error("device" + ".x" * 300).message


def test_long_logical_chains_are_balanced_and_compile():
    assert compile_selector(" || ".join(["false"] * 3000) + " || true").evaluate(GPU) is True


def test_runs_of_negation_collapse_in_pairs_like_cel_go():
    # cel-go's grammar reads `!!!…` iteratively and keeps only the parity.
    assert compile_selector("!" * 5000 + "true").evaluate(GPU) is True
    assert compile_selector("!" * 5001 + "true").evaluate(GPU) is False


# -- feature-gated declarations --------------------------------------------------------------------


def test_allow_multiple_allocations_requires_the_gate_for_new_expressions():
    error = compile_error("device.allowMultipleAllocations == false", NEW_EXPRESSION)
    assert "undefined field 'allowMultipleAllocations'" in error.message
    gated = Options(stored=False, consumable_capacity=True)
    assert compile_selector("device.allowMultipleAllocations", gated).evaluate(device(multi=True)) is True


def test_stored_expressions_declare_every_field_and_function():
    stored = Options(stored=True, consumable_capacity=False, list_type_attributes=False)
    compile_selector("device.allowMultipleAllocations", stored)
    compile_selector('device.attributes["d"].x.includes(1)', stored)


def test_includes_requires_the_list_type_gate_for_new_expressions():
    error = compile_error('device.attributes["dra.example.com"].attr.includes("fish")', NEW_EXPRESSION)
    assert "undeclared reference to 'includes'" in error.message
    gated = Options(stored=False, list_type_attributes=True)
    program = compile_selector('device.attributes["dra.example.com"].attr.includes("fish")', gated)
    assert program.evaluate(device({"attr": "fish"})) is True


def test_attributes_cannot_be_iterated_without_list_types():
    error = compile_error('device.attributes["dra.example.com"].ids.exists(i, i == 1)', NEW_EXPRESSION)
    assert "expression of type 'any' cannot be range of a comprehension" in error.message
    assert compile_selector('device.attributes["dra.example.com"].ready', NEW_EXPRESSION).result_type == "any"


# -- runtime errors --------------------------------------------------------------------------------


def test_missing_attribute_is_no_such_key():
    program = compile_selector('device.attributes["dra.example.com"].missing == 1')
    with pytest.raises(CelRuntimeError) as info:
        program.evaluate(GPU)
    assert info.value.message == "no such key: missing"


def test_unknown_domain_reads_as_empty_map():
    assert value_of('device.attributes["other.io"]') == {}
    assert value_of('device.attributes["other.io"].size()') == 0
    assert value_of('has(device.attributes["other.io"].x)') is False
    assert value_of('"other.io" in device.attributes') is False
    assert value_of('device.capacity["other.io"].size()') == 0
    assert runtime_error('device.attributes["other.io"].model') == "no such key: model"
    assert runtime_error('device.capacity["other.io"]["memory"]') == "no such key: memory"


def test_presence_test_on_the_domain_map_always_succeeds_like_upstream():
    # Upstream's domain map answers every lookup, and has() asks the lookup.
    assert value_of("has(device.attributes.anything)") is True


def test_division_and_modulus_by_zero():
    assert runtime_error("1 / 0 == 1") == "division by zero"
    assert runtime_error("1 % 0 == 1") == "modulus by zero"
    assert value_of("1.0 / 0.0") == float("inf")


def test_integer_overflow():
    assert runtime_error("9223372036854775807 + 1 > 0") == "integer overflow"
    assert runtime_error("-9223372036854775808 - 1 < 0") == "integer overflow"
    assert runtime_error("0u - 1u > 0u") == "unsigned integer overflow"
    assert runtime_error("int(1e19) > 0") == "integer overflow"
    assert value_of("-9223372036854775808") == -(2**63)
    assert "invalid int literal" in compile_error("9223372036854775808 > 0").message


def test_non_bool_result_at_runtime():
    program = compile_selector('device.attributes["dra.example.com"].tags')
    with pytest.raises(CelRuntimeError) as info:
        program.evaluate(GPU)
    assert info.value.message.startswith("CEL result of type list could not be converted to bool")


def test_iterating_a_scalar_attribute_fails():
    assert runtime_error('device.attributes["dra.example.com"].index.exists(x, x > 0)') == (
        "got 'types.Int', expected iterable type"
    )
    assert runtime_error('device.attributes["dra.example.com"].driverVersion.all(x, true)') == (
        "got 'cel.Semver', expected iterable type"
    )


def test_runaway_nested_map_hits_the_cost_limit():
    ten = "[1,2,3,4,5,6,7,8,9,10]"
    expression = f"{ten}.map(a, {ten}.map(b, {ten}.map(c, {ten}.map(d, {ten}.map(e, a+b+c+d+e))))).size() > 0"
    program = compile_selector(expression)
    with pytest.raises(CelCostLimitError) as info:
        program.evaluate(GPU)
    assert info.value.message == "operation cancelled: actual cost limit exceeded"


def test_upstream_expensive_selector_is_cancelled():
    ten = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]"
    expression = (
        f"{ten}.all(x, {ten}.all(y, {ten}.all(z, {ten}.all(z2, {ten}.all(z3, {ten}.all(z4, "
        f"{ten}.all(z5, int('1'.find('[0-9]*')) < 100)))))))"
    )
    program = compile_selector(expression)
    assert program.estimated_cost == 85555551
    with pytest.raises(CelCostLimitError):
        program.evaluate(GPU)


def test_smaller_cost_limit_is_respected():
    program = compile_selector("[1, 2, 3].map(x, x * 2).size() == 3")
    assert program.evaluate(GPU) is True
    with pytest.raises(CelCostLimitError):
        program.evaluate(GPU, cost_limit=5)


def test_deadline_interrupts_long_comprehensions():
    expression = "lists.range(1000).all(x, lists.range(100).all(y, x + y >= 0))"
    program = compile_selector(expression)
    with pytest.raises(CelInterruptedError) as info:
        program.evaluate(GPU, deadline=time.monotonic() - 1)
    assert info.value.message == "operation interrupted"


def test_catastrophic_regex_is_linear_time():
    start = time.process_time()  # CPU time: backtracking would take seconds of it, load takes none
    program = compile_selector("'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!'.matches('^(a+)+$')")
    assert program.evaluate(GPU) is False
    assert time.process_time() - start < 0.5


def test_invalid_runtime_regex_is_an_error():
    dev = device({"pattern": "("})
    message = runtime_error('device.driver.matches(device.attributes["dra.example.com"].pattern)', dev)
    assert message.startswith("error parsing regexp:")


def test_runtime_type_mismatch_is_no_such_overload():
    assert runtime_error('device.attributes["dra.example.com"].model > 1') == "no such overload"
    assert "no such overload: isGreaterThan(kubernetes.Semver, kubernetes.Quantity)" == runtime_error(
        'device.attributes["dra.example.com"].driverVersion.isGreaterThan(quantity("1"))'
    )


# -- logic -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "expression, expected",
    [
        ("true || 1 / 0 == 1", True),
        ("1 / 0 == 1 || true", True),
        ("false && 1 / 0 == 1", False),
        ("1 / 0 == 1 && false", False),
        ("[0, 1].exists(x, 1 / x == 1)", True),
        ("[1, 0].all(x, 1 / x == 2)", False),
        ("true ? 1 : 1 / 0", 1),
    ],
)
def test_logical_operators_absorb_errors_like_cel_go(expression, expected):
    assert value_of(expression) == expected


def test_logical_operators_report_the_error_when_undecided():
    assert runtime_error("1 / 0 == 1 || false") == "division by zero"
    assert runtime_error("[0, 1].all(x, 1 / x == 1)") == "division by zero"


@pytest.mark.parametrize(
    "expression, expected",
    [
        ("dyn(1) == 1.0", True),
        ("dyn(1) == 1u", True),
        ("dyn(1) == 'a'", False),
        ("dyn(null) == 1", False),
        ("[1, 2] == [1, 2]", True),
        ("{'a': 1} == {'a': 1}", True),
        ("1 < 1.5", True),
        ("-1 < 0u", True),
        ("2u > 1", True),
        ("'a' < 'b'", True),
        ("false < true", True),
        ("dyn(2) in [1.0, 2.0]", True),
    ],
)
def test_heterogeneous_equality_and_ordering(expression, expected):
    assert value_of(expression) is expected


def test_static_cross_type_equality_is_a_compile_error():
    assert "applied to '(int, double)'" in compile_error("1 == 1.0").message


def test_quantity_compared_with_another_type_is_an_error():
    assert runtime_error("dyn(quantity('1')) == 1") == "no such overload"
    assert value_of("1 == dyn(quantity('1'))") is False


# -- literals and the standard library ------------------------------------------------------------


@pytest.mark.parametrize(
    "expression, expected",
    [
        ("1 + 2 * 3", 7),
        ("-7 / 2", -3),
        ("-7 % 3", -1),
        ("1u + 2u", Uint(3)),
        ("0x10", 16),
        ("0x10u", Uint(16)),
        (".5 + 1e3", 1000.5),
        ('"""a\nb"""', "a\nb"),
        (r"r'\n'", "\\n"),
        ("'\\x41\\u00e9\\101'", "AéA"),
        ("b'\\xff' + b'a'", b"\xffa"),
        ("size('héllo')", 5),
        ("'hello'.size()", 5),
        ("size({'a': 1})", 1),
        ("[1, 2] + [3]", [1, 2, 3]),
        ("'a' in ['a', 'b']", True),
        ("'c' in {'c': 1}", True),
        ("int('42')", 42),
        ("int(-3.9)", -3),
        ("uint(3)", Uint(3)),
        ("double(2)", 2.0),
        ("string(1.5)", "1.5"),
        ("string(1000000.0)", "1e+06"),
        ("string(true)", "true"),
        ("string(b'abc')", "abc"),
        ("bytes('abc')", b"abc"),
        ("bool('true')", True),
        ("type(1) == int", True),
        ("type([]) == list", True),
        ("type(type(1)) == type", True),
        ("dyn('x')", "x"),
        ("'hello'.contains('ell')", True),
        ("'hello'.startsWith('he')", True),
        ("'hello'.endsWith('lo')", True),
        ("'hello'.matches('^h.*o$')", True),
        ("matches('hello', 'l+')", True),
        ("[1, 2, 3].all(x, x > 0)", True),
        ("[1, 2, 3].exists(x, x > 2)", True),
        ("[1, 2, 3].exists_one(x, x > 1)", False),
        ("[1, 2, 3].map(x, x * 2)", [2, 4, 6]),
        ("[1, 2, 3].map(x, x > 1, x * 2)", [4, 6]),
        ("[1, 2, 3].filter(x, x > 1)", [2, 3]),
        ("{'a': 1, 'b': 2}.map(k, k)", ["a", "b"]),
        ("{'a': 1}.all(k, v, v > 0)", True),
        ("[10, 20].exists(i, v, v == 20 && i == 1)", True),
        ("[1, 2].transformList(i, v, v * 10)", [10, 20]),
        ("{'a': 1}.transformMap(k, v, v + 1)", {"a": 2}),
    ],
)
def test_standard_library(expression, expected):
    result = value_of(expression)
    assert result == expected
    assert type(result) is type(expected)


def test_conversion_errors():
    assert runtime_error("int('x') == 1") == "type conversion error from 'string' to 'int'"
    assert runtime_error("bool('x')") == "type conversion error from 'string' to 'bool'"
    assert runtime_error("uint(-1) == 1u") == "unsigned integer overflow"


@pytest.mark.parametrize(
    "expression, expected",
    [
        ("'hello'.charAt(1)", "e"),
        ("'hello'.charAt(5)", ""),
        ("'hello'.indexOf('l')", 2),
        ("'hello'.indexOf('l', 3)", 3),
        ("'hello'.lastIndexOf('l')", 3),
        ("'hello'.lastIndexOf('l', 2)", 2),
        ("'HeLLo'.lowerAscii()", "hello"),
        ("'héllo'.upperAscii()", "HéLLO"),
        ("'aXbX'.replace('X', 'y')", "ayby"),
        ("'aXbX'.replace('X', 'y', 1)", "aybX"),
        ("'a,b,c'.split(',')", ["a", "b", "c"]),
        ("'a,b,c'.split(',', 2)", ["a", "b,c"]),
        ("'hello'.substring(1)", "ello"),
        ("'hello'.substring(1, 3)", "el"),
        ("' \\t x \\n'.trim()", "x"),
        ("['a', 'b'].join()", "ab"),
        ("['a', 'b'].join('-')", "a-b"),
        ("'%s is %d, %.2f, %x'.format(['x', 5, 1.5, 255])", "x is 5, 1.50, ff"),
        ("strings.quote('a\"b')", '"a\\"b"'),
    ],
)
def test_strings_extension(expression, expected):
    assert value_of(expression) == expected


def test_string_index_errors():
    assert runtime_error("'hello'.charAt(6)") == "index out of range: 6"
    assert runtime_error("'hello'.substring(3, 1)") == "invalid substring range. start: 3, end: 1"


def test_string_reverse_is_not_in_the_kubernetes_strings_version():
    # Kubernetes enables strings extension version 2; reverse() exists only for lists.
    assert "found no matching overload for 'reverse'" in compile_error("'abc'.reverse() == 'cba'").message


@pytest.mark.parametrize(
    "expression, expected",
    [
        ("'abc123def'.find('[0-9]+')", "123"),
        ("'abc'.find('x')", ""),
        ("'a1b22c333'.findAll('[0-9]+')", ["1", "22", "333"]),
        ("'a1b22c333'.findAll('[0-9]+', 2)", ["1", "22"]),
    ],
)
def test_kubernetes_regex_library(expression, expected):
    assert value_of(expression) == expected


def test_invalid_literal_pattern_in_find_fails_compilation():
    assert "program instantiation failed: error parsing regexp" in compile_error("'a'.find('(') == ''").message


@pytest.mark.parametrize(
    "expression, expected",
    [
        ("[1, 2, 3].isSorted()", True),
        ("['b', 'a'].isSorted()", False),
        ("[1, 2, 3].sum()", 6),
        ("[1.5, 2.5].sum()", 4.0),
        ("[1, 5, 3].max()", 5),
        ("[4, 2, 3].min()", 2),
        ("[1, 2, 1].indexOf(1)", 0),
        ("[1, 2, 1].lastIndexOf(1)", 2),
        ("[3, 1, 2].sort()", [1, 2, 3]),
        ("['b', 'a'].sortBy(x, x)", ["a", "b"]),
        ("[1, 2, 3].slice(1, 3)", [2, 3]),
        ("[[1], [2, 3]].flatten()", [1, 2, 3]),
        ("lists.range(3)", [0, 1, 2]),
        ("[1, 2].reverse()", [2, 1]),
        ("[1, 1, 2].distinct()", [1, 2]),
        ("sets.contains([1, 2, 3], [2, 3])", True),
        ("sets.equivalent([1, 2], [2, 1, 1])", True),
        ("sets.intersects([1], [2])", False),
    ],
)
def test_list_and_set_libraries(expression, expected):
    assert value_of(expression) == expected


def test_min_of_empty_list_is_an_error():
    assert runtime_error("[].min()") == "min called on empty list"


def test_math_extension_is_not_part_of_the_kubernetes_environment():
    message = compile_error("math.greatest(1, 2) == 2").message
    assert "undeclared reference to 'math' (in container '')" in message
    assert "undeclared reference to 'greatest' (in container '')" in message


# -- includes (list-type attributes) ---------------------------------------------------------------


@pytest.mark.parametrize(
    "value, argument, expected",
    [
        (["fish", "bird"], '"fish"', True),
        (["fish", "bird"], '"cat"', False),
        ("fish", '"fish"', True),
        (True, "true", True),
        ([1, 2], "3", False),
        (Version.parse("1.0.0"), 'semver("1.0.0")', True),
        ([Version.parse("1.0.0"), Version.parse("2.0.0")], 'semver("2.0.0")', True),
    ],
)
def test_includes_checks_membership_or_equality(value, argument, expected):
    program = compile_selector(f'device.attributes["dra.example.com"].name.includes({argument})')
    assert program.evaluate(device({"name": value})) is expected


def test_includes_refuses_lists_longer_than_48_values():
    program = compile_selector('device.attributes["dra.example.com"].name.includes("value-49")')
    assert program.evaluate(device({"name": [f"value-{i}" for i in range(48)]})) is False
    with pytest.raises(CelRuntimeError) as info:
        program.evaluate(device({"name": [f"value-{i}" for i in range(49)]}))
    assert info.value.message == "'includes' function cannot be applied to lists longer than 48 values"


def test_list_attributes_work_with_macros():
    assert value_of('device.attributes["dra.example.com"].tags.exists(t, t == "nvlink")') is True
    assert value_of('1 in device.attributes["dra.example.com"].tags') is False


# -- optionals and bindings --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "expression, expected",
    [
        ('device.attributes["dra.example.com"].?model.orValue("none")', "a100"),
        ('device.attributes["dra.example.com"].?missing.orValue("none")', "none"),
        ('device.attributes["other.io"].?model.hasValue()', False),
        ("{'a': {'b': 1}}.?a.b.orValue(0)", 1),
        ("{'a': {'b': 1}}.?a.c.orValue(0)", 0),
        ("[1, 2][?5].orValue(0)", 0),
        ("{'a': 1}[?'a'].value()", 1),
        ("optional.of(1).value()", 1),
        ("optional.none().hasValue()", False),
        ("optional.ofNonZeroValue('').hasValue()", False),
        ("optional.none().or(optional.of(2)).value()", 2),
        ("optional.of(2).optMap(x, x * 3).value()", 6),
        ("[?optional.of(1), ?optional.none(), 3]", [1, 3]),
        ("{'a': 1, ?'b': optional.none()}", {"a": 1}),
        ("[1, 2].first().value()", 1),
    ],
)
def test_optional_syntax_and_functions(expression, expected):
    assert value_of(expression) == expected


def test_dereferencing_an_empty_optional_fails():
    assert runtime_error("optional.none().value() == 1") == "optional.none() dereference"


def test_cel_bind_names_a_value_once():
    program = compile_selector('cel.bind(dra, device.attributes["dra.example.com"], dra.model == "a100" && dra.index == 3)')
    assert program.evaluate(GPU) is True
    assert value_of("cel.bind(x, 5, x * x)") == 25
    # An error in an unused binding does not matter, as in cel-go.
    assert value_of("cel.bind(x, 1 / 0, true)") is True


# -- quantities ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "expression, expected",
    [
        ("quantity('1Gi') == quantity('1024Mi')", True),
        ("quantity('200M').compareTo(quantity('0.2G'))", 0),
        ("quantity('50M').compareTo(quantity('50Mi'))", -1),
        ("quantity('150Mi').isGreaterThan(quantity('100Mi'))", True),
        ("quantity('50M').isLessThan(quantity('100M'))", True),
        ("quantity('50k').add(20) == quantity('50020')", True),
        ("quantity('50k').sub(quantity('20k')) == quantity('30k')", True),
        ("quantity('50k').add(20).sub(quantity('100k')).sub(-50000) == quantity('20')", True),
        ("quantity('50k').asInteger()", 50000),
        ("quantity('50000000G').isInteger()", True),
        ("quantity('1.5').isInteger()", False),
        ("quantity('9999999999999999999999999999999999999G').isInteger()", False),
        ("quantity('50k').asApproximateFloat()", 50000.0),
        ("isQuantity('1.3Gi')", True),
        ("isQuantity('200K')", False),
        ('device.capacity["dra.example.com"].memory.compareTo(quantity("40Gi")) >= 0', True),
        ('device.capacity["dra.example.com"].memory == quantity("80Gi")', True),
    ],
)
def test_quantity_library(expression, expected):
    assert value_of(expression) == expected


def test_quantity_errors():
    assert runtime_error("quantity('1.5').asInteger() == 1") == "cannot convert value to integer"
    assert runtime_error("quantity('Three').isInteger()").startswith("quantities must match the regular expression")


# -- semantic versions -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "expression, expected",
    [
        ("semver('1.2.3').major()", 1),
        ("semver('1.2.3').minor()", 2),
        ("semver('1.2.3').patch()", 3),
        ("semver('1.2.3') == semver('1.2.3+build.5')", True),
        ("semver('1.2.3').isLessThan(semver('1.10.0'))", True),
        ("semver('1.0.0-alpha').compareTo(semver('1.0.0'))", -1),
        ("semver('v1.2', true) == semver('1.2.0')", True),
        ("semver('01.02.03', true).minor()", 2),
        ("isSemver('1.2')", False),
        ("isSemver('v1.2', true)", True),
        ("isSemver('1.0.0-01')", False),
        ('device.attributes["dra.example.com"].driverVersion.isGreaterThan(semver("1.2.0"))', True),
        ('device.attributes["dra.example.com"].driverVersion == semver("1.2.3")', True),
    ],
)
def test_semver_library(expression, expected):
    assert value_of(expression) == expected


def test_semver_parse_errors_read_like_upstream():
    assert runtime_error("semver('1.2') == semver('1.2.0')") == "No Major.Minor.Patch elements found"
    assert runtime_error("semver('1.2.x').major() == 1") == 'Invalid character(s) found in patch number "x"'
    assert runtime_error("semver('1.2-beta', true).major() == 1") == (
        "short version cannot contain PreRelease/Build meta data"
    )


# -- cost estimates ---------------------------------------------------------------------------------------

# Expected worst-case costs from the upstream DRA compiler tests.
UPSTREAM_COSTS = [
    ('device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))', 6),
    ('"no-such-domain" in device.attributes', 3),
    ('device.driver == ""', 2),
    ('device.driver == "dra.example.com"', 4),
    ('device.attributes["dra.example.com"].name', 4),
    ('cel.bind(dra, device.attributes["dra.example.com"], dra.name)', 15),
    ('device.attributes["dra.example.com"].name > 0', 5),
    ('device.attributes["dra.example.com"].name == "fish"', 5),
    ('device.attributes["dra.example.com"].name.exists(x, x > 0)', 5 + 6 * 64),
    ('device.attributes["dra.example.com"].names.all(x, x != "")', 5 + 4 * 64),
    ('device.attributes["dra.example.com"].names.size() == 2', 6),
    # k8s.io/dynamic-resource-allocation v0.37.2: an attribute holds at most max(64, 48) elements.
    ('device.attributes["dra.example.com"].name.includes("fish")', 4 + 64),
    ('device.attributes["dra.example.com"].name.includes(semver("1.0.0"))', 4 + 64 + 1),
    ('1 in device.attributes["dra.example.com"].names', 4 + 64),
    ('device.attributes["dra.example.com"].name.isGreaterThan(semver("v0.0.1", true)) && isSemver("v1.0.0", true)', 7),
    ('device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))', 6),
    ('!("name" in device.capacity["dra.example.com"]) || device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))', 11),
    ('device.attributes["dra.example.com"].a && device.attributes["dra.example.com"].b && device.attributes["dra.example.com"].c', 12),
    ('device.attributes.exists_one(x, x == "dra.example.com")', 164),
    ('device.attributes["dra.example.com"].exists_one(x, x == "services")', 133),
    ('device.attributes["dra.example.com"].services.split("example").size() >= 2', 19),
    ('device.attributes["dra.example.com"].services.matches("[^a]?sym")', 18),
    ('device.capacity.exists_one(x, x == "dra.example.com")', 164),
    ("device.allowMultipleAllocations == true", 3),
]


@pytest.mark.parametrize("expression, expected", UPSTREAM_COSTS)
def test_estimated_cost_matches_upstream(expression, expected):
    assert compile_selector(expression).estimated_cost == expected


def test_simple_comprehension_over_an_attribute_map_is_cheap():
    assert compile_selector('device.attributes["d"].all(k, true)').estimated_cost < 1000


def test_triple_nested_comprehension_over_a_large_literal_is_too_complex():
    big = "[" + ",".join(str(i) for i in range(1000)) + "]"
    program = compile_selector(f"{big}.all(x, {big}.all(y, {big}.all(z, x + y + z >= 0)))")
    assert program.estimated_cost > 1_000_000


def test_runtime_cost_stays_within_the_estimate():
    dev = device({"name": ["a", "b"], "services": "some_example_value"})
    for expression, _ in UPSTREAM_COSTS:
        program = compile_selector(expression)
        try:
            _, cost = program.evaluate_with_cost(dev)
        except CelError:
            continue
        assert cost <= program.estimated_cost, expression


# -- caching ----------------------------------------------------------------------------------------------


def test_compilation_is_cached_per_expression_and_environment():
    first = compile_selector('device.driver == "x"')
    assert compile_selector('device.driver == "x"') is first
    # A stored expression sees every field and function whatever the gates say: validation of a stored
    # object and a scheduler with other gates share one compile.
    assert compile_selector('device.driver == "x"', Options(consumable_capacity=False)) is first
    assert compile_selector('device.driver == "x"', Options(list_type_attributes=True)) is first
    created = Options(consumable_capacity=False, stored=False)
    assert compile_selector('device.driver == "x"', created) is not first
    assert compile_selector('device.driver == "x"', created) is compile_selector('device.driver == "x"', created)


def test_one_compile_serves_selector_and_derived_attribute():
    """A derived attribute's expression compiled by validation (which checks its result type) and by the
    scheduler (which does not) is one program; a type the derived attribute may not have still fails."""
    assert compile_derived_attribute('device.driver') is compile_expression('device.driver')
    with pytest.raises(CelCompileError, match="must evaluate to a primitive scalar"):
        compile_derived_attribute('{"a": 1}')
    assert compile_expression('{"a": 1}').result_type == "map(string, int)"


def test_cached_compile_errors_are_raised_again():
    for _ in range(2):
        with pytest.raises(CelCompileError):
            compile_selector("noSuchVar")
