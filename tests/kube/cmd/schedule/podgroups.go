package main

// PodGroups (scheduling.k8s.io/v1beta1) and the feature gates of one request.
//
// A request may name feature gates ({"dump": ..., "gates": {"GenericWorkload": true, ...}}); they
// are set on the process's default gate for that dump only (the framework, the cache and the
// snapshot read them when they are built) and put back afterwards. With GenericWorkload the
// scheduler's cache learns the dump's PodGroups; with DRAWorkloadResourceClaims the emulated
// resourceclaim controller makes one claim per PodGroup claim from a template, owned by the
// PodGroup, for every pod of the group whose claim the library's BindTo binds to the group.

import (
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
	"k8s.io/kubernetes/pkg/features"

	"dra-playground/kube/internal/batch"
)

// podGroupsOf holds the PodGroups of each dump being read (the dump type itself lists only the
// kinds the oracle had before pod groups).
var podGroupsOf = map[*dump][]*schedulingv1beta1.PodGroup{}

// addPodGroup keeps obj when it is a PodGroup; false for any other kind.
func (d *dump) addPodGroup(obj runtime.Object) bool {
	pg, ok := obj.(*schedulingv1beta1.PodGroup)
	if !ok {
		return false
	}
	if pg.Namespace == "" {
		pg.Namespace = "default"
	}
	if pg.UID == "" {
		pg.UID = types.UID("uid-podgroup-" + pg.Namespace + "-" + pg.Name)
	}
	podGroupsOf[d] = append(podGroupsOf[d], pg)
	return true
}

// reportReservations is set while a request that asked for them is answered: claims then carry
// their status.reservedFor (the pod, or the PodGroup, they are reserved for).
var reportReservations bool

// reportQueue is set while a request that asked for it is answered: pending pods then carry what
// the scheduling queue makes of them (queue.go).
var reportQueue bool

// answerWithGates answers one dump under the given gates, restoring the previous values after.
func answerWithGates(text string, gates map[string]bool, reservations, queue bool) any {
	reportReservations, reportQueue = reservations, queue
	defer func() { reportReservations, reportQueue = false, false }()
	return batch.WithGates(gates, func() any { return answer(text) })
}

// genericWorkload says whether the scheduler's cache keeps PodGroups.
func genericWorkload() bool {
	return utilfeature.DefaultFeatureGate.Enabled(features.GenericWorkload)
}

// addPodGroupsToCache gives the scheduler's cache the dump's PodGroups, as its informer would.
func addPodGroupsToCache(d *dump, cache interface {
	AddPodGroup(*schedulingv1beta1.PodGroup)
}) {
	for _, pg := range podGroupsOf[d] {
		cache.AddPodGroup(pg)
	}
}

// makePodGroupClaims does what the resourceclaim controller does for PodGroup claims from
// templates (DRAWorkloadResourceClaims): one claim per group claim, owned by the PodGroup, named
// <podgroup>-<claim>-<suffix>, recorded in the status of every pod of the group that uses it.
func makePodGroupClaims(d *dump) {
	if !utilfeature.DefaultFeatureGate.Enabled(features.DRAWorkloadResourceClaims) || !genericWorkload() {
		return
	}
	groups := map[string]*schedulingv1beta1.PodGroup{}
	for _, pg := range podGroupsOf[d] {
		groups[pg.Namespace+"/"+pg.Name] = pg
	}
	templates := map[string]*resourceapi.ResourceClaimTemplate{}
	for _, t := range d.templates {
		templates[t.Namespace+"/"+t.Name] = t
	}
	made := map[string]string{} // namespace/group/claim -> claim name
	// The controller makes a claim for every PodGroup claim from a template (syncPodGroup), used by a
	// pod or not.
	for _, pg := range podGroupsOf[d] {
		for _, pgc := range pg.Spec.ResourceClaims {
			if pgc.ResourceClaimTemplateName == nil {
				continue
			}
			if t := templates[pg.Namespace+"/"+*pgc.ResourceClaimTemplateName]; t != nil {
				makeGroupClaim(d, pg, pgc.Name, t, made)
			}
		}
	}
	for _, pod := range d.pods {
		if pod.Spec.SchedulingGroup == nil || pod.Spec.SchedulingGroup.PodGroupName == nil {
			continue
		}
		pg := groups[pod.Namespace+"/"+*pod.Spec.SchedulingGroup.PodGroupName]
		if pg == nil {
			continue
		}
		if pod.UID == "" {
			pod.UID = types.UID("uid-pod-" + pod.Namespace + "-" + pod.Name)
		}
		for _, pc := range pod.Spec.ResourceClaims {
			if pc.ResourceClaimTemplateName == nil {
				continue
			}
			bindTo, err := resourceclaim.BindTo(pod, pg, &pc)
			if err != nil || bindTo.Resource != "podgroups" {
				continue
			}
			t := templates[pod.Namespace+"/"+*pc.ResourceClaimTemplateName]
			if t == nil {
				continue
			}
			name := makeGroupClaim(d, pg, pc.Name, t, made)
			claimName := name
			pod.Status.ResourceClaimStatuses = append(pod.Status.ResourceClaimStatuses,
				v1.PodResourceClaimStatus{Name: pc.Name, ResourceClaimName: &claimName})
		}
	}
}

// makeGroupClaim makes the claim of PodGroup claim claimName from template t, once (made remembers it),
// and records it in the PodGroup's status; it returns the claim's name.
func makeGroupClaim(d *dump, pg *schedulingv1beta1.PodGroup, claimName string, t *resourceapi.ResourceClaimTemplate, made map[string]string) string {
	key := pg.Namespace + "/" + pg.Name + "/" + claimName
	if name, ok := made[key]; ok {
		return name
	}
	name := pg.Name + "-" + claimName + "-" + suffix("podgroup/"+key)
	made[key] = name
	controller := true
	d.claims = append(d.claims, &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   pg.Namespace,
			UID:         types.UID("uid-claim-" + pg.Namespace + "-" + name),
			Labels:      t.Spec.Labels,
			Annotations: map[string]string{"resource.kubernetes.io/pod-claim-name": claimName},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: schedulingv1beta1.SchemeGroupVersion.String(), Kind: "PodGroup",
				Name: pg.Name, UID: pg.UID, Controller: &controller,
			}},
		},
		Spec: *t.Spec.Spec.DeepCopy(),
	})
	pg.Status.ResourceClaimStatuses = append(pg.Status.ResourceClaimStatuses,
		schedulingv1beta1.PodGroupResourceClaimStatus{Name: claimName, ResourceClaimName: &name})
	return name
}
