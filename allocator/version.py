"""The playground's version: the Kubernetes release it models plus a fingerprint of the engine's code.

Two runs with the same version and the same input give the same result, so the version
keys the results cache and is recorded with every shared scenario.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

KUBERNETES = "1.37"
ENGINE_DIR = Path(__file__).resolve().parent / "engine"


def engine_fingerprint() -> str:
    digest = hashlib.sha256()
    for path in sorted(ENGINE_DIR.rglob("*.py")):
        digest.update(path.relative_to(ENGINE_DIR).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()[:12]


ENGINE = engine_fingerprint()
VERSION = f"k8s-{KUBERNETES}+{ENGINE}"
