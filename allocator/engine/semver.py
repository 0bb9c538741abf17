"""Semantic versions (semver 2.0.0), as device `version` attributes use them.

Equality and ordering ignore build metadata, as semver precedence says.
"""
from __future__ import annotations

import functools

_DIGITS = frozenset("0123456789")
_ALNUM = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-")
_UINT64_MAX = (1 << 64) - 1


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
    """Strict semver 2.0.0, read as Kubernetes reads it (blang/semver), with its error messages."""
    if not text:
        raise SemverError("Version string empty")
    parts = text.split(".", 2)
    if len(parts) != 3:
        raise SemverError("No Major.Minor.Patch elements found")
    major = _number("major", parts[0])
    minor = _number("minor", parts[1])
    patch, build, pre = parts[2], (), ()
    if "+" in patch:
        patch, _, build_text = patch.partition("+")
        build = tuple(build_text.split("."))
    if "-" in patch:
        patch, _, pre_text = patch.partition("-")
        pre = tuple(pre_text.split("."))
    patch_number = _number("patch", patch)
    pre_parts = []
    for item in pre:
        if not item:
            raise SemverError("Prerelease is empty")
        if not set(item) <= _ALNUM:
            raise SemverError(f'Invalid character(s) found in prerelease "{item}"')
        if set(item) <= _DIGITS:
            if len(item) > 1 and item[0] == "0":
                raise SemverError(f'Numeric PreRelease version must not contain leading zeroes "{item}"')
            pre_parts.append(int(item))
        else:
            pre_parts.append(item)
    for item in build:
        if not item:
            raise SemverError("Build meta data is empty")
        if not set(item) <= _ALNUM:
            raise SemverError(f'Invalid character(s) found in build meta data "{item}"')
    return Version(major, minor, patch_number, tuple(pre_parts), build, text)


def _number(label: str, part: str) -> int:
    if not set(part) <= _DIGITS:
        raise SemverError(f'Invalid character(s) found in {label} number "{part}"')
    if len(part) > 1 and part[0] == "0":
        raise SemverError(f'{label.capitalize()} number must not contain leading zeroes "{part}"')
    if not part or int(part) > _UINT64_MAX:
        raise SemverError(f'strconv.ParseUint: parsing "{part}": invalid syntax')
    return int(part)


def is_semver(text: str) -> bool:
    if not isinstance(text, str):
        return False
    try:
        _parse_cached(text)
    except SemverError:
        return False
    return True
