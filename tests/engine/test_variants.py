"""The three allocator variants, chosen as structured.NewAllocator chooses them, and what stable does differently."""
from allocator.engine.gates import AllocatorFeatures, parse_gates
from tests.engine.helpers import claim, gpu_class, node, request, results_of, run, slice_

# Every feature beyond the stable allocator's off (DRADeviceBindingConditions, DRAConsumableCapacity and,
# by default, DRAFractionalCapacityRange and the alpha gates).
STABLE = {"DRADeviceBindingConditions": False, "DRAConsumableCapacity": False}


def features(text=""):
    return AllocatorFeatures.from_gates(parse_gates(text)[0])


def test_the_variant_is_the_first_that_supports_every_enabled_feature():
    assert features().variant == "incubating"
    assert features("DRAConsumableCapacity=false,DRADeviceBindingConditions=false").variant == "stable"
    assert features("DRAListTypeAttributes=true").variant == "experimental"
    assert features("DRAConsumableCapacity=false").variant_reason == (
        "DRADeviceBindingConditions is enabled, which the stable allocator does not support")


def test_distinct_attribute_under_stable_gates_is_upstreams_fatal_error():
    objects = [gpu_class(), node(), slice_("s", [{"name": "d0"}, {"name": "d1"}]),
               claim("c", [request(count=2)], constraints=[{"distinctAttribute": "gpu.example.com/numa"}])]
    outcome = run(objects, gates=STABLE)
    assert outcome.outcome == "invalid"
    assert outcome.message == "claim default/c, constraint #0: empty constraint (unsupported constraint type?)"
    assert run(objects).outcome == "unsatisfiable"  # incubating knows the constraint (no numa attribute)


def test_stable_ignores_capacity_requests_instead_of_refusing_them():
    device = {"name": "d0", "capacity": {"memory": {"value": "8Gi"}}}
    objects = [gpu_class(), node(), slice_("s", [device]),
               claim("c", [request(capacity={"requests": {"memory": "64Gi"}})])]
    outcome = run(objects, gates=STABLE)
    assert outcome.outcome == "allocated"
    assert "consumedCapacity" not in results_of(outcome, "c")[0]
    refused = run(objects, gates={"DRAConsumableCapacity": False})  # incubating: refused
    assert refused.outcome == "invalid" and "has capacity requests" in refused.message


def test_under_stable_a_binds_to_node_device_does_not_pin_the_node():
    device = {"name": "d0", "bindsToNode": True}  # Kubernetes accepts bindsToNode without binding conditions
    objects = [gpu_class(), node(), slice_("s", [device], node_name=None, allNodes=True),
               claim("c", [request()])]
    stable = run(objects, gates=STABLE)
    assert stable.outcome == "allocated"
    assert "nodeSelector" not in stable.claims[0]["status"]["allocation"]
    incubating = run(objects)
    assert incubating.claims[0]["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0][
        "values"] == ["worker-1"]


def test_the_explanation_names_the_variant_that_ran_and_why():
    objects = [gpu_class(), node(), slice_("s", [{"name": "d0"}]), claim("c", [request()])]
    assert run(objects, gates=STABLE).explanation.allocator.as_dict() == {
        "variant": "stable", "why": "no enabled feature needs more than the stable allocator"}
    assert run(objects).explanation.allocator.as_dict() == {
        "variant": "incubating",
        "why": "DRADeviceBindingConditions, DRAConsumableCapacity are enabled, which the stable allocator does not support"}


def test_under_stable_an_answer_that_depends_on_pool_order_says_so():
    objects = [gpu_class(), node(), slice_("a", [{"name": "d0"}], pool="pool-a"),
               slice_("b", [{"name": "d0"}], pool="pool-b"), claim("c", [request()])]
    stable = run(objects, gates=STABLE)
    assert stable.outcome == "allocated"
    [warning] = [w for w in stable.warnings if w.code == "pool-order"]
    assert "pools gpu.example.com/pool-a, gpu.example.com/pool-b" in warning.message
    assert "another run of the real kube-scheduler may try them in another order" in warning.message
    assert not [w for w in run(objects).warnings if w.code == "pool-order"]  # incubating sorts its pools


def test_under_stable_one_pool_is_no_lottery():
    objects = [gpu_class(), node(), slice_("a", [{"name": "d0"}, {"name": "d1"}]), claim("c", [request()])]
    assert not [w for w in run(objects, gates=STABLE).warnings if w.code == "pool-order"]
