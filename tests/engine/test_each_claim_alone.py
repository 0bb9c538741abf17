"""Claims allocated together (one pod's claims, the scheduler's rule) and each claim alone."""
from allocator.engine.run import ALLOCATED, INVALID, allocate_text, together_failure

SLICE_AND_CLASS = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: cpu.example.com}
spec:
  selectors:
  - cel: {expression: device.driver == "cpu.example.com"}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-cpus}
spec:
  driver: cpu.example.com
  nodeName: node-1
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: cpu-0
    attributes:
      numaNode: {int: 0}
  - name: cpu-1
    attributes:
      numaNode: {int: 1}
"""


def claim(name: str, expression: str) -> str:
    return f"""---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: {name}, namespace: default}}
spec:
  devices:
    requests:
    - name: cpu
      exactly:
        deviceClassName: cpu.example.com
        selectors:
        - cel: {{expression: '{expression}'}}
"""


# One claim's selector fails at run time (no attribute coreType): together, every claim is refused.
TEXT = (SLICE_AND_CLASS + claim("numa0", 'device.attributes["cpu.example.com"].numaNode == 0')
        + claim("performance", 'device.attributes["cpu.example.com"].coreType == "P"')
        + claim("numa1", 'device.attributes["cpu.example.com"].numaNode == 1'))


def test_one_claims_cel_runtime_error_fails_every_claim_together():
    scenario, outcome = allocate_text(TEXT)
    assert outcome.outcome == INVALID
    assert all("status" not in c for c in outcome.claims)
    assert together_failure(scenario, outcome)


def test_each_claim_alone_gives_each_claim_its_own_answer_against_the_same_slices():
    scenario, outcome = allocate_text(TEXT, each_claim_alone=True)
    answers = {a.claim: (a.outcome, a.node) for a in outcome.alone}
    assert answers == {"default/numa0": (ALLOCATED, "node-1"), "default/performance": (INVALID, "node-1"),
                       "default/numa1": (ALLOCATED, "node-1")}
    devices = {c["metadata"]["name"]: [r["device"] for r in c["status"]["allocation"]["devices"]["results"]]
               for c in outcome.claims if "status" in c}
    assert devices == {"numa0": ["cpu-0"], "numa1": ["cpu-1"]}
    assert outcome.outcome == INVALID and "coreType" in outcome.problems[0].message
    assert not together_failure(scenario, outcome)


def test_claims_alone_do_not_see_each_others_devices():
    # Alone, both claims may take cpu-0: each is judged against the same slices, not one after another.
    text = SLICE_AND_CLASS + claim("a", 'device.attributes["cpu.example.com"].numaNode == 0') + claim(
        "b", 'device.attributes["cpu.example.com"].numaNode == 0')
    _, together = allocate_text(text)
    assert together.outcome != ALLOCATED
    _, alone = allocate_text(text, each_claim_alone=True)
    assert [(a.outcome, a.node) for a in alone.alone] == [(ALLOCATED, "node-1"), (ALLOCATED, "node-1")]
