"""Keep a disagreement as a regression: the scenario, its settings and the oracle's answer.

usage: python -m tests.upstream.record NAME FILE [--node NAME] [--feature-gates A=true,B=false] [--why TEXT]

Writes tests/upstream/regressions/NAME/{scenario.yaml,case.yaml,upstream.json}; the regression
test then checks the engine against upstream.json, with or without Go.
"""
import argparse
import json
from pathlib import Path

import yaml

from tests.upstream.driver import Oracle

REGRESSIONS = Path(__file__).resolve().parent / "regressions"


def record(name: str, text: str, *, node: str | None, gates: str, why: str) -> Path:
    with Oracle() as oracle:
        answer = oracle.ask(text, node=node, gates=gates)
    for key in ("nodes",):
        answer.pop(key, None)
    for claim in answer.get("claims") or []:
        for result in ((claim.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results", []):
            if "shareID" in result:
                result["shareID"] = "<random>"
    folder = REGRESSIONS / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "scenario.yaml").write_text(text)
    case = {"why": why, "node": node, "featureGates": gates}
    (folder / "case.yaml").write_text(yaml.safe_dump(case, sort_keys=False, width=100))
    (folder / "upstream.json").write_text(json.dumps(answer, indent=2) + "\n")
    return folder


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("name")
    parser.add_argument("file")
    parser.add_argument("--node")
    parser.add_argument("--feature-gates", default="")
    parser.add_argument("--why", default="")
    args = parser.parse_args()
    folder = record(args.name, Path(args.file).read_text(), node=args.node, gates=args.feature_gates, why=args.why)
    print(folder)


if __name__ == "__main__":
    main()
