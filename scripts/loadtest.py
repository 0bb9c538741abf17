#!/usr/bin/env python3
"""Load and fault check (a script, not a test): gunicorn + PostgreSQL on loopback, many clients.

    .venv/bin/python scripts/loadtest.py [--clients 50] [--duration 60] [--workers 4] [--redis]

It makes a fresh PostgreSQL database (default postgres://postgres@127.0.0.1:5432/dra_playground_load),
migrates it, collects static files, starts gunicorn with the production settings (plain HTTP on
127.0.0.1, one proxy hop so each client can carry its own X-Forwarded-For address) and runs
closed-loop clients with no think time that mix page loads, allocations of the gallery examples,
shares of new and already-shared scenarios, reads of shared links and a few hostile requests.
Halfway through it SIGKILLs one gunicorn worker. Afterwards it checks that every share answered
201 reads back byte for byte, that equal content got one id, and that the table has no duplicates.

Every request goes to 127.0.0.1 only; the run stops by itself after --duration seconds.

Other modes (each starts its own server; see the README's "Load test" for figures):

    --mode noisy [--noisy 8] [--fairness on|off]   8 clients loop on a worst-case search while one
        client times small allocations: the victim's latency, with and without the per-client limits
    --mode slowloris [--attackers 6] [--attack-addresses 1] [--worker-class sync]   sockets that send
        their bodies a byte a second, from their own loopback addresses, while /healthz and small
        allocations are timed (no proxy in front, as in the README's classroom mode)
    --redis-outage                                  (mixed mode, with --redis) stop Redis at 1/3 of the
        run and start it again at 2/3: every request must still be answered without a 5xx
    --mode paths --noisy-target check|compare|lint [--noisy 8]   as noisy, the attackers posting the worst
        search to a workshop Check, to /compare, or as workshops to share (every lesson linted)
    --own-services                                  start a throwaway PostgreSQL and redis-server on free
        ports instead of using the ones at --database-url / --redis-url

Issue 27's modes (serve; each times the victim of `--mode noisy` beside its attack):

    --mode deep-yaml      attackers post deep YAML (flat brackets, the verbatim-tag nesting, a lesson's
        scenario) and a 34 MiB workshop: every answer a 4xx, no worker crash (SIGSEGV) in the log
    --mode big-answers [--answer-claims 500] [--answer-devices N]   one-device claims over a pool to the API: answer
        bytes against the question's, time, and the gunicorn workers' peak memory
    --mode cache-budget [--cache-budget MiB]     (with --redis) clients whose every run is new and
        cacheable: Redis's memory against RESULTS_CACHE_TOTAL_BYTES, and the counters still shared
    --mode db-down        (with --own-services) PostgreSQL stopped for a third of the run under clients
        reading and writing shares: 503 with Retry-After, never 500, and the recovery time
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import serving  # noqa: E402  (scripts/serving.py: the server under test, shared with bench_room.py)
from serving import free_port, request  # noqa: E402
from allocator import gallery  # noqa: E402
from allocator.engine.gates import GATES  # noqa: E402

COMPONENTS = ("apiserver", "scheduler", "kubelet")
EXAMPLES = gallery.all_examples()


# ---- scenarios ------------------------------------------------------------------------

def search_explosion(devices=64, group=2, claims=33, per_claim=2) -> str:
    """More claims than attribute groups: every order is tried until the engine's time limit."""
    parts = [
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.example.com}\n"
        "spec:\n  selectors:\n  - cel: {expression: 'device.driver == \"gpu.example.com\"'}\n---\n"
        "apiVersion: v1\nkind: Node\nmetadata: {name: worker-1}\n---\n"
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: worker-1-gpus}\nspec:\n"
        "  driver: gpu.example.com\n  nodeName: worker-1\n"
        "  pool: {name: worker-1, generation: 1, resourceSliceCount: 1}\n  devices:\n"
    ]
    for i in range(devices):
        parts.append(f"  - name: gpu-{i}\n    attributes:\n      numa: {{int: {i // group}}}\n")
    for c in range(claims):
        parts.append(
            f"---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
            f"metadata: {{name: claim-{c}, namespace: default}}\nspec:\n  devices:\n    requests:\n"
            f"    - name: gpus\n      exactly: {{deviceClassName: gpu.example.com, allocationMode: ExactCount, "
            f"count: {per_claim}}}\n    constraints:\n    - matchAttribute: gpu.example.com/numa\n"
        )
    return "".join(parts)


def billion_laughs() -> str:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for i in range(9):
        before, name = chr(97 + i), chr(98 + i)
        lines.append(f"{name}: &{name} [" + ", ".join(f"*{before}" for _ in range(9)) + "]")
    return "\n".join(lines) + "\n"


EXPLOSION = search_explosion()
LAUGHS = billion_laughs()
DEEP = "[" * 5000 + "]" * 5000


def form_fields(scenario: str, node: str, gates: dict) -> dict:
    data = {"scenario": scenario, "node": node, "gates-submitted": "1"}
    for component in COMPONENTS:
        for name, info in GATES.items():
            if gates.get(component, {}).get(name, info.default):
                data[f"gate-{component}-{name}"] = "on"
    return data


def gate_flag(gates: dict) -> str:
    return ",".join(f"{k}={str(v).lower()}" for k, v in sorted(gates.items()))


# ---- the server under test -------------------------------------------------------------

class Server(serving.Server):
    prefix = "loadtest"
    start_seconds = 60

    def settings(self):
        args = self.args
        env = {"SHARE_RATE_LIMIT": args.rate_limit, "ALLOCATOR_WORKERS": "1"}
        if args.mode == "slowloris":
            env["PROXY_COUNT"] = "0"  # the classroom mode: clients connect directly
        if args.mode in ("noisy", "paths"):
            env["ALLOCATOR_WORKERS"] = "2"  # the default: half of them may take long runs
        if getattr(args, "fairness", "on") == "off":
            env.update({"ALLOCATOR_RUNS_PER_CLIENT": "0", "ALLOCATOR_SLOW_RUNS": "0/1"})
        if args.worker_class:
            env["GUNICORN_WORKER_CLASS"] = args.worker_class
        if args.mode == "cache-budget":
            env["RESULTS_CACHE_TOTAL_BYTES"] = str(args.cache_budget * 1024 * 1024)
        if args.mode == "deep-yaml":
            env["SHARE_RATE_LIMIT"] = "0/1"  # every deep share reaches the reader
        return env

    def flags(self):
        return ["--workers", str(self.args.workers), "--timeout", "30", "--graceful-timeout", "10"]


# ---- throwaway PostgreSQL and Redis (--own-services) ---------------------------------------

class Services:
    """A PostgreSQL cluster and a redis-server of this run's own, on free loopback ports, so the
    run neither depends on nor disturbs servers others use, and Redis can be stopped mid-run."""

    PG_BIN = Path("/usr/lib/postgresql/15/bin")

    def __init__(self, folder: Path):
        self.folder = folder
        self.postgres = None
        self.redis = None
        self.redis_port = free_port()

    def _as_postgres(self, command: list[str]) -> list[str]:
        # PostgreSQL refuses to run as root; run it as the packaged `postgres` user then.
        return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command

    def start_postgres(self) -> str:
        data = self.folder / "pgdata"
        data.mkdir()
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres")
            shutil.chown(data, "postgres")
        subprocess.run(self._as_postgres([str(self.PG_BIN / "initdb"), "-D", str(data), "-U", "postgres",
                                          "--auth=trust", "-E", "UTF8"]), check=True, stdout=subprocess.DEVNULL)
        port = free_port()
        self.postgres_command = self._as_postgres([
            str(self.PG_BIN / "postgres"), "-D", str(data), "-p", str(port), "-h", "127.0.0.1",
            "-k", str(self.folder), "-c", "max_connections=200", "-c", "fsync=off"])
        self.postgres_port = port
        self.run_postgres()
        time.sleep(1)
        return f"postgres://postgres@127.0.0.1:{port}/dra_playground_load"

    def run_postgres(self):
        self.postgres = subprocess.Popen(self.postgres_command, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL, start_new_session=True)
        wait_for_port(self.postgres_port)

    def stop_postgres(self):
        """A fast shutdown, as `pg_ctl stop -m fast` does: connections end, the port closes. The
        signal goes to the postmaster itself (runuser does not pass SIGINT on)."""
        if self.postgres is not None and self.postgres.poll() is None:
            pid = int((self.folder / "pgdata" / "postmaster.pid").read_text().split()[0])
            os.kill(pid, signal.SIGINT)
            self.postgres.wait(60)

    def start_redis(self) -> str:
        self.redis = subprocess.Popen(
            ["redis-server", "--port", str(self.redis_port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.folder)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        wait_for_port(self.redis_port)
        return f"redis://127.0.0.1:{self.redis_port}/0"

    def stop_redis(self):
        if self.redis is not None and self.redis.poll() is None:
            self.redis.kill()
            self.redis.wait(10)

    def stop(self):
        self.stop_redis()
        if self.postgres is not None and self.postgres.poll() is None:
            self.postgres.terminate()
            try:
                self.postgres.wait(20)
            except subprocess.TimeoutExpired:
                self.postgres.kill()


def wait_for_port(port: int, seconds: float = 30):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing answered on 127.0.0.1:{port}")


# ---- clients ---------------------------------------------------------------------------

class Run:
    def __init__(self, port: int, clients: int, duration: float, seed: int):
        self.port = port
        self.clients = clients
        self.duration = duration
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.samples: list[tuple[str, int | None, float, float]] = []  # op, status, seconds, start
        self.errors: Counter = Counter()
        self.shares: list[dict] = []  # every 201: id, content key, bytes expected, node, gates
        self.known_ids: list[str] = []
        self.static_path = "/healthz"
        self.started = 0.0
        self.kill_at = None

    def record(self, op, status, seconds, start):
        with self.lock:
            self.samples.append((op, status, seconds, start - self.started))

    def call(self, op, method, path, body=None, headers=None, client_ip="198.18.0.1"):
        headers = {"X-Forwarded-For": client_ip, **(headers or {})}
        if isinstance(body, str):
            body = body.encode("utf-8")
        start = time.monotonic()
        try:
            status, data, response_headers = request(self.port, method, path, body, headers)
        except (OSError, http.client.HTTPException) as exc:
            self.record(op, None, time.monotonic() - start, start)
            with self.lock:
                self.errors[f"{op}: {type(exc).__name__}"] += 1
            return None, b"", {}
        self.record(op, status, time.monotonic() - start, start)
        return status, data, response_headers

    def remember_share(self, shared_id, key, expected: bytes, node, gates):
        with self.lock:
            self.shares.append({"id": shared_id, "key": key, "bytes": expected, "node": node, "gates": gates})
            self.known_ids.append(shared_id)

    def client(self, number: int):
        rng = random.Random(self.rng.random())
        ip = f"198.18.{number // 250}.{number % 250 + 1}"
        csrf = {}
        ops = [
            (8, self.op_index), (10, self.op_example_page), (30, self.op_allocate_form), (7, self.op_allocate_api),
            (7, self.op_share_new_api), (4, self.op_share_new_form), (6, self.op_share_existing),
            (10, self.op_open_shared), (8, self.op_read_shared), (4, self.op_static), (3, self.op_hostile),
        ]
        weights = [w for w, _ in ops]
        deadline = self.started + self.duration
        sequence = 0
        while "token" not in csrf and time.monotonic() < deadline:  # a visitor opens the page first
            self.op_index(rng, ip, csrf, f"{number}-0")
        while time.monotonic() < deadline:
            sequence += 1
            op = rng.choices(ops, weights)[0][1]
            op(rng, ip, csrf, f"{number}-{sequence}")

    @staticmethod
    def form_headers(csrf) -> dict:
        """A form post as the page sends it with htmx: CSRF token in a header and in the cookie."""
        headers = {"Content-Type": "application/x-www-form-urlencoded", "HX-Request": "true"}
        if "token" in csrf:
            headers.update({"X-CSRFToken": csrf["token"], "Cookie": f"csrftoken={csrf['token']}"})
        return headers

    # Page loads
    def op_index(self, rng, ip, csrf, tag):
        status, body, headers = self.call("page /", "GET", "/", client_ip=ip)
        match = re.search(rb'href="(/static/playground/playground\.[0-9a-f]{12}\.css)"', body or b"")
        if match:
            self.static_path = match.group(1).decode()
        cookie = (headers.get("Set-Cookie") or "") if headers else ""
        token = re.search(r"csrftoken=([^;]+)", cookie)
        if token:
            csrf["token"] = token.group(1)

    def op_example_page(self, rng, ip, csrf, tag):
        self.call("page ?example", "GET", f"/?example={rng.choice(EXAMPLES).slug}", client_ip=ip)

    def op_static(self, rng, ip, csrf, tag):
        self.call("static file", "GET", self.static_path, headers={"Accept-Encoding": "gzip"}, client_ip=ip)

    # Allocations of the gallery examples
    def op_allocate_form(self, rng, ip, csrf, tag):
        example = rng.choice(EXAMPLES)
        scenario = example.scenario if rng.random() < 0.7 else example.scenario + f"# edit {tag}\n"
        body = urllib.parse.urlencode(form_fields(scenario, example.node or "", example.component_gates()))
        self.call("allocate (page, htmx)", "POST", "/", body, self.form_headers(csrf), ip)

    def op_allocate_api(self, rng, ip, csrf, tag):
        example = rng.choice([e for e in EXAMPLES if not e.component_overrides])
        query = urllib.parse.urlencode({"node": example.node or "", "featureGates": gate_flag(example.gates)})
        self.call("allocate (API)", "POST", f"/api/v1/allocate?{query}", example.scenario,
                  {"Content-Type": "application/yaml"}, ip)

    # Shares
    def share_api(self, op, ip, scenario: str, node: str, gates: dict, key: str):
        body = json.dumps({"scenario": scenario, "node": node, "gates": gates})
        for _attempt in range(3):  # a share is idempotent: retrying after a lost answer is safe
            status, data, _ = self.call(op, "POST", "/api/v1/scenarios", body, {"Content-Type": "application/json"}, ip)
            if status == 201:
                self.remember_share(json.loads(data)["id"], key, scenario.encode("utf-8"), node, gates)
                return
            if status is not None:
                return

    def op_share_new_api(self, rng, ip, csrf, tag):
        example = rng.choice(EXAMPLES)
        scenario = f"# shared by client {tag}\n" + example.scenario
        self.share_api("share new (API)", ip, scenario, example.node or "", example.component_gates(), f"new-{tag}")

    def op_share_existing(self, rng, ip, csrf, tag):
        example = rng.choice(EXAMPLES)
        self.share_api("share existing (API)", ip, example.scenario, example.node or "", example.component_gates(),
                       f"example-{example.slug}")

    def op_share_new_form(self, rng, ip, csrf, tag):
        example = rng.choice(EXAMPLES)
        scenario = f"# shared from the page by {tag}\n" + example.scenario
        fields = form_fields(scenario.replace("\n", "\r\n"), example.node or "", example.component_gates())
        headers = self.form_headers(csrf)
        for _attempt in range(3):
            body = urllib.parse.urlencode(fields)
            status, data, _ = self.call("share new (page)", "POST", "/share", body, headers, ip)
            if status == 201:
                shared_id = re.search(rb"/s/([a-z2-7]+)\"", data).group(1).decode()
                gates = {c: v for c, v in example.component_gates().items() if v}
                self.remember_share(shared_id, f"form-{tag}", scenario.encode("utf-8"), example.node or "", gates)
                return
            if status is not None:
                return

    # Reading shared links
    def op_open_shared(self, rng, ip, csrf, tag):
        if self.known_ids:
            self.call("open /s/<id>", "GET", f"/s/{rng.choice(self.known_ids)}", client_ip=ip)

    def op_read_shared(self, rng, ip, csrf, tag):
        if not self.known_ids:
            return
        shared = rng.choice(self.known_ids)
        path, op = rng.choice([(f"/s/{shared}.yaml", "read .yaml"), (f"/api/v1/scenarios/{shared}", "read API"),
                               (f"/s/{shared}/embed", "open embed")])
        self.call(op, "GET", path, client_ip=ip)

    # Hostile requests
    def op_hostile(self, rng, ip, csrf, tag):
        form = self.form_headers(csrf)
        choice = rng.randrange(7)
        if choice == 0:
            body = urllib.parse.urlencode(form_fields(EXPLOSION, "", {}))
            self.call("hostile: search explosion (page)", "POST", "/", body, form, ip)
        elif choice == 1:
            status, data, _ = self.call("hostile: share explosion", "POST", "/api/v1/scenarios", EXPLOSION,
                                        {"Content-Type": "application/yaml"}, ip)
            if status == 201:
                shared = json.loads(data)["id"]
                self.remember_share(shared, "explosion", EXPLOSION.encode("utf-8"), "", {})
                self.call("hostile: open shared explosion", "GET", f"/s/{shared}", client_ip=ip)
        elif choice == 2:
            self.call("hostile: alias bomb", "POST", "/", urllib.parse.urlencode(form_fields(LAUGHS, "", {})), form, ip)
        elif choice == 3:
            self.call("hostile: deep nesting", "POST", "/api/v1/allocate", DEEP,
                      {"Content-Type": "application/yaml"}, ip)
        elif choice == 4:
            self.call("hostile: 3 MB body", "POST", "/api/v1/allocate", "#" * (3 * 1024 * 1024),
                      {"Content-Type": "application/yaml"}, ip)
        elif choice == 5:
            self.call("hostile: 300 KiB share", "POST", "/api/v1/scenarios", "#" * (300 * 1024),
                      {"Content-Type": "application/yaml"}, ip)
        else:
            for n in range(5):  # one address sharing as fast as it can: the rate limit answers 429
                scenario = f"# flood {tag}-{n}\n"
                status, data, _ = self.call("hostile: share flood (one address)", "POST", "/api/v1/scenarios",
                                            scenario, {"Content-Type": "application/yaml"}, "198.19.255.1")
                if status == 201:
                    self.remember_share(json.loads(data)["id"], f"flood-{tag}-{n}", scenario.encode(), "", {})

    def run(self, server: Server, kill_after: float | None):
        self.started = time.monotonic()
        threads = [threading.Thread(target=self.client, args=(n,), daemon=True) for n in range(self.clients)]
        for thread in threads:
            thread.start()
        killed = None
        if kill_after is not None:
            time.sleep(kill_after)
            before = server.workers()
            killed = server.kill_one_worker()
            self.kill_at = time.monotonic() - self.started
            replaced_at = None
            while time.monotonic() - self.started < self.duration:
                now = server.workers()
                if len(now) == len(before) and killed not in now:
                    replaced_at = time.monotonic() - self.started
                    break
                time.sleep(0.05)
            killed = {"pid": killed, "at": self.kill_at, "replaced_after": replaced_at and replaced_at - self.kill_at}
        for thread in threads:
            thread.join(self.duration + 120)
        return time.monotonic() - self.started, killed


# ---- noisy neighbours: clients looping on worst-case searches --------------------------------

def slow_selectors(devices=128) -> str:
    """Five nested .all() over ten elements in the class selector: about 0.1 s of CEL per device."""
    inner = "[1,2,3,4,5,6,7,8,9,10]"
    expression = f"{inner}.all(a, {inner}.all(b, {inner}.all(c, {inner}.all(d, {inner}.all(e, e > 0)))))"
    items = "".join(f"  - name: d{i}\n    attributes: {{index: {{int: {i}}}}}\n" for i in range(devices))
    return (
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\nspec:\n"
        f"  selectors:\n  - cel: {{expression: '{expression}'}}\n"
        "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
        "  driver: gpu.example.com\n  nodeName: n1\n  pool: {name: p, generation: 1, resourceSliceCount: 1}\n"
        "  devices:\n" + items
        + "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c, namespace: default}\n"
        "spec:\n  devices:\n    requests:\n    - name: r\n      exactly:\n        deviceClassName: gpu\n"
        f"        selectors:\n        - cel: {{expression: 'device.attributes[\"gpu.example.com\"].index == {devices - 1}'}}\n"
    )


class Timings:
    def __init__(self):
        self.lock = threading.Lock()
        self.samples = defaultdict(list)  # (phase, op) -> [(status, seconds)]

    def add(self, phase, op, status, seconds):
        with self.lock:
            self.samples[(phase, op)].append((status, seconds))

    def table(self) -> dict:
        out = {}
        for (phase, op), entries in sorted(self.samples.items()):
            times = [t for status, t in entries if status is not None]
            out[f"{phase} | {op}"] = {
                "count": len(entries),
                "statuses": dict(sorted(Counter(str(status) for status, _ in entries).items())),
                "p50_ms": round(percentile(times, 50) * 1000),
                "p99_ms": round(percentile(times, 99) * 1000),
                "max_ms": round(max(times) * 1000) if times else None,
            }
        return out


def timed(timings, phase, op, port, method, path, body=None, headers=None, timeout=30):
    start = time.monotonic()
    try:
        status, data, response_headers = request(port, method, path, body, headers, timeout=timeout)
    except (OSError, http.client.HTTPException):
        status, data, response_headers = None, b"", {}
    timings.add(phase, op, status, time.monotonic() - start)
    return status, data, response_headers


def victim_loop(port, timings, phase_of, stop, address="198.18.9.9"):
    """One visitor editing a small scenario: every run is new (no cache), page and API in turn."""
    example = gallery.get("simple-gpu")
    status, body, headers = request(port, "GET", "/", headers={"X-Forwarded-For": address})
    token = re.search(r"csrftoken=([^;]+)", headers.get("Set-Cookie") or "").group(1)
    form = {"Content-Type": "application/x-www-form-urlencoded", "HX-Request": "true", "X-CSRFToken": token,
            "Cookie": f"csrftoken={token}", "X-Forwarded-For": address}
    n = 0
    while not stop.is_set():
        n += 1
        scenario = example.scenario + f"# edit {n} {secrets.token_hex(4)}\n"
        timed(timings, phase_of(), "victim: small allocation (API)", port, "POST", "/api/v1/allocate?node=worker-1",
              scenario.encode(), {"Content-Type": "application/yaml", "X-Forwarded-For": address})
        body = urllib.parse.urlencode(form_fields(scenario + "#p\n", "worker-1", {}))
        timed(timings, phase_of(), "victim: small allocation (page)", port, "POST", "/", body, form)
        time.sleep(0.1)


def noisy_loop(port, timings, phase_of, stop, address, scenario, op, path):
    """A client that posts the same worst-case search again as soon as it has an answer."""
    while not stop.is_set():
        timed(timings, phase_of(), op, port, "POST", path, scenario,
              {"Content-Type": "application/yaml", "X-Forwarded-For": address})


def run_noisy(args, server) -> dict:
    scenario = (slow_selectors() if args.noisy_kind == "cel" else EXPLOSION).encode()
    path = "/api/v1/allocate" + ("?node=n1" if args.noisy_kind == "cel" else "")
    op = f"noisy: {'CEL bomb' if args.noisy_kind == 'cel' else 'search explosion'} (API)"
    addresses = max(1, args.noisy_addresses or args.noisy)

    def attack(timings, phase_of, stop):
        return _started(noisy_loop, [(server.port, timings, phase_of, stop, f"198.18.7.{i % addresses + 1}",
                                      scenario, op, path) for i in range(args.noisy)]), {}

    timings, _ = _victim_during(args, server, attack, phase=f"with {args.noisy} noisy", join=60)
    return {"mode": "noisy", "noisy_clients": args.noisy, "noisy_addresses": addresses, "noisy_kind": args.noisy_kind,
            "fairness": args.fairness, "timings": timings.table()}


# ---- slowloris: sockets that send their bodies a byte at a time -----------------------------

def slow_sender(port, source, stop, counts, lock):
    """Keep one connection sending a body a byte a second; open a new one whenever the server
    answers or closes it."""
    while not stop.is_set():
        opened = time.monotonic()
        try:
            client = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0))
            client.sendall(b"POST /api/v1/allocate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/yaml\r\n"
                           b"Content-Length: 100000\r\n\r\n#")
        except OSError:
            with lock:
                counts["connect failed"] += 1
            time.sleep(0.2)
            continue
        outcome = "held until the run ended"
        client.settimeout(1.0)
        try:
            while not stop.is_set():
                try:
                    data = client.recv(64)
                    if data.startswith(b"HTTP/1.1 408"):
                        outcome = "answered 408"
                    elif data:
                        outcome = "answered " + data[9:12].decode(errors="replace")
                    else:
                        outcome = "closed by the server"
                    break
                except socket.timeout:
                    client.send(b"#")
        except OSError:
            outcome = "reset by the server"
        finally:
            client.close()
        with lock:
            counts[outcome] += 1
            if outcome != "held until the run ended":
                counts.setdefault("_held", []).append(time.monotonic() - opened)
        if outcome in ("reset by the server", "closed by the server"):
            time.sleep(0.1)  # refused at once: try again soon, without spinning the shared CPUs


def probe_loop(port, timings, phase_of, stop):
    n = 0
    while not stop.is_set():
        n += 1
        timed(timings, phase_of(), "GET /healthz", port, "GET", "/healthz", timeout=10)
        if n % 2 == 0:
            scenario = gallery.get("simple-gpu").scenario + f"# probe {n} {secrets.token_hex(4)}\n"
            timed(timings, phase_of(), "small allocation (API)", port, "POST", "/api/v1/allocate?node=worker-1",
                  scenario.encode(), {"Content-Type": "application/yaml"}, timeout=10)
        time.sleep(0.25)


def run_slowloris(args, server) -> dict:
    counts, lock = Counter(), threading.Lock()
    addresses = max(1, args.attack_addresses)

    def attack(timings, phase_of, stop):
        return _started(slow_sender, [(server.port, f"127.0.{1 + i % addresses // 250}.{2 + i % addresses % 250}",
                                       stop, counts, lock) for i in range(args.attackers)]), {}

    timings, _ = _victim_during(args, server, attack, victim=probe_loop, alone="no attack",
                                phase=f"{args.attackers} slow sockets", join=30)
    held = counts.pop("_held", [])
    return {"mode": "slowloris", "attackers": args.attackers, "attack_addresses": addresses,
            "worker_class": args.worker_class or "gthread (gunicorn.conf.py)", "timings": timings.table(),
            "slow_connections": dict(counts),
            "slow_connection_held_s": {"p50": round(percentile(held, 50), 1), "max": round(max(held), 1) if held else None}}


def print_probe_result(result: dict):
    print("\n" + json.dumps({k: v for k, v in result.items() if k != "timings"}))
    print("\n| phase | operation | requests | statuses | p50 ms | p99 ms | max ms |\n"
          "| --- | --- | ---: | --- | ---: | ---: | ---: |")
    for key, data in result["timings"].items():
        phase, op = key.split(" | ")
        statuses = ", ".join(f"{k}×{v}" for k, v in data["statuses"].items())
        print(f"| {phase} | {op} | {data['count']} | {statuses} | {data['p50_ms']} | {data['p99_ms']} | "
              f"{data['max_ms']} |")


# ---- checking and reporting ------------------------------------------------------------

def verify(port: int, run: Run, database_url: str) -> dict:
    import psycopg

    by_key = defaultdict(set)
    by_id = {}
    mismatched_ids = []
    for share in run.shares:
        by_key[share["key"]].add(share["id"])
        if share["id"] in by_id and by_id[share["id"]]["bytes"] != share["bytes"]:
            mismatched_ids.append(share["id"])
        by_id.setdefault(share["id"], share)
    lost, wrong_bytes, wrong_settings = [], [], []
    for shared_id, share in by_id.items():
        status, body, _ = request(port, "GET", f"/s/{shared_id}.yaml")
        if status != 200:
            lost.append(shared_id)
            continue
        if body != share["bytes"]:
            wrong_bytes.append(shared_id)
        status, body, _ = request(port, "GET", f"/api/v1/scenarios/{shared_id}")
        data = json.loads(body)
        expected_gates = share["gates"]
        if data["node"] != share["node"] or any(
            data["gates"][c][g] != v for c, values in expected_gates.items() for g, v in values.items()
        ):
            wrong_settings.append(shared_id)
    with psycopg.connect(database_url) as connection:
        rows, digests, ids = connection.execute(
            "SELECT count(*), count(DISTINCT digest), count(DISTINCT id) FROM allocator_sharedscenario").fetchone()
    answered = set(by_id)
    return {
        "shares_answered_201": len(run.shares),
        "distinct_ids": len(by_id),
        "contents_with_more_than_one_id": sum(1 for ids_ in by_key.values() if len(ids_) > 1),
        "ids_with_two_contents": len(mismatched_ids),
        "lost": len(lost),
        "wrong_bytes": len(wrong_bytes),
        "wrong_settings": len(wrong_settings),
        "table_rows": rows,
        "table_distinct_digests": digests,
        "table_distinct_ids": ids,
        "rows_not_answered_201": rows - len(answered),
    }


def percentile(values, q):
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, int(round(q / 100 * (len(ordered) - 1)))))
    return ordered[index]


def report(run: Run, elapsed: float, killed, checks: dict, args, load_before) -> dict:
    completed = [s for s in run.samples if s[1] is not None]
    latencies = [s[2] for s in completed]
    statuses = Counter(s[1] for s in run.samples)
    by_op = defaultdict(list)
    for op, status, seconds, _ in run.samples:
        by_op[op].append((status, seconds))
    ops = {}
    for op, entries in sorted(by_op.items()):
        times = [t for status, t in entries if status is not None]
        ops[op] = {
            "count": len(entries),
            "statuses": dict(sorted(Counter(str(status) for status, _ in entries).items())),
            "p50_ms": round(percentile(times, 50) * 1000),
            "p99_ms": round(percentile(times, 99) * 1000),
        }
    return {
        "clients": args.clients, "duration_s": round(elapsed, 1), "workers": args.workers,
        "cpus": os.cpu_count(), "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "cache": "redis" if args.redis else "local memory",
        "requests": len(run.samples), "completed": len(completed),
        "requests_per_s": round(len(completed) / elapsed, 1),
        "p50_ms": round(percentile(latencies, 50) * 1000), "p99_ms": round(percentile(latencies, 99) * 1000),
        "mean_ms": round(statistics.fmean(latencies) * 1000) if latencies else 0,
        "statuses": {str(k): v for k, v in sorted(statuses.items(), key=lambda kv: str(kv[0]))},
        "server_errors_5xx": sum(v for k, v in statuses.items() if k is not None and k >= 500),
        "connection_errors": dict(run.errors),
        "worker_killed": killed,
        "by_operation": ops,
        "checks": checks,
    }


def print_markdown(result: dict):
    print(f"\n{result['clients']} clients, {result['duration_s']} s, gunicorn {result['workers']} workers, "
          f"cache: {result['cache']}, {result['cpus']} CPUs, load average before/after: "
          f"{result['load_average_before'][0]}/{result['load_average_after'][0]}")
    print(f"requests: {result['completed']} completed ({result['requests_per_s']} req/s), "
          f"p50 {result['p50_ms']} ms, p99 {result['p99_ms']} ms, 5xx: {result['server_errors_5xx']}, "
          f"connection errors: {sum(result['connection_errors'].values())}")
    print(f"statuses: {result['statuses']}")
    if result["worker_killed"]:
        k = result["worker_killed"]
        replaced = f"{k['replaced_after']:.2f} s" if k["replaced_after"] is not None else "not seen"
        print(f"worker {k['pid']} killed at {k['at']:.1f} s; gunicorn replaced it after {replaced}")
    print("\n| operation | requests | statuses | p50 ms | p99 ms |\n| --- | ---: | --- | ---: | ---: |")
    for op, data in result["by_operation"].items():
        statuses = ", ".join(f"{k}×{v}" for k, v in data["statuses"].items())
        print(f"| {op} | {data['count']} | {statuses} | {data['p50_ms']} | {data['p99_ms']} |")
    print("\nchecks:", json.dumps(result["checks"]))
    print("tracebacks in the server log:", result["server_log_tracebacks"])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=["mixed", "noisy", "slowloris", "paths", *SERVE_MODES], default="mixed")
    parser.add_argument("--noisy-target", choices=["check", "compare", "lint"], default="check",
                        help="paths mode: where the attackers post the worst search")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=4, help="gunicorn workers")
    parser.add_argument("--worker-class", default="", help="gunicorn worker class (default: gunicorn.conf.py's)")
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/dra_playground_load")
    parser.add_argument("--redis", action="store_true", help="share the cache through Redis (REDIS_URL)")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--redis-outage", action="store_true", help="stop Redis at 1/3 of the run, start it at 2/3")
    parser.add_argument("--own-services", action="store_true", help="start a throwaway PostgreSQL and Redis")
    parser.add_argument("--rate-limit", default="30/600", help="SHARE_RATE_LIMIT for the server (per address)")
    parser.add_argument("--no-kill", action="store_true", help="do not kill a worker halfway")
    parser.add_argument("--noisy", type=int, default=8, help="noisy mode: clients looping on a worst-case search")
    parser.add_argument("--noisy-addresses", type=int, default=0, help="noisy mode: addresses they share (0: one each)")
    parser.add_argument("--noisy-kind", choices=["search", "cel"], default="search")
    parser.add_argument("--fairness", choices=["on", "off"], default="on", help="the per-client run limits")
    parser.add_argument("--attackers", type=int, default=6, help="slowloris mode: slow sockets")
    parser.add_argument("--attack-addresses", type=int, default=1, help="slowloris mode: their source addresses")
    parser.add_argument("--warmup", type=float, default=10.0, help="noisy/slowloris: seconds measured before")
    parser.add_argument("--answer-claims", type=int, default=500, help="big-answers mode: one-device claims")
    parser.add_argument("--answer-devices", type=int, default=0, help="big-answers mode: devices (0: one per claim)")
    parser.add_argument("--cache-budget", type=int, default=32, help="cache-budget mode: RESULTS_CACHE_TOTAL_BYTES in MiB")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", default="")
    args = parser.parse_args(argv)
    if args.mode == "cache-budget" and not args.redis:
        parser.error("--mode cache-budget needs --redis")
    if args.mode == "db-down" and not args.own_services:
        parser.error("--mode db-down needs --own-services (it stops the PostgreSQL this run started)")
    if args.redis_outage and not (args.redis and args.own_services):
        parser.error("--redis-outage needs --redis --own-services (it stops the Redis this run started)")
    json_path = Path(args.json or ROOT / "test-artifacts" / f"loadtest-{args.mode}.json")

    with tempfile.TemporaryDirectory(prefix="dra-loadtest-") as tmp:
        services = Services(Path(tmp) / "services") if args.own_services else None
        server = None
        try:
            if services:
                os.chmod(tmp, 0o755)  # the postgres user must reach its data directory
                services.folder.mkdir()
                args.database_url = services.start_postgres()
                if args.redis:
                    args.redis_url = services.start_redis()
            server = Server(args, Path(tmp))
            print(f"preparing {args.database_url} and static files ...", flush=True)
            server.prepare_database()
            server.start()
            load_before = os.getloadavg()
            if args.mode == "noisy":
                print(f"noisy neighbours on 127.0.0.1:{server.port} ...", flush=True)
                result = run_noisy(args, server)
            elif args.mode == "slowloris":
                print(f"slowloris on 127.0.0.1:{server.port} ...", flush=True)
                result = run_slowloris(args, server)
            elif args.mode == "paths":
                print(f"{args.noisy} attackers on {args.noisy_target}, 127.0.0.1:{server.port} ...", flush=True)
                result = run_paths(args, server)
            elif args.mode in SERVE_MODES:
                print(f"{args.mode} on 127.0.0.1:{server.port} ...", flush=True)
                result = SERVE_MODES[args.mode](args, server, services)
            else:
                print(f"gunicorn on 127.0.0.1:{server.port}, {args.clients} clients for {args.duration:g} s ...",
                      flush=True)
                run = Run(server.port, args.clients, args.duration, args.seed)
                outage = start_redis_outage(run, services, args) if args.redis_outage else None
                elapsed, killed = run.run(server, None if args.no_kill else args.duration / 2)
                if outage:
                    outage.join()
                checks = verify(server.port, run, args.database_url)
        finally:
            if server:
                server.stop()
            if services:
                services.stop()
        log = server.log_path.read_text(errors="replace")
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.with_suffix(".log").write_text(log)  # the server's log, for the tracebacks counted below
        if args.mode == "mixed":
            result = report(run, elapsed, killed, checks, args, load_before)
            if args.redis_outage:
                result["redis_outage"] = outage_report(run)
        result["load_average_before"] = [round(x, 2) for x in load_before]
        result["cpus"] = os.cpu_count()
        result["server_log_tracebacks"] = log.count("Traceback")
        result["server_5xx_in_access_log"] = len(re.findall(r'" 5\d\d ', (Path(tmp) / "access.log").read_text()
                                                            if (Path(tmp) / "access.log").exists() else ""))
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(result, indent=2))
    if args.mode != "mixed":
        print_probe_result(result)
        print(f"\n(details in {json_path})")
        return 0
    print_markdown(result)
    if args.redis_outage:
        print("redis outage:", json.dumps(result["redis_outage"]))
    checks = result["checks"]
    failed = (result["server_errors_5xx"] or not checks["shares_answered_201"] or checks["lost"]
              or checks["wrong_bytes"] or checks["wrong_settings"]
              or checks["contents_with_more_than_one_id"] or checks["ids_with_two_contents"]
              or checks["table_rows"] != checks["table_distinct_digests"])
    print("\nRESULT:", "FAIL" if failed else "PASS", f"(details in {json_path})")
    return 1 if failed else 0


def start_redis_outage(run: Run, services: Services, args) -> threading.Thread:
    def outage():
        while not run.started:
            time.sleep(0.05)
        time.sleep(args.duration / 3)
        services.stop_redis()
        run.redis_stopped_at = time.monotonic() - run.started
        time.sleep(args.duration / 3)
        services.start_redis()
        run.redis_started_at = time.monotonic() - run.started

    thread = threading.Thread(target=outage, daemon=True)
    thread.start()
    return thread


def outage_report(run: Run) -> dict:
    stopped, started = getattr(run, "redis_stopped_at", None), getattr(run, "redis_started_at", None)
    during = [s for s in run.samples if stopped is not None and started is not None and stopped <= s[3] < started]
    statuses = Counter(str(s[1]) for s in during)
    return {"stopped_at_s": stopped and round(stopped, 1), "started_at_s": started and round(started, 1),
            "requests_during": len(during), "statuses_during": dict(sorted(statuses.items())),
            "5xx_during": sum(v for k, v in statuses.items() if k.startswith("5"))}


# ---- paths: attackers on the workshop Check, compare and the workshop-share lint (issue 27 items 3-4) ----
#
#     --mode paths --noisy-target check|compare|lint [--noisy 8] [--fairness on|off]
#
# 8 clients post the worst search through another path than the API while the victim of noisy mode
# times small allocations; every path goes through the same per-client admission.

SHIPPED_LESSON = "/workshops/dra-in-90-minutes/1"


def _csrf(port, address, path) -> dict:
    _, _, headers = request(port, "GET", path, headers={"X-Forwarded-For": address})
    token = re.search(r"csrftoken=([^;]+)", headers.get("Set-Cookie") or "").group(1)
    return {"Content-Type": "application/x-www-form-urlencoded", "X-CSRFToken": token,
            "Cookie": f"csrftoken={token}", "X-Forwarded-For": address}


def _compare_link(a: str, b: str) -> str:
    import base64
    import zlib

    data = {"v": 1, "a": {"node": "", "scenario": a}, "b": {"node": "", "scenario": b}}
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    packed = packer.compress(json.dumps(data).encode()) + packer.flush()
    return base64.urlsafe_b64encode(packed).decode().rstrip("=")


def _lint_workshop(n: int, lessons: int = 4) -> str:
    """A workshop whose every lesson starts with the worst search; new content each time (no digest hit)."""
    body = "\n".join("    " + line for line in EXPLOSION.splitlines())
    parts = [f"title: Attack {n} {secrets.token_hex(4)}\nlessons:\n"]
    for i in range(lessons):
        parts.append(f"- title: Lesson {i}\n  task: t\n  scenario: |\n{body}\n  checks:\n"
                     f"  - outcome: allocated\n    message: m\n  solution: {{node: worker-1}}\n")
    return "".join(parts)


def path_attacker(port, timings, phase_of, stop, address, target):
    headers = _csrf(port, address, SHIPPED_LESSON) if target == "check" else {}
    n = 0
    while not stop.is_set():
        n += 1
        if target == "check":
            body = urllib.parse.urlencode({"scenario": EXPLOSION, "node": ""})
            timed(timings, phase_of(), "attacker: worst search (Check)", port, "POST", SHIPPED_LESSON + "/check",
                  body, headers)
        elif target == "compare":
            link = _compare_link(EXPLOSION, EXPLOSION + f"# b {n}\n")
            timed(timings, phase_of(), "attacker: worst search (compare)", port, "GET", f"/compare?c={link}",
                  None, {"X-Forwarded-For": address})
        else:
            timed(timings, phase_of(), "attacker: worst-search workshop (share lint)", port, "POST",
                  "/api/v1/workshops", _lint_workshop(n).encode(),
                  {"Content-Type": "application/yaml", "X-Forwarded-For": address}, timeout=120)


def run_paths(args, server) -> dict:
    addresses = max(1, args.noisy_addresses or args.noisy)

    def attack(timings, phase_of, stop):
        return _started(path_attacker, [(server.port, timings, phase_of, stop, f"198.18.6.{i % addresses + 1}",
                                         args.noisy_target) for i in range(args.noisy)]), {}

    timings, _ = _victim_during(args, server, attack, phase=f"with {args.noisy} on {args.noisy_target}", join=130)
    return {"mode": "paths", "target": args.noisy_target, "attackers": args.noisy, "attacker_addresses": addresses,
            "fairness": args.fairness, "timings": timings.table()}


# ---- issue 27 (serve): deep YAML, big answers, the results cache budget, the database away --------

def _started(target, argsets) -> list[threading.Thread]:
    """A daemon thread running target(*args) for each args, started."""
    threads = [threading.Thread(target=target, args=tuple(args), daemon=True) for args in argsets]
    for thread in threads:
        thread.start()
    return threads


def _victim_during(args, server, attack, *, victim=victim_loop, alone="alone", phase="under attack",
                   join=120) -> tuple[Timings, dict]:
    """Every attack mode's frame: `victim(port, timings, phase_of, stop)` (the noisy mode's visitor
    unless told) timed alone for --warmup seconds, then while `attack(timings, phase_of, stop)` runs
    the threads it returns for --duration seconds; returns the timings and what attack returned."""
    timings = Timings()
    stop = threading.Event()
    phases = {"name": alone}
    phase_of = lambda: phases["name"]  # noqa: E731
    victims = _started(victim, [(server.port, timings, phase_of, stop)])
    time.sleep(args.warmup)
    phases["name"] = phase
    threads, extra = attack(timings, phase_of, stop)
    time.sleep(args.duration)
    stop.set()
    for thread in [*victims, *threads]:
        thread.join(join)
    return timings, extra


def _deep_lesson() -> bytes:
    scenario = "[" * 100_000 + "]" * 100_000  # 200 KB: inside the 256 KiB a shared workshop may have
    return ("title: t\nsummary: s\nlessons:\n- title: one\n  text: x\n  task: y\n  checks:\n"
            "  - unchanged: [ResourceSlice]\n    message: m\n  solution:\n    node: worker-1\n"
            "  scenario: |\n    " + scenario + "\n").encode()


def run_deep_yaml(args, server, services) -> dict:
    """Issue 27 items 1, 2, 8: what segfaulted workers and what got a bare 413."""
    bodies = [
        ("workshop API: [ x 50,000", "/api/v1/workshops", b"[" * 50_000 + b"]" * 50_000),
        ("allocate API: !<a,b> [ x 100,000", "/api/v1/allocate",
         b"a: " + b"!<a,b> [" * 100_000 + b"]" * 100_000 + b"\n"),
        ("workshop API: a lesson's deep scenario", "/api/v1/workshops", _deep_lesson()),
        ("workshop API: 34 MiB", "/api/v1/workshops", b"#" * (34 * 1024 * 1024)),
    ]

    def attack(timings, phase_of, stop):
        def loop(number, op, path, body):
            address = f"198.18.6.{number + 1}"
            while not stop.is_set():
                timed(timings, phase_of(), op, server.port, "POST", path, body,
                      {"Content-Type": "application/yaml", "X-Forwarded-For": address}, timeout=60)
        return _started(loop, [(i, *bodies[i % len(bodies)]) for i in range(args.noisy)]), {}

    timings, _ = _victim_during(args, server, attack)
    log = server.log_path.read_text(errors="replace")
    return {"mode": "deep-yaml", "attackers": args.noisy, "timings": timings.table(),
            "worker_crashes_in_log": log.count("SIGSEGV") + log.count("signal 11"),
            "note": "every attack answer must be 400 (413 for the 34 MiB body, as JSON); no crash"}


def wide_claims(claims: int, devices: int = 100) -> str:
    """One-device claims over a pool of devices (in slices of 128, the most a slice holds): each
    request's explanation lists every device."""
    parts = [
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.example.com}\n"
        "spec:\n  selectors:\n  - cel: {expression: 'device.driver == \"gpu.example.com\"'}\n---\n"
        "apiVersion: v1\nkind: Node\nmetadata: {name: worker-1}\n"
    ]
    slices = max(1, -(-devices // 128))
    for n in range(slices):
        parts.append(
            f"---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {{name: worker-1-gpus-{n}}}\n"
            "spec:\n  driver: gpu.example.com\n  nodeName: worker-1\n"
            f"  pool: {{name: worker-1, generation: 1, resourceSliceCount: {slices}}}\n  devices:\n")
        parts += [f"  - name: gpu-{i}\n" for i in range(n * 128, min(devices, (n + 1) * 128))]
    parts += [f"---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {{name: c-{c}, "
              f"namespace: default}}\nspec:\n  devices:\n    requests:\n    - name: gpu\n"
              f"      exactly: {{deviceClassName: gpu.example.com}}\n" for c in range(claims)]
    return "".join(parts)


def _peak_rss_mb(server) -> float:
    peaks = []
    for pid in server.workers():
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        found = re.search(r"VmHWM:\s+(\d+) kB", status)
        if found:
            peaks.append(int(found.group(1)) / 1024)
    return round(max(peaks), 1) if peaks else 0.0


def run_big_answers(args, server, services) -> dict:
    """Issue 27 item 5: the answer against its question, three times (new text each time)."""
    answers = []
    for n in range(3):
        devices = args.answer_devices or args.answer_claims  # enough for every claim: a search that ends
        question = (wide_claims(args.answer_claims, devices) + f"# {n} {secrets.token_hex(4)}\n").encode()
        started = time.monotonic()
        status, body, _ = request(server.port, "POST", "/api/v1/allocate", question,
                                  {"Content-Type": "application/yaml", "X-Forwarded-For": f"198.18.5.{n + 1}"},
                                  timeout=120)
        seconds = time.monotonic() - started
        try:
            data = json.loads(body)
        except ValueError:
            data = {}
        answers.append({"status": status, "question_bytes": len(question), "answer_bytes": len(body),
                        "ratio": round(len(body) / len(question), 2), "seconds": round(seconds, 2),
                        "outcome": data.get("outcome"), "bounds": data.get("explanationBounds")})
    return {"mode": "big-answers", "claims": args.answer_claims, "devices": args.answer_devices or args.answer_claims,
            "answers": answers,
            "gunicorn_worker_peak_rss_mb": _peak_rss_mb(server), "timings": {}}


def _redis_used(url: str) -> int:
    import redis

    return int(redis.Redis.from_url(url).info("memory")["used_memory"])


def run_cache_budget(args, server, services) -> dict:
    """Issue 27 item 6: six clients whose every run is new and cacheable, for --duration seconds."""
    before = _redis_used(args.redis_url)
    counts = Counter()
    lock = threading.Lock()

    def attack(timings, phase_of, stop):
        def loop(number):
            address = f"198.18.4.{number + 1}"
            n = 0
            while not stop.is_set():
                n += 1
                scenario = (wide_claims(8) + f"# {number} {n} {secrets.token_hex(4)}\n").encode()  # ~160 KB cached
                status, _, _ = timed(timings, phase_of(), "cacheable new runs (API)", server.port, "POST",
                                     "/api/v1/allocate", scenario,
                                     {"Content-Type": "application/yaml", "X-Forwarded-For": address})
                with lock:
                    counts[str(status)] += 1
        return _started(loop, [(i,) for i in range(6)]), {}

    timings, _ = _victim_during(args, server, attack)
    after = _redis_used(args.redis_url)
    status, body, _ = request(server.port, "GET", "/readyz")
    return {"mode": "cache-budget", "budget_mb": args.cache_budget, "redis_added_mb": round((after - before) / 2**20, 1),
            "runs": dict(counts), "readyz": json.loads(body), "timings": timings.table()}


def run_db_down(args, server, services) -> dict:
    """Issue 27 item 7: PostgreSQL stopped from 1/3 to 2/3 of --duration under 20 share clients."""
    status, body, _ = request(server.port, "POST", "/api/v1/scenarios", b"# before the outage\n",
                              {"Content-Type": "application/yaml", "X-Forwarded-For": "198.18.3.250"})
    share_id = json.loads(body)["id"]
    samples = []  # (seconds since start, op, status, retry-after)
    lock = threading.Lock()
    events = {}

    def attack(timings, phase_of, stop):
        started = time.monotonic()

        def loop(number):
            address = f"198.18.3.{number + 1}"
            n = 0
            while not stop.is_set():
                n += 1
                for op, method, path, payload in (
                        ("read a shared link", "GET", f"/s/{share_id}", None),
                        ("read a share (API)", "GET", f"/api/v1/scenarios/{share_id}", None),
                        ("share (API)", "POST", "/api/v1/scenarios", f"# {number} {n}\n".encode())):
                    status, _, headers = timed(timings, phase_of(), op, server.port, method, path, payload,
                                               {"Content-Type": "application/yaml", "X-Forwarded-For": address})
                    with lock:
                        samples.append((time.monotonic() - started, op, status, headers.get("Retry-After")))

        def outage():
            time.sleep(args.duration / 3)
            services.stop_postgres()
            events["stopped"] = time.monotonic() - started
            time.sleep(args.duration / 3)
            services.run_postgres()
            events["started"] = time.monotonic() - started

        return _started(loop, [(i,) for i in range(20)]) + _started(outage, [()]), {}

    timings, _ = _victim_during(args, server, attack)
    stopped, started = events.get("stopped"), events.get("started")
    during = [s for s in samples if stopped is not None and started is not None and stopped <= s[0] < started]
    after = [s for s in samples if started is not None and s[0] >= started and s[2] == 200 and s[1] != "share (API)"]
    return {"mode": "db-down", "stopped_at_s": stopped and round(stopped, 1), "started_at_s": started and round(started, 1),
            "statuses_during": dict(sorted(Counter(str(s[2]) for s in during).items())),
            "503_without_retry_after": sum(1 for s in during if s[2] == 503 and not s[3]),
            "first_read_after_restart_s": round(after[0][0] - started, 2) if after else None,
            "timings": timings.table()}


SERVE_MODES = {"deep-yaml": run_deep_yaml, "big-answers": run_big_answers, "cache-budget": run_cache_budget,
               "db-down": run_db_down}


if __name__ == "__main__":
    sys.exit(main())
