"""The wording layer: the page's sentences made from the engine's typed answer, in the page's language.

The engine stays free of Django and answers in data (a why row's verdict, its refusal code and the
refusal's facts; a gate's stage; an example's notes). This module turns that data into words with
Django's gettext, so every sentence has one entry per language in `locale/<lang>/LC_MESSAGES/django.po`
and nothing is translated by replacing parts of an English sentence.

English stays the source of record: with English active, a row's reason is the engine's own text,
exactly as the API and the CLI print it. What Kubernetes itself prints (the scheduler's
`0/3 nodes are available: …`, apiserver validation errors, CEL errors) is never translated; `gloss`
gives a Korean sentence to show beside it.
"""
from __future__ import annotations

import functools
import html
import re
from dataclasses import dataclass
from pathlib import Path

import yaml
from django.utils.translation import get_language, gettext as _, gettext_noop, ngettext

from allocator.engine.gates import ALPHA, BETA, DEPRECATED, GA, SUMMARIES
from allocator.engine.vocabulary import RowCode, Verdict

SOURCE_LANGUAGE = "en"
EXAMPLES_DIR = Path(__file__).resolve().parent / "examples"


def active() -> str:
    """The active language's code without a region (`ko` for `ko-kr`)."""
    return (get_language() or SOURCE_LANGUAGE).split("-")[0]


def in_source_language() -> bool:
    return active() == SOURCE_LANGUAGE


@dataclass(frozen=True)
class Words:
    """A piece of text and the language it is really in (None: the page's own)."""

    text: str
    lang: str | None = None

    def __str__(self) -> str:
        return self.text

    def __html__(self) -> str:
        """In a template: the text, escaped, inside a `lang` span when it is in another language."""
        text = html.escape(self.text)
        return f'<span lang="{self.lang}">{text}</span>' if self.lang else text


def _kept(text: str) -> Words:
    """Text shown in English on a page in another language: marked so a screen reader reads it so."""
    return Words(text, None if in_source_language() else SOURCE_LANGUAGE)


# --- verdicts and stages -------------------------------------------------------------------------------

_VERDICT_LABELS = {
    Verdict.CHOSEN: ("✔", gettext_noop("chosen")),
    Verdict.TRIED: ("◐", gettext_noop("tried")),
    Verdict.REJECTED: ("✘", gettext_noop("rejected")),
    Verdict.NOT_NEEDED: ("·", gettext_noop("not needed")),
    Verdict.NOT_USED: ("·", gettext_noop("not used")),
    Verdict.NOT_REACHED: ("·", gettext_noop("not reached")),
}


def verdict_label(verdict: Verdict) -> str:
    mark, word = _VERDICT_LABELS[Verdict(verdict)]
    return f"{mark} {_(word)}"


def verdict_word(verdict: Verdict) -> str:
    """The verdict alone: its JSON value in English (`not-needed`), its word in another language."""
    verdict = Verdict(verdict)
    return verdict.value if in_source_language() else _(_VERDICT_LABELS[verdict][1])


_STAGES = {ALPHA: gettext_noop("alpha"), BETA: gettext_noop("beta"), GA: gettext_noop("GA"),
           DEPRECATED: gettext_noop("deprecated")}


def stage_name(stage: str) -> str:
    word = _STAGES.get(stage)
    return _(word) if word else stage


_CLAIM_STATES = {"allocated": gettext_noop("allocated"), "failed": gettext_noop("failed"),
                 "pending": gettext_noop("pending"), "already allocated": gettext_noop("already allocated")}
_POOL_STATES = {"usable": gettext_noop("usable"), "incomplete": gettext_noop("incomplete"),
                "invalid": gettext_noop("invalid")}


def claim_state(state: str) -> str:
    """A claim's badge in the Claim status panel (panels.claim_views)."""
    word = _CLAIM_STATES.get(state)
    return _(word) if word else state


def pool_state(state: str) -> str:
    word = _POOL_STATES.get(state)
    return _(word) if word else state


# The gate table's help: the playground's own summary of each gate (engine/gates.py SUMMARIES), one
# catalogue entry each. tests/web/test_i18n.py checks this list holds every summary.
GATE_SUMMARIES = (
    gettext_noop("the whole DRA feature"),
    gettext_noop("firstAvailable subrequests"),
    gettext_noop("adminAccess requests"),
    gettext_noop("claim status.devices"),
    gettext_noop("extended resources (example.com/gpu: 1) backed by DRA"),
    gettext_noop("device taints and request tolerations"),
    gettext_noop("DeviceTaintRule objects add taints to devices"),
    gettext_noop("shared counters and per-device node selection"),
    gettext_noop("multi-allocatable devices and capacity requests"),
    gettext_noop("milli-unit arithmetic for validRange"),
    gettext_noop("binding conditions on devices"),
    gettext_noop("10 s timeout per node in the scheduler"),
    gettext_noop("apiserver authorization of claim status writes"),
    gettext_noop("list-valued attributes and includes()"),
    gettext_noop("compatibility groups on counter consumption"),
    gettext_noop("skipNodeOperations on slices"),
    gettext_noop("derived attributes in requests"),
    gettext_noop("node allocatable resources backed by DRA (not modelled)"),
    gettext_noop("partitionable device types in pool status (not modelled)"),
    gettext_noop("ResourcePoolStatusRequest objects (not modelled)"),
    gettext_noop("claims for workloads (not modelled)"),
    gettext_noop("device health in pod status (not modelled)"),
    gettext_noop("a message with the device health (not modelled)"),
    gettext_noop("Workload objects; needed by DRAWorkloadResourceClaims (not modelled)"),
    gettext_noop("node-declared features; needed by DRAOptionalNodeOperations (not modelled)"),
)
_GATE_SUMMARY_IDS = frozenset(GATE_SUMMARIES)


def gate_summary(name: str) -> str:
    english = SUMMARIES.get(name, "")
    return _(english) if english in _GATE_SUMMARY_IDS else english


# --- the gallery's notes ----------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _example_notes(lang: str) -> dict:
    """The gallery's notes in one language: `examples/index.<lang>.yaml`, keyed by the example's slug."""
    path = EXAMPLES_DIR / f"index.{lang}.yaml"
    if not path.exists():
        return {}
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return {entry["slug"]: entry for entry in data.get("examples", [])}


def example_notes(example) -> dict:
    """An example's title and notes (Summary / Look at / Try this) in the active language, with
    English for any note not translated; `lang` is set when the notes are English on another page."""
    notes = {"title": example.title, "feature": example.feature, "summary": example.summary,
             "look": example.look, "try_this": example.try_this, "lang": None}
    if in_source_language():
        return notes
    entry = _example_notes(active()).get(example.slug)
    if not entry or not all(entry.get(k) for k in NOTE_KEYS):
        notes["lang"] = SOURCE_LANGUAGE
        return notes
    return {"title": entry["title"], "feature": entry["feature"], "summary": entry["summary"].strip(),
            "look": entry["look"].strip(), "try_this": entry["try"].strip(), "lang": None}


NOTE_KEYS = ("title", "feature", "summary", "look", "try")


# --- Kubernetes' own messages: shown verbatim, with a gloss -------------------------------------------

_NODES_AVAILABLE = re.compile(r"^0/(\d+) nodes are available")


def gloss(message: str) -> str:
    """A sentence in the active language saying what a Kubernetes message means, or "" in English
    (the message says it already) and for messages this layer does not know."""
    if in_source_language() or not message:
        return ""
    found = _NODES_AVAILABLE.match(message)
    if found:
        total = int(found.group(1))
        if "Preemption is not helpful" in message:
            return _("Preemption would not help this pod either.")
        return ngettext("None of the %(count)d node can take the pod.",
                        "None of the %(count)d nodes can take the pod.", total) % {"count": total}
    if "cannot allocate all claims" in message:
        return _("The claims cannot all be allocated together on this node.")
    if message.endswith("does not exist") and "device class" in message:
        return _("The device class the request names does not exist.")
    if "timed out trying to allocate devices" in message:
        return _("Allocating the devices took too long.")
    if "feature is disabled" in message:
        return _("This request needs a feature gate that is off.")
    if "exceeds the claim limit" in message:
        return _("One claim can hold at most 32 devices.")
    if "CEL" in message and "error" in message:
        return _("A CEL expression could not be compiled or evaluated.")
    if "resourceclaim in use" in message or "in the process of being allocated" in message:
        return _("Another pod holds the claim, or it is being allocated for another pod.")
    if "invalid resource pools" in message or "is currently being updated" in message:
        return _("A resource pool is invalid or being updated, so this node cannot use it.")
    return ""


# --- the why table: a row's reason from its code and facts -------------------------------------------------


def _holder(h: dict) -> str:
    if h.get("allocatedBefore"):
        return _("claim %(claim)s (allocated before)") % {"claim": h["claim"]}
    return _("claim %(claim)s, request %(request)s") % {"claim": h["claim"], "request": h["request"]}


def _holders_with_amounts(held_by: list) -> str:
    parts = []
    for h in held_by:
        who = _holder(h)
        if h.get("amount") is not None and h.get("device"):
            who = _("%(holder)s took %(amount)s on %(device)s") % {
                "holder": who, "amount": h["amount"], "device": h["device"].rpartition("/")[2]}
        elif h.get("amount") is not None:
            who = _("%(holder)s took %(amount)s") % {"holder": who, "amount": h["amount"]}
        parts.append(who)
    return "; ".join(parts)


def _devices_of(held_by: list) -> str:
    return ", ".join(
        _("%(device)s of %(holder)s") % {"device": h["device"].rpartition("/")[2], "holder": _holder(h)}
        if h.get("device") else _holder(h) for h in held_by)


def _groups_text(groups) -> str:
    return "{" + ", ".join(groups) + "}" if groups else _("no groups")


def _refusal_sentence(code: RowCode, facts: dict, held_by: list) -> str | None:
    """The sentence for one refusal code, or None where the row lacks the facts to say it."""
    f = facts
    if code == RowCode.SELECTOR:
        if f.get("owner") == "class":
            return _("device class %(name)s selector #%(index)s is false: %(expression)s") % f
        return _("request selector #%(index)s is false: %(expression)s") % f
    if code == RowCode.BINDING_GATE:
        return _("device has bindingConditions but DRADeviceBindingConditions is disabled")
    if code == RowCode.DEVICE_NODE:
        return _("the device's own node selection does not include this node")
    if code == RowCode.NODE_OPS_GATE:
        return _("its slice sets skipNodeOperations but DRAOptionalNodeOperations is disabled in the scheduler")
    if code == RowCode.NODE_OPS_UNDECLARED:
        return _("its slice sets skipNodeOperations but the node does not declare DRAOptionalNodeOperations "
                 "in status.declaredFeatures")
    if code == RowCode.PARTITIONABLE_GATE:
        return _("device consumes counters but DRAPartitionableDevices is disabled")
    if code == RowCode.TAINT and "key" in f:
        taint = f["key"] + (f"={f['value']}" if f.get("value") else "") + f":{f['effect']}"
        return _("taint %(taint)s is not tolerated") % {"taint": taint}
    if code == RowCode.CAPACITY_MISSING and "capacities" in f:
        return _("device has no capacity named %(names)s") % {"names": ", ".join(f["capacities"])}
    if code == RowCode.POLICY and "capacity" in f:
        return _("capacity %(capacity)s: %(amount)s is not allowed by the device's requestPolicy") % f
    if code == RowCode.IN_USE:
        if not held_by:
            return _("in use")
        if all(h.get("allocatedBefore") for h in held_by):
            return _("in use: already allocated to %(claims)s") % {
                "claims": ", ".join(_("claim %(claim)s") % {"claim": h["claim"]} for h in held_by)}
        return _("in use: picked earlier in this attempt for %(holders)s") % {
            "holders": "; ".join(_holder(h) for h in held_by)}
    if code == RowCode.SAME_CLAIM:
        return _("already picked for this claim (admin access never takes a device twice in one claim)")
    if code == RowCode.GROUPS and "counterSet" in f:
        mine = _groups_text(f.get("deviceGroups"))
        values = {"set": f["counterSet"], "now": f["groupsNow"], "mine": mine}
        text = (_("compatibility groups in counter set %(set)s: %(now)s ∩ %(mine)s = ∅") % values
                if f.get("deviceGroups") and f["groupsNow"].startswith("{") else
                _("compatibility groups in counter set %(set)s: %(mine)s cannot join %(now)s") % values)
        if held_by:
            text += " " + _("(set by %(devices)s)") % {"devices": _devices_of(held_by)}
        return text
    if code == RowCode.COUNTER and "counter" in f:
        values = {"counter": f["counter"], "set": f["counterSet"], "need": f["need"], "left": f["left"]}
        text = (_("counter %(counter)s in set %(set)s needs %(need)s, %(left)s left") % values if f["need"] else
                _("counter %(counter)s in set %(set)s is overdrawn (%(left)s left)") % values)
        if held_by:
            text += " " + _("(after %(holders)s)") % {"holders": _holders_with_amounts(held_by)}
        return text
    if code == RowCode.CAPACITY and "capacity" in f:
        text = _("capacity %(capacity)s: needs %(need)s, %(free)s free") % f
        if held_by:
            text += f" ({_holders_with_amounts(held_by)})"
        return text
    if code == RowCode.CAPACITY and not f:
        return _("its capacity cannot hold the request")
    if code == RowCode.CONSTRAINT and "problem" in f:
        values = {"kind": f["constraint"], "attribute": f["attribute"], "value": f.get("value"),
                  "other": f.get("conflictsWith")}
        problem = f["problem"]
        if problem == "missing":
            text = _("%(kind)s: device has no attribute %(attribute)s") % values
        elif problem == "list":
            text = _("%(kind)s: attribute %(attribute)s is a list (needs DRAListTypeAttributes)") % values
        elif problem == "mismatch":
            text = _("matchAttribute %(attribute)s: %(value)s differs from %(other)s") % values
        elif problem == "disjoint":
            text = _("matchAttribute %(attribute)s: %(value)s has nothing in common with %(other)s") % values
        elif problem == "duplicate":
            text = _("distinctAttribute %(attribute)s: %(value)s is already used") % values
        else:
            return None
        if held_by:
            text += " " + _("(from %(devices)s)") % {"devices": _devices_of(held_by)}
        return text
    return None


# Which check a device not needed would fail (a row's `would`): its code only, no facts.
_WOULD_FAIL = {
    RowCode.SELECTOR: gettext_noop("a selector is false"),
    RowCode.BINDING_GATE: gettext_noop("it has bindingConditions and DRADeviceBindingConditions is disabled"),
    RowCode.DEVICE_NODE: gettext_noop("its own node selection does not include this node"),
    RowCode.NODE_OPS_GATE: gettext_noop("its slice sets skipNodeOperations and DRAOptionalNodeOperations is disabled"),
    RowCode.NODE_OPS_UNDECLARED: gettext_noop("the node does not declare DRAOptionalNodeOperations"),
    RowCode.PARTITIONABLE_GATE: gettext_noop("it consumes counters and DRAPartitionableDevices is disabled"),
    RowCode.TAINT: gettext_noop("a taint is not tolerated"),
    RowCode.CAPACITY_MISSING: gettext_noop("it lacks a requested capacity"),
    RowCode.POLICY: gettext_noop("its requestPolicy does not allow the amount"),
}


def row_reason(row) -> Words:
    """A why row's reason in the active language; the engine's English when the row's data cannot
    say it again (marked `lang="en"` on a page in another language)."""
    if in_source_language():
        return Words(row.reason)
    verdict = Verdict(row.verdict)
    text = None
    if verdict == Verdict.CHOSEN:
        text = _("chosen")
    elif verdict == Verdict.NOT_USED:
        text = _("not used: an earlier subrequest was satisfied")
    elif verdict == Verdict.NOT_REACHED:
        text = (_("not reached: the search did not get to this request in the reported attempt")
                if "this request" in row.reason else
                _("not reached: the search stopped before it got to this device"))
    elif verdict == Verdict.TRIED and row.code == RowCode.GIVEN_UP:
        text = _("picked in the furthest attempt, which then failed at a later request or device")
    elif verdict == Verdict.TRIED and row.code == RowCode.BACKTRACKED:
        text = _("picked, then given up: the rest of the search could not be completed with it")
    elif verdict == Verdict.NOT_NEEDED:
        text = _("not needed: the request already had all its devices")
        if row.would is not None:
            text = _("%(reason)s; it would fail anyway: %(check)s") % {
                "reason": text, "check": _(_WOULD_FAIL.get(RowCode(row.would), gettext_noop("another check")))}
    elif verdict == Verdict.REJECTED and row.code is not None:
        text = _refusal_sentence(RowCode(row.code), row.facts or {}, row.held_by or [])
    return Words(text) if text is not None else _kept(row.reason)


def reason_kind(row) -> Words:
    """The reason without its device-specific tail, shown for a fold of rows (see panels._fold)."""
    words = row_reason(row)
    return Words(words.text.split(":", 1)[0], words.lang) if row.code else words


# --- the headline: the one sentence on the request a failed search could not satisfy ------------------


def _row_text(row) -> str:
    return row_reason(row).text


def _names(rows: list) -> str:
    return ", ".join(r.device for r in rows[:3]) + (" …" if len(rows) > 3 else "")


def _asks(p: dict) -> str:
    return ngettext("request %(request)s of claim %(claim)s needs %(need)d device",
                    "request %(request)s of claim %(claim)s needs %(need)d devices", p["need"]) % p


def _headline_text(sentence) -> str | None:
    """The engine's headline (an `explanation.Sentence`) said again from its form and parts."""
    form, p = getattr(sentence, "form", ""), getattr(sentence, "parts", {})
    if form == "gave-up":
        return ngettext("the search gave up after %(steps)d steps before it found an answer; its furthest attempt "
                        "had %(had)d of the %(need)d device that request %(request)s of claim %(claim)s needs",
                        "the search gave up after %(steps)d steps before it found an answer; its furthest attempt "
                        "had %(had)d of the %(need)d devices that request %(request)s of claim %(claim)s needs",
                        p["need"]) % p
    if form == "no-devices":
        text = _("%(asks)s; node %(node)s has no devices in usable pools") % {"asks": _asks(p), "node": p["node"]}
        if p["unusable"]:
            text += " " + _("(%(pools)s not usable)") % {"pools": ", ".join(p["unusable"])}
    elif form == "all-fail-alike":
        text = _("every device on %(node)s fails for request %(request)s of claim %(claim)s: %(reason)s") % {
            **p, "reason": _row_text(p["row"])}
    elif form == "all-fail":
        detail = ", ".join(f"{n} {code}" for code, n in p["counts"])
        text = _("%(asks)s; no device on %(node)s passes its checks (%(detail)s)") % {
            "asks": _asks(p), "node": p["node"], "detail": detail}
    elif form == "too-few":
        text = ngettext("%(asks)s; on %(node)s only %(passing)d device passes its selectors and it is not taken; "
                        "no %(need)d exist",
                        "%(asks)s; on %(node)s only %(passing)d devices pass its selectors and none is taken; "
                        "no %(need)d exist", p["passing"]) % {**p, "asks": _asks(p)}
    elif form == "too-few-free":
        text = ngettext("%(asks)s; on %(node)s only %(passing)d device passes its selectors, and %(device)s is "
                        "not free: %(reason)s",
                        "%(asks)s; on %(node)s only %(passing)d devices pass its selectors, and %(device)s is "
                        "not free: %(reason)s", p["passing"]) % {
            **p, "asks": _asks(p), "device": p["row"].device, "reason": _row_text(p["row"])}
    elif form == "held":
        parts = []
        if p["constrained"]:
            ruled = ngettext("%(devices)s is ruled out by a constraint: %(reason)s",
                             "%(devices)s are ruled out by a constraint: %(reason)s", len(p["constrained"])) % {
                "devices": _names(p["constrained"]), "reason": _row_text(p["constrained"][0])}
            if p["picked"]:
                ruled = _("with %(picked)s picked, %(ruled)s") % {"picked": ", ".join(p["picked"]), "ruled": ruled}
            parts.append(ruled)
        if p["other"]:
            parts.append(_("%(device)s would fit alone but %(reason)s") % {
                "device": p["other"][0].device, "reason": _row_text(p["other"][0])})
        if p["taken"]:
            parts.append(ngettext("%(devices)s is taken (%(reason)s)", "%(devices)s are taken (%(reason)s)",
                                  len(p["taken"])) % {"devices": _names(p["taken"]),
                                                      "reason": _row_text(p["taken"][0])})
        text = _("%(asks)s; %(parts)s") % {"asks": _asks(p), "parts": "; ".join(parts)}
    elif form == "no-combination":
        text = ngettext("%(asks)s; %(passing)d device passes its selectors, but no %(need)d of them fit together "
                        "with the other requests and constraints",
                        "%(asks)s; %(passing)d devices pass its selectors, but no %(need)d of them fit together "
                        "with the other requests and constraints", p["passing"]) % {**p, "asks": _asks(p)}
    else:
        return None
    if p.get("alternatives"):
        text = _("%(sentence)s; its other alternatives (%(alternatives)s) did not fit either") % {
            "sentence": text, "alternatives": ", ".join(p["alternatives"])}
    return text


def headline(explanation) -> Words:
    """The one sentence on the request the search could not satisfy: the engine's English, or the
    same sentence from its form and parts in the page's language."""
    sentence = explanation.headline or ""
    if in_source_language():
        return Words(str(sentence))
    text = _headline_text(sentence)
    return Words(text) if text is not None else _kept(str(sentence))
