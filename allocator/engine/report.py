"""Rendering an outcome: the machine-readable object and the human-readable report."""
from __future__ import annotations

import json

import yaml

from allocator.engine.run import ALLOCATED, INVALID, Outcome


def outcome_data(outcome: Outcome, *, with_explanation: bool = False) -> dict:
    data = {
        "outcome": outcome.outcome,
        "node": outcome.node,
        "message": outcome.message,
        "claims": outcome.claims,
        "problems": [p.as_dict() for p in outcome.problems],
        "warnings": [p.as_dict() for p in outcome.warnings],
        "nodes": [v.as_dict() for v in outcome.verdicts],
    }
    if with_explanation:
        data["explanation"] = outcome.explanation
    return data


def to_json(outcome: Outcome, **kwargs) -> str:
    return json.dumps(outcome_data(outcome, **kwargs), indent=2, ensure_ascii=False)


class _Dumper(yaml.SafeDumper):
    pass


def _str_representer(dumper, value):
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str_representer)


def to_yaml(outcome: Outcome, **kwargs) -> str:
    return yaml.dump(outcome_data(outcome, **kwargs), Dumper=_Dumper, sort_keys=False, allow_unicode=True)


def human_report(outcome: Outcome, *, max_devices: int = 16) -> str:
    lines: list[str] = []
    if outcome.outcome == ALLOCATED:
        lines.append(f"Allocated on node {outcome.node}.")
    elif outcome.outcome == INVALID:
        lines.append("Invalid input:")
        for problem in outcome.problems:
            lines.append(f"  - {problem.render()}")
    else:
        lines.append(f"Cannot allocate: {outcome.message}")
    for warning in outcome.warnings:
        lines.append(f"Warning: {warning.render()}")

    if len(outcome.verdicts) > 1 or (outcome.verdicts and not outcome.verdicts[0].fits):
        lines.append("")
        lines.append("Nodes tried:")
        for v in outcome.verdicts:
            state = "fits" if v.fits else v.message
            lines.append(f"  {v.node}: {state} ({v.steps} search steps)")

    for claim in outcome.claims:
        meta = claim["metadata"]
        allocation = (claim.get("status") or {}).get("allocation")
        lines.append("")
        lines.append(f"Claim {meta['namespace']}/{meta['name']}:")
        if not allocation:
            lines.append("  not allocated")
            continue
        for result in allocation["devices"]["results"]:
            extra = ""
            if result.get("consumedCapacity"):
                extra = "  consumes " + ", ".join(f"{k}={v}" for k, v in result["consumedCapacity"].items())
            if result.get("adminAccess"):
                extra += "  (admin access)"
            lines.append(f"  {result['request']}: {result['driver']}/{result['pool']}/{result['device']}{extra}")
        if allocation.get("nodeSelector"):
            lines.append(f"  nodeSelector: {json.dumps(allocation['nodeSelector'])}")

    explanation = outcome.explanation
    if explanation:
        lines.append("")
        lines.append(f"Why (node {explanation['node']}):")
        if explanation.get("blockedAt"):
            blocked = explanation["blockedAt"]
            lines.append(f"  the search got no further than claim {blocked['claim']}, request {blocked['request']}")
        for pool in explanation["pools"]:
            if pool["state"] != "usable":
                reason = f": {pool['reason']}" if pool.get("reason") else ""
                lines.append(f"  pool {pool['pool']} is {pool['state']}{reason}")
        for claim in explanation["claims"]:
            for request in claim["requests"]:
                lines.append(f"  {claim['claim']} request {request['request']} "
                             f"(class {request['deviceClassName']}, {request['count']} device(s)):")
                shown = [c for c in request["candidates"] if c["verdict"] in ("chosen", "tentative")]
                others = [c for c in request["candidates"] if c["verdict"] not in ("chosen", "tentative")]
                room = max(max_devices - len(shown), 0)
                listed = {id(c) for c in shown + others[:room]}
                for candidate in request["candidates"]:
                    if id(candidate) not in listed:
                        continue
                    mark = {"chosen": "+", "tentative": "~", "eligible": "o", "not-reached": "."}.get(
                        candidate["verdict"], "-")
                    lines.append(f"    {mark} {candidate['pool']}/{candidate['device']}: {candidate['reason']}")
                rest = others[room:]
                if rest:
                    counts: dict = {}
                    for candidate in rest:
                        key = candidate.get("code") or candidate["verdict"]
                        counts[key] = counts.get(key, 0) + 1
                    summary = ", ".join(f"{n} {code}" for code, n in sorted(counts.items()))
                    lines.append(f"    … and {len(rest)} more ({summary}); -o json --explain lists every device")
                if not request["candidates"]:
                    lines.append("    (no devices in usable pools on this node)")
        for cs in explanation["counterSets"]:
            usage = ", ".join(
                f"{c['counter']} {c['free']} free of {c['total']}" for c in cs["counters"]
            )
            groups = f"; groups {cs['groups']}" if cs.get("groups") else ""
            lines.append(f"  counter set {cs['pool']}/{cs['counterSet']}: {usage}{groups}")
    return "\n".join(lines) + "\n"
