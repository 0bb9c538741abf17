"""Lesson text: CommonMark through markdown-it-py with raw HTML off, so a shared workshop cannot inject markup."""
from __future__ import annotations

import functools

from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt


@functools.cache
def _parser() -> MarkdownIt:
    # "commonmark" with html off: `<script>` and friends come out as text; markdown-it's own
    # link check refuses javascript:, vbscript:, file: and most data: URLs.
    return MarkdownIt("commonmark", {"html": False}).disable("image")


def render(text: str) -> SafeString:
    return mark_safe(_parser().render(text or ""))


def render_inline(text: str) -> SafeString:
    return mark_safe(_parser().renderInline(text or ""))
