"""resource.Quantity: parsing, rounding and canonical printing as Kubernetes does them."""
import pytest

from allocator.engine.quantity import Quantity, QuantityError

CANONICAL = [
    ("1024Mi", "1Gi"), ("1000M", "1G"), (".001Ki", "1024m"), (".000000000001Ki", "2n"),
    ("1.5Gi", "1536Mi"), ("0.5Gi", "512Mi"), ("1.08", "1080m"), ("0.5", "500m"), ("5000m", "5"),
    ("1e3", "1e3"), ("1000E", "1e21"), ("0.001e0", "1e-3"), ("2048Ki", "2Mi"), ("1500", "1500"),
    ("100m", "100m"), ("1.1Gi", "1181116006400m"), ("1025", "1025"), ("0.001T", "1G"),
    ("1000u", "1m"), ("300e6", "300e6"), ("0Gi", "0"), ("-1024Mi", "-1Gi"), ("1G", "1G"),
    ("10e9", "10e9"), ("80e9", "80e9"), ("512", "512"), ("1Ki", "1Ki"), ("1023Ki", "1023Ki"),
]


@pytest.mark.parametrize("text,canonical", CANONICAL)
def test_canonical_form_matches_kubernetes(text, canonical):
    assert str(Quantity.parse(text)) == canonical


# apimachinery's ParseQuantity keeps the text it was given when its fast path takes it as canonical
# (digits and scale only): String() then prints it as written. Pairs from k8s.io/apimachinery v0.37.2.
AS_WRITTEN = [
    ("+1", "+1"), ("01", "01"), ("-01", "-01"), ("1.", "1."), ("1.500k", "1.500k"), ("12.345k", "12.345k"),
    ("1.234M", "1.234M"), ("+1Ki", "+1Ki"), ("+8Ki", "8Ki"), ("+1Ei", "1Ei"), ("1E3", "1E3"), ("+1e-3", "+1e-3"),
    ("012e3", "012e3"), ("+100n", "+100n"), ("+1000n", "1u"), ("+0.5", "500m"), ("+000", "0"), ("00", "0"),
    ("1234567890123456789", "1234567890123456789"), ("1.5Ki", "1536"),
]


@pytest.mark.parametrize("text,printed", AS_WRITTEN)
def test_a_text_kubernetes_keeps_prints_as_written(text, printed):
    assert str(Quantity.parse(text)) == printed


def test_arithmetic_prints_the_canonical_form():
    assert str(Quantity.parse("+1").add(Quantity.parse("+1"))) == "2"


@pytest.mark.parametrize("text,rounded", [
    ("3.001n", "4n"), ("1.1E-9", "2e-9"), ("0.0000000001", "1n"), ("0.00000012345", "124n"),
    ("9Ei", "9223372036854775807"), ("-0.0000000001", "-1n"),
])
def test_values_round_up_to_nano_and_binary_si_saturates(text, rounded):
    assert str(Quantity.parse(text)) == rounded


@pytest.mark.parametrize("text", [
    "1.1.M", "1+1.0M", "0.1mi", "0.1am", "aoeu", ".5i", "1i", "-3.01i", "-3.01e-", " 1", "1 ", "",
    "1K", "1_000", "Infinity", "NaN", "1Zi", "1Y", "1e", "1.5e1.5", "1 Gi", "1GB", "1gi", ".", "+",
])
def test_invalid_quantities_are_rejected(text):
    with pytest.raises(QuantityError):
        Quantity.parse(text)


def test_yaml_integers_mean_the_same_as_strings():
    assert Quantity.parse(8) == Quantity.parse("8")
    with pytest.raises(QuantityError):
        Quantity.parse(True)


def test_comparison_is_by_value_whatever_the_format():
    assert Quantity.parse("1Gi") == Quantity.parse("1073741824")
    assert Quantity.parse("1G") < Quantity.parse("1Gi")
    assert Quantity.parse("1500m").cmp(Quantity.parse("1.5")) == 0


def test_value_and_milli_value_round_up():
    assert Quantity.parse("1.2").int_value() == 2
    assert Quantity.parse("-1.2").int_value() == -2
    assert Quantity.parse("1.0001m").milli_value() == 2
    assert Quantity.parse("5").int_value() == 5


def test_addition_keeps_the_receiver_format_unless_it_is_zero():
    assert str(Quantity.parse("1Gi").add(Quantity.parse("512Mi"))) == "1536Mi"
    assert str(Quantity.parse("0").add(Quantity.parse("2Gi"))) == "2Gi"
    assert str(Quantity.parse("3Gi").sub(Quantity.parse("1Gi"))) == "2Gi"
