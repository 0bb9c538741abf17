"""CEL semantics found to differ from cel-go (as Kubernetes vendors it) by running the
cel-spec "simple" conformance suite; one small check per fixed behaviour."""
from __future__ import annotations

import math

import pytest

from allocator.engine.cel import CelRuntimeError, DeviceInput, compile_expression
from allocator.engine.cel.values import Uint

DEVICE = DeviceInput(
    driver="gpu.example.com",
    attributes={"gpu.example.com": {"big": 9223372036854775807, "count": 3}},
    capacity={},
)


def value_of(expression: str):
    return compile_expression(expression).evaluate_value(DEVICE)


def error_of(expression: str) -> str:
    with pytest.raises(CelRuntimeError) as caught:
        value_of(expression)
    return caught.value.message


# -- int/uint against double: cel-go converts the integer to double ------------------


@pytest.mark.parametrize(
    "expression, expected",
    [
        ("dyn(9223372036854775807) < 9223372036854775808.0", False),
        ("dyn(9223372036854775807) >= 9223372036854775808.0", True),
        ("dyn(9223372036854775808.0) <= 9223372036854775807", True),
        ("dyn(9223372036854775808.0) > 9223372036854775807", False),
        ("dyn(9223372036854775807) < 9223372036854777857.0", True),
        ("dyn(-9223372036854775809.0) <= -9223372036854775808", True),
        ("dyn(18446744073709551615u) < 18446744073709551616.0", False),
        ("dyn(18446744073709551615u) < 18446744073709555000.0", True),
        ("dyn(2u) > -1.5", True),
    ],
)
def test_int_double_ordering_rounds_the_integer_to_double(expression, expected):
    assert value_of(expression) is expected


def test_int_double_equality_rounds_the_integer_to_double():
    assert value_of("dyn(9007199254740993) == 9007199254740992.0") is True
    assert value_of("dyn(9223372036854775807) == 9223372036854775808.0") is True
    assert value_of("dyn(3) == 3.5") is False
    assert value_of("dyn(1) == double('NaN')") is False


def test_attribute_int_compares_with_double_literal():
    assert value_of("device.attributes['gpu.example.com'].big >= 9223372036854775808.0") is True
    assert value_of("device.attributes['gpu.example.com'].count > 2.5") is True


# -- string to number conversions follow Go's strconv --------------------------------


def test_uint_of_signed_text_is_an_error():
    assert error_of("uint('+1')") == "type conversion error from 'string' to 'uint'"
    assert value_of("uint('42')") == Uint(42)


def test_uint_of_negative_fraction_overflows():
    assert error_of("uint(-0.5)") == "unsigned integer overflow"
    assert value_of("uint(-0.0)") == Uint(0)
    assert value_of("uint(0.9)") == Uint(0)


def test_double_of_out_of_range_text_is_an_error():
    assert error_of("double('1e400')") == "type conversion error from 'string' to 'double'"
    assert error_of("double('-1e400')") == "type conversion error from 'string' to 'double'"
    assert value_of("double('1e-400')") == 0.0
    assert math.isinf(value_of("double('-Infinity')"))


def test_double_of_hex_float_text():
    assert value_of("double('0x1p-2')") == 0.25
    assert value_of("double('-0X1.8P1')") == -3.0
    assert error_of("double('0x10')") == "type conversion error from 'string' to 'double'"


def test_double_of_signed_nan_text_is_an_error():
    assert math.isnan(value_of("double('NaN')"))
    assert error_of("double('-nan')") == "type conversion error from 'string' to 'double'"


# -- maps ------------------------------------------------------------------------------


def test_unsupported_map_key_error_names_the_cel_type():
    assert error_of("{null: 1}") == "unsupported key type: null_type"
    assert error_of("dyn({1.5: 1})") == "unsupported key type: double"


# -- '%s' in string.format() (strings extension before version 4) --------------------


def test_format_s_prints_list_doubles_with_six_decimals():
    assert value_of("'%s'.format([dyn([6, 4.2, 'a string'])])") == '[6, 4.200000, "a string"]'
    assert value_of("'%s'.format([[[1, 2, [3.0, 4]]]])") == "[[1, 2, [3.000000, 4]]]"
    # A double on its own keeps its shortest form.
    assert value_of("'%s'.format([4.2])") == "4.2"


def test_format_s_quotes_non_finite_list_doubles():
    expression = "'%s'.format([[double('NaN'), double('Infinity'), double('-Infinity')]])"
    assert value_of(expression) == '["NaN", "+Inf", "-Inf"]'


def test_format_s_prints_map_entries_without_space_after_colon():
    assert value_of("'%s'.format([{'b': 1.5, 'a': [b'x', null, true]}])") == '{"a":[b"x", null, true], "b":1.500000}'
    assert value_of("'%s'.format([{1: 'one', uint(2): 'two'}])") == '{1:"one", 2:"two"}'


def test_format_s_quotes_nested_strings_like_go():
    assert value_of("'%s'.format([['a\\nb\\u0001\\\"é']])") == '["a\\nb\\x01\\"é"]'


def test_format_s_rejects_unformattable_values():
    assert error_of("'%s'.format([quantity('1Gi')])").startswith(
        "error during formatting: string clause can only be used on strings, bools, bytes"
    )
    assert error_of("'%s'.format([[quantity('1Gi')]])") == (
        "error during formatting: no formatting function for kubernetes.Quantity"
    )
    assert error_of("'%s'.format([b'\\xff'])").startswith("error during formatting: could not convert argument")


# -- strings extension -------------------------------------------------------------------


def test_index_of_empty_substring_returns_the_offset_unchecked():
    assert value_of("'abc'.indexOf('', 10)") == 10
    assert value_of("'abc'.indexOf('', -1)") == -1
    assert value_of("'abc'.lastIndexOf('', 10)") == 10
    assert value_of("'abc'.lastIndexOf('')") == 3
    assert error_of("'abc'.indexOf('c', -1)") == "index out of range: -1"


# -- regular expressions -----------------------------------------------------------------


@pytest.mark.parametrize(
    "pattern, message",
    [
        ("[", "missing closing ]: `[`"),
        ("(", "missing closing ): `(`"),
        ("a**", "invalid nested repetition operator: `**`"),
        ("*", "missing argument to repetition operator: `*`"),
        ("x{2,1}", "invalid repeat count: `{2,1}`"),
        ("(?i", "invalid or unsupported Perl syntax: `(?i`"),
    ],
)
def test_regex_errors_read_like_go(pattern, message):
    device_with_pattern = DeviceInput("d", {"d": {"p": pattern}}, {})
    program = compile_expression("'a'.matches(device.attributes['d'].p)")
    with pytest.raises(CelRuntimeError) as caught:
        program.evaluate_value(device_with_pattern)
    assert caught.value.message == f"error parsing regexp: {message}"


def test_literal_find_pattern_error_reads_like_go():
    from allocator.engine.cel import CelCompileError

    with pytest.raises(CelCompileError) as caught:
        compile_expression("'x'.find('(') == ''")
    assert caught.value.message == "program instantiation failed: error parsing regexp: missing closing ): `(`"
