"""Label selectors (metav1.LabelSelector) as the scheduler turns them into matchers.

A missing selector matches nothing; an empty one (`{}`) matches everything. `matchLabels`
and every `matchExpressions` requirement must all hold (In, NotIn, Exists, DoesNotExist).
The apiserver has already refused selectors that do not parse, so one that still cannot be
read here matches nothing.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LabelSelector:
    requirements: tuple  # (key, operator, frozenset of values)
    nothing: bool = False  # a missing selector, or one that could not be read

    @property
    def empty(self) -> bool:
        """An empty selector selects everything (labels.Selector.Empty)."""
        return not self.nothing and not self.requirements

    def matches(self, labels: dict) -> bool:
        if self.nothing:
            return False
        for key, operator, values in self.requirements:
            present = key in labels
            if operator == "In" and not (present and labels[key] in values):
                return False
            if operator == "NotIn" and present and labels[key] in values:
                return False
            if operator == "Exists" and not present:
                return False
            if operator == "DoesNotExist" and present:
                return False
        return True

    def with_labels(self, labels: dict) -> "LabelSelector":
        """The selector with `key = value` requirements added in front (matchLabelKeys)."""
        if self.nothing:
            return self
        added = tuple((str(k), "In", frozenset({str(v)})) for k, v in sorted(labels.items()))
        return LabelSelector(added + self.requirements)


NOTHING = LabelSelector((), nothing=True)
EVERYTHING = LabelSelector(())


def label_selector(raw) -> LabelSelector:
    """The matcher of a LabelSelector as the API stores it (None: matches nothing)."""
    if raw is None or not isinstance(raw, dict):
        return NOTHING
    requirements = []
    labels = raw.get("matchLabels") or {}
    if not isinstance(labels, dict):
        return NOTHING
    for key, value in sorted(labels.items()):
        requirements.append((str(key), "In", frozenset({str(value)})))
    for expression in raw.get("matchExpressions") or ():
        if not isinstance(expression, dict):
            return NOTHING
        operator = expression.get("operator")
        if operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
            return NOTHING
        values = frozenset(str(v) for v in expression.get("values") or ())
        requirements.append((str(expression.get("key") or ""), operator, values))
    return LabelSelector(tuple(requirements))


def pod_labels(raw: dict) -> dict:
    labels = (raw.get("metadata") or {}).get("labels") or {}
    return {str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {}
