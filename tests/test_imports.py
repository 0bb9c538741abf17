"""The house reads top-down: the import contracts in `.importlinter` hold (the engine stands alone,
no cycles, views over pages and panels over runs and the worker over the engine), and no module
imports another module's private names."""
import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("allocator", "playground")

def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_privates():
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            importer = module_name(path)
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, ast.ImportFrom):
                    continue
                if node.level:
                    base = importer.split(".")
                    base = base[:len(base) - node.level + (path.name == "__init__.py")]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                if not source.startswith(PACKAGES) or source == importer:
                    continue
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        yield importer, source, alias.name


def test_no_module_imports_another_modules_private_names():
    assert set(imported_privates()) == set()


def test_the_import_contracts_hold():
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    if lint is None:
        pytest.skip("lint-imports is not installed (pip install -r requirements-test.txt)")
    proc = subprocess.run([lint, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 broken" in proc.stdout


def test_the_pods_run_builds_on_the_shared_run_module_not_on_the_claims_run():
    """engine/pods.py once imported engine/run.py's node helpers while run.py handed it the pods: a
    cycle the contracts had to ignore. Both now build on engine/run_common.py."""
    tree = ast.parse((ROOT / "allocator" / "engine" / "pods.py").read_text(encoding="utf-8"))
    sources = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "allocator.engine.run" not in sources and "allocator.engine.run_common" in sources
    contracts = (ROOT / ".importlinter").read_text(encoding="utf-8")
    assert "allocator.engine.run -> allocator.engine.pods" not in contracts
