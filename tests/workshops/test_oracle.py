"""The lessons about pods grade with the engine's pod answers (the `pod` check, and claims a pod gets).
Here those answers, for each such lesson's start and solution, are held against kube-scheduler
1.37.2's own framework (tests/kube/cmd/schedule), so a lesson cannot teach what the scheduler would not
do. The oracle's answers are stored in tests/workshops/files/oracle/ and compared without Go; with Go,
a second test asks the oracle again and checks that each stored answer is still its answer
(`DRA_RECORD_WORKSHOP_ORACLE=1` writes them anew)."""
import json
import os
from pathlib import Path

import pytest

from allocator.workshops.library import shipped
from tests.upstream.conftest import scheduler  # noqa: F401 - the oracle fixture, shared with tests/upstream
from tests.upstream.scheduler import compare, ours

STORED = Path(__file__).parent / "files" / "oracle"
PODS_LESSONS = [("dra-in-90-minutes", "pods")]
# The oracle runs the scheduler's cycle through PreBind, where a device with binding conditions makes it
# wait (up to bindingTimeout, 600 s) for the driver that this file has not got: that lesson has no answer
# to compare, and its checks read the allocation instead (tests/workshops/test_shipped.py).
NOT_COMPARED = {("dra-newer-features", "binding-conditions")}
CASES = [(workshop, slug, side) for workshop, slug in PODS_LESSONS for side in ("start", "solution")]


def scenario(workshop: str, slug: str, side: str) -> str:
    lesson = next(item for item in shipped()[workshop].lessons if item.id == slug)
    variant = getattr(lesson, side)
    # The oracle takes the file alone: these lessons run on every node with every gate at its default.
    assert variant.node == "" and variant.gates == {} and variant.versions == {}
    return variant.scenario


def stored_path(workshop: str, slug: str, side: str) -> Path:
    return STORED / f"{workshop}.{slug}.{side}.json"


def without_timestamps(answer: dict) -> dict:
    for pod in answer.get("pods") or []:
        for claim in pod.get("claims") or []:
            (claim.get("allocation") or {}).pop("allocationTimestamp", None)
    return answer


def test_every_lesson_with_pods_is_compared():
    with_pods = {(workshop, item.id) for workshop, w in shipped().items() for item in w.lessons
                 if "kind: Pod" in item.start.scenario}
    assert with_pods == set(PODS_LESSONS) | NOT_COMPARED


@pytest.mark.parametrize("workshop, slug, side", CASES)
def test_the_engine_agrees_with_the_schedulers_stored_answer(workshop, slug, side):
    upstream = json.loads(stored_path(workshop, slug, side).read_text())
    assert upstream.get("pods"), "the stored answer has no pods"
    assert compare(ours(scenario(workshop, slug, side)), upstream) == []


@pytest.mark.parametrize("workshop, slug, side", CASES)
def test_the_stored_answer_is_still_the_schedulers(scheduler, workshop, slug, side):  # noqa: F811
    fresh = without_timestamps(scheduler.ask(scenario(workshop, slug, side)))
    path = stored_path(workshop, slug, side)
    if os.environ.get("DRA_RECORD_WORKSHOP_ORACLE"):
        path.write_text(json.dumps(fresh, indent=1, sort_keys=True) + "\n")
    assert fresh == json.loads(path.read_text())
