"""The server under test for the load scripts (loadtest.py, bench_room.py): gunicorn with the
production settings on a free loopback port, a fresh PostgreSQL database, its own cache key prefix,
and a clean stop that also forgets what it put in Redis.

A script subclasses `Server` for its own settings (`settings()`) and gunicorn flags (`flags()`);
`args` must carry `database_url`, `redis` and `redis_url`, and may carry `workers`.
"""
from __future__ import annotations

import http.client
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(port, method, path, body=None, headers=None, timeout=60):
    """(status, body bytes, headers) from 127.0.0.1:port, on a new connection."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.read(), response.headers
    finally:
        connection.close()


class Server:
    prefix = "server"  # of the cache keys, so a stop deletes only this run's
    start_seconds = 180  # a busy machine starts slowly

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
        }
        if args.redis:
            self.env["REDIS_URL"] = args.redis_url
            self.env["CACHE_KEY_PREFIX"] = f"{self.prefix}-{secrets.token_hex(4)}"
        else:
            self.env.pop("REDIS_URL", None)
        self.env.update(self.settings())
        self.process = None
        self.log = None
        self.log_path = folder / "gunicorn.log"

    def settings(self) -> dict:
        """The script's own environment for the server (on top of the production settings above)."""
        return {}

    def flags(self) -> list[str]:
        """gunicorn's flags beyond the bind address and the access log."""
        workers = getattr(self.args, "workers", None)
        return ["--workers", str(workers)] if workers else []

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
        command = [str(gunicorn), "playground.wsgi", "--bind", f"127.0.0.1:{self.port}",
                   "--access-logfile", str(self.folder / "access.log"), *self.flags()]
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(command, cwd=ROOT, env=self.env, stdout=self.log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        deadline = time.monotonic() + self.start_seconds
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                if request(self.port, "GET", "/healthz", timeout=10)[0] == 200:
                    return
            except OSError:
                time.sleep(0.5)
        self.log.flush()
        tail = self.log_path.read_text(errors="replace").splitlines()[-15:]
        raise RuntimeError(f"gunicorn did not start (see {self.log_path}):\n" + "\n".join(tail))

    def workers(self) -> list[int]:
        path = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        return [int(pid) for pid in path.read_text().split()]

    def kill_one_worker(self) -> int:
        victim = self.workers()[0]
        os.kill(victim, signal.SIGKILL)
        return victim

    def cpu_seconds(self) -> float:
        """CPU time (user + system) of gunicorn and every process under it that is still running."""
        from allocator.worker import process_cpu_seconds

        total, todo = 0.0, [self.process.pid]
        while todo:
            pid = todo.pop()
            total += process_cpu_seconds(pid) or 0.0
            try:
                for task in Path(f"/proc/{pid}/task").iterdir():
                    todo += [int(child) for child in (task / "children").read_text().split()]
            except (OSError, ValueError):
                continue
        return total

    def stop(self):
        if self.process is None:
            return
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
        if self.log:
            self.log.close()
        if self.args.redis:  # the run's cached results and rate-limit counts
            import redis

            try:
                client = redis.Redis.from_url(self.args.redis_url)
                for key in client.scan_iter(f"{self.env['CACHE_KEY_PREFIX']}:*"):
                    client.delete(key)
            except redis.RedisError:
                pass
