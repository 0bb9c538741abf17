"""Semantic versions (semver 2.0.0), as device `version` attributes use them.

Equality and ordering ignore build metadata, as semver precedence says.
"""
from __future__ import annotations

import functools
import re

# The official semver 2.0.0 pattern.
_SEMVER = re.compile(
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?\Z"
)


class SemverError(ValueError):
    pass


@functools.total_ordering
class Version:
    __slots__ = ("major", "minor", "patch", "pre", "build", "text")

    def __init__(self, major: int, minor: int, patch: int, pre: tuple = (), build: tuple = (), text: str = ""):
        self.major, self.minor, self.patch = major, minor, patch
        self.pre, self.build = pre, build
        self.text = text or self._format()

    @staticmethod
    def parse(text: str) -> "Version":
        if not isinstance(text, str):
            raise SemverError("version must be a string")
        return _parse_cached(text)

    def _format(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            text += "-" + ".".join(str(p) for p in self.pre)
        if self.build:
            text += "+" + ".".join(self.build)
        return text

    def _key(self):
        # A release sorts after every pre-release of the same version; numeric
        # identifiers sort before alphanumeric ones.
        pre = tuple((0, p, "") if isinstance(p, int) else (1, 0, p) for p in self.pre)
        return (self.major, self.minor, self.patch, 0 if self.pre else 1, pre)

    def compare(self, other: "Version") -> int:
        a, b = self._key(), other._key()
        return (a > b) - (a < b)

    def __eq__(self, other):
        return isinstance(other, Version) and self._key() == other._key()

    def __lt__(self, other):
        return self._key() < other._key()

    def __hash__(self):
        return hash(self._key())

    def __str__(self):
        return self.text

    def __repr__(self):
        return f"Version({self.text!r})"


@functools.lru_cache(maxsize=4096)
def _parse_cached(text: str) -> Version:
    match = _SEMVER.match(text)
    if not match:
        raise SemverError(f"Invalid semver: {text!r}" if text else "Version string empty")
    major, minor, patch, pre, build = match.groups()
    pre_parts = tuple(int(p) if p.isdigit() else p for p in pre.split(".")) if pre else ()
    build_parts = tuple(build.split(".")) if build else ()
    return Version(int(major), int(minor), int(patch), pre_parts, build_parts, text)


def is_semver(text: str) -> bool:
    return isinstance(text, str) and bool(_SEMVER.match(text))
