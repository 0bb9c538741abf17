"""The workshops that ship with the playground: one file each in `allocator/workshops/shipped/`.

A file's name without `.yaml` is its slug, dots included (`intro.v2.yaml` is `intro.v2`), except that
a last part which is a language code of a file beside it (`dra-in-90-minutes.ko.yaml` next to
`dra-in-90-minutes.yaml`) makes it that workshop's text in that language (translations.py), not a
workshop of its own.
"""
from __future__ import annotations

import functools
import re
from pathlib import Path

from allocator.workshops.model import Workshop, parse_workshop
from allocator.workshops.translations import parse_translation, translate

SHIPPED_DIR = Path(__file__).resolve().parent / "shipped"
LANGUAGE = re.compile(r"[a-z]{2,3}(-[a-z0-9]{2,8})*")  # ko, pt-br, zh-hans


def split_name(stem: str, stems: set) -> tuple[str, str]:
    """(slug, language) of a file stem; language "" for the English source."""
    base, dot, last = stem.rpartition(".")
    if dot and LANGUAGE.fullmatch(last) and base in stems:
        return base, last
    return stem, ""


def _files(directory: Path) -> dict:
    """slug -> {language: path}, "" being the English source."""
    paths = sorted(directory.glob("*.yaml"))
    stems = {p.name[:-len(".yaml")] for p in paths}
    out: dict = {}
    for path in paths:
        slug, language = split_name(path.name[:-len(".yaml")], stems)
        out.setdefault(slug, {})[language] = path
    return out


def shipped_files() -> list[Path]:
    """The English source of every shipped workshop."""
    return [languages[""] for languages in _files(SHIPPED_DIR).values() if "" in languages]


def translation_files() -> list[Path]:
    return [path for languages in _files(SHIPPED_DIR).values() for lang, path in languages.items() if lang]


@functools.cache
def shipped() -> dict[str, Workshop]:
    """slug -> workshop, in file name order. A shipped workshop always parses: the test suite lints every one."""
    out = {}
    for slug, languages in _files(SHIPPED_DIR).items():
        path = languages.get("")
        if path is None:
            continue
        workshop, problems = parse_workshop(path.read_text(encoding="utf-8"))
        if workshop is None or problems:
            raise ValueError(f"{path.name}: {problems[0].render(path.name)}")
        out[slug] = workshop
    return out


@functools.cache
def _translated(slug: str, language: str) -> Workshop | None:
    path = _files(SHIPPED_DIR).get(slug, {}).get(language)
    workshop = shipped().get(slug)
    if path is None or workshop is None:
        return None
    translation, problems = parse_translation(path.read_text(encoding="utf-8"), workshop)
    if translation is None or problems:
        raise ValueError(f"{path.name}: {problems[0].render(path.name)}")
    return translate(workshop, translation)


def languages(slug: str) -> list[str]:
    return sorted(lang for lang in _files(SHIPPED_DIR).get(slug, {}) if lang)


def get(slug: str, language: str = "") -> Workshop | None:
    """The workshop, in `language` where a translation has it (English otherwise). A slug that ends
    in a language suffix (`dra-in-90-minutes.ko`) asks for that language."""
    if slug not in shipped():
        base, suffix = split_name(slug, set(shipped()))
        if not suffix:
            return None
        slug, language = base, suffix
    language = (language or "").lower()
    if language and language not in ("en",):
        translated = _translated(slug, language) or _translated(slug, language.split("-")[0])
        if translated is not None:
            return translated
    return shipped().get(slug)


def source_text(slug: str) -> str | None:
    """The workshop file as shipped (English), for "download as YAML"."""
    files = _files(SHIPPED_DIR)
    if slug not in files:
        slug = split_name(slug, set(files))[0]  # dra-in-90-minutes.ko downloads the source of record
    path = files.get(slug, {}).get("")
    return path.read_text(encoding="utf-8") if path is not None else None


def clear() -> None:
    """Forget what was read (tests that point SHIPPED_DIR elsewhere)."""
    shipped.cache_clear()
    _translated.cache_clear()
