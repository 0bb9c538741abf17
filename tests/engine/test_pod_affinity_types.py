"""A Pod's `spec.affinity` of the wrong shape is refused where it is (the apiserver decodes it into
structs), never a traceback of the scheduling code that reads it."""
import pytest

from allocator.engine.run import allocate_text

POD = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  containers: [{name: c, image: busybox}]
  affinity: %s
"""

CASES = [
    ('"x"', "spec.affinity: Invalid value: \"x\": expected object"),
    ("{nodeAffinity: 3}", "spec.affinity.nodeAffinity: Invalid value: 3: expected object"),
    ('{nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "x"}}',
     "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution: Invalid value"),
    ('{nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: ["x"]}}}',
     "nodeSelectorTerms[0]: Invalid value: \"x\": expected object"),
    ("{nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
     "[{matchExpressions: [{key: a, operator: In, values: [{}]}]}]}}}", "matchExpressions[0].values[0]: Invalid value"),
    ("{nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, preference: 5}]}}",
     "preferredDuringSchedulingIgnoredDuringExecution[0].preference: Invalid value: 5: expected object"),
    ('{podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "x"}}',
     "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution: Invalid value"),
    ("{podAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [3]}}",
     "podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]: Invalid value: 3: expected object"),
]


@pytest.mark.parametrize("affinity, said", CASES)
def test_an_affinity_of_the_wrong_shape_is_a_located_refusal(affinity, said):
    _, outcome = allocate_text((POD % affinity).encode())
    assert outcome.outcome == "invalid"
    rendered = [p.render() for p in outcome.problems]
    assert any(said in r and "Pod default/p" in r for r in rendered), rendered
    assert all(p.line == 10 for p in outcome.problems if said in p.render())


def test_a_well_formed_affinity_still_schedules():
    affinity = ("{nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
                "[{matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [n1]}]}]}}}")
    _, outcome = allocate_text((POD % affinity).encode())
    assert outcome.outcome != "invalid", [p.message for p in outcome.problems]
