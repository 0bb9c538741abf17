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
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import secrets
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

class Server:
    def __init__(self, args, folder: Path):
        self.args = args
        self.folder = folder
        self.port = free_port()
        self.env = {
            **{k: v for k, v in os.environ.items() if k not in ("DJANGO_ALLOW_ASYNC_UNSAFE", "DEBUG")},
            "DJANGO_SETTINGS_MODULE": "playground.settings",
            "DJANGO_PRODUCTION": "1",
            "SECRET_KEY": secrets.token_urlsafe(50),
            "HTTPS": "0",
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "DATABASE_URL": args.database_url,
            "STATIC_ROOT": str(folder / "static"),
            "PROXY_COUNT": "1",
            "SHARE_RATE_LIMIT": args.rate_limit,
            "ALLOCATOR_WORKERS": "1",
        }
        if args.redis:
            self.env["REDIS_URL"] = args.redis_url
            self.env["CACHE_KEY_PREFIX"] = f"loadtest-{secrets.token_hex(4)}"
        else:
            self.env.pop("REDIS_URL", None)
        self.process = None
        self.log_path = folder / "gunicorn.log"

    def prepare_database(self):
        import psycopg

        url = urllib.parse.urlsplit(self.args.database_url)
        name = url.path.lstrip("/")
        admin = urllib.parse.urlunsplit(url._replace(path="/postgres"))
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            connection.execute(f'CREATE DATABASE "{name}"')
        for command in (["migrate", "--noinput", "-v", "0"], ["collectstatic", "--noinput", "-v", "0"]):
            subprocess.run([sys.executable, "manage.py", *command], cwd=ROOT, env=self.env, check=True)

    def start(self):
        gunicorn = Path(sys.executable).parent / "gunicorn"
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(
            [str(gunicorn), "playground.wsgi", "--workers", str(self.args.workers),
             "--bind", f"127.0.0.1:{self.port}", "--timeout", "30", "--graceful-timeout", "10",
             "--access-logfile", str(self.folder / "access.log")],
            cwd=ROOT, env=self.env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if request(self.port, "GET", "/healthz")[0] == 200:
                    return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"gunicorn did not start; see {self.log_path}")

    def workers(self) -> list[int]:
        path = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        return [int(pid) for pid in path.read_text().split()]

    def kill_one_worker(self) -> int:
        victim = self.workers()[0]
        os.kill(victim, signal.SIGKILL)
        return victim

    def stop(self):
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
        if getattr(self, "log", None):
            self.log.close()
        if self.args.redis:  # the run's cached results and rate-limit counts
            import redis

            client = redis.Redis.from_url(self.args.redis_url)
            for key in client.scan_iter(f"{self.env['CACHE_KEY_PREFIX']}:*"):
                client.delete(key)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(port, method, path, body=None, headers=None, timeout=60):
    """(status, body bytes, headers) from 127.0.0.1:port."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.read(), response.headers
    finally:
        connection.close()


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
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--duration", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=4, help="gunicorn workers")
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/dra_playground_load")
    parser.add_argument("--redis", action="store_true", help="share the cache through Redis (REDIS_URL)")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--rate-limit", default="30/600", help="SHARE_RATE_LIMIT for the server (per address)")
    parser.add_argument("--no-kill", action="store_true", help="do not kill a worker halfway")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", default=str(ROOT / "test-artifacts" / "loadtest.json"))
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="dra-loadtest-") as tmp:
        server = Server(args, Path(tmp))
        print(f"preparing {args.database_url} and static files ...", flush=True)
        server.prepare_database()
        server.start()
        try:
            print(f"gunicorn on 127.0.0.1:{server.port}, {args.clients} clients for {args.duration:g} s ...",
                  flush=True)
            run = Run(server.port, args.clients, args.duration, args.seed)
            load_before = os.getloadavg()
            elapsed, killed = run.run(server, None if args.no_kill else args.duration / 2)
            checks = verify(server.port, run, args.database_url)
        finally:
            server.stop()
        log = server.log_path.read_text(errors="replace")
        result = report(run, elapsed, killed, checks, args, load_before)
        result["server_log_tracebacks"] = log.count("Traceback")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(result, indent=2))
    print_markdown(result)
    checks = result["checks"]
    failed = (result["server_errors_5xx"] or not checks["shares_answered_201"] or checks["lost"]
              or checks["wrong_bytes"] or checks["wrong_settings"]
              or checks["contents_with_more_than_one_id"] or checks["ids_with_two_contents"]
              or checks["table_rows"] != checks["table_distinct_digests"])
    print("\nRESULT:", "FAIL" if failed else "PASS", f"(details in {args.json})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
