"""The search as it happened: every step it took, and the attempt the explanation reports.

The allocator calls a `SearchRecorder` at each step (enter a request, reject a
device with a refusal, pick, undo a pick, finish). From the same calls the
recorder keeps

- for every request (or subrequest) the rows of its latest visit on the current
  branch: one per device the search considered there, in search order, with the
  refusal it got at that moment or the pick it became. Undoing a pick drops the
  rows considered after it, so the rows are always those of one attempt;
- the reported attempt: the final branch after a success; after a failure, a copy
  of the rows taken when the search first left its furthest point (the deepest
  request and device index reached, the first one reached winning a tie), with
  the later tries of that request's other subrequests;
- the first `limit` steps for replaying the search, and a count of the rest.

So the explanation's rows and the replay are two views of one record.
"""
from __future__ import annotations

from dataclasses import dataclass

ENTER, REJECT, PICK, UNDO, DONE = "enter", "reject", "pick", "undo", "done"
DEFAULT_TRACE_LIMIT = 2000


@dataclass(frozen=True, slots=True)
class Row:
    """One device the search considered for one request visit."""

    position: int  # index in the allocator's candidate order
    device: object
    refusal: object = None  # a Refusal when a check failed
    pick: object = None  # the Pick when the device was taken
    undone: bool = False  # the pick was given up again (backtracking)


@dataclass(frozen=True, slots=True)
class Step:
    kind: str
    rd: object = None
    device: object = None
    detail: object = None  # Refusal for reject, Pick for pick/undo, outcome text for done


class SearchRecorder:
    def __init__(self, *, limit: int = DEFAULT_TRACE_LIMIT):
        self.limit = limit
        self.steps: list[Step] = []
        self.total = 0
        self.visits: dict = {}  # (ci, ri, si) -> [Row]
        self.furthest = (-1, -1)  # (request depth, device index)
        self.furthest_rd = None
        self._pending = False  # at the furthest point and not left yet
        self.snapshot: dict | None = None  # visits of the furthest attempt
        self._siblings: set = set()  # other subrequests of the furthest request tried since
        self.outcome: str | None = None
        self.depth_of: dict = {}  # (ci, ri) -> request depth

    # -- the allocator's calls ---------------------------------------------------------------

    def _step(self, step: Step) -> None:
        self.total += 1
        if len(self.steps) < self.limit:
            self.steps.append(step)

    def enter(self, rd) -> None:
        key = (rd.claim_index, rd.request_index, rd.sub_index)
        self.visits[key] = []
        furthest = self.furthest_rd
        if (self.snapshot is not None and furthest is not None and not self._pending
                and (rd.claim_index, rd.request_index) == (furthest.claim_index, furthest.request_index)
                and rd.sub_index != furthest.sub_index and self._siblings is not None):
            self._siblings.add(key)
        if self.limit:
            self._step(Step(ENTER, rd))

    def reach(self, rd, depth: int, k: int) -> None:
        self.depth_of[(rd.claim_index, rd.request_index)] = depth
        if (depth, k) > self.furthest:
            self.furthest = (depth, k)
            self.furthest_rd = rd
            self._pending = True
            self._siblings = set()

    def reject(self, rd, position: int, device, refusal) -> None:
        self.visits[(rd.claim_index, rd.request_index, rd.sub_index)].append(Row(position, device, refusal))
        if self.limit:
            self._step(Step(REJECT, rd, device, refusal))

    def pick(self, rd, position: int, pick) -> None:
        self.visits[(rd.claim_index, rd.request_index, rd.sub_index)].append(Row(position, pick.device, None, pick))
        if self.limit:
            self._step(Step(PICK, rd, pick.device, pick))

    def undo(self, rd, position: int, pick) -> None:
        if self._pending:
            self._take_snapshot()
        elif self._siblings and self.furthest_rd is not None:
            depth = self.depth_of.get((rd.claim_index, rd.request_index), -1)
            if depth < self.furthest[0]:
                self._close_siblings()
        rows = self.visits[(rd.claim_index, rd.request_index, rd.sub_index)]
        while rows and rows[-1].position > position:
            rows.pop()
        if rows and rows[-1].position == position:
            last = rows[-1]
            rows[-1] = Row(last.position, last.device, None, last.pick, True)
        if self.limit:
            self._step(Step(UNDO, rd, pick.device, pick))

    def finish(self, allocator, outcome: str) -> None:
        self.outcome = outcome
        if outcome != "success":
            if self._pending or self.snapshot is None:
                self._take_snapshot()
            self._close_siblings()
        if self.limit:
            self._step(Step(DONE, detail=outcome))

    def _take_snapshot(self) -> None:
        self.snapshot = {key: list(rows) for key, rows in self.visits.items()}
        self._pending = False
        self._siblings = set()

    def _close_siblings(self) -> None:
        if self.snapshot is not None:
            for key in self._siblings:
                self.snapshot[key] = list(self.visits.get(key, ()))
        self._siblings = set()

    # -- what the explanation reads ------------------------------------------------------------

    @property
    def success(self) -> bool:
        return self.outcome == "success"

    def reported(self) -> dict:
        """{(ci, ri, si): [Row]} of the reported attempt."""
        if self.success or self.snapshot is None:
            return self.visits
        return self.snapshot

    def reported_picks(self) -> list:
        """(claim index, Pick) held in the reported attempt, in the order they were made."""
        rows = self.reported()
        out = []
        for key in sorted(rows):
            for row in rows[key]:
                if row.pick is not None and not row.undone:
                    out.append((key[0], row.pick))
        return out

    def reached(self, ci: int, ri: int) -> bool:
        """Did the reported attempt get to this request?"""
        if self.success:
            return True
        depth = self.depth_of.get((ci, ri))
        return depth is not None and depth <= self.furthest[0]
