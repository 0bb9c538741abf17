"""Problems found in a scenario: each names the object, the field and the source line."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

ERROR = "error"
WARNING = "warning"
DROPPED_ON_CREATE = "dropped-on-create"  # a field the apiserver drops because its gate is off
UNKNOWN_NODE = "unknown-node"  # the node asked for is named nowhere in the scenario
IGNORED_KIND = "ignored-kind"  # an object of a kind the playground does not read
POOL_ORDER = "pool-order"  # the stable allocator's answer depends on Go map order
GATES_REFUSED = "gates-refused"  # a component would not start with these gates and versions


def field_path(path: tuple) -> str:
    """('spec', 'devices', 0, 'name') -> 'spec.devices[0].name' (Kubernetes field-path style)."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif out:
            out += "." + str(part)
        else:
            out = str(part)
    return out


@dataclass(frozen=True)
class Problem:
    """One thing wrong (or worth a warning) in the input.

    `kind` and `name` identify the object ("ResourceClaim", "default/claim-0"),
    `path` is the field inside it as a tuple of keys and indexes, `line` and
    `column` are 1-based source positions when known.
    """

    message: str
    kind: str = ""
    name: str = ""
    path: tuple = ()
    line: int | None = None
    column: int | None = None
    severity: str = ERROR
    code: str = ""  # a stable kind of problem, for readers that treat some kinds apart
    # Position of the object in the input stream, used to look up lines.
    ref: tuple | None = field(default=None, compare=False)

    @property
    def field(self) -> str:
        return field_path(self.path)

    def with_location(self, line: int | None, column: int | None = None) -> "Problem":
        return replace(self, line=line, column=column)

    def render(self) -> str:
        parts = []
        if self.kind or self.name:
            parts.append(f"{self.kind} {self.name}".strip())
        if self.path:
            parts.append(self.field)
        where = ": ".join(parts)
        text = f"{where}: {self.message}" if where else self.message
        if self.line is not None and f"(line {self.line}" not in text:
            text += f" (line {self.line})"
        return text

    def as_dict(self) -> dict:
        return {
            "severity": self.severity,
            "kind": self.kind,
            "name": self.name,
            "field": self.field,
            "line": self.line,
            "column": self.column,
            "message": self.message,
            **({"code": self.code} if self.code else {}),
        }
