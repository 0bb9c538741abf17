"""Pieces of an allocation outcome that run.py and pods.py both build: a claim as the output
shows it, and a fatal allocator error as a located problem."""
from __future__ import annotations

from allocator.engine.allocate import Fatal
from allocator.engine.problems import Problem
from allocator.engine.scenario import Scenario


def output_claim(claim, allocation: dict | None) -> dict:
    raw = claim.raw
    out = {
        "apiVersion": raw.get("apiVersion", "resource.k8s.io/v1"),
        "kind": "ResourceClaim",
        "metadata": {"name": claim.name, "namespace": claim.namespace},
        "spec": raw.get("spec") or {},
    }
    if allocation is not None:
        out["status"] = {"allocation": allocation}
    return out


def fatal_problem(scenario: Scenario, exc: Fatal) -> Problem:
    claim, owner = exc.claim, exc.owner
    if owner is not None:  # the field is in another object than the claim (a DeviceClass's selector)
        return scenario.locate(Problem(exc.message, kind=exc.kind, name=owner.name, path=exc.path, ref=owner.ref))
    problem = Problem(
        exc.message,
        kind=exc.kind or ("ResourceClaim" if claim is not None else ""),
        name=claim.key if claim is not None else "",
        path=exc.path,
        ref=claim.ref if claim is not None else None,
    )
    return scenario.locate(problem)
