"""Rendering an outcome: the machine-readable object and the human-readable report."""
from __future__ import annotations

import enum
import json

import yaml

from allocator.engine.run import ALLOCATED, INVALID, Outcome
from allocator.engine.vocabulary import Verdict

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from allocator.engine.explanation import Explanation

# The explanation, pods and the status what-if are imported where an outcome has them, so that
# `manage.py allocate -o json` loads none of them.


def outcome_data(outcome: Outcome, *, with_explanation: bool = False) -> dict:
    data = {
        "outcome": outcome.outcome,
        "node": outcome.node,
        "message": outcome.message,
        "claims": outcome.claims,
        "problems": [p.as_dict() for p in outcome.problems],
        "warnings": [p.as_dict() for p in outcome.warnings],
        "nodes": [v.as_dict() for v in outcome.verdicts],
        "candidateNodes": list(outcome.candidate_nodes),  # every node the scenario names: what --node may pick
    }
    if with_explanation:
        from allocator.engine.explain import with_steps

        data["explanation"] = with_steps(outcome.explanation)
    if outcome.pods is not None:
        data["pods"] = [p.as_dict(with_explanation=with_explanation) for p in outcome.pods]
    if outcome.status_writers is not None:
        data["statusWriters"] = outcome.status_writers
    if outcome.alone is not None:  # each pending claim judged alone: each claim's own answer
        data["eachClaimAlone"] = [a.as_dict() for a in outcome.alone]
    return data


def to_json(outcome: Outcome, **kwargs) -> str:
    return json.dumps(outcome_data(outcome, **kwargs), indent=2, ensure_ascii=False)


class YamlDumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):
    """Safe YAML with multi-line strings as blocks; libyaml's emitter when PyYAML has it (five
    times faster than the pure-Python one, which matters for the page's claims panel)."""


def _str_representer(dumper, value):
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", str(value), style=style)  # libyaml takes a plain str


YamlDumper.add_representer(str, _str_representer)
# The engine's sentences (engine.sentence.Sentence) are strs with their parts: written as the text they are.
YamlDumper.add_multi_representer(str, _str_representer)
YamlDumper.add_multi_representer(enum.Enum, lambda dumper, value: _str_representer(dumper, value.value))


def to_yaml(outcome: Outcome, **kwargs) -> str:
    return yaml.dump(outcome_data(outcome, **kwargs), Dumper=YamlDumper, sort_keys=False, allow_unicode=True)


def human_report(outcome: Outcome, *, max_devices: int = 16) -> str:
    if outcome.pods is not None:
        return _pods_report(outcome, max_devices=max_devices)
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

    lines.extend(_explanation_lines(outcome.explanation, max_devices=max_devices))
    if outcome.status_writers is not None:
        from allocator.engine.statusauth.outcome import report_lines

        lines.extend(report_lines(outcome.status_writers))
    return "\n".join(lines) + "\n"


MARKS = {Verdict.CHOSEN: "+", Verdict.TRIED: "~", Verdict.REJECTED: "-"}


def _explanation_lines(explanation: Explanation | None, *, max_devices: int, title: str = "") -> list[str]:
    lines: list[str] = []
    if explanation:
        lines.append("")
        lines.append(f"Why ({title}node {explanation.node}):")
        if explanation.headline:
            lines.append(f"  {explanation.headline}")
        if explanation.blocked_at:
            blocked = explanation.blocked_at
            lines.append(f"  the search got no further than claim {blocked.claim}, request {blocked.request}")
        if explanation.approximate:
            lines.append(f"  note: {explanation.approximate}")
        for pool in explanation.pools:
            if not pool.usable:
                reason = f": {pool.reason}" if pool.reason else ""
                lines.append(f"  pool {pool.pool} is {pool.state}{reason}")
        for claim, request in explanation.requests():
            lines.append(f"  {claim.claim} request {request.request} "
                         f"(class {request.device_class_name}, {request.count} device(s)):")
            shown = [c for c in request.candidates if c.picked]
            others = [c for c in request.candidates if not c.picked]
            room = max(max_devices - len(shown), 0)
            listed = {id(c) for c in shown + others[:room]}
            for candidate in request.candidates:
                if id(candidate) not in listed:
                    continue
                mark = MARKS.get(candidate.verdict, ".")
                lines.append(f"    {mark} {candidate.pool}/{candidate.device}: {candidate.reason}")
            rest = others[room:]
            if rest:
                counts: dict = {}
                for candidate in rest:
                    key = str(candidate.code or candidate.verdict)
                    counts[key] = counts.get(key, 0) + 1
                summary = ", ".join(f"{n} {code}" for code, n in sorted(counts.items()))
                lines.append(f"    … and {len(rest)} more ({summary}); -o json --explain lists every device")
            if not request.candidates:
                lines.append("    (no devices in usable pools on this node)")
        for cs in explanation.counter_sets:
            usage = ", ".join(f"{c.counter} {c.free} free of {c.total}" for c in cs.counters)
            groups = f"; groups {cs.groups}" if cs.groups else ""
            lines.append(f"  counter set {cs.pool}/{cs.counter_set}: {usage}{groups}")
    return lines


def _pods_report(outcome: Outcome, *, max_devices: int) -> str:
    """The pod view: per pod the node, the devices of its claims, and every node's verdict."""
    from allocator.engine.pods import SCHEDULED

    if outcome.outcome == INVALID and not outcome.pods:
        lines = ["Invalid input:"] + [f"  - {problem.render()}" for problem in outcome.problems]
    elif outcome.outcome == INVALID:
        lines = [f"Cannot schedule: {outcome.message}"]
    elif outcome.outcome == ALLOCATED:
        scheduled = sum(1 for pod in outcome.pods if pod.outcome == SCHEDULED)
        lines = [f"Scheduled {scheduled} pod(s)." if scheduled else "No pod to schedule."]
    else:
        lines = [f"Pending: {outcome.message}"]
    for warning in outcome.warnings:
        lines.append(f"Warning: {warning.render()}")
    for pod in outcome.pods:
        lines.append("")
        lines.extend(_pod_lines(pod))
    for pod in outcome.pods:
        lines.extend(_explanation_lines(pod.explanation, max_devices=max_devices, title=f"pod {pod.key}, "))
    return "\n".join(lines) + "\n"


def _pod_lines(pod) -> list[str]:
    from allocator.engine.pods import INVALID_POD, PENDING, SCHEDULED

    if pod.outcome == SCHEDULED:
        lines = [f"Pod {pod.key}: scheduled on node {pod.node}"]
    elif pod.outcome == PENDING:
        lines = [f"Pod {pod.key}: Pending: {pod.message}"]
    elif pod.outcome == INVALID_POD:
        lines = [f"Pod {pod.key}: cannot be scheduled: {pod.problems[0].render() if pod.problems else pod.message}"]
    else:
        lines = [f"Pod {pod.key}: {pod.message}"]
    if getattr(pod, "workload", None):  # a pod made for a workload: which one (issue 25)
        lines.append(f"  made by {pod.workload}")
    for claim in pod.claims:
        origin = f", from template {claim.template}" if claim.template else ""
        origin += "; made here as the resourceclaim controller would" if claim.generated else ""
        name = f"{claim.namespace}/{claim.name}" if claim.name else "no claim"
        lines.append(f"  claim {claim.pod_claim_name} ({name}{origin}):")
        if not claim.allocation:
            lines.append("    not allocated")
            continue
        before = " (allocated before)" if claim.allocated_before else ""
        for result in claim.allocation["devices"]["results"]:
            lines.append(f"    {result['request']}: {result['driver']}/{result['pool']}/{result['device']}{before}")
    if pod.requests:
        lines.append("  requests: " + ", ".join(f"{name} {amount}" for name, amount in pod.requests.items()))
    if pod.node_allocatable:
        lines.append("  added by its claims' devices (node-allocatable): " + "; ".join(
            f"{s.claim} " + ", ".join(f"{name} {amount}" for name, amount in s.shown()) for s in pod.node_allocatable))
    if pod.nodes:
        lines.append("  nodes:")
        for verdict in pod.nodes:
            if not verdict.fits:
                detail = f" ({'; '.join(verdict.details)})" if verdict.details else ""
                lines.append(f"    {verdict.node}: {verdict.reason}{detail}")
                continue
            chosen = " (chosen)" if pod.outcome == SCHEDULED and verdict.node == pod.node else ""
            devices = ", ".join(f"{d['driver']}/{d['pool']}/{d['device']}" for d in verdict.devices)
            score = f", score {_score_text(verdict.score)}" if verdict.score else ""
            lines.append(f"    {verdict.node}: fits{chosen}{score}" + (f": {devices}" if devices else ""))
    if pod.ranking is not None and pod.ranking.note:
        lines.append(f"  scoring: {pod.ranking.note}")
    for note in pod.notes:
        lines.append(f"  note: {note}")
    return lines


def _score_text(score: dict) -> str:
    """`173 = NodeResourcesFit 81 + TaintToleration 100x3 ...`: each plugin's score times its weight."""
    parts = [f"{name} {p['score']}" + (f"x{p['weight']}" if p["weight"] != 1 else "")
             for name, p in score["plugins"].items()]
    return f"{score['total']} ({' + '.join(parts)})"
