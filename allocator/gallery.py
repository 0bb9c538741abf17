"""The examples gallery: scenario files in `allocator/examples/`, described by `index.yaml`."""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from allocator import run_settings
from allocator.run_settings import RunSettings

EXAMPLES_DIR = Path(__file__).resolve().parent / "examples"
DEFAULT = "simple-gpu"  # the first visit opens on an example that allocates


@dataclass(frozen=True)
class Example:
    slug: str
    title: str
    feature: str
    summary: str
    look: str
    try_this: str
    scenario: str
    node: str | None = None
    gates: dict = field(default_factory=dict)  # gate -> bool for every component
    component_overrides: dict = field(default_factory=dict)  # component -> {gate: bool}
    versions: dict = field(default_factory=dict)  # {"emulated": "X.Y", "minCompat": "X.Y"} for every component
    # Result panels the example is about, shown at once where the page would fold them ("status-writers").
    shows: tuple = ()

    def run_settings(self) -> RunSettings:
        """The example as the page opens it."""
        return run_settings.from_example(scenario=self.scenario, node=self.node, gates=self.gates,
                                         component_gates=self.component_overrides, versions=self.versions)

    def component_gates(self) -> dict:
        """{component: {gate: value}} as the page's settings hold them (the values that differ from
        the defaults)."""
        return self.run_settings().gates

    def gate_flag(self) -> str:
        """The same gates as a `--feature-gates` value (uniform gates only)."""
        return ",".join(f"{k}={str(v).lower()}" for k, v in sorted(self.gates.items()))


@functools.lru_cache(maxsize=1)
def _load() -> tuple[Example, ...]:
    index = yaml.safe_load((EXAMPLES_DIR / "index.yaml").read_text(encoding="utf-8"))
    examples = []
    for entry in index["examples"]:
        examples.append(Example(
            slug=entry["slug"],
            title=entry["title"],
            feature=entry["feature"],
            summary=entry["summary"].strip(),
            look=entry["look"].strip(),
            try_this=entry["try"].strip(),
            scenario=(EXAMPLES_DIR / f"{entry['slug']}.yaml").read_text(encoding="utf-8"),
            node=entry.get("node"),
            gates=dict(entry.get("gates") or {}),
            component_overrides={k: dict(v) for k, v in (entry.get("componentGates") or {}).items()},
            versions=dict(entry.get("versions") or {}),
            shows=tuple(entry.get("shows") or ()),
        ))
    return tuple(examples)


def all_examples() -> tuple[Example, ...]:
    return _load()


def get(slug: str) -> Example | None:
    return next((e for e in _load() if e.slug == slug), None)


def with_scenario(text: str) -> Example | None:
    """The example whose scenario this text is (line endings aside), so its notes still apply."""
    text = text.replace("\r\n", "\n")
    return next((e for e in _load() if e.scenario == text), None)
