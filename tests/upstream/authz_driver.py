"""The kube-apiserver's own status authorization as an oracle for `allocator.engine.statusauth`.

`tests/kube/cmd/authz` is built once (under a file lock, again only when a source is newer) into
the gitignored `tests/kube/.build/`, and driven as ONE process in `--batch` mode: a JSON case
per line (RBAC objects, gates, status writes), a JSON answer per line.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from allocator.engine.statusauth.rbac import Authorizer, RBACObjects, UserInfo, read_object
from allocator.engine.statusauth.whatif import judge
from tests.upstream import kube_build
from tests.upstream.batch import BatchProcess

KUBE_DIR = Path(__file__).resolve().parent.parent / "kube"
SOURCE_DIR = KUBE_DIR / "cmd" / "authz"
BUILD_DIR = Path(os.environ.get("DRA_KUBE_BUILD_DIR", KUBE_DIR / ".build"))
BINARY = BUILD_DIR / "authz"


class OracleUnavailable(Exception):
    """Go is not installed, or the oracle does not build."""


def go_binary() -> str | None:
    return shutil.which("go")


def build() -> Path:
    go = go_binary()
    if go is None:
        raise OracleUnavailable("Go is not installed: the status-authorization differential needs `go` on PATH")
    try:
        return kube_build.build("authz")  # every oracle of tests/kube at once
    except kube_build.KubeBuildError as exc:
        raise OracleUnavailable(str(exc)) from None


class AuthzOracle(BatchProcess):
    name = "the authz oracle"

    def __init__(self, binary: Path | None = None):
        super().__init__(binary or build())

    def ask(self, case: dict) -> dict:
        return self.request(case)


KEYS = (("clusterRoles", "ClusterRole"), ("clusterRoleBindings", "ClusterRoleBinding"),
        ("roles", "Role"), ("roleBindings", "RoleBinding"))


def ours(case: dict) -> dict:
    """The engine's answer to a case, in the oracle's shape."""
    objects = RBACObjects()
    for key, kind in KEYS:
        for item in case.get(key) or []:
            obj, errors = read_object({"kind": kind, **item})
            assert not errors, f"the generator wrote an invalid {kind}: {errors}"
            objects.add(obj)
    if case.get("bootstrap"):
        objects = objects.with_bootstrap()
    objects = objects.aggregated()
    authorizer = Authorizer(objects)
    answers = []
    for check in case["checks"]:
        u = check["user"]
        user = UserInfo(u["name"], tuple(u.get("groups") or ()),
                        tuple((k, tuple(v)) for k, v in (u.get("extra") or {}).items()))
        verdict = judge(authorizer, user, check["verb"], check["namespace"], check["name"], check["old"], check["new"],
                        granular=case["granular"], device_status=case["deviceStatus"])
        front = verdict.checks[0]
        answer = {"front": {"allowed": front.allowed, "reason": front.reason}}
        if verdict.status == 403:
            answer["front"]["message"] = verdict.message
        elif verdict.status == 422:
            answer["message"] = verdict.message
        answers.append(answer)
    aggregated = {name: [r.as_dict() for r in role.rules] for name, role in objects.cluster_roles.items()
                  if role.selectors is not None}
    return {"answers": answers, "aggregated": aggregated}


def compare(mine: dict, theirs: dict) -> list[str]:
    if theirs.get("error"):
        return [f"the oracle failed: {theirs['error']}"]
    diffs = []
    for i, (a, b) in enumerate(zip(mine["answers"], theirs.get("answers") or [])):
        if a["front"] != b["front"]:
            diffs.append(f"checks[{i}] front door: ours {a['front']}, upstream {b['front']}")
        if a.get("message", "") != b.get("message", ""):
            diffs.append(f"checks[{i}] 422: ours {a.get('message', '')!r}, upstream {b.get('message', '')!r}")
    if len(mine["answers"]) != len(theirs.get("answers") or []):
        diffs.append(f"answers: ours {len(mine['answers'])}, upstream {len(theirs.get('answers') or [])}")
    up_agg = {k: [_rule(r) for r in v or []] for k, v in (theirs.get("aggregated") or {}).items()}
    my_agg = {k: [_rule(r) for r in v] for k, v in mine["aggregated"].items()}
    if up_agg != my_agg:
        diffs.append(f"aggregated rules: ours {my_agg}, upstream {up_agg}")
    return diffs


def _rule(r: dict) -> dict:
    return {k: v for k, v in r.items() if v}


def record(name: str, why: str, case: dict, directory: Path | None = None) -> Path:
    """Store a case with the oracle's answer, so that it runs without Go from then on."""
    directory = directory or Path(__file__).resolve().parent / "authz_regressions"
    directory.mkdir(exist_ok=True)
    with AuthzOracle() as oracle:
        upstream = oracle.ask(case)
    path = directory / f"{name}.json"
    path.write_text(json.dumps({"why": why, "case": case, "upstream": upstream}, indent=1, sort_keys=True) + "\n")
    return path
