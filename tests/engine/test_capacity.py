"""Consumable capacity: the amount one share consumes and whether it fits."""
from decimal import Decimal

import pytest

from allocator.engine.capacity import CapacityError, consumed_amount, consumption, resolve_requests, shortfall
from allocator.engine.objects import Capacity, Device, RequestPolicy
from allocator.engine.quantity import Quantity

Q = Quantity.parse


def policy(default=None, values=None, low=None, high=None, step=None):
    valid_range = None if low is None else (Q(low), Q(high) if high else None, Q(step) if step else None)
    return RequestPolicy(Q(default) if default else None, tuple(Q(v) for v in values) if values else None, valid_range)


@pytest.mark.parametrize("request_,expected", [("1G", "1G"), ("500k", "1M"), ("1500M", "1500M"), (None, "1M")])
def test_valid_range_rounds_up_to_the_step_in_the_step_format(request_, expected):
    cap = Capacity(Q("10G"), policy(default="1M", low="1M", step="8"))
    amount = consumed_amount("bw", cap, Q(request_) if request_ else None, fractional=True)
    assert str(amount) == expected


def test_binary_step_rounding_prints_binary():
    cap = Capacity(Q("16Gi"), policy(default="1Gi", low="1Gi", step="1Gi"))
    assert str(consumed_amount("memory", cap, Q("1500Mi"), fractional=True)) == "2Gi"


def test_valid_values_take_the_next_value_up():
    cap = Capacity(Q("16"), policy(default="1", values=["1", "2", "4", "8"]))
    assert str(consumed_amount("queues", cap, Q("3"), fractional=True)) == "4"
    assert str(consumed_amount("queues", cap, Q("9"), fractional=True)) == "9"


def test_unrequested_capacity_without_default_consumes_everything():
    assert str(consumed_amount("queues", Capacity(Q("8")), None, fractional=True)) == "8"


def device(**capacity):
    return Device("eth1", "dra.example.com", "pool", "s", {}, capacity, allow_multiple=True)


def test_shortfall_reports_the_capacity_that_does_not_fit():
    dev = device(bandwidth=Capacity(Q("10G")))
    used = {"bandwidth": Decimal(7 * 10**9)}
    refusal = shortfall(dev, {"bandwidth": Q("4G")}, used, True)
    assert (refusal.code, refusal.capacity, refusal.need, refusal.free) == ("capacity", "bandwidth", "4G", "3G")
    assert shortfall(dev, {"bandwidth": Q("3G")}, used, True) is None


def test_capacity_names_match_only_as_written():
    # Kubernetes 1.37's allocator (v0.37.2) compares capacity names as plain strings.
    dev = device(bandwidth=Capacity(Q("10G")))
    assert resolve_requests({"bandwidth": Q("1G")}, dev) == {"bandwidth": Q("1G")}
    assert resolve_requests({"dra.example.com/bandwidth": Q("1G")}, dev) is None
    assert resolve_requests({"other.io/bandwidth": Q("1G")}, dev) is None


def test_a_device_publishing_both_spellings_has_two_capacities():
    dev = device(bw=Capacity(Q("10")), **{"dra.example.com/bw": Capacity(Q("20"))})
    assert {k: str(v) for k, v in consumption(dev, {"bw": Q("1")}, True).items()} == {
        "bw": "1", "dra.example.com/bw": "20"}


def test_a_request_that_is_not_a_whole_number_of_milli_units_is_an_error():
    cap = Capacity(Q("8"), policy(default="1", low="0.5", step="0.5"))
    with pytest.raises(CapacityError, match="request 1000100u is not a representable milli value"):
        consumed_amount("dra.example.com/cores", cap, Q("1.0001"), fractional=True)
    assert str(consumed_amount("dra.example.com/cores", cap, Q("1.2"), fractional=True)) == "1500m"
