"""Reading a scenario stream: YAML or JSON, safely, with source positions on demand.

The stream is parsed with libyaml (PyYAML's C loader) and read the way Kubernetes reads
YAML (sigs.k8s.io/yaml, which uses go-yaml v2, YAML 1.1):

- timestamps stay the strings they were written as;
- `yes`/`no`/`on`/`off` are booleans, `1:30` is a string (no base-60 numbers);
- a bare `y`/`n` stays a string, with a warning: go-yaml v2 makes it a boolean, but scenarios
  (and the conformance cases) write `string: Y` meaning the letter;
- int, float and bool mapping keys become strings, other keys are refused;
- a duplicate mapping key is an error, as in Kubernetes' strict decoding.

Hostile input ends with a Problem instead of a crash or a hang: size, encoding, NUL bytes,
nesting depth and alias expansion are checked before anything walks the data.

Positions are cheap to keep and expensive to build, so only the start of each object is
recorded while loading. `Loaded.line_of` composes the text of one object again (a slice of
the stream) when a problem needs a position inside it.
"""
from __future__ import annotations

import codecs
import gc
import json
import operator
import re
import struct
import threading
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import accumulate

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from allocator.engine import fastyaml, yamlguard
from allocator.engine.problems import ERROR, WARNING, Problem

MAX_BYTES = 32 * 1024 * 1024  # a 1,000-node GPU cluster dump is about 30 MB
MAX_DEPTH = yamlguard.MAX_DEPTH  # Kubernetes objects nest about 12 deep; libyaml's composer recurses in C.
MAX_PROBLEMS = 100
MAX_DOCUMENTS = 100_000  # libyaml needs ~6 us per document: 4 million `---` would take 25 s
MIN_ALIAS_NODES = 200_000
MIN_ALIAS_CHARS = 1024 * 1024  # and twice the text: one long string aliased many times is a bomb too

_STR = "tag:yaml.org,2002:str"
_SEQ = "tag:yaml.org,2002:seq"
_MAP = "tag:yaml.org,2002:map"
_MERGE = "tag:yaml.org,2002:merge"
_TAG_PREFIX = "tag:yaml.org,2002:"
_YES_NO_LETTER = "tag:dra-playground,2025:yaml11-bool-letter"  # internal: a bare y, Y, n or N


@dataclass(frozen=True)
class RawObject:
    data: dict  # the parsed mapping: plain dicts, lists, str, int, float, bool, None
    ref: tuple  # (document_index,) or (document_index, item_index) for an item of a List
    line: int | None  # 1-based line where the object (or List item) starts
    # Results derived from `data` alone (validation), kept with the document's cached parse so
    # that an unchanged document is not checked again; `data` must never be modified.
    memo: dict = field(default_factory=dict, repr=False, compare=False)


@dataclass
class Loaded:
    objects: list[RawObject]
    problems: list[Problem]  # errors make the input invalid; warnings too
    _positions: "_Positions | None" = field(default=None, repr=False, compare=False)

    def line_of(self, ref: tuple, path: tuple = ()) -> tuple[int, int] | None:
        """1-based (line, column) of the field at `path` (keys and list indexes, relative to the
        object) inside the object `ref`: for a mapping member, where its key is written; for a
        list item, where the item starts. If the path does not exist, the position of its deepest
        existing ancestor; None when not known."""
        if self._positions is None or ref is None:
            return None
        try:
            return self._positions.position(tuple(ref), tuple(path))
        except Exception:  # a position is a nicety; never fail the caller over it
            return None


def load_scenario(text: str | bytes, *, max_bytes: int = MAX_BYTES) -> Loaded:
    """Parse a scenario stream into raw objects, refusing input that is unsafe to read."""
    decoded = _decode(text, max_bytes)
    if isinstance(decoded, Problem):
        return Loaded([], [decoded])
    text = decoded

    with gc_paused():
        docs = _load_json(text) if _looks_like_json(text) else None
        problems: list[Problem] = []
        if docs is None:
            docs, problems = _load_documents(text)
            if docs is None:  # refused before libyaml read it
                return Loaded([], problems)
            if _may_have_aliases(text):
                problem = _alias_problem(
                    docs, limit=max(MIN_ALIAS_NODES, 4 * len(text)), char_limit=MIN_ALIAS_CHARS + 2 * len(text)
                )
                if problem is not None:
                    positions = _Positions(text, docs)
                    return Loaded([], [_locate_alias_problem(problem, docs, positions)], positions)

        positions = _Positions(text, docs)
        objects, object_problems = _objects(docs, positions)
    problems = _capped(object_problems + problems)  # a fatal parse error comes after what was read
    return Loaded(objects, problems, positions)


def _capped(problems: list[Problem]) -> list[Problem]:
    """At most MAX_PROBLEMS errors and as many warnings, and a note when some were left out
    (reading stops soon after that many errors, so how many more is not known)."""
    kept, counts, dropped = [], {ERROR: 0, WARNING: 0}, {ERROR: False, WARNING: False}
    for problem in problems:
        severity = problem.severity if problem.severity in counts else ERROR
        if counts[severity] < MAX_PROBLEMS:
            counts[severity] += 1
            kept.append(problem)
        else:
            dropped[severity] = True
    for severity, label in ((ERROR, "errors"), (WARNING, "warnings")):
        if dropped[severity]:
            kept.append(Problem(f"only the first {MAX_PROBLEMS} {label} are shown", severity=severity))
    return kept


@contextmanager
def gc_paused():
    """Parsing allocates millions of objects and frees none; the cycle collector would walk
    them again and again (a 6 MB List loads in 7 s with it, 2 s without). The switch is
    process-wide: another thread loading at the same time may get the collector back early,
    which only costs it time."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


# -- bytes to text -----------------------------------------------------------


def _decode(text: str | bytes, max_bytes: int) -> str | Problem:
    if isinstance(text, (bytes, bytearray, memoryview)):
        data = bytes(text)
        if len(data) > max_bytes:
            return _oversize(len(data), max_bytes)
        if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
            # PowerShell's `>` writes UTF-16; libyaml reads it too.
            try:
                text = data.decode("utf-16")
            except UnicodeDecodeError as exc:
                return Problem(f"input is not valid UTF-16: invalid bytes at offset {exc.start}")
        else:
            nul = data.find(b"\x00")
            if nul >= 0:
                return _binary(data.count(b"\n", 0, nul) + 1)
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                line = data.count(b"\n", 0, exc.start) + 1
                line_start = data.rfind(b"\n", 0, exc.start) + 1
                column = len(data[line_start:exc.start].decode("utf-8", "replace")) + 1
                return Problem(
                    f"input is not valid UTF-8 (is it a binary file?): byte 0x{data[exc.start]:02x} "
                    f"at offset {exc.start} (line {line}, column {column})",
                    line=line,
                    column=column,
                )
    elif len(text) > max_bytes:
        return _oversize(len(text.encode("utf-8", "surrogatepass")), max_bytes)
    elif not text.isascii():
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > max_bytes:
            return _oversize(size, max_bytes)
    nul = text.find("\x00")
    if nul >= 0:
        return _binary(text.count("\n", 0, nul) + 1)
    return text[1:] if text.startswith("\ufeff") else text


def _oversize(size: int, limit: int) -> Problem:
    return Problem(f"scenario is {size} bytes, the limit is {limit} bytes")


def _binary(line: int) -> Problem:
    return Problem(f"input looks binary: NUL byte at line {line}", line=line)


# -- YAML ------------------------------------------------------------------------


def _implicit_resolvers() -> dict:
    """PyYAML's YAML 1.1 resolvers, adjusted to go-yaml v2: no base-60 numbers, timestamps are
    plain strings; a bare y/n is marked so that it can be warned about."""
    replaced = {
        "tag:yaml.org,2002:int": re.compile(
            r"^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+)$"
        ),
        "tag:yaml.org,2002:float": re.compile(
            r"^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?"
            r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
        ),
    }
    dropped = {"tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:value", "tag:yaml.org,2002:yaml"}  # `=` is a string
    resolvers = {}
    for first, entries in yaml.resolver.Resolver.yaml_implicit_resolvers.items():
        resolvers[first] = tuple(
            (tag, replaced.get(tag, regexp)) for tag, regexp in entries if tag not in dropped
        )
    for first in "yYnN":
        resolvers[first] += ((_YES_NO_LETTER, re.compile(r"^[yYnN]$")),)
    return resolvers


_RESOLVED: dict = {}  # plain scalar text -> its tag (a function of the text alone)
_RESOLVED_LENGTH = 64
_RESOLVED_ENTRIES = 50_000
# tag -> {scalar text -> value}: an int, float, bool or null is a function of its tag and text
# (`0`, `true` and `1` by the thousand), so what PyYAML's constructor made of it is kept.
_CONSTRUCTED: dict = {_TAG_PREFIX + tag: {} for tag in ("int", "float", "bool", "null")}
_MISSING = object()
_CONSTRUCTOR = None  # a loader whose constructors build the scalars the fast reader has not seen


def _plain_tag(text: str) -> str:
    """The tag of a plain scalar: a function of its text alone."""
    tag = _RESOLVED.get(text)
    if tag is not None:
        return tag
    tag = _STR
    for candidate, regexp in _ScenarioLoader.yaml_implicit_resolvers.get(text[:1], ()):
        if regexp.match(text):
            tag = candidate
            break
    if len(text) <= _RESOLVED_LENGTH and len(_RESOLVED) < _RESOLVED_ENTRIES:
        _RESOLVED[text] = tag
    return tag


def _plain_value(text: str):
    """A plain scalar's value as the loader below makes it; fastyaml.Unhandled for one it would
    warn about or refuse (a bare y/n, `<<`, a bad number), which libyaml's reading then reports.
    Nothing learned is kept from one call to the next (the fast reader keeps values for the text it
    reads): what a first read costs does not depend on what was read before."""
    first = text[:1]
    if first not in _TYPED_STARTS:
        return text  # most texts: no implicit type starts with their first character
    value = _PLAIN_WORDS.get(text, _MISSING)
    if value is not _MISSING:
        return value
    if first in _WORD_STARTS:  # only the words above, and a bare y/n, have a type
        if text in _YES_NO_LETTERS:
            raise fastyaml.Noted(text, _letter_warning(text), WARNING)
        return text
    if text.isdigit() and text.isascii() and (first != "0" or len(text) == 1) and len(text) < 19:
        return int(text)  # a plain decimal (an int, as below)
    return _resolved_value(text)


def _resolved_value(text: str):
    """`_plain_value` the long way: the implicit types tried in turn."""
    for tag, regexp in _FIRST_RESOLVERS.get(text[:1], ()):
        if regexp.match(text):
            break
    else:
        return text
    if tag == _YES_NO_LETTER:
        raise fastyaml.Noted(text, _letter_warning(text), WARNING)
    if tag == _INT and text.isdigit() and (text[0] != "0" or len(text) == 1) and len(text) < 19:
        return int(text)  # a plain decimal
    if tag not in _CONSTRUCTED:
        raise fastyaml.Unhandled
    global _CONSTRUCTOR
    if _CONSTRUCTOR is None:
        _CONSTRUCTOR = _ScenarioLoader("")
    try:
        return _ScenarioLoader.yaml_constructors[tag](_CONSTRUCTOR, ScalarNode(tag, text))
    except Exception:
        raise fastyaml.Unhandled from None


class _ScenarioLoader(yaml.CSafeLoader):
    """CSafeLoader reading YAML as Kubernetes does; records duplicate and odd keys in `issues`."""

    yaml_implicit_resolvers = _implicit_resolvers()

    def __init__(self, stream):
        super().__init__(stream)
        self.issues: list[tuple[str, object, str]] = []  # (message, node, severity)
        self.failed_node = None
        self._flat: dict = {}
        # Without a `*` the text has no alias, so every node is reached once: collections are built
        # directly (`_build`), without the bookkeeping that shared and recursive nodes need.
        self._plain = isinstance(stream, str) and "*" not in stream
        self._child = self._build if self._plain else self.construct_object
        # A stream read whole may hold a `*` in one document only: each document is judged by its own text.
        self._text = stream if isinstance(stream, str) and not self._plain else None

    def start_document(self, node=None):
        self.issues = []
        self._flat = {}
        if self._text is not None and node is not None:
            self._plain = "*" not in self._text[node.start_mark.index:node.end_mark.index]
            self._child = self._build if self._plain else self.construct_object

    def construct_document(self, node):
        if not self._plain:
            return super().construct_document(node)
        data = self._build(node)
        self.constructed_objects = {}
        return data

    def _build(self, node, deep=False):
        cls = node.__class__
        if cls is MappingNode and node.tag == _MAP:
            return self.construct_mapping(node)
        if cls is SequenceNode and node.tag == _SEQ:
            return self.construct_sequence(node)
        if cls is ScalarNode:
            known = _CONSTRUCTED.get(node.tag)
            if known is not None:
                value = known.get(node.value, _MISSING)
                if value is _MISSING:
                    value = self.construct_object(node, deep=True)  # raises on a bad one, kept only if good
                    if len(node.value) <= _RESOLVED_LENGTH and len(known) < _RESOLVED_ENTRIES:
                        known[node.value] = value
                return value
        return self.construct_object(node, deep=True)  # scalars of other tags, and refused tags

    # The C composer calls these around every node, for path resolvers, and ignores what they
    # return; none are registered, so they are C functions that do nothing, two Python calls
    # fewer for each of the stream's nodes (a tenth of the loader's time).
    descend_resolver = staticmethod(operator.is_)  # (parent, index)
    ascend_resolver = staticmethod(tuple)  # ()

    # The C parser asks this for every node; a lean version of BaseResolver.resolve. What a plain
    # scalar resolves to depends on its text alone, and the same short texts (`name`, `true`, `1`)
    # come back by the thousand, so their tags are kept.
    def resolve(self, kind, value, implicit):
        if kind is ScalarNode:
            if implicit[0]:
                tag = _RESOLVED.get(value)
                return tag if tag is not None else _plain_tag(value)
            return _STR
        return _SEQ if kind is SequenceNode else _MAP

    def construct_sequence(self, node, deep=False):
        if not isinstance(node, SequenceNode):
            return super().construct_sequence(node, deep)
        construct = self._child
        return [
            child.value if child.tag == _STR and child.__class__ is ScalarNode else construct(child, deep=deep)
            for child in node.value
        ]

    def construct_mapping(self, node, deep=False):
        if not isinstance(node, MappingNode):
            return super().construct_mapping(node, deep)
        construct = self._child
        issues = len(self.issues)
        mapping = {}
        for key_node, value_node in node.value:
            if key_node.tag == _STR and key_node.__class__ is ScalarNode:
                key = key_node.value
            elif key_node.tag == _MERGE:
                del self.issues[issues:]
                return self._construct_merged_mapping(node, deep)
            else:
                key = self._construct_key(key_node, deep)
                if key is None:
                    continue
            if key in mapping:
                self.issues.append((f'duplicate key "{_clip(key)}"', key_node, ERROR))
            if value_node.tag == _STR and value_node.__class__ is ScalarNode:
                mapping[key] = value_node.value
            else:
                mapping[key] = construct(value_node, deep=deep)
        return mapping

    def _construct_merged_mapping(self, node, deep):
        """`<<` merge keys: merged entries first, then the node's own, which win. Only the own
        entries must be unique."""
        pairs, inherited = self._flattened(node, set())
        construct = self._child
        mapping = {}
        own = set()
        for index, (key_node, value_node) in enumerate(pairs):
            key = self._construct_key(key_node, deep)
            if key is None:
                continue
            if index >= inherited:
                if key in own:
                    self.issues.append((f'duplicate key "{_clip(key)}"', key_node, ERROR))
                own.add(key)
            mapping[key] = construct(value_node, deep=deep)
        return mapping

    def _flattened(self, node, active: set) -> tuple[list, int]:
        """The entries of a mapping with its merges resolved, and how many of them are merged.
        Merged entries are deduplicated and memoised, so chains of merges stay linear."""
        if id(node) in self._flat:
            return self._flat[id(node)]
        if id(node) in active:
            raise ConstructorError(None, None, "merge keys (<<) form a cycle", node.start_mark)
        active.add(id(node))
        merged: dict = {}
        own = []
        for key_node, value_node in node.value:
            if key_node.tag != _MERGE:
                own.append((key_node, value_node))
                continue
            if isinstance(value_node, MappingNode):
                sources = [value_node]
            elif isinstance(value_node, SequenceNode):
                sources = list(reversed(value_node.value))  # the first mapping listed wins
            else:
                sources = [value_node]
            for source in sources:
                if not isinstance(source, MappingNode):
                    raise ConstructorError(
                        None, None, "the value of a << merge key must be a mapping or a list of mappings",
                        source.start_mark,
                    )
                for pair in self._flattened(source, active)[0]:
                    merged[_node_key(pair[0])] = pair
        active.discard(id(node))
        result = (list(merged.values()) + own, len(merged))
        self._flat[id(node)] = result
        return result

    def _construct_key(self, key_node, deep):
        """A mapping key as Kubernetes' YAML-to-JSON conversion writes it, or None (recorded)."""
        key = self.construct_object(key_node, deep=deep)
        if key.__class__ is str:
            return key
        if isinstance(key, bool):
            return "true" if key else "false"
        if isinstance(key, int):
            return str(key)
        if isinstance(key, float):
            return _go_float32_string(key)
        what = "null" if key is None else f"a {_type_name(key)}"
        self.issues.append((f"mapping keys must be strings, numbers or booleans, not {what}", key_node, ERROR))
        return None


def _node_key(node):
    if isinstance(node, ScalarNode):
        return (node.tag, node.value)
    return id(node)


def _refuse_tag(loader, node):
    loader.failed_node = node
    tag = node.tag
    short = "!!" + tag[len(_TAG_PREFIX):] if tag.startswith(_TAG_PREFIX) else tag
    raise ConstructorError(None, None, f"YAML tag {_clip(short)} is not allowed", node.start_mark)


def _original_string(loader, node):
    return loader.construct_scalar(node)


def _yes_no_letter(loader, node):
    value = loader.construct_scalar(node)
    loader.issues.append((_letter_warning(value), node, WARNING))
    return value


def _letter_warning(value: str) -> str:
    meaning = "true" if value in "yY" else "false"
    return (f'unquoted {value} is the boolean {meaning} to Kubernetes (YAML 1.1); '
            f'the playground reads the string "{value}": quote it to mean the letter')


def _checked(construct):
    """`!!int x` makes PyYAML raise a bare ValueError; give it the node's position."""

    def checked(loader, node):
        try:
            return construct(loader, node)
        except (ValueError, KeyError, IndexError):
            loader.failed_node = node
            short = "!!" + node.tag[len(_TAG_PREFIX):]
            raise ConstructorError(
                None, None, f"{_clip(repr(node.value))} is not a valid {short}", node.start_mark
            ) from None

    return checked


for _tag in ("int", "float", "bool"):
    _ScenarioLoader.add_constructor(
        _TAG_PREFIX + _tag, _checked(_ScenarioLoader.yaml_constructors[_TAG_PREFIX + _tag])
    )
_ScenarioLoader.add_constructor("tag:yaml.org,2002:timestamp", _original_string)
_ScenarioLoader.add_constructor(_YES_NO_LETTER, _yes_no_letter)
for _tag in ("binary", "set", "omap", "pairs"):
    _ScenarioLoader.add_constructor(_TAG_PREFIX + _tag, _refuse_tag)
_ScenarioLoader.add_constructor(None, _refuse_tag)
_INT = _TAG_PREFIX + "int"
# The implicit types a plain scalar may have, by its first character (a character no type starts
# with makes a string), and the values of the words that are booleans and nulls: a fixed table.
_FIRST_RESOLVERS = {first: entries for first, entries in _ScenarioLoader.yaml_implicit_resolvers.items() if entries}
_TYPED_STARTS = frozenset(_FIRST_RESOLVERS)
# Where the only types are booleans and nulls, which are these words (and a bare y/n, warned about).
_WORD_STARTS = frozenset(first for first, entries in _FIRST_RESOLVERS.items() if first and {
    tag for tag, _ in entries} <= {_TAG_PREFIX + "bool", _TAG_PREFIX + "null", _YES_NO_LETTER})
_YES_NO_LETTERS = frozenset("yYnN")
_PLAIN_WORDS: dict = {}
for _word in ("yes Yes YES no No NO true True TRUE false False FALSE on On ON off Off OFF ~ null Null NULL").split():
    _PLAIN_WORDS[_word] = _resolved_value(_word)


@dataclass
class _Doc:
    """One document of the stream, with where it and its List items are in the text."""

    index: int
    data: object
    span: tuple | None  # (start offset, end offset, 0-based line, 0-based column)
    item_spans: list | None = None  # for a List (or a JSON array): one span per item
    issues: list = field(default_factory=list)  # (doc-relative path, message, line, column, severity)
    memos: dict = field(default_factory=dict)  # () for the document, (item index,) -> RawObject.memo

    def shifted(self, index: int, offset: int, lines: int) -> "_Doc":
        """This document as read from a stream where its text starts `offset` characters and
        `lines` lines further on, as document `index`."""
        if not offset and not lines and index == self.index:
            return self

        def move(span):
            return (span[0] + offset, span[1] + offset, span[2] + lines, span[3])

        return _Doc(
            index, self.data, move(self.span) if self.span is not None else None,
            [move(span) for span in self.item_spans] if self.item_spans is not None else None,
            [(path, message, line + lines, column, severity) for path, message, line, column, severity in self.issues],
            self.memos,
        )


# -- documents, each read once ----------------------------------------------------
#
# Editing one document of a long stream should not read the others again. A `---` line at
# column 0 always starts a new document for libyaml (in a quoted scalar or an open flow
# collection it is an error, so the stream is read whole then), so the text between two such
# lines reads the same alone as within the stream: each piece is parsed on its own and cached by
# its text, with positions relative to its start, and shifted to where it is now. Anything
# unusual (directives, line breaks other than \n and \r\n, a piece that does not read cleanly)
# reads the whole stream in one go, as before, so answers and positions never depend on the cache.

CACHE_CHARS = 8 * 1024 * 1024  # text of the cached pieces; their parsed form is ~25 times larger
# piece text -> (its documents, and the offset and line where they were read), least recently used first
_pieces: OrderedDict = OrderedDict()
_pieces_chars = 0
_pieces_lock = threading.Lock()


def _load_documents(text: str) -> tuple[list[_Doc] | None, list[Problem]]:
    pieces = _pieces_of(text)
    if pieces is None:
        return _load_yaml(text)
    if len(pieces) > 1:
        with _pieces_lock:
            fresh = not any(piece in _pieces for _, _, piece in pieces)
        if fresh:
            return _load_fresh(text, pieces)
    keep = len(text) <= CACHE_CHARS
    docs: list[_Doc] = []
    problems: list[Problem] = []
    errors = 0
    for offset, lines, piece in pieces:
        with _pieces_lock:
            cached = _pieces.get(piece)
            if cached is not None:
                _pieces.move_to_end(piece)
        if cached is None:
            piece_docs, piece_problems = _load_yaml(piece)
            if piece_problems:
                return _load_yaml(text)  # the stream's own answer, located in the stream
            cached = (piece_docs, 0, 0)
            if keep:
                _remember(piece, cached)
        cached_docs, read_at, read_at_line = cached
        for doc in cached_docs:
            if len(docs) == MAX_DOCUMENTS:
                problems.append(Problem(f"the stream has more than {MAX_DOCUMENTS} documents"))
                return docs, problems
            docs.append(doc.shifted(len(docs), offset - read_at, lines - read_at_line))
            errors += sum(1 for issue in doc.issues if issue[4] == ERROR)
            if errors > MAX_PROBLEMS:
                return docs, problems
    return docs, problems


def _load_fresh(text: str, pieces: list) -> tuple[list[_Doc], list[Problem]]:
    """A stream none of whose pieces was read before (a first read; every run of the command): read
    whole, with one loader rather than one per document, which is the stream's own answer. Each
    piece's documents are then kept as if that piece had been read alone, where that is plain:
    every document lies inside one piece, after its `---` line, and none is empty."""
    docs, problems = _load_yaml(text)
    if problems or len(text) > CACHE_CHARS:
        return docs, problems
    if sum(issue[4] == ERROR for doc in docs for issue in doc.issues) > MAX_PROBLEMS:
        return docs, problems  # the read stopped early: the later pieces were not read
    by_piece: list[list[_Doc]] = [[] for _ in pieces]
    index = 0
    for doc in docs:
        if doc.span is None or doc.data is None:
            return docs, problems
        start, end = doc.span[0], doc.span[1]
        while index + 1 < len(pieces) and pieces[index + 1][0] <= start:
            index += 1
        offset, _, piece = pieces[index]
        if start < offset or (start == offset and piece.startswith("---")) or end > offset + len(piece):
            return docs, problems  # at or across a piece's edge: the pieces are read alone next time
        by_piece[index].append(doc)
    for (offset, lines, piece), piece_docs in zip(pieces, by_piece):
        _remember(piece, (piece_docs, offset, lines))  # shifted when it is read again
    return docs, problems


def _pieces_of(text: str) -> list[tuple[int, int, str]] | None:
    """(offset, lines before it, text) of each piece that starts at a `---` line; None when the
    stream must be read whole."""
    if "%" in text and (text.startswith("%") or "\n%" in text):
        return None  # directives (which precede a `---`)
    if len(text) > 4 * MAX_DOCUMENTS and text.count("\n---") > MAX_DOCUMENTS:
        return None  # too many documents to read one by one
    if "\r" in text and text.count("\r") != text.count("\r\n"):
        return None
    if not text.isascii() and any(c in text for c in "\x85\u2028\u2029"):
        return None
    starts = [0]
    at = text.find("\n---")
    while at >= 0:  # str.find: a multi-line regex would try every position of the text
        after = at + 4
        if after == len(text) or text[after] in " \t\r\n":
            starts.append(at + 1)
        at = text.find("\n---", after)
    starts.append(len(text))
    pieces, lines = [], 0
    for start, end in zip(starts, starts[1:]):
        piece = text[start:end]
        pieces.append((start, lines, piece))
        lines += piece.count("\n")
    return pieces


def _remember(piece: str, docs: tuple) -> None:
    global _pieces_chars
    with _pieces_lock:
        if piece in _pieces:
            return
        _pieces[piece] = docs
        _pieces_chars += len(piece)
        while _pieces_chars > CACHE_CHARS and _pieces:
            old, _ = _pieces.popitem(last=False)
            _pieces_chars -= len(old)


def clear_cache() -> None:
    """Forget every cached document (tests, benchmarks)."""
    global _pieces_chars
    with _pieces_lock:
        _pieces.clear()
        _pieces_chars = 0


def _load_yaml(text: str) -> tuple[list[_Doc] | None, list[Problem]]:
    fast = fastyaml.read(text, _plain_value, {}, _is_list_kind, _TYPED_STARTS)
    if fast is not None:  # (it takes nothing nested deeper than MAX_DEPTH)
        return [_Doc(index, data, span, item_spans, issues) for index, (data, span, item_spans, issues) in enumerate(fast)], []
    problem = yamlguard.refusal(text, max_depth=MAX_DEPTH, aliases=False)  # before libyaml's composer recurses
    if problem is not None:
        return None, [problem]  # no documents: not to be read at all
    return _load_yaml_with_libyaml(text)


def _load_yaml_with_libyaml(text: str) -> tuple[list[_Doc], list[Problem]]:
    docs: list[_Doc] = []
    problems: list[Problem] = []
    loader = None
    node = None
    issue_count = 0
    try:
        loader = _ScenarioLoader(text)
        while loader.check_node():
            if len(docs) == MAX_DOCUMENTS:
                problems.append(Problem(f"the stream has more than {MAX_DOCUMENTS} documents"))
                break
            node = loader.get_node()
            loader.start_document(node)
            data = loader.construct_document(node)
            doc = _Doc(len(docs), data, _span(node))
            if loader.issues:
                doc.issues = _locate_issues(node, loader.issues)
                issue_count += sum(1 for issue in doc.issues if issue[4] == ERROR)
            if isinstance(data, (dict, list)):
                doc.item_spans = _item_spans(node, data)
            docs.append(doc)
            node = None
            if issue_count > MAX_PROBLEMS:
                break
    except yaml.MarkedYAMLError as exc:
        problems.append(_yaml_error(exc, len(docs), node, loader.failed_node if loader else None))
    except yaml.reader.ReaderError as exc:
        problems.append(_reader_error(exc, text))
    except UnicodeEncodeError as exc:  # lone surrogates in a str
        line = text.count("\n", 0, exc.start) + 1
        problems.append(Problem(f"input is not valid Unicode: a lone surrogate at line {line}", line=line))
    except (RecursionError, MemoryError) as exc:
        problems.append(Problem(f"YAML is too large or too deeply nested to read ({type(exc).__name__})"))
    except Exception as exc:  # libyaml and the constructor raise a few plain errors (TypeError, ValueError)
        problems.append(Problem(f"YAML could not be read: {_clip(str(exc), 200)}", ref=(len(docs),)))
    finally:
        if loader is not None:
            loader.dispose()
    return docs, problems


def _span(node) -> tuple:
    start, end = node.start_mark, node.end_mark
    return (start.index, end.index, start.line, start.column)


def _item_spans(root, data) -> list | None:
    """Spans of the items of a List document, or of a top-level flow sequence (a JSON array)."""
    if isinstance(data, list):
        if isinstance(root, SequenceNode) and root.flow_style and len(root.value) == len(data):
            return [_span(item) for item in root.value]
        return None
    if not _is_list_kind(data) or not isinstance(root, MappingNode):
        return None
    items = None
    for key_node, value_node in root.value:
        if isinstance(key_node, ScalarNode) and key_node.value == "items":
            items = value_node
    if isinstance(items, SequenceNode) and len(items.value) == len(data["items"]):
        return [_span(item) for item in items.value]
    return None


def _locate_issues(root, issues) -> list:
    paths = _node_paths(root, {id(node) for _, node, _ in issues})
    located = [
        (paths.get(id(node), ()), message, node.start_mark.line + 1, node.start_mark.column + 1, severity)
        for message, node, severity in issues
    ]
    return sorted(located, key=lambda issue: (issue[2], issue[3]))


def _node_paths(root, wanted: set) -> dict:
    """Paths (keys and indexes) from `root` to the nodes whose ids are in `wanted`, in document
    order, so a node shared through an alias is found where its anchor is."""
    found: dict = {}
    stack = [(root, ())]
    visited = set()
    while stack and len(found) < len(wanted):
        node, path = stack.pop()
        if id(node) in wanted and id(node) not in found:
            found[id(node)] = path
        if not isinstance(node, (MappingNode, SequenceNode)) or id(node) in visited:
            continue
        visited.add(id(node))
        if isinstance(node, SequenceNode):
            stack.extend((child, path + (i,)) for i, child in reversed(list(enumerate(node.value))))
            continue
        for key_node, value_node in reversed(node.value):
            key = key_node.value if isinstance(key_node, ScalarNode) else "?"
            stack.append((value_node, path + (key,)))
            stack.append((key_node, path + (key,)))
    return found


# Contexts whose mark is where the mistake is. The problem mark is where the reader noticed it,
# which is the next token: for a key without its ':' (`metadata` alone on a line), a quote or a
# flow collection never closed, that is the following line (or the end of the text), one line
# late. A block collection's context is only where that collection began: its problem mark stays.
_MISTAKE_AT_CONTEXT = ("while scanning", "while parsing a flow")


def _mistake_mark(exc: yaml.MarkedYAMLError):
    """The mark to report: the context's when the reader names the token it was reading and that
    token starts on an earlier line than where the problem was noticed; else the problem's."""
    problem, context = exc.problem_mark, exc.context_mark
    if (context is not None and problem is not None and context.line < problem.line
            and (exc.context or "").startswith(_MISTAKE_AT_CONTEXT)):
        return context
    return problem or context


def _yaml_error(exc: yaml.MarkedYAMLError, doc_index: int, root, failed_node) -> Problem:
    mark = _mistake_mark(exc)
    line = mark.line + 1 if mark is not None else None
    column = mark.column + 1 if mark is not None else None
    where = f" (line {line}, column {column})" if mark is not None else ""
    if isinstance(exc, ConstructorError):
        path = ()
        if root is not None and failed_node is not None:
            path = _node_paths(root, {id(failed_node)}).get(id(failed_node), ())
        message = exc.problem if failed_node is not None else f"YAML error: {exc.problem}"
        return Problem(f"{message}{where}", path=path, line=line, column=column, ref=(doc_index,))
    if mark is not exc.problem_mark and exc.problem_mark is not None:
        where = (f" {exc.context} (line {line}, column {column}; noticed at line "
                 f"{exc.problem_mark.line + 1}, column {exc.problem_mark.column + 1})")
    return Problem(f"YAML syntax error: {exc.problem}{where}", line=line, column=column)


def _reader_error(exc, text: str) -> Problem:
    position = exc.position if isinstance(exc.position, int) else 0
    # libyaml counts bytes of the UTF-8 text; map back to characters for the line.
    prefix = text.encode("utf-8", "surrogatepass")[:position].decode("utf-8", "replace")
    line = prefix.count("\n") + 1
    column = len(prefix) - (prefix.rfind("\n") + 1) + 1
    if isinstance(exc.character, int):
        return Problem(
            f"input looks binary: control character U+{exc.character:04X} at line {line}, column {column}",
            line=line,
            column=column,
        )
    return Problem(f"input is not valid text: {exc.reason} (line {line})", line=line)


# -- aliases ---------------------------------------------------------------------

# `&name` where a node may start; not `a&b` in a URL or `&&` in CEL.
_ANCHOR = re.compile(r"&(?<![^\s\[{,:]&)[\w-]")


def _may_have_aliases(text: str) -> bool:
    return "*" in text and _ANCHOR.search(text) is not None


def _alias_problem(docs: list[_Doc], *, limit: int, char_limit: int) -> Problem | None:
    """Aliases become shared objects: cheap to load, explosive to walk or to print. Count the
    tree as any walk would see it (every shared object counted each time it is reached),
    memoised per object: its nodes, and the characters of its strings (a 10 KB string aliased
    100,000 times is a gigabyte to anything that writes it out)."""
    sizes: dict = {}
    nodes = chars = 0
    for doc in docs:
        doc_nodes, doc_chars = _expanded_size(doc.data, sizes, limit, char_limit)
        nodes, chars = nodes + doc_nodes, chars + doc_chars
        if nodes > limit or chars > char_limit:
            line = doc.span[2] + 1 if doc.span else None
            if doc_nodes == float("inf"):
                what = "form a cycle"
            elif nodes > limit:
                what = f"expand to more than {limit} nodes"
            else:
                what = f"expand to more than {char_limit} characters of text"
            return Problem(
                f"YAML aliases {what} (document {doc.index + 1}); Kubernetes refuses such input too",
                line=line,
                ref=(doc.index,),
            )
    return None


def _locate_alias_problem(problem: Problem, docs: list[_Doc], positions: "_Positions") -> Problem:
    """Name the object, and the field where the expansion happens: from the document down,
    follow the child holding most of the expanded text while it holds most of it."""
    doc = docs[problem.ref[0]]
    sizes: dict = {}
    _expanded_size(doc.data, sizes, float("inf"), float("inf"))

    def chars(value):
        if isinstance(value, (dict, list)):
            return sizes.get(id(value), (0, 0))[1]
        return len(value) if isinstance(value, str) else 1

    path: tuple = ()
    node = doc.data
    while isinstance(node, (dict, list)):
        members = node.items() if isinstance(node, dict) else enumerate(node)
        heaviest = max(members, key=lambda member: chars(member[1]), default=None)
        if heaviest is None or 2 * chars(heaviest[1]) < chars(node):
            break
        path += (heaviest[0],)
        node = heaviest[1]
    ref = (doc.index,)
    if doc.item_spans is not None:
        if isinstance(doc.data, list) and path:
            ref, path = (doc.index, path[0]), path[1:]
        elif len(path) >= 2 and path[0] == "items":
            ref, path = (doc.index, path[1]), path[2:]
    item = doc.data if len(ref) == 1 else (doc.data[ref[1]] if isinstance(doc.data, list) else doc.data["items"][ref[1]])
    kind, name = _identity(item)
    position = positions.position(ref, path) or (problem.line, None)
    return Problem(problem.message, kind=kind, name=name, path=path, line=position[0], column=position[1], ref=ref)


def _expanded_size(root, sizes: dict, limit: int, char_limit: int) -> tuple[float, int]:
    """(nodes, characters of strings) of `root` with every alias expanded, each capped just
    above its limit; nodes is infinite for a cycle."""
    if not isinstance(root, (dict, list)):
        return 1, len(root) if isinstance(root, str) else 1
    active = set()  # containers on the current path, to see cycles
    stack = [(root, False)]
    while stack:
        obj, finished = stack.pop()
        key = id(obj)
        if finished:
            if isinstance(obj, dict):
                size, chars = 1 + len(obj), sum(len(k) if isinstance(k, str) else 1 for k in obj)
                children = obj.values()
            else:
                size, chars, children = 1, 0, obj
            for child in children:
                if isinstance(child, (dict, list)):
                    child_size, child_chars = sizes[id(child)]
                    size += child_size
                    chars += child_chars
                else:
                    size += 1
                    chars += len(child) if isinstance(child, str) else 1
            sizes[key] = (min(size, limit + 1), min(chars, char_limit + 1))
            active.discard(key)
            continue
        if key in sizes:
            continue
        if key in active:
            return float("inf"), 0
        active.add(key)
        stack.append((obj, True))
        for child in obj.values() if isinstance(obj, dict) else obj:
            if isinstance(child, (dict, list)) and id(child) not in sizes:
                if id(child) in active:
                    return float("inf"), 0
                stack.append((child, False))
    return sizes[id(root)]


# -- JSON ------------------------------------------------------------------------

_JSON_START = re.compile(r"\s*[\[{]")
_JSON_WS = re.compile(r"[ \t\n\r]*")
# A string, or an unterminated one up to the end: always matching keeps the scan linear.
_JSON_STRING = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+(?:"|\\?\Z)', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_BRACKET_DEPTH = {"[": 1, "{": 1, "]": -1, "}": -1}


def _looks_like_json(text: str) -> bool:
    return _JSON_START.match(text) is not None


def _object_without_duplicates(pairs):
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise ValueError("duplicate key")  # the YAML reader reports it with its line
    return obj


def _refuse_constant(name):
    raise ValueError(f"{name} is not JSON")


_JSON = json.JSONDecoder(object_pairs_hook=_object_without_duplicates, parse_constant=_refuse_constant)


def _load_json(text: str) -> list[_Doc] | None:
    """Fast path for JSON; None sends the text to the YAML reader, whose errors carry positions."""
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    if brackets and max(accumulate(map(_BRACKET_DEPTH.__getitem__, brackets))) > MAX_DEPTH:
        return None
    try:
        start = _JSON_WS.match(text).end()
        if text[start] == "[":
            data, spans, end = _json_array(text, start)
        else:
            data, spans, end = _json_object(text, start)
        if _JSON_WS.match(text, end).end() != len(text):
            return None
    except (ValueError, StopIteration, IndexError, RecursionError):
        return None
    lines = _Lines(text)
    doc = _Doc(0, data, lines.span(start, end))
    if spans is not None and (isinstance(data, list) or _is_list_kind(data)):
        doc.item_spans = [lines.span(s, e) for s, e in spans]
    return [doc]


def _json_array(text: str, i: int):
    scan, ws = _JSON.scan_once, _JSON_WS.match
    items, spans = [], []
    i = ws(text, i + 1).end()
    if text[i] == "]":
        return items, spans, i + 1
    while True:
        value, end = scan(text, i)
        items.append(value)
        spans.append((i, end))
        i = ws(text, end).end()
        if text[i] == "]":
            return items, spans, i + 1
        if text[i] != ",":
            raise ValueError("expected , or ]")
        i = ws(text, i + 1).end()


def _json_object(text: str, i: int):
    """The top-level object, parsed member by member so the items of a List keep their offsets."""
    scan, ws = _JSON.scan_once, _JSON_WS.match
    obj: dict = {}
    item_spans = None
    i = ws(text, i + 1).end()
    if text[i] == "}":
        return obj, None, i + 1
    while True:
        if text[i] != '"':
            raise ValueError("expected a key")
        key, i = json.decoder.scanstring(text, i + 1)
        i = ws(text, i).end()
        if text[i] != ":":
            raise ValueError("expected :")
        i = ws(text, i + 1).end()
        if key == "items" and text[i] == "[":
            value, item_spans, i = _json_array(text, i)
        else:
            value, i = scan(text, i)
        if key in obj:
            raise ValueError("duplicate key")
        obj[key] = value
        i = ws(text, i).end()
        if text[i] == "}":
            return obj, item_spans, i + 1
        if text[i] != ",":
            raise ValueError("expected , or }")
        i = ws(text, i + 1).end()


class _Lines:
    """Offsets to (line, column), for offsets asked in increasing order."""

    def __init__(self, text: str):
        self.text, self.offset, self.line, self.line_start = text, 0, 0, 0

    def span(self, start: int, end: int) -> tuple:
        newlines = self.text.count("\n", self.offset, start)
        if newlines:
            self.line += newlines
            self.line_start = self.text.rfind("\n", self.offset, start) + 1
        self.offset = start
        return (start, end, self.line, start - self.line_start)


# -- objects -----------------------------------------------------------------------


def _objects(docs: list[_Doc], positions: "_Positions") -> tuple[list[RawObject], list[Problem]]:
    objects: list[RawObject] = []
    problems: list[Problem] = []
    errors = 0

    def add(problem: Problem) -> None:
        nonlocal errors
        problems.append(problem)
        errors += problem.severity == ERROR

    for doc in docs:
        data = doc.data
        issues_by_ref = _issues_by_ref(doc) if doc.issues else {}
        if data is None:
            continue  # an empty document
        if data.__class__ is dict and "items" not in data:
            candidates = [((doc.index,), data)]  # the common case: not a List
        elif isinstance(data, list) and doc.item_spans is not None:
            candidates = [((doc.index, i), item) for i, item in enumerate(data)]
        elif isinstance(data, dict) and _is_list_kind(data):
            items = data.get("items")
            if items is None:
                candidates = []
            elif isinstance(items, list):
                candidates = [((doc.index, i), item) for i, item in enumerate(items)]
            else:
                add(_located(
                    positions, (doc.index,), ("items",),
                    f"document {doc.index + 1}: \"items\" of a {data['kind']} must be a list, "
                    f"got {_a(_type_name(items))}", kind=data["kind"],
                ))
                continue
        else:
            candidates = [((doc.index,), data)]
        for ref, item in candidates:
            if errors > MAX_PROBLEMS:
                return objects, problems  # the rest would not be shown
            for path, message, line, column, severity in issues_by_ref.pop(ref, []):
                kind, name = _identity(item)
                add(Problem(
                    message, kind=kind, name=name, path=path, line=line, column=column, severity=severity, ref=ref
                ))
            problem = _object_problem(ref, item, positions)
            if problem is not None:
                add(problem)
            else:
                memo = doc.memos.get(ref[1:])
                if memo is None:
                    memo = doc.memos[ref[1:]] = {}
                objects.append(RawObject(item, ref, positions.object_line(ref), memo))
        for leftover in issues_by_ref.values():  # e.g. a duplicate key in a List's own fields
            for path, message, line, column, severity in leftover:
                add(Problem(message, path=path, line=line, column=column, severity=severity, ref=(doc.index,)))
    return objects, problems


def _issues_by_ref(doc: _Doc) -> dict:
    by_ref: dict = {}
    for path, message, line, column, severity in doc.issues:
        ref, rest = (doc.index,), path
        if doc.item_spans is not None:
            if isinstance(doc.data, list) and path and isinstance(path[0], int):
                ref, rest = (doc.index, path[0]), path[1:]
            elif len(path) >= 2 and path[0] == "items" and isinstance(path[1], int):
                ref, rest = (doc.index, path[1]), path[2:]
        by_ref.setdefault(ref, []).append((rest, message, line, column, severity))
    return by_ref


def _object_problem(ref: tuple, data, positions: "_Positions") -> Problem | None:
    if data.__class__ is dict:  # the common case first: both set, both strings
        api_version, kind = data.get("apiVersion"), data.get("kind")
        if api_version and kind and api_version.__class__ is str and kind.__class__ is str:
            return None
    where = f"document {ref[0] + 1}" + (f", items[{ref[1]}]" if len(ref) > 1 else "")
    if not isinstance(data, dict):
        return _located(
            positions, ref, (),
            f"{where}: expected a Kubernetes object (a mapping with apiVersion and kind), "
            f"got {_a(_type_name(data))}",
        )
    kind, name = _identity(data)
    missing = [f'"{key}"' for key in ("apiVersion", "kind") if key not in data or data[key] in ("", None)]
    if missing:
        return _located(
            positions, ref, (),
            f"{where}: missing {' and '.join(missing)}; every Kubernetes object needs apiVersion and kind",
            kind=kind, name=name,
        )
    for key in ("apiVersion", "kind"):
        if not isinstance(data[key], str):
            return _located(
                positions, ref, (key,),
                f'{where}: "{key}" must be a string, got {_a(_type_name(data[key]))}',
                kind=kind, name=name,
            )
    return None


def _located(positions, ref, path, message, *, kind="", name="") -> Problem:
    position = positions.position(ref, path)
    line, column = position if position else (None, None)
    return Problem(message, kind=kind, name=name, path=path, line=line, column=column, ref=ref)


def _identity(data) -> tuple[str, str]:
    """(kind, name) for messages: name is `namespace/name` when a namespace is set."""
    if not isinstance(data, dict):
        return "", ""
    kind = data.get("kind") if isinstance(data.get("kind"), str) else ""
    meta = data.get("metadata")
    if not isinstance(meta, dict):
        return kind, ""
    name = meta.get("name") if isinstance(meta.get("name"), str) else ""
    namespace = meta.get("namespace") if isinstance(meta.get("namespace"), str) else ""
    return kind, f"{namespace}/{name}" if namespace and name else name


def _is_list_kind(data) -> bool:
    """`kind: List`, or a typed list as kubectl prints it (`ResourceSliceList`)."""
    kind = data.get("kind") if isinstance(data, dict) else None
    return isinstance(kind, str) and kind.endswith("List") and "items" in data


def _type_name(value) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "mapping"
    if value is None:
        return "null"
    return type(value).__name__


def _clip(text: str, limit: int = 80) -> str:
    """User text quoted in a message, cut short."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _a(noun: str) -> str:
    return noun if noun == "null" else ("an " if noun[0] in "aeiou" else "a ") + noun


def _go_float32_string(value: float) -> str:
    """A float key as sigs.k8s.io/yaml writes it: strconv.FormatFloat(v, 'g', -1, 32)."""
    if value != value:
        return ".nan"
    if value in (float("inf"), float("-inf")):
        return ".inf" if value > 0 else "-.inf"
    single = struct.unpack("f", struct.pack("f", value))[0]
    if single == 0:
        return "0"
    for precision in range(1, 10):
        mantissa = f"{abs(single):.{precision - 1}e}"
        if struct.unpack("f", struct.pack("f", float(mantissa)))[0] == abs(single):
            break
    digits, exponent = mantissa.split("e")
    digits, exponent = digits.replace(".", "").rstrip("0") or "0", int(exponent)
    sign = "-" if single < 0 else ""
    if exponent < -4 or exponent >= 6:  # Go's %g for the shortest form
        rest = "." + digits[1:] if len(digits) > 1 else ""
        return f"{sign}{digits[0]}{rest}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    point = exponent + 1
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return f"{sign}{digits}{'0' * (point - len(digits))}"
    return f"{sign}{digits[:point]}.{digits[point:]}"


# -- positions ----------------------------------------------------------------------


class _Positions:
    """Source positions, built on demand: each object's text is composed again when asked."""

    CACHE = 16

    def __init__(self, text: str, docs: list[_Doc]):
        self.text = text
        self.spans: dict = {}
        for doc in docs:
            if doc.span is not None:
                self.spans[(doc.index,)] = doc.span
            for i, span in enumerate(doc.item_spans or ()):
                self.spans[(doc.index, i)] = span
        self._nodes: OrderedDict = OrderedDict()  # ref -> (root node, line offset, first-line column shift)

    def object_line(self, ref: tuple) -> int | None:
        span = self.spans.get(ref)
        return span[2] + 1 if span else None

    def position(self, ref: tuple, path: tuple) -> tuple[int, int] | None:
        span = self.spans.get(ref)
        if span is not None and not path:
            return (span[2] + 1, span[3] + 1)
        composed = self._node(ref)
        if composed is None:
            return (span[2] + 1, span[3] + 1) if span else None
        node, line_offset, first_line_shift = composed
        mark = _mark_at(node, path)
        return (mark.line + line_offset + 1, mark.column + 1 + (first_line_shift if mark.line == 0 else 0))

    def _node(self, ref: tuple):
        if ref in self._nodes:
            self._nodes.move_to_end(ref)
            return self._nodes[ref]
        composed = self._compose_slice(ref) or self._compose_from_stream(ref)
        if composed is not None:
            self._nodes[ref] = composed
            if len(self._nodes) > self.CACHE:
                self._nodes.popitem(last=False)
        return composed

    def _compose_slice(self, ref: tuple):
        """Compose just the object's text, indented as in the stream so block structure holds.
        (An object far along one long line, minified JSON, is flow style and needs no indent.)"""
        span = self.spans.get(ref)
        if span is None:
            return None
        start, end, line, column = span
        indent = column if column <= 1000 else 0
        try:
            node = next(yaml.compose_all(" " * indent + self.text[start:end], Loader=yaml.CSafeLoader), None)
        except Exception:  # e.g. an alias to an anchor outside the slice
            return None
        if not isinstance(node, MappingNode):
            return None
        return node, line, column - indent

    def _compose_from_stream(self, ref: tuple):
        """The slow way: compose the stream up to the object's document."""
        try:
            with gc_paused():
                for index, node in enumerate(yaml.compose_all(self.text, Loader=yaml.CSafeLoader)):
                    if index == ref[0]:
                        break
                else:
                    return None
        except Exception:
            return None
        if len(ref) > 1:
            if isinstance(node, MappingNode):
                node = _child(node, "items")
            if not isinstance(node, SequenceNode) or ref[1] >= len(node.value):
                return None
            node = node.value[ref[1]]
        return node, 0, 0


def _mark_at(node, path: tuple):
    """The mark of the deepest node on `path`: a mapping member's key, a list item."""
    mark = node.start_mark
    for part in path:
        if isinstance(node, MappingNode) and isinstance(part, str):
            pair = _member(node, part, set())
            if pair is None:
                break
            mark, node = pair[0].start_mark, pair[1]
        elif isinstance(node, SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            node = node.value[part]
            mark = node.start_mark
        else:
            break
    return mark


def _member(node, key: str, seen: set):
    """The (key node, value node) pair for `key`: the node's own last one, else a merged one."""
    if id(node) in seen:
        return None
    seen.add(id(node))
    merges = []
    for key_node, value_node in reversed(node.value):
        if key_node.tag == _MERGE:
            merges.append(value_node)
        elif isinstance(key_node, ScalarNode) and key_node.value == key:
            return key_node, value_node
    for source in reversed(merges):
        for candidate in source.value if isinstance(source, SequenceNode) else [source]:
            if isinstance(candidate, MappingNode):
                pair = _member(candidate, key, seen)
                if pair is not None:
                    return pair
    return None


def _child(node, key: str):
    pair = _member(node, key, set())
    return pair[1] if pair else None
