"""The playground's version: the Kubernetes release it models plus a fingerprint of the engine's code.

Two runs with the same version and the same input give the same result, so the version
keys the results cache and is recorded with every shared scenario.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

KUBERNETES = "1.37"
ENGINE_DIR = Path(__file__).resolve().parent / "engine"


# What a run's answer depends on: the engine's code and the tables it reads (the gate table,
# the bootstrap roles).
FINGERPRINTED = ("*.py", "*.json")


def engine_fingerprint(root: Path = ENGINE_DIR) -> str:
    digest = hashlib.sha256()
    paths = {path for pattern in FINGERPRINTED for path in root.rglob(pattern) if "__pycache__" not in path.parts}
    for path in sorted(paths):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()[:12]


ENGINE = engine_fingerprint()
VERSION = f"k8s-{KUBERNETES}+{ENGINE}"
