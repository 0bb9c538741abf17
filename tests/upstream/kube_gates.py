"""Kubernetes' own feature-gate library as an oracle: `tests/kube/cmd/gates`, built once, driven in batch.

Without Go the tests that need it skip; the committed `gates.json` is still what the engine reads.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from tests.upstream import kube_build

KUBE_DIR = Path(__file__).resolve().parents[1] / "kube"
BUILD_DIR = KUBE_DIR / ".build"
BINARY = BUILD_DIR / "gates"


class Unavailable(Exception):
    pass


def build() -> Path:
    go = shutil.which("go")
    if go is None:
        raise Unavailable("Go is not installed: the feature-gate comparison with Kubernetes is skipped")
    try:
        return kube_build.build("gates")  # every oracle of tests/kube at once
    except kube_build.KubeBuildError as exc:
        raise Unavailable(str(exc)) from None


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
