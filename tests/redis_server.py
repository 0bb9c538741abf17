"""A throwaway redis-server on a free loopback port, for tests that need a real Redis (and
can stop it to see the app survive the outage). Skips when the binary is not installed."""
import os
import shutil
import socket
import subprocess
import time

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    def __init__(self, tmp_path):
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.tmp_path = tmp_path
        self.process = None

    def start(self):
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        self.process = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.tmp_path)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        pytest.fail("redis-server did not start")

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(5)


def redis_binary() -> bool:
    return bool(shutil.which("redis-server")) or os.path.exists("/usr/bin/redis-server")


@pytest.fixture
def redis_server(tmp_path):
    if not redis_binary():
        pytest.skip("redis-server is not installed")
    server = RedisServer(tmp_path).start()
    yield server
    server.stop()


def redis_cache_settings(url: str, prefix: str = "dra-test") -> dict:
    from playground.settings import CACHES_OPTIONS_REDIS

    return {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url,
                        "KEY_PREFIX": prefix, "OPTIONS": dict(CACHES_OPTIONS_REDIS)}}
