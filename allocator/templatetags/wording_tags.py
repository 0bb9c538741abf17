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


@register.filter
def stage_name(stage: str) -> str:
    return wording.stage_name(stage)


@register.filter
def claim_state(state: str) -> str:
    return wording.claim_state(state)


@register.filter
def pool_state(state: str) -> str:
    return wording.pool_state(state)


@register.filter
def gate_summary(name: str) -> str:
    return wording.gate_summary(name)


@register.filter
def verdict_label(verdict) -> str:
    return wording.verdict_label(verdict)


@register.filter
def reason(row):
    return words_html(wording.row_reason(row))


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
    text = text if hasattr(text, "__html__") else str(text)  # safe HTML (a lesson's Markdown) stays safe
    return words_html(wording.Words(text, None if wording.in_source_language() else wording.SOURCE_LANGUAGE))
