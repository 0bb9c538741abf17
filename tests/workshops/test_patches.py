"""Solutions as JSON merge patches per object over the start (RFC 7386, as `kubectl patch --type merge`)."""
import pytest
import yaml

from allocator.workshops.patches import PatchError, apply_patches, merge_patch

START = """\
# the admin's class
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec: {selectors: [{cel: {expression: 'true'}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, namespace: default}
spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu, count: 2}}]}}
"""


def objects(text):
    return [d for d in yaml.safe_load_all(text) if d]


def test_merge_patch_follows_rfc_7386():
    assert merge_patch({"a": 1, "b": {"c": 2, "d": 3}, "l": [1, 2]}, {"b": {"c": None, "e": 4}, "l": [3]}) == \
        {"a": 1, "b": {"d": 3, "e": 4}, "l": [3]}
    assert merge_patch({"a": 1}, "x") == "x"


def test_a_patch_merges_into_its_object_and_keeps_the_others_as_written():
    text = apply_patches(START, [{"kind": "ResourceClaim", "metadata": {"name": "c"},
                                  "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}}}])
    assert text.startswith("# the admin's class\n")  # untouched documents keep their comments
    assert objects(text)[1]["spec"]["devices"]["requests"][0]["exactly"] == {"deviceClassName": "gpu"}


def test_a_patch_adds_a_new_object_or_deletes_one():
    text = apply_patches(START, [{"kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "default"},
                                  "$delete": True},
                                 {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}])
    assert [d["kind"] for d in objects(text)] == ["DeviceClass", "Namespace"]
    with pytest.raises(PatchError, match="deletes ResourceClaim nope"):
        apply_patches(START, [{"kind": "ResourceClaim", "metadata": {"name": "nope"}, "$delete": True}])


def test_a_patch_reaches_into_a_kubectl_list():
    listed = "apiVersion: v1\nkind: List\nitems:\n" + "".join(
        "- " + yaml.safe_dump(d, default_flow_style=True) for d in objects(START))
    text = apply_patches(listed, [{"kind": "ResourceClaim", "metadata": {"name": "c"}, "$delete": True},
                                  {"kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {"selectors": None}}])
    [only] = objects(text)
    assert only["kind"] == "List" and only["items"] == [
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {}}]
