"""The YAML guard: nesting and alias expansion measured before anything recursive reads the text,
whatever the collections' style, tags or anchors; ordinary scenarios never pay for the measure."""
import pytest

from allocator.engine import yamlguard
from allocator.engine.loader import load_scenario
from allocator.workshops.source import SourceError, read_located

TAGS = ["!t", "!!seq", "!<a,b>", "!<tag:example.com,2025:[x]>", "!<a?b-c:d>", "&a1 !<a,&b>", "!<x> &a2"]


@pytest.mark.parametrize("tag", TAGS)
def test_tagged_flow_nesting_is_refused_by_the_scenario_loader_with_its_line(tag):
    text = "a: " + f"{tag} [" * 300 + "x" + "]" * 300 + "\n"
    problems = load_scenario(text).problems

    assert [p.message for p in problems] == ["nesting is deeper than 100 levels (line 1)"]
    assert problems[0].line == 1


@pytest.mark.parametrize("tag", TAGS)
def test_tagged_nesting_is_never_judged_shallow(tag):
    assert yamlguard.may_be_deep("a: " + f"{tag} [" * 30 + "]" * 30)
    assert yamlguard.may_be_deep("k: " + f"{tag} {{a: " * 30 + "}" * 30)


def test_cel_brackets_and_inequalities_still_do_not_count():
    line = '    expression: device.attributes["x"].model != "a" && !(device.attributes["y"] in ["b"])\n'
    assert not yamlguard.may_be_deep("a:\n" + line * 2000)


def test_an_alias_chain_nests_as_deep_as_its_links_together():
    links = ["l0: &l0 " + "[" * 30 + "x" + "]" * 30]
    links += [f"l{i}: &l{i} " + "[" * 30 + f"*l{i - 1}" + "]" * 30 for i in range(1, 5)]
    problem = yamlguard.refusal("\n".join(links) + "\n", exact=True)

    assert problem.message.startswith("nesting is deeper than 100 levels, counting what the alias *l2 stands for")
    assert problem.line == 4


def test_an_alias_bomb_is_refused_on_the_event_stream():
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    problem = yamlguard.refusal("\n".join(lines) + "\n", exact=True)

    assert problem.message.startswith("YAML aliases expand to more than 200,000 nodes")


def test_a_workshop_file_nested_deep_is_refused_before_it_is_composed():
    text = "title: t\nsummary: " + "!<a,b> [" * 100_000 + "]" * 100_000 + "\n"  # segfaulted the composer
    with pytest.raises(SourceError) as caught:
        read_located(text)

    assert caught.value.message == "nesting is deeper than 40 levels (line 2)" and caught.value.line == 2


def test_a_workshop_file_over_its_size_limit_is_refused():
    with pytest.raises(SourceError, match="the workshop file is 4,194,305 bytes; the limit is 4,194,304 bytes"):
        read_located("#" * (4 * 1024 * 1024 + 1))


def test_flat_and_shallow_yaml_passes():
    text = "a: " + "[" * 90 + "]" * 90 + "\nb: &x {c: [1, 2]}\nd: *x\n"
    assert yamlguard.refusal(text, exact=True) is None
