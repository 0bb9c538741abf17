"""DeviceTaintRule objects: taints the scheduler adds to matching devices before it allocates.

With DRADeviceTaintRules on (GA in 1.37), kube-scheduler reads slices through a
tracker that appends each rule's taint to every device the rule selects: the
devices of the given driver, pool and device name (every field optional). A rule
without a device selector selects nothing. The slices as written are not changed.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from allocator.engine.objects import ResourceSlice, Taint

EFFECTS = ("None", "NoSchedule", "NoExecute")


@dataclass(frozen=True)
class DeviceTaintRule:
    name: str
    selects: bool  # False when the rule has no deviceSelector
    driver: str | None
    pool: str | None
    device: str | None
    taint: Taint

    def matches(self, s: ResourceSlice, device_name: str) -> bool:
        return (
            self.selects
            and (self.driver is None or self.driver == s.driver)
            and (self.pool is None or self.pool == s.pool)
            and (self.device is None or self.device == device_name)
        )


def build_taint_rule(data: dict) -> DeviceTaintRule:
    """A rule from its object; ValueError for what the apiserver would refuse."""
    spec = data.get("spec") or {}
    selector = spec.get("deviceSelector")
    taint = spec.get("taint") or {}
    if not taint.get("key"):
        raise ValueError("spec.taint.key: Required value")
    if taint.get("effect") not in EFFECTS:
        raise ValueError(f"spec.taint.effect: Unsupported value: {taint.get('effect')!r}: supported values: "
                         + ", ".join(f'"{e}"' for e in EFFECTS))
    selector = selector if isinstance(selector, dict) else None
    return DeviceTaintRule(
        name=(data.get("metadata") or {}).get("name", ""),
        selects=selector is not None,
        driver=(selector or {}).get("driver"),
        pool=(selector or {}).get("pool"),
        device=(selector or {}).get("device"),
        taint=Taint(taint["key"], str(taint.get("value") or ""), taint["effect"]),
    )


def tainted_slices(slices: list, rules: list) -> list:
    """The slices as the scheduler sees them: each selected device gains the rules' taints, in rule order."""
    if not rules:
        return slices
    out = []
    for s in slices:
        devices = s.devices
        changed = False
        for index, device in enumerate(s.devices):
            extra = tuple(rule.taint for rule in rules if rule.matches(s, device.name))
            if extra:
                if not changed:
                    devices, changed = list(devices), True
                devices[index] = dataclasses.replace(device, taints=device.taints + extra, cel_input=None,
                                                     selector_results=None)
        out.append(dataclasses.replace(s, devices=tuple(devices)) if changed else s)
    return out
