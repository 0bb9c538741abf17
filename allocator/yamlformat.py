"""Format for the editor: YAML re-indented to two spaces per nesting level, comments kept.

It works on lines, not on a parsed tree (a PyYAML round trip would drop every comment), and it
gives the text back only when YAML reads the result as the same documents; otherwise the caller
says so and keeps the user's text.
"""
from __future__ import annotations

import re

import yaml

try:
    _Loader = yaml.CSafeLoader
except AttributeError:  # PyYAML built without libyaml
    _Loader = yaml.SafeLoader

_BLOCK_SCALAR = re.compile(r"(?:^|[:\-]\s+|^-\s*|\s)[|>][+-]?\s*(?:#.*)?$")
_EXPLICIT_INDENT = re.compile(r"[|>][+-]?[1-9]|[|>][1-9][+-]?")


class FormatRefused(ValueError):
    """The text was not changed. `reason` is "unreadable" (with the `line` YAML stopped at) or "changed"."""

    def __init__(self, reason: str, line: int | None = None):
        super().__init__(reason)
        self.reason = reason
        self.line = line


def format_yaml(text: str) -> tuple[str, bool]:
    """(the formatted text, whether it holds comments). Raises FormatRefused."""
    try:
        before = list(yaml.load_all(text, Loader=_Loader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise FormatRefused("unreadable", mark.line + 1 if mark is not None else None) from None
    formatted = _reindent(text)
    try:
        after = list(yaml.load_all(formatted, Loader=_Loader))
    except yaml.YAMLError:
        after = None
    if after != before:
        raise FormatRefused("changed")
    has_comments = any(line.lstrip().startswith("#") or " #" in line for line in text.splitlines())
    return formatted, has_comments


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _reindent(text: str) -> str:
    out: list = []
    stack: list[tuple[int, int]] = []  # open levels: (original indent, new indent)
    block = None  # inside a | or > scalar: (original indent of its key, new indent of its content)
    block_base = None  # original indent of the block scalar's first content line
    for raw in text.split("\n"):
        line = raw.rstrip()
        stripped = line.lstrip(" ")
        indent = _indent_of(line)
        if block is not None:
            if not stripped:
                out.append("")
                continue
            if indent > block[0]:
                if block_base is None:
                    block_base = indent
                out.append(" " * (block[1] + max(0, indent - block_base)) + stripped)
                continue
            block = block_base = None
        if not stripped:
            out.append("")
            continue
        if stripped.startswith(("---", "...", "%")):
            stack = []
            _place_comments(out, 0)
            out.append(stripped)
            continue
        if stripped.startswith("#"):
            out.append(("#comment", stripped))  # placed once the next content line's indent is known
            continue
        while stack and stack[-1][0] > indent:
            stack.pop()
        if stack and stack[-1][0] == indent:
            new = stack[-1][1]
        else:
            new = stack[-1][1] + 2 if stack else 0
            stack.append((indent, new))
        key_new, key_orig = new, indent
        body = stripped
        if stripped == "-" or stripped.startswith("- "):
            rest = stripped[1:].lstrip(" ")
            body = "- " + rest if rest else "-"
            # The item's own mapping continues where its first key stands: one level further in.
            content = indent + len(stripped) - len(rest) if rest else indent + 2
            stack.append((content, new + 2))
            key_new, key_orig = new + 2, content
        _place_comments(out, new)
        out.append(" " * new + body)
        if _BLOCK_SCALAR.search(stripped) and not _EXPLICIT_INDENT.search(stripped):
            block = (key_orig, key_new + 2)
            block_base = None
    _place_comments(out, 0)
    return "\n".join(out)


def _place_comments(out: list, indent: int) -> None:
    """Comments waiting for a level take the indent of the content line after them."""
    for i in range(len(out) - 1, -1, -1):
        entry = out[i]
        if isinstance(entry, tuple):
            out[i] = " " * indent + entry[1]
        elif entry != "":
            break
