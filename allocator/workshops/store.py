"""Sharing a workshop: stored content-addressed like a shared scenario (same size limit, same ids),
and only when it lints clean."""
from __future__ import annotations

import base64
import hashlib

from django.db import IntegrityError, transaction

from allocator.models import SharedWorkshop
from allocator.sharing import ID_LENGTHS, MAX_SHARE_BYTES, ShareError
from allocator.version import VERSION
from allocator.workshops.lint import lint
from allocator.workshops.playground import MAX_LINT_TRIALS, run_in_worker




class WorkshopRefused(ShareError):
    """A workshop that does not lint: 400 with the located problems."""

    def __init__(self, problems):
        super().__init__(f"the workshop has {len(problems)} problem(s); fix them and share again", 400)
        self.problems = problems


def check_text(text) -> str:
    if not isinstance(text, str):
        raise ShareError("workshop must be a string of YAML")
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_SHARE_BYTES:
        raise ShareError(f"The workshop is {size:,} bytes; shared workshops are limited to {MAX_SHARE_BYTES:,} "
                         f"bytes (256 KiB).", 413)
    if not text.strip():
        raise ShareError("workshop is empty: there is nothing to share")
    if "\x00" in text:
        raise ShareError("workshop contains a NUL character")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ShareError("workshop is not valid UTF-8 text") from None
    return text


def share_workshop(text: str, *, run=run_in_worker) -> tuple[SharedWorkshop, bool]:
    """Lint, then store (or find stored) the workshop; returns (row, created)."""
    text = check_text(text).replace("\r\n", "\n")
    raw = hashlib.sha256(text.encode("utf-8")).digest()
    digest = raw.hex()
    existing = SharedWorkshop.objects.filter(digest=digest).first()
    if existing is not None:
        return existing, False
    workshop, problems = lint(text, run=run, max_trials=MAX_LINT_TRIALS)
    if problems or workshop is None:
        raise WorkshopRefused(problems)
    letters = base64.b32encode(raw).decode("ascii").rstrip("=").lower()
    for length in ID_LENGTHS:
        try:
            with transaction.atomic():
                row = SharedWorkshop.objects.create(id=letters[:length], digest=digest, text=text,
                                                    title=workshop.title[:200], version=VERSION)
            return row, True
        except IntegrityError:
            existing = SharedWorkshop.objects.filter(digest=digest).first()
            if existing is not None:
                return existing, False
    raise ShareError("could not store the workshop", 500)
