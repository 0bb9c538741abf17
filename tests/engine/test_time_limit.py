"""The engine's wall-clock limit holds inside CEL evaluation too: a scenario whose selectors are
slow ends with "search gave up … time limit reached" near its time limit, explanation included,
never at the server's process kill and never as an answer reached by running past the limit."""
import time

import pytest

from allocator.engine.cycle import EXPLAIN_SECONDS as EXPLAIN_TIME_LIMIT
from allocator.engine.run import allocate_text

LIST = "[1,2,3,4,5,6,7,8,9,10]"
# Five nested .all() over ten elements: 100,000 innermost steps per device, under the
# per-expression cost limit, about a tenth of a second per device in Python.
SLOW = (f"{LIST}.all(a, {LIST}.all(b, {LIST}.all(c, {LIST}.all(d, {LIST}.all(e, e > 0)))))")


def slow_selector_scenario(devices: int, *, where="class") -> str:
    """Only the last device fits, so every device's slow selector is evaluated before the answer."""
    last = f'device.attributes["gpu.example.com"].index == {devices - 1}'
    class_cel, request_cel = (SLOW, last) if where == "class" else ("true", f"{SLOW} && {last}")
    items = "".join(f"  - name: d{i}\n    attributes: {{index: {{int: {i}}}}}\n" for i in range(devices))
    return (
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\nspec:\n"
        f"  selectors:\n  - cel: {{expression: '{class_cel}'}}\n"
        "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
        "  driver: gpu.example.com\n  nodeName: n1\n  pool: {name: p, generation: 1, resourceSliceCount: 1}\n"
        "  devices:\n" + items
        + "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: default}\n"
        "spec:\n  devices:\n    requests:\n    - name: r\n      exactly:\n        deviceClassName: gpu\n"
        f"        selectors:\n        - cel: {{expression: '{request_cel}'}}\n"
    )


@pytest.mark.parametrize("where", ["class", "request"])
def test_slow_selectors_stop_at_the_time_limit_with_search_gave_up(where):
    started = time.monotonic()
    _, outcome = allocate_text(slow_selector_scenario(64, where=where), node_name="n1", time_limit=0.5)
    elapsed = time.monotonic() - started
    assert outcome.outcome == "unsatisfiable"
    assert "time limit reached" in outcome.message
    assert elapsed < 0.5 + EXPLAIN_TIME_LIMIT + 1, f"took {elapsed:.1f} s for a 0.5 s limit"


def test_the_explanation_of_a_run_stopped_by_slow_selectors_is_bounded_too():
    started = time.monotonic()  # about 9 s to probe 128 devices without a bound
    _, outcome = allocate_text(slow_selector_scenario(128), node_name="n1", time_limit=0.5, explain_result=True)
    assert "time limit reached" in outcome.message
    assert time.monotonic() - started < 0.5 + EXPLAIN_TIME_LIMIT + 1


def test_a_scenario_that_fits_in_its_time_is_unchanged():
    _, outcome = allocate_text(slow_selector_scenario(2), node_name="n1", time_limit=30)
    assert outcome.outcome == "allocated"
