"""The golden JSON of every gallery example: `manage.py allocate --explain -o json` as a user runs it,
and `POST /api/v1/allocate` with the example's own settings (per-component gates included).

Recorded once before the explanation became typed, so its keys and values are pinned; run this file
again only when a change of output is meant (`.venv/bin/python tests/golden/record.py`), and say why
in the commit. Only what is random between runs is normalised: the shareID of a shared device.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "examples"
SHARE_ID = re.compile(r'"shareID": "[0-9a-f-]{36}"')


def normalise(text: str) -> str:
    """A shareID is a fresh UUID on every run; everything else is compared as printed."""
    return SHARE_ID.sub('"shareID": "<uuid>"', text)


def cli_args(example) -> list[str]:
    args = [str(ROOT / "allocator" / "examples" / f"{example.slug}.yaml"), "--explain", "-o", "json"]
    if example.node:
        args += ["--node", example.node]
    if example.gates:
        args += ["--feature-gates", example.gate_flag()]
    return args


def run_cli(example) -> tuple[int, str]:
    proc = subprocess.run([sys.executable, "manage.py", "allocate", *cli_args(example)], cwd=ROOT,
                          capture_output=True, timeout=120)
    return proc.returncode, normalise(proc.stdout.decode("utf-8"))


def api_body(example) -> bytes:
    return json.dumps({"scenario": example.scenario, "node": example.node or "",
                       "gates": example.component_gates()}).encode()


def api_text(response) -> str:
    """The API's answer printed as the CLI prints its JSON, so the two goldens read alike."""
    return normalise(json.dumps(json.loads(response.content), indent=2, ensure_ascii=False) + "\n")


def main() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "playground.settings")
    import django

    django.setup()
    from django.test import Client

    from allocator import gallery

    GOLDEN.mkdir(exist_ok=True)
    client = Client()
    for example in gallery.all_examples():
        code, text = run_cli(example)
        (GOLDEN / f"{example.slug}.cli.json").write_text(text, encoding="utf-8")
        response = client.post("/api/v1/allocate", api_body(example), content_type="application/json",
                               HTTP_HOST="localhost")
        (GOLDEN / f"{example.slug}.api.json").write_text(api_text(response), encoding="utf-8")
        print(f"{example.slug}: exit {code}, API {response.status_code}")


if __name__ == "__main__":
    main()
