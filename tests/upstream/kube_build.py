"""Build the Kubernetes oracles of `tests/kube/` (one Go module on k8s.io/kubernetes v1.37.2).

Every oracle there is a main package under `tests/kube/cmd/`; they are built together, by one
`go build` under one lock, into the gitignored `tests/kube/.build/`. Built one by one from two
test workers, the same Kubernetes packages would be compiled twice at once; together they are
compiled once, and an oracle asked for later finds its binary up to date.
"""
from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

KUBE_DIR = Path(__file__).resolve().parent.parent / "kube"
BUILD_DIR = Path(os.environ.get("DRA_KUBE_BUILD_DIR", KUBE_DIR / ".build"))


class KubeBuildError(Exception):
    """Go is not installed, or the oracles do not build (the message says which)."""


def _oracles() -> list[str]:
    return sorted(p.name for p in (KUBE_DIR / "cmd").iterdir() if any(p.glob("*.go")))


def _newest_source() -> float:
    sources = [p for p in KUBE_DIR.rglob("*.go") if BUILD_DIR not in p.parents]
    return max(p.stat().st_mtime for p in [*sources, KUBE_DIR / "go.mod", KUBE_DIR / "go.sum"])


def build(name: str) -> Path:
    """The binary of oracle `name`, building every oracle first unless all are up to date."""
    go = shutil.which("go")
    if go is None:
        raise KubeBuildError("Go is not installed: the Kubernetes oracles need `go` on PATH")
    BUILD_DIR.mkdir(parents=True, exist_ok=True)
    with open(BUILD_DIR / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        newest = _newest_source()
        binaries = [BUILD_DIR / oracle for oracle in _oracles()]
        if not all(b.exists() and b.stat().st_mtime >= newest for b in binaries):
            env = dict(os.environ, GOFLAGS="-mod=readonly", CGO_ENABLED="0")
            proc = subprocess.run([go, "build", "-trimpath", "-o", str(BUILD_DIR) + os.sep, "./cmd/..."],
                                  cwd=KUBE_DIR, env=env, capture_output=True, text=True)
            if proc.returncode != 0:
                raise KubeBuildError(f"the Kubernetes oracles in tests/kube do not build:\n{proc.stderr[-4000:]}")
            for binary in binaries:  # go build leaves an unchanged binary's time alone
                binary.touch()
    return BUILD_DIR / name
