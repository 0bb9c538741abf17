"""The fast block-YAML reader (allocator/engine/fastyaml.py) against libyaml: whatever it accepts it
must read exactly as the loader reads it with libyaml (values and their types, key order, the spans
of documents and List items, the remarks on a bare y/n), and whatever libyaml refuses it must leave
to libyaml. Checked on every YAML file of the repository and the shared folder, and on generated
texts: dumps of generated data in several styles, and line soups that are mostly not valid YAML."""
import itertools
import math
import subprocess
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allocator.engine import fastyaml, loader
from tests.conftest import CONFORMANCE_DIR, REALWORLD_DIR

ROOT = Path(__file__).resolve().parents[2]


def typed(value):
    """A value with its types spelled out, so 1, 1.0 and True differ, and key order counts."""
    if isinstance(value, dict):
        return ("map", [(typed(k), typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("seq", [typed(v) for v in value])
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, value)


def fast_docs(text):
    fast = fastyaml.read(text, loader._plain_value, {}, loader._is_list_kind, loader._TYPED_STARTS)
    if fast is None:
        return None
    return [(typed(data), span, item_spans, issues) for data, span, item_spans, issues in fast]


def libyaml_docs(text):
    docs, problems = loader._load_yaml_with_libyaml(text)
    return [(typed(d.data), d.span, d.item_spans, d.issues) for d in docs], problems


def check(text):
    """Returns whether the fast reader took the text."""
    fast = fast_docs(text)
    if fast is None:
        return False
    slow, problems = libyaml_docs(text)
    assert not problems, (text, problems)
    assert fast == slow, text
    return True


def yaml_files():
    files = [ROOT / name for name in subprocess.run(
        ["git", "ls-files", "*.yaml", "*.yml"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()]
    for folder in (CONFORMANCE_DIR, REALWORLD_DIR):
        if folder is not None:
            files += sorted(folder.rglob("*.yaml")) + sorted(folder.rglob("*.yml"))
    return files


def test_every_yaml_file_reads_as_libyaml_reads_it_and_most_take_the_fast_way():
    taken = total = 0
    for path in yaml_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        total += 1
        taken += check(text)
        for piece in loader._pieces_of(text) or ():  # the documents read alone, as an edit does
            check(piece[2])
    assert total > 100
    assert taken > total // 2  # the subset is the common case, not a corner


EXPECTED = [
    # (text, data) the fast reader takes, read as the loader reads them
    ("a: |\n  x\n   y\n\n  z\nb: |-\n  w\n\nc: |+\n  v\n\n", {"a": "x\n y\n\nz\n", "b": "w", "c": "v\n\n"}),
    ("a: 1\nb: yes\nc: 0o17\nd: 017\ne: 1_000\nf: .inf\ng: 2001-12-14\nh: ~\ni:\nj: '1'\nk: 1e3\nl: 0x1F\n",
     {"a": 1, "b": True, "c": "0o17", "d": 15, "e": 1000, "f": math.inf, "g": "2001-12-14", "h": None, "i": None,
      "j": "1", "k": "1e3", "l": 31}),
    ("a: x\n  y\n\n  z\nb: 'p\n  q''s'\nc: \"r  \n\n\n  s\"\n", {"a": "x y\nz", "b": "p q's", "c": "r\n\ns"}),
    ("items:\n- a: [] # c\n  b: {}\n-   c: d\n", {"items": [{"a": [], "b": {}}, {"c": "d"}]}),
    ("kind: List\nitems:\n  - a: 1\n    c: x\n      y\n  - b: 2\nz: 1\n",  # indented items: where each ends
     {"kind": "List", "items": [{"a": 1, "c": "x y"}, {"b": 2}], "z": 1}),
    ("a: [x, 'y', \"z\", 1, [ ], {b: {c: yes}, d : -1}]  # c\n",
     {"a": ["x", "y", "z", 1, [], {"b": {"c": True}, "d": -1}]}),
]


def test_known_texts_read_the_same_both_ways():
    for text, data in EXPECTED:
        assert check(text), text
        assert fast_docs(text)[0][0] == typed(data)


LEFT_TO_LIBYAML = [
    "a: 1\na: 2\n",  # duplicate key: an error
    "y: 1\n",  # a bare y as a key
    "1: x\n",  # a key that is not a string
    "<<: {a: 1}\n",  # merge
    "a: &x 1\nb: *x\n",  # anchors and aliases
    "a: !!str 1\n",  # a tag
    "a: >\n  text\n",  # a folded block scalar
    "a: |2\n  text\n",  # an indentation indicator
    "a: |\n\n  text\n",  # a blank line before the first line
    "a: {b: 1, b: 2}\n",  # a duplicate key in a flow collection
    "a: [x, y\n  z]\n",  # a flow collection over two lines
    "a: [x, n]\n",  # a bare n in a flow collection (libyaml places the warning)
    "a: {b}\n",  # a key without a value
    "a: 1\n---\n",  # an empty document
    "- a\n- b\n",  # a document that is a sequence
    "a: b: c\n",  # an error
    "a:\n  - x\n  b: 1\n",  # an error
    "a: 'x\n",  # an unclosed quote
    "a:\tb\n",  # a tab
    "a: \"x\\ty\"\n",  # an escape
    "%YAML 1.1\n---\na: 1\n",  # a directive
    "a: 1\r\nb: 2\r\n",  # a \r
    "a: 1\n" + "#" * fastyaml.MAX_CHARS,  # a text too long to hold split up
]


def test_what_it_does_not_read_is_left_to_libyaml():
    for text in LEFT_TO_LIBYAML:
        assert fast_docs(text) is None, text


def test_a_bare_y_is_read_with_the_warning_where_libyaml_puts_it():
    text = "kind: List\nitems:\n- a: 1\n  b:\n  - x\n  - n\n- c: Y   # comment\n"
    assert check(text)
    issues = fast_docs(text)[0][3]
    assert [(path, line, column) for path, _, line, column, _ in issues] == [
        (("items", 0, "b", 1), 6, 5), (("items", 1, "c"), 7, 6)]
    loaded = loader.load_scenario(text)
    assert [(p.line, p.path) for p in loaded.problems if p.severity == "warning"] == [(6, ("b", 1)), (7, ("c",))]


# -- generated texts ------------------------------------------------------------------------

SCALAR_TEXT_LIST = [
    "y", "Y", "n", "yes", "No", "on", "OFF", "true", "False", "null", "Null", "~", "", "0", "-1", "+1", "017",
    "0o17", "0x1F", "0b101", "1_000", "1__0", "0b_", "1.5", "1.", ".5", "1e3", "1.0e+3", ".inf", "-.Inf", ".NaN",
    "2001-12-14", "2001-12-14t21:59:43.10-05:00", "1:30", "<<", "=", "-", "?", ":", "-a", "?a", ":a", "a:b",
    "a b", "a  b", "a #b", "a#b", "#a", "'q'", "\"d\"", "it's", "[x]", "{x}", "a, b", "*a", "&a", "!a", "|", ">",
    "%a", "@a", "`a", "- a", "a: b", "é", "ünï", "\u00a0", "a\u00a0b", "device.driver == \"gpu.example.com\"",
]
SCALAR_TEXTS = st.sampled_from(SCALAR_TEXT_LIST)
KEYS = st.one_of(st.sampled_from(["apiVersion", "kind", "items", "metadata", "name", "spec", "a b", "y", "1",
                                  "true", "x.io/y", "a-b", "ñ"]), st.text("abcxyz-_./ ", min_size=1, max_size=6))
SCALARS = st.one_of(SCALAR_TEXTS, st.integers(-10**20, 10**20), st.floats(allow_nan=False), st.booleans(), st.none(),
                    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30),
                    st.text(" abc#:-'\"\n", max_size=40))
DATA = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4)), max_leaves=25)
DOCUMENT = st.one_of(
    st.dictionaries(KEYS, DATA, min_size=1, max_size=5),
    st.builds(lambda kind, items: {"apiVersion": "v1", "kind": kind, "items": items},
              st.sampled_from(["List", "PodList", "Pod"]), st.lists(st.one_of(DATA, st.dictionaries(KEYS, DATA)),
                                                                   max_size=4)),
)


@st.composite
def dumped(draw):
    documents = draw(st.lists(DOCUMENT, min_size=1, max_size=3))
    options = dict(
        default_flow_style=draw(st.sampled_from([False, False, None])),
        width=draw(st.sampled_from([20, 40, 80, 1000])),
        indent=draw(st.sampled_from([2, 3, 4])),
        allow_unicode=draw(st.booleans()),
        explicit_start=draw(st.booleans()),
        default_style=draw(st.sampled_from([None, None, None, "'", '"'])),
    )
    text = yaml.dump_all(documents, Dumper=yaml.SafeDumper, sort_keys=False, **options)
    # Sometimes indent the sequences of mappings (`key:\n  - a: 1`), add comments and blank lines.
    lines = text.split("\n")
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.integers(0, len(lines)))
        lines.insert(at, draw(st.sampled_from(["", "  ", "# c", "  # c", "---", "    #", "..."])))
    if draw(st.booleans()):
        suffix = draw(st.sampled_from([" # c", "  ", " #", "#"]))
        at = draw(st.integers(0, len(lines) - 1))
        lines[at] += suffix
    return "\n".join(lines)


LINE_PARTS = st.tuples(
    st.sampled_from(["", "", " ", "  ", "   ", "    ", "      "]),
    st.sampled_from(["", "", "", "- ", "-   ", "-", "- - "]),
    st.sampled_from(["", "", "a: ", "b: ", "items: ", "kind: ", "a:", "a :", "'a': ", "y: ", "a:  "]),
    st.one_of(SCALAR_TEXTS, st.sampled_from(["'x", "x'", "'x' # c", "\"x", "[]", "{}", "[] #", "'a''b'", "---", ""])),
)


@st.composite
def line_soup(draw):
    head = draw(st.sampled_from(["", "kind: List\nitems:\n", "apiVersion: v1\nkind: Pod\n", "---\n"]))
    lines = ["".join(parts) for parts in draw(st.lists(LINE_PARTS, min_size=1, max_size=12))]
    return head + "\n".join(lines) + draw(st.sampled_from(["", "\n", "\n\n", "\n# end\n"]))


SAFE_WORDS = ["a", "b1", "x.io/y", "==", '"q"', "it's", "1", "1.5", "a[x]", "&&", "a:b", "a#b", "é", "true", "-1",
              "0.5Gi", "device.driver"]
WORDS = st.sampled_from(SAFE_WORDS * 6 + [
    "a", "b1", "x.io/y", "==", '"q"', "it's", "-", "- x", "1", "y", "yes", "0x1F", "1.5", "[x]", "{y}", "&&", "a:b",
    "#", "a#b", ":", "?", "é", "~", "null", ",", "!", "*", "&", "|", ">", "%", "@", "---", "...", "''", "'",
])
BLOCK_KEYS = st.sampled_from(["a", "b", "name", "kind", "items", "x.io/y", "a b", "k-2", "ñ", "c", "d", "e", "f"] * 3
                             + ["on", "y", "1", "<<", "a:", "'q'"])


@st.composite
def block_yaml(draw):
    """Block-style YAML written line by line, with the freedoms a person takes: indentation of any
    width, sequences indented or not, scalars plain or quoted and folded over lines, comments and
    blank lines anywhere; mostly valid, sometimes not."""
    lines: list[str] = []

    def sometimes(p=0.15):
        return draw(st.floats(0, 1)) < p

    def gap(indent):
        while sometimes(0.1):
            lines.append(draw(st.sampled_from(["", " " * indent + "# c", "#", "   "])))

    def scalar(head: str, indent: int):
        """`head` then a scalar, on this line and perhaps the next ones (deeper than `indent`)."""
        style = draw(st.sampled_from(["plain", "plain", "plain", "single", "double", "empty", "literal"]))
        words = draw(st.lists(WORDS, min_size=1, max_size=4))
        if style == "literal":
            lines.append(head + "|" + draw(st.sampled_from(["", "", "-", "+", "2", " # c", "-  #c", ">"])))
            deeper = indent + draw(st.sampled_from([1, 2, 2, 4, 0]))
            for n, word in enumerate(words):
                if n and sometimes(0.2):
                    lines.append(draw(st.sampled_from(["", " ", "   ", " " * (deeper + 2)])))
                lines.append(" " * (deeper + draw(st.sampled_from([0, 0, 0, 1, 3]))) + word)
            if sometimes(0.3):
                lines.append(draw(st.sampled_from(["", " ", "   "])))
            return
        if style == "empty":
            lines.append(head.rstrip(" ") + draw(st.sampled_from(["", " # c", " "])))
            return
        if style == "single":
            words = [w.replace("'", "''") for w in words]
        if style == "double":
            words = [w.replace('"', "") or "q" for w in words]
        quote = {"plain": "", "single": "'", "double": '"'}[style]
        breaks = sorted(draw(st.sets(st.integers(1, len(words) - 1), max_size=2))) if len(words) > 1 else []
        pieces, last = [], 0
        for at in breaks + [len(words)]:
            pieces.append(" ".join(words[last:at]))
            last = at
        pieces[0] = head + quote + pieces[0]
        pieces[-1] += quote
        if sometimes(0.3):
            pieces[-1] += draw(st.sampled_from([" # c", "  ", " #x"]))
        lines.append(pieces[0])
        for piece in pieces[1:]:
            if sometimes(0.2):
                lines.append(draw(st.sampled_from(["", "  "])))
            deeper = indent + draw(st.sampled_from([1, 2, 2, 4, 0]))
            lines.append(" " * deeper + piece)

    def flow(depth: int) -> str:
        """A one-line flow collection, or a scalar in one."""
        if depth and (depth > 2 or sometimes(0.5)):
            word = draw(st.sampled_from(SAFE_WORDS)) if sometimes(0.8) else draw(WORDS)
            return draw(st.sampled_from([word, word, word, f"'{word}'", f'"{word}"', "", " "]))
        sep = draw(st.sampled_from([", ", ", ", ",", " , "])) if not sometimes(0.05) else ", , "
        pad = draw(st.sampled_from(["", "", " "]))
        size = draw(st.integers(0, 3))
        if sometimes(0.5):
            body = sep.join(flow(depth + 1) for _ in range(size))
            return "[" + pad + body + pad + ("]" if not sometimes(0.1) else draw(st.sampled_from([", ]", ""])))
        body = sep.join(draw(BLOCK_KEYS) + draw(st.sampled_from([": ", ": ", ":", " : "])) + flow(depth + 1)
                        for _ in range(size))
        return "{" + pad + body + pad + ("}" if not sometimes(0.1) else "]")

    def node(head: str, indent: int, depth: int, inline: bool, kind=None):
        """A value after `head` (`key:` or `-`); `inline`: a mapping may start on the head's line."""
        if kind is None:
            kind = draw(st.sampled_from(["scalar", "scalar", "map", "seq", "flow"])) if depth < 4 else "scalar"
        if kind == "scalar":
            scalar(head + " ", indent)
        elif kind == "flow":
            if sometimes(0.3):
                lines.append(head + draw(st.sampled_from([" []", " {}", " [] # c", " []", " {}  ", " []x", "[]"])))
            else:
                tail = draw(st.sampled_from(["#c", " x"])) if sometimes(0.1) else draw(st.sampled_from(["", " # c", "  "]))
                lines.append(head + " " + flow(0) + tail)
        elif kind == "map":
            if inline and not sometimes(0.1):
                column = len(head) + draw(st.sampled_from([1, 1, 3]))
                mapping(head + " " * (column - len(head)), column, depth + 1)
            else:
                lines.append(head)
                child = indent + draw(st.sampled_from([2, 2, 4, 1, 2, 3, 0]))
                mapping(" " * child, child, depth + 1)
        else:
            lines.append(head)
            child = indent + draw(st.sampled_from([0, 2, 2, 4]))
            for _ in range(draw(st.integers(1, 3))):
                gap(child)
                node(" " * child + draw(st.sampled_from(["-", "-", "-  "])), child, depth + 1, True)

    def mapping(first_head: str, column: int, depth: int):
        keys = draw(st.lists(BLOCK_KEYS, min_size=1, max_size=4, unique=not sometimes(0.05)))
        for n, key in enumerate(keys):
            gap(column)
            prefix = first_head if n == 0 else " " * column
            node(prefix + key + ":", column, depth, False)

    for n in range(draw(st.integers(1, 3))):
        if n or sometimes(0.3):
            lines.append("---")
        if sometimes(0.5):
            lines.append("kind: List")
            lines.append("items:")
            child = draw(st.sampled_from([0, 2]))
            for _ in range(draw(st.integers(0, 3))):
                gap(child)
                node(" " * child + "-", child, 1, True, None if sometimes(0.1) else "map")
        else:
            mapping("", 0, 0)
    return "\n".join(lines) + draw(st.sampled_from(["", "\n", "\n\n# end\n"]))


@st.composite
def literal_yaml(draw):
    """A literal block scalar (`|`) in a mapping or a sequence, its lines indented every which way,
    blank lines among and after them, and what may follow it."""
    prefix, head, column = draw(st.sampled_from([("", "a: ", 0), ("k:\n", "- ", 0), ("k:\n  ", "- a: ", 4),
                                                  ("k:\n  ", "- ", 2), ("k:\n", "  a: ", 2)]))
    header = "|" + draw(st.sampled_from(["", "-", "+", " # c", "+ #", "1", "-2", "x"]))
    indent = column + draw(st.sampled_from([1, 2, 2, 3, 0]))
    body = []
    for _ in range(draw(st.integers(0, 5))):
        body.append(draw(st.one_of(
            st.builds(lambda extra, word: " " * (indent + extra) + word, st.sampled_from([0, 0, 1, 3, -1]),
                      st.sampled_from(["x", "a: b", "# c", "- y", "'q'", "y", " "])),
            st.sampled_from(["", " ", " " * indent, " " * (indent + 2)]))))
    follow = draw(st.sampled_from(["", "b: 1", "# c", "---\nx: 1", " " * column + "c: 2", "-  z"]))
    return prefix + head + header + "\n" + "\n".join(body + [follow]) + draw(st.sampled_from(["", "\n", "\n\n"]))


SETTINGS = settings(max_examples=300, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))


@SETTINGS
@given(block_yaml())
def test_block_yaml_reads_as_libyaml_reads_it(text):
    check(text)


@SETTINGS
@given(literal_yaml())
def test_literal_block_scalars_read_as_libyaml_reads_them(text):
    check(text)


@settings(SETTINGS, max_examples=100)
@given(dumped())
def test_dumped_data_reads_as_libyaml_reads_it(text):
    check(text)


@SETTINGS
@given(line_soup())
def test_line_soups_read_as_libyaml_reads_them(text):
    check(text)


def depth(value) -> int:
    if isinstance(value, dict):
        return 1 + max(map(depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth, value), default=0)
    return 0


def test_what_it_takes_nests_less_deep_than_the_loader_refuses_so_its_guard_can_run_only_before_libyaml():
    # The deepest block form, mappings nested one column further each, then the deepest flow one.
    flow = "[" * fastyaml.MAX_FLOW_DEPTH + "]" * fastyaml.MAX_FLOW_DEPTH
    lines = [" " * n + f"k{n}:" for n in range(fastyaml.MAX_COLUMN + 1)]
    text = "\n".join(lines) + " " + flow + "\n"
    taken = fast_docs(text)
    assert taken is not None and check(text)
    deepest = depth(fastyaml.read(text, loader._plain_value, {}, loader._is_list_kind)[0][0])
    assert deepest == fastyaml.MAX_COLUMN + 1 + fastyaml.MAX_FLOW_DEPTH < loader.MAX_DEPTH
    # Sequences in between nest no deeper for the columns they take.
    mixed = "a:\n" + "".join(" " * (2 * n) + "- b:\n" for n in range(fastyaml.MAX_COLUMN // 2)) + " " * fastyaml.MAX_COLUMN + "- 1\n"
    assert check(mixed)
    assert depth(fastyaml.read(mixed, loader._plain_value, {}, loader._is_list_kind)[0][0]) < loader.MAX_DEPTH
    # One column or one bracket more is left to libyaml (and to the guard before it).
    assert fast_docs(text.replace("\n" + " " * fastyaml.MAX_COLUMN, "\n" + " " * (fastyaml.MAX_COLUMN + 1))) is None
    assert fast_docs("\n".join(lines) + " [" + flow + "]\n") is None
    # A literal block's lines may be indented further: they are text, not structure.
    assert check("a: |\n" + " " * 60 + "x\nb: 1\n")


def outcome(plain, text):
    try:
        return typed(plain(text))
    except (fastyaml.Unhandled, fastyaml.Noted) as exc:
        return (type(exc).__name__, exc.args)


def test_plain_scalars_read_the_short_way_have_the_values_the_implicit_types_give():
    words = ["yes", "no", "true", "false", "on", "off", "null", "y", "n", "nul", "nulls", "o", "t", "f", "yess"]
    texts = {"".join(letters) for word in words
             for letters in itertools.product(*[(c.lower(), c.upper()) for c in word])}
    texts |= {"~", "~a", "<<", "<", "0", "017", "0x1F", "1_000", "-1", "+1", "1.5", ".inf", ".NaN", "12345678901234567890",
              "2001-12-14", "=", "a", "node-a", "Node", "none", "1e3", "0b101", "-", ".", "+", "1__0", "9" * 30,
              "1\u00b2", "1\u0661", "00", "10", "123456789012345678", "1234567890123456789"}
    texts |= set(SCALAR_TEXT_LIST)
    for text in sorted(texts):
        assert outcome(loader._plain_value, text) == outcome(loader._resolved_value, text), text
