"""Deep YAML at every door: generated nestings (flow, block, compact, tagged in every tag form,
anchored, mixed) go to every entry point that reads YAML — `manage.py allocate`, the API, the
page form, the workshop share API and form, a lesson's scenario in a shared workshop — and each
answers with the located refusal (exit 2, or a 400 naming the limit and the line), never a
crash. The entry points run in a child process (tests/yaml_entry_points.py): a segfault there
ends the child, and the test fails on it instead of taking the test run down."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent

TAGS = ["", "!t", "!<a,b>", "!<tag:example.com,2025:[x]>", "!<a?b-c:d>", "!<!x>"]
ANCHORS = ["", "&a", "&b-1"]


class Child:
    def __init__(self):
        self.process = None

    def start(self):
        self.process = subprocess.Popen([sys.executable, str(ROOT / "tests" / "yaml_entry_points.py")],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                        text=True, cwd=ROOT)
        assert json.loads(self.process.stdout.readline()) == {"ready": True}

    def ask(self, text: str) -> dict:
        if self.process is None or self.process.poll() is not None:
            self.start()
        self.process.stdin.write(json.dumps({"text": text}) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            code = self.process.wait()
            self.process = None
            pytest.fail(f"the entry points' process ended (exit {code}: a crash) on {text[:120]!r}…")
        return json.loads(line)

    def close(self):
        if self.process is not None:
            self.process.stdin.close()
            self.process.wait(10)


@pytest.fixture(scope="module")
def child():
    child = Child()
    yield child
    child.close()


def props(tag: str, anchor: str) -> str:
    return " ".join(p for p in (anchor, tag) if p)


@st.composite
def nestings(draw):
    """A YAML document nested deeper than 100 levels: block levels first (block may hold flow,
    not the other way round), then compact `- - -` levels, then flow levels."""
    block = draw(st.lists(st.tuples(st.sampled_from(["seq", "map"]), st.sampled_from(TAGS), st.sampled_from(ANCHORS)),
                          max_size=60))
    compact = draw(st.integers(0, 80))
    flow_count = max(0, 101 - len(block) - compact) + draw(st.sampled_from([0, 5, 200, 2_000, 30_000]))
    flow_kinds = draw(st.lists(st.sampled_from(["[", "{"]), min_size=1, max_size=3))
    flow_tag = draw(st.sampled_from(TAGS))
    flow_anchor = draw(st.sampled_from(ANCHORS))
    lines, indent = ["a:"], "  "
    for kind, tag, anchor in block:
        prefix = "- " if kind == "seq" else "k: "
        lines.append(indent + prefix + props(tag, anchor))
        indent += "  "
    opened = []
    head = indent + "- " * compact
    # A node has one anchor and one tag: the first flow level is the last block level's node itself when
    # nothing comes between them, so it takes no properties of its own if that level has some.
    shared_node = compact == 0 and bool(block) and bool(props(block[-1][1], block[-1][2]))
    for i in range(flow_count):
        kind = flow_kinds[i % len(flow_kinds)]
        opened.append(kind)
        own = "" if i == 0 and shared_node else props(flow_tag, flow_anchor.replace("a", f"a{i}") if flow_anchor else "")
        head += own + " " + kind + (" k: " if kind == "{" else " ")
    closing = "".join("]" if kind == "[" else "}" for kind in reversed(opened))
    lines.append(head + "x" + closing)
    return "\n".join(lines) + "\n"


def refused_with_a_line(message: str, limit: int) -> bool:
    return f"nesting is deeper than {limit} levels" in message and "(line " in message


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(text=nestings())
def test_deep_yaml_is_a_located_refusal_at_every_entry_point(child, text):
    answers = child.ask(text)

    code, printed = answers["cli"]
    assert code == 2 and refused_with_a_line(printed, 100), printed[:300]
    status, message = answers["api"]
    assert status == 400 and refused_with_a_line(message, 100), message[:300]
    status, page = answers["page"]
    assert status == 200 and "outcome-invalid" in page and refused_with_a_line(page, 100)
    shareable = len(text.encode()) <= 256 * 1024  # larger workshops are a 413 before any reading
    for name in ("share_api", "share_form"):
        status, body = answers[name]
        if shareable:
            assert status == 400 and refused_with_a_line(body, 40), (name, body[:300])
        else:
            assert status == 413 and "shared workshops are limited to 262,144 bytes" in body, (name, body[:300])
    status, body = answers["lesson"]
    assert status == (400 if shareable else 413), body[:300]  # the lint ran the lesson's scenario and lived


def test_the_verbatim_tag_that_segfaulted_the_cli_is_refused(child):
    """Issue 27 item 2: `a: !<a,b> [` 100,000 times crashed `manage.py allocate` (exit 139)."""
    text = "a: " + "!<a,b> [" * 100_000 + "]" * 100_000 + "\n"
    answers = child.ask(text)

    assert answers["cli"][0] == 2 and "nesting is deeper than 100 levels (line 1)" in answers["cli"][1]
    assert answers["api"] == [400, "nesting is deeper than 100 levels (line 1)"]


def test_fifty_thousand_brackets_in_a_shared_workshop_are_a_400(child):
    """Issue 27 item 1: this 100 KB body segfaulted a web worker on /api/v1/workshops and /workshops/share."""
    answers = child.ask("[" * 50_000 + "]" * 50_000)

    for name in ("share_api", "share_form"):
        assert answers[name][0] == 400 and "nesting is deeper than 40 levels (line 1)" in answers[name][1]
