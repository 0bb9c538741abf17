"""The engine's table of the v1 Go types (allocator/engine/apitypes.json) is what k8s.io/api v0.37.2 declares."""
import shutil
import subprocess

import pytest

from allocator.engine import apitypes
from tests.upstream import kube_build


def test_committed_type_table_is_what_the_go_types_declare():
    if shutil.which("go") is None:
        pytest.skip("Go is not installed: apitypes.json is not regenerated; the engine reads the committed table")
    try:
        binary = kube_build.build("apitypes")
    except kube_build.KubeBuildError as exc:
        pytest.fail(str(exc))
    generated = subprocess.run([str(binary)], capture_output=True, text=True, check=True).stdout
    with open(apitypes.DATA_PATH, encoding="utf-8") as committed:
        assert generated == committed.read(), (
            "allocator/engine/apitypes.json is stale: regenerate it with "
            "tests/kube/.build/apitypes > allocator/engine/apitypes.json")
