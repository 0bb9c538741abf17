"""Hypothesis strategies for valid random scenarios that exercise every feature of the allocator.

A scenario is small on purpose (a few nodes, pools and claims): the point is the
combinations, and Hypothesis shrinks a disagreement to its smallest form.
Everything drawn here is valid input for the kube-apiserver; the gates are drawn
too, and the objects are treated as already stored under any of them.
"""
from __future__ import annotations

from dataclasses import dataclass

import yaml
from hypothesis import strategies as st

from allocator.engine.gates import ALPHA, PREALPHA, FeatureGates

DRIVERS = ("gpu.example.com", "nic.example.com")
NODES = ("node-a", "node-b", "node-c")
REGIONS = ("r1", "r2")
MODELS = ("a100", "h100", "l4")
VERSIONS = ("1.0.0", "1.0.0+b1", "1.0.0+b2", "1.2.0", "2.0.0-rc.1")
QUANTITIES = ("1Gi", "2Gi", "4Gi", "8Gi", "10G", "16Gi")
TAINT_KEYS = ("maintenance", "degraded")
ADMIN_LABEL = "resource.kubernetes.io/admin-access"

# Gates a scenario may flip (the rest keep the defaults of the emulated version). Mostly sets
# kube-scheduler accepts are drawn: a gate locked (or not yet there) at the emulated version keeps
# its default, and a gate whose dependency ends up off is turned off too. One scenario in
# REFUSED_ONE_IN keeps a set kube-scheduler refuses to start with (a locked gate switched, a gate on
# whose dependency is off, a minimum compatibility version above the emulated one): both sides
# must refuse it (exit 2). Every message of a refusal is tests/upstream/test_gates_upstream.py's question.
GATES = ("DRAPrioritizedList", "DRAAdminAccess", "DRADeviceTaints", "DRAPartitionableDevices",
         "DRAConsumableCapacity", "DRAFractionalCapacityRange", "DRADeviceBindingConditions",
         "DRAListTypeAttributes", "DRADeviceCompatibilityGroups", "DRAOptionalNodeOperations",
         "DRADerivedAttributes", "DRADeviceTaintRules")
# Emulated versions drawn ("" = a scheduler started without the flag), and min compatibility versions.
EMULATED = ("", "", "1.36", "1.35")
MIN_COMPAT = ("", "", "", "1.37")
REFUSED_ONE_IN = 25
# A gate 1.37 refuses on while the gate it depends on is off (kube_features.go's dependency table).
DEPENDS_ON = {"DRADeviceTaintRules": "DRADeviceTaints", "DRAFractionalCapacityRange": "DRAConsumableCapacity",
              "DRADeviceCompatibilityGroups": "DRAPartitionableDevices"}


@dataclass
class Generated:
    text: str
    node: str | None
    gates: str
    emulated: str = ""
    min_compat: str = ""
    refused: bool = False  # a set kube-scheduler refuses to start with

    def __repr__(self):
        return (f"Generated(node={self.node!r}, gates={self.gates!r}, emulated={self.emulated!r}, "
                f"min_compat={self.min_compat!r}, refused={self.refused})\n---\n{self.text}")

    def scheduler_flags(self) -> list[str]:
        """The kube-scheduler flags this scenario's settings are."""
        flags = [f"--feature-gates={self.gates}"] if self.gates else []
        if self.emulated:
            flags.append(f"--emulated-version={self.emulated}")
        if self.min_compat:
            flags.append(f"--min-compatibility-version={self.min_compat}")
        return flags


def rare(draw, n: int) -> bool:
    """True one time in n; shrinks towards False, so a shrunk example keeps only the features it needs."""
    return draw(st.integers(0, n - 1)) == n - 1


@st.composite
def refused_gates(draw) -> tuple[dict, str, str]:
    """(gate values, emulated version, min compatibility version) that kube-scheduler refuses."""
    chosen, emulated, min_compat = draw(gates())
    base = FeatureGates(emulated=emulated, min_compat=min_compat)
    locked = [name for name in GATES if base.spec(name).locked]
    dependent = [name for name in DEPENDS_ON if not base.spec(name).locked and not base.spec(DEPENDS_ON[name]).locked
                 and base.spec(name).stage != PREALPHA]
    how = draw(st.sampled_from(["locked"] * bool(locked) + ["dependency"] * bool(dependent) + ["versions"]))
    if how == "locked":
        name = draw(st.sampled_from(locked))
        chosen[name] = not base.spec(name).default
    elif how == "dependency":
        name = draw(st.sampled_from(dependent))
        chosen[name], chosen[DEPENDS_ON[name]] = True, False
    else:
        emulated, min_compat = "1.36", "1.37"  # the minimum compatibility version above the emulated one
    return chosen, emulated, min_compat


@st.composite
def gates(draw) -> tuple[dict, str, str]:
    """(gate values, emulated version, min compatibility version) that a kube-scheduler accepts."""
    emulated = draw(st.sampled_from(EMULATED))
    min_compat = draw(st.sampled_from(MIN_COMPAT))
    if emulated and min_compat > emulated:
        min_compat = ""  # above the emulated version: refused
    base = FeatureGates(emulated=emulated, min_compat=min_compat)
    chosen = {}
    for name in GATES:
        spec = base.spec(name)
        if spec.locked or spec.stage == PREALPHA:
            continue
        # Alpha gates on half the time, the others off one time in six.
        flip = rare(draw, 2 if spec.stage == ALPHA else 6)
        chosen[name] = (not spec.default) if flip else spec.default
    # A gate whose dependency is off cannot be on: switch it off until the set is accepted.
    for _ in range(len(GATES)):
        refused = FeatureGates(tuple(sorted(chosen.items())), emulated, min_compat).refusals()
        if not refused:
            break
        chosen[refused[0][0]] = False
    return chosen, emulated, min_compat


def node_selector(draw, *, allow_fields=True) -> dict:
    if allow_fields and draw(st.booleans()):
        # A node field selector takes exactly one value.
        term = {"matchFields": [{"key": "metadata.name", "operator": draw(st.sampled_from(["In", "NotIn"])),
                                 "values": [draw(st.sampled_from(NODES))]}]}
    else:
        op = draw(st.sampled_from(["In", "NotIn", "Exists"]))
        req = {"key": "region", "operator": op}
        if op != "Exists":
            req["values"] = draw(st.lists(st.sampled_from(REGIONS), min_size=1, max_size=2, unique=True))
        term = {"matchExpressions": [req]}
    return {"nodeSelectorTerms": [term]}


def attributes(draw, driver: str, index: int, list_types: bool) -> dict:
    attrs = {}
    if draw(st.integers(0, 4)) > 0:
        attrs["model"] = {"string": draw(st.sampled_from(MODELS))}
    attrs["index"] = {"int": index}
    if draw(st.booleans()):
        attrs["healthy"] = {"bool": draw(st.booleans())}
    if draw(st.booleans()):
        attrs["driverVersion"] = {"version": draw(st.sampled_from(VERSIONS))}
    if draw(st.booleans()):
        attrs[f"{driver}/numa"] = {"int": draw(st.integers(0, 1))}
    if list_types and draw(st.booleans()):
        kind = draw(st.sampled_from(["strings", "ints", "versions"]))
        pool = {"strings": ["x", "y", "z"], "ints": [0, 1, 2], "versions": list(VERSIONS[:3])}[kind]
        attrs["links"] = {kind: draw(st.lists(st.sampled_from(pool), min_size=1, max_size=2, unique=True))}
    return attrs


def capacity(draw, multi: bool) -> dict:
    value = draw(st.sampled_from(["8Gi", "16Gi", "40Gi"]))
    cap = {"value": value}
    if multi and draw(st.booleans()):
        kind = draw(st.sampled_from(["range", "values", "default"]))
        if kind == "range":
            # The value must be min plus a whole number of steps: min is the step here.
            step = draw(st.sampled_from(["1Gi", "2Gi", "512Mi"]))
            cap["requestPolicy"] = {"default": step, "validRange": {"min": step, "max": value}}
            if draw(st.booleans()):
                cap["requestPolicy"]["validRange"]["step"] = step
        elif kind == "values":
            cap["requestPolicy"] = {"default": "2Gi", "validValues": ["2Gi", "4Gi", "8Gi"]}
        else:
            cap["requestPolicy"] = {"default": "4Gi"}
    return {"memory": cap}


@st.composite
def scenarios(draw) -> Generated:
    refused = rare(draw, REFUSED_ONE_IN)
    g, emulated, min_compat = draw(refused_gates() if refused else gates())
    objects: list[dict] = []
    node_names = list(NODES[: draw(st.integers(1, 3))])
    for name in node_names:
        node = {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": name, "labels": {"region": draw(st.sampled_from(REGIONS))}}}
        if rare(draw, 3):
            node["status"] = {"declaredFeatures": ["DRAOptionalNodeOperations"]}
        objects.append(node)

    # Pools: each has one or two device slices, maybe a counter slice, and may be incomplete.
    devices_by_driver: dict[str, list[tuple]] = {d: [] for d in DRIVERS}
    multi_devices = set()
    device_capacity = {}
    for pi in range(draw(st.integers(1, 3))):
        driver = draw(st.sampled_from(DRIVERS))
        pool = f"pool-{pi}"
        generation = draw(st.integers(1, 2))
        where = draw(st.sampled_from(["nodeName", "nodeName", "allNodes", "nodeSelector", "perDevice"]))
        pool_node = draw(st.sampled_from(node_names))
        with_counters = rare(draw, 3)
        counter_sets = []
        if with_counters:
            counter_sets = [{"name": f"cs-{k}", "counters": {"mem": {"value": draw(st.sampled_from(["8Gi", "16Gi"]))}}}
                            for k in range(draw(st.integers(1, 2)))]
        n_device_slices = draw(st.integers(1, 2))
        slices = []
        device_index = 0
        for si in range(n_device_slices):
            devices = []
            for _ in range(draw(st.integers(1, 4))):
                name = f"dev-{pi}-{device_index}"
                device = {"name": name}
                attrs = attributes(draw, driver, device_index, True)
                device["attributes"] = attrs
                multi = rare(draw, 4)
                if multi:
                    device["allowMultipleAllocations"] = True
                    multi_devices.add((driver, pool, name))
                if rare(draw, 3) or multi:
                    device["capacity"] = capacity(draw, multi)
                    if rare(draw, 5):  # the qualified spelling of the same name
                        device["capacity"] = {f"{driver}/{k}": v for k, v in device["capacity"].items()}
                    device_capacity[(driver, pool, name)] = device["capacity"]
                if counter_sets and draw(st.integers(0, 3)) > 0:
                    cs = draw(st.sampled_from(counter_sets))
                    entry = {"counterSet": cs["name"], "counters": {"mem": {"value": draw(st.sampled_from(["4Gi", "8Gi"]))}}}
                    if rare(draw, 3):
                        entry["compatibilityGroups"] = draw(st.lists(st.sampled_from(["mig", "vgpu"]), min_size=1,
                                                                      max_size=2, unique=True))
                    device["consumesCounters"] = [entry]
                if rare(draw, 5):
                    device["taints"] = [{"key": draw(st.sampled_from(TAINT_KEYS)),
                                         "value": "true",
                                         "effect": draw(st.sampled_from(["NoSchedule", "NoExecute"]))}]
                if rare(draw, 6):
                    device["bindingConditions"] = ["Ready"]
                    device["bindingFailureConditions"] = ["Failed"]
                    if draw(st.booleans()):
                        device["bindsToNode"] = True
                if where == "perDevice":
                    which = draw(st.sampled_from(["nodeName", "allNodes", "nodeSelector"]))
                    if which == "nodeName":
                        device["nodeName"] = draw(st.sampled_from(node_names))
                    elif which == "allNodes":
                        device["allNodes"] = True
                    else:
                        device["nodeSelector"] = node_selector(draw)
                devices.append(device)
                devices_by_driver[driver].append((pool, name))
                device_index += 1
            spec = {"driver": driver, "pool": {"name": pool, "generation": generation}, "devices": devices}
            slices.append(({"name": f"{pool}-s{si}"}, spec))
        if counter_sets:
            slices.append(({"name": f"{pool}-counters"},
                           {"driver": driver, "pool": {"name": pool, "generation": generation},
                            "sharedCounters": counter_sets}))
        count = len(slices) + (1 if rare(draw, 10) else 0)  # sometimes incomplete
        skip_ops = rare(draw, 6)
        for meta, spec in slices:
            spec["pool"]["resourceSliceCount"] = count
            if where == "nodeName":
                spec["nodeName"] = pool_node
            elif where == "allNodes":
                spec["allNodes"] = True
            elif where == "nodeSelector":
                spec["nodeSelector"] = node_selector(draw, allow_fields=False)
            elif "devices" in spec:
                spec["perDeviceNodeSelection"] = True
            else:
                spec["nodeName"] = pool_node
            if skip_ops and "devices" in spec:
                spec["skipNodeOperations"] = ["*"]
            objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": meta,
                            "spec": spec})

    # DeviceTaintRules: a taint on a driver, a pool or one device (or, without a selector, on nothing).
    all_named = [(d, p, n) for d in DRIVERS for p, n in devices_by_driver[d]]
    for ri in range(1 if all_named and rare(draw, 4) else 0):
        driver, pool, name = draw(st.sampled_from(all_named))
        selector = draw(st.sampled_from([{"driver": driver}, {"driver": driver, "pool": pool},
                                         {"pool": pool, "device": name}, None]))
        spec = {"taint": {"key": draw(st.sampled_from(TAINT_KEYS)), "value": "true",
                          "effect": draw(st.sampled_from(["NoSchedule", "NoExecute", "None"]))}}
        if selector is not None:
            spec["deviceSelector"] = selector
        objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule",
                        "metadata": {"name": f"rule-{ri}"}, "spec": spec})

    # Classes: one per driver, some with an extra selector or config.
    classes = []
    for driver in [d for d in DRIVERS if devices_by_driver[d]]:
        name = driver.split(".")[0]
        selectors = [{"cel": {"expression": f'device.driver == "{driver}"'}}]
        extra = draw(st.integers(0, 3))
        if extra == 1:
            selectors.append({"cel": {"expression": f'!has(device.attributes["{driver}"].healthy) || '
                                                    f'device.attributes["{driver}"].healthy'}})
        elif extra == 2:
            selectors.append({"cel": {"expression": f'has(device.capacity["{driver}"].memory) ? '
                                                    f'device.capacity["{driver}"].memory.compareTo(quantity("8Gi")) >= 0 : true'}})
        spec = {"selectors": selectors}
        if rare(draw, 5):
            spec["config"] = [{"opaque": {"driver": driver, "parameters": {"class": name}}}]
        objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
                        "spec": spec})
        classes.append((name, driver))

    # Already-allocated claims: each holds one device (whole, shared or with admin access).
    admin_used = False
    all_devices = [(d, p, n) for d in DRIVERS for p, n in devices_by_driver[d]]
    for ai in range(draw(st.integers(0, 2)) if all_devices else 0):
        driver, pool, name = draw(st.sampled_from(all_devices))
        cls = driver.split(".")[0]
        exactly = {"deviceClassName": cls}
        result = {"request": "r0", "driver": driver, "pool": pool, "device": name}
        if (driver, pool, name) in multi_devices and draw(st.integers(0, 3)) > 0:
            result["shareID"] = f"00000000-0000-4000-8000-00000000000{ai}"
            if (driver, pool, name) in device_capacity:
                amount = draw(st.sampled_from(["1Gi", "2Gi", "4Gi"]))
                spelled = draw(st.sampled_from(list(device_capacity[(driver, pool, name)]) + [f"{driver}/memory"]))
                exactly["capacity"] = {"requests": {spelled: amount}}
                result["consumedCapacity"] = {spelled: amount}
        elif rare(draw, 5):
            exactly["adminAccess"] = True
            result["adminAccess"] = True
            admin_used = True
        objects.append({
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": f"held-{ai}", "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "r0", "exactly": exactly}]}},
            "status": {"allocation": {"devices": {"results": [result]}}},
        })

    # Claims to allocate.
    attr_names = ["model", "index", "healthy", "driverVersion", "gpu.example.com/numa", "links"]
    for ci in range(draw(st.integers(1, 3))):
        requests = []
        for ri in range(draw(st.integers(1, 2))):
            if rare(draw, 4):
                subs = [dict(name=f"s{k}", **request_body(draw, classes, sub=True))
                        for k in range(draw(st.integers(1, 3)))]
                requests.append({"name": f"r{ri}", "firstAvailable": subs})
            else:
                body = request_body(draw, classes, sub=False)
                admin_used = admin_used or body.get("adminAccess", False)
                requests.append({"name": f"r{ri}", "exactly": body})
        spec = {"devices": {"requests": requests}}
        exact = [r for r in requests if "exactly" in r]
        if exact and rare(draw, 5):
            # A derived attribute must be used by a constraint.
            request = draw(st.sampled_from(exact))
            driver = dict(classes)[request["exactly"]["deviceClassName"]]
            request["exactly"]["derivedAttributes"] = [{"name": "derived/key", "expression": draw(st.sampled_from([
                f'device.attributes["{driver}"].index % 2',
                f'has(device.attributes["{driver}"].model) ? device.attributes["{driver}"].model : "none"',
                f'device.attributes["{driver}"].index > 0',
            ]))}]
            kind = draw(st.sampled_from(["matchAttribute", "distinctAttribute"]))
            spec["devices"]["constraints"] = [{kind: "derived/key", "requests": [request["name"]]}]
        elif rare(draw, 3):
            kind = draw(st.sampled_from(["matchAttribute", "distinctAttribute"]))
            attr = draw(st.sampled_from(attr_names[:2] * 3 + attr_names))
            if "/" not in attr:
                attr = f"{draw(st.sampled_from(DRIVERS))}/{attr}"
            constraint = {kind: attr}
            if draw(st.booleans()):
                constraint["requests"] = [draw(st.sampled_from([r["name"] for r in requests]))]
            spec["devices"]["constraints"] = [constraint]
        if rare(draw, 6):
            spec["devices"]["config"] = [{"requests": [requests[0]["name"]],
                                          "opaque": {"driver": DRIVERS[0], "parameters": {"claim": ci}}}]
        objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                        "metadata": {"name": f"claim-{ci}", "namespace": "default"}, "spec": spec})

    if admin_used:
        objects.insert(0, {"apiVersion": "v1", "kind": "Namespace",
                           "metadata": {"name": "default", "labels": {ADMIN_LABEL: "true"}}})
    node = draw(st.one_of(st.none(), st.sampled_from(node_names)))
    text = yaml.safe_dump_all(objects, sort_keys=False)
    gate_text = ",".join(f"{k}={str(v).lower()}" for k, v in g.items())
    return Generated(text, node, gate_text, emulated, min_compat, refused)


def request_body(draw, classes, *, sub: bool) -> dict:
    cls, driver = draw(st.sampled_from(classes))
    body = {"deviceClassName": cls}
    mode = draw(st.integers(0, 9))
    if mode == 0:
        body["allocationMode"] = "All"
    elif mode == 1:
        body["count"] = 2
    if rare(draw, 4):
        body["selectors"] = [{"cel": {"expression": draw(st.sampled_from([
            f'device.attributes["{driver}"].index >= 1',
            f'has(device.attributes["{driver}"].model) && device.attributes["{driver}"].model == "h100"',
            f'has(device.attributes["{driver}"].driverVersion) && '
            f'device.attributes["{driver}"].driverVersion.isGreaterThan(semver("1.0.0"))',
            'device.allowMultipleAllocations',
            f'device.attributes["{driver}"].?model.orValue("") != "l4"',
            f'device.attributes["{driver}"].index.includes(1) || device.attributes["{driver}"].index == 0',
            f'!has(device.attributes["{driver}"].links) || device.attributes["{driver}"].links.includes("x") '
            f'|| device.attributes["{driver}"].links.includes(1)',
            f'has(device.capacity["{driver}"].memory) && device.capacity["{driver}"].memory.isGreaterThan(quantity("8Gi"))',
        ]))}}]
    if rare(draw, 4):
        spelled = f"{driver}/memory" if rare(draw, 4) else "memory"
        body["capacity"] = {"requests": {spelled: draw(st.sampled_from(["1Gi", "3Gi", "4Gi", "9Gi"]))}}
    if not sub and rare(draw, 7):
        body["adminAccess"] = True
    if rare(draw, 4):
        tol = {"key": draw(st.sampled_from(TAINT_KEYS))}
        if rare(draw, 5):
            tol = {"operator": "Exists"}  # tolerates every taint
        elif draw(st.booleans()):
            tol["operator"] = "Exists"
        else:
            tol["value"] = "true"
        if draw(st.booleans()):
            tol["effect"] = draw(st.sampled_from(["NoSchedule", "NoExecute"]))
        body["tolerations"] = [tol]
    return body
