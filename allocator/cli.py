"""`manage.py allocate FILE`: what the kube-scheduler's DRA allocator would allocate, and why.

The command runs without Django: `manage.py` hands `allocate` to `main()` before Django is
imported (its settings and apps cost a fifth of a second of every run, and the engine needs
neither). What only some inputs need is imported only for them: the engine beyond its gate table
once the flags are read, the explanation, pods and the status what-if where the input asks for them.
`management/commands/allocate.py` is the same command for `django-admin` and `call_command`.
"""
from __future__ import annotations

import os
import sys

# First: the engine package installs its tables of compiled code (engine/dataclass_code.py), which
# serve the patterns argparse and gettext compile too.
import allocator.engine  # noqa: F401  isort: skip
import argparse  # noqa: E402  isort: skip

PROG = "manage.py allocate"
HELP = ("Allocate the scenario's pending ResourceClaims as the Kubernetes scheduler would; "
        "with Pods in the scenario, schedule each unscheduled pod and report every node's verdict.")


def add_arguments(parser) -> None:
    """The command's own flags (the Django command adds these too)."""
    from allocator.engine.gates import VERSIONS

    parser.add_argument("file", help="scenario file, or - for standard input")
    parser.add_argument("--node", help="allocate for this node (default: every node, first that fits); "
                                       "with Pods, the only node considered")
    parser.add_argument("--feature-gates", default="", help="A=true,B=false (Kubernetes gate names)")
    parser.add_argument("--emulated-version", default="",
                        help=f"the version the components emulate, as kube-scheduler's flag takes it "
                             f"({VERSIONS['allowedEmulationVersionRange']})")
    parser.add_argument("--min-compatibility-version", default="",
                        help=f"the oldest control plane version the components stay compatible with "
                             f"({VERSIONS['allowedMinCompatibilityVersionRange']}; "
                             f"default: one minor before the emulated version)")
    parser.add_argument("-o", "--output", choices=["json", "yaml"], help="machine-readable output")
    parser.add_argument("--lang", choices=["en", "ko"], default="en",
                        help="the language of the readable report (-o json/yaml stay English)")
    parser.add_argument("--explain", action="store_true",
                        help="with -o json/yaml: include why each device was or was not chosen")
    parser.add_argument("--max-steps", type=int, default=None, help="search step budget per node")
    parser.add_argument("--time-limit", type=float, default=None, help="wall-clock limit in seconds")
    parser.add_argument("--as-service-account", metavar="NS/NAME",
                        help="status what-if: also judge this service account's status writes")
    parser.add_argument("--as-user", metavar="NAME", help="status what-if: also judge this user's status writes")
    parser.add_argument("--as-group", action="append", default=[], metavar="GROUP",
                        help="with --as-user: a group of the user (repeatable)")
    parser.add_argument("--as-node", metavar="NODE",
                        help="with --as-*: the node name the caller's token carries (a pod-bound token's node)")
    parser.add_argument("--as-verb", choices=["PUT", "PATCH", "APPLY"], default="PUT",
                        help="with --as-*: PUT (update) or PATCH/APPLY (patch)")
    parser.add_argument("--no-bootstrap-rbac", action="store_true",
                        help="status what-if without the 1.37.2 bootstrap roles and bindings")


class _DjangoVersion(argparse.Action):
    """`--version` prints Django's version, as every management command does; Django is imported
    only then."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        import django

        parser.exit(message=django.get_version() + "\n")


def _add_django_options(parser: argparse.ArgumentParser) -> None:
    """The options every Django management command takes, accepted so that command lines written
    for the Django command keep working; only --pythonpath changes anything here."""
    parser.add_argument("--version", action=_DjangoVersion, help="Show program's version number and exit.")
    parser.add_argument("-v", "--verbosity", default=1, type=int, choices=[0, 1, 2, 3],
                        help="Verbosity level; 0=minimal output, 1=normal output, 2=verbose output, "
                             "3=very verbose output")
    parser.add_argument("--settings", help=(
        "The Python path to a settings module, e.g. \"myproject.settings.main\". If this isn't provided, "
        "the DJANGO_SETTINGS_MODULE environment variable will be used."))
    parser.add_argument("--pythonpath",
                        help="A directory to add to the Python path, e.g. \"/home/djangoprojects/myproject\".")
    parser.add_argument("--traceback", action="store_true", help="Display a full stack trace on CommandError exceptions.")
    parser.add_argument("--no-color", action="store_true", help="Don't colorize the command output.")
    parser.add_argument("--force-color", action="store_true", help="Force colorization of the command output.")


def _formatter(prog: str) -> argparse.HelpFormatter:
    """argparse's formatter at the terminal's width, found as shutil.get_terminal_size finds it:
    argparse would import shutil (and its compression modules) for it on every run."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return argparse.HelpFormatter(prog, width=(columns or 80) - 2)


def main(argv: list[str] | None = None) -> int:
    """`manage.py allocate ARGS`: parse, run, print; the exit status of the outcome."""
    parser = argparse.ArgumentParser(prog=PROG, description=HELP, formatter_class=_formatter)
    add_arguments(parser)
    _add_django_options(parser)
    options = vars(parser.parse_args(sys.argv[2:] if argv is None else argv))
    if options.get("pythonpath"):
        sys.path.insert(0, options["pythonpath"])
    return execute(options)


def execute(options: dict) -> int:
    """Run the command with parsed options, write its output, and return its exit status."""
    outcome = run(options)
    fmt = options.get("output")
    explain = bool(options.get("explain"))
    if fmt == "json":
        from allocator.engine.report import to_json

        text = to_json(outcome, with_explanation=explain)
    elif fmt == "yaml":
        from allocator.engine.report import to_yaml

        text = to_yaml(outcome, with_explanation=explain)
    elif (options.get("lang") or "en") != "en":
        text = _report_in(options["lang"], outcome)
    else:
        from allocator.engine.report import human_report

        text = human_report(outcome)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()
    return outcome.exit_code


def _report_in(language: str, outcome) -> str:
    """The readable report in another language: the wording layer's, with Django's catalogue (Django
    is set up only for this)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "playground.settings")
    import django
    from django.utils import translation

    django.setup()
    from allocator import wording

    with translation.override(language):
        return wording.human_report(outcome)


def run(options: dict):
    """The Outcome of the command's flags and input (every error is an invalid outcome)."""
    from allocator.engine.gates import ComponentGates, GateError, parse_gates, parse_version_flag

    versions = {}
    for flag, key, option in (("--emulated-version", "emulated", "emulated_version"),
                              ("--min-compatibility-version", "min_compat", "min_compatibility_version")):
        given = options.get(option)
        if given:
            try:
                versions[key] = parse_version_flag(given)
            except GateError as exc:
                return _invalid(f"{flag}: {exc}")
    try:
        gates, gate_warnings = parse_gates(options.get("feature_gates"), **versions)
    except GateError as exc:
        return _invalid(f"--feature-gates: {exc}")
    from allocator.engine.loader import MAX_BYTES

    try:
        data = _read_input(options["file"], MAX_BYTES)
    except OSError as exc:
        return _invalid(f"cannot read {options['file']}: {exc.strerror or exc}")
    if len(data) > MAX_BYTES:
        return _invalid(f"the scenario is larger than {MAX_BYTES} bytes; the limit is {MAX_BYTES} bytes")
    extra = {}
    if options.get("max_steps") is not None:
        extra["max_steps"] = options["max_steps"]
    if options.get("time_limit") is not None:
        extra["time_limit"] = options["time_limit"]
    if options.get("as_service_account") or options.get("as_user"):
        from allocator.engine.statusauth.whatif import identity_writer

        try:
            extra["status_identities"] = (identity_writer(
                user=options.get("as_user") or "", groups=tuple(options.get("as_group") or ()),
                service_account=options.get("as_service_account") or "", node=options.get("as_node"),
                verb=options.get("as_verb") or "PUT"),)
        except ValueError as exc:
            return _invalid(f"--as-*: {exc}")
    if options.get("no_bootstrap_rbac"):
        extra["bootstrap_rbac"] = False
    # The explanation is only built when it will be printed.
    extra["explain_result"] = not options.get("output") or bool(options.get("explain"))
    from allocator.engine.loader import gc_paused
    from allocator.engine.problems import WARNING, Problem
    from allocator.engine.run import INVALID, allocate_text

    # One run and the process ends: reference counting frees what the run drops, and the
    # cycle collector would only walk the scenario's objects again and again (13 % of a
    # 1,000-node dump's run).
    with gc_paused():
        _, outcome = allocate_text(data, node_name=options.get("node"), gates=ComponentGates.uniform(gates), **extra)
    if outcome.outcome != INVALID:  # what the scheduler logs when it starts with these gates
        outcome.warnings = [Problem(w, severity=WARNING) for w in gate_warnings] + outcome.warnings
    return outcome


def _read_input(name: str, limit: int) -> bytes:
    if name == "-":
        return sys.stdin.buffer.read(limit + 1)
    with open(name, "rb") as handle:
        return handle.read(limit + 1)


def build_code_tables() -> None:
    """Write the engine's tables of compiled code with what a run of this command compiles: every
    engine module's dataclasses and patterns, and the patterns compiled while running (argparse's,
    the report's). `make install` runs it, as it compiles the bytecode."""
    import contextlib
    import io

    from allocator.engine import dataclass_code

    dataclass_code.compile_table()
    example = os.path.join(os.path.dirname(os.path.abspath(__file__)), "examples", "simple-gpu.yaml")
    for flags in (["-o", "json"], []):
        with contextlib.redirect_stdout(io.StringIO()):
            main([example, *flags])
    dataclass_code.write_table()


def _invalid(message: str):
    from allocator.engine.outcome import Outcome
    from allocator.engine.problems import Problem
    from allocator.engine.vocabulary import OutcomeKind

    return Outcome(OutcomeKind.INVALID, message=message, problems=[Problem(message)])
