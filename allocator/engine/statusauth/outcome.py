"""The what-if for one run: the claims the run allocated (or found allocated) and the gates of
the kube-apiserver; what the CLI's `-o json` and the API carry under `statusWriters`."""
from __future__ import annotations

from allocator.engine.statusauth.whatif import (
    DEVICE_STATUS_GATE,
    GRANULAR_GATE,
    ClaimState,
    StatusWriters,
    status_writers,
)


def allocated_claims(scenario, outcome) -> list[ClaimState]:
    """Every claim with an allocation after the run, in input order, each once."""
    found: dict = {}
    for claim in outcome.claims or []:
        meta = claim.get("metadata") or {}
        allocation = (claim.get("status") or {}).get("allocation")
        if isinstance(allocation, dict):
            found[(meta.get("namespace") or "default", meta.get("name") or "")] = allocation
    for pod in outcome.pods or []:
        for pc in pod.claims:
            if pc.name and isinstance(pc.allocation, dict):
                found.setdefault((pc.namespace, pc.name), pc.allocation)
    for claim in scenario.claims:
        allocation = (claim.raw.get("status") or {}).get("allocation")
        if isinstance(allocation, dict):
            found.setdefault((claim.namespace, claim.name), allocation)
    return [ClaimState(ns, name, allocation) for (ns, name), allocation in found.items()]


def run_status_writers(scenario, outcome, *, apiserver_gates, identities=(), bootstrap: bool = True,
                       always: bool = False) -> StatusWriters | None:
    """The grid for this run; None when no claim is allocated, or when the scenario has no RBAC
    object and no identity was named (unless `always`)."""
    if not always and scenario.rbac.empty and not identities:
        return None
    claims = allocated_claims(scenario, outcome)
    if not claims:
        return None
    return status_writers(
        objects=scenario.rbac, claims=claims, nodes=scenario.nodes,
        granular=apiserver_gates.enabled(GRANULAR_GATE), device_status=apiserver_gates.enabled(DEVICE_STATUS_GATE),
        bootstrap=bootstrap, identities=tuple(identities),
    )


def report_lines(data: dict) -> list[str]:
    """The readable report's section: per claim, each writer's writes, refusals with their message."""
    labels = {w["key"]: w["label"] for w in data["writers"]}
    lines = ["", "Who may write each claim's status"
             + ("" if data["gates"][GRANULAR_GATE] else f" ({GRANULAR_GATE} off: the front door only)") + ":"]
    for claim in data["claims"]:
        pinned = f"pinned to {claim['pinnedToNode']}" if claim["pinnedToNode"] else "not pinned to one node"
        lines.append(f"  {claim['claim']} ({pinned}):")
        for cell in claim["cells"]:
            what = f"    {labels[cell['writer']]}, {cell['write']}: "
            if cell["allowed"]:
                lines.append(what + "allowed")
            else:
                lines.append(what + f"refused ({cell['status']}, {', '.join(cell['failed'])}): {cell['message']}")
    if data.get("omittedClaims"):
        lines.append(f"  ... and {data['omittedClaims']} more allocated claims")
    return lines
