"""The words the engine answers in: a run's outcome, a why row's verdict and its code.

Each is a `StrEnum`, so the JSON of the API and the CLI carries the plain word, and every reader
(the page's panels, the workshop checks, compare, the CLI report) takes its vocabulary from here
instead of restating it.
"""
from __future__ import annotations

from enum import StrEnum


class OutcomeKind(StrEnum):
    """What a run answered; `manage.py allocate` exits 0, 1 or 2 for them."""

    ALLOCATED = "allocated"
    UNSATISFIABLE = "unsatisfiable"
    INVALID = "invalid"

    @property
    def exit_code(self) -> int:
        return _EXIT_CODES[self]


_EXIT_CODES = {OutcomeKind.ALLOCATED: 0, OutcomeKind.UNSATISFIABLE: 1, OutcomeKind.INVALID: 2}


class Verdict(StrEnum):
    """What the reported attempt did with one device for one request."""

    CHOSEN = "chosen"  # held in the answer
    TRIED = "tried"  # picked in a search that failed (or picked and given up: code backtracked)
    REJECTED = "rejected"  # a check refused it; the row's code says which
    NOT_NEEDED = "not-needed"  # the request already had its devices
    NOT_USED = "not-used"  # an earlier subrequest was satisfied
    NOT_REACHED = "not-reached"  # the search never got to it


class RowCode(StrEnum):
    """Why a row has its verdict: the code of the refusal, or of what the search did with the device."""

    # true at any moment
    SELECTOR = "selector"
    BINDING_GATE = "binding-gate"
    DEVICE_NODE = "device-node"
    NODE_OPS_GATE = "node-ops-gate"
    NODE_OPS_UNDECLARED = "node-ops-undeclared"
    PARTITIONABLE_GATE = "partitionable-gate"
    TAINT = "taint"
    CAPACITY_MISSING = "capacity-missing"
    POLICY = "policy"
    # true at the moment of the check
    NO_ROOM = "no-room"
    IN_USE = "in-use"
    SAME_CLAIM = "same-claim"
    GROUPS = "groups"
    COUNTER = "counter"
    CAPACITY = "capacity"
    CONSTRAINT = "constraint"
    # what the search did with a device it picked
    GIVEN_UP = "given-up"  # picked in the furthest attempt, which failed later
    BACKTRACKED = "backtracked"  # picked, then undone


IN_USE_CODES = (RowCode.IN_USE, RowCode.SAME_CLAIM)
