"""Which node came closest to fitting a pod that stays pending, or the pending claims of a scenario
without Pods: the node the page's node table and its Why lead with, instead of the first node by name.

"Closest" is worked out from what the run already knows about each node, in this order:

1. the fewest failing filter checks (each reason the scheduler gives for the node counts one:
   an untolerated taint, a node selector, each resource NodeResourcesFit finds short, DRA);
2. then the fewest devices short: the devices the pod's pending claims ask for, less the free
   devices in the node's own slices (slices with `nodeName`; free = not in any claim's
   allocation after the run). This is counted for every node, also for one the scheduler
   rejected before DRA looked at it, so a node with 4 free GPUs behind a taint counts as short
   of none;
3. then the fewest resources short (CPU, memory, pods, extended resources);
4. then the node's name.

For a scenario of claims (no Pods) every node that does not fit fails one check, DRA's, so the
devices short decide, then the name.

The counts are a guide to the reader, not the scheduler's rule: the scheduler stops at a node's
first failing plugin and never ranks nodes that do not fit.
"""
from __future__ import annotations

from dataclasses import dataclass

from allocator.engine.scenario import Scenario

PENDING = "pending"  # pods.PENDING (pods.py builds on the run; this module reads its results only)


@dataclass(frozen=True)
class Closeness:
    """How close one node came to fitting one pod."""

    node: str
    failing: int  # failing filter checks
    devices_short: int  # devices asked for, less the free devices in the node's own slices
    resources_short: int  # resources NodeResourcesFit finds short
    free_devices: int  # free devices in the node's own slices
    reasons: tuple  # the scheduler's reasons for the node

    @property
    def key(self) -> tuple:
        return (self.failing, self.devices_short, self.resources_short, self.node)

    def as_dict(self) -> dict:
        return {"node": self.node, "failingChecks": self.failing, "devicesShort": self.devices_short,
                "resourcesShort": self.resources_short, "freeDevices": self.free_devices}


def _is_resource_reason(reason: str) -> bool:
    from allocator.engine.noderesources import TOO_MANY_PODS  # a pod's reason: a run of claims need not import it

    return reason.startswith("Insufficient ") or reason == TOO_MANY_PODS


def devices_asked(pod, scenario: Scenario, claims: dict | None = None, templates: dict | None = None) -> int:
    """How many devices the pod's claims that are not allocated ask for (a request for all devices
    of a class counts one; a request with alternatives counts its first)."""
    claims = claims if claims is not None else {c.key: c for c in scenario.claims}
    templates = templates if templates is not None else {t.key: t for t in scenario.templates}
    total = 0
    for pod_claim in pod.claims:
        if pod_claim.allocation is not None:
            continue
        claim = claims.get(f"{pod_claim.namespace}/{pod_claim.name}") if pod_claim.name else None
        if claim is not None and not pod_claim.generated:
            total += _spec_count(claim.raw.get("spec") or {})
            continue
        template = templates.get(f"{pod_claim.namespace}/{pod_claim.template}") if pod_claim.template else None
        if template is not None:
            total += _spec_count(template.claim_spec)
    return total


def _spec_count(spec: dict) -> int:
    total = 0
    for request in ((spec.get("devices") or {}).get("requests") or ()):
        if not isinstance(request, dict):
            continue
        exactly = request.get("exactly")
        if not isinstance(exactly, dict):
            alternatives = request.get("firstAvailable") or ()
            exactly = alternatives[0] if alternatives and isinstance(alternatives[0], dict) else {}
        count = exactly.get("count")
        total += count if isinstance(count, int) and count > 0 and exactly.get("allocationMode") != "All" else 1
    return total


def free_devices(scenario: Scenario, pods: list) -> dict:
    """node -> free devices in its own slices, after the run: devices no claim of the scenario and
    no claim of a scheduled pod holds."""
    taken = set()
    for claim in scenario.claims:
        if claim.allocation is not None:
            taken.update((r.driver, r.pool, r.device) for r in claim.allocation.results)
    for pod in pods:
        for pod_claim in pod.claims:
            allocation = pod_claim.allocation or {}
            for result in ((allocation.get("devices") or {}).get("results") or ()):
                taken.add((result.get("driver"), result.get("pool"), result.get("device")))
    free: dict = {}
    for s in scenario.slices:
        if not s.node_name:
            continue
        free[s.node_name] = free.get(s.node_name, 0) + sum(
            1 for d in s.devices if (s.driver, s.pool, d.name) not in taken)
    return free


def claims_asked(scenario: Scenario) -> int:
    """How many devices the scenario's pending claims ask for (counted as `devices_asked` does)."""
    return sum(_spec_count(c.raw.get("spec") or {}) for c in scenario.claims if c.allocation is None)


def _reasons(verdict) -> tuple:
    """A pod's node verdict has the scheduler's reasons; a claim run's node verdict its message."""
    reasons = getattr(verdict, "reasons", None)
    if reasons:
        return tuple(reasons)
    reason = getattr(verdict, "reason", None) or getattr(verdict, "message", None)
    return (reason,) if reason else ()


def closest_first(nodes: list, *, asked: int, free: dict) -> list[Closeness]:
    """The nodes that do not fit, closest first (see the module's rule)."""
    out = []
    for verdict in nodes:
        if verdict.fits:
            continue
        reasons = _reasons(verdict)
        available = free.get(verdict.node, 0)
        out.append(Closeness(
            node=verdict.node,
            failing=max(1, len(reasons)),
            devices_short=max(0, asked - available),
            resources_short=sum(1 for r in reasons if _is_resource_reason(r)),
            free_devices=available,
            reasons=reasons,
        ))
    return sorted(out, key=lambda c: c.key)


def closest_nodes(scenario: Scenario, pods: list) -> dict:
    """pod key -> its nodes that do not fit, closest first, for every pending pod."""
    pending = [p for p in pods if p.outcome == PENDING and p.nodes]
    if not pending:
        return {}
    free = free_devices(scenario, pods)
    claims = {c.key: c for c in scenario.claims}
    templates = {t.key: t for t in scenario.templates}
    return {p.key: closest_first(p.nodes, asked=devices_asked(p, scenario, claims, templates), free=free)
            for p in pending}
