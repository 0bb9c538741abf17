"""The IP/CIDR, URL and timestamp/duration CEL libraries of the Kubernetes environment.

Every expression here was also checked against Kubernetes' own DRA CEL package
(tests/upstream/test_cel_upstream.py runs the same kind of corpus through it).
"""
import pytest

from allocator.engine.cel import CelCompileError, CelRuntimeError, DeviceInput, Options, compile_selector

STORED = Options(stored=True, list_type_attributes=True)
DEVICE = DeviceInput(driver="d", attributes={"d": {"ip": "10.0.0.5", "net": "10.0.0.0/24",
                                                   "url": "https://example.com:8443/x?a=1&a=2",
                                                   "ts": "2026-01-02T03:04:05Z"}},
                     capacity={}, allow_multiple_allocations=False)
A = 'device.attributes["d"]'

TRUE = [
    f"isIP({A}.ip)", f"ip({A}.ip).family() == 4", '!ip("10.0.0.5").isLoopback()', 'ip("::1").isLoopback()',
    'ip("::").isUnspecified()', 'ip("fe80::1").isLinkLocalUnicast()', 'ip("ff02::1").isLinkLocalMulticast()',
    'ip("10.1.2.3").isGlobalUnicast()', '!isIP("010.0.0.1")', '!isIP("::ffff:1.2.3.4")', '!isIP("fe80::1%eth0")',
    'ip.isCanonical("2001:db8::1")', '!ip.isCanonical("2001:DB8::1")', 'string(ip("2001:db8:0:0::1")) == "2001:db8::1"',
    f"cidr({A}.net).containsIP(ip({A}.ip))", f"cidr({A}.net).containsIP({A}.ip)", '!cidr("10.0.0.0/24").containsIP("::1")',
    'cidr("10.0.0.0/8").containsCIDR("10.1.0.0/16")', '!cidr("10.1.0.0/16").containsCIDR(cidr("10.0.0.0/8"))',
    'cidr("10.0.0.7/24").ip() == ip("10.0.0.7")', 'cidr("10.0.0.7/24").masked() == cidr("10.0.0.0/24")',
    'cidr("10.0.0.0/8").prefixLength() == 8', 'string(cidr("10.0.0.7/24")) == "10.0.0.7/24"', '!isCIDR("10.0.0.0/33")',
    f"url({A}.url).getScheme() == 'https'", f"url({A}.url).getHost() == 'example.com:8443'",
    f"url({A}.url).getHostname() == 'example.com'", f"url({A}.url).getPort() == '8443'",
    f"url({A}.url).getEscapedPath() == '/x'", f"url({A}.url).getQuery()['a'] == ['1', '2']",
    'url("https://[::1]:80/").getHostname() == "::1"', 'isURL("/just/a/path")', '!isURL("no scheme")',
    f"timestamp({A}.ts) > timestamp('2020-01-01T00:00:00Z')", f"timestamp({A}.ts).getFullYear() == 2026",
    f"timestamp({A}.ts).getMonth() == 0", f"timestamp({A}.ts).getDate() == 2", f"timestamp({A}.ts).getDayOfWeek() == 5",
    f"timestamp({A}.ts).getHours('+01:00') == 4", f"timestamp({A}.ts) + duration('1h') > timestamp({A}.ts)",
    f"timestamp({A}.ts) - timestamp('2026-01-02T03:04:04Z') == duration('1s')", "duration('1h30m').getMinutes() == 90",
    "duration('90s') == duration('1m30s')", "string(duration('1m30s')) == '90s'", "int(timestamp('1970-01-01T00:01:00Z')) == 60",
    "string(timestamp('2026-01-02T03:04:05.5+01:00')) == '2026-01-02T03:04:05.5+01:00'", "duration('-1.5h') < duration('0')",
]


@pytest.mark.parametrize("expression", TRUE)
def test_expression_is_true(expression):
    assert compile_selector(expression, STORED).evaluate(DEVICE) is True


@pytest.mark.parametrize("expression", ['ip("300.1.1.1") == ip("1.1.1.1")', 'cidr("x") == cidr("10.0.0.0/8")',
                                        'url("no scheme").getHost() == ""', f'duration({A}.ts) > duration("1s")'])
def test_bad_input_is_a_runtime_error(expression):
    with pytest.raises(CelRuntimeError):
        compile_selector(expression, STORED).evaluate(DEVICE)


@pytest.mark.parametrize("expression", ['timestamp("bad") > timestamp("2020-01-01T00:00:00Z")',
                                        'duration("1x") > duration("1s")'])
def test_a_literal_that_does_not_parse_is_a_compile_error(expression):
    with pytest.raises(CelCompileError, match="invalid (timestamp|duration) argument"):
        compile_selector(expression, STORED)
