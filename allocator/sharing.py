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

from django.conf import settings as django_settings
from django.db import IntegrityError, transaction

from allocator import safe_cache
from allocator.engine.gates import COMPONENT_KEYS, GATES, GateError, parse_version_flag
from allocator.models import SharedScenario
from allocator.runs import RunRequest
from allocator.version import VERSION

MAX_SHARE_BYTES = 256 * 1024
MAX_NODE_CHARS = 253  # a Node name is a DNS subdomain
# Longer fragment links get cut by chat tools and mail clients; such scenarios get a short link only.
MAX_FRAGMENT_CHARS = 8192
# Ids are the digest in lowercase base32; a longer prefix is taken only if a shorter one is
# already held by other content, so the first id of a content never changes.
ID_LENGTHS = (10, 16, 52)
FRAGMENT_FORMAT = 1


class ShareError(ValueError):
    """A share that is refused; `status` is the HTTP status to answer with."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.message = message
        self.status = status


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


def check_node(node) -> str:
    if node is None:
        return ""
    if not isinstance(node, str):
        raise ShareError("node must be a string")
    if len(node) > MAX_NODE_CHARS or "\x00" in node or "\n" in node:
        raise ShareError(f"node must be a node name of at most {MAX_NODE_CHARS} characters")
    return node


def check_gates(gates) -> dict:
    """Validate `{component: {gate: bool}}` as given by an API client or a fragment."""
    if gates is None:
        return {}
    if not isinstance(gates, dict):
        raise ShareError("gates must be an object: {component: {gate: true|false}}")
    clean = {}
    for component, values in gates.items():
        if component not in COMPONENT_KEYS:
            raise ShareError(f"gates: unknown component {component!r} (expected one of {', '.join(COMPONENT_KEYS)})")
        if not isinstance(values, dict):
            raise ShareError(f"gates.{component} must be an object of gate: true|false")
        for name, value in values.items():
            if name not in GATES:
                raise ShareError(f"gates.{component}: unrecognized feature gate: {name}")
            if not isinstance(value, bool):
                raise ShareError(f"gates.{component}.{name} must be true or false")
        clean[component] = dict(values)
    return clean


def check_versions(versions) -> dict:
    """`{component: {"emulated": "1.36", "minCompat": "1.36"}}` as an API client gives it."""
    if versions is None:
        return {}
    if not isinstance(versions, dict):
        raise ShareError('versions must be an object: {component: {"emulated": "X.Y", "minCompat": "X.Y"}}')
    clean = {}
    for component, values in versions.items():
        if component not in COMPONENT_KEYS:
            raise ShareError(f"versions: unknown component {component!r} (expected one of {', '.join(COMPONENT_KEYS)})")
        if not isinstance(values, dict) or set(values) - {"emulated", "minCompat"}:
            raise ShareError(f'versions.{component} must be an object with "emulated" and/or "minCompat"')
        chosen = {}
        for key, value in values.items():
            if not isinstance(value, str):
                raise ShareError(f"versions.{component}.{key} must be a version string such as \"1.36\"")
            try:
                chosen[key] = parse_version_flag(value) if value else ""
            except GateError as exc:
                raise ShareError(f"versions.{component}.{key}: {exc}") from None
        clean[component] = chosen
    return clean


def full_gates(gates: dict) -> dict:
    """A value for every gate on every component: stored this way, a link keeps its meaning
    even if a later playground changes a default."""
    out = {}
    for component in COMPONENT_KEYS:
        given = gates.get(component, {})
        out[component] = {name: bool(given.get(name, info.default)) for name, info in sorted(GATES.items())}
    return out


def changed_gates(gates: dict) -> dict:
    """Only the values that differ from the current defaults, as a RunRequest holds them."""
    out = {}
    for component in COMPONENT_KEYS:
        chosen = {
            name: value for name, value in (gates.get(component) or {}).items()
            if name in GATES and value != GATES[name].default
        }
        if chosen:
            out[component] = chosen
    return out


def canonical_content(scenario: str, node: str, gates: dict) -> bytes:
    """The bytes a share's digest is taken over; `gates` must already be full."""
    data = {"scenario": scenario, "node": node, "gates": gates}
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def share(*, scenario: str, node: str = "", gates: dict | None = None) -> tuple[SharedScenario, bool]:
    """Store a scenario with its settings, or find it stored already; returns (row, created).

    Safe under concurrency: the digest is unique, so of two identical shares racing, one
    inserts and the other reads the winner's row.
    """
    scenario = check_scenario(scenario)
    node = check_node(node)
    gates = full_gates(check_gates(gates))
    raw = hashlib.sha256(canonical_content(scenario, node, gates)).digest()
    digest = raw.hex()
    existing = SharedScenario.objects.filter(digest=digest).first()
    if existing is not None:
        return existing, False
    letters = base64.b32encode(raw).decode("ascii").rstrip("=").lower()
    for length in ID_LENGTHS:
        try:
            with transaction.atomic():
                row = SharedScenario.objects.create(
                    id=letters[:length], digest=digest, scenario=scenario, node=node, gates=gates, version=VERSION)
            return row, True
        except IntegrityError:
            existing = SharedScenario.objects.filter(digest=digest).first()
            if existing is not None:
                return existing, False
            # Other content holds this prefix: take a longer one of the same digest.
    raise ShareError("could not store the scenario", 500)


def settings_of(shared: SharedScenario) -> RunRequest:
    return RunRequest(scenario=shared.scenario, node=shared.node, gates=changed_gates(shared.gates))


def uniform_gates(gates) -> dict:
    """`--feature-gates` values (one FeatureGates) applied to every component."""
    values = dict(gates.values)
    return {component: dict(values) for component in COMPONENT_KEYS} if values else {}


# Fragment links: `#s=` + base64url(raw deflate(JSON)), the format static/playground/share.js reads.

def _deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    return packer.compress(data) + packer.flush()


def fragment(settings: RunRequest) -> str | None:
    """`s=...` for the settings, or None when the link would be too long to pass around."""
    data = {
        "v": FRAGMENT_FORMAT,
        "scenario": settings.scenario,
        "node": settings.node,
        "gates": full_gates(settings.gates),
    }
    if settings.versions:  # links without versions keep their old bytes
        data["versions"] = settings.versions
    packed = _deflate(json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    value = "s=" + base64.urlsafe_b64encode(packed).decode("ascii").rstrip("=")
    return value if len(value) <= MAX_FRAGMENT_CHARS else None


def read_fragment(value: str) -> RunRequest:
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
    return RunRequest(scenario=scenario, node=check_node(data.get("node")),
                      gates=changed_gates(check_gates(data.get("gates"))), versions=check_versions(data.get("versions")))


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
    proxies = getattr(django_settings, "PROXY_COUNT", 0)
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
    limit, window = parse_rate(getattr(django_settings, "SHARE_RATE_LIMIT", "30/600"))
    if limit <= 0:
        return None
    now = time.time()
    slot = int(now // window)
    key = f"rate:{scope}:{client_address(request)}:{slot}"
    count = safe_cache.count(key, timeout=window + 5)
    if count > limit:
        return max(1, int((slot + 1) * window - now))
    return None
