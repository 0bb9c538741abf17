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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", default="200,1000", help="comma-separated dump sizes in nodes")
    parser.add_argument("--style", default="block,flow", help="block, flow or both (comma-separated)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", help="write the generated dumps into this directory")
    args = parser.parse_args()
    directory = args.keep or tempfile.mkdtemp(prefix="dra-bench-")
    os.makedirs(directory, exist_ok=True)
    # The command as installed runs from bytecode; where PYTHONDONTWRITEBYTECODE is set (CI machines
    # set it) every run would compile the project's modules first, a fixed 0.2 s that is no part of
    # reading a dump.
    for package in ("allocator", "playground"):
        compileall.compile_dir(os.path.join(ROOT, package), quiet=1)

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
