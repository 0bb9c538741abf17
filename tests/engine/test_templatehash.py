"""pod-template-hash and controller-revision-hash as kube-controller-manager 1.37.2 computes them.
The expected hashes were answered by the podhash oracle (tests/kube/cmd/podhash: the apiserver's
create path, then the Deployment and DaemonSet controllers' ComputeHash or the StatefulSet
controller's ControllerRevision); they are stored here so these tests run without Go."""
from allocator.engine.gates import gates_from_dict
from allocator.engine.scenario import read_scenario
from allocator.engine.templatehash import (controller_revision_hash, created_template, dump_for_hash, fnv32, image_tag,
                                           pod_template_hash, statefulset_patch)

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


def test_a_statefulsets_revision_is_named_as_the_statefulset_controller_names_it():
    assert controller_revision_hash("StatefulSet", "web", WEB, gates=DEFAULTS).value == "web-54844b7758"
    assert controller_revision_hash("StatefulSet", "web", WEB, 2, gates=DEFAULTS).value == "web-54844b7756"
    assert controller_revision_hash("StatefulSet", "web", GROUPED, gates=DEFAULTS).value == "web-7bc86b7d9c"
    assert controller_revision_hash("StatefulSet", "web", GROUPED,
                                    gates=gates_from_dict({"GenericWorkload": True})).value == "web-65d8b9d786"


def test_a_daemonsets_revision_hash_is_the_template_hash():
    assert controller_revision_hash("DaemonSet", "web", WEB, gates=DEFAULTS).value == "78754dbd8"


def test_the_statefulset_patch_is_go_json_of_the_defaulted_template():
    text = statefulset_patch(created_template(WEB))
    assert text.startswith('{"spec":{"template":{"$patch":"replace","metadata":{"labels":{"app":"web"}},"spec":'
                           '{"containers":[{"image":"nginx:1.27","imagePullPolicy":"IfNotPresent","name":"main",'
                           '"resources":{"requests":{"cpu":"100m"}},"terminationMessagePath":"/dev/termination-log",')
    assert '"securityContext":{}' in text and '"terminationGracePeriodSeconds":30' in text  # set pointers stay
    assert "creationTimestamp" not in text  # omitzero


def test_fnv32_is_fnv1_not_fnv1a():
    assert fnv32(b"") == 0x811C9DC5 and fnv32(b"a") == 0x050C5D7E  # the FNV-1 test vectors


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


def test_a_statefulsets_and_a_daemonsets_pods_carry_the_clusters_revision_hash():
    text = DEPLOYMENT.replace("kind: Deployment", "kind: StatefulSet").replace("replicas: 1", "replicas: 2\n  serviceName: web")
    text += "---\n" + DEPLOYMENT.replace("kind: Deployment", "kind: DaemonSet").replace("  replicas: 1\n", "")
    text += "---\napiVersion: v1\nkind: Node\nmetadata: {name: node-a}\nstatus: {allocatable: {cpu: '4', pods: '110'}}\n"
    pods = read_scenario(text).pods
    labels = [(p.name, (p.raw["metadata"].get("labels") or {}).get("controller-revision-hash")) for p in pods]
    assert labels[:2] == [("web-0", "web-54844b7758"), ("web-1", "web-54844b7758")]
    assert labels[2][1] == "78754dbd8"


def test_a_statefulsets_pod_in_the_input_gives_its_label_to_the_pods_made_beside_it():
    text = DEPLOYMENT.replace("kind: Deployment", "kind: StatefulSet").replace("replicas: 1", "replicas: 2")
    text += """---
apiVersion: v1
kind: Pod
metadata:
  name: web-0
  labels: {app: web, controller-revision-hash: web-5d8f7c9b6d}
  ownerReferences: [{apiVersion: apps/v1, kind: StatefulSet, name: web, uid: u, controller: true}]
spec:
  containers: [{name: main, image: "nginx:1.27"}]
"""
    made = [p for p in read_scenario(text).pods if p.name == "web-1"]
    assert made[0].raw["metadata"]["labels"]["controller-revision-hash"] == "web-5d8f7c9b6d"


def test_a_revision_hash_beyond_what_the_module_reproduces_is_an_estimate():
    stamped = {"metadata": {"creationTimestamp": "2026-01-01T00:00:00Z"}, **{"spec": WEB["spec"]}}
    computed = controller_revision_hash("StatefulSet", "web", stamped, gates=DEFAULTS)
    assert not computed.exact and computed.value.startswith("web-") and "creationTimestamp" in computed.why
