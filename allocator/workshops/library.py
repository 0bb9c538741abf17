"""The workshops that ship with the playground: one file each in `allocator/workshops/shipped/`."""
from __future__ import annotations

import functools
from pathlib import Path

from allocator.workshops.model import Workshop, parse_workshop

SHIPPED_DIR = Path(__file__).resolve().parent / "shipped"


def shipped_files() -> list[Path]:
    return sorted(SHIPPED_DIR.glob("*.yaml"))


@functools.cache
def shipped() -> dict[str, Workshop]:
    """slug (the file name) -> workshop, in file name order. A shipped workshop always parses:
    the test suite lints every one."""
    out = {}
    for path in shipped_files():
        workshop, problems = parse_workshop(path.read_text(encoding="utf-8"))
        if workshop is None or problems:
            raise ValueError(f"{path.name}: {problems[0].render(path.name)}")
        out[path.stem] = workshop
    return out


def get(slug: str) -> Workshop | None:
    return shipped().get(slug)
