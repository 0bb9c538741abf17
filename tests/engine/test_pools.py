"""Gathering a node's pools: relevance, generations, completeness, validity and order."""
from allocator.engine.gates import AllocatorFeatures
from allocator.engine.objects import Node, build_slice
from allocator.engine.pools import SliceIndex, gather_pools
from tests.engine.helpers import slice_

NODE = Node("worker-1", labels={"zone": "a"})
FEATURES = AllocatorFeatures(compatibility_groups=True)


def pools_for(*raw, features=FEATURES, node=NODE):
    slices = [build_slice(s, order=i) for i, s in enumerate(raw)]
    return gather_pools(node, SliceIndex(slices), features)


def test_pools_sort_by_driver_then_pool_and_slices_by_name():
    pools = pools_for(
        slice_("z", [{"name": "b0"}], driver="b.example.com", pool="p"),
        slice_("s2", [{"name": "a2"}], driver="a.example.com", pool="q", count=2),
        slice_("s1", [{"name": "a1"}], driver="a.example.com", pool="q", count=2),
    )
    assert [p.id_str for p in pools] == ["a.example.com/q", "b.example.com/p"]
    assert [s.name for s in pools[0].device_slices] == ["s1", "s2"]


def test_slices_of_other_nodes_and_unmatched_selectors_are_not_seen():
    selector = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}]}
    pools = pools_for(
        slice_("other", [{"name": "x"}], node_name="worker-2", pool="other"),
        slice_("zone-b", [{"name": "y"}], node_name=None, pool="zb", nodeSelector=selector),
    )
    assert pools == []


def test_a_pool_missing_a_slice_is_incomplete():
    pools = pools_for(slice_("s1", [{"name": "a"}], count=2))
    assert pools[0].incomplete and not pools[0].usable


def test_only_the_newest_generation_counts():
    pools = pools_for(slice_("old", [{"name": "a"}], generation=1), slice_("new", [{"name": "b"}], generation=2))
    assert [d.name for d in pools[0].devices()] == ["b"]


def test_a_newer_generation_on_another_node_drops_an_incomplete_pool():
    pools = pools_for(slice_("here", [{"name": "a"}], count=2, generation=1),
                      slice_("there", [{"name": "b"}], count=2, generation=2, node_name="worker-2"))
    assert pools == []


def test_counter_slice_on_another_node_still_completes_the_pool():
    counters = [{"name": "set", "counters": {"mem": {"value": "1"}}}]
    pools = pools_for(slice_("devices", [{"name": "a"}], count=2),
                      slice_("counters", counters=counters, count=2, node_name="worker-2"))
    assert pools[0].usable and "set" in pools[0].counter_sets


def test_duplicate_device_names_make_the_pool_invalid():
    pools = pools_for(slice_("s1", [{"name": "a"}], count=2), slice_("s2", [{"name": "a"}], count=2))
    assert pools[0].invalid == "duplicate device name a"


def test_unknown_counter_set_makes_the_pool_invalid():
    device = {"name": "a", "consumesCounters": [{"counterSet": "nope", "counters": {"m": {"value": "1"}}}]}
    pools = pools_for(slice_("s", [device]))
    assert pools[0].invalid == "counter set nope not found"


def test_pools_with_binding_conditions_come_last():
    bound = {"name": "b", "bindingConditions": ["ready"], "bindingFailureConditions": ["failed"]}
    pools = pools_for(slice_("s1", [bound], pool="a"), slice_("s2", [{"name": "c"}], pool="b"))
    assert [p.name for p in pools] == ["b", "a"]


def test_gate_off_hides_slices_with_compatibility_groups():
    device = {"name": "a", "consumesCounters": [
        {"counterSet": "set", "counters": {"m": {"value": "1"}}, "compatibilityGroups": ["mig"]}]}
    counters = [{"name": "set", "counters": {"m": {"value": "1"}}}]
    raw = [slice_("c", counters=counters, count=2), slice_("d", [device], count=2)]
    assert pools_for(*raw)[0].usable
    assert pools_for(*raw, features=AllocatorFeatures())[0].incomplete
