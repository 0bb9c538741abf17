"""The Kubernetes IP and CIDR CEL libraries: `ip()`, `cidr()` and their members.

Parsing follows Go's net/netip as Kubernetes uses it: dotted IPv4 without
leading zeros, IPv6 in any standard form, no zones and no IPv4-mapped IPv6
addresses. String forms are the canonical ones (RFC 5952 for IPv6).
"""
from __future__ import annotations

from .errors import EvalError
from .library import declare, extend, no_overload, typed

STRINGS = (str,)


def _ipaddress():
    """The ipaddress module, imported for the first address an expression reads."""
    import ipaddress

    return ipaddress


class IP:
    """A CEL `net.IP` value."""

    __slots__ = ("addr",)
    cel_type_name = "net.IP"

    def __init__(self, addr):
        self.addr = addr

    def __eq__(self, other):
        return isinstance(other, IP) and other.addr == self.addr

    def __hash__(self):
        return hash(("ip", self.addr))

    def __str__(self):
        return str(self.addr)


class CIDR:
    """A CEL `net.CIDR` value: the address as written and the prefix length."""

    __slots__ = ("addr", "bits")
    cel_type_name = "net.CIDR"

    def __init__(self, addr, bits: int):
        self.addr = addr
        self.bits = bits

    def __eq__(self, other):
        return isinstance(other, CIDR) and (other.addr, other.bits) == (self.addr, self.bits)

    def __hash__(self):
        return hash(("cidr", self.addr, self.bits))

    def __str__(self):
        return f"{self.addr}/{self.bits}"

    def network(self):
        return _ipaddress().ip_network(f"{self.addr}/{self.bits}", strict=False)


def parse_addr(text: str):
    """An address as Kubernetes' CEL accepts it, or EvalError."""
    if "%" in text:
        raise EvalError(f"IP Address {text!r} parse error during conversion from string: "
                        "IP address with zone value is not allowed")
    try:
        addr = _ipaddress().ip_address(text)
    except ValueError:
        raise EvalError(f"IP Address {text!r} parse error during conversion from string: "
                        f"ParseAddr({text!r}): unable to parse IP") from None
    if addr.version == 6 and addr.ipv4_mapped is not None:
        raise EvalError(f"IP Address {text!r} parse error during conversion from string: "
                        "IPv4-mapped IPv6 address is not allowed")
    return addr


def parse_prefix(text: str) -> CIDR:
    address, slash, bits = text.partition("/")
    problem = None
    if not slash:
        problem = "no '/'"
    elif not bits.isdigit() or (len(bits) > 1 and bits[0] == "0"):
        problem = "bad bits after slash"
    if problem is None:
        try:
            addr = parse_addr(address)
        except EvalError:
            problem = "unable to parse IP"
        else:
            width = 32 if addr.version == 4 else 128
            if int(bits) > width:
                problem = "prefix length out of range"
            else:
                return CIDR(addr, int(bits))
    raise EvalError(f"network address {text!r} parse error during conversion from string: "
                    f"netip.ParsePrefix({text!r}): {problem}")


def _ip(text):
    return IP(parse_addr(text))


def _is_ip(text):
    try:
        parse_addr(text)
    except EvalError:
        return False
    return True


def _is_canonical(text):
    return str(parse_addr(text)) == text


def _family(ip):
    return ip.addr.version


def _is_unspecified(ip):
    return ip.addr.is_unspecified


def _is_loopback(ip):
    return ip.addr.is_loopback


def _is_link_local_multicast(ip):
    a = ip.addr
    if a.version == 4:
        return a in _ipaddress().ip_network("224.0.0.0/24")
    return (int(a) >> 112) & 0xFF0F == 0xFF02


def _is_link_local_unicast(ip):
    a = ip.addr
    if a.version == 4:
        return a in _ipaddress().ip_network("169.254.0.0/16")
    return a in _ipaddress().ip_network("fe80::/10")


def _is_global_unicast(ip):
    # Go's definition: every unicast address that is not loopback, link-local or unspecified
    # (private ranges included).
    a = ip.addr
    if a.version == 4 and a == _ipaddress().IPv4Address("255.255.255.255"):
        return False
    return not (a.is_unspecified or a.is_loopback or a.is_multicast or _is_link_local_unicast(ip))


def _cidr(text):
    return parse_prefix(text)


def _is_cidr(text):
    try:
        parse_prefix(text)
    except EvalError:
        return False
    return True


def _contains_ip(cidr, other):
    addr = other.addr if isinstance(other, IP) else parse_addr(other) if isinstance(other, str) else None
    if addr is None:
        raise no_overload("containsIP", cidr, other)
    return addr.version == cidr.addr.version and addr in cidr.network()


def _contains_cidr(cidr, other):
    if isinstance(other, str):
        other = parse_prefix(other)
    if not isinstance(other, CIDR):
        raise no_overload("containsCIDR", cidr, other)
    if other.addr.version != cidr.addr.version or other.bits < cidr.bits:
        return False
    return other.addr in cidr.network()


def _cidr_ip(cidr):
    return IP(cidr.addr)


def _masked(cidr):
    return CIDR(cidr.network().network_address, cidr.bits)


def _prefix_length(cidr):
    return cidr.bits


def _member(function, impl, kind):
    def call(value, *rest):
        if not isinstance(value, kind):
            raise no_overload(function, value, *rest)
        return impl(value, *rest)
    return call


declare("ip", ("string_to_ip", "(string) -> IP"), impl=typed("ip", _ip, STRINGS))
declare("isIP", ("is_ip", "(string) -> bool"), impl=typed("isIP", _is_ip, STRINGS))
declare("ip.isCanonical", ("ip_is_canonical", "(string) -> bool"), impl=typed("ip.isCanonical", _is_canonical, STRINGS))
declare("family", ("ip_family", "IP.() -> int"), impl=_member("family", _family, IP))
declare("isUnspecified", ("ip_is_unspecified", "IP.() -> bool"), impl=_member("isUnspecified", _is_unspecified, IP))
declare("isLoopback", ("ip_is_loopback", "IP.() -> bool"), impl=_member("isLoopback", _is_loopback, IP))
declare("isLinkLocalMulticast", ("ip_is_link_local_multicast", "IP.() -> bool"),
        impl=_member("isLinkLocalMulticast", _is_link_local_multicast, IP))
declare("isLinkLocalUnicast", ("ip_is_link_local_unicast", "IP.() -> bool"),
        impl=_member("isLinkLocalUnicast", _is_link_local_unicast, IP))
declare("isGlobalUnicast", ("ip_is_global_unicast", "IP.() -> bool"),
        impl=_member("isGlobalUnicast", _is_global_unicast, IP))

declare("cidr", ("string_to_cidr", "(string) -> CIDR"), impl=typed("cidr", _cidr, STRINGS))
declare("isCIDR", ("is_cidr", "(string) -> bool"), impl=typed("isCIDR", _is_cidr, STRINGS))
declare("containsIP", ("cidr_contains_ip_string", "CIDR.(string) -> bool"),
        ("cidr_contains_ip_ip", "CIDR.(IP) -> bool"), impl=_member("containsIP", _contains_ip, CIDR))
declare("containsCIDR", ("cidr_contains_cidr_string", "CIDR.(string) -> bool"),
        ("cidr_contains_cidr", "CIDR.(CIDR) -> bool"), impl=_member("containsCIDR", _contains_cidr, CIDR))
declare("masked", ("cidr_masked", "CIDR.() -> CIDR"), impl=_member("masked", _masked, CIDR))
declare("prefixLength", ("cidr_prefix_length", "CIDR.() -> int"), impl=_member("prefixLength", _prefix_length, CIDR))
# `ip` is also a member of CIDR: the address as written.
extend("ip", ("cidr_ip", "CIDR.() -> IP"), handles=lambda *args: isinstance(args[0], CIDR), impl=_cidr_ip)
extend("string", ("ip_to_string", "(IP) -> string"), ("cidr_to_string", "(CIDR) -> string"),
       handles=lambda value: isinstance(value, (IP, CIDR)), impl=str)
