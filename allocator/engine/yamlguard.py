"""Limits on YAML before anything recursive reads it: one guard for every YAML the server or the
CLI reads (scenarios, uploads, workshop files, lesson scenarios).

libyaml's composer (and PyYAML's, and any walk over the composed tree) recurses once per level
of nesting: 30,000 levels overflow a thread's C stack and end the process, 10,000 cost seconds.
The parser that produces the event stream does not recurse, so the stream is where nesting is
measured: every collection start counts, whatever its style (flow `[`/`{`, block `-`/`key:`),
its tag (`!t`, `!!str`, `!e!t`, the verbatim `!<a,b>`) or its anchor. Aliases are counted as
what they expand to, so an alias bomb is refused by its expanded size.

Measuring the stream costs about as much as parsing, so `refusal` first asks two cheap upper
bounds (block nesting from indentation, flow nesting from the brackets that can open a
collection) and measures exactly only when they cannot rule deep nesting out.

`refusal(text)` answers with a located `Problem` or None; callers turn it into their own error
(the scenario loader's problem list, the workshop reader's SourceError), which the web shows as
a 400 and the CLI as exit 2.
"""
from __future__ import annotations

import re

import yaml
from yaml.events import (
    AliasEvent,
    CollectionStartEvent,
    MappingEndEvent,
    ScalarEvent,
    SequenceEndEvent,
)

from allocator.engine.problems import Problem

MAX_DEPTH = 100  # Kubernetes objects nest about 12 deep
MIN_EXPANDED_NODES = 200_000  # and 4 per character of text: aliases may expand to no more

try:
    _Loader = yaml.CSafeLoader
except AttributeError:  # PyYAML built without libyaml
    _Loader = yaml.SafeLoader


def refusal(text: str, *, max_depth: int = MAX_DEPTH, max_bytes: int | None = None, what: str = "the YAML",
            exact: bool = False, aliases: bool = True) -> Problem | None:
    """Why `text` must not be composed, or None. `exact` measures the event stream whatever the
    cheap bounds say (small inputs, where the measure costs nothing to speak of). `aliases`
    counts what aliases expand to (size, and depth where they stand); a reader that follows
    merge keys and checks expansion on the composed nodes itself (the scenario loader, which
    names the object and field) passes False."""
    if max_bytes is not None:
        size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
        if size > max_bytes:
            return Problem(f"{what} is {size:,} bytes; the limit is {max_bytes:,} bytes")
    if not exact and not may_be_deep(text, max_depth) and not (aliases and may_have_aliases(text)):
        return None
    return measure(text, max_depth=max_depth, aliases=aliases,
                   max_nodes=max(MIN_EXPANDED_NODES, 4 * len(text)) if aliases else None)


def measure(text: str, *, max_depth: int = MAX_DEPTH, max_nodes: int | None = None,
            aliases: bool = True) -> Problem | None:
    """Walk the event stream once: the first collection deeper than `max_depth`, counting what
    an alias stands for at its place (a chain of aliased nodes nests as deep as its links
    together), or the point where aliases have expanded the stream past `max_nodes` nodes.
    A syntax error ends the walk quietly: the reader reports it, at a point no deeper than
    this walk reached."""
    depth = 0
    # Per open collection: [expanded nodes, deepest level below it, anchor].
    open_: list[list] = []
    named: dict[str, tuple[int, int]] = {}  # anchor -> (expanded nodes, levels) of the node it names
    total = 0
    try:
        for event in yaml.parse(text, Loader=_Loader):
            cls = event.__class__
            if isinstance(event, CollectionStartEvent):
                depth += 1
                if depth > max_depth:
                    return _located(f"nesting is deeper than {max_depth} levels", event)
                open_.append([1, 1, event.anchor])
            elif cls is MappingEndEvent or cls is SequenceEndEvent:
                depth -= 1
                size, levels, anchor = open_.pop()
                if anchor is not None:
                    named[anchor] = (size, levels)
                if open_:
                    open_[-1][0] += size
                    open_[-1][1] = max(open_[-1][1], levels + 1)
                else:
                    total += size
            elif cls is ScalarEvent or cls is AliasEvent:
                size, levels = named.get(event.anchor, (1, 0)) if cls is AliasEvent else (1, 0)
                if cls is ScalarEvent and event.anchor is not None:
                    named[event.anchor] = (1, 0)
                if cls is AliasEvent and aliases:
                    if depth + levels > max_depth:
                        return _located(f"nesting is deeper than {max_depth} levels, counting what "
                                        f"the alias *{event.anchor} stands for", event)
                    if max_nodes is not None and total + size + sum(o[0] for o in open_) > max_nodes:
                        return _located(f"YAML aliases expand to more than {max_nodes:,} nodes", event)
                if open_:
                    open_[-1][0] += size
                    open_[-1][1] = max(open_[-1][1], levels + 1)
                else:
                    total += size
    except yaml.YAMLError:
        pass
    return None


def _located(message: str, event) -> Problem:
    line, column = event.start_mark.line + 1, event.start_mark.column + 1
    return Problem(f"{message} (line {line})", line=line, column=column)


_ANCHOR = re.compile(r"&(?<![^\s\[{,:]&)[\w-]")


def may_have_aliases(text: str) -> bool:
    return "*" in text and _ANCHOR.search(text) is not None


# -- cheap upper bounds ------------------------------------------------------------------
#
# Block nesting. A block collection nested d deep starts at column d/2 - 1 or more (`- - - x` is
# the most compact), after nothing but indentation and `-`, `?`, `:` indicators on its line (an
# anchor or a tag there ends the compact form: `- !t - x` is an error). So with no line starting
# with 40 such characters, block nesting stays under about 80.
_DEEP_BLOCK_PREFIX = 40
_DEEP_LINE = re.compile(r"\n[ \t?:-]{%d}" % _DEEP_BLOCK_PREFIX)  # a literal start: fast search
_DEEP_LINE_ANY_BREAK = re.compile(r"[\n\r\x85\u2028\u2029][ \t?:-]{%d}" % _DEEP_BLOCK_PREFIX)  # YAML 1.1

# Flow nesting. A flow collection starts where a node may start: at the start of a line, or after
# one of `: , [ { ? -` and blanks, with perhaps an anchor and a tag in between (`&a !t [`). Brackets
# elsewhere (`attributes["x"]` or `in ["a"]` in CEL, comments) are not collections, and empty `[]`
# and `{}` hold nothing. The pattern runs over the reversed text, where what precedes a bracket
# can be checked with a lookahead. Properties, reversed:
# - a verbatim tag `!<...>` may hold `, [ ] : ? -` (libyaml takes any URI character there);
# - an anchor `&a` or a shorthand tag `!t`, `!!t`, `!e!t` holds none of `, [ ] { }` (libyaml
#   refuses them in shorthand tags).
# After each property the lookahead tries the characters that open a node, so no split of what
# precedes the bracket is missed; each property's scan stops at a blank, `<`/`>` or a bracket,
# which keeps the whole scan linear.
_BREAKS = r"\n\r\x85\u2028\u2029"
_OPENS_NODE = r"(?:[%s:,\[{?-]|\Z)" % _BREAKS
_PROPERTY = r"(?:>[^\s<>]*+<!|[^\s\[\]{},&!<>]*+[&!])"
_FLOW_OPEN_REVERSED = re.compile(
    r"[\[{](?<![\]}][\[{])(?=[ \t]*+(?:%s[ \t]*+)*?%s)" % (_PROPERTY, _OPENS_NODE)
)
# Generated YAML writes small flow collections on one line by the thousand (`{string: a100}`,
# `{value: '7'}`), too many to count as possible nesting. A flat one, with no bracket, `#` or
# line break inside and quotes only where a quoted scalar starts (right after `[`, `{`, `,` or
# `: `, or `:` just after a quoted key) and no tag (`!<a,'b>` may hold quotes), ends at its first
# closing bracket, so it holds exactly one level: replacing it with a scalar lowers the nesting
# by at most one. A bracket that is not a collection at all (in a comment, a quoted or block
# scalar) is cut out with no collection inside it. So after n rounds of cutting, the nesting is
# at most n plus the count on what is left.
_FLOW_QUOTED = (
    r"(?:'(?:[^'\[\]{}%s]|'')*+'|\"(?:[^\"\\\[\]{}%s]|\\[^\[\]{}%s])*+\")" % (_BREAKS, _BREAKS, _BREAKS)
)
_FLAT_FLOW = re.compile(
    r"[\[{](?=[^'\"\[\]{}%s]*+['\"])[ \t]*+%s?(?:(?<=,)[ \t]*+%s|(?<=:)[ \t]++%s|(?<=['\"]:)%s|[^'\"#!\[\]{}%s])*+[\]}]"
    % (_BREAKS, _FLOW_QUOTED, _FLOW_QUOTED, _FLOW_QUOTED, _FLOW_QUOTED, _BREAKS)
)  # (the lookahead sends collections without quotes to the faster pattern below)
_FLAT_FLOW_UNQUOTED = re.compile(r"[\[{][^'\"#!\[\]{}%s]*+[\]}]" % _BREAKS)  # the common case, faster
_FLAT_FLOW_ROUNDS = 3


def may_be_deep(text: str, max_depth: int = MAX_DEPTH) -> bool:
    """False only when `text` certainly nests no deeper than `max_depth` (for max_depth >= 80)."""
    if _DEEP_LINE.search(text) or _DEEP_LINE.match("\n" + text[: _DEEP_BLOCK_PREFIX + 1]):
        return True
    other_breaks = "\r" in text or (not text.isascii() and any(c in text for c in "\x85\u2028\u2029"))
    if other_breaks and _DEEP_LINE_ANY_BREAK.search(text):
        return True
    limit = max_depth - 2 * _DEEP_BLOCK_PREFIX
    if limit < 1:
        return True
    openers = text.count("[") + text.count("{") - text.count("[]") - text.count("{}")
    if openers <= limit:
        return False
    closers = text.count("]") + text.count("}")
    for _ in range(_FLAT_FLOW_ROUNDS if 4 * closers >= openers else 0):
        text, cut = _FLAT_FLOW_UNQUOTED.subn("x", text)
        text, more = _FLAT_FLOW.subn("x", text)
        if not cut + more:
            break
        limit -= 1
        before, openers = openers, text.count("[") + text.count("{")
        if openers <= limit:
            return False
        if 4 * (cut + more) < before:
            break  # mostly nested rather than flat: measured exactly
    for count, _ in enumerate(_FLOW_OPEN_REVERSED.finditer(text[::-1]), start=1):
        if count > limit:
            return True
    return False
