"""What a run of claims (run.py) and a run of pods (pods.py) share: the nodes a run considers, its
default limits and the kinds of outcome. Its own module, so that neither run imports the other's
helpers (run.py hands a scenario with pods to pods.py)."""
from __future__ import annotations

from allocator.engine.allocate import DEFAULT_MAX_STEPS
from allocator.engine.objects import Node
from allocator.engine.pools import SliceIndex
from allocator.engine.problems import UNKNOWN_NODE, WARNING, Problem
from allocator.engine.scenario import Scenario
from allocator.engine.vocabulary import OutcomeKind

__all__ = ["ALLOCATED", "UNSATISFIABLE", "INVALID", "DEFAULT_MAX_STEPS", "DEFAULT_TIME_LIMIT",
           "candidate_nodes", "named_nodes", "unknown_node", "node_for"]

ALLOCATED, UNSATISFIABLE, INVALID = OutcomeKind.ALLOCATED, OutcomeKind.UNSATISFIABLE, OutcomeKind.INVALID

DEFAULT_TIME_LIMIT = 5.0  # seconds in all; the scheduler itself allows 10 s per node


def candidate_nodes(scenario: Scenario, index: SliceIndex) -> list[str]:
    """Every node named in the scenario (Node objects and slices' nodeName), in name order."""
    return sorted(set(scenario.nodes) | index.node_names())


def named_nodes(scenario: Scenario) -> list[str]:
    """candidate_nodes over the scenario's own slices, without indexing them (the run indexes the
    slices the scheduler sees)."""
    return sorted(set(scenario.nodes).union([s.node_name for s in scenario.slices if s.node_name]))


def unknown_node(scenario: Scenario, index: SliceIndex, node_name: str | None) -> Problem | None:
    """A warning when the node asked for is named nowhere in the scenario: it is tried as a node
    without labels, so only slices for all nodes or selected by labels could serve it."""
    if not node_name:
        return None
    known = candidate_nodes(scenario, index)
    if node_name in known:
        return None
    where = f"the nodes it names are {', '.join(known)}" if known else "it names no node"
    return Problem(
        f"node {node_name} is not in the scenario ({where}): it is tried as a node without labels, "
        "so only devices in slices for all nodes can be allocated", severity=WARNING, code=UNKNOWN_NODE)


def node_for(scenario: Scenario, name: str) -> Node:
    node = scenario.nodes.get(name)
    return node if node is not None else Node(name=name, synthetic=True)
