package main

// The scheduling queue's view of a dump's pending pods (a request with "queue": true).
//
// The pod-by-pod oracle schedules every pending pod on its own, in input order. With GenericWorkload
// the real scheduler does not: its queue takes a pod that names a schedulingGroup as a member of
// that pod group, pops the group's pending pods together as one entity, and schedules them in one
// pod group cycle (all or none bound, for a gang); its GangScheduling PreEnqueue keeps a gang's pods
// out of the queue until minCount of them exist. Here the real queue (backend/queue, with the
// profile's sort and PreEnqueue plugins, on a second world built from the same dump so the first
// stays as the pod-by-pod cycle left it) is given every pending pod and every PodGroup, as the
// scheduler's event handlers give them, and popped until its active queue is empty. Per pod:
//
//	"queue": {"entity": "pod"}       popped on its own (scheduled pod by pod, as this oracle does)
//	         {"entity": "podGroup"}  popped in a pod group entity (scheduled in the group's cycle), with
//	                                 "minCount": the group's gang minCount when its policy is a gang
//	         {"entity": "gated"}     never popped (PreEnqueue keeps it out: a gang short of minCount
//	                                 pods, a PodGroup that does not exist)

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	internalqueue "k8s.io/kubernetes/pkg/scheduler/backend/queue"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

type queueVerdict struct {
	Entity   string `json:"entity"`
	MinCount *int32 `json:"minCount,omitempty"`
}

// queueVerdicts pops the real scheduling queue for the dump's pending pods; keyed by namespace/name.
func queueVerdicts(ctx context.Context, d *dump) (map[string]queueVerdict, error) {
	logger := klog.FromContext(ctx)
	w, err := newWorld(ctx, d)
	if err != nil {
		return nil, err
	}
	plugins := map[string]fwk.PreEnqueuePlugin{}
	for _, p := range w.framework.PreEnqueuePlugins() {
		plugins[p.Name()] = p
	}
	q := internalqueue.NewSchedulingQueue(w.framework.QueueSortFunc(), w.factory,
		internalqueue.WithPreEnqueuePluginMap(map[string]map[string]fwk.PreEnqueuePlugin{w.framework.ProfileName(): plugins}),
		internalqueue.WithPodLister(w.factory.Core().V1().Pods().Lister()),
		internalqueue.WithMetricsRecorder(metrics.NewMetricsAsyncRecorder(1000, time.Second, ctx.Done())))
	defer q.Close()
	for _, pg := range podGroupsOf[d] {
		q.AddPodGroup(logger, pg)
	}
	var pending []*v1.Pod
	for _, pod := range d.pods {
		if pod.Spec.NodeName != "" && !terminal(pod) {
			if err := w.cache.AddPod(logger, pod); err != nil {
				return nil, err
			}
		} else if pod.Spec.NodeName == "" && !terminal(pod) {
			pending = append(pending, pod)
			w.cache.AddPodGroupMember(pod)
		}
	}
	for _, pod := range pending {
		q.Add(ctx, pod)
	}
	verdicts := map[string]queueVerdict{}
	for len(q.PodsInActiveQ()) > 0 {
		entity, err := q.Pop(logger)
		if err != nil {
			return nil, err
		}
		verdict := queueVerdict{Entity: "pod"}
		if group, ok := entity.(*framework.QueuedPodGroupInfo); ok {
			verdict.Entity = "podGroup"
			if pg := group.PodGroup; pg != nil && pg.Spec.SchedulingPolicy.Gang != nil {
				count := pg.Spec.SchedulingPolicy.Gang.MinCount
				verdict.MinCount = &count
			}
		}
		entity.ForEachPodInfo(func(info *framework.QueuedPodInfo) bool {
			verdicts[info.Pod.Namespace+"/"+info.Pod.Name] = verdict
			q.Done(info.Pod.UID)
			return true
		})
	}
	for _, pod := range pending {
		if _, popped := verdicts[pod.Namespace+"/"+pod.Name]; !popped {
			verdicts[pod.Namespace+"/"+pod.Name] = queueVerdict{Entity: "gated"}
		}
	}
	return verdicts, nil
}
