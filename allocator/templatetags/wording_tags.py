"""The wording layer (allocator.wording) in templates: a row's reason, a verdict, a gloss beside a
Kubernetes message, an example's notes, all in the page's language."""
from django import template
from django.utils.html import format_html

from allocator import wording

register = template.Library()


def words_html(words: wording.Words):
    if words.lang:
        return format_html('<span lang="{}">{}</span>', words.lang, words.text)
    return words.text


@register.filter
def notes_in(example, _language=None) -> dict:
    """`{% with notes=example|notes_in:LANGUAGE_CODE %}`: the example's title and notes."""
    return wording.example_notes(example)


# Filters that hand their value to the wording function of the same name and show its text as it is.
for _name in ("stage_name", "claim_state", "pool_state", "gate_summary", "verdict_label", "score_label",
              "groups_state"):
    register.filter(_name, getattr(wording, _name))

# Filters whose wording function answers in `Words`: shown inside a `lang` span when the words are in
# another language than the page's. `{{ row|reason }}` a why row's reason, `{{ pod.outcome|pod_outcome }}`
# a pod's badge, `{{ pod|ranking_note }}` the note under its scores, `{{ d|pod_detail }}` a number behind
# a node's filter reason, `{{ s.reason|slice_reason }}` why the scheduler ignores a slice,
# `{{ m.rejected|quoted_reason }}` a why row's reason another panel quotes, `{{ w.message|warning_message }}`
# a warning.
for _name, _words in (("reason", wording.row_reason), ("pod_outcome", wording.pod_outcome),
                      ("ranking_note", wording.ranking_note), ("pod_detail", wording.pod_detail),
                      ("slice_reason", wording.slice_reason), ("quoted_reason", wording.quoted_reason),
                      ("warning_message", wording.warning_message)):
    register.filter(_name, lambda value, _words=_words: words_html(_words(value)))
del _name, _words


@register.simple_tag
def gloss(message: str):
    """A Korean sentence after a Kubernetes message (which stays verbatim); nothing in English."""
    text = wording.gloss(message)
    return format_html(' <span class="gloss">— {}</span>', text) if text else ""


@register.simple_tag
def headline(explanation):
    return words_html(wording.headline(explanation))


@register.filter
def kept(text):
    """Text that stays in English (a Kubernetes message, an engine sentence not yet worded), marked
    `lang="en"` on a page in another language so a screen reader reads it with an English voice."""
    said = getattr(text, "words", None)  # a value that carries its own words (compare.Said)
    if isinstance(said, wording.Words):
        return words_html(said)
    if isinstance(text, wording.Words):
        return words_html(text)
    text = text if hasattr(text, "__html__") else str(text)  # safe HTML (a lesson's Markdown) stays safe
    if wording.in_source_language():
        return text
    return format_html('<span lang="{}">{}</span>', wording.SOURCE_LANGUAGE, text)


# --- the Pods panel (allocator.wording's Pods section) ---------------------------------------------------


def _glossed(words: wording.Words, text: str):
    """Kubernetes' words verbatim, then the gloss in the page's language (nothing in English)."""
    if not text:
        return words_html(words)
    return format_html('{} <span class="gloss">— {}</span>', words_html(words), text)


@register.filter
def pod_message(pod):
    """`{{ pod|pod_message }}`: the pod's message line; the scheduler's `0/N nodes are available: …`
    verbatim with its gloss, the playground's own sentences in the page's language."""
    words = wording.pod_message(pod)
    return _glossed(words, wording.pod_message_gloss(pod))


@register.filter
def outcome_message(message):
    """`{{ outcome.message|outcome_message }}`: a run's message; for pods, `pod …:` in the page's language
    before the pod's message (the scheduler's words verbatim)."""
    before, words, after = wording.outcome_message(message)
    return format_html("{}{}{}", before, words_html(words), after)


@register.filter
def pool_reason(reason):
    """`{{ p.reason|pool_reason }}`: why a pool is not usable; the allocator's words verbatim with their gloss."""
    return _glossed(wording.pool_reason(reason), wording.pool_reason_gloss(reason))


@register.filter
def node_reason(verdict):
    """`{{ n|node_reason }}`: a rejected node's filter reason, verbatim, with its gloss."""
    return _glossed(wording.node_reason(verdict), wording.node_reason_gloss(verdict))


@register.simple_tag
def node_verdict(pod, verdict) -> str:
    """`{% node_verdict pod n %}`: ✔ chosen, ✔ fits or ✘ rejected."""
    return wording.node_verdict(pod, verdict)


@register.simple_tag
def pod_note(pod, note):
    """`{% pod_note pod note %}`: one of the pod's notes (the no-backtracking explanation among them)."""
    return words_html(wording.pod_note(pod, note))


@register.simple_tag
def workload_line(workload, count) -> str:
    """`{% workload_line group.grouper group.list|length %}`: the heading over a workload's pods."""
    return wording.workload_line(workload, int(count))
