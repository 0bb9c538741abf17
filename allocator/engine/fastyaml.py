"""A fast reader for the plain block-style YAML that scenarios are nearly always written in.

libyaml builds a PyYAML node object for every scalar and collection (two Python calls each, for
the tag and the node) and the constructor walks them again; for the few hundred short lines of a
scenario that is most of the reading time. This reader goes through the text line by line and
builds the dicts and lists directly, with the document spans the loader keeps (where each
document, and each item of a List, starts and ends). Each distinct line is taken apart once.

It reads a subset only: block mappings and sequences indented with spaces, plain keys, plain and
quoted scalars (also over several lines), flow collections on one line, literal block scalars,
comments, `---` between documents. At the first thing outside that subset, or anything libyaml
would refuse or remark on (a duplicate key, a key that is not a string, a tag, an anchor, an alias,
a flow collection over several lines, a folded block scalar, a tab, a `\\r`, an escape in a
double-quoted scalar, an empty document, an odd indentation, structure indented past MAX_COLUMN or
flow collections nested past MAX_FLOW_DEPTH), it gives up (`read` returns None) and
the loader reads the text with libyaml, which then gives the answer and the located error; only a
bare y/n it reads itself, with the warning libyaml's reading gives, at the same place. So what it accepts it must read exactly as libyaml and the loader's
constructor do, values, types and spans alike; tests/engine/test_fastyaml.py checks that against
libyaml on generated texts and on every YAML file of the repository and the shared folder.
"""
from __future__ import annotations

import re


class Unhandled(Exception):
    """The text (or a scalar in it) is not for this reader: read it with libyaml."""


class Noted(Exception):
    """Raised by `plain` for a scalar read with a remark (a bare y/n): (value, message, severity)."""


# The reader holds every line of the text split up at once, about 18 times the text's size (libyaml
# holds one document's nodes at a time): a cluster dump of 30 MB is read by libyaml, within the
# worker's memory limit.
MAX_CHARS = 2 * 1024 * 1024

# Characters libyaml accepts in a stream, less the ones this reader leaves to it: tab, the
# line breaks other than \n (\r, NEL, U+2028, U+2029), a BOM in the middle.
_UNHANDLED_CHAR = re.compile(r"[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")
_ASCII_HANDLED = bytes([10, *range(0x20, 0x7F)])  # the same for a text all ASCII (checked ten times faster)

# Nesting: the scenario loader's guard against deep nesting (yamlguard, 100 levels) runs only
# before libyaml reads a text, so what this reader takes must nest less deep. A block mapping nested
# in a mapping starts a column further right at least, one in a sequence two, and a sequence is
# nested only in a mapping (at its column or further right); so when no line this reader takes as
# structure is indented more than MAX_COLUMN, block nesting stays under MAX_COLUMN + 4 levels, and
# a flow collection on a line adds at most MAX_FLOW_DEPTH.
MAX_COLUMN = 40
MAX_FLOW_DEPTH = 15

# One line: indentation, a `-` item indicator, a plain key and its `:`, what follows. A key is a
# plain scalar that does not start with an indicator and holds no `:`, `#` or run of blanks; any
# other key leaves the whole line in `rest`, which then reads as no known construct. (Possessive
# quantifiers: a shorter key or indentation could never be followed by its `:` or `-`.)
# What follows is split in two: a plain scalar with no `:` or `#` in it (the common value, read as
# its text is), or anything else.
_ROW = re.compile(
    r"^( *+)(-(?: ++|$))?(?:([^\s\-?:,\[\]{}#&*!|>'\"%@`][^\s:#]*+(?: [^\s:#]+)*+):(?: ++|$))?"
    r"(?:([^\s\-?:,\[\]{}#&*!|>'\"%@`][^#:\n]*+(?<! ))|(.*))$",
    re.M,
)

_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
_SPACES = [" " * n for n in range(256)]


def read(text: str, plain, cache: dict, is_list_kind, typed_starts=None) -> list[tuple] | None:
    """The documents of `text` as (data, span, item spans, issues), or None when libyaml must read it.
    `plain(text)` gives a plain scalar's value (raising Unhandled for one this reader must not
    take), and `cache` holds values it gave, by text (the reader adds those it asks for);
    `typed_starts`, when given, holds the first characters of the texts `plain` may give anything
    but the text itself for (others are not asked). `is_list_kind(data)` says whether a document is
    a List whose items get spans. A span is (start offset, end offset, 0-based line, 0-based
    column) of the node as libyaml marks it; an issue (path in the document, message, line,
    column, severity) is a remark `plain` made."""
    if len(text) > MAX_CHARS:
        return None
    if text.isascii():
        if text.encode().translate(None, _ASCII_HANDLED):
            return None
    elif _UNHANDLED_CHAR.search(text) is not None:
        return None
    try:
        return _read(text, plain, cache, is_list_kind, _EVERY_CHARACTER if typed_starts is None else typed_starts)
    except (Unhandled, Noted, IndexError):
        return None


# Line kinds (what a line holds before its value) and value states, in the rows `_row` makes.
_KEY, _DASH_KEY, _DASH, _SKIP, _DOC, _BAD = range(6)
_SIMPLE, _NONE, _SLOW = range(3)  # a value complete on its line; none (`key:`); one read in place
_NO_LINES: tuple = ()


class _EveryCharacter:
    def __contains__(self, character) -> bool:
        return True


_EVERY_CHARACTER = _EveryCharacter()
_MISSING = object()


def _rows(lines, plain, cache: dict, typed_starts) -> list[tuple]:
    """What each line holds, whatever its place: (column, kind, value state, key, value, rest, width
    of the `-` indicator). Taken apart once per distinct line of a text (half the lines of a
    scenario repeat one before them), lines inside a block scalar too: nothing is raised here. A
    value is taken here only when it is complete on its line and immutable: a plain scalar (whether
    the next lines go on with it is seen in place), a quoted one that ends on its line; anything
    else is read in place, where a fault in it is raised."""
    parts = _ROW.findall("\n".join(lines))  # (indentation, `-` indicator, key, rest) of each line
    if len(parts) != len(lines):
        raise Unhandled
    rows: list = []
    add = rows.append
    for indent, dash, key, simple, rest in parts:
        col = len(indent)
        if simple:
            # The common lines, `key: value` and `- value`, their value a plain scalar as
            # `_scalar` reads it (not over lines: that is seen in place) and the key known.
            if (key or dash) and col <= MAX_COLUMN and (
                not key or key[0] not in typed_starts or cache.get(key).__class__ is str
            ):
                value = simple if simple[0] not in typed_starts else _value(simple, plain, cache)
                if value is not _MISSING:  # (else read in place, below)
                    add((col, (_DASH_KEY if dash else _KEY) if key else _DASH, _SIMPLE, key, value, simple, len(dash)))
                    continue
            rest = simple
        if col > MAX_COLUMN:
            add((col, _BAD, _NONE, "", None, rest, 0))  # too deep to take (when not in a scalar)
            continue
        if key:
            if key[0] in typed_starts and cache.get(key).__class__ is not str:
                try:
                    value = cache[key] = plain(key)
                except (Unhandled, Noted):
                    value = None
                if value.__class__ is not str:
                    add((col, _BAD, _NONE, "", None, rest, 0))  # a key that is not a string
                    continue
            kind = _DASH_KEY if dash else _KEY
        elif dash:
            kind = _DASH
        elif not rest or rest[0] == "#":
            add((col, _SKIP, _NONE, "", None, rest, 0))
            continue
        else:
            kind = _BAD  # a scalar alone on its line, `...`, a directive, a flow collection...
            if col == 0 and rest[:3] == "---" and (len(rest) == 3 or rest[3] == " "):
                after = rest[3:].lstrip(" ")
                if not after or after[0] == "#":
                    kind = _DOC
            add((col, kind, _NONE, "", None, rest, 0))
            continue
        if not rest or rest[0] == "#":
            add((col, kind, _NONE, key, None, rest, len(dash)))
            continue
        first = rest[0]
        if first in _INDICATORS or "#" in rest or ": " in rest or rest[-1] == " " or rest[-1] == ":":
            if first in "[{|":
                add((col, kind, _SLOW, key, None, rest, len(dash)))  # a new collection each time; lines
                continue
            try:
                value = _scalar(rest, col, _NO_LINES, -1, plain)[0]
            except (Unhandled, Noted, IndexError):  # read in place: raised there, or taken over lines
                add((col, kind, _SLOW, key, None, rest, len(dash)))
                continue
        elif first not in typed_starts:
            value = rest  # a plain scalar (as `_scalar` reads it), a string
        else:
            value = _value(rest, plain, cache)
            if value is _MISSING:
                add((col, kind, _SLOW, key, None, rest, len(dash)))
                continue
        add((col, kind, _SIMPLE, key, value, rest, len(dash)))
    return rows


def _value(text: str, plain, cache: dict):
    """A plain scalar's value, known or asked of `plain`; _MISSING when it must be read in place."""
    value = cache.get(text, _MISSING)
    if value is _MISSING:
        try:
            value = cache[text] = plain(text)
        except (Unhandled, Noted):
            return _MISSING
    return value


def _read(text: str, plain, cache: dict, is_list_kind, typed_starts) -> list[tuple] | None:
    lines = text.split("\n")
    rows = dict.fromkeys(lines)  # line text -> its row
    rows = dict(zip(rows, _rows(rows, plain, cache, typed_starts)))
    docs: list[tuple] = []
    # The open document: its frames, outermost first, each [indent, container, is a mapping, -,
    # span being recorded (a List item), item spans (its items)]; the innermost's indent and
    # container are also in locals, and the key waiting for a nested value.
    stack: list = []
    top = None
    top_col = -1
    map_col = -1  # top_col when the innermost collection is a mapping
    container = None
    pending = None  # a key of the innermost mapping written as `key:` on the line before
    last_simple = -1  # the line before when it held a value taken from its row
    started = False  # a `---` opened a document that has no content yet
    root_start = None
    items = None  # the item spans of the root's `items` sequence, when it is a block sequence
    loose_items = False  # an item of that sequence is not a block mapping
    issues: list = []  # of the open document
    cursor = [0, 0]  # a line and where it starts: offsets are counted on as spans need them

    def offset(i: int) -> int:
        line, at = cursor
        if i != line:
            at += sum(map(len, lines[line:i])) + i - line
            cursor[0], cursor[1] = i, at
        return at

    lines_iter = enumerate(map(rows.__getitem__, lines))
    for i, (col, kind, state, key, value, rest, dash) in lines_iter:
        if pending is not None and col > top_col and not kind:
            # The first line of a mapping nested in the one of the line before: `key:` then this.
            nested: dict = {}
            container[pending] = nested
            container = nested
            top = [col, nested, True, None, None, None]
            stack.append(top)
            top_col = map_col = col
            last_simple = -1
        elif kind or col != map_col:
            # Anything but a key of the innermost mapping: set the frames for this line.
            if kind >= _SKIP:
                if kind == _SKIP:
                    continue
                if kind == _DOC:
                    if stack:
                        docs.append(_finish(stack, root_start, offset(i), items, loose_items, issues, is_list_kind))
                        top, top_col, map_col, container, pending = None, -1, -1, None, None
                    elif started:
                        raise Unhandled  # an empty document
                    started = True
                    last_simple = -1
                    continue
                if col <= top_col or pending is not None or last_simple < 0:
                    raise Unhandled  # a scalar alone on its line (not going on with one), `...`, a directive...
            if col > top_col:
                if pending is None:
                    if not stack:
                        if kind != _KEY or len(docs) >= 100_000:
                            raise Unhandled  # a document that is a sequence; too many documents
                        container = {}
                        top = [col, container, True, None, None, None]
                        stack.append(top)
                        top_col = map_col = col
                        root_start = (offset(i) + col, i, col)
                        items, loose_items, started, issues = None, False, False, []
                    else:
                        # Deeper than the line before without a key waiting: the plain scalar of
                        # that line goes on over this one (or an error, left to libyaml).
                        if last_simple < 0:
                            raise Unhandled
                        try:
                            value, end = _scalar(rows[lines[last_simple]][5], top_col, lines, last_simple, plain)
                        except Noted:
                            raise Unhandled from None
                        if end < i:
                            raise Unhandled
                        if container.__class__ is dict:
                            container[next(reversed(container))] = value
                        else:
                            container[-1] = value
                        for _ in range(end - i):
                            next(lines_iter)
                        last_simple = -1
                        continue
            elif col < top_col:
                while stack[-1][0] > col:  # IndexError when the document's own mapping ends
                    frame = stack.pop()
                    if frame[4] is not None:
                        frame[4].append(offset(i) + col)  # where this line's first token is
                top = stack[-1]
                top_col, container = top[0], top[1]
                map_col = top_col if top[2] else -1
                pending = None
            last_simple = -1
            if kind != _KEY:  # `- ...`
                if pending is not None:  # a sequence as the value of the key of the line before
                    sequence: list = []
                    container[pending] = sequence
                    frame = [col, sequence, False, None, None, None]
                    if len(stack) == 1 and pending == "items":
                        items = frame[5] = []
                    pending = None
                    stack.append(frame)
                    top, top_col, map_col, container = frame, col, -1, sequence
                elif map_col >= 0 or top_col != col:
                    raise Unhandled
                if kind == _DASH:
                    if state == _NONE:
                        raise Unhandled  # the item's node starts on a later line
                    if top[5] is not None:
                        loose_items = True
                    if state == _SLOW:
                        try:
                            value, end = _scalar(rest, col, lines, i, plain)
                        except Noted as noted:
                            value, end = _noted(noted, stack, len(container), i, len(lines[i]) - len(rest), issues), i
                        for _ in range(end - i):
                            next(lines_iter)
                    else:
                        last_simple = i
                    container.append(value)
                    continue
                col += dash
                mapping: dict = {}
                container.append(mapping)
                if top[5] is not None:
                    span = [offset(i) + col, i, col]
                    top[5].append(span)
                    top = [col, mapping, True, None, span, None]
                else:
                    top = [col, mapping, True, None, None, None]
                stack.append(top)
                top_col = map_col = col
                container = mapping
            elif map_col != col:
                # A key where a sequence is open: the sequence ends when it was the value of a key
                # of a mapping at the same indentation (`key:` then `- item` lines at its column).
                if top_col != col or len(stack) < 2 or stack[-2][0] != col:
                    raise Unhandled
                stack.pop()
                top = stack[-1]
                container = top[1]
                map_col = top_col = col
        # A member of the innermost mapping.
        if key in container:
            raise Unhandled  # a duplicate key: an error
        if state == _SIMPLE:
            container[key] = value
            pending = None
            last_simple = i
        elif state == _NONE:
            container[key] = None
            pending = key
        else:
            try:
                value, end = _scalar(rest, col, lines, i, plain)
            except Noted as noted:
                value, end = _noted(noted, stack, key, i, len(lines[i]) - len(rest), issues), i
            for _ in range(end - i):
                next(lines_iter)
            container[key] = value
            pending = None
            last_simple = -1
    if stack:
        docs.append(_finish(stack, root_start, len(text), items, loose_items, issues, is_list_kind))
    elif started or not docs:
        raise Unhandled  # an empty document at the end, or no document at all
    return docs


def _noted(noted: Noted, stack: list, last, line: int, column: int, issues: list):
    """Record the remark on a one-line scalar at (line, column), the member `last` of the innermost
    collection, and give its value."""
    value, message, severity = noted.args
    path = []
    for parent, child in zip(stack, stack[1:]):
        if parent[2]:
            path.append(next(reversed(parent[1])))  # the key a nested collection was opened for
        else:
            path.append(len(parent[1]) - 1)
    path.append(last)
    issues.append((tuple(path), message, line + 1, column + 1, severity))
    return value


def _finish(stack, root_start, end, items, loose_items, issues, is_list_kind) -> tuple:
    data = stack[0][1]
    for frame in stack:
        if frame[4] is not None:
            frame[4].append(end)
    stack.clear()
    start, line, column = root_start
    item_spans = None
    if "items" in data and is_list_kind(data) and isinstance(data["items"], list):
        if not data["items"]:
            item_spans = []
        elif items is None or loose_items or len(items) != len(data["items"]):
            raise Unhandled
        else:
            item_spans = [(s, e, l, c) for s, l, c, e in items]
    return data, (start, end, line, column), item_spans, issues


def _scalar(rest: str, block: int, lines: list, i: int, plain):
    """The scalar that starts `rest` (on line i, inside a block collection at column `block`), and
    the line and offset where it ends (it may go on over the next lines)."""
    first = rest[0]
    if first == "'" or first == '"':
        return _quoted(rest, block, lines, i)
    if first in _INDICATORS:
        if first in "-?:" and len(rest) > 1 and rest[1] != " ":
            pass  # `-1`, `:x`: plain
        elif first == "[" or first == "{":
            return _flow(rest, plain), i
        elif first == "|":
            return _literal(rest, block, lines, i)
        else:
            raise Unhandled
    commented = False
    if "#" in rest:
        hash_at = rest.find(" #")
        if hash_at >= 0:
            rest = rest[:hash_at]
            commented = True
    value = rest.rstrip(" ")
    if ": " in value or value[-1] == ":":
        raise Unhandled
    if not commented and i + 1 < len(lines):
        following = lines[i + 1]
        if not following.strip(" ") or following.startswith(_SPACES[block + 1]):
            return _plain_lines(value, block, lines, i, plain)
    return plain(value), i


def _plain_lines(value: str, block: int, lines: list, i: int, plain):
    """A plain scalar that may go on over the next lines (those indented deeper than its block):
    folded, a line break a space, each empty line between a line break."""
    parts = [value]
    breaks = 0
    j = i + 1
    while j < len(lines):
        line = lines[j]
        text = line.lstrip(" ")
        if not text:
            breaks += 1
            j += 1
            continue
        if len(line) - len(text) <= block:
            break
        text = text.rstrip(" ")
        if text[0] == "#" or ": " in text or text[-1] == ":" or " #" in text:
            raise Unhandled  # a comment ends the scalar: what follows is not for this reader
        parts.append("\n" * breaks if breaks else " ")
        parts.append(text)
        breaks = 0
        i = j
        j += 1
    return plain("".join(parts) if len(parts) > 1 else value), i


def _quoted(rest: str, block: int, lines: list, i: int):
    """A single- or double-quoted scalar (a double-quoted one without escapes), folded over its
    lines as a plain one is; what follows its closing quote must be blanks or a comment."""
    quote = rest[0]
    line_text = rest[1:]
    parts: list[str] = []
    breaks = -1  # before the first line
    while True:
        if quote == '"' and "\\" in line_text:
            raise Unhandled
        end = line_text.find(quote)
        if quote == "'":
            while end >= 0 and line_text[end + 1:end + 2] == "'":
                end = line_text.find("'", end + 2)
        if end >= 0:
            piece, after = line_text[:end], line_text[end + 1:]
        else:
            piece, after = line_text.rstrip(" "), None
            if breaks == -1 and not piece:
                raise Unhandled  # the opening quote ends its line
        if quote == "'" and "''" in piece:
            piece = piece.replace("''", "'")
        if breaks > 0:
            parts.append("\n" * breaks)
        elif breaks == 0:
            parts.append(" ")
        parts.append(piece)
        if after is not None:
            stripped = after.lstrip(" ")
            if stripped and (stripped[0] != "#" or after[0] != " "):
                raise Unhandled  # `'a': b`, `'a'b`, `'a'#c`
            return "".join(parts), i
        breaks = 0
        while True:
            i += 1
            line = lines[i]  # IndexError past the end: an unclosed quote
            line_text = line.lstrip(" ")
            if line_text:
                break
            breaks += 1
        if len(line) - len(line_text) <= block:
            raise Unhandled


# A token of a one-line flow collection, after blanks: a bracket or comma; a single-quoted scalar;
# a double-quoted one without escapes; a plain one (in a flow collection it holds none of `,[]{}`,
# and this reader takes none with a `:` or `#` in it); `:` and a blank, which ends a key.
_FLOW_TOKEN = re.compile(
    r""" *+(?:([\[\]{},])|'((?:[^']|'')*+)'|"([^"\\]*+)"|((?:[^\s,\[\]{}#&*!|>'"%@`?:-]|-(?=[0-9.]))"""
    r"""(?:[^,\[\]{}:#]*[^\s,\[\]{}:#])?)|(:(?= )))"""
)


def _flow(rest: str, plain):
    """A flow collection (`[a, b]`, `{k: v, n: {m: 1}}`) that ends on its line, followed by blanks or a
    comment. Not taken: keys without values, a collection as a key, an empty or a trailing entry,
    `:` right after a quoted key, anything over more lines."""
    stack: list = []  # [container, is a mapping, key being read]
    state = "open"  # what comes next: "open" (an entry or the end), "entry", ":", "value", "sep"
    pos = 0
    while True:
        token = _FLOW_TOKEN.match(rest, pos)
        if token is None:
            raise Unhandled
        pos = token.end()
        punct, single, double, text, colon = token.groups()
        if not stack:
            root = [] if punct == "[" else {}  # `_scalar` saw the bracket
            stack.append([root, punct == "{", None])
            continue
        frame = stack[-1]
        if punct and punct in "]}" and state in ("open", "sep"):
            if (punct == "}") != frame[1]:
                raise Unhandled
            stack.pop()
            if not stack:
                break
            state = "sep"
            continue
        if state == "sep":
            if punct != ",":
                raise Unhandled
            state = "entry"
            continue
        if state == ":":
            if colon is None:
                raise Unhandled
            state = "value"
            continue
        key_wanted = frame[1] and state != "value"
        if punct == "[" or punct == "{":
            if key_wanted:
                raise Unhandled
            value = [] if punct == "[" else {}
            if frame[1]:
                frame[0][frame[2]] = value
            else:
                frame[0].append(value)
            stack.append([value, punct == "{", None])
            if len(stack) > MAX_FLOW_DEPTH:
                raise Unhandled  # nested too deep to take
            state = "open"
            continue
        if punct or colon:
            raise Unhandled
        if text is not None:
            try:
                value = plain(text)
            except Noted:
                raise Unhandled from None  # a remark inside a flow collection: libyaml places it
        else:
            value = single.replace("''", "'") if single is not None else double
        if key_wanted:
            if value.__class__ is not str or value in frame[0]:
                raise Unhandled  # a key that is not a string, a duplicate key
            frame[2] = value
            state = ":"
            continue
        if frame[1]:
            frame[0][frame[2]] = value
        else:
            frame[0].append(value)
        state = "sep"
    after = rest[pos:]
    stripped = after.lstrip(" ")
    if stripped and (stripped[0] != "#" or after[0] != " "):
        raise Unhandled
    return root


def _literal(rest: str, block: int, lines: list, i: int):
    """A literal block scalar (`|`, `|-`, `|+`) whose first line follows its header: its indentation is
    that line's; each line keeps what is past it; lines with less end it, unless blank. Not taken: an
    indentation indicator, blank lines before the first line, a first line not deeper than `block`."""
    header = rest[1:]
    chomp = header[:1] if header[:1] in ("-", "+") else ""
    after = header[len(chomp):]
    stripped = after.lstrip(" ")
    if stripped and (stripped[0] != "#" or after[0] != " "):
        raise Unhandled
    first = lines[i + 1] if i + 2 < len(lines) or (i + 2 == len(lines) and lines[i + 1]) else ""
    indent = len(first) - len(first.lstrip(" "))
    if indent <= block or indent == len(first):
        raise Unhandled
    spaces = _SPACES[indent]
    parts: list[str] = []
    breaks = 0  # blank lines since the last line of text
    last = i  # the last line read
    j = i + 1
    while j < len(lines):
        line = lines[j]
        if j == len(lines) - 1 and not line:
            break  # the end of the text after its last line break
        if line.startswith(spaces) and len(line) > indent:
            if parts:
                parts.append("\n" * (breaks + 1))
            parts.append(line[indent:])
            breaks = 0
            last = j
        elif not line.strip(" "):
            if j == len(lines) - 1:
                break  # blanks at the end of the text, with no line break after them
            breaks += 1
        else:
            break
        j += 1
    ended = last < len(lines) - 1  # the last line of text has a line break after it
    if chomp == "-" or not ended:
        tail = ""
    elif chomp == "+":
        tail = "\n" * (breaks + 1)
        last = j - 1
    else:
        tail = "\n"
    return "".join(parts) + tail, last
