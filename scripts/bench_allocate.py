#!/usr/bin/env python
"""Benchmark: `manage.py allocate` on a generated cluster dump versus parsing the same file.

The dump has N nodes, each with 8 partitionable GPUs offered as a whole device
plus seven MIG-style partitions (64 devices per node). Every node but the last
is full (each whole GPU is held by an allocated claim), so the command tries
N-1 full nodes before it finds the free one.

usage: scripts/bench_allocate.py [--nodes 200] [--runs 3] [--keep FILE]
"""
from __future__ import annotations

import argparse
import os
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


def generate(nodes: int) -> str:
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
    return yaml.dump_all(objects, Dumper=yaml.CSafeDumper, sort_keys=False)


def time_parse(path: str) -> float:
    with open(path, "rb") as handle:
        data = handle.read()
    start = time.perf_counter()
    list(yaml.load_all(data, Loader=yaml.CSafeLoader))
    return time.perf_counter() - start


def time_command(path: str) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "manage.py"), "allocate", path, "-o", "json"],
        capture_output=True, text=True, cwd=ROOT,
    )
    return time.perf_counter() - start, proc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", help="also write the generated dump to this file")
    args = parser.parse_args()

    text = generate(args.nodes)
    path = args.keep or os.path.join(tempfile.mkdtemp(prefix="dra-bench-"), "dump.yaml")
    with open(path, "w") as handle:
        handle.write(text)
    devices = args.nodes * 64
    print(f"dump: {args.nodes} nodes, {devices} devices, {len(text) / 1e6:.1f} MB -> {path}")

    parse_times, command_times = [], []
    for _ in range(args.runs):
        parse_times.append(time_parse(path))
        elapsed, proc = time_command(path)
        command_times.append(elapsed)
        if proc.returncode != 0:
            print(f"allocate exited {proc.returncode}: {(proc.stdout + proc.stderr)[-500:]}")
            sys.exit(1)
    parse, command = statistics.median(parse_times), statistics.median(command_times)
    print(f"PyYAML CSafeLoader parse: {parse:.2f} s (median of {args.runs})")
    print(f"manage.py allocate:       {command:.2f} s (median of {args.runs}, whole process)")
    print(f"ratio: {command / parse:.2f}x (target <= 1.5x)")


if __name__ == "__main__":
    main()
