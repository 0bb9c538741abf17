"""Kubernetes' own feature-gate library as an oracle: `tests/kube/cmd/gates`, built once, driven in batch.

Without Go the tests that need it skip; the committed `gates.json` is still what the engine reads.
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from pathlib import Path

KUBE_DIR = Path(__file__).resolve().parents[1] / "kube"
BUILD_DIR = KUBE_DIR / ".build"
BINARY = BUILD_DIR / "gates"


class Unavailable(Exception):
    pass


def _sources() -> list[Path]:
    return [KUBE_DIR / "go.mod", KUBE_DIR / "go.sum", *sorted((KUBE_DIR / "cmd" / "gates").glob("*.go"))]


def build() -> Path:
    go = shutil.which("go")
    if go is None:
        raise Unavailable("Go is not installed: the feature-gate comparison with Kubernetes is skipped")
    BUILD_DIR.mkdir(parents=True, exist_ok=True)
    with open(BUILD_DIR / ".gates.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        newest = max(p.stat().st_mtime for p in _sources())
        if BINARY.exists() and BINARY.stat().st_mtime >= newest:
            return BINARY
        env = dict(os.environ, GOFLAGS="-mod=readonly", CGO_ENABLED="0")
        proc = subprocess.run([go, "build", "-trimpath", "-o", str(BINARY), "./cmd/gates"], cwd=KUBE_DIR, env=env,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise Unavailable(f"tests/kube/cmd/gates does not build:\n{proc.stderr[-4000:]}")
    return BINARY


def table() -> str:
    """The gate data file as the generator prints it today."""
    return subprocess.run([str(build())], capture_output=True, text=True, check=True).stdout


class GateOracle:
    """One `gates --batch` process: flags in, the scheduler's start-up errors or gate values out."""

    def __init__(self):
        self.proc = subprocess.Popen([str(build()), "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def ask(self, flags: list[str]) -> dict:
        self.proc.stdin.write(json.dumps({"flags": flags}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the gate oracle exited (status {self.proc.poll()})")
        return json.loads(line)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=10)
