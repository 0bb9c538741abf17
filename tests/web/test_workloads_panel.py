"""The Pods panel groups the pods made for a workload under it; bare pods stay as they are."""
import re

import pytest

from tests.engine import cluster as k

pytestmark = pytest.mark.django_db


def test_deployment_example_groups_its_pods_under_the_deployment(client):
    body = client.get("/?example=deployment-claim-template").content.decode()
    section = re.search(r'<section class="pod-workload" data-workload="(Deployment inference/server '
                        r'\(ReplicaSet inference/server-\w+\))">(.*?)</section>', body, re.S)
    assert section, "no group for the Deployment's pods"
    assert section.group(2).count('<div class="pod pod-scheduled"') == 3
    assert "Pods made for Deployment inference/server" in section.group(2)


def test_a_bare_pod_beside_a_job_is_not_in_the_jobs_group(client):
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "batch", "namespace": "default"},
           "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}}}
    scenario = k.dump(k.node("node-a"), k.pod("bare"), job)
    body = client.post("/", {"scenario": scenario, "gates-submitted": "1"}, HTTP_HX_REQUEST="true").content.decode()
    bare = body.index('data-pod="default/bare"')
    group = body.index('data-workload="Job default/batch"')
    assert bare < group  # input order: the pod, then the Job's pod in its group
    assert body.count('class="pod-workload"') == 1
