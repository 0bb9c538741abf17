"""Reading a workshop file: YAML turned into plain values, with the line of every field kept.

Workshop files are shared by instructors over the network, so this reader refuses what a
workshop never needs: aliases (no alias bombs), tags, and very deep nesting.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import yaml

from allocator.engine import yamlguard

MAX_DEPTH = 40
MAX_BYTES = 4 * 1024 * 1024  # a workshop file, shipped or shared (shares are limited to 256 KiB before this)

try:
    _Loader = yaml.CSafeLoader
except AttributeError:  # PyYAML built without libyaml
    _Loader = yaml.SafeLoader


@dataclass
class Located:
    """The values of a YAML document and the 1-based line of each path in it."""

    data: object
    lines: dict = field(default_factory=dict)  # path tuple -> line

    def line(self, path: tuple) -> int | None:
        """The line of `path`, or of its nearest parent that has one."""
        path = tuple(path)
        while True:
            if path in self.lines:
                return self.lines[path]
            if not path:
                return None
            path = path[:-1]


class SourceError(ValueError):
    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.message = message
        self.line = line


def read_located(text: str) -> Located:
    refused = yamlguard.refusal(text, max_depth=MAX_DEPTH, max_bytes=MAX_BYTES, what="the workshop file", exact=True)
    if refused is not None:  # measured on the event stream, before the composer recurses
        raise SourceError(refused.message, refused.line)
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise SourceError(f"not valid YAML: {exc.problem or exc}", mark.line + 1 if mark else None) from None
    except yaml.YAMLError as exc:
        raise SourceError(f"not valid YAML: {exc}") from None
    if node is None:
        raise SourceError("the workshop file is empty", 1)
    lines: dict = {}
    data = _convert(node, (), lines, set(), 0)
    return Located(data, lines)


def _convert(node, path: tuple, lines: dict, seen: set, depth: int):
    line = node.start_mark.line + 1
    if id(node) in seen:
        raise SourceError("YAML aliases (*name) are not allowed in a workshop file", line)
    if depth > MAX_DEPTH:
        raise SourceError(f"nested deeper than {MAX_DEPTH} levels", line)
    seen.add(id(node))
    lines[path] = line
    if isinstance(node, yaml.MappingNode):
        out = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise SourceError("a mapping key must be a plain string", key_node.start_mark.line + 1)
            key = key_node.value
            if key == "<<":
                raise SourceError("YAML merge keys (<<) are not allowed in a workshop file", key_node.start_mark.line + 1)
            if key in out:
                raise SourceError(f"duplicate key {key!r}", key_node.start_mark.line + 1)
            out[key] = _convert(value_node, path + (key,), lines, seen, depth + 1)
            lines[path + (key,)] = key_node.start_mark.line + 1
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_convert(item, path + (i,), lines, seen, depth + 1) for i, item in enumerate(node.value)]
    return _scalar(node, line)


_CONSTRUCTOR = yaml.SafeLoader("")


def _scalar(node, line: int):
    if node.tag not in ("tag:yaml.org,2002:str", "tag:yaml.org,2002:int", "tag:yaml.org,2002:bool",
                        "tag:yaml.org,2002:null", "tag:yaml.org,2002:float"):
        raise SourceError(f"unsupported YAML tag {node.tag}", line)
    return _CONSTRUCTOR.construct_object(node)
