#!/usr/bin/env python
"""Benchmark: `manage.py allocate` on a generated cluster dump versus parsing the same file.

The dump has N nodes, each with 8 partitionable GPUs offered as a whole device
plus seven MIG-style partitions (64 devices per node). Every node but the last
is full (each whole GPU is held by an allocated claim), so the command tries
N-1 full nodes before it finds the free one.

Each size is written twice: in block style, as kubectl prints it, and with small
collections in flow style (`attributes: {type: {string: gpu}}`), as generators and
people write it. The reference is PyYAML's C loader parsing the same file, as a
program would call it (`yaml.load_all(data, Loader=yaml.CSafeLoader)`); the parse
with the garbage collector paused is printed too, as a stricter reference.

usage: scripts/bench_allocate.py [--nodes 200,1000] [--style block,flow] [--runs 3] [--keep DIR]

With --against-oracle, it runs Kubernetes' own allocator instead (the oracle of tests/upstream, built
if needed) and the playground on the same generated scenarios (tests/upstream/generate.py, a fixed
seed), interleaved, and prints both times and their ratio:

- the oracle in its batch mode, one process for all scenarios, its start included;
- the playground's first pass: a new Python process per round, in which each scenario is seen once
  (the document cache is emptied before each, so no scenario's parsed text serves another), timed
  from the first scenario to the last answer (what the CLI's `-o json` computes: gates, read,
  validate, allocate, the JSON); the process's start and imports are printed beside it;
- `manage.py allocate FILE -o json` against the oracle binary, one process per scenario, on a few.

usage: scripts/bench_allocate.py --against-oracle [--scenarios 300] [--runs 3] [--commands 20]
"""
from __future__ import annotations

import argparse
import compileall
import gc
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DRIVER = "gpu.example.com"
# (profile, memory GiB, compute slices) for the seven partitions of one 40 GiB GPU
PARTITIONS = [("1g.5gb", 5, 1)] * 4 + [("2g.10gb", 10, 2)] * 2 + [("3g.20gb", 20, 3)]


def node_objects(n: int, full: bool) -> list[dict]:
    node = f"node-{n:04d}"
    counter_sets = []
    devices = []
    for g in range(8):
        counter_sets.append({
            "name": f"gpu-{g}",
            "counters": {"memory": {"value": "40Gi"}, "slices": {"value": "7"}},
        })
        devices.append({
            "name": f"gpu-{g}",
            "attributes": {
                "type": {"string": "gpu"},
                "index": {"int": g},
                "uuid": {"string": f"GPU-{n:04d}-{g}"},
                "driverVersion": {"version": "1.2.3"},
                "productName": {"string": "NVIDIA A100-SXM4-40GB"},
            },
            "capacity": {"memory": {"value": "40Gi"}},
            "consumesCounters": [{"counterSet": f"gpu-{g}", "counters": {
                "memory": {"value": "40Gi"}, "slices": {"value": "7"}}}],
        })
        for p, (profile, memory, slices) in enumerate(PARTITIONS):
            devices.append({
                "name": f"gpu-{g}-mig-{p}",
                "attributes": {
                    "type": {"string": "mig"},
                    "profile": {"string": profile},
                    "parentIndex": {"int": g},
                    "driverVersion": {"version": "1.2.3"},
                },
                "capacity": {"memory": {"value": f"{memory}Gi"}},
                "consumesCounters": [{"counterSet": f"gpu-{g}", "counters": {
                    "memory": {"value": f"{memory}Gi"}, "slices": {"value": str(slices)}}}],
            })
    pool = {"name": node, "generation": 1, "resourceSliceCount": 2}
    objects = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {
            "name": node, "labels": {"kubernetes.io/hostname": node}}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
         "metadata": {"name": f"{node}-{DRIVER}-counters"},
         "spec": {"driver": DRIVER, "nodeName": node, "pool": pool, "sharedCounters": counter_sets}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
         "metadata": {"name": f"{node}-{DRIVER}-devices"},
         "spec": {"driver": DRIVER, "nodeName": node, "pool": pool, "devices": devices}},
    ]
    if full:
        for g in range(8):
            objects.append({
                "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                "metadata": {"name": f"job-{n:04d}-{g}", "namespace": "default"},
                "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
                "status": {"allocation": {
                    "devices": {"results": [{"request": "gpu", "driver": DRIVER, "pool": node,
                                             "device": f"gpu-{g}"}]},
                    "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                        {"key": "metadata.name", "operator": "In", "values": [node]}]}]},
                }},
            })
    return objects


def generate(nodes: int, style: str = "block") -> str:
    objects: list[dict] = [{
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
    }]
    for n in range(nodes):
        objects.extend(node_objects(n, full=n < nodes - 1))
    objects.append({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": "training", "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
            "deviceClassName": "gpu",
            "selectors": [{"cel": {"expression":
                f'device.attributes["{DRIVER}"].type == "gpu"'}}]}}]}},
    })
    # default_flow_style=None: collections of scalars in flow style, the rest in block style
    return yaml.dump_all(objects, Dumper=yaml.CSafeDumper, sort_keys=False,
                         default_flow_style=None if style == "flow" else False)


def time_parse(path: str, *, gc_paused: bool = False) -> tuple[float, float]:
    """(wall, CPU) seconds of parsing the file with the C loader, in this process."""
    with open(path, "rb") as handle:
        data = handle.read()
    if gc_paused:
        gc.disable()
    try:
        start, cpu = time.perf_counter(), time.process_time()
        list(yaml.load_all(data, Loader=yaml.CSafeLoader))
        return time.perf_counter() - start, time.process_time() - cpu
    finally:
        gc.enable()
        gc.collect()


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_command(path: str) -> tuple[float, float, subprocess.CompletedProcess]:
    """(wall, CPU) seconds of the whole command, as a process of its own."""
    start, cpu = time.perf_counter(), _children_cpu()
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "manage.py"), "allocate", path, "-o", "json"],
        capture_output=True, text=True, cwd=ROOT,
    )
    return time.perf_counter() - start, _children_cpu() - cpu, proc


def measure(nodes: int, style: str, runs: int, directory: str) -> dict:
    text = generate(nodes, style)
    path = os.path.join(directory, f"dump-{nodes}-{style}.yaml")
    with open(path, "w") as handle:
        handle.write(text)
    parse_times, parse_cpu, paused_times, command_times, command_cpu = [], [], [], [], []
    for _ in range(runs):  # interleaved, so that load from elsewhere falls on both alike
        wall, cpu = time_parse(path)
        parse_times.append(wall)
        parse_cpu.append(cpu)
        paused_times.append(time_parse(path, gc_paused=True)[0])
        wall, cpu, proc = time_command(path)
        command_times.append(wall)
        command_cpu.append(cpu)
        if proc.returncode != 0:
            print(f"allocate exited {proc.returncode}: {(proc.stdout + proc.stderr)[-500:]}")
            sys.exit(1)
    return {
        "nodes": nodes, "style": style, "mb": len(text.encode()) / 1e6, "path": path,
        "parse": statistics.median(parse_times), "paused": statistics.median(paused_times),
        "command": statistics.median(command_times),
        "parse_cpu": statistics.median(parse_cpu), "command_cpu": statistics.median(command_cpu),
    }


# -- the playground against the oracle ------------------------------------------------------------


def generated_scenarios(count: int) -> list[dict]:
    """`count` distinct scenarios from the differential test's generator, with a fixed seed; kept
    beside the oracle's build (drawing them takes longer than the benchmark)."""
    import hashlib
    import json

    from tests.upstream.driver import BUILD_DIR

    source = os.path.join(ROOT, "tests", "upstream", "generate.py")
    with open(source, "rb") as handle:
        key = hashlib.sha256(handle.read()).hexdigest()[:16]
    kept = os.path.join(BUILD_DIR, f"bench-scenarios-{count}-{key}.json")
    if os.path.exists(kept):
        with open(kept) as handle:
            return json.load(handle)
    items = _draw_scenarios(count)
    os.makedirs(BUILD_DIR, exist_ok=True)
    with open(kept + ".tmp", "w") as handle:
        json.dump(items, handle)
    os.replace(kept + ".tmp", kept)
    return items


def _draw_scenarios(count: int) -> list[dict]:
    from hypothesis import HealthCheck, Phase, given, settings

    from tests.upstream.generate import scenarios

    found: dict = {}

    @settings(max_examples=3 * count, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck), phases=[Phase.generate])
    @given(scenarios())
    def draw(generated):
        if len(found) < count:
            found.setdefault((generated.text, generated.node, generated.gates, generated.emulated,
                              generated.min_compat), generated)

    draw()
    return [{"text": g.text, "node": g.node or "", "gates": g.gates, "emulated": g.emulated,
             "min_compat": g.min_compat} for g in found.values()]


def text_keyed_caches() -> list:
    """The engine's caches keyed by a piece of a scenario's text (a CEL expression's compile and
    check, a quantity's or a version's parse, a regular expression in CEL), which a scenario may
    find filled by an earlier one that held the same text. Environment-wide ones (a CEL environment
    per option set) are left."""
    from allocator.engine import quantity, scenario, semver
    from allocator.engine.cel import library, program

    found = []
    for module in (scenario, quantity, semver, program, library):
        for value in vars(module).values():
            if hasattr(value, "cache_clear") and value.cache_info().maxsize not in (1, 16):
                found.append(value)
    return found


def playground_pass(path: str, cold: bool = False) -> None:
    """In a process of its own (`--playground-pass FILE [--cold-caches]`): every scenario of FILE
    once, timed; prints {"seconds", "cpu", "startup", "exit_codes"} as JSON. Cold: the text-keyed
    caches are emptied before each scenario too."""
    started = time.perf_counter()
    import json

    from allocator.engine import loader
    from allocator.engine.gates import ComponentGates, parse_gates
    from allocator.engine.report import outcome_data
    from allocator.engine.run import allocate_text

    with open(path) as handle:
        items = json.load(handle)
    startup = time.perf_counter() - started
    caches = text_keyed_caches() if cold else []
    codes = []
    gc_was = gc.isenabled()
    start, cpu = time.perf_counter(), time.process_time()
    for item in items:
        loader.clear_cache()  # no document of another scenario may serve this one
        for cache in caches:
            cache.cache_clear()
        gates, _ = parse_gates(item["gates"], emulated=item["emulated"], min_compat=item["min_compat"])
        _, outcome = allocate_text(item["text"].encode(), node_name=item["node"] or None,
                                   gates=ComponentGates.uniform(gates), explain_result=False)
        json.dumps(outcome_data(outcome))
        codes.append(outcome.exit_code)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert gc.isenabled() == gc_was
    print(json.dumps({"seconds": seconds, "cpu": cpu, "startup": startup, "exit_codes": codes}))


def time_playground(path: str, cold: bool = False) -> dict:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--playground-pass", path]
                          + (["--cold-caches"] if cold else []),
                          capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        print(proc.stdout[-2000:], proc.stderr[-2000:])
        sys.exit(1)
    import json

    return dict(json.loads(proc.stdout), process=time.perf_counter() - start)


def time_oracle(binary, requests: list[str]) -> dict:
    """The oracle's batch mode over every request, its process start included."""
    import json

    start, cpu = time.perf_counter(), _children_cpu()
    proc = subprocess.Popen([str(binary), "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            bufsize=1)
    codes = []
    for line in requests:
        proc.stdin.write(line + "\n")
        proc.stdin.flush()
        codes.append(json.loads(proc.stdout.readline())["exitCode"])
    proc.stdin.close()
    proc.wait()
    return {"seconds": time.perf_counter() - start, "cpu": _children_cpu() - cpu, "exit_codes": codes}


def time_commands(binary, items: list[dict], directory: str, resolved) -> tuple[list[float], list[float]]:
    """`manage.py allocate FILE -o json` and the oracle binary on the same file, one process each."""
    ours, theirs = [], []
    for n, item in enumerate(items):
        path = os.path.join(directory, f"scenario-{n}.yaml")
        with open(path, "w") as handle:
            handle.write(item["text"])
        flags = (["--node", item["node"]] if item["node"] else [])
        versions = ((["--emulated-version", item["emulated"]] if item["emulated"] else [])
                    + (["--min-compatibility-version", item["min_compat"]] if item["min_compat"] else []))
        for runner, args in (
            (ours, [sys.executable, os.path.join(ROOT, "manage.py"), "allocate", path, "-o", "json",
                    "--feature-gates", item["gates"], *flags, *versions]),
            (theirs, [str(binary), path, "-o", "json", "--feature-gates", resolved(item), *flags]),
        ):
            start = time.perf_counter()
            subprocess.run(args, capture_output=True, cwd=ROOT)
            runner.append(time.perf_counter() - start)
    return ours, theirs


def against_oracle(count: int, runs: int, commands: int, cold: bool = False) -> None:
    import json

    sys.path.insert(0, ROOT)
    from tests.upstream.driver import build_oracle, resolved_gates

    binary = build_oracle()
    started = time.perf_counter()
    items = generated_scenarios(count)
    print(f"{len(items)} distinct generated scenarios (fixed seed), drawn in {time.perf_counter() - started:.1f} s")

    def resolved(item):
        return resolved_gates(item["gates"], item["emulated"], item["min_compat"])

    requests = [json.dumps({"scenario": i["text"], "node": i["node"], "featureGates": resolved(i)}) for i in items]
    directory = tempfile.mkdtemp(prefix="dra-bench-oracle-")
    path = os.path.join(directory, "scenarios.json")
    with open(path, "w") as handle:
        json.dump(items, handle)
    rows = []
    for run in range(runs):  # interleaved, the order alternating, so that load falls on both alike
        pair = [("go", lambda: time_oracle(binary, requests)), ("py", lambda: time_playground(path, cold))]
        measured = dict((name, fn()) for name, fn in (pair if run % 2 == 0 else pair[::-1]))
        rows.append(measured)
        go, py = measured["go"], measured["py"]
        agree = sum(a == b for a, b in zip(go["exit_codes"], py["exit_codes"]))
        print(f"round {run + 1}: Go batch {go['seconds']:.3f} s (CPU {go['cpu']:.3f} s); playground first pass "
              f"{py['seconds']:.3f} s (CPU {py['cpu']:.3f} s; process {py['process']:.3f} s, of which start-up "
              f"and imports {py['startup']:.3f} s); ratio {py['seconds'] / go['seconds']:.2f}x "
              f"(CPU {py['cpu'] / go['cpu']:.2f}x); exit codes equal {agree}/{len(items)}", flush=True)
    go = statistics.median(r["go"]["seconds"] for r in rows)
    py = statistics.median(r["py"]["seconds"] for r in rows)
    ratio = statistics.median(r["py"]["seconds"] / r["go"]["seconds"] for r in rows)
    cpu_ratio = statistics.median(r["py"]["cpu"] / r["go"]["cpu"] for r in rows)
    print(f"first pass{' (text-keyed caches emptied per scenario)' if cold else ''}, {len(items)} scenarios, median of {runs}: playground {py:.3f} s "
          f"({1000 * py / len(items):.2f} ms each), Go {go:.3f} s; ratio {ratio:.2f}x (CPU {cpu_ratio:.2f}x)")
    if commands:
        ours, theirs = time_commands(binary, items[:commands], directory, resolved)
        print(f"one process per scenario ({len(ours)} scenarios), median: manage.py allocate -o json "
              f"{1000 * statistics.median(ours):.0f} ms (best {1000 * min(ours):.0f} ms), oracle binary "
              f"{1000 * statistics.median(theirs):.0f} ms (best {1000 * min(theirs):.0f} ms); ratio "
              f"{statistics.median(ours) / statistics.median(theirs):.1f}x")


def main() -> None:
    if sys.argv[1:2] == ["--playground-pass"]:
        sys.path.insert(0, ROOT)
        playground_pass(sys.argv[2], cold="--cold-caches" in sys.argv[3:])
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", default="200,1000", help="comma-separated dump sizes in nodes")
    parser.add_argument("--style", default="block,flow", help="block, flow or both (comma-separated)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", help="write the generated dumps into this directory")
    parser.add_argument("--against-oracle", action="store_true",
                        help="the playground against Kubernetes' allocator on generated scenarios")
    parser.add_argument("--scenarios", type=int, default=300, help="with --against-oracle: how many")
    parser.add_argument("--commands", type=int, default=20,
                        help="with --against-oracle: scenarios also run one process each (0: none)")
    parser.add_argument("--cold-caches", action="store_true",
                        help="with --against-oracle: also empty the caches keyed by a piece of text (CEL "
                             "compiles, quantity and version parses) before each scenario")
    args = parser.parse_args()
    directory = args.keep or tempfile.mkdtemp(prefix="dra-bench-")
    os.makedirs(directory, exist_ok=True)
    # The command as installed runs from bytecode; where PYTHONDONTWRITEBYTECODE is set (CI machines
    # set it) every run would compile the project's modules first, a fixed 0.2 s that is no part of
    # reading a dump.
    for package in ("allocator", "playground"):
        compileall.compile_dir(os.path.join(ROOT, package), quiet=1)
    subprocess.run([sys.executable, "-c", "from allocator.cli import build_code_tables; build_code_tables()"],
                   cwd=ROOT, check=True)
    if args.against_oracle:
        against_oracle(args.scenarios, args.runs, args.commands, args.cold_caches)
        return

    print(f"median of {args.runs} runs; target: command <= 1.2x the C loader's parse")
    print("CPU time (user + system) moves less with the machine's load than wall-clock time")
    print(f"{'dump':34} {'C loader parse':>14} {'(gc paused)':>12} {'manage.py allocate':>19} {'ratio':>6}"
          f" {'CPU: parse':>11} {'command':>8} {'ratio':>6}")
    for nodes in (int(n) for n in args.nodes.split(",")):
        for style in args.style.split(","):
            row = measure(nodes, style, args.runs, directory)
            label = f"{nodes} nodes, {nodes * 64} devices, {style}, {row['mb']:.1f} MB"
            print(f"{label:34} {row['parse']:13.2f}s {row['paused']:11.2f}s {row['command']:18.2f}s "
                  f"{row['command'] / row['parse']:5.2f}x {row['parse_cpu']:10.2f}s {row['command_cpu']:7.2f}s "
                  f"{row['command_cpu'] / row['parse_cpu']:5.2f}x", flush=True)


if __name__ == "__main__":
    main()
