"""Node-selector matching with Kubernetes node-affinity semantics.

Terms are ORed, requirements inside a term ANDed; a term without requirements
matches nothing. `matchFields` supports only `metadata.name`.
"""
from __future__ import annotations

from allocator.engine.objects import Node, NodeSelector, Requirement


class SelectorError(ValueError):
    """A node selector that Kubernetes could not turn into a matcher."""


def _int(text: str) -> int:
    try:
        return int(text, 10)
    except (TypeError, ValueError):
        raise SelectorError(f"invalid value {text!r} for a Gt/Lt requirement: must be an integer") from None


def _label_matches(req: Requirement, labels: dict) -> bool:
    op = req.operator
    present = req.key in labels
    if op == "In":
        return present and labels[req.key] in req.values
    if op == "NotIn":
        return not present or labels[req.key] not in req.values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt"):
        if len(req.values) != 1:
            raise SelectorError(f"{op} requires exactly one value")
        if not present:
            return False
        try:
            have = int(labels[req.key], 10)
        except ValueError:
            return False
        want = _int(req.values[0])
        return have > want if op == "Gt" else have < want
    raise SelectorError(f"{op!r} is not a valid label selector operator")


def _field_matches(req: Requirement, node: Node) -> bool:
    if req.key != "metadata.name":
        raise SelectorError(f"{req.key!r} is not a supported field selector key (only metadata.name)")
    if req.operator == "In":
        return node.name in req.values
    if req.operator == "NotIn":
        return node.name not in req.values
    raise SelectorError(f"{req.operator!r} is not a valid field selector operator")


def check_selector(selector: NodeSelector) -> None:
    """Raise SelectorError for a selector Kubernetes could not parse (any term)."""
    for term in selector.terms:
        for req in term.match_expressions:
            if req.operator not in ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"):
                raise SelectorError(f"{req.operator!r} is not a valid label selector operator")
            if req.operator in ("Gt", "Lt"):
                if len(req.values) != 1:
                    raise SelectorError(f"{req.operator} requires exactly one value")
                _int(req.values[0])
        for req in term.match_fields:
            if req.key != "metadata.name":
                raise SelectorError(f"{req.key!r} is not a supported field selector key (only metadata.name)")
            if req.operator not in ("In", "NotIn"):
                raise SelectorError(f"{req.operator!r} is not a valid field selector operator")


def selector_matches(selector: NodeSelector, node: Node) -> bool:
    check_selector(selector)
    for term in selector.terms:
        if not term.match_expressions and not term.match_fields:
            continue
        if all(_label_matches(r, node.labels) for r in term.match_expressions) and all(
            _field_matches(r, node) for r in term.match_fields
        ):
            return True
    return False


def single_node_selector(node_name: str) -> dict:
    return {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
        ]
    }
