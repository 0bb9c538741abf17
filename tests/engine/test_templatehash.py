"""pod-template-hash as kube-controller-manager 1.37.2 computes it. The expected hashes were
answered by the podhash oracle (tests/kube/cmd/podhash: the apiserver's create path and the
Deployment controller's ComputeHash); they are stored here so these tests run without Go."""
from allocator.engine.gates import gates_from_dict
from allocator.engine.scenario import read_scenario
from allocator.engine.templatehash import dump_for_hash, created_template, image_tag, pod_template_hash

WEB = {"metadata": {"labels": {"app": "web"}},
       "spec": {"containers": [{"name": "main", "image": "nginx:1.27", "resources": {"requests": {"cpu": "100m"}}}]}}
GROUPED = {"metadata": {"labels": {"app": "w"}},
           "spec": {"schedulingGroup": {"podGroupName": "g"},
                    "containers": [{"name": "a", "image": "busybox:1.36",
                                    "resources": {"requests": {"cpu": "0.5", "memory": "1.5Gi"}}}]}}
DEFAULTS = gates_from_dict({})


def test_a_plain_template_hashes_as_the_deployment_controller_does():
    assert pod_template_hash(WEB, gates=DEFAULTS).value == "78754dbd8"


def test_the_collision_count_changes_the_hash_as_upstream():
    assert [pod_template_hash(WEB, c, gates=DEFAULTS).value for c in (0, 1, 7)] == \
        ["8d869b648", "6494f5db7c", "76569b54bc"]


def test_the_scheduling_group_counts_only_when_the_apiserver_keeps_it():
    assert pod_template_hash(GROUPED, gates=DEFAULTS).value == "577bb5697d"  # GenericWorkload off: dropped
    assert pod_template_hash(GROUPED, gates=gates_from_dict({"GenericWorkload": True})).value == "658979cc59"
    assert pod_template_hash(GROUPED).value == "658979cc59"  # as stored: nothing dropped


def test_the_hashed_dump_holds_the_apiservers_defaults():
    text = dump_for_hash(created_template(WEB))
    for part in ("TerminationMessagePath:(string)/dev/termination-log", "ImagePullPolicy:(v1.PullPolicy)IfNotPresent",
                 "RestartPolicy:(v1.RestartPolicy)Always", "TerminationGracePeriodSeconds:(*int64)30",
                 "SchedulerName:(string)default-scheduler", "SecurityContext:(*v1.PodSecurityContext){SELinuxOptions:",
                 "Labels:(map[string]string)map[app:web]", "Args:([]string)<nil>"):
        assert part in text


def test_an_image_without_tag_or_digest_is_latest():
    assert [image_tag(i) for i in ("nginx", "nginx:1.2", "host:5000/a", "host:5000/a:v", "a@sha256:ab")] == \
        ["latest", "1.2", "latest", "v", ""]


def test_a_gated_field_counts_when_the_gate_keeps_it_and_is_an_estimate_when_dropped():
    template = {"spec": {"hostUsers": False, "containers": [{"name": "a", "image": "x"}]}}
    assert pod_template_hash(template, gates=DEFAULTS) == pod_template_hash(template)  # UserNamespacesSupport on
    assert pod_template_hash(template, gates=DEFAULTS).value == "5fd86c88c5"
    dropped = pod_template_hash(template, gates=gates_from_dict({"UserNamespacesSupport": False}))
    assert not dropped.exact and "spec.hostUsers" in dropped.why and "UserNamespacesSupport" in dropped.why


DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: main, image: "nginx:1.27", resources: {requests: {cpu: 100m}}}
"""


def test_a_deployments_pods_are_named_with_the_clusters_hash():
    scenario = read_scenario(DEPLOYMENT)
    (pod,) = scenario.pods
    assert pod.name.startswith("web-78754dbd8-")
    assert scenario.pod_workloads[pod.key] == "Deployment default/web (ReplicaSet default/web-78754dbd8)"


def test_a_deployment_whose_hash_is_estimated_says_so():
    stamped = DEPLOYMENT.replace("metadata: {labels: {app: web}}",
                                 "metadata: {labels: {app: web}, creationTimestamp: '2026-01-01T00:00:00Z'}")
    scenario = read_scenario(stamped)
    (pod,) = scenario.pods
    assert scenario.pod_workloads[pod.key].endswith(", hash estimated)")
    assert any("is an estimate" in p.message and "creationTimestamp" in p.message for p in scenario.problems)
