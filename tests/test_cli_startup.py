"""`manage.py allocate` starts in a blink: it imports neither Django nor anything its input does not
need, and what it imports before reading the scenario is only what reads the flags."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SIMPLE = ROOT / "allocator" / "examples" / "simple-gpu.yaml"

# Run manage.py as a user does, and note the modules loaded when the scenario file is opened and
# when the command ends (an audit hook sees the open).
PROBE = r"""
import json, sys
scenario, report, args = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
start = set(sys.modules)
seen = {}
def hook(event, hook_args):
    if event == "open" and "before" not in seen and hook_args and hook_args[0] == scenario:
        seen["before"] = sorted(set(sys.modules) - start)
sys.addaudithook(hook)
sys.argv = ["manage.py", "allocate", scenario, *args]
code = 0
try:
    with open("manage.py") as handle:  # as `python manage.py` runs it (runpy would import more)
        exec(compile(handle.read(), "manage.py", "exec"), {"__name__": "__main__", "__file__": "manage.py"})
except SystemExit as exc:
    code = exc.code
with open(report, "w") as handle:
    json.dump({"before": seen.get("before"), "after": sorted(set(sys.modules) - start), "code": code}, handle)
"""

# What reads the flags: the command, the engine package and the gate table, and the loader's size
# limit (the scenario is read up to it) with its depth guard.
BEFORE_INPUT = {"allocator", "allocator.cli", "allocator.engine", "allocator.engine.dataclass_code",
                "allocator.engine.fastyaml", "allocator.engine.gates", "allocator.engine.loader", "allocator.engine.problems",
                "allocator.engine.yamlguard"}
# Only some inputs need these: an explanation (the readable report, --explain), Pods, RBAC objects
# or --as-*, regexes, time zones, URLs and IPs in CEL, shared devices, a kind the playground does not read.
DEFERRED = {"allocator.engine.explain", "allocator.engine.explanation", "allocator.engine.trace",
            "allocator.engine.pods", "allocator.engine.scoring", "allocator.engine.noderesources",
            "allocator.engine.nodefilter", "allocator.engine.statusauth.whatif",
            "allocator.engine.statusauth.outcome", "re2", "zoneinfo", "uuid", "difflib", "shutil", "typing", "hashlib",
            "pathlib", "urllib.parse", "ipaddress"}


def modules_seen(tmp_path, scenario: Path, *args: str) -> dict:
    report = tmp_path / "modules.json"
    proc = subprocess.run([sys.executable, "-c", PROBE, str(scenario), str(report), json.dumps(args)], cwd=ROOT,
                          capture_output=True, timeout=120)
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()
    return json.loads(report.read_text())


def test_the_command_reads_its_input_before_importing_the_engine_and_never_imports_django(tmp_path):
    seen = modules_seen(tmp_path, SIMPLE, "-o", "json")
    assert seen["code"] == 0
    assert seen["before"] is not None, "the scenario file was never opened"
    before = set(seen["before"])
    assert not {m for m in before if m.split(".")[0] in ("django", "playground")}
    assert {m for m in before if m.startswith("allocator")} <= BEFORE_INPUT
    assert "yaml" not in before or "allocator.engine.loader" in before  # yaml comes with the loader only
    after = set(seen["after"])
    assert not {m for m in after if m.split(".")[0] in ("django", "playground")}
    assert {m for m in after if m.startswith("allocator.") and not m.startswith("allocator.engine")} == {
        "allocator.cli"}


def test_what_only_some_inputs_need_is_not_imported_for_a_small_scenario(tmp_path):
    after = set(modules_seen(tmp_path, SIMPLE, "-o", "json")["after"])
    assert after & DEFERRED == set()


def test_the_readable_report_imports_the_explanation_it_prints(tmp_path):
    # The check above can fail: the explanation is imported as soon as a run asks for one.
    after = set(modules_seen(tmp_path, SIMPLE)["after"])
    assert {"allocator.engine.explain", "allocator.engine.explanation"} <= after
    assert not {m for m in after if m.split(".")[0] == "django"}


def test_the_django_command_is_the_same_command(capsys):
    from django.core.management import call_command

    with pytest.raises(SystemExit) as exit_status:
        call_command("allocate", str(SIMPLE), "-o", "json")
    assert exit_status.value.code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["outcome"] == "allocated" and data["node"] == "worker-1"


def test_dataclasses_made_from_the_code_table_behave_as_dataclasses_do():
    import dataclasses

    import allocator.engine  # noqa: F401  installs the table

    def make():
        @dataclasses.dataclass(frozen=True)
        class Point:
            x: int
            y: int = 0
            tags: tuple = dataclasses.field(default_factory=tuple)

        return Point

    first, second = make(), make()  # the second is made from code the first compiled
    a, b = second(1), second(1, 0)
    assert a == b and hash(a) == hash(b) and repr(a).endswith("Point(x=1, y=0, tags=())")
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.x = 2
    assert first(1) != a  # another class: dataclasses compare classes too


def test_patterns_made_from_the_regex_table_are_the_patterns_re_makes(tmp_path, monkeypatch):
    import re

    from allocator.engine import dataclass_code

    if dataclass_code._re_compile is None:
        pytest.skip("the regex table is used on Python 3.11 only")
    # Written to a table file and read back, as the next process reads it.
    wanted = [(r"(?P<year>\d{4})-(?P<month>\d\d)", 0), (r"^[yYnN]$", 0), (r"a b  # spaced", re.VERBOSE),
              (r"\w+", re.IGNORECASE), (rb"[\x80-\xff]", 0), ("[^\t\n\r -~\x85\xa0-\ud7ff\U00010000-\U0010ffff]", 0)]
    monkeypatch.setattr(dataclass_code, "REGEX_TABLE", str(tmp_path / "regex-code.bin"))
    monkeypatch.setattr(dataclass_code, "_regexes", {})
    monkeypatch.setattr(dataclass_code, "_new_regexes", {})
    for pattern, flags in wanted:
        dataclass_code._compile_regex(pattern, flags)
    assert dataclass_code.write_table()
    table = dataclass_code._read_table(dataclass_code.REGEX_TABLE, dataclass_code._REGEX_HEADER)
    assert set(table) == set(wanted)
    monkeypatch.setattr(dataclass_code, "_regexes", table)
    for pattern, flags in wanted:
        made, compiled = dataclass_code._compile_regex(pattern, flags), dataclass_code._re_compile(pattern, flags)
        # Pattern equality compares the flags and the matcher code.
        assert made == compiled and made.groupindex == compiled.groupindex and made.groups == compiled.groups
    assert dataclass_code._compile_regex(r"(?P<year>\d{4})-(?P<month>\d\d)", 0).match("2026-12")["month"] == "12"


def test_a_table_of_another_python_is_ignored(tmp_path, monkeypatch):
    from allocator.engine import dataclass_code

    path = tmp_path / "regex-code.bin"
    path.write_bytes(b"another python" + b"\0" * 20)
    assert dataclass_code._read_table(str(path), dataclass_code._REGEX_HEADER) == {}


def test_the_regex_table_stops_growing_at_its_bound(tmp_path, monkeypatch):
    from allocator.engine import dataclass_code

    if dataclass_code._re_compile is None:
        pytest.skip("the regex table is used on Python 3.11 only")
    monkeypatch.setattr(dataclass_code, "_regexes", {})
    monkeypatch.setattr(dataclass_code, "_new_regexes", {})
    monkeypatch.setattr(dataclass_code, "MAX_REGEXES", 3)
    patterns = [f"made-at-run-time-{n}" for n in range(5)]
    assert all(dataclass_code._compile_regex(p, 0).fullmatch(p) for p in patterns)  # all still compiled
    assert set(dataclass_code._new_regexes) == {(p, 0) for p in patterns[:3]}
