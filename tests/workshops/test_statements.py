"""Issue 22's statements that were false for Kubernetes 1.37, one test each over the lesson text (English and
Korean) and, where the playground can show it, over what the engine answers. A lesson rewritten back into
a false statement, or a scenario that stops backing its text, fails here."""
import re
from dataclasses import replace
from pathlib import Path

import pytest

from allocator.workshops.checks import object_index
from allocator.workshops.library import get
from allocator.workshops.lint import check_lesson, run_inline

FILES = Path(__file__).parent / "files"


def lesson(workshop: str, slug: str, language: str = ""):
    return next(item for item in get(workshop, language).lessons if item.id == slug)


def words(item) -> str:
    """Everything the attendee reads of a lesson, on one line."""
    parts = [item.title, item.text, item.task, *item.hints, *(c.message for c in item.checks)]
    return re.sub(r"\s+", " ", " ".join(parts))


def both(workshop: str, slug: str) -> tuple[str, str]:
    return words(lesson(workshop, slug)), words(lesson(workshop, slug, "ko"))


# ---- the scheduler: filter, score, pick at random; a reason counts nodes ------------------------------


def test_the_scheduler_is_not_said_to_try_nodes_in_name_order():
    english, korean = both("dra-in-90-minutes", "pods")
    for text in (words(item) for item in get("dra-in-90-minutes").lessons):
        assert not re.search(r"name order|first (node )?that fits wins|one reason per node", text, re.I)
    assert "filters" in english and "scores" in english and "at random among equals" in english
    assert "each reason counts the nodes that gave it" in english
    assert "무작위" in korean


# ---- a claim is allocated when a pod that uses it is scheduled ----------------------------------------


def test_the_first_lesson_says_claims_are_allocated_for_pods_and_pod_less_claims_are_the_shortcut():
    english, korean = both("dra-in-90-minutes", "first-claim")
    assert "the allocator picks devices for every pending claim" not in english
    assert "a claim is allocated when the scheduler schedules a **pod that uses it**" in english
    assert "the playground also allocates claims that no pod uses" in english
    assert "파드가 쓰지 않는 클레임도 할당해요" in korean


# ---- compatibility groups: one group common to all, and the counters alone allow both ----------------


def test_compatibility_groups_are_an_intersection_over_all_devices():
    for workshop, slug in (("dra-newer-features", "compatibility-groups"), ("dra-in-90-minutes", "version-skew")):
        english = words(lesson(workshop, slug))
        assert "at least one group in common" in english
        assert "a device without groups goes only with devices without groups" in english
        assert "the counters would allow both" not in english
    assert "not just pairwise" in words(lesson("dra-newer-features", "compatibility-groups"))


def test_in_the_compatibility_groups_lesson_the_groups_not_the_counters_keep_desktop_off_vgpu_0():
    """The lesson says a counter set alone cannot forbid the vGPU next to the MIG slice: with every
    `compatibilityGroups` line removed, the counters let desktop have a device; with them it is refused
    for its groups."""
    item = lesson("dra-newer-features", "compatibility-groups")
    stripped = re.sub(r"\n *compatibilityGroups:.*", "", item.start.scenario)
    assert stripped != item.start.scenario
    results, (_, outcome) = check_lesson(replace(item, editable=("ResourceSlice",)), replace(item.start, scenario=stripped))
    assert {r.id: r.ok for r in results}["allocated"]  # the counters alone allow it
    rows = [c for claim in run_inline(item.start)[1].explanation.claims if claim.claim == "default/desktop"
            for r in claim.requests for c in r.candidates if c.device == "vgpu-0"]
    assert rows and all(row.code == "groups" for row in rows)


# ---- optional node operations ---------------------------------------------------------------------


def test_skip_node_operations_star_skips_both_calls_and_the_declared_features_rule_needs_the_schedulers_gate():
    english, korean = both("dra-in-90-minutes", "optional-node-operations")
    assert "`[\"*\"]` tells the kubelet to skip both `NodePrepareResources` and `NodeUnprepareResources`" in english
    assert "when every device of that driver in the claim skips it" in english
    assert "With the gate on in the kube-scheduler, such devices are used only on nodes that list" in english
    assert "`NodePrepareResources`와 `NodeUnprepareResources`를 모두 건너뛰라고" in korean


def test_turning_optional_node_operations_off_in_any_component_fails_the_lesson():
    item = lesson("dra-in-90-minutes", "optional-node-operations")
    for component in ("apiserver", "scheduler", "kubelet"):
        results, _ = check_lesson(item, item.solution.with_gate(component, "DRAOptionalNodeOperations", False))
        assert not all(r.ok for r in results), component


# ---- taints: only NoSchedule and NoExecute keep a device off --------------------------------------


def test_the_taints_lesson_says_a_none_taint_does_not_need_a_toleration():
    english, korean = both("dra-in-90-minutes", "taints")
    assert "tolerates all of its taints" not in english
    assert "each of its `NoSchedule` and `NoExecute` taints (a taint with the effect `None` only informs)" in english
    assert "`None`인 테인트는 알리기만 해요" in korean


def test_a_device_whose_only_taint_has_the_effect_none_is_a_candidate_without_a_toleration():
    item = lesson("dra-in-90-minutes", "taints")
    start = item.start.scenario
    effects = re.findall(r"effect: (NoSchedule|NoExecute)", start)
    assert effects
    informing = re.sub(r"effect: (NoSchedule|NoExecute)", "effect: None", start)
    _, (_, outcome) = check_lesson(replace(item, editable=("ResourceSlice",)), replace(item.start, scenario=informing))
    claim = next(c for c in outcome.claims if c["metadata"]["name"] == "firmware-test")
    assert (claim.get("status") or {}).get("allocation")  # no toleration needed


# ---- RBAC: the status lesson's fix is the driver's RBAC, not its slice ----------------------------


def test_the_status_lesson_is_fixed_with_rbac_and_its_hints_are_true():
    item = lesson("dra-in-90-minutes", "status-rbac")
    start, solution = object_index(item.start.scenario), object_index(item.solution.scenario)
    changed = {key[0] for key in start.keys() | solution.keys() if start.get(key) != solution.get(key)}
    assert changed == {"ClusterRole"}
    english = words(item)
    assert "one node-local device pins" not in english
    assert "Is fabric-gpu's allocation pinned to one node?" in english
    fabric = next(c for c in run_inline(item.start)[1].claims if c["metadata"]["name"] == "fabric-gpu")
    assert not fabric["status"]["allocation"].get("nodeSelector", {}).get("nodeSelectorTerms", [{}])[0].get(
        "matchFields")  # not pinned: only arbitrary-node can allow the write, as the hint leads to


# ---- binding conditions ---------------------------------------------------------------------------


def test_the_allocator_tries_pools_without_binding_conditions_first():
    """The binding-conditions lesson says so; a node-local GPU is taken before a fabric GPU that would
    need attaching, whatever the names."""
    text = (FILES / "binding-conditions.yaml").read_text()
    local = """---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: zz-local
spec:
  driver: fabric.example.com
  nodeName: worker-1
  pool:
    name: zz-local
    generation: 1
    resourceSliceCount: 1
  devices:
  - name: zz-gpu
"""
    item = lesson("dra-newer-features", "binding-conditions")
    _, (_, outcome) = check_lesson(item, replace(item.start, scenario=text + local, gates={}))
    pod = next(p for p in outcome.pods if p.name == "trainer")
    [result] = pod.claims[0].allocation["devices"]["results"]
    assert result["device"] == "zz-gpu" and "bindingConditions" not in result
    assert "the allocator tries the pools without them first" in words(item)


def test_the_binding_conditions_lesson_says_what_the_scheduler_waits_for():
    english, korean = both("dra-newer-features", "binding-conditions")
    for said in ("waits in **PreBind**, polling every 5 seconds", "`bindingTimeout` (600 seconds by default)",
                 "A device lists both or neither", "the Why rows say `binding-gate`",
                 "the pod stays unbound until PreBind's wait is over"):
        assert said in english
    assert "PreBind" in korean and "600초" in korean and "`binding-gate`" in korean


# ---- every message about a pending claim quotes the engine's headline -------------------------------


@pytest.mark.parametrize("workshop", ["dra-in-90-minutes", "dra-newer-features"])
def test_a_check_that_a_claim_is_allocated_quotes_the_why_headline(workshop):
    for item in get(workshop).lessons:
        for check in item.checks:
            if check.kind == "claim" and check.spec.get("allocated") is True:
                assert "{why}" in check.message, (item.id, check.id)


# ---- the wrong answers issue 22 found passing, tried on the shipped lessons as they are now ---------------

OWN_CLASS = """---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: anything
spec:
  selectors:
  - cel:
      expression: 'true'
"""
L4 = 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA L4"'
BIG = 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("80Gi")) >= 0'
EXACTLY_TWO_L4 = f"""    - name: gpu
      exactly:
        deviceClassName: gpu.nvidia.com
        count: 2
        selectors:
        - cel:
            expression: '{L4}'
"""

REVERSED = f"""    - name: gpu
      firstAvailable:
      - name: two-small
        deviceClassName: gpu.nvidia.com
        count: 2
        selectors:
        - cel:
            expression: '{L4}'
      - name: one-big
        deviceClassName: gpu.nvidia.com
        selectors:
        - cel:
            expression: '{BIG}'
"""


def _first_available(text: str) -> str:
    return text[text.index("    - name: gpu\n      firstAvailable:"):]


WRONG_ANSWERS = [
    ("first-claim", "any request name", lambda s: s.replace("    - name: gpu\n", "    - name: accelerator\n")),
    ("first-claim", "a class of one's own whose selector is 'true'",
     lambda s: s.replace("deviceClassName: gpu.nvidia.com", "deviceClassName: anything") + OWN_CLASS),
    ("first-claim", "the admin's class rewritten to select everything",
     lambda s: s.replace('expression: device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type '
                         '== "gpu"', "expression: 'true'", 1)),
    ("selectors", "a selector that names productName but is always true",
     lambda s: s.replace('== "NVIDIA A100 80GB PCIe"', '!= "" || "productName" != ""')),
    ("first-available", "no firstAvailable: exactly two L4", lambda s: s.replace(_first_available(s), EXACTLY_TWO_L4)),
    ("first-available", "the first subrequest's selector turned round (< 0)",
     lambda s: s.replace(BIG, BIG.replace(">= 0", "< 0"))),
    ("first-available", "the subrequests in the wrong order", lambda s: s.replace(_first_available(s), REVERSED)),
    ("distinct-attribute", "no constraint", lambda s: s.replace(
        "    constraints:\n    - requests:\n      - gpus\n      distinctAttribute: resource.kubernetes.io/numaNode\n", "")),
]


@pytest.mark.parametrize("slug, what, wrong", WRONG_ANSWERS, ids=[f"{w[0]}: {w[1]}" for w in WRONG_ANSWERS])
def test_a_wrong_answer_the_issue_found_passing_fails_now(slug, what, wrong):
    item = lesson("dra-in-90-minutes", slug)
    text = wrong(item.solution.scenario)
    assert text != item.solution.scenario, "the wrong answer no longer applies to the solution"
    results, (_, outcome) = check_lesson(item, replace(item.solution, scenario=text))
    assert outcome.outcome != "invalid", outcome.problems  # a wrong answer, not a broken file
    assert not all(r.ok for r in results), what
    assert all(r.ok for r in check_lesson(item, item.solution)[0])


def test_moving_documents_does_not_fail_a_right_answer():
    """Issue 22: lesson 6 pinned one placement, so a reordered file failed a right answer."""
    for workshop in ("dra-in-90-minutes", "dra-newer-features"):
        for item in get(workshop).lessons:
            documents = item.solution.scenario.split("\n---\n")
            reordered = "\n---\n".join(reversed(documents))
            results, _ = check_lesson(item, replace(item.solution, scenario=reordered))
            assert all(r.ok for r in results), (workshop, item.id, [r.label for r in results if not r.ok])


# ---- authoring: patches, not copies; hints that lead; labels in words ----------------------------------


@pytest.mark.parametrize("workshop", ["dra-in-90-minutes", "dra-newer-features"])
def test_shipped_solutions_and_wrong_answers_are_patches_over_the_start(workshop):
    import yaml

    from allocator.workshops.library import SHIPPED_DIR

    data = yaml.safe_load((SHIPPED_DIR / f"{workshop}.yaml").read_text(encoding="utf-8"))
    for raw in data["lessons"]:
        assert "scenario" not in (raw.get("solution") or {}), raw["slug"]
        assert all("scenario" not in wrong for wrong in raw.get("wrong") or []), raw["slug"]


def _added_lines(item) -> set[str]:
    import difflib

    diff = difflib.unified_diff(item.start.scenario.splitlines(), item.solution.scenario.splitlines(), lineterm="")
    return {line[1:].strip().lstrip("- ") for line in diff if line.startswith("+") and not line.startswith("+++")}


@pytest.mark.parametrize("workshop", ["dra-in-90-minutes", "dra-newer-features"])
def test_no_hint_gives_a_line_of_the_answer(workshop):
    """Issue 22: "every hint 2 is the answer". A hint may name a field, never write the solution's line."""
    for item in get(workshop).lessons:
        # the file's boilerplate (`apiVersion:`, `kind:`) is structure the first lesson teaches, not the answer
        answer = {line for line in _added_lines(item) if len(line) > 12 and ":" in line
                  and not line.startswith(("apiVersion:", "kind:"))}
        for hint in item.hints:
            spans = set(re.findall(r"`([^`]+)`", hint))
            assert not {s.strip() for s in spans} & answer, (item.id, hint)
            assert not any(line in hint for line in answer), (item.id, hint)


def test_the_solution_is_behind_its_own_button(client):
    body = client.get("/workshops/dra-in-90-minutes/6").content.decode()
    details = body[body.index('<details class="lesson-solution">'):]
    assert "<summary>Show solution</summary>" in details.split("</summary>")[0] + "</summary>"
    before, after = body.split('<details class="lesson-solution">', 1)
    lesson_part = before.split('<aside id="lesson"', 1)[1]
    assert "one-big" not in lesson_part and "one-big" in after.split("</details>", 1)[0]  # the answer's subrequest


def test_a_row_checks_label_says_what_it_checks_in_words():
    from allocator.workshops.checks import describe

    assert describe("row", {"row": "gpu-0", "claim": "big-model", "code": "selector"}) \
        == "the Why row of gpu-0 for claim big-model says code selector"
