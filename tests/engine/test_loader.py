"""Reading scenario streams: documents, Lists, JSON, positions, and input that must be refused."""
import json
import time

import pytest

from allocator.engine import loader as loader_module
from allocator.engine import yamlguard
from allocator.engine.loader import Loaded, RawObject, load_scenario
from allocator.engine.problems import ERROR, WARNING

SLICE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: worker-1-gpus
spec:
  driver: gpu.example.com
  nodeName: worker-1
  pool: {name: worker-1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
  - name: gpu-1
    attributes:
      model:
        string: A100
"""

CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: claim-0
  namespace: team-a
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
"""

NODE = """\
apiVersion: v1
kind: Node
metadata:
  name: worker-1
"""


def load_quickly(text, **kwargs) -> Loaded:
    """Hostile input must be answered promptly (a generous bound: this guards against hangs, not speed)."""
    start = time.process_time()  # CPU time: a loaded machine must not fail this, a hang must
    loaded = load_scenario(text, **kwargs)
    assert time.process_time() - start < 10, f"took {time.process_time() - start:.1f} s of CPU"
    return loaded


def only_error(loaded: Loaded):
    errors = [p for p in loaded.problems if p.severity == ERROR]
    assert len(errors) == 1, [p.render() for p in loaded.problems]
    return errors[0]


# -- documents and Lists -------------------------------------------------------


def test_multi_document_stream_yields_each_object_with_its_line():
    loaded = load_scenario(NODE + "---\n" + SLICE + "---\n" + CLAIM)

    assert loaded.problems == []
    assert [o.data["kind"] for o in loaded.objects] == ["Node", "ResourceSlice", "ResourceClaim"]
    assert [o.ref for o in loaded.objects] == [(0,), (1,), (2,)]
    assert [o.line for o in loaded.objects] == [1, 6, 21]
    assert isinstance(loaded.objects[0], RawObject)


def test_empty_documents_and_comments_are_skipped_but_keep_their_index():
    loaded = load_scenario("# a comment\n---\n---\n# another\n---\n" + NODE)

    assert [o.ref for o in loaded.objects] == [(2,)]
    assert loaded.problems == []


@pytest.mark.parametrize("text", ["", "# nothing here\n", "---\n...\n", "   \n"])
def test_a_stream_without_objects_is_fine(text):
    loaded = load_scenario(text)

    assert loaded.objects == [] and loaded.problems == []


def test_list_items_are_flattened_with_item_refs_and_lines():
    text = "apiVersion: v1\nkind: List\nmetadata: {}\nitems:\n" + "".join(
        "- " + doc.rstrip("\n").replace("\n", "\n  ") + "\n" for doc in (NODE, SLICE)
    )
    loaded = load_scenario(NODE + "---\n" + text)

    assert [(o.ref, o.data["kind"], o.line) for o in loaded.objects] == [
        ((0,), "Node", 1),
        ((1, 0), "Node", 10),
        ((1, 1), "ResourceSlice", 14),
    ]


def test_typed_lists_as_kubectl_prints_them_are_flattened():
    text = "apiVersion: resource.k8s.io/v1\nkind: ResourceSliceList\nitems:\n- " + SLICE.rstrip().replace(
        "\n", "\n  "
    )
    loaded = load_scenario(text)

    assert [(o.ref, o.data["metadata"]["name"]) for o in loaded.objects] == [((0, 0), "worker-1-gpus")]


def test_a_list_without_items_holds_no_objects():
    assert load_scenario("apiVersion: v1\nkind: List\nitems: null\n").objects == []
    assert load_scenario("apiVersion: v1\nkind: List\nitems: []\n").objects == []


def test_list_items_that_are_not_a_list_are_a_problem():
    problem = only_error(load_scenario("apiVersion: v1\nkind: List\nitems: {a: 1}\n"))

    assert problem.message == 'document 1: "items" of a List must be a list, got a mapping'
    assert (problem.path, problem.line) == (("items",), 3)


def test_a_list_item_that_is_not_an_object_is_reported_with_its_line():
    loaded = load_scenario("apiVersion: v1\nkind: List\nitems:\n- " + NODE.rstrip().replace("\n", "\n  ") + "\n- 42\n")

    problem = only_error(loaded)
    assert problem.message == (
        "document 1, items[1]: expected a Kubernetes object (a mapping with apiVersion and kind), got a number"
    )
    assert (problem.ref, problem.line) == ((0, 1), 8)
    assert [o.ref for o in loaded.objects] == [(0, 0)]


# -- JSON ------------------------------------------------------------------------


def test_json_object_is_read():
    loaded = load_scenario(json.dumps({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}))

    assert [(o.ref, o.line, o.data["metadata"]) for o in loaded.objects] == [((0,), 1, {"name": "n"})]


def test_json_list_is_flattened_with_lines_of_items():
    objects = [yaml_object(NODE), yaml_object(SLICE)]
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}, indent=4)
    loaded = load_scenario(text)

    assert loaded.problems == []
    assert [o.ref for o in loaded.objects] == [(0, 0), (0, 1)]
    assert [o.data for o in loaded.objects] == objects
    assert [o.line for o in loaded.objects] == [5, 12]
    assert [text.splitlines()[o.line - 1].strip() for o in loaded.objects] == ["{", "{"]


def test_json_array_of_objects_is_read_as_items():
    text = json.dumps([yaml_object(NODE), yaml_object(CLAIM)])
    loaded = load_scenario(text.encode())

    assert [(o.ref, o.data["kind"], o.line) for o in loaded.objects] == [
        ((0, 0), "Node", 1),
        ((0, 1), "ResourceClaim", 1),
    ]


def test_json_numbers_keep_json_meaning():
    loaded = load_scenario('{"apiVersion": "v1", "kind": "X", "a": 1e3, "b": "2024-01-01T00:00:00Z"}')

    assert loaded.objects[0].data["a"] == 1000.0
    assert loaded.objects[0].data["b"] == "2024-01-01T00:00:00Z"


def test_json_with_duplicate_key_is_reported_with_its_position():
    loaded = load_scenario('{\n  "apiVersion": "v1",\n  "kind": "Node",\n  "kind": "Pod"\n}')

    problem = only_error(loaded)
    assert problem.message == 'duplicate key "kind"'
    assert (problem.line, problem.column, problem.path) == (4, 3, ("kind",))


def test_broken_json_gets_a_yaml_error_with_position():
    problem = only_error(load_scenario('{"apiVersion": "v1",\n "kind": "Node",,\n}'))

    assert problem.message.startswith("YAML syntax error: ")
    assert problem.line == 2


def yaml_object(text):
    return load_scenario(text).objects[0].data


# -- positions -----------------------------------------------------------------


def test_line_of_nested_path_in_a_list_item():
    text = "apiVersion: v1\nkind: List\nitems:\n- " + NODE.rstrip().replace("\n", "\n  ") + "\n- "
    text += SLICE.rstrip().replace("\n", "\n  ") + "\n"
    loaded = load_scenario(text)

    # line 21 is "          string: A100", the key at column 11
    assert loaded.line_of((0, 1), ("spec", "devices", 1, "attributes", "model", "string")) == (21, 11)
    assert loaded.line_of((0, 1), ("spec", "devices", 1)) == (18, 7)
    assert loaded.line_of((0, 1), ("spec", "pool", "generation")) == (15, 28)
    assert loaded.line_of((0, 1)) == (8, 3)


def test_line_of_in_the_third_document():
    loaded = load_scenario(NODE + "---\n" + SLICE + "---\n" + CLAIM)

    assert loaded.line_of((2,), ("spec", "devices", "requests", 0, "exactly", "deviceClassName")) == (31, 9)
    assert loaded.line_of((2,), ("metadata", "namespace")) == (25, 3)


def test_line_of_a_missing_path_is_its_deepest_existing_ancestor():
    loaded = load_scenario(NODE + "---\n" + SLICE)

    assert loaded.line_of((1,), ("spec", "devices", 0, "capacity", "memory")) == (15, 5)
    assert loaded.line_of((1,), ("spec", "devices", 7)) == (14, 3)
    assert loaded.line_of((1,), ("nothing",)) == (6, 1)


def test_line_of_an_unknown_object_is_none():
    loaded = load_scenario(NODE)

    assert loaded.line_of((5,), ("spec",)) is None
    assert loaded.line_of(None) is None
    assert Loaded([], []).line_of((0,)) is None


def test_line_of_in_a_json_item():
    objects = [yaml_object(NODE), yaml_object(SLICE)]
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}, indent=2)
    loaded = load_scenario(text)
    lines = text.splitlines()

    line, column = loaded.line_of((0, 1), ("spec", "devices", 1, "name"))
    assert lines[line - 1][column - 1:].startswith('"name": "gpu-1"')


def test_line_of_in_minified_json_counts_columns_on_the_one_line():
    text = json.dumps([yaml_object(NODE), yaml_object(SLICE)], separators=(",", ":"))
    loaded = load_scenario(text)

    line, column = loaded.line_of((0, 1), ("spec", "nodeName"))
    assert line == 1
    assert text[column - 1:].startswith('"nodeName":"worker-1"')


def test_line_of_follows_an_alias_to_an_earlier_item():
    text = "apiVersion: v1\nkind: List\nitems:\n- &node\n  apiVersion: v1\n  kind: Node\n  metadata: {name: a}\n"
    text += "- apiVersion: v1\n  kind: Node\n  metadata:\n    name: b\n    labels: *node\n"
    loaded = load_scenario(text)

    assert loaded.line_of((0, 1), ("metadata", "labels", "kind")) == (6, 3)


def test_line_of_finds_a_key_brought_in_by_a_merge():
    text = NODE + "---\napiVersion: v1\nkind: Pod\nmetadata: &m {name: p}\nspec:\n  <<: *m\n"
    loaded = load_scenario(text)

    assert loaded.objects[1].data["spec"] == {"name": "p"}
    assert loaded.line_of((1,), ("spec", "name")) == (8, 15)


# -- hostile input ---------------------------------------------------------------


def test_yaml_syntax_error_names_the_line_of_the_key_without_its_colon():
    # libyaml notices the missing ':' at the next line; the mistake is the key `c` on line 7.
    text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n  labels:\n    a: b\n  c\nspec: {}\n"
    problem = only_error(load_quickly(text))

    assert problem.message == ("YAML syntax error: could not find expected ':' while scanning a simple key "
                               "(line 7, column 3; noticed at line 8, column 1)")
    assert (problem.line, problem.column) == (7, 3)


def test_a_quote_never_closed_is_located_where_it_opens_not_at_the_end_of_the_text():
    problem = only_error(load_quickly('apiVersion: v1\nkind: Node\nmetadata:\n  name: "a\n'))

    assert (problem.line, problem.column) == (4, 9)


def test_a_block_collections_error_keeps_the_token_that_broke_it():
    problem = only_error(load_quickly("- a\n- b\nc: 1\n"))

    assert problem.message == "YAML syntax error: did not find expected '-' indicator (line 3, column 1)"


def test_documents_before_a_syntax_error_are_kept():
    loaded = load_quickly(NODE + "---\na: [1, 2\n")

    assert [o.data["kind"] for o in loaded.objects] == ["Node"]
    assert only_error(loaded).message == ("YAML syntax error: did not find expected ',' or ']' while parsing a flow "
                                          "sequence (line 6, column 4; noticed at line 7, column 1)")


BILLION_LAUGHS = "apiVersion: v1\nkind: ConfigMap\ndata:\n  a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"  {b}: &{b} [{', '.join(['*' + a] * 9)}]\n" for a, b in zip("abcdefgh", "bcdefghi")
)


def test_alias_bomb_is_refused():
    loaded = load_quickly(BILLION_LAUGHS)

    problem = only_error(loaded)
    assert problem.message.startswith("YAML aliases expand to more than 200000 nodes")
    assert loaded.objects == []


def test_one_long_string_aliased_many_times_is_refused_naming_the_object_and_field():
    text = (
        "apiVersion: v1\nkind: Node\nmetadata: {name: worker-1}\n---\n"
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: ns}\nspec:\n"
        "  devices:\n    config:\n    - opaque:\n        driver: d.example.com\n        parameters:\n"
        f"          blob: &s {'x' * 10_000}\n          copies: [{', '.join(['*s'] * 100_000)}]\n"
    )
    problem = only_error(load_quickly(text))

    assert problem.message.startswith("YAML aliases expand to more than ")
    assert "characters of text (document 2)" in problem.message
    assert (problem.kind, problem.name, problem.line) == ("ResourceClaim", "ns/c", 15)
    assert problem.path == ("spec", "devices", "config", 0, "opaque", "parameters", "copies")


def test_aliases_that_stay_small_are_allowed():
    text = "apiVersion: v1\nkind: Pod\nmetadata:\n  labels: &l {app: web}\n  annotations: *l\n"
    loaded = load_quickly(text)

    assert loaded.problems == []
    assert loaded.objects[0].data["metadata"]["annotations"] == {"app": "web"}


def test_recursive_alias_is_refused():
    problem = only_error(load_quickly("apiVersion: v1\nkind: Pod\nspec: &s {again: *s}\n"))

    assert problem.message.startswith("YAML aliases form a cycle")


def test_chained_merge_keys_stay_linear():
    text = "m0: &m0 {a: 1, b: 2}\n" + "".join(
        f"m{i}: &m{i} {{<<: [*m{i - 1}, *m{i - 1}], k{i}: 1}}\n" for i in range(1, 60)
    )
    loaded = load_quickly(text + "apiVersion: v1\nkind: ConfigMap\n")

    assert loaded.problems == []
    assert len(loaded.objects[0].data["m59"]) == 61


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("- " * 20_000 + "x\n", id="block-sequence-20000"),
        pytest.param("".join(" " * i + f"k{i}:\n" for i in range(5_000)), id="block-mapping-5000"),
        pytest.param("[" * 20_000 + "]" * 20_000, id="flow-sequence-20000"),
        pytest.param("[" * 8_000_000, id="flow-sequence-8000000-unclosed"),
        pytest.param("{a: " * 20_000 + "}" * 20_000, id="flow-mapping-20000"),
        pytest.param("".join(f"&a{i} [" for i in range(20_000)), id="anchored-flow-20000"),
        pytest.param('{"a":' * 20_000 + "1" + "}" * 20_000, id="json-20000"),
        pytest.param("a:\r" + "- " * 20_000, id="carriage-return-lines"),
    ],
)
def test_deep_nesting_is_refused_with_its_line(text):
    problem = only_error(load_quickly(text))

    assert problem.message.startswith("nesting is deeper than 100 levels (line ")
    assert problem.line is not None


def test_block_mapping_nested_20000_deep_is_refused_when_the_size_limit_allows_it():
    text = "".join(" " * i + f"k{i}:\n" for i in range(20_000))  # 200 MB of indentation
    problem = only_error(load_quickly(text, max_bytes=len(text)))

    assert problem.message == "nesting is deeper than 100 levels (line 101)"


def test_nesting_of_100_levels_is_allowed():
    text = "apiVersion: v1\nkind: ConfigMap\ndata: " + "{a: " * 99 + "1" + "}" * 99 + "\n"
    loaded = load_quickly(text)

    assert loaded.problems == []


def test_brackets_in_cel_expressions_do_not_count_as_nesting():
    claim = CLAIM.replace(
        "        deviceClassName: gpu.example.com\n",
        "        deviceClassName: gpu.example.com\n        selectors:\n        - cel:\n"
        '            expression: device.attributes["gpu.example.com"].model in ["A100", "H100"]\n',
    )
    text = "---\n".join([claim] * 200)
    loaded = load_quickly(text)

    assert loaded.problems == [] and len(loaded.objects) == 200
    assert not yamlguard.may_be_deep(text)  # no second pass over the events was needed


FLOW_SLICE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: worker-N-gpus}
spec:
  driver: gpu.example.com
  nodeName: worker-N
  pool: {name: worker-N, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes: {model: {string: A100}, index: {int: 0}, uuid: {string: 'GPU-0'}}
    capacity: {memory: {value: "40Gi"}}
"""


def test_small_flow_collections_by_the_thousand_do_not_count_as_nesting():
    text = "---\n".join(FLOW_SLICE.replace("N", str(n)) for n in range(500))
    loaded = load_quickly(text)

    assert loaded.problems == [] and len(loaded.objects) == 500
    assert not yamlguard.may_be_deep(text)  # no second pass over the events was needed


@pytest.mark.parametrize(
    "deep",
    [
        pytest.param("[" * 150 + "{a: b}" + "]" * 150, id="sequences-around-a-flat-mapping"),
        pytest.param("{a: " * 150 + "[x, 'y']" + "}" * 150, id="mappings-around-a-flat-sequence"),
        # `a:'b` is one plain scalar: the quote does not start a string, the `}` closes nothing
        pytest.param("{a:'b, 'c}' }, " * 150 + "x" + "}" * 150, id="quote-inside-a-plain-scalar"),
    ],
)
def test_deep_nesting_hidden_among_flat_flow_collections_is_still_measured(deep):
    text = "---\n".join(FLOW_SLICE.replace("N", str(n)) for n in range(100)) + "---\nkey: " + deep + "\n"

    assert yamlguard.may_be_deep(text)
    if deep.startswith("[" * 150):
        assert only_error(load_quickly(text)).message.startswith("nesting is deeper than 100 levels")


def test_oversize_input_is_refused_before_parsing():
    problem = only_error(load_quickly("a: b\n" * 100, max_bytes=200))

    assert problem.message == "scenario is 500 bytes, the limit is 200 bytes"


def test_oversize_counts_utf8_bytes():
    problem = only_error(load_quickly("é" * 150, max_bytes=200))

    assert problem.message == "scenario is 300 bytes, the limit is 200 bytes"


def test_invalid_utf8_names_byte_offset_and_line():
    problem = only_error(load_quickly(b"apiVersion: v1\nkind: Node\nmetadata:\n  name: caf\xc3\xa9\xff\n"))

    assert problem.message == (
        "input is not valid UTF-8 (is it a binary file?): byte 0xff at offset 49 (line 4, column 13)"
    )
    assert (problem.line, problem.column) == (4, 13)


@pytest.mark.parametrize("text", [b"apiVersion: v1\nkind: Node\x00\n", "apiVersion: v1\nkind: Node\x00\n"])
def test_nul_byte_says_input_looks_binary(text):
    problem = only_error(load_quickly(text))

    assert problem.message == "input looks binary: NUL byte at line 2"
    assert problem.line == 2


def test_binary_garbage_says_input_looks_binary():
    problem = only_error(load_quickly(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 100))

    assert problem.message == "input looks binary: NUL byte at line 3"


def test_control_character_is_reported_with_line_and_column():
    problem = only_error(load_quickly("apiVersion: v1\nkind: Nö\x07de\n"))

    assert problem.message == "input looks binary: control character U+0007 at line 2, column 9"


def test_utf16_with_byte_order_mark_is_read():
    loaded = load_quickly(NODE.encode("utf-16"))

    assert [o.data["kind"] for o in loaded.objects] == ["Node"]


def test_utf8_byte_order_mark_is_ignored():
    loaded = load_quickly(b"\xef\xbb\xbf" + NODE.encode())

    assert loaded.problems == [] and loaded.objects[0].line == 1


def test_a_scalar_document_is_not_an_object():
    loaded = load_quickly(NODE + "---\njust some text\n")

    problem = only_error(loaded)
    assert problem.message == (
        "document 2: expected a Kubernetes object (a mapping with apiVersion and kind), got a string"
    )
    assert (problem.line, problem.ref) == (6, (1,))
    assert len(loaded.objects) == 1


def test_a_block_list_at_top_level_is_not_an_object():
    problem = only_error(load_quickly("- " + NODE.rstrip().replace("\n", "\n  ") + "\n"))

    assert problem.message == (
        "document 1: expected a Kubernetes object (a mapping with apiVersion and kind), got a list"
    )


def test_an_object_without_kind_is_reported_and_left_out():
    loaded = load_quickly(NODE + "---\napiVersion: v1\nmetadata:\n  name: orphan\n  namespace: ns\n")

    problem = only_error(loaded)
    assert problem.message == 'document 2: missing "kind"; every Kubernetes object needs apiVersion and kind'
    assert (problem.name, problem.line, problem.ref) == ("ns/orphan", 6, (1,))
    assert [o.ref for o in loaded.objects] == [(0,)]


def test_an_object_without_apiversion_and_kind_is_one_problem():
    problem = only_error(load_quickly("metadata: {name: x}\n"))

    assert problem.message.startswith('document 1: missing "apiVersion" and "kind"')


def test_kind_that_is_not_a_string_is_reported_at_the_field():
    loaded = load_quickly("apiVersion: v1\nmetadata: {name: x}\nkind:\n  - Pod\n")

    problem = only_error(loaded)
    assert problem.message == 'document 1: "kind" must be a string, got a list'
    assert (problem.path, problem.line, problem.column) == (("kind",), 3, 1)
    assert loaded.objects == []


def test_duplicate_key_is_an_error_with_its_line_and_path():
    text = NODE + "---\n" + CLAIM.replace("  namespace: team-a\n", "  namespace: team-a\n  name: claim-1\n")
    loaded = load_quickly(text)

    problem = only_error(loaded)
    assert problem.message == 'duplicate key "name"'
    assert (problem.kind, problem.name, problem.path) == ("ResourceClaim", "team-a/claim-1", ("metadata", "name"))
    assert (problem.line, problem.column, problem.ref) == (11, 3, (1,))
    assert loaded.objects[1].data["metadata"]["name"] == "claim-1"  # the last one, as Kubernetes keeps


def test_duplicate_key_in_a_list_item_names_the_item():
    text = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  kind: Node\n"
    problem = only_error(load_quickly(text))

    assert (problem.message, problem.ref, problem.path, problem.line) == ('duplicate key "kind"', (0, 0), ("kind",), 6)


def test_a_key_overriding_a_merged_key_is_not_a_duplicate():
    text = "apiVersion: v1\nkind: Pod\nmetadata:\n  labels: &l {a: '1', b: '2'}\n  annotations:\n    <<: *l\n    a: '3'\n"
    loaded = load_quickly(text)

    assert loaded.problems == []
    assert loaded.objects[0].data["metadata"]["annotations"] == {"a": "3", "b": "2"}


def test_number_and_boolean_keys_become_strings_as_in_kubernetes():
    text = "apiVersion: v1\nkind: ConfigMap\ndata:\n  1: a\n  true: b\n  off: c\n  0x10: d\n  1.5: e\n  1e20: f\n"
    loaded = load_quickly(text)

    assert loaded.problems == []
    assert loaded.objects[0].data["data"] == {"1": "a", "true": "b", "false": "c", "16": "d", "1.5": "e", "1e20": "f"}


def test_float_keys_are_written_as_go_writes_them():
    text = "apiVersion: v1\nkind: ConfigMap\ndata:\n  1.0e+20: a\n  0.1: b\n  1234567.0: c\n  .inf: d\n"
    loaded = load_quickly(text)

    assert list(loaded.objects[0].data["data"]) == ["1e+20", "0.1", "1.234567e+06", ".inf"]


@pytest.mark.parametrize(
    ("entry", "what"), [("null: x", "null"), ("~: x", "null"), ("? [a, b]\n  : x", "a list"), ("? {a: b}\n  : x", "a mapping")]
)
def test_null_and_collection_keys_are_refused(entry, what):
    loaded = load_quickly(f"apiVersion: v1\nkind: ConfigMap\ndata:\n  {entry}\n")

    problem = only_error(loaded)
    assert problem.message == f"mapping keys must be strings, numbers or booleans, not {what}"
    assert (problem.line, problem.column) == (4, 3 if what == "null" else 5)


@pytest.mark.parametrize(
    ("value", "tag"),
    [
        ("!!python/object:os.system {a: 1}", "!!python/object:os.system"),
        ("!!python/name:os.system ''", "!!python/name:os.system"),
        ("!!binary aGVsbG8=", "!!binary"),
        ("!!set {a, b}", "!!set"),
        ("!custom x", "!custom"),
    ],
)
def test_unsafe_and_unknown_tags_are_refused_with_their_line(value, tag):
    loaded = load_quickly(f"apiVersion: v1\nkind: ConfigMap\ndata:\n  key: {value}\n")

    problem = only_error(loaded)
    assert problem.message == f"YAML tag {tag} is not allowed (line 4, column 8)"
    assert (problem.line, problem.column, problem.path) == (4, 8, ("data", "key"))


def test_a_value_that_does_not_fit_its_tag_is_an_error_with_position():
    problem = only_error(load_quickly("apiVersion: v1\nkind: ConfigMap\ndata:\n  key: !!int twelve\n"))

    assert problem.message == "'twelve' is not a valid !!int (line 4, column 8)"


def test_many_documents_are_refused_rather_than_read_for_minutes(monkeypatch):
    monkeypatch.setattr(loader_module, "MAX_DOCUMENTS", 1000)
    problem = only_error(load_quickly("---\n" * 5000))

    assert problem.message == "the stream has more than 1000 documents"


def test_many_problems_are_cut_short():
    loaded = load_quickly("--- x\n" * 1000)

    assert len(loaded.problems) == 101
    assert loaded.problems[-1].message == "only the first 100 errors are shown"


# -- how values are read ------------------------------------------------------------


def test_timestamps_stay_the_strings_they_were_written_as():
    text = "apiVersion: v1\nkind: X\nmetadata:\n  creationTimestamp: 2024-01-01T00:00:00Z\n"
    text += "a: [2024-01-01, 2001-12-14 21:59:43.10 -5, !!timestamp 2024-02-02]\n"
    data = load_quickly(text).objects[0].data

    assert data["metadata"]["creationTimestamp"] == "2024-01-01T00:00:00Z"
    assert data["a"] == ["2024-01-01", "2001-12-14 21:59:43.10 -5", "2024-02-02"]


def test_yaml_11_booleans_and_numbers_read_as_kubernetes_reads_them():
    text = "apiVersion: v1\nkind: X\na: [yes, on, off, No, TRUE, '1e3', 1e3, 1.5e+3, 0x1f, 017, 1:30, ~, .inf]\n"
    data = load_quickly(text).objects[0].data

    assert data["a"] == [True, True, False, False, True, "1e3", "1e3", 1500.0, 31, 15, "1:30", None, float("inf")]


def test_a_bare_y_stays_a_string_with_a_warning():
    loaded = load_quickly("apiVersion: v1\nkind: X\nmetadata: {name: x}\nmodel: Y\nok: 'n'\n")

    assert loaded.objects[0].data["model"] == "Y" and loaded.objects[0].data["ok"] == "n"
    [warning] = loaded.problems
    assert warning.severity == WARNING
    assert warning.message.startswith("unquoted Y is the boolean true to Kubernetes (YAML 1.1)")
    assert (warning.kind, warning.name, warning.path, warning.line) == ("X", "x", ("model",), 4)


def test_objects_hold_only_plain_data():
    data = load_quickly(SLICE).objects[0].data

    def plain(value):
        if isinstance(value, dict):
            return all(isinstance(k, str) and plain(v) for k, v in value.items())
        if isinstance(value, list):
            return all(plain(v) for v in value)
        return value is None or isinstance(value, (str, int, float, bool))

    assert plain(data)


# -- documents read once -------------------------------------------------------------


def _as_read(loaded: Loaded) -> tuple:
    """Everything a reader of a Loaded sees: objects, their lines, problems, and positions inside."""
    objects = [(o.data, o.ref, o.line) for o in loaded.objects]
    problems = [(p.message, p.line, p.column, p.path, p.ref, p.severity) for p in loaded.problems]
    positions = [loaded.line_of(o.ref, ("metadata", "name")) for o in loaded.objects]
    return objects, problems, positions


def _uncached(text) -> Loaded:
    loader_module.clear_cache()
    loaded = load_scenario(text)
    loader_module.clear_cache()
    return loaded


def _counting_parses(monkeypatch) -> list:
    parsed = []
    real = loader_module._load_yaml

    def counting(text):
        parsed.append(text)
        return real(text)

    monkeypatch.setattr(loader_module, "_load_yaml", counting)
    return parsed


def test_editing_one_document_reads_only_that_document_again(monkeypatch):
    loader_module.clear_cache()
    load_scenario("---\n".join([NODE, SLICE, CLAIM]))
    parsed = _counting_parses(monkeypatch)

    edited = "---\n".join([NODE, SLICE, CLAIM.replace("claim-0", "claim-1")])
    loaded = load_scenario(edited)

    assert parsed == ["---\n" + CLAIM.replace("claim-0", "claim-1")]
    assert _as_read(loaded) == _as_read(_uncached(edited))


def test_lines_shift_when_an_earlier_document_grows():
    duplicate = CLAIM.replace("  namespace: team-a\n", "  namespace: team-a\n  namespace: team-b\n")
    before = "---\n".join([NODE, SLICE, duplicate])
    after = "---\n".join(["# a comment\n# and another\n" + NODE, SLICE + "  # note\n", duplicate])
    load_scenario(before)

    loaded = load_scenario(after)

    problem = only_error(loaded)
    assert (problem.message, problem.line) == ('duplicate key "namespace"', 29)
    assert loaded.objects[2].line == 24 and loaded.line_of((2,), ("spec", "devices")) == (31, 3)
    assert _as_read(loaded) == _as_read(_uncached(after))


@pytest.mark.parametrize(
    "broken",
    [
        pytest.param("apiVersion: v1\nkind: Node\nmetadata: {name: [\n", id="syntax-error"),
        pytest.param("apiVersion: v1\nkind: Node\nmetadata: !!set {a: b}\n", id="refused-tag"),
        pytest.param("apiVersion: v1\nkind: Nöde\x07\n", id="control-character"),
        pytest.param('apiVersion: v1\nkind: "Node\n---\n"\n', id="document-marker-inside-a-string"),
    ],
)
def test_a_document_that_does_not_read_gives_the_streams_own_answer(broken):
    text = "---\n".join([NODE, SLICE, broken, CLAIM])
    load_scenario("---\n".join([NODE, SLICE, CLAIM]))  # the other documents are cached

    assert _as_read(load_scenario(text)) == _as_read(_uncached(text))


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("%YAML 1.1\n---\n" + NODE + "---\n" + CLAIM, id="directive"),
        pytest.param(("---\n".join([NODE, SLICE, CLAIM])).replace("\n", "\r\n"), id="crlf"),
        pytest.param(("---\n".join([NODE, SLICE, CLAIM])).replace("\n", "\r"), id="cr"),
        pytest.param(NODE + "...\n---\n" + CLAIM + "--- \n", id="document-end-and-empty-document"),
        pytest.param("# only a comment\n---\n" + NODE + "---\n---\n" + CLAIM, id="leading-comment"),
        pytest.param("a: &x [1]\n---\nb: *x\n", id="alias-to-an-earlier-document"),
    ],
)
def test_unusual_streams_read_the_same_cached_or_not(text):
    first = _as_read(_uncached(text))
    load_scenario(text)

    assert _as_read(load_scenario(text)) == first


def test_an_unchanged_document_keeps_its_memo_across_reads():
    loader_module.clear_cache()
    first = load_scenario("---\n".join([SLICE, NODE, CLAIM]))
    first.objects[1].memo["seen"] = True

    again = load_scenario("---\n".join([SLICE.replace("gpu-1", "gpu-2"), CLAIM, NODE]))

    assert again.objects[2].memo == {"seen": True} and again.objects[1].memo == {} == again.objects[0].memo
