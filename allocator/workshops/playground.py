"""The one place workshops meet the page's settings: a Variant becomes the page's RunRequest and a run.

Kept small on purpose: the page's form and its RunRequest type are shared with the rest of the
playground, so nothing else under allocator/workshops imports them.
"""
from __future__ import annotations

from allocator.forms import read_run_form
from allocator.runs import RunRequest, run_request
from allocator.workshops.model import Variant


def run_request_for(variant: Variant) -> RunRequest:
    return RunRequest(scenario=variant.scenario, node=variant.node,
                    gates={c: dict(v) for c, v in variant.gates.items()})


def variant_from_form(data, prefix: str = "") -> Variant:
    """The page's form fields (scenario, node, gate-<component>-<gate>), optionally prefixed as `a-`."""
    if prefix:
        data = _Unprefixed(data, prefix)
    settings = read_run_form(data)
    return Variant(scenario=settings.scenario.replace("\r\n", "\n"), node=settings.node, gates=settings.gates)


class _Unprefixed:
    def __init__(self, data, prefix):
        self.data, self.prefix = data, prefix

    def get(self, key, default=None):
        return self.data.get(self.prefix + key, default)

    def __contains__(self, key):
        return self.prefix + key in self.data


def run_inline(variant: Variant):
    """(scenario, outcome) in this process: for the CLI and the test suite."""
    return run_request(run_request_for(variant))


def run_in_worker(variant: Variant):
    """(scenario, outcome) bounded in a worker process and cached: for views."""
    from allocator.worker import run_bounded

    return run_bounded(run_request_for(variant))

