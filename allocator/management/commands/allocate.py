"""`manage.py allocate FILE`: what the kube-scheduler's DRA allocator would allocate, and why."""
import sys

from django.core.management.base import BaseCommand

from allocator.engine.gates import VERSIONS, ComponentGates, GateError, parse_gates, parse_version_flag
from allocator.engine.loader import MAX_BYTES, gc_paused
from allocator.engine.problems import WARNING, Problem
from allocator.engine.report import human_report, to_json, to_yaml
from allocator.engine.run import INVALID, Outcome, allocate_text
from allocator.engine.statusauth.whatif import identity_writer

MAX_INPUT_BYTES = MAX_BYTES


class Command(BaseCommand):
    # The engine needs none of Django's system checks (URLs, templates, models): skipping them
    # saves the command a tenth of a second on every run.
    requires_system_checks = []
    help = ("Allocate the scenario's pending ResourceClaims as the Kubernetes scheduler would; "
            "with Pods in the scenario, schedule each unscheduled pod and report every node's verdict.")

    def add_arguments(self, parser):
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

    def handle(self, *args, **options):
        outcome = self._run(options)
        fmt = options.get("output")
        explain = bool(options.get("explain"))
        if fmt == "json":
            text = to_json(outcome, with_explanation=explain)
        elif fmt == "yaml":
            text = to_yaml(outcome, with_explanation=explain)
        else:
            text = human_report(outcome)
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()
        sys.exit(outcome.exit_code)

    def _run(self, options) -> Outcome:
        versions = {}
        for flag, key in (("--emulated-version", "emulated"), ("--min-compatibility-version", "min_compat")):
            given = options.get(key.replace("min_compat", "min_compatibility_version").replace(
                "emulated", "emulated_version"))
            if given:
                try:
                    versions[key] = parse_version_flag(given)
                except GateError as exc:
                    return _invalid(f"{flag}: {exc}")
        try:
            gates, gate_warnings = parse_gates(options.get("feature_gates"), **versions)
        except GateError as exc:
            return _invalid(f"--feature-gates: {exc}")
        try:
            data = _read_input(options["file"])
        except OSError as exc:
            return _invalid(f"cannot read {options['file']}: {exc.strerror or exc}")
        if len(data) > MAX_INPUT_BYTES:
            return _invalid(f"the scenario is larger than {MAX_INPUT_BYTES} bytes; the limit is {MAX_INPUT_BYTES} bytes")
        extra = {}
        if options.get("max_steps") is not None:
            extra["max_steps"] = options["max_steps"]
        if options.get("time_limit") is not None:
            extra["time_limit"] = options["time_limit"]
        if options.get("as_service_account") or options.get("as_user"):
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
        # One run and the process ends: reference counting frees what the run drops, and the
        # cycle collector would only walk the scenario's objects again and again (13 % of a
        # 1,000-node dump's run).
        with gc_paused():
            _, outcome = allocate_text(
                data, node_name=options.get("node"), gates=ComponentGates.uniform(gates), **extra
            )
        if outcome.outcome != INVALID:  # what the scheduler logs when it starts with these gates
            outcome.warnings = [Problem(w, severity=WARNING) for w in gate_warnings] + outcome.warnings
        return outcome


def _read_input(name: str) -> bytes:
    if name == "-":
        return sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
    with open(name, "rb") as handle:
        return handle.read(MAX_INPUT_BYTES + 1)


def _invalid(message: str) -> Outcome:
    return Outcome(INVALID, message=message, problems=[Problem(message)])
