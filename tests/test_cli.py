"""`manage.py allocate` as a user runs it: exit codes, output formats and hostile input."""
import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import CONFORMANCE_DIR

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "allocator" / "examples"


def allocate(*args, stdin: bytes | None = None, timeout: float = 60):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(
        [sys.executable, "manage.py", "allocate", *args],
        cwd=ROOT, input=stdin, capture_output=True, timeout=timeout,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # The command's own CPU time: on a loaded machine its wall time says more of the load than of it.
    proc.cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    out = proc.stdout.decode("utf-8", "replace")
    err = proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in out + err, out + err
    return proc, out


def test_allocated_scenario_exits_zero_with_the_contract_json():
    proc, out = allocate(str(EXAMPLES / "simple-gpu.yaml"), "-o", "json")
    data = json.loads(out)
    assert proc.returncode == 0
    assert data["outcome"] == "allocated" and data["node"] == "worker-1"
    claim = data["claims"][0]
    assert claim["metadata"] == {"name": "single-gpu", "namespace": "default"}
    assert claim["status"]["allocation"]["devices"]["results"] == [
        {"request": "gpu", "driver": "gpu.example.com", "pool": "worker-1", "device": "gpu-1"}]


def test_unsatisfiable_exits_one_and_yaml_output_parses():
    proc, out = allocate(str(EXAMPLES / "partitionable-devices.yaml"), "-o", "yaml")
    data = yaml.safe_load(out)
    assert proc.returncode == 1
    assert data["outcome"] == "unsatisfiable"
    assert data["message"] == "0/1 nodes are available: 1 cannot allocate all claims."


def test_human_report_explains_each_device():
    proc, out = allocate(str(EXAMPLES / "partitionable-devices.yaml"))
    assert proc.returncode == 1
    assert ("counter memory in set gpu-0 needs 6Gi, 2Gi left after claim default/inference, request gpu "
            "took 6Gi on gpu-0-part-a") in out
    assert ("request gpu of claim default/training needs 1 device; gpu-0-part-b would fit alone but counter memory"
            in out)


def test_stdin_and_feature_gates_are_read():
    text = (EXAMPLES / "compatibility-groups.yaml").read_bytes()
    proc, out = allocate("-", "-o", "json", "--feature-gates", "DRADeviceCompatibilityGroups=true", stdin=text)
    assert proc.returncode == 0
    proc, out = allocate("-", "-o", "json", stdin=text)
    assert proc.returncode == 1


def test_bad_feature_gate_is_invalid_input():
    proc, out = allocate(str(EXAMPLES / "simple-gpu.yaml"), "-o", "json", "--feature-gates", "Bogus=true")
    assert proc.returncode == 2
    assert "unrecognized feature gate: Bogus" in json.loads(out)["message"]


FRACTIONAL = b"""\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: cls}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: d.example.com
  nodeName: node-1
  pool: {name: p, resourceSliceCount: 1}
  devices:
  - name: dev
    allowMultipleAllocations: true
    capacity:
      cores: {value: "4", requestPolicy: {default: "250m", validRange: {min: "250m", step: "250m"}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c}
spec:
  devices:
    requests:
    - name: r
      exactly: {deviceClassName: cls, capacity: {requests: {cores: 600m}}}
"""


def _consumed(out):
    return json.loads(out)["claims"][0]["status"]["allocation"]["devices"]["results"][0]["consumedCapacity"]


def test_fractional_capacity_range_follows_the_min_compatibility_version():
    # kube-scheduler 1.37.2 without flags has min compatibility 1.36: DRAFractionalCapacityRange is off.
    proc, out = allocate("-", "-o", "json", stdin=FRACTIONAL)
    assert proc.returncode == 0 and _consumed(out) == {"cores": "1"}
    proc, out = allocate("-", "-o", "json", "--min-compatibility-version", "1.37", stdin=FRACTIONAL)
    assert proc.returncode == 0 and _consumed(out) == {"cores": "750m"}


def test_a_gate_set_the_scheduler_refuses_is_exit_2_with_its_start_up_error():
    proc, out = allocate("-", "-o", "json", "--feature-gates", "DRAPrioritizedList=false", stdin=FRACTIONAL)
    assert proc.returncode == 2
    data = json.loads(out)
    assert data["message"] == ("kube-scheduler would not start: cannot set feature gate DRAPrioritizedList to "
                               "false, feature is locked to true")
    assert data["problems"][0]["field"] == "featureGates.DRAPrioritizedList"
    assert data["warnings"] == []


def test_an_emulated_version_gives_that_versions_gates():
    args = ("-", "-o", "json", "--feature-gates", "DRAPrioritizedList=false")
    proc, _ = allocate(*args, "--emulated-version", "1.36", "--min-compatibility-version", "1.36", stdin=FRACTIONAL)
    assert proc.returncode == 0
    proc, out = allocate(*args, "--emulated-version", "1.33", stdin=FRACTIONAL)
    assert proc.returncode == 2
    assert json.loads(out)["message"] == ("kube-scheduler would not start: [emulation version 1.33 is not between "
                                          "[1.34, 1.37.0], minCompatibilityVersion version 1.34 is not between "
                                          "[1.34, 1.33]]")
    proc, out = allocate("-", "-o", "json", "--emulated-version", "1.36.1", stdin=FRACTIONAL)
    assert proc.returncode == 2
    assert json.loads(out)["message"] == "--emulated-version: patch version not allowed, got: kube=1.36.1"


def test_missing_file_is_a_clear_error():
    proc, out = allocate("/nonexistent/scenario.yaml")
    assert proc.returncode == 2
    assert "cannot read /nonexistent/scenario.yaml" in out


@pytest.mark.parametrize("name", ["simple", "invalid-CEL-one-device", "duplicate-slice"])
def test_conformance_cases_through_the_real_command(name):
    if CONFORMANCE_DIR is None:
        pytest.skip("conformance cases not found")
    case = yaml.safe_load((CONFORMANCE_DIR / name / "case.yaml").read_text())
    args = [str(CONFORMANCE_DIR / name / "scenario.yaml"), "-o", "json", "--node", case["node"]]
    gates = ",".join(f"{k}={str(v).lower()}" for k, v in case["featureGates"].items())
    proc, out = allocate(*args, "--feature-gates", gates)
    assert json.loads(out)["outcome"] == case["expect"]["outcome"]
    assert proc.returncode == {"allocated": 0, "unsatisfiable": 1, "invalid": 2}[case["expect"]["outcome"]]


CLASS = 'apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\nspec:\n  selectors:\n  - cel: {expression: %s}\n'
SLICE = ("---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n  driver: d.example.com\n"
         "  nodeName: n1\n  pool: {name: p, resourceSliceCount: 1}\n  devices:\n%s")
CLAIM = ("---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\nspec:\n  devices:\n"
         "    requests:\n    - name: r\n      exactly: {deviceClassName: gpu, count: %d}\n")


def scenario(expression='device.driver == "d.example.com"', devices=1, count=1, attrs=""):
    listed = "".join(f"  - name: d{i}\n{attrs}" for i in range(devices))
    return (CLASS % json.dumps(expression) + SLICE % listed + CLAIM % count).encode()


HOSTILE = {
    "malformed yaml": (b"apiVersion: v1\nkind: Node\nmetadata: {name: [\n", 2, "line"),
    "scalar for object": (b"apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\nspec: 5\n", 2,
                          "spec"),
    "wrong type": (scenario().replace(b"count: 1", b"count: many"), 2, "count"),
    "invalid name": (scenario().replace(b"{name: c}", b"{name: Bad_Name}"), 2, "metadata.name"),
    "bad quantity": (scenario(attrs="    capacity: {memory: {value: 1 Gi}}\n"), 2, "quantities must match"),
    # PreFilter: the pod waits for the class (exit 1, the scheduler's message).
    "unknown class": (scenario().replace(b"deviceClassName: gpu", b"deviceClassName: nope"), 1, "does not exist"),
    "cel syntax": (scenario("device.driver == "), 2, "selectors[0].cel.expression"),
    "cel type": (scenario("device.driver == 1"), 2, "found no matching overload"),
    "cel forever": (scenario("[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10]"
                             ".all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, "
                             "[1,2,3,4,5,6,7,8,9,10].all(f, a+b+c+d+e+f >= 0))))))"), 2, "cost limit"),
    "catastrophic regex": (scenario('"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!".matches("^(a+)+$") || true'), 0, ""),
    "alias bomb": (b"a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
                   b"d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
                   b"f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
                   b"h: [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n", 2, "alias"),
    "alias bomb in opaque parameters": (
        b"apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\nspec:\n  config:\n  - opaque:\n"
        b"      driver: gpu.example.com\n      parameters:\n        blob: &s " + b"x" * 10_000
        + b"\n        copies: [" + b", ".join([b"*s"] * 100_000) + b"]\n", 2, "opaque.parameters"),
    "deep block nesting": (b"- " * 20000 + b"x\n", 2, "nest"),
    "oversize input": (b"#" * (32 * 1024 * 1024 + 10), 2, "limit is 33554432 bytes"),
    "deep flow nesting": (b"[" * 20000 + b"]" * 20000, 2, "nest"),
    "invalid utf-8": (b"apiVersion: v1\nkind: Node\nmetadata: {name: \xff\xfe}\n", 2, "UTF-8"),
    "binary garbage": (bytes(range(256)) * 40, 2, ""),
    "exploding search": (scenario(devices=30, count=10).replace(
        b"count: 10}\n", b"count: 10}\n    - name: big\n      exactly:\n        deviceClassName: gpu\n"
        b"        selectors: [{cel: {expression: 'device.attributes[\"d.example.com\"].?big.orValue(false)'}}]\n"),
        1, "search gave up"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_input_ends_quickly_with_a_clear_message(name):
    text, code, fragment = HOSTILE[name]
    proc, out = allocate("-", "-o", "json", "--node", "n1", stdin=text, timeout=180)  # a hang, not slowness
    data = json.loads(out)
    assert proc.returncode == code, data["message"]
    assert fragment.lower() in (data["message"] or "").lower() + json.dumps(data["problems"]).lower()
    assert proc.cpu < 15
    if code == 2:
        assert data["problems"] and data["message"]
