"""Keep a validation disagreement as a regression: the objects, the gates and the apiserver's answer.

usage: python -m tests.upstream.record_validation NAME FILE [--feature-gates A=true,B=false] --why TEXT

Writes tests/upstream/regressions/validation/NAME/{scenario.yaml,case.yaml,upstream.json}; the
regression test then checks the engine against upstream.json, with or without Go.
"""
import argparse
import json
from pathlib import Path

import yaml

from tests.upstream.apiserver_driver import Validator

REGRESSIONS = Path(__file__).resolve().parent / "regressions" / "validation"


def record(name: str, text: str, *, gates: str, why: str) -> Path:
    with Validator() as validator:
        answer = validator.ask(text, gates=gates)
    folder = REGRESSIONS / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "scenario.yaml").write_text(text)
    (folder / "case.yaml").write_text(yaml.safe_dump({"why": why, "featureGates": gates}, sort_keys=False))
    (folder / "upstream.json").write_text(json.dumps(answer, indent=2, sort_keys=True) + "\n")
    return folder


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name")
    parser.add_argument("file")
    parser.add_argument("--feature-gates", default="")
    parser.add_argument("--why", required=True)
    args = parser.parse_args()
    print(record(args.name, Path(args.file).read_text(), gates=args.feature_gates, why=args.why))


if __name__ == "__main__":
    main()
