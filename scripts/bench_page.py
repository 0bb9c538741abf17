#!/usr/bin/env python
"""Benchmark: time from request to rendered results fragment (the htmx partial).

Posts every gallery example, and a generated 200-node cluster dump (opened as a
file, as the page sends a large one), to the page as htmx does, through Django's
full request stack and the bounded worker processes, and prints the median and
p90 per scenario. Every run changes a comment at the end, so the results cache
never answers, while the documents before it come from the worker's document cache
as they do when someone edits. Target: under 50 ms median per gallery example. Then it makes
the try-this edit in `mig-8-gpu` and takes it back, in turn (each with a new comment), and prints
the server's part of those requests too (target: 15 ms).

With --cpu the engine runs in this process (ALLOCATOR_ISOLATION=inline) and it prints the CPU time
(time.process_time, so the machine's load does not count) of the whole request per gallery example,
the request the page makes on an edit; --profile SLUG prints that example's cProfile instead.

usage: scripts/bench_page.py [--runs 21] [--dump-nodes 200]
       scripts/bench_page.py --cpu [--runs 21] [--profile mig-8-gpu]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "scripts"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "playground.settings")

if "--cpu" in sys.argv:  # the engine's CPU in this process, where process_time sees it
    os.environ["ALLOCATOR_ISOLATION"] = "inline"

import playground.wsgi  # noqa: E402,F401  the server's process as it serves: Django set up, the heap settled

from django.core.files.uploadedfile import SimpleUploadedFile  # noqa: E402
from django.test import Client  # noqa: E402

from allocator import gallery  # noqa: E402
from bench_allocate import generate  # noqa: E402


def form(example) -> dict:
    data = {"scenario": example.scenario, "node": example.node or "", "gates-submitted": "1",
            "example": example.slug}  # the page sends the example its text came from
    for component, values in example.component_gates().items():
        for gate, value in values.items():
            if value:
                data[f"gate-{component}-{gate}"] = "on"
    from allocator.engine.gates import GATES

    for info in GATES.values():
        for component in ("apiserver", "scheduler", "kubelet"):
            override = example.component_gates().get(component, {}).get(info.name)
            if override is None and info.default:
                data[f"gate-{component}-{info.name}"] = "on"
    return data


class ServerClock:
    """Time spent in Django's request handler (middleware, view, rendering, the worker round trip):
    the server's part of a request, without the test client's own work."""

    def __init__(self):
        from django.core.handlers.base import BaseHandler

        self.times: list[float] = []
        original = BaseHandler.get_response

        def timed(handler, request):
            start = time.perf_counter()
            try:
                return original(handler, request)
            finally:
                self.times.append((time.perf_counter() - start) * 1000)

        BaseHandler.get_response = timed


def measure(client: Client, data: dict, runs: int, texts: list[str] | None = None) -> list[float]:
    """Each run changes a comment line, so the results cache never answers; with `texts`, runs go
    through them in turn (an edit and back). The form is sent as JSON, as the page's script sends
    it (multipart only while a file is open)."""
    times = []
    for run in range(runs):
        text = texts[run % len(texts)] if texts else data["scenario"]
        varied = dict(data, scenario=f"{text}\n# bench run {run} {time.time_ns()}\n")
        body = json.dumps({name: [value] for name, value in varied.items()})
        start = time.perf_counter()
        response = client.post("/", body, content_type="application/json",
                               HTTP_HX_REQUEST="true", HTTP_HOST="localhost")
        times.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200, response.status_code
    return times


# The try-this edit of mig-8-gpu: the medium request asks for two partitions, and the claim fails.
EDIT_EXAMPLE = "mig-8-gpu"
EDIT_AFTER = "    - name: medium\n      exactly:\n        deviceClassName: mig.nvidia.example.com\n"


def edit_texts(example) -> list[str]:
    edited = example.scenario.replace(EDIT_AFTER, EDIT_AFTER + "        count: 2\n", 1)
    assert edited != example.scenario, "the try-this edit no longer applies"
    return [example.scenario, edited]


def post_edit(client: Client, data: dict, run: int):
    """One edit as the page posts it: a new comment line (no cached result), the form as JSON."""
    varied = dict(data, scenario=f"{data['scenario']}\n# bench run {run} {time.time_ns()}\n")
    body = json.dumps({name: [value] for name, value in varied.items()})
    response = client.post("/", body, content_type="application/json", HTTP_HX_REQUEST="true", HTTP_HOST="localhost")
    assert response.status_code == 200, response.status_code
    return response


def cpu(args) -> None:
    """CPU ms per edit request, per gallery example (median and p90 of `--runs`, after one warm-up)."""
    client = Client()
    examples = [gallery.get(args.profile)] if args.profile else gallery.all_examples()
    if args.profile:
        import cProfile
        import pstats

        data = form(examples[0])
        post_edit(client, data, -1)
        profile = cProfile.Profile()
        profile.enable()
        for run in range(args.runs):
            post_edit(client, data, run)
        profile.disable()
        pstats.Stats(profile).sort_stats(args.sort).print_stats(45)
        return
    print(f"{'example':32} {'CPU ms median':>14} {'p90':>8} {'response KB':>12}")
    medians = []
    for example in examples:
        data = form(example)
        size = len(post_edit(client, data, -1).content)  # warm: the documents' cache, the templates
        times = []
        for run in range(args.runs):
            start = time.process_time()
            post_edit(client, data, run)
            times.append((time.process_time() - start) * 1000)
        times.sort()
        medians.append(statistics.median(times))
        print(f"{example.slug:32} {medians[-1]:14.1f} {times[int(len(times) * 0.9) - 1]:8.1f} {size / 1e3:12.0f}")
    print(f"{'gallery median of medians':32} {statistics.median(medians):14.1f}   max {max(medians):.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--dump-nodes", type=int, default=200)
    parser.add_argument("--cpu", action="store_true", help="CPU ms per edit request, the engine in this process")
    parser.add_argument("--profile", metavar="SLUG", help="with --cpu: cProfile of one gallery example's edits")
    parser.add_argument("--sort", default="cumulative", help="with --profile: pstats order (cumulative, tottime)")
    args = parser.parse_args()
    if args.cpu:
        cpu(args)
        return
    client = Client()
    medians = []
    print(f"{'scenario':32} {'median ms':>10} {'p90 ms':>8}")
    for example in gallery.all_examples():
        times = sorted(measure(client, form(example), args.runs))
        median = statistics.median(times)
        medians.append(median)
        print(f"{example.slug:32} {median:10.1f} {times[int(len(times) * 0.9) - 1]:8.1f}")
    print(f"{'gallery median of medians':32} {statistics.median(medians):10.1f}")
    example = gallery.get(EDIT_EXAMPLE)
    clock = ServerClock()
    times = measure(client, form(example), 2 * max(args.runs, 21), edit_texts(example))
    for label, start in (("the edit", 1), ("taken back", 0)):  # runs alternate: back, edit, back, …
        ours, server = sorted(times[start::2]), sorted(clock.times[start::2])
        print(f"{EDIT_EXAMPLE + ', ' + label:32} {statistics.median(ours):10.1f} {ours[int(len(ours) * 0.9) - 1]:8.1f}"
              f"   server part: median {statistics.median(server):.1f}, p90 {server[int(len(server) * 0.9) - 1]:.1f}")
    if args.dump_nodes:
        dump = generate(args.dump_nodes).encode()
        form_data = {"scenario": "", "node": "", "gates-submitted": "1"}
        from allocator.engine.gates import GATES

        for info in GATES.values():
            if info.default:
                for component in ("apiserver", "scheduler", "kubelet"):
                    form_data[f"gate-{component}-{info.name}"] = "on"
        times, sizes = [], []
        for run in range(3):  # opened as a file, as the page sends a large one; a new comment each time
            upload = SimpleUploadedFile("dump.yaml", dump + f"# bench run {run} {time.time_ns()}\n".encode())
            start = time.perf_counter()
            response = client.post("/", {**form_data, "scenario-file": upload},
                                   HTTP_HX_REQUEST="true", HTTP_HOST="localhost")
            times.append((time.perf_counter() - start) * 1000)
            assert response.status_code == 200, response.status_code
            sizes.append(len(response.content))
        label = f"{args.dump_nodes}-node dump ({len(dump) / 1e6:.1f} MB file)"
        print(f"{label:32} {statistics.median(times):10.1f}   response {statistics.median(sizes) / 1e3:.0f} KB")

if __name__ == "__main__":
    main()
