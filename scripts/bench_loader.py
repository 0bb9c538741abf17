"""Time load_scenario against plain yaml.CSafeLoader on a generated ~5 MB stream of ResourceSlices.

Not a test: run it by hand after changing the loader.

    .venv/bin/python scripts/bench_loader.py [--slices 1000] [--runs 5]
"""
from __future__ import annotations

import argparse
import gc
import json
import pathlib
import statistics
import sys
import time

import yaml

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from allocator.engine.loader import load_scenario  # noqa: E402

DEVICES_PER_SLICE = 16


def resource_slice(n: int) -> str:
    """One ResourceSlice in the block style kubectl prints, about 5 KB."""
    node = f"worker-{n // 4}"
    lines = [
        "apiVersion: resource.k8s.io/v1",
        "kind: ResourceSlice",
        "metadata:",
        '  creationTimestamp: "2025-01-01T00:00:00Z"',
        "  generateName: " + f"{node}-gpu.example.com-",
        "  generation: 1",
        f"  name: {node}-gpu.example.com-{n:05d}",
        "  ownerReferences:",
        "  - apiVersion: v1",
        "    controller: true",
        "    kind: Node",
        f"    name: {node}",
        f"    uid: 6a5c{n:08d}-aaaa-bbbb-cccc-000000000000",
        f'  resourceVersion: "{1000 + n}"',
        f"  uid: 1f2e{n:08d}-dddd-eeee-ffff-000000000000",
        "spec:",
        "  devices:",
    ]
    for d in range(DEVICES_PER_SLICE):
        lines += [
            "  - attributes:",
            "      architecture:",
            "        string: Ampere",
            "      driverVersion:",
            "        version: 550.54.15",
            "      index:",
            f"        int: {d}",
            "      productName:",
            "        string: NVIDIA A100-SXM4-80GB",
            "      uuid:",
            f"        string: GPU-{n:05d}{d:03d}-8f1e-4c1a-9b1e-0123456789ab",
            "    capacity:",
            "      memory:",
            "        value: 80Gi",
            f"    name: gpu-{d}",
        ]
    lines += [
        "  driver: gpu.example.com",
        f"  nodeName: {node}",
        "  pool:",
        "    generation: 1",
        f"    name: {node}",
        "    resourceSliceCount: 1",
    ]
    return "\n".join(lines) + "\n"


def stream(slices: int) -> str:
    return "---\n".join(resource_slice(n) for n in range(slices))


def as_list(slices: int) -> str:
    """The same slices as one `kind: List` document, the way `kubectl get -o yaml` prints them."""
    body = "".join(
        "- " + resource_slice(n).replace("\n", "\n  ").rstrip() + "\n" for n in range(slices)
    )
    return "apiVersion: v1\nitems:\n" + body + "kind: List\nmetadata:\n  resourceVersion: \"\"\n"


def median_time(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def without_gc(fn):
    def run():
        gc.disable()
        try:
            return fn()
        finally:
            gc.enable()

    return run


def first_line_of(text: str, ref: tuple, runs: int) -> float:
    """Time of the first line_of on a freshly loaded scenario (it composes the object's text)."""
    times = []
    for _ in range(runs):
        loaded = load_scenario(text)
        start = time.perf_counter()
        position = loaded.line_of(ref, ("spec", "devices", 3, "name"))
        times.append(time.perf_counter() - start)
        assert position is not None
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slices", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    inputs = {"multi-document YAML": stream(args.slices), "kind: List YAML": as_list(args.slices)}
    docs = list(yaml.load_all(inputs["multi-document YAML"], Loader=yaml.CSafeLoader))
    inputs["kind: List JSON"] = json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}, indent=2)

    for label, text in inputs.items():
        loaded = load_scenario(text)
        assert len(loaded.objects) == args.slices and not loaded.problems, loaded.problems[:3]
        ref = (args.slices - 1,) if label.startswith("multi") else (0, args.slices - 1)

        def plain():
            return list(yaml.load_all(text, Loader=yaml.CSafeLoader))

        plain_time = median_time(plain, args.runs)
        plain_no_gc = median_time(without_gc(plain), args.runs)
        ours = median_time(lambda: load_scenario(text), args.runs)
        line_time = first_line_of(text, ref, args.runs)
        print(
            f"{label}: {len(text) / 1e6:.1f} MB, {args.slices} slices\n"
            f"  yaml.load_all(CSafeLoader)             {plain_time * 1000:7.0f} ms\n"
            f"  yaml.load_all(CSafeLoader), gc paused  {plain_no_gc * 1000:7.0f} ms\n"
            f"  load_scenario                          {ours * 1000:7.0f} ms "
            f"({ours / plain_time:.2f}x, {ours / plain_no_gc:.2f}x of gc paused)\n"
            f"  first line_of in the last object       {line_time * 1000:7.1f} ms"
        )


if __name__ == "__main__":
    main()
