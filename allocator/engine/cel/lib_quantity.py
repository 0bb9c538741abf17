"""The Kubernetes quantity CEL library: `quantity()`, `isQuantity()` and the Quantity members."""
from __future__ import annotations

from ..quantity import DECIMAL_EXPONENT, Quantity, QuantityError
from .errors import EvalError
from .library import STRINGS, declare, no_overload, typed
from .values import INT64_MAX, INT64_MIN

# -- Kubernetes quantity --------------------------------------------------------------------


def _quantity(text):
    try:
        return Quantity.parse(text)
    except QuantityError as exc:
        raise EvalError(str(exc)) from None


def _is_quantity(text):
    try:
        Quantity.parse(text)
    except QuantityError:
        return False
    return True


def _need_quantity(function: str, *values):
    for value in values:
        if type(value) is not Quantity:
            raise no_overload(function, *values)


def _q_sign(q):
    _need_quantity("sign", q)
    return q.sign()


def _quantity_int64(q: Quantity):
    if not q.is_integer():
        return None
    number = int(q.value)
    if number < INT64_MIN or number > INT64_MAX:
        return None
    return number


def _q_is_integer(q):
    return _quantity_int64(q) is not None


def _q_as_integer(q):
    number = _quantity_int64(q)
    if number is None:
        raise EvalError("cannot convert value to integer")
    return number


def _q_as_float(q):
    return q.as_float()


def _q_add(q, other):
    if type(other) is int:
        other = Quantity.from_int(other, DECIMAL_EXPONENT)
    return q.add(other)


def _q_sub(q, other):
    if type(other) is int:
        other = Quantity.from_int(other, DECIMAL_EXPONENT)
    return q.sub(other)


def _arith_member(function: str):
    impl = _q_add if function == "add" else _q_sub

    def call(q, other):
        if type(q) is not Quantity or type(other) not in (Quantity, int):
            raise no_overload(function, q, other)
        return impl(q, other)
    return call


def _quantity_member(function: str, impl):
    def call(q):
        _need_quantity(function, q)
        return impl(q)
    return call



# Kubernetes quantity library (`sign` is declared as a global function upstream).
declare("quantity", ("string_to_quantity", "(string) -> Quantity"), impl=typed("quantity", _quantity, STRINGS))
declare("isQuantity", ("is_quantity_string", "(string) -> bool"), impl=typed("isQuantity", _is_quantity, STRINGS))
declare("sign", ("quantity_sign", "(Quantity) -> int"), impl=_q_sign)
declare(
    "asApproximateFloat",
    ("quantity_get_float", "Quantity.() -> double"),
    impl=_quantity_member("asApproximateFloat", _q_as_float),
)
declare(
    "asInteger",
    ("quantity_get_int", "Quantity.() -> int"),
    impl=_quantity_member("asInteger", _q_as_integer),
)
declare(
    "isInteger",
    ("quantity_is_integer", "Quantity.() -> bool"),
    impl=_quantity_member("isInteger", _q_is_integer),
)
declare(
    "add",
    ("quantity_add", "Quantity.(Quantity) -> Quantity"), ("quantity_add_int", "Quantity.(int) -> Quantity"),
    impl=_arith_member("add"),
)
declare(
    "sub",
    ("quantity_sub", "Quantity.(Quantity) -> Quantity"), ("quantity_sub_int", "Quantity.(int) -> Quantity"),
    impl=_arith_member("sub"),
)
