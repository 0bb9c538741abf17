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


class Words(str):
    """A piece of text and the language it is really in (None: the page's own). A `str`, so a caller
    that reads it as text (a test, a join) gets the text itself."""

    lang: str | None

    def __new__(cls, text: str, lang: str | None = None):
        words = super().__new__(cls, text)
        words.lang = lang
        return words

    @property
    def text(self) -> str:
        return str.__str__(self)

    def __repr__(self) -> str:
        return f"Words({self.text!r}, lang={self.lang!r})"

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


# Why the kube-scheduler does not read a slice at all (pools.ignored_reason): fixed sentences, one entry each.
_IGNORED_SLICES = {text: text for text in (
    gettext_noop("it publishes sharedCounters and DRAPartitionableDevices is disabled"),
    gettext_noop("it sets perDeviceNodeSelection and DRAPartitionableDevices is disabled"),
    gettext_noop("a device declares compatibilityGroups and DRADeviceCompatibilityGroups is disabled"),
)}

# The allocator's own reasons for an invalid pool (pools_stable.go): shown verbatim, glossed by their shape.
_INVALID_POOL_GLOSSES = (
    (re.compile(r"duplicate device name (\S+)"), gettext_noop("two devices of the pool are named %(name)s.")),
    (re.compile(r"duplicate counter set name (\S+)"), gettext_noop("two counter sets of the pool are named %(name)s.")),
    (re.compile(r"counter set (\S+) not found"),
     gettext_noop("a device consumes counters from counter set %(name)s, which the pool does not have.")),
    (re.compile(r"counter (\S+) not found in counter set (\S+)"),
     gettext_noop("a device consumes counter %(name)s, which counter set %(set)s does not have.")),
)


def slice_reason(reason: str) -> Words:
    """Why the scheduler ignores a slice, in the active language."""
    word = _IGNORED_SLICES.get(reason)
    return Words(_(word)) if word and not in_source_language() else (Words(reason) if word else _kept(reason))


def pool_reason(reason: str) -> Words:
    """Why a pool is not usable: an incomplete pool's count said from its parts; an invalid pool's
    reason as the allocator writes it (see pool_reason_gloss)."""
    if in_source_language():
        return Words(reason)
    if getattr(reason, "form", "") == "incomplete":
        return Words(ngettext("%(visible)d of %(wanted)d slice (resourceSliceCount) of generation %(generation)d is "
                              "visible to the scheduler",
                              "%(visible)d of %(wanted)d slices (resourceSliceCount) of generation %(generation)d "
                              "are visible to the scheduler", reason.parts["wanted"]) % reason.parts)
    return _kept(reason)


def pool_reason_gloss(reason: str) -> str:
    """What an invalid pool's reason (the allocator's words) means, in the active language; "" otherwise."""
    if in_source_language() or getattr(reason, "form", ""):
        return ""
    for pattern, sentence in _INVALID_POOL_GLOSSES:
        found = pattern.fullmatch(reason or "")
        if found:
            return _(sentence) % {"name": found.group(1), "set": found.group(found.lastindex)}
    return ""


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
    gettext_noop("CPU, memory and hugepages that devices add to a pod's requests"),
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

_NODES_AVAILABLE = re.compile(r"(?:^|: )0/(\d+) nodes are available")


def gloss(message: str) -> str:
    """A sentence in the active language saying what a Kubernetes message means, or "" in English
    (the message says it already) and for messages this layer does not know."""
    if in_source_language() or not message:
        return ""
    found = _NODES_AVAILABLE.search(message)
    if found:
        total = int(found.group(1))
        if "Preemption is not helpful" in message:
            return _("Preemption would not help this pod either.")
        head = ngettext("None of the %(count)d node can take the pod.",
                        "None of the %(count)d nodes can take the pod.", total) % {"count": total}
        return _nodes_available_gloss(head, message[found.end():])
    if message.endswith(": ResourceClaim not created yet"):
        return _("The resourceclaim controller has not created the pod's ResourceClaim yet.")
    if message.endswith("(Pod is not owner)"):
        return _("The ResourceClaim the pod status records belongs to another owner, not to this pod.")
    if message.startswith("could not find ResourceClaim"):
        return _("The ResourceClaim the pod names does not exist.")
    if message == "no nodes available to schedule pods":
        return _("The cluster has no node the pod could be placed on.")
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


# What a counter set's compatibility groups are after some devices (counters.GroupState.describe):
# `{a, b}` stays, the two sentences without groups are said in the active language.
_GROUP_STATES = {"no devices yet": gettext_noop("no devices yet"),
                 "devices without groups": gettext_noop("devices without groups")}


def groups_state(text: str) -> str:
    word = _GROUP_STATES.get(text)
    return _(word) if word else text


def quoted_reason(text: str) -> Words:
    """A why row's reason another panel quotes (the groups panel's ✘): said as the row says it, from the
    row the text carries (an engine.sentence.Sentence of form `row`); the English otherwise."""
    if getattr(text, "form", "") == "row":
        return row_reason(text.parts["row"])
    return Words(text) if in_source_language() else _kept(text)


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
        values = {"set": f["counterSet"], "now": groups_state(f["groupsNow"]), "mine": mine}
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
    """The engine's headline (an `engine.sentence.Sentence`) said again from its form and parts."""
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


# --- the Pods panel: the scheduler's lines kept, ours said again from the pod's data ----------------------
#
# What the scheduler prints (`0/3 nodes are available: …`, a node's filter reason such as
# `node(s) had untolerated taint(s)` or `Insufficient cpu`) stays verbatim, marked `lang="en"`, with a
# gloss made from the pod's node verdicts. The playground's own sentences are made again from the typed
# data behind them; where that data does not hold a sentence's parts, the engine's English is shown,
# marked `lang="en"`.

_POD_OUTCOMES = {"scheduled": gettext_noop("scheduled"), "pending": "Pending",
                 "invalid": gettext_noop("invalid input"), "bound": gettext_noop("bound")}


def pod_outcome(outcome: str) -> Words:
    """A pod's badge. `Pending` is a Kubernetes phase and stays English (glossary §1.13)."""
    word = _POD_OUTCOMES.get(outcome)
    if in_source_language() or word is None:
        return Words(outcome)
    return _kept(word) if word == "Pending" else Words(_(word))


@functools.lru_cache(maxsize=None)
def _filter_reasons():
    from allocator.engine import cycle, nodefilter, noderesources, pods

    return {
        cycle.NO_SOLUTION: gettext_noop("the claims cannot all be allocated together"),
        nodefilter.NODE_AFFINITY: gettext_noop("the pod's node affinity or node selector does not match"),
        nodefilter.UNTOLERATED_TAINT: gettext_noop("a taint the pod does not tolerate"),
        nodefilter.UNSCHEDULABLE: gettext_noop("marked unschedulable"),
        nodefilter.NODE_NAME: gettext_noop("not the node the pod names"),
        nodefilter.NOT_IN_PREFILTER_RESULT: gettext_noop("left out by NodeAffinity before filtering"),
        nodefilter.AFFINITY_CONFLICT: gettext_noop("the pod's affinity terms conflict"),
        noderesources.TOO_MANY_PODS: gettext_noop("it already runs as many pods as it may"),
        pods.NOT_AVAILABLE: gettext_noop("an already allocated claim cannot be used there"),
    }


_INSUFFICIENT = "Insufficient "


def filter_reason_gloss(reason: str) -> str:
    """What one of the scheduler's per-node reasons means, in the active language ("" when unknown)."""
    if in_source_language() or not reason:
        return ""
    if reason.startswith(_INSUFFICIENT):
        return _("not enough %(resource)s free") % {"resource": reason[len(_INSUFFICIENT):]}
    word = _filter_reasons().get(reason)
    return _(word) if word else ""


def node_reason(verdict) -> Words:
    """A rejected node's reason: the scheduler's words, verbatim."""
    return _kept(verdict.reason or "")


def node_reason_gloss(verdict) -> str:
    """The gloss beside a rejected node's reason: each of its reasons said in the active language."""
    reasons = list(getattr(verdict, "reasons", None) or ([verdict.reason] if verdict.reason else []))
    glosses = [filter_reason_gloss(r) or _message_gloss(r) for r in reasons]
    return "" if not glosses or not all(glosses) else ", ".join(glosses)


def node_verdict(pod, verdict) -> str:
    """The verdict column of a pod's node table."""
    if not verdict.fits:
        return verdict_label(Verdict.REJECTED)
    if pod.outcome == "scheduled" and verdict.node == pod.node:
        return verdict_label(Verdict.CHOSEN)
    return "✔ " + _("fits")


def pod_message_gloss(pod) -> str:
    """The gloss beside a pod's message: the scheduler's `0/N nodes are available: …`, or another
    message Kubernetes prints, said in the active language from its data."""
    return _message_gloss(pod.message or "")


def _message_gloss(message: str) -> str:
    if in_source_language() or not message:
        return ""
    form = getattr(message, "form", "")
    if form == "gang-waiting":
        return _("The pod waits outside the scheduling queue until %(count)s pods of its gang %(group)s exist "
                 "(there are %(have)s).") % message.parts
    if form == "group-waiting":
        return _("The pod waits outside the scheduling queue until its PodGroup %(group)s exists.") % message.parts
    if form in ("group-unschedulable", "group-not-tried"):
        return _("Its pod group cannot be scheduled (%(reason)s), so no pod of it is bound.") % message.parts
    if getattr(message, "form", "") == "scheduling-gates":
        return ngettext("The pod waits until its scheduling gate %(gates)s is removed.",
                        "The pod waits until its scheduling gates %(gates)s are removed.",
                        len(message.parts["gates"])) % {"gates": ", ".join(message.parts["gates"])}
    return gloss(message)


def _nodes_available_gloss(head: str, histogram: str) -> str:
    """`0/N nodes are available: 1 cannot allocate all claims, 2 node(s) had untolerated taint(s).`
    glossed reason by reason, in the message's own order; just the head when a reason is not known."""
    parts = [re.fullmatch(r"(\d+) (.+)", part) for part in histogram.lstrip(": ").rstrip(".").split(", ")]
    if not parts or not all(parts):
        return head
    glossed = [(int(p.group(1)), filter_reason_gloss(p.group(2))) for p in parts]
    if not all(text for _n, text in glossed):
        return head
    said = ". ".join(ngettext("%(count)d node: %(reason)s", "%(count)d nodes: %(reason)s", n) % {
        "count": n, "reason": text} for n, text in glossed)  # Korean: one sentence per reason
    return _("%(sentence)s %(reasons)s.") % {"sentence": head, "reasons": said}


# A pod bound by `spec.nodeName` (engine/pods.py `_bound`), by the message's form; the Kubernetes messages
# among the parts (a claim's refusal, the scheduler's summary) stay as they are.
_BOUND = {
    "bound": gettext_noop("bound to node %(node)s by spec.nodeName: the scheduler does not place it again"),
    "bound-claim-error": gettext_noop(
        "bound to node %(node)s by spec.nodeName, but the kubelet cannot start it: %(error)s"),
    "bound-invalid": gettext_noop(
        "bound to node %(node)s by spec.nodeName, but the kubelet cannot start it while claim %(claims)s is not "
        "allocated; %(problem)s"),
    "bound-no-devices": gettext_noop(
        "bound to node %(node)s by spec.nodeName, but the kubelet cannot start it while claim %(claims)s is not "
        "allocated, and the scheduler would not find devices either: %(summary)s"),
    "bound-would-fit": gettext_noop(
        "bound to node %(node)s by spec.nodeName, but the kubelet cannot start it while claim %(claims)s is not "
        "allocated (only the scheduler allocates claims); it would find devices on %(chosen)s"),
}


def pod_message(pod) -> Words:
    """A pod's message line: the scheduler's message verbatim; the playground's own words said again
    from the message's form and parts."""
    message = pod.message or ""
    if in_source_language():
        return Words(message)
    form = getattr(message, "form", "")
    return Words(_(_BOUND[form]) % message.parts) if form in _BOUND else _kept(message)


def outcome_message(message) -> tuple[str, Words, str]:
    """A run's message, (before, the message, after): for a scheduling run, the first pod that is not
    scheduled, its message as the pod's line says it (the scheduler's words verbatim), and how many
    more are not; any other message as it is, in one piece."""
    if getattr(message, "form", "") != "pod-message" or in_source_language():
        return "", _kept(message or "") if not in_source_language() else Words(message or ""), ""
    p = message.parts
    inner = p["message"]
    form = getattr(inner, "form", "")
    words = Words(_(_BOUND[form]) % inner.parts) if form in _BOUND else _kept(inner)
    after = (" " + ngettext("(%(count)d more pod not scheduled)", "(%(count)d more pods not scheduled)",
                            p["more"]) % {"count": p["more"]}) if p["more"] else ""
    return _("pod %(pod)s:") % {"pod": p["pod"]} + " ", words, after


def outcome_message_text(message) -> str:
    before, words, after = outcome_message(message)
    return before + words.text + after


def _joint_sentence(joint) -> str | None:
    """The no-backtracking explanation (engine/backtrack.py) from its data: which assignment of the
    pods to nodes would have fit them all, or that none exists (or none was found within the bound)."""
    if joint.nodes:
        placed = ", ".join(_("%(pod)s on %(node)s") % {"pod": key, "node": joint.nodes[key]} for key in joint.pods)
        return ngettext(
            "the scheduler places pods one at a time and never revisits a placement, so this order leaves a pod "
            "Pending; yet %(placed)s would fit all of them (%(tried)d assignment tried)",
            "the scheduler places pods one at a time and never revisits a placement, so this order leaves a pod "
            "Pending; yet %(placed)s would fit all of them (%(tried)d assignments tried)",
            joint.tried) % {"placed": placed, "tried": joint.tried}
    if not joint.exhaustive:
        return _("the scheduler places pods one at a time; no assignment of these %(count)d pods to nodes that fits "
                 "them all was found within the search's bound (%(tried)d tried)") % {
            "count": len(joint.pods), "tried": joint.tried}
    return _("the scheduler places pods one at a time, but that is not why pods stay Pending here: no assignment "
             "of these %(count)d pods to nodes fits them all (%(tried)d tried, every one)") % {
        "count": len(joint.pods), "tried": joint.tried}


# What the playground does not check for a pod (nodefilter.unmodelled_features): the plugins' names stay.
_UNMODELLED = {
    "host ports (NodePorts)": gettext_noop("host ports (NodePorts)"),
    "persistent volumes (VolumeBinding, VolumeRestrictions, NodeVolumeLimits, VolumeZone)":
        gettext_noop("persistent volumes (VolumeBinding, VolumeRestrictions, NodeVolumeLimits, VolumeZone)"),
    "nominated node (status.nominatedNodeName)": gettext_noop("nominated node (status.nominatedNodeName)"),
}


# The engine's notes on a pod (engine/pods.py), by form; the parts fill them. An event message of
# Kubernetes among the parts stays as it is.
_NOTES = {
    "preenqueue": gettext_noop("the scheduler does not try the pod until this is resolved (PreEnqueue)"),
    "recorded-claim-missing": gettext_noop(
        "claim %(claim)s recorded in the pod status is missing; the resourceclaim controller makes a new one from "
        "the template"),
    "claim-not-created": gettext_noop(
        "the resourceclaim controller cannot create the claim (event FailedResourceClaimCreation: %(event)s)"),
    "group-template-missing": gettext_noop(
        "the resourceclaim controller cannot create PodGroup %(group)s's claim %(claim)s: the resource claim "
        "template %(template)s is not found"),
    "generic-gate-off": gettext_noop(
        "%(gate)s is off: the scheduler knows no PodGroups (the apiserver would drop spec.schedulingGroup), so the "
        "pod is scheduled on its own with claims of its own"),
    "node-allocatable-kept": gettext_noop(
        "not modelled: this pending pod already carries status.nodeAllocatableResourceClaimStatuses; when "
        "kube-scheduler writes the ones it works out, it merges them into these by claim name (a strategic merge "
        "patch), and the playground shows the ones it works out alone"),
    "group-missing": gettext_noop(
        "the pod belongs to PodGroup %(group)s, which the scenario does not hold: kube-scheduler keeps the pod out of "
        "its scheduling queue (GangScheduling PreEnqueue) until that PodGroup exists"),
    "gang-short": gettext_noop(
        "PodGroup %(group)s asks for gang scheduling (minCount %(count)s) and the scenario holds %(have)s of its pods: "
        "kube-scheduler keeps them all out of its scheduling queue (GangScheduling PreEnqueue) until %(count)s exist, "
        "so none is scheduled"),
    "group-claims-gate-off": gettext_noop(
        "%(gate)s is off: PodGroup %(group)s's resourceClaims are not consulted, every pod gets and reserves claims "
        "of its own"),
    "gang": gettext_noop(
        "PodGroup %(group)s asks for gang scheduling (minCount %(count)s): kube-scheduler takes its pending pods "
        "together in one pod group cycle and binds all of them or none"),
    "group-cycle": gettext_noop(
        "PodGroup %(group)s: kube-scheduler takes its pending pods together in one pod group cycle, at the turn of the "
        "first of them, and binds each one that fits"),
    "gang-failed": gettext_noop(
        "PodGroup %(group)s is a gang (minCount %(count)s) and pod %(pod)s does not fit (%(message)s), so fewer than "
        "%(count)s of its pods can be scheduled: kube-scheduler binds none of them and this pod stays Pending although "
        "a node was found for it"),
    "gang-failed-none": gettext_noop(
        "PodGroup %(group)s cannot have %(count)s of its pods scheduled: kube-scheduler binds none of them in this "
        "cycle"),
    "gang-blocked": gettext_noop(
        "PodGroup %(group)s is a gang (minCount %(count)s): because this pod does not fit, fewer than %(count)s of its "
        "pods can be scheduled, and kube-scheduler binds none of them"),
    "binding-conditions": gettext_noop(
        "not bound yet: device %(device)s of claim %(claim)s has bindingConditions %(conditions)s; kube-scheduler "
        "waits in PreBind (event \"waiting for binding conditions for device on node %(node)s\"), checking every "
        "%(poll)s s for up to %(timeout)s s, until the driver sets them True in the claim's status.devices; a "
        "bindingFailureCondition (%(failures)s) set True, or the timeout, fails this attempt: the pod leaves the "
        "claim's reservedFor, and its next attempt deallocates the claim to try other devices"),
    "shared-claim": gettext_noop(
        "claim %(claim)s is allocated and in use by %(users)s: the pod shares it, so it can only run where that "
        "allocation is available"),
    "not-modelled": gettext_noop(
        "not modelled: this pod's %(features)s; its node, verdicts and scores may differ from the scheduler's, and "
        "so may those of the pods after it"),
}


def _note_sentence(form: str, p: dict) -> str | None:
    """One of the engine's notes on a pod from its form and parts; None for a form this layer does not know."""
    if form not in _NOTES:
        return None
    if form == "shared-claim":
        p = {**p, "users": ", ".join(p["users"])}
    elif form == "binding-conditions":
        p = {**p, "conditions": ", ".join(p["conditions"]), "failures": ", ".join(p["failures"])}
    elif form == "not-modelled":
        if not all(f in _UNMODELLED for f in p["features"]):
            return None
        p = {**p, "features": ", ".join(_(_UNMODELLED[f]) for f in p["features"])}
    return _(_NOTES[form]) % p


def pod_note(pod, note: str) -> Words:
    """One of a pod's notes in the active language."""
    if in_source_language():
        return Words(note)
    joint = getattr(pod, "joint", None)
    if joint is not None and note == joint.message:
        return Words(_joint_sentence(joint))
    text = _note_sentence(getattr(note, "form", ""), getattr(note, "parts", {}))
    return Words(text) if text is not None else _kept(note)


def pod_detail(detail: str) -> Words:
    """A number behind a rejected node's filter reason (engine/pods.py): a taint the pod does not
    tolerate, or what NodeResourcesFit found short."""
    if in_source_language():
        return Words(detail)
    form, p = getattr(detail, "form", ""), getattr(detail, "parts", {})
    if form == "taint":
        return Words(_("taint %(taint)s is not tolerated") % p)
    if form == "shortfall":
        return Words(_("%(resource)s: the pod asks %(requested)s, %(used)s of %(capacity)s in use") % p)
    if form == "shortfall-claims":
        return Words(_("%(resource)s: the pod asks %(requested)s (%(added)s of it for its claims' devices), %(used)s "
                       "of %(capacity)s in use") % p)
    return _kept(detail)


# The scheduling run's own warnings (engine/pods.py), by form. Warnings from elsewhere (the apiserver's,
# the workloads') stay as they are written.
_WARNINGS = {
    "pods-not-modelled": gettext_noop(
        "Pods: host ports, volumes and priority are not checked, nor the default topology spread a Service or "
        "ReplicaSet would give a pod without constraints; nodes are filtered by spec.nodeName, unschedulable, "
        "taints, nodeSelector and required node affinity, resource requests (NodeResourcesFit), topology spread "
        "constraints (PodTopologySpread), pod (anti-)affinity (InterPodAffinity) and DRA. A Pending pod's message "
        "leaves out the preemption part the scheduler appends"),
    "nothing-to-schedule": gettext_noop("every Pod already has spec.nodeName: nothing to schedule"),
    "no-nodes": gettext_noop("the scenario has no Node objects: the nodes that ResourceSlices name stand in for "
                             "them, without labels or taints"),
    "extended-resource-classes": gettext_noop(
        "DeviceClasses %(classes)s all name the extended resource %(resource)s: the playground uses %(newest)s, "
        "the newest"),
}


def _listed(names: list, more: int) -> str:
    listed = ", ".join(names)
    return _("%(names)s and %(count)d more") % {"names": listed, "count": more} if more else listed


# What the playground says of a workload it expands into pods (engine/workloads.py), by form.
_WORKLOAD_NOTES = {
    "replica-set-in-input": gettext_noop(
        "its ReplicaSet is in the input: the ReplicaSet's pods stand for the Deployment's"),
    "template-hash-estimate": gettext_noop(
        "pod-template-hash %(hash)s is an estimate, not the one a cluster computes: %(why)s; its ReplicaSet's and "
        "pods' names differ from a real cluster's"),
    "revision-hash-estimate": gettext_noop(
        "controller-revision-hash %(hash)s is an estimate, not the one a cluster computes: %(why)s"),
    "ordered-ready": gettext_noop(
        "podManagementPolicy OrderedReady: the controller creates each pod once the one before it is Running and "
        "Ready; here all are scheduled in ordinal order"),
    "job-suspended": gettext_noop("suspended (spec.suspend): the Job controller creates no pods"),
    "cron-job-suspended": gettext_noop("suspended (spec.suspend): the CronJob controller starts no Job"),
    "cron-job-one-job": gettext_noop(
        "the pods of one Job the CronJob would start (its schedule is not run; the Job's name stands for the one of "
        "a scheduled time)"),
    "daemon-set-no-nodes": gettext_noop(
        "the scenario has no Node objects: a DaemonSet runs one pod per node, so it has none here"),
    "too-many-pods": gettext_noop("%(count)s pods to make; the first %(max)s are scheduled, the rest left out"),
    "zero-replicas": gettext_noop("0 replicas: its controller creates no pods"),
    "all-pods-present": gettext_noop("the input already holds all %(have)s of its pods: none made"),
    "some-pods-present": gettext_noop("the input already holds %(have)s of its %(wanted)s pods: %(made)s made"),
    # The apiserver-style detail ("Required value: …", "Invalid value: …") stays as written.
    "workload-not-expanded": gettext_noop("%(detail)s (so no pods are made)"),
    "workload-unreadable": gettext_noop("cannot read the workload (%(error)s), so no pods are made"),
}
# Why a DaemonSet makes no pod for a node (engine/workloads.daemon_nodes).
_DAEMON_SKIPS = {
    "node-name": gettext_noop("the template's spec.nodeName is %(node)s"),
    "node-selector": gettext_noop("the node does not match the template's nodeSelector"),
    "node-affinity": gettext_noop("the node does not match the template's required node affinity"),
    "node-affinity-unparsed": gettext_noop("the template's required node affinity cannot be parsed"),
    "taint": gettext_noop("the pods do not tolerate the node's taint %(taint)s"),
}


def _daemon_nodes_left(p: dict) -> str:
    shown = "; ".join(f"{node}: {_(_DAEMON_SKIPS[why.form]) % why.parts}" for node, why in p["skipped"])
    if p["more"]:
        shown = _("%(nodes)s and %(count)s more") % {"nodes": shown, "count": p["more"]}
    return ngettext("%(count)s node (%(nodes)s)", "%(count)s nodes (%(nodes)s)", p["count"]) % {
        "count": p["count"], "nodes": shown}


def _workload_sentence(form: str, p: dict) -> str | None:
    if form in _WORKLOAD_NOTES:
        return _(_WORKLOAD_NOTES[form]) % p
    if form in ("daemon-set-nodes-left", "daemon-set-no-node"):
        if not all(getattr(why, "form", "") in _DAEMON_SKIPS for _node, why in p["skipped"]):
            return None
        if form == "daemon-set-nodes-left":
            return _("no pod on %(nodes)s") % {"nodes": _daemon_nodes_left(p)}
        if not p["count"]:
            return _("no node would run its pod")
        return _("no node would run its pod: %(nodes)s") % {"nodes": _daemon_nodes_left(p)}
    return None


def _warning_sentence(message) -> str | None:
    form, p = getattr(message, "form", ""), getattr(message, "parts", {})
    workload = _workload_sentence(form, p)
    if workload is not None:
        return workload
    if form in _WARNINGS:
        return _(_WARNINGS[form]) % ({"classes": ", ".join(p["classes"]), "resource": p["resource"],
                                       "newest": p["classes"][0]} if p else {})
    if form == "daemon-pods-left-out":
        return ngettext("%(count)d DaemonSet pod made for other nodes than %(node)s left out: the run asks about "
                        "that node only",
                        "%(count)d DaemonSet pods made for other nodes than %(node)s left out: the run asks about "
                        "that node only", p["count"]) % p
    if form == "claims-unused":
        return _("ResourceClaim %(claims)s: not used by any Pod, so not allocated (the scheduler allocates a claim "
                 "for the pod that uses it)") % {"claims": _listed(p["claims"], p["more"])}
    if form == "no-allocatable":
        return _("node %(nodes)s: no status.allocatable, so CPU, memory and pod count are not checked there (a "
                 "cluster dump has it; add it to a hand-written Node to model NodeResourcesFit)") % {
            "nodes": _listed(p["nodes"], p["more"])}
    return None


def warning_message(message) -> Words:
    """A warning's message in the active language: the scheduling run's own from their form and parts;
    any other (the apiserver's, a workload's) as written, marked `lang="en"` on a page in another language."""
    if in_source_language():
        return Words(message)
    text = _warning_sentence(message)
    return Words(text) if text is not None else _kept(message)


def warning_line(problem) -> str:
    """A warning as the report prints it (Problem.render), its message in the active language."""
    from dataclasses import replace

    text = _warning_sentence(problem.message) if not in_source_language() else None
    return (problem if text is None else replace(problem, message=text)).render()


_ONE_FEASIBLE = gettext_noop("one feasible node: the scheduler takes it without scoring")


def ranking_note(pod) -> Words:
    """The note under a pod's scores, its parts said again from the ranking when they are the ones the
    engine writes (a skipped plugin, a tie); otherwise the engine's English."""
    from allocator.engine import scoring

    ranking = pod.ranking
    note = (ranking.note if ranking else "") or ""
    if in_source_language() or not note:
        return Words(note)
    if note == _ONE_FEASIBLE:
        return Words(_(_ONE_FEASIBLE))
    english, said = [], []
    if ranking.scores and not any(scoring.BALANCED in s.plugins for s in ranking.scores):
        english.append(f"{scoring.BALANCED} skips a pod that requests no CPU or memory")
        said.append(_("%(plugin)s skips a pod that requests no CPU or memory") % {"plugin": scoring.BALANCED})
    if len(ranking.tied) > 1:
        tied = ranking.tied
        english.append(f"{len(tied)} nodes share the best score ({', '.join(tied)}): the scheduler picks one "
                       f"of them at random; the playground shows {tied[0]}, the first by name")
        said.append(_("%(count)d nodes share the best score (%(nodes)s): the scheduler picks one of them at random; "
                      "the playground shows %(first)s, the first by name") % {
            "count": len(tied), "nodes": ", ".join(tied), "first": tied[0]})
    return Words("; ".join(said)) if "; ".join(english) == note else _kept(note)


def workload_label(workload: str) -> Words:
    """The workload a pod was made for (engine/workloads.py's sentence of form `workload`: kinds and
    names stay as they are), in the active language."""
    if in_source_language():
        return Words(workload)
    if getattr(workload, "form", "") != "workload":
        return _kept(workload)
    p = workload.parts
    if p["estimated"]:
        return Words(_("%(workload)s (%(via)s, pod-template-hash estimated)") % p)
    return Words(workload)


def workload_line(workload: str, count: int) -> str:
    """The heading over the pods a workload's controller made."""
    return ngettext("Pods made for %(workload)s (%(count)d, as its controller would create it)",
                    "Pods made for %(workload)s (%(count)d, as its controller would create them)", count) % {
        "workload": workload_label(workload).text, "count": count}


def score_label(plugin: str) -> str:
    """A scoring plugin's short label in the score column."""
    word = _SCORE_LABELS.get(plugin)
    return _(word) if word else plugin


_SCORE_LABELS = {
    "TaintToleration": gettext_noop("taints"), "NodeAffinity": gettext_noop("affinity"),
    "NodeResourcesFit": gettext_noop("least allocated"), "NodeResourcesBalancedAllocation": gettext_noop("balanced"),
    "ImageLocality": gettext_noop("images"), "DynamicResources": "DRA",
}


# --- compare: the table of differences (allocator/compare.py) -----------------------------------------

_DIFFERENCE_KINDS = {"outcome": gettext_noop("outcome"), "claim": gettext_noop("claim"),
                     "devices": gettext_noop("devices"), "counter": gettext_noop("counter"),
                     "row": gettext_noop("why row"), "pool": gettext_noop("pool"), "pod": gettext_noop("pod")}

_CODE_WORDS = {
    RowCode.SELECTOR: gettext_noop("selector"), RowCode.BINDING_GATE: gettext_noop("binding conditions gate"),
    RowCode.DEVICE_NODE: gettext_noop("device's node selection"),
    RowCode.NODE_OPS_GATE: gettext_noop("optional node operations gate"),
    RowCode.NODE_OPS_UNDECLARED: gettext_noop("feature the node does not declare"),
    RowCode.PARTITIONABLE_GATE: gettext_noop("partitionable devices gate"), RowCode.TAINT: gettext_noop("taint"),
    RowCode.CAPACITY_MISSING: gettext_noop("capacity missing"), RowCode.POLICY: "requestPolicy",
    RowCode.NO_ROOM: gettext_noop("no room"), RowCode.IN_USE: gettext_noop("in use"),
    RowCode.SAME_CLAIM: gettext_noop("same claim"), RowCode.GROUPS: gettext_noop("compatibility groups"),
    RowCode.COUNTER: gettext_noop("counter"), RowCode.CAPACITY: gettext_noop("capacity"),
    RowCode.CONSTRAINT: gettext_noop("constraint"), RowCode.GIVEN_UP: gettext_noop("given up"),
    RowCode.BACKTRACKED: gettext_noop("backtracked"),
}
_OUTCOME_WORDS = {"allocated": gettext_noop("allocated"), "unsatisfiable": gettext_noop("cannot allocate"),
                  "invalid": gettext_noop("invalid input")}


def difference_kind(kind: str) -> Words:
    word = _DIFFERENCE_KINDS.get(kind)
    return Words(kind) if in_source_language() or word is None else Words(_(word))


def row_code_word(value: str) -> Words:
    """A why row's code or verdict as one word (the compare table's `row` cells)."""
    if value in {v.value for v in Verdict}:
        return Words(verdict_word(Verdict(value)))
    try:
        word = _CODE_WORDS.get(RowCode(value))
    except ValueError:
        word = None
    if word is None:
        return _kept(value)
    return Words(_(word)) if word != "requestPolicy" else _kept(word)


def difference_value(kind: str, english: str, raw) -> Words:
    """One side of a row of the table of differences, in the active language, from its data: the
    English is the same data said by allocator/compare.py (and is what shows on an English page)."""
    if in_source_language():
        return Words(english)
    absent = Words(_("absent"))
    if kind == "outcome" and raw is not None:
        if raw.node:
            return Words(_("%(outcome)s on %(node)s") % {"outcome": _(_OUTCOME_WORDS.get(str(raw.outcome), raw.outcome)),
                                                        "node": raw.node})
        return Words(_(_OUTCOME_WORDS[str(raw.outcome)])) if str(raw.outcome) in _OUTCOME_WORDS else _kept(english)
    if raw is None and kind in ("pool", "pod"):
        return absent
    if kind == "pool":
        return Words(pool_state(raw))
    if kind == "pod":
        return pod_outcome(raw) if raw in _POD_OUTCOMES else Words(raw)
    if kind == "claim":
        if raw == "absent":
            return absent
        if raw is None:
            return Words(claim_state("pending"))
        return Words(_("allocated: %(devices)s") % {"devices": ", ".join(raw)})
    if kind == "row" and raw is not None:
        return row_code_word(raw)
    return Words(english)


# --- who may write a claim's status (engine/statusauth): our words; RBAC's and the apiserver's kept ---------

_STATUS_CHECKS = {"front door": gettext_noop("front door"), "binding": gettext_noop("binding check"),
                  "associated node": gettext_noop("associated-node check"),
                  "arbitrary node": gettext_noop("arbitrary-node check")}
_SA_USER = "system:serviceaccount:"


def status_check(name: str) -> str:
    """One of the apiserver's checks of a status write (statusauth.whatif: front door, binding, …)."""
    word = _STATUS_CHECKS.get(name)
    return name if in_source_language() or word is None else _(word)


def status_checks(names) -> str:
    return ", ".join(status_check(n) for n in names)


def status_allowance(check: dict) -> Words:
    """Why a check let a write through: the binding, the role and the rule that grant it (the panel's
    English is "check: RBAC's reason — role, rule", RBAC's reason verbatim)."""
    english = f"{check['check']}: {check['reason']} — {check['role']}, {check['rule']}"
    if in_source_language():
        return Words(english)
    # Marked with the page's language: the panel shows these lines inside an English paragraph.
    return Words(_("%(check)s: %(binding)s grants %(role)s, whose %(rule)s allows it") % {
        "check": status_check(check["check"]), "binding": check["binding"], "role": check["role"],
        "rule": check["rule"]}, active())


def status_writer(writer: dict) -> Words:
    """A writer's row label, made again from the writer's data (statusauth.whatif.Writer); the
    engine's English label where the data does not rebuild it."""
    label = writer["label"]
    if in_source_language():
        return Words(label)
    node, user = writer.get("node"), (writer.get("user") or {}).get("name") or ""
    verb = {"update": "PUT", "patch": "PATCH"}.get(writer.get("verb"), "")
    key = writer["key"]
    if key == "identity":
        if user.startswith(_SA_USER):
            who_en = "service account " + user[len(_SA_USER):].replace(":", "/", 1)
            who = _("service account %(name)s") % {"name": user[len(_SA_USER):].replace(":", "/", 1)}
        else:
            who_en, who = f"user {user}", _("user %(name)s") % {"name": user}
        if label != who_en + (f" on {node}" if node else "") + f" ({verb})":
            return _kept(label)
        if node:
            who = _("%(writer)s on node %(node)s") % {"writer": who, "node": node}
        return Words(f"{who} ({verb})")
    if key.startswith("plugin:") and node:
        workload = key[len("plugin:"):].rpartition("@")[0]
        name = workload.rpartition("/")[2]
        if label == f"{name} on {node}":
            return Words(_("%(writer)s on node %(node)s") % {"writer": name, "node": node})
        drivers = writer.get("drivers") or []
        if len(drivers) == 1 and label == f"{drivers[0]} plugin ({workload}) on {node}":
            return Words(_("%(driver)s plugin (%(account)s) on node %(node)s") % {
                "driver": drivers[0], "account": workload, "node": node})
    return _kept(label)


# --- the CLI's readable report (`manage.py allocate --lang ko`) and the API's `?lang=` text ---------------
#
# The report has the shape of engine/report.py's English one, line for line; Kubernetes' messages, the
# apiserver's validation errors and names stay as they are. JSON and YAML output never change language.

_MARKS = {Verdict.CHOSEN: "+", Verdict.TRIED: "~", Verdict.REJECTED: "-"}


def _outcome_line(outcome) -> list[str]:
    kind = str(outcome.outcome)
    if kind == "allocated":
        return [_("Allocated on node %(node)s.") % {"node": outcome.node}]
    if kind == "invalid":
        return [_("Invalid input:")] + [f"  - {p.render()}" for p in outcome.problems]
    said = gloss(outcome.message or "")
    return [_("Cannot allocate: %(message)s") % {"message": outcome.message}] + ([f"  ({said})"] if said else [])


def _why_lines(explanation, *, max_devices: int, pod: str = "") -> list[str]:
    if not explanation:
        return []
    title = (_("Why (pod %(pod)s, node %(node)s):") % {"pod": pod, "node": explanation.node} if pod else
             _("Why (node %(node)s):") % {"node": explanation.node})
    lines = ["", title]
    if explanation.headline:
        lines.append(f"  {headline(explanation).text}")
    if explanation.blocked_at:
        lines.append("  " + _("the search got no further than claim %(claim)s, request %(request)s") % {
            "claim": explanation.blocked_at.claim, "request": explanation.blocked_at.request})
    if explanation.approximate:
        lines.append("  " + _("note: %(note)s") % {"note": explanation.approximate})
    for pool in explanation.pools:
        if not pool.usable:
            said = pool_reason_gloss(pool.reason) if pool.reason else ""
            lines.append("  " + _("pool %(pool)s is %(state)s") % {"pool": pool.pool, "state": pool_state(pool.state)}
                         + (f": {pool_reason(pool.reason).text}" if pool.reason else "") + (f" ({said})" if said else ""))
    for claim, request in explanation.requests():
        lines.append("  " + ngettext("%(claim)s request %(request)s (class %(class)s, %(count)d device):",
                                     "%(claim)s request %(request)s (class %(class)s, %(count)d devices):",
                                     request.count) % {
            "claim": claim.claim, "request": request.request, "class": request.device_class_name,
            "count": request.count})
        shown = [c for c in request.candidates if c.picked]
        others = [c for c in request.candidates if not c.picked]
        listed = {id(c) for c in shown + others[:max(max_devices - len(shown), 0)]}
        for row in request.candidates:
            if id(row) in listed:
                lines.append(f"    {_MARKS.get(row.verdict, '.')} {row.pool}/{row.device}: {row_reason(row).text}")
        rest = [c for c in request.candidates if id(c) not in listed]
        if rest:
            lines.append("    " + _("… and %(count)d more; -o json --explain lists every device") % {"count": len(rest)})
        if not request.candidates:
            lines.append("    " + _("(no devices in usable pools on this node)"))
    for cs in explanation.counter_sets:
        usage = ", ".join(_("%(counter)s %(free)s free of %(total)s") % {
            "counter": c.counter, "free": c.free, "total": c.total} for c in cs.counters)
        lines.append("  " + _("counter set %(set)s: %(usage)s") % {"set": f"{cs.pool}/{cs.counter_set}", "usage": usage})
    return lines


def _claim_lines(claims) -> list[str]:
    lines = []
    for claim in claims:
        meta = claim["metadata"]
        allocation = (claim.get("status") or {}).get("allocation")
        lines += ["", _("Claim %(claim)s:") % {"claim": f"{meta['namespace']}/{meta['name']}"}]
        if not allocation:
            lines.append("  " + _("not allocated"))
            continue
        for r in allocation["devices"]["results"]:
            lines.append(f"  {r['request']}: {r['driver']}/{r['pool']}/{r['device']}")
    return lines


def _pod_report_lines(pod) -> list[str]:
    outcome = pod_outcome(pod.outcome).text
    head = _("Pod %(pod)s: %(outcome)s") % {"pod": pod.key, "outcome": outcome}
    if pod.outcome == "scheduled":
        head = _("Pod %(pod)s: scheduled on node %(node)s") % {"pod": pod.key, "node": pod.node}
    lines = [head]
    if pod.message:
        lines.append("  " + pod_message(pod).text)
        said = pod_message_gloss(pod)
        if said:
            lines.append(f"  ({said})")
    if getattr(pod, "workload", None):
        lines.append("  " + _("made by %(workload)s") % {"workload": workload_label(pod.workload).text})
    for claim in pod.claims:
        name = f"{claim.namespace}/{claim.name}" if claim.name else "—"
        lines.append("  " + _("claim %(claim)s (%(name)s):") % {"claim": claim.pod_claim_name, "name": name})
        if not claim.allocation:
            lines.append("    " + _("not allocated"))
            continue
        for r in claim.allocation["devices"]["results"]:
            lines.append(f"    {r['request']}: {r['driver']}/{r['pool']}/{r['device']}")
    if pod.nodes:
        lines.append("  " + _("nodes:"))
        for verdict in pod.nodes:
            if verdict.fits:
                lines.append(f"    {verdict.node}: {node_verdict(pod, verdict)}")
            else:
                said = node_reason_gloss(verdict)
                details = "; ".join(pod_detail(d).text for d in verdict.details)
                lines.append(f"    {verdict.node}: {verdict.reason}" + (f" ({said})" if said else "")
                             + (f" [{details}]" if details else ""))
    if pod.ranking is not None and pod.ranking.note:
        lines.append("  " + _("scoring: %(note)s") % {"note": ranking_note(pod).text})
    for note in pod.notes:
        lines.append("  " + _("note: %(note)s") % {"note": pod_note(pod, note).text})
    return lines


def human_report(outcome, *, max_devices: int = 16) -> str:
    """engine/report.py's readable report, in the active language."""
    lines: list[str] = []
    if outcome.pods is not None:
        kind = str(outcome.outcome)
        if kind == "invalid" and not outcome.pods:
            lines = _outcome_line(outcome)
        elif kind == "invalid":
            lines = [_("Cannot schedule: %(message)s") % {"message": outcome_message_text(outcome.message)}]
        elif kind == "allocated":
            scheduled = sum(1 for pod in outcome.pods if pod.outcome == "scheduled")
            lines = [ngettext("Scheduled %(count)d pod.", "Scheduled %(count)d pods.", scheduled) % {"count": scheduled}
                     if scheduled else _("No pod to schedule.")]
        else:
            lines = [_("Pending: %(message)s") % {"message": outcome_message_text(outcome.message)}]
        for warning in outcome.warnings:
            lines.append(_("Warning: %(warning)s") % {"warning": warning_line(warning)})
        for pod in outcome.pods:
            lines += [""] + _pod_report_lines(pod)
        for pod in outcome.pods:
            lines += _why_lines(pod.explanation, max_devices=max_devices, pod=pod.key)
        return "\n".join(lines + _status_writer_lines(outcome.status_writers)) + "\n"
    lines = _outcome_line(outcome)
    for warning in outcome.warnings:
        lines.append(_("Warning: %(warning)s") % {"warning": warning_line(warning)})
    if len(outcome.verdicts) > 1 or (outcome.verdicts and not outcome.verdicts[0].fits):
        lines += ["", _("Nodes tried:")]
        for v in outcome.verdicts:
            state = _("fits") if v.fits else v.message
            lines.append("  " + ngettext("%(node)s: %(state)s (%(steps)d search step)",
                                         "%(node)s: %(state)s (%(steps)d search steps)", v.steps) % {
                "node": v.node, "state": state, "steps": v.steps})
    lines += _claim_lines(outcome.claims)
    lines += _why_lines(outcome.explanation, max_devices=max_devices)
    return "\n".join(lines + _status_writer_lines(outcome.status_writers)) + "\n"


def _status_writer_lines(data: dict | None) -> list[str]:
    """The report's status what-if (statusauth.outcome.report_lines, in the active language)."""
    if data is None:
        return []
    from allocator.engine.statusauth.whatif import GRANULAR_GATE

    writers = {w["key"]: status_writer(w).text for w in data["writers"]}
    title = (_("Who may write each claim's status:") if data["gates"][GRANULAR_GATE] else
             _("Who may write each claim's status (%(gate)s off: the front door only):") % {"gate": GRANULAR_GATE})
    lines = ["", title]
    for claim in data["claims"]:
        pinned = (_("pinned to node %(node)s") % {"node": claim["pinnedToNode"]} if claim["pinnedToNode"]
                  else _("not pinned to one node"))
        lines.append(f"  {claim['claim']} ({pinned}):")
        for cell in claim["cells"]:
            what = f"    {writers[cell['writer']]}, {cell['write']}: "
            if cell["allowed"]:
                lines.append(what + _("allowed"))
            else:
                lines.append(what + _("refused (%(status)s, %(failed)s)") % {
                    "status": cell["status"], "failed": status_checks(cell["failed"])} + f": {cell['message']}")
    if data.get("omittedClaims"):
        lines.append("  " + _("… and %(count)d more allocated claims") % {"count": data["omittedClaims"]})
    return lines


def api_text(outcome) -> dict:
    """The `text` object `?lang=` adds to the API's answer: the answer's sentences in the active
    language, each beside the key it says again (the English keys never change)."""
    text: dict = {"lang": active(), "outcome": _(_OUTCOME_WORDS.get(str(outcome.outcome), str(outcome.outcome))),
                  "messageGloss": gloss(outcome.message or "") or None}
    explanation = outcome.explanation
    if explanation is not None:
        text["headline"] = headline(explanation).text if explanation.headline else None
        text["reasons"] = [{"claim": claim.claim, "request": request.request, "pool": row.pool, "device": row.device,
                            "reason": row_reason(row).text}
                           for claim, request in explanation.requests() for row in request.candidates]
    if outcome.pods is not None:
        text["pods"] = [{"pod": pod.key, "outcome": pod_outcome(pod.outcome).text,
                         "message": pod_message(pod).text if pod.message else None,
                         "messageGloss": pod_message_gloss(pod) or None,
                         "notes": [pod_note(pod, n).text for n in pod.notes],
                         "headline": headline(pod.explanation).text if pod.explanation and pod.explanation.headline
                         else None}
                        for pod in outcome.pods]
    text["warnings"] = [{"line": warning.line, "message": warning_message(warning.message).text}
                        for warning in outcome.warnings]
    return text


def with_api_text(answer: bytes, outcome) -> bytes:
    """The API's answer with its `text` object; reasons only for the rows the (bounded) answer holds."""
    import json

    data = json.loads(answer)
    text = api_text(outcome)
    if "reasons" in text:
        held = {(c.get("claim"), r.get("request"), row.get("pool"), row.get("device"))
                for c in ((data.get("explanation") or {}).get("claims") or ())
                for r in c.get("requests") or () for row in r.get("candidates") or ()}
        text["reasons"] = [r for r in text["reasons"] if (r["claim"], r["request"], r["pool"], r["device"]) in held]
    data["text"] = text
    return json.dumps(data, ensure_ascii=False).encode("utf-8")


# --- the replay's step texts (panels.replay_data) ---------------------------------------------------------

# What a refusal met at some moment of the search says from its code alone, when the replay did not
# keep its facts (Replay.refusals): a refusal the why table holds is said as the table says it, another
# from its facts, and from its code only when neither is there.
_REFUSED_BY = {
    **_WOULD_FAIL,
    RowCode.NO_ROOM: gettext_noop("no room is left on it for the request"),
    RowCode.IN_USE: gettext_noop("in use: another request or claim holds it at this point of the search"),
    RowCode.SAME_CLAIM: gettext_noop("already picked for this claim"),
    RowCode.GROUPS: gettext_noop("its compatibility groups do not fit the counter set's at this point"),
    RowCode.COUNTER: gettext_noop("a counter of its counter set has too little left at this point"),
    RowCode.CAPACITY: gettext_noop("its capacity has too little left at this point"),
    RowCode.CONSTRAINT: gettext_noop("a constraint of the claim rules it out with the devices picked so far"),
}


def replay_strings(explanation) -> list:
    """The replay's strings in the active language: a refusal the why table holds as the table says
    it; another from the facts the replay kept (from its code alone without them); names and the
    search's own words (the script's catalogue says those) as they are."""
    strings = explanation.trace.strings
    if in_source_language():
        return strings
    said = {}
    for row in explanation.rows():
        if row.verdict == Verdict.REJECTED and row.reason not in said:
            words = row_reason(row)
            if words.lang is None:
                said[row.reason] = words.text
    out = [said.get(text, text) for text in strings]
    refusals = getattr(explanation.trace, "refusals", None) or {}
    for step in explanation.trace.steps:  # [kind, claim, request, pool, device, text, counters, code]
        text, code = step[5], step[7]
        if code is None or text is None or strings[text] in said:
            continue
        try:
            code = RowCode(strings[code])
        except ValueError:
            continue
        met = refusals.get(text)
        sentence = _refusal_sentence(code, met.get("facts") or {}, met.get("heldBy") or []) if met else None
        if sentence is None and code in _REFUSED_BY:
            sentence = _(_REFUSED_BY[code])
        if sentence is not None:
            out[text] = sentence
    return out
