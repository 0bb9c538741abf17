"""What the loader and validation keep for speed (a scalar's value by its tag and text, the attribute
names and one-value attributes found valid) must never change an answer or hide a problem, on the
same device, a later device or a later object."""
from allocator.engine.loader import load_scenario
from allocator.engine.validation import validate


def slice_with(*attribute_sets) -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
        "spec": {"driver": "gpu.example.com", "pool": {"name": "p", "resourceSliceCount": 1}, "nodeName": "n",
                 "devices": [{"name": f"d{i}", "attributes": attributes} for i, attributes in enumerate(attribute_sets)]},
    }


def messages(obj) -> list[tuple]:
    return [(fe.path, fe.message) for fe in validate(obj) if fe.severity == "error"]


def test_a_bool_where_an_int_belongs_is_refused_after_the_int_one_was_found_valid():
    # True == 1 in Python: the kept valid {int: 1} must not answer for {int: true}.
    found = messages(slice_with({"index": {"int": 1}}, {"index": {"int": True}}, {"index": {"int": 1}}))
    assert [path for path, _ in found] == [("spec", "devices", 1, "attributes", "index", "int")]
    assert "expected" in found[0][1] or "integer" in found[0][1]


def test_a_bad_version_and_a_bad_name_are_refused_wherever_they_come_back():
    good = {"model": {"string": "l4"}, "driverVersion": {"version": "1.2.0"}}
    bad = {"model": {"string": "l4"}, "driverVersion": {"version": "1.2"}, "bad name": {"int": 0}}
    found = messages(slice_with(good, bad, good, bad))
    paths = sorted(path for path, _ in found)
    for device in (1, 3):
        assert ("spec", "devices", device, "attributes", "driverVersion", "version") in paths
        assert ("spec", "devices", device, "attributes") in paths  # the name `bad name`
    assert not [path for path in paths if path[2] in (0, 2)]
    # Validating again (the kept entries now in place) finds the same.
    assert messages(slice_with(good, bad, good, bad)) == found


def test_a_scalar_reads_the_same_each_time_and_a_bad_one_is_refused_each_time():
    text = ("apiVersion: v1\nkind: Node\nmetadata: {name: node-1}\nx: [0x1F, 017, 1_000, yes, Off, ~, .5, 1e3]\n"
            "bad: !!int nope\n")
    for _ in range(2):
        loaded = load_scenario(text)
        assert [p.message for p in loaded.problems] == ["'nope' is not a valid !!int (line 5, column 6)"]
    ok = load_scenario(text.replace("bad: !!int nope\n", ""))
    assert not ok.problems
    assert ok.objects[0].data["x"] == [31, 15, 1000, True, False, None, 0.5, "1e3"]


def _documents(docs) -> list:
    return [(d.index, d.data, d.span, d.item_spans, d.issues) for d in docs]


def _streams() -> list[str]:
    import glob
    import os

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    files = sorted(glob.glob(os.path.join(root, "allocator", "examples", "*.yaml")))
    files += sorted(glob.glob("/work/shared/realworld/**/*.y*ml", recursive=True))
    texts = [open(name, encoding="utf-8", errors="replace").read() for name in files]
    many_errors = "".join(f"---\napiVersion: v1\nkind: Node\nmetadata: {{name: n{i}, name: again}}\n" for i in range(150))
    return texts + [many_errors + "---\napiVersion: v1\nkind: Node\nmetadata: {name: last}\n",
                    "# only a comment\n---\n---\napiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\n# end\n"]


def test_a_first_read_of_a_stream_keeps_each_piece_as_if_it_had_been_read_alone():
    # A stream read for the first time is read whole, and its pieces (the text between `---` lines)
    # kept for the next read: what is kept must be what reading the piece alone gives, and the next
    # read (from the kept pieces) must give what the first did.
    from allocator.engine import loader

    for text in _streams():
        loader.clear_cache()
        first = loader._load_documents(text)
        assert _documents(first[0]) == _documents(loader._load_yaml(text)[0]) and first[1] == loader._load_yaml(text)[1]
        for piece, (kept, read_at, read_at_line) in list(loader._pieces.items()):
            kept = [doc.shifted(n, -read_at, -read_at_line) for n, doc in enumerate(kept)]  # as read alone
            alone, problems = loader._load_yaml(piece)
            assert not problems and _documents(kept) == _documents(alone), piece[:80]
        again = loader._load_documents(text)
        assert _documents(again[0]) == _documents(first[0]) and again[1] == first[1]
    loader.clear_cache()


def test_an_alias_in_one_document_of_a_stream_read_whole_is_followed_and_the_others_read_plainly():
    text = ("apiVersion: v1\nkind: Node\nmetadata: {name: a, labels: {zone: z1}}\n"
            "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: b\n  labels: &l {zone: z2}\n  annotations: *l\n"
            "---\napiVersion: v1\nkind: Node\nmetadata: {name: c, labels: {note: 'a * b'}}\n")
    loaded = load_scenario(text)
    assert not loaded.problems
    metas = [o.data["metadata"] for o in loaded.objects]
    assert metas[1]["annotations"] == {"zone": "z2"} == metas[1]["labels"]
    assert metas[2]["labels"] == {"note": "a * b"} and metas[0]["labels"] == {"zone": "z1"}
    # An anchor belongs to its document: a later one cannot name it.
    later = load_scenario(text + "---\napiVersion: v1\nkind: Node\nmetadata: {name: d, labels: *l}\n")
    assert any("alias" in p.message for p in later.problems)
