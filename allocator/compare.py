"""Compare: two variants of a scenario (other gates, component gates, or another text) run on the
same node, and what differs between their results.

A comparison travels in the URL (`/compare?c=...`: deflated JSON, base64url), so a link holds both
sides and needs no store.
"""
from __future__ import annotations

import base64
import json
import zlib
from dataclasses import dataclass, field

from allocator import run_settings
from allocator.engine.outcome import Outcome
from allocator.run_settings import SettingsError
from allocator.sharing import MAX_SHARE_BYTES, ShareError, load_json
from allocator.workshops.model import Variant

FORMAT = 1
MAX_LINK_CHARS = 64 * 1024


def encode(a: Variant, b: Variant) -> str:
    data = {"v": FORMAT, "a": _side(a)}
    data["b"] = _side(b, same_text=b.scenario == a.scenario)
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    raw = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    packed = packer.compress(raw) + packer.flush()
    return base64.urlsafe_b64encode(packed).decode("ascii").rstrip("=")


def _side(variant: Variant, *, same_text: bool = False) -> dict:
    side = variant.link_data()
    if not same_text:
        side["scenario"] = variant.scenario
    return side


def decode(value: str) -> tuple[Variant, Variant]:
    if len(value) > MAX_LINK_CHARS:
        raise ShareError("the comparison link is too long", 413)
    try:
        packed = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
        unpacker = zlib.decompressobj(-15)
        text = unpacker.decompress(packed, MAX_SHARE_BYTES * 2 + 4096)
        if unpacker.unconsumed_tail:
            raise ShareError("the comparison expands to more than a share may hold", 413)
        data = load_json(text.decode("utf-8"), "the comparison link")
    except ShareError:
        raise
    except (ValueError, zlib.error) as exc:
        raise ShareError(f"the comparison link does not decode: {exc}") from None
    if not isinstance(data, dict) or data.get("v") != FORMAT or not all(isinstance(data.get(k), dict) for k in "ab"):
        raise ShareError("the comparison link has an unknown format")
    a = _read_side(data["a"], None)
    return a, _read_side(data["b"], a.scenario)


def _read_side(side: dict, default_text: str | None) -> Variant:
    scenario = side.get("scenario", default_text)
    if not isinstance(scenario, str):
        raise ShareError("a side of the comparison has no scenario")
    try:
        return run_settings.from_link(scenario, node=side.get("node"), gates=side.get("gates"),
                                        versions=side.get("versions"))
    except SettingsError as exc:
        raise ShareError(f"the comparison link: {exc.message}") from None


# ---- the differences ------------------------------------------------------------------------


class Said(str):
    """A cell of the table of differences: its English value (what tests, links and the JSON read)
    together with its words in the page's language, made from the same data when the cell is made
    (allocator.wording.difference_value); the template's `kept` filter shows the words."""

    words: object

    def __new__(cls, english: str, words=None):
        cell = super().__new__(cls, english)
        cell.words = words
        return cell


@dataclass
class Difference:
    kind: str  # outcome, claim, devices, counter, row, pool, pod
    what: str
    a: str
    b: str
    raw_a: object = field(default=None, repr=False, compare=False)  # the data each side's value is made from
    raw_b: object = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        from allocator import wording  # the page's language, at the time the row is made

        self.kind = Said(self.kind, wording.difference_kind(self.kind))
        if self.kind == "outcome":
            self.what = Said(self.what, wording.difference_kind("outcome"))
        self.a = Said(self.a, wording.difference_value(self.kind, self.a, self.raw_a))
        self.b = Said(self.b, wording.difference_value(self.kind, self.b, self.raw_b))


def _difference(kind: str, what: str, a, b, text) -> Difference:
    """A row of the table; `text` makes each side's English from its data."""
    return Difference(kind, what, text(a), text(b), a, b)


def _devices(outcome: Outcome) -> dict:
    """claim -> sorted device list ("pool/device" per result) or None when pending."""
    out = {}
    for claim in outcome.claims:
        meta = claim["metadata"]
        allocation = (claim.get("status") or {}).get("allocation")
        results = allocation["devices"]["results"] if allocation else None
        out[f"{meta['namespace']}/{meta['name']}"] = (
            sorted(f"{r['request']}: {r['pool']}/{r['device']}" for r in results) if results is not None else None)
    return out


def _counters(outcome: Outcome) -> dict:
    if outcome.explanation is None:
        return {}
    return {f"{cs.pool}/{cs.counter_set}: {counter.counter}": counter.free
            for cs in outcome.explanation.counter_sets for counter in cs.counters}


def _rows(outcome: Outcome) -> dict:
    if outcome.explanation is None:
        return {}
    return {f"{claim.claim} {request.request}: {row.pool}/{row.device}": str(row.code or row.verdict)
            for claim, request in outcome.explanation.requests() for row in request.candidates}


def _pools(outcome: Outcome) -> dict:
    return {p.pool: p.state for p in outcome.explanation.pools} if outcome.explanation is not None else {}


def _pods(outcome: Outcome) -> dict:
    return {f"{p.namespace}/{p.name}": p.node or p.outcome for p in outcome.pods or ()}


def differences(a: Outcome, b: Outcome) -> list[Difference]:
    """What differs between two results."""
    diffs = []
    if (a.outcome, a.node) != (b.outcome, b.node):
        diffs.append(_difference("outcome", "outcome", a, b, _outcome_text))
    for kind, read in (("pool", _pools), ("pod", _pods)):
        left, right = read(a), read(b)
        for key in sorted(left.keys() | right.keys()):
            if left.get(key) != right.get(key):
                diffs.append(_difference(kind, key, left.get(key), right.get(key), lambda v: v or ABSENT))
    left, right = _devices(a), _devices(b)
    for key in sorted(left.keys() | right.keys()):
        da, db = left.get(key, ABSENT), right.get(key, ABSENT)
        if da == db:
            continue
        if da is None or db is None or da == ABSENT or db == ABSENT:
            diffs.append(_difference("claim", key, da, db, _claim_text))
        else:
            diffs.append(_difference("devices", key, da, db, ", ".join))
    for kind, read in (("counter", _counters), ("row", _rows)):
        left, right = read(a), read(b)
        for key in sorted(left.keys() | right.keys()):
            if left.get(key) != right.get(key):
                diffs.append(_difference(kind, key, left.get(key), right.get(key), lambda v: v or "—"))
    return diffs


ABSENT = "absent"


def _outcome_text(outcome: Outcome) -> str:
    return f"{outcome.outcome} on {outcome.node}" if outcome.node else str(outcome.outcome)


def _claim_text(devices) -> str:
    if devices == ABSENT:
        return ABSENT
    return "pending" if devices is None else "allocated: " + ", ".join(devices)
