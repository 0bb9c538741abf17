"""The Kubernetes URL CEL library: `url()`, `isURL()` and the URL members.

A URL is read as Go's url.ParseRequestURI reads it: an absolute URI
(`scheme:...`) or an absolute path (`/...`).
"""
from __future__ import annotations

import re

from .errors import EvalError
from .library import declare, no_overload, typed

STRINGS = (str,)
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*\Z")
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")



def _parse():
    """urllib.parse, imported for the first URL an expression reads."""
    import urllib.parse

    return urllib.parse

class URL:
    """A CEL `kubernetes.URL` value."""

    __slots__ = ("text", "scheme", "host", "path", "raw_path", "query", "opaque")
    cel_type_name = "kubernetes.URL"

    def __init__(self, text, scheme, host, raw_path, query, opaque):
        self.text = text
        self.scheme = scheme
        self.host = host
        self.raw_path = raw_path
        self.path = _parse().unquote(raw_path)
        self.query = query
        self.opaque = opaque

    def __eq__(self, other):
        return isinstance(other, URL) and other.text == self.text

    def __hash__(self):
        return hash(("url", self.text))

    def __str__(self):
        return self.text


def parse_url(text: str) -> URL:
    def fail(problem):
        return EvalError(f"URL parse error during conversion from string: parse {text!r}: {problem}")

    if not text:
        raise fail("empty url")
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
        raise fail("net/url: invalid control character in URL")
    rest, _, query = text.partition("?")
    scheme = ""
    if not rest.startswith("/"):
        head, colon, tail = rest.partition(":")
        if not colon or not head:
            raise fail("invalid URI for request")
        if not _SCHEME.match(head):
            raise fail("first path segment in URL cannot contain colon")
        scheme, rest = head.lower(), tail
    host, opaque = "", ""
    if scheme and rest.startswith("//"):
        authority, slash, path = rest[2:].partition("/")
        rest = slash + path
        host = authority.rpartition("@")[2]
        if _BAD_ESCAPE.search(host):
            raise fail(f"invalid URL escape {host!r}")
    elif scheme and not rest.startswith("/"):
        opaque, rest = rest, ""
    if _BAD_ESCAPE.search(rest):
        bad = _BAD_ESCAPE.search(rest).start()
        raise fail(f"invalid URL escape {rest[bad:bad + 3]!r}")
    return URL(text, scheme, host, rest, query, opaque)


def _url(text):
    return parse_url(text)


def _is_url(text):
    try:
        parse_url(text)
    except EvalError:
        return False
    return True


def _split_host(host: str) -> tuple[str, str]:
    if host.startswith("["):
        end = host.find("]")
        if end >= 0:
            port = host[end + 1:]
            return host[1:end], port[1:] if port.startswith(":") else ""
    name, colon, port = host.rpartition(":")
    if colon and port.isdigit():
        return name, port
    return host, ""


def _get_query(u: URL) -> dict:
    out: dict = {}
    for part in u.query.split("&"):
        if not part or ";" in part:
            continue
        key, _, value = part.partition("=")
        try:
            key = _parse().unquote(key.replace("+", " "), errors="strict")
            value = _parse().unquote(value.replace("+", " "), errors="strict")
        except UnicodeDecodeError:
            continue
        if _BAD_ESCAPE.search(part):
            continue
        out.setdefault(key, []).append(value)
    return out


def _escaped_path(u: URL) -> str:
    # Go keeps the path as written when that is a valid encoding of it, else escapes it.
    if _parse().quote(u.path, safe="/!$&'()*+,;=:@~") == u.raw_path or _parse().unquote(u.raw_path) == u.path:
        return u.raw_path
    return _parse().quote(u.path, safe="/")


def _member(function, impl):
    def call(value, *rest):
        if not isinstance(value, URL):
            raise no_overload(function, value, *rest)
        return impl(value, *rest)
    return call


declare("url", ("string_to_url", "(string) -> URL"), impl=typed("url", _url, STRINGS))
declare("isURL", ("is_url_string", "(string) -> bool"), impl=typed("isURL", _is_url, STRINGS))
declare("getScheme", ("url_get_scheme", "URL.() -> string"), impl=_member("getScheme", lambda u: u.scheme))
declare("getHost", ("url_get_host", "URL.() -> string"), impl=_member("getHost", lambda u: u.host))
declare("getHostname", ("url_get_hostname", "URL.() -> string"),
        impl=_member("getHostname", lambda u: _split_host(u.host)[0]))
declare("getPort", ("url_get_port", "URL.() -> string"), impl=_member("getPort", lambda u: _split_host(u.host)[1]))
declare("getEscapedPath", ("url_get_escaped_path", "URL.() -> string"), impl=_member("getEscapedPath", _escaped_path))
declare("getQuery", ("url_get_query", "URL.() -> map(string, list(string))"), impl=_member("getQuery", _get_query))
