"""The "Who may write this claim's status" panel: a grid of writers × writes per allocated
claim, each cell allowed or refused, with the rule or the message one click away.

Self-contained: `build(outcome, scenario, run)` returns the view or None (no allocated
claim); `templates/panels/status_writers.html` renders it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import yaml
from django.utils.translation import gettext as _, gettext_noop

from allocator import wording
from allocator.engine.statusauth.outcome import run_status_writers
from allocator.engine.statusauth.whatif import identity_writer

VERBS = ("PUT", "PATCH")


@dataclass(frozen=True)
class Identity:
    """The what-if form: "as service account ns/name (or user) on node N, by PUT or PATCH"."""

    service_account: str = ""
    user: str = ""
    groups: tuple = ()
    node: str = ""
    verb: str = "PUT"
    bootstrap: bool = True  # the 1.37.2 bootstrap roles and bindings in the cluster

    @property
    def named(self) -> bool:
        return bool(self.service_account or self.user)

    @staticmethod
    def from_data(data) -> "Identity":
        get = data.get
        groups = tuple(g.strip() for g in (get("as_groups") or "").split(",") if g.strip())
        verb = (get("as_verb") or "PUT").upper()
        return Identity((get("as_service_account") or "").strip(), (get("as_user") or "").strip(), groups,
                        (get("as_node") or "").strip(), verb if verb in VERBS else "PUT",
                        bootstrap=not get("no_bootstrap_rbac"))


@dataclass(frozen=True)
class Cell:
    allowed: bool
    status: int
    failed: str  # the checks that refused, in words
    message: str  # what the client reads
    reasons: list  # for an allowance: "check: binding, role, rule" lines
    fix: str  # YAML of the rules a refusal is missing


@dataclass(frozen=True)
class Row:
    writer: str
    cells: list  # Cell or None (this writer does not make this write), one per write


@dataclass(frozen=True)
class ClaimGrid:
    claim: str
    pinned_node: str | None
    writes: list  # labels
    rows: list  # of Row


@dataclass(frozen=True)
class StatusWritersView:
    granular: bool
    device_status: bool
    bootstrap: bool
    claims: list
    identity: Identity
    error: str = ""  # a malformed what-if identity
    verbs: tuple = field(default=VERBS)


_WRITE_LABELS = {"allocate": gettext_noop("set allocation"), "reserve": gettext_noop("add to reservedFor"),
                 "deallocate": gettext_noop("deallocate")}


def _write_label(key: str) -> str:
    if key.startswith("devices:"):
        return f"{key.split(':', 1)[1]} status.devices"
    return _(_WRITE_LABELS[key]) if key in _WRITE_LABELS else key


# libyaml's safe emitter when PyYAML has it: the same text as yaml.safe_dump, ten times faster (a
# grid has a fix per refused cell, and the page builds the grid on every edit).
_SAFE_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _cell(data: dict) -> Cell:
    reasons = []
    for check in data["checks"]:
        if check["allowed"] and check.get("binding"):
            reasons.append(wording.status_allowance(check))
    fix = yaml.dump(data["fix"], Dumper=_SAFE_DUMPER, sort_keys=False).strip() if data.get("fix") else ""
    return Cell(data["allowed"], data["status"], wording.status_checks(data["failed"]), data["message"], reasons, fix)


def build(outcome, scenario, run, identity: Identity | None = None) -> StatusWritersView | None:
    """The panel for one run, or None when no claim is allocated (or the scenario did not load)."""
    if outcome is None or scenario is None:
        return None
    identity = identity or Identity()
    identities, error = (), ""
    if identity.named:
        try:
            identities = (identity_writer(user=identity.user, groups=identity.groups,
                                          service_account=identity.service_account, node=identity.node or None,
                                          verb=identity.verb),)
        except ValueError as exc:
            error = str(exc)
    grid = run_status_writers(scenario, outcome, apiserver_gates=run.component_gates().apiserver,
                              identities=identities, bootstrap=identity.bootstrap, always=True)
    if grid is None:
        return None
    data = grid.as_dict()
    labels = {w["key"]: str(wording.status_writer(w)) for w in data["writers"]}
    claims = []
    for claim in data["claims"]:
        writes = list(dict.fromkeys(c["write"] for c in claim["cells"]))
        by_key = {(c["writer"], c["write"]): c for c in claim["cells"]}
        writers = list(dict.fromkeys(c["writer"] for c in claim["cells"]))
        rows = [Row(labels[w], [(_cell(by_key[(w, k)]) if (w, k) in by_key else None) for k in writes])
                for w in writers]
        claims.append(ClaimGrid(claim["claim"], claim["pinnedToNode"], [_write_label(k) for k in writes], rows))
    return StatusWritersView(data["gates"]["DRAResourceClaimGranularStatusAuthorization"],
                             data["gates"]["DRAResourceClaimDeviceStatus"], data["bootstrapPolicy"], claims,
                             identity, error)
