#!/usr/bin/env python3
"""A room under load (a benchmark, not a test): 100 attendees checking every 3 s, plus the instructor's page.

    .venv/bin/python scripts/bench_room.py [--attendees 100] [--interval 3] [--duration 60] [--fresh 0.25]

It makes a fresh PostgreSQL database (default postgres://postgres@127.0.0.1:5432/dra_playground_rooms_bench),
migrates it, collects static files and starts gunicorn with the production settings (gunicorn.conf.py,
DJANGO_PRODUCTION=1, Redis at --redis-url unless --no-redis; plain HTTP on 127.0.0.1, one proxy hop so
each attendee carries its own X-Forwarded-For address as it would from its own laptop). Then:

- the instructor opens a room for the shipped workshop from its overview page (the CSRF form);
- every attendee opens the attendee link, joins (its own signed cookie), and from a random moment in
  the first interval sends a Check every --interval seconds, as htmx does, walking through the lessons:
  the start of a step (its checks fail), then its solution (they pass), then the next step. A share
  --fresh of the Checks carry text nobody sent before (a comment added), so they run the allocator in
  a worker instead of coming from the results cache, as an attendee's own edits do;
- the instructor's page polls its status fragment every 3 s, as the page does.

The first --warmup seconds of that load are not timed: each gunicorn process starts its allocation
workers on its first run, which a server that has been up for a while has long done.

It prints p50 / p95 / p99 / max per kind of request and the status codes, then checks that the room
recorded what was sent: every attendee joined, and one recorded Check per Check answered 200.
Every request goes to 127.0.0.1 only; the run stops by itself after --duration seconds.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import tempfile
import threading
import time
import urllib.parse
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import serving  # noqa: E402  (scripts/serving.py: the server under test, shared with loadtest.py)
from serving import request  # noqa: E402

WORKSHOP = "dra-in-90-minutes"


def cookies_from(headers, jar: dict) -> None:
    for value in headers.get_all("Set-Cookie") or []:
        name, _, rest = value.partition("=")
        jar[name.strip()] = rest.split(";", 1)[0]


def cookie_header(jar: dict) -> str:
    return "; ".join(f"{k}={v}" for k, v in jar.items())


def csrf_field(body: bytes) -> str:
    match = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', body)
    if not match:
        raise RuntimeError("no CSRF token in the page")
    return match.group(1).decode()


def check_form(variant, gates_module) -> dict:
    """The lesson page's form for `variant`: scenario, node and every gate that is on."""
    data = {"scenario": variant.scenario, "node": variant.node, "gates-submitted": "1"}
    for component, _ in gates_module.COMPONENTS:
        for name, info in gates_module.GATES.items():
            if variant.gates.get(component, {}).get(name, info.default):
                data[f"gate-{component}-{name}"] = "on"
    return data


# ---- the server under test ------------------------------------------------------------------

class Server(serving.Server):
    prefix = "bench-room"

    def settings(self):
        # Under this load a Check can take longer than the interval, so the next one follows at
        # once; with no gap between recorded Checks, every Check answered must be in the room.
        return {"ROOM_CHECK_GAP": "0"}


# ---- the room ---------------------------------------------------------------------------------

class Bench:
    def __init__(self, args, port: int, server=None):
        from allocator.engine import gates
        from allocator.workshops.library import get

        self.args = args
        self.port = port
        self.server = server
        self.workshop = get(WORKSHOP)
        self.forms = [(check_form(lesson.start, gates), check_form(lesson.solution or lesson.start, gates))
                      for lesson in self.workshop.lessons]
        self.samples: list[tuple[str, int | None, float]] = []
        self.lock = threading.Lock()
        self.checks_ok = 0

    def call(self, op, method, path, *, ip, jar=None, body=None, headers=None):
        headers = dict(headers or {})
        headers["X-Forwarded-For"] = ip
        if jar:
            headers["Cookie"] = cookie_header(jar)
        started = time.monotonic()
        try:
            status, content, response_headers = request(self.port, method, path, body=body, headers=headers)
        except OSError:
            status, content, response_headers = None, b"", None
        seconds = time.monotonic() - started
        with self.lock:
            self.samples.append((op, status, seconds))
        if jar is not None and response_headers is not None:
            cookies_from(response_headers, jar)
        return status, content, response_headers

    def open_room(self) -> tuple[str, str]:
        jar: dict = {}
        ip = "198.18.200.1"
        _, body, _ = self.call("overview", "GET", f"/workshops/{WORKSHOP}/", ip=ip, jar=jar)
        form = urllib.parse.urlencode({"csrfmiddlewaretoken": csrf_field(body), "kind": "shipped", "ident": WORKSHOP})
        status, _, headers = self.call("open room", "POST", "/rooms/open", ip=ip, jar=jar, body=form,
                                       headers={"Content-Type": "application/x-www-form-urlencoded"})
        if status != 303:
            raise RuntimeError(f"opening the room answered {status}")
        teach = headers["Location"].split("?")[0]
        code = teach.split("/")[2]
        return code, teach

    def attendee(self, number: int, code: str, start: "Start"):
        rng = random.Random(number)
        ip = f"198.18.{number // 250}.{number % 250 + 1}"
        jar: dict = {}
        _, body, _ = self.call("attendee link", "GET", f"/rooms/{code}/", ip=ip, jar=jar)
        if self.args.room:
            form = urllib.parse.urlencode({"csrfmiddlewaretoken": csrf_field(body)})
            status, _, _ = self.call("join", "POST", f"/rooms/{code}/", ip=ip, jar=jar, body=form,
                                     headers={"Content-Type": "application/x-www-form-urlencoded"})
            if status != 303:
                raise RuntimeError(f"attendee {number}: joining answered {status}")
        stop_at = start.wait()
        time.sleep(rng.uniform(0, self.args.interval))
        step, solved, tries = 0, False, 0
        while time.monotonic() < stop_at:
            tick = time.monotonic()
            fields = dict(self.forms[step][1 if solved else 0])
            tries += 1
            if rng.random() < self.args.fresh:  # an attendee's own edit: text nobody sent before
                fields["scenario"] += f"\n# attendee {number}, try {tries}\n"
            headers = {"Content-Type": "application/x-www-form-urlencoded", "HX-Request": "true",
                       "X-CSRFToken": jar.get("csrftoken", "")}
            status, _, _ = self.call("check", "POST", f"/workshops/{WORKSHOP}/{step + 1}/check", ip=ip, jar=jar,
                                     body=urllib.parse.urlencode(fields), headers=headers)
            if status == 200:
                with self.lock:
                    self.checks_ok += 1
            if solved:
                step, solved = (step + 1) % len(self.forms), False
            else:
                solved = rng.random() < 0.5  # about two Checks of a step before the right answer
            time.sleep(max(0.0, self.args.interval - (time.monotonic() - tick)))

    def instructor(self, teach: str, start: "Start"):
        stop_at = start.wait()
        while time.monotonic() < stop_at:
            tick = time.monotonic()
            self.call("instructor poll", "GET", teach + "/status", ip="198.18.200.1", headers={"HX-Request": "true"})
            time.sleep(max(0.0, 3.0 - (time.monotonic() - tick)))

    def run(self) -> dict:
        code, teach = self.open_room()
        self.call("instructor page", "GET", teach, ip="198.18.200.1")
        start = Start(self.args.attendees + 1)
        threads = [threading.Thread(target=self.attendee, args=(n, code, start), daemon=True)
                   for n in range(self.args.attendees)]
        threads.append(threading.Thread(target=self.instructor, args=(teach, start), daemon=True))
        for thread in threads:
            thread.start()
        start.joined.wait()  # every attendee joined: the run starts, timed after the warm-up
        start.go(time.monotonic() + self.args.warmup + self.args.duration)
        time.sleep(self.args.warmup)
        with self.lock:
            self.samples = [s for s in self.samples if s[0] not in ("check", "instructor poll")]
        load_before = os.getloadavg()
        started = time.monotonic()
        cpu_before = self.server.cpu_seconds() if self.server else 0.0
        client_before = sum(os.times()[:2])
        for thread in threads:
            thread.join(self.args.duration + 120)
        elapsed = time.monotonic() - started
        self.server_cpu = (self.server.cpu_seconds() if self.server else 0.0) - cpu_before
        self.client_cpu = sum(os.times()[:2]) - client_before
        _, body, _ = self.call("instructor poll (final)", "GET", teach + "/status", ip="198.18.200.2",
                               headers={"HX-Request": "true"})
        return self.report(elapsed, load_before, body.decode("utf-8", "replace"))

    def report(self, elapsed: float, load_before, final: str) -> dict:
        by_op = defaultdict(list)
        statuses = defaultdict(Counter)
        for op, status, seconds in self.samples:
            statuses[op][status] += 1
            if status is not None:
                by_op[op].append(seconds)
        ops = {op: {"requests": sum(statuses[op].values()),
                    "status": {str(k): v for k, v in sorted(statuses[op].items(), key=str)},
                    "p50_ms": round(1000 * percentile(times, 50)), "p95_ms": round(1000 * percentile(times, 95)),
                    "p99_ms": round(1000 * percentile(times, 99)), "max_ms": round(1000 * max(times or [0]))}
               for op, times in sorted(by_op.items())}
        everything = [t for op in ("check", "instructor poll") for t in by_op.get(op, [])]
        joined = re.search(r'data-joined="(\d+)"', final)
        attempts = sum(int(n) for n in re.findall(r"(\d+) Checks?</span>", final))
        return {
            "attendees": self.args.attendees, "interval_s": self.args.interval, "duration_s": round(elapsed, 1),
            "fresh": self.args.fresh, "joined_room": self.args.room, "redis": self.args.redis,
            "workers": self.args.workers or "gunicorn.conf.py",
            "load_before": [round(x, 2) for x in load_before], "load_after": [round(x, 2) for x in os.getloadavg()],
            "ops": ops,
            "all_p99_ms": round(1000 * percentile(everything, 99)),
            "warmup_s": self.args.warmup,
            "server_cpu_s": round(self.server_cpu, 1), "client_cpu_s": round(self.client_cpu, 1),
            "server_cpu_ms_per_check": round(1000 * self.server_cpu / max(1, statuses["check"][200])),
            "room": {"joined": int(joined.group(1)) if joined else None, "checks_answered_200": self.checks_ok,
                     "checks_recorded": attempts},
        }


class Start:
    """Every client waits here once it has joined; the run's deadline is set when the last one has."""

    def __init__(self, parties: int):
        self.joined = threading.Barrier(parties + 1)
        self.started = threading.Event()
        self.deadline = 0.0

    def wait(self) -> float:
        self.joined.wait()
        self.started.wait()
        return self.deadline

    def go(self, deadline: float) -> None:
        self.deadline = deadline
        self.started.set()


def percentile(values, q):
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(q / 100 * (len(ordered) - 1)))))]


def print_markdown(result: dict):
    redis = "on" if result["redis"] else "off"
    outside = "" if result["joined_room"] else "; attendees not in the room"
    print(f"\n{result['attendees']} attendees checking every {result['interval_s']:g} s for "
          f"{result['duration_s']} s after a {result['warmup_s']:g} s warm-up (fresh text {result['fresh']:.0%}, "
          f"Redis {redis}, gunicorn workers: {result['workers']}{outside}); "
          f"load average {result['load_before'][0]} before, {result['load_after'][0]} after\n")
    print("| request | n | status | p50 | p95 | p99 | max |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for op, row in result["ops"].items():
        codes = ", ".join(f"{v} x {k}" for k, v in row["status"].items())
        print(f"| {op} | {row['requests']} | {codes} | {row['p50_ms']} ms | {row['p95_ms']} ms | "
              f"{row['p99_ms']} ms | {row['max_ms']} ms |")
    room = result["room"]
    print(f"\nserver CPU: {result['server_cpu_s']} s in {result['duration_s']} s "
          f"({result['server_cpu_s'] / result['duration_s']:.2f} cores), "
          f"{result['server_cpu_ms_per_check']} ms per Check; "
          f"this client: {result['client_cpu_s']} s")
    print(f"all requests p99: {result['all_p99_ms']} ms; the room: {room['joined']} joined, "
          f"{room['checks_recorded']} Checks recorded of {room['checks_answered_200']} answered 200")


# ---- CPU per request, in one process --------------------------------------------------------------

def cpu_per_request(args) -> dict:
    """What one Check costs in CPU, measured in this process (Django's test client, a fresh SQLite
    database, the local-memory cache, every run inline), so the figure does not depend on how busy
    the machine is: a Check answered from the results cache, a Check of text nobody sent before
    (the allocator runs, as in a worker), and the instructor's poll. With --profile N, the N
    costliest functions of the Checks too."""
    import cProfile
    import pstats

    from django.core.management import call_command
    from django.test import Client

    from allocator.engine import gates
    from allocator.workshops.library import get

    call_command("migrate", verbosity=0)
    workshop = get(WORKSHOP)
    forms = [(check_form(lesson.start, gates), check_form(lesson.solution or lesson.start, gates))
             for lesson in workshop.lessons]
    instructor = Client(REMOTE_ADDR="198.18.200.1", HTTP_HOST="127.0.0.1")
    response = instructor.post("/rooms/open", {"kind": "shipped", "ident": WORKSHOP})
    teach = response["Location"].split("?")[0]
    attendee = Client(REMOTE_ADDR="198.18.0.1", HTTP_HOST="127.0.0.1")
    if args.room and attendee.post(f"/rooms/{teach.split('/')[2]}/").status_code != 303:
        raise RuntimeError("joining the room failed")

    def body(n: int, fresh: bool) -> str:
        fields = dict(forms[n % len(forms)][n // len(forms) % 2])
        if fresh:
            fields["scenario"] += f"\n# try {n} {time.time_ns()}\n"
        return urllib.parse.urlencode(fields)

    def check(n: int, text: str):
        response = attendee.post(f"/workshops/{WORKSHOP}/{n % len(forms) + 1}/check", text,
                                 content_type="application/x-www-form-urlencoded", HTTP_HX_REQUEST="true")
        if response.status_code != 200:
            raise RuntimeError(f"a Check answered {response.status_code}")

    count = 4 * len(forms)
    for n in range(count):  # the results cache holds every step's start and solution from here on
        check(n, body(n, False))
    result = {}
    for kind, fresh in (("cached Check", False), ("fresh Check", True)):
        bodies = [body(n, fresh) for n in range(count)]  # made before the clock starts
        started = time.process_time()
        for n, text in enumerate(bodies):
            check(n, text)
        result[f"{kind} ms"] = round((time.process_time() - started) / count * 1000, 2)
    started = time.process_time()
    for _ in range(count):
        instructor.get(teach + "/status", HTTP_HX_REQUEST="true")
    result["instructor poll ms"] = round((time.process_time() - started) / count * 1000, 2)
    per_second = args.attendees / args.interval
    mix = (1 - args.fresh) * result["cached Check ms"] + args.fresh * result["fresh Check ms"]
    result["cores for the room"] = round((per_second * mix + result["instructor poll ms"] / 3) / 1000, 3)
    if args.profile:
        bodies = [body(n, n % 4 == 0) for n in range(count)]
        profile = cProfile.Profile()
        profile.enable()
        for n, text in enumerate(bodies):
            check(n, text)
        profile.disable()
        pstats.Stats(profile).sort_stats("tottime").print_stats(args.profile)
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--attendees", type=int, default=100)
    parser.add_argument("--interval", type=float, default=3.0, help="seconds between one attendee's Checks")
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--warmup", type=float, default=10.0,
                        help="seconds of the same load before the timed part (each server process starts its "
                             "allocation workers on its first run)")
    parser.add_argument("--fresh", type=float, default=0.25,
                        help="share of Checks with text nobody sent before (they run the allocator)")
    parser.add_argument("--workers", type=int, default=0, help="gunicorn workers (default: gunicorn.conf.py's)")
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/dra_playground_rooms_bench")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--no-redis", dest="redis", action="store_false")
    parser.add_argument("--no-room", dest="room", action="store_false",
                        help="the same Checks from attendees who did not join: what the room itself costs")
    parser.add_argument("--json", action="store_true", help="print the result as JSON too")
    parser.add_argument("--cpu", action="store_true",
                        help="no server: the CPU time of one Check and one instructor poll, in this process")
    parser.add_argument("--profile", type=int, default=0, help="with --cpu: print the N costliest functions")
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "playground.settings")
    if args.cpu:
        with tempfile.TemporaryDirectory(prefix="bench-room-cpu-") as tmp:
            os.environ.update({"DATABASE_URL": f"sqlite:///{tmp}/rooms.sqlite3", "REDIS_URL": "",
                               "ALLOCATOR_ISOLATION": "inline", "ROOM_CHECK_GAP": "0"})
            import django

            django.setup()
            result = cpu_per_request(args)
        print(f"CPU per request in one process ({args.attendees} attendees every {args.interval:g} s, "
              f"{args.fresh:.0%} fresh):")
        print(json.dumps(result, indent=2))
        return 0
    import django

    django.setup()
    with tempfile.TemporaryDirectory(prefix="bench-room-") as tmp:
        server = Server(args, Path(tmp))
        server.prepare_database()
        server.start()
        try:
            print(f"gunicorn on 127.0.0.1:{server.port}; {args.attendees} attendees for {args.duration:g} s ...",
                  flush=True)
            result = Bench(args, server.port, server).run()
        finally:
            server.stop()
    print_markdown(result)
    if args.json:
        print(json.dumps(result, indent=2))
    room = result["room"]
    if not args.room:
        return 0
    return 0 if room["joined"] == args.attendees and room["checks_recorded"] == room["checks_answered_200"] else 1


if __name__ == "__main__":
    sys.exit(main())
