"""CEL selector expressions compared with Kubernetes' DRA CEL environment (through the oracle).

Each expression becomes the only request selector of a claim, evaluated on one device; the outcome
tells the value: allocated (true), unsatisfiable (false), invalid (compile or runtime error).
"""
from __future__ import annotations

from pathlib import Path

import yaml

DRIVER = "gpu.example.com"
D = f'device.attributes["{DRIVER}"]'
C = f'device.capacity["{DRIVER}"]'

# Written for this corpus: every library of the Kubernetes CEL environment, with and without errors.
HANDWRITTEN = [
    # standard and strings
    f'{D}.model == "h100"', f'{D}.model.startsWith("h")', f'{D}.model.matches("^h[0-9]+$")',
    f'{D}.model.size() == 4', f'{D}.model + "x" == "h100x"', f'{D}.model.contains("10")',
    f'{D}.model.upperAscii() == "H100"', f'{D}.model.charAt(0) == "h"', f'{D}.model.indexOf("1") == 1',
    f'{D}.model.replace("1", "2") == "h200"', f'{D}.model.split("1").size() == 2', f'{D}.model.substring(1) == "100"',
    '" x ".trim() == "x"', '["a", "b"].join("-") == "a-b"', '"%s-%d".format(["a", 1]) == "a-1"',
    f'{D}.model.lastIndexOf("0") == 3', '"abc".reverse() == "cba"', 'strings.quote("a") == "\\"a\\""',
    # numbers, lists, maps, macros
    f'{D}.index + 1 == 3', f'{D}.index / 0 == 1', f'{D}.index % 2 == 0', f'{D}.index * 2 > 3',
    f'[1, 2, 3].exists(x, x == {D}.index)', '[1, 2, 3].all(x, x > 0)', '[1, 2, 3].exists_one(x, x > 2)',
    '[1, 2, 3].map(x, x * 2)[1] == 4', '[1, 2, 3].filter(x, x > 1).size() == 2', f'{D}.index in [1, 2]',
    '[3, 1, 2].sort() == [1, 2, 3]', '[1, 2, 3].sum() == 6', '[1, 2, 3].min() == 1', '[1, 2].max() == 2',
    '[1, 2, 3].isSorted()', '[1, 2, 3].indexOf(2) == 1', '[1, 2, 2].lastIndexOf(2) == 2',
    '[1, [2, 3]].flatten().size() == 3', '[1, 2, 3].slice(1, 2) == [2]', 'lists.range(3).size() == 3',
    '[1, 2, 3].distinct().size() == 3', '[1, 2].reverse() == [2, 1]',
    'sets.contains([1, 2, 3], [1])', 'sets.intersects([1], [1, 2])', 'sets.equivalent([1, 2], [2, 1])',
    '{"a": 1}.a == 1', '{"a": 1}.exists(k, k == "a")', '{"a": 1}.all(k, v, v == 1)',
    '[1, 2].all(i, v, v > i)', '[1, 2].transformList(i, v, v * 2) == [2, 4]',
    f'cel.bind(m, {D}.model, m == "h100")', 'math.greatest(1, 2) == 2', 'math.least([3, 1]) == 1',
    'math.abs(-1) == 1', 'math.ceil(1.2) == 2.0', 'math.bitOr(1, 2) == 3', 'math.isNaN(0.0 / 0.0)',
    'math.sqrt(4) == 2.0', 'int("12") == 12', 'double("1.5") > 1.0', 'string(12) == "12"', 'uint(1) == 1u',
    f'type({D}.index) == int', f'dyn({D}.index) == 2', 'bytes("a") == b"a"', 'base64.encode(b"a") == "YQ=="',
    # optional
    f'{D}.?model.orValue("") == "h100"', f'{D}.?missing.orValue("none") == "none"',
    f'{D}.?missing.hasValue()', 'optional.of(1).value() == 1', 'optional.none().orValue(2) == 2',
    # errors
    f'{D}.missing == "x"', f'{D}.model == 1', f'{D}.index == "2"', 'nosuchfunction(1)', f'{D}.model.', '1 + ',
    f'{D}.index', '"x"', f'{D}.model.size() > 100000000000000000000',
    # quantity
    f'{C}.memory.compareTo(quantity("8Gi")) > 0', f'{C}.memory.isGreaterThan(quantity("8Gi"))',
    f'{C}.memory.add(quantity("1Gi")).compareTo(quantity("17Gi")) == 0', f'{C}.memory.sub(1).sign() == 1',
    f'{C}.memory.isInteger()', f'{C}.memory.asInteger() > 0', f'{C}.memory.asApproximateFloat() > 1.0',
    'isQuantity("1Gi")', 'quantity("1Gi") == quantity("1024Mi")', 'quantity("x") == quantity("1")',
    f'{C}.memory < quantity("1Gi")',
    # semver
    f'{D}.driverVersion.isGreaterThan(semver("1.0.0"))', f'{D}.driverVersion.major() == 1',
    f'{D}.driverVersion.compareTo(semver("1.2.0")) == 0', 'isSemver("1.2")', 'isSemver("v1.2", true)',
    'semver("1.2", true).minor() == 2', 'semver("nope") == semver("1.0.0")', f'{D}.driverVersion == semver("1.2.0+b1")',
    # ip, cidr, url, format, regex
    f'isIP({D}.ip)', f'ip({D}.ip).family() == 4', f'ip({D}.ip).isLoopback()', 'ip("::1").isLoopback()',
    f'cidr({D}.net).containsIP(ip({D}.ip))', f'cidr({D}.net).containsIP({D}.ip)', 'cidr("10.0.0.0/8").prefixLength() == 8',
    f'isCIDR({D}.net)', f'cidr({D}.net).ip() == ip("10.0.0.0")', 'ip.isCanonical("10.0.0.5")',
    f'cidr({D}.net).masked() == cidr("10.0.0.0/24")', 'ip("300.1.1.1") == ip("1.1.1.1")',
    f'url({D}.url).getHost() == "example.com"', f'isURL({D}.url)', f'url({D}.url).getScheme() == "https"',
    f'url({D}.url).getEscapedPath() == "/x"', 'url("https://a/b?c=d").getQuery()["c"][0] == "d"',
    f'{D}.model.find("[0-9]+") == "100"', f'{D}.model.findAll("[0-9]").size() == 3',
    '"%.2f".format([1.5]) == "1.50"', '"%x".format([255]) == "ff"',
    # time
    f'timestamp({D}.ts) > timestamp("2020-01-01T00:00:00Z")', f'duration({D}.dur) == duration("1m30s")',
    f'timestamp({D}.ts).getFullYear() == 2026', f'timestamp({D}.ts) + duration("1h") > timestamp({D}.ts)',
    'duration("1h").getMinutes() == 60', 'timestamp("bad") > timestamp("2020-01-01T00:00:00Z")',
    # DRA specifics
    'device.driver == "gpu.example.com"', 'device.allowMultipleAllocations == false',
    'device.attributes["other.example.com"].size() == 0', f'{D}.links.includes("x")', f'{D}.index.includes(2)',
    f'{D}.links.size() == 2', f'{D}.links[0] == "x"', f'"model" in {D}', f'has({D}.model)',
    f'device.capacity["{DRIVER}"].size() == 1', 'device.attributes.size() >= 1',
]


# Derived attribute values: scalars and lists are accepted, anything else is not.
DERIVED = [
    f"{D}.index % 2", f"{D}.model", f"{D}.healthy", f"{D}.driverVersion", f"{D}.links", f"[{D}.index]",
    f"{D}.index > 1", f"double({D}.index)", f"{{'a': 1}}", f"[[1]]", f"{C}.memory", "[semver('1.0.0')]",
    f"{D}.?model", "null", f"ip({D}.ip)", f"{D}.model.split('1')",
]


def realworld_expressions(*folders: Path) -> list[str]:
    """Every CEL selector written in the shared cases and real-world manifests."""
    found = set()
    for folder in folders:
        if folder is None or not folder.is_dir():
            continue
        for path in folder.rglob("*.yaml"):
            try:
                documents = list(yaml.safe_load_all(path.read_text()))
            except (yaml.YAMLError, UnicodeDecodeError):
                continue
            stack = list(documents)
            while stack:
                item = stack.pop()
                if isinstance(item, dict):
                    cel = item.get("cel")
                    if isinstance(cel, dict) and isinstance(cel.get("expression"), str):
                        found.add(cel["expression"])
                    stack.extend(item.values())
                elif isinstance(item, list):
                    stack.extend(item)
    return sorted(found)


def scenario(expression: str) -> str:
    objects = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
         "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
         "spec": {"driver": DRIVER, "nodeName": "node-1", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
                  "devices": [{"name": "gpu-0", "attributes": {
                      "model": {"string": "h100"}, "index": {"int": 2}, "healthy": {"bool": True},
                      "driverVersion": {"version": "1.2.0+b1"}, "ip": {"string": "10.0.0.5"},
                      "net": {"string": "10.0.0.0/24"}, "url": {"string": "https://example.com/x"},
                      "ts": {"string": "2026-01-02T03:04:05Z"}, "dur": {"string": "90s"},
                      "links": {"strings": ["x", "y"]}},
                      "capacity": {"memory": {"value": "16Gi"}}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "default"},
         "spec": {"devices": {"requests": [{"name": "r", "exactly": {
             "deviceClassName": "gpu", "selectors": [{"cel": {"expression": expression}}]}}]}}},
    ]
    return yaml.safe_dump_all(objects, sort_keys=False)


VALUE = {"allocated": "true", "unsatisfiable": "false", "invalid": "error"}
