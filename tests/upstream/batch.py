"""One oracle process in batch mode: one JSON line in, one JSON line out, for thousands of inputs."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path


class BatchProcess:
    """Starts `binary --batch`; `request()` sends one JSON object and reads the answer line."""

    name = "the oracle"  # for the message when the process dies

    def __init__(self, binary: Path, *, quiet: bool = False):
        self.binary = binary
        self.proc = subprocess.Popen([str(binary), "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL if quiet else None, text=True, bufsize=1)

    def request(self, data: dict) -> dict:
        self.proc.stdin.write(json.dumps(data) + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        if not answer:
            raise RuntimeError(f"{self.name} exited (status {self.proc.poll()})")
        return json.loads(answer)

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
