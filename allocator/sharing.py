"""Sharing scenarios: content-addressed short links, stateless URL fragments and a per-client rate limit.

A short link is the scenario stored with its settings under an id taken from their digest:
the same content always gets the same link, changed content a new one, and a stored row is
never rewritten. A fragment link (`/#s=...`) carries the same content compressed in the URL
and needs no server store at all.
"""
from __future__ import annotations

import base64
import hashlib
import ipaddress
import json
import time
import zlib

from django.conf import settings
from django.db import IntegrityError, transaction

from allocator import run_settings, safe_cache
from allocator.models import SharedScenario
from allocator.run_settings import RunSettings, SettingsError
from allocator.version import VERSION

MAX_SHARE_BYTES = 256 * 1024
# Longer fragment links get cut by chat tools and mail clients; such scenarios get a short link only.
MAX_FRAGMENT_CHARS = 8192
# Ids are the digest in lowercase base32; a longer prefix is taken only if a shorter one is
# already held by other content, so the first id of a content never changes.
ID_LENGTHS = (10, 16, 52)
FRAGMENT_FORMAT = 1


class ShareError(SettingsError):
    """A share (or a link) that is refused; `status` is the HTTP status to answer with. Settings a
    link holds are checked by run_settings, whose SettingsError a link reader raises as this."""


def too_large_message(size: int | str) -> str:
    size_text = f"{size:,} bytes" if isinstance(size, int) else size
    return (f"The scenario is {size_text}; shared scenarios are limited to {MAX_SHARE_BYTES:,} bytes "
            f"(256 KiB). Remove objects the allocation does not need, or keep it in a file.")


def load_json(text: str, what: str):
    """json.loads for client input: nesting deeper than Python's recursion limit is a refusal, not a crash."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ShareError(f"{what} is nested too deeply") from None


def check_scenario(text) -> str:
    if not isinstance(text, str):
        raise ShareError("scenario must be a string of YAML or JSON")
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise ShareError("scenario is not valid UTF-8 text") from None
    if size > MAX_SHARE_BYTES:
        raise ShareError(too_large_message(size), 413)
    if not text.strip():
        raise ShareError("scenario is empty: there is nothing to share")
    # YAML forbids NUL, and PostgreSQL cannot store it in text.
    if "\x00" in text:
        raise ShareError("scenario contains a NUL character")
    return text


def canonical_content(scenario: str, link_data: dict) -> bytes:
    """The bytes a share's digest is taken over: the scenario and `RunSettings.link_data()` (which
    names versions only when chosen, so shares without them keep their digests)."""
    data = {"scenario": scenario, **link_data}
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def share(run: RunSettings) -> tuple[SharedScenario, bool]:
    """Store a scenario with its settings, or find it stored already; returns (row, created).

    Safe under concurrency: the digest is unique, so of two identical shares racing, one
    inserts and the other reads the winner's row.
    """
    scenario = check_scenario(run.scenario)
    link = run.link_data()
    node, gates, versions = link["node"], link["gates"], link.get("versions", {})
    raw = hashlib.sha256(canonical_content(scenario, link)).digest()
    digest = raw.hex()
    existing = SharedScenario.objects.filter(digest=digest).first()
    if existing is not None:
        return existing, False
    letters = base64.b32encode(raw).decode("ascii").rstrip("=").lower()
    for length in ID_LENGTHS:
        try:
            with transaction.atomic():
                row = SharedScenario.objects.create(
                    id=letters[:length], digest=digest, scenario=scenario, node=node, gates=gates,
                    versions=versions, each_claim_alone=run.each_claim_alone, version=VERSION)
            return row, True
        except IntegrityError:
            existing = SharedScenario.objects.filter(digest=digest).first()
            if existing is not None:
                return existing, False
            # Other content holds this prefix: take a longer one of the same digest.
    raise ShareError("could not store the scenario", 500)


def settings_of(shared: SharedScenario) -> RunSettings:
    return run_settings.from_share_row(shared)


# Fragment links: `#s=` + base64url(raw deflate(JSON)), the format static/playground/share.js reads.

def _deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    return packer.compress(data) + packer.flush()


def fragment(run: RunSettings) -> str | None:
    """`s=...` for the run's settings, or None when the link would be too long to pass around."""
    data = {"v": FRAGMENT_FORMAT, "scenario": run.scenario, **run.link_data()}
    packed = _deflate(json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    value = "s=" + base64.urlsafe_b64encode(packed).decode("ascii").rstrip("=")
    return value if len(value) <= MAX_FRAGMENT_CHARS else None


def read_fragment(value: str) -> RunSettings:
    """The inverse of `fragment` (the browser does this in share.js; kept here for tests and tools)."""
    if value.startswith("#"):
        value = value[1:]
    if not value.startswith("s="):
        raise ShareError("not a scenario fragment (expected #s=...)")
    encoded = value[2:]
    try:
        packed = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
        unpacker = zlib.decompressobj(-15)
        text = unpacker.decompress(packed, MAX_SHARE_BYTES * 4)
        if unpacker.unconsumed_tail:
            raise ShareError("fragment expands to more than a shared scenario may hold", 413)
        data = load_json(text.decode("utf-8"), "fragment")
    except (ValueError, zlib.error) as exc:
        if isinstance(exc, ShareError):
            raise
        raise ShareError(f"fragment does not decode: {exc}") from None
    if not isinstance(data, dict) or data.get("v") != FRAGMENT_FORMAT:
        raise ShareError("fragment has an unknown format")
    scenario = check_scenario(data.get("scenario"))
    try:
        return run_settings.from_link(scenario, node=data.get("node"), gates=data.get("gates"),
                                        versions=data.get("versions"), each_claim_alone=data.get("eachClaimAlone"))
    except SettingsError as exc:
        raise ShareError(f"fragment: {exc.message}") from None


# Rate limit: a fixed window per client address, counted in the cache. With REDIS_URL every
# app server shares one count; with the local-memory cache (or while Redis is down) each
# process counts on its own.

def parse_rate(text: str) -> tuple[int, int]:
    """"30/600" -> (30, 600): at most 30 in 600 seconds. "0/..." switches the limit off."""
    count, _, seconds = text.partition("/")
    return int(count), int(seconds or 60)


def client_address(request) -> str:
    """The client's address; behind PROXY_COUNT trusted proxies, taken from X-Forwarded-For.

    IPv6 clients are counted per /64, since one host usually holds a whole /64.
    """
    address = request.META.get("REMOTE_ADDR", "") or "unknown"
    proxies = getattr(settings, "PROXY_COUNT", 0)
    if proxies:
        forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
        if len(forwarded) >= proxies:
            address = forwarded[-proxies]
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address[:64]
    if ip.version == 6:
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def rate_limited(request, *, scope: str = "share") -> int | None:
    """Count one attempt; None if allowed, else the seconds until the window ends."""
    limit, window = parse_rate(getattr(settings, "SHARE_RATE_LIMIT", "30/600"))
    if limit <= 0:
        return None
    now = time.time()
    slot = int(now // window)
    key = f"rate:{scope}:{client_address(request)}:{slot}"
    count = safe_cache.count(key, timeout=window + 5)
    if count > limit:
        return max(1, int((slot + 1) * window - now))
    return None
