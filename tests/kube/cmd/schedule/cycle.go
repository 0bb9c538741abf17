package main

// The scheduler's own loop on a dump (a request with "cycle": true).
//
// The pod-by-pod oracle schedules every pending pod on its own, in input order. Here a real
// kube-scheduler (scheduler.New: its queue, its event handlers, its cache, its DRA manager, its
// ScheduleOne with scheduleOnePod and scheduleOnePodGroup, its failure handler and binding cycles)
// runs on the dump's objects in a fake API server. Bound pods and every other object are there from
// the start; the pending pods are then created one after another in input order, each waited for
// until the queue holds it, as pods created in that order would arrive. Then ScheduleOne runs while
// the active queue holds anything; after each, the oracle waits until the bindings it
// started are done and the informers have seen their writes. Two things are replaced, so that
// answers repeat and compare with the pod-by-pod oracle: SchedulePod (the scheduler's field for its
// per-pod algorithm) is the oracle's decide (every node filtered, the first by name among the best
// scored, where schedulePod picks at random among ties), and the backoff is an hour, so a pod that
// failed is not tried again. The failure handler is wrapped to record the status each pod got (the
// message its FailedScheduling event and its PodScheduled condition carry), and the queue's Pop to
// record which entity each pod came in.
//
// Per pod, "cycle":
//
//	entity    "pod" (popped alone), "podGroup" (popped with its pod group), "gated" (never popped:
//	          PreEnqueue keeps it out; "gate" and "gatePlugin" say why), "bound" (had spec.nodeName)
//	podGroup  the pod's PodGroup, minCount the gang's minCount when its policy is a gang
//	turn      the how-manieth entity the queue popped (1 for the first), order the pod's place in
//	          its group's cycle (1 for the first tried)
//	status    the code of the status the failure handler got, event its whole message (with
//	          DefaultPreemption's part for a pod popped alone); the answer's "message" leaves the
//	          preemption part out, as the pod-by-pod oracle does
//
// and "podGroups" beside "pods": each PodGroup's PodGroupInitiallyScheduled condition as the
// scheduler wrote it.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
)

type cycleAnswer struct {
	Entity     string `json:"entity"`
	PodGroup   string `json:"podGroup,omitempty"`
	MinCount   *int32 `json:"minCount,omitempty"`
	Turn       int    `json:"turn,omitempty"`
	Order      int    `json:"order,omitempty"`
	Status     string `json:"status,omitempty"`
	Event      string `json:"event,omitempty"`
	Gate       string `json:"gate,omitempty"`
	GatePlugin string `json:"gatePlugin,omitempty"`
}

type podGroupAnswer struct {
	Name      string            `json:"name"`
	Namespace string            `json:"namespace"`
	Condition *metav1.Condition `json:"condition,omitempty"`
}

// reportCycle is set while a request with "cycle": true is answered.
var reportCycle bool

// failure is what the failure handler got for one pod.
type failure struct {
	code, message, event string
}

// runScheduler answers a dump with the scheduler's own loop (see the top of this file).
func runScheduler(ctx context.Context, d *dump) ([]podAnswer, []podGroupAnswer, error) {
	defer delete(podGroupsOf, d)
	makePodGroupClaims(d)
	makeTemplateClaims(d)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	logger := klog.FromContext(ctx)

	var pending []*v1.Pod
	for _, pod := range d.pods {
		if pod.Spec.NodeName == "" {
			pending = append(pending, pod)
		}
	}
	objects := d.objects(func(pod *v1.Pod) bool { return pod.Spec.NodeName != "" })
	for _, o := range podGroupsOf[d] {
		objects = append(objects, o)
	}
	client := newFakeClient(objects)
	// The fake clientset takes a binding as a no-op; the apiserver sets the pod's spec.nodeName.
	client.PrependReactor("create", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		create, ok := action.(clienttesting.CreateAction)
		if !ok || action.GetSubresource() != "binding" {
			return false, nil, nil
		}
		binding, ok := create.GetObject().(*v1.Binding)
		if !ok {
			return false, nil, nil
		}
		gvr := v1.SchemeGroupVersion.WithResource("pods")
		obj, err := client.Tracker().Get(gvr, action.GetNamespace(), binding.Name)
		if err != nil {
			return true, nil, err
		}
		pod := obj.(*v1.Pod).DeepCopy()
		pod.Spec.NodeName = binding.Target.Name
		return true, binding, client.Tracker().Update(gvr, pod, action.GetNamespace())
	})
	factory := informers.NewSharedInformerFactory(client, 0)
	snapshot := internalcache.NewEmptySnapshot()
	sched, err := scheduler.New(ctx, client, factory, nil,
		func(string) events.EventRecorderLogger { return &events.FakeRecorder{} },
		scheduler.WithNodeInfoSnapshot(snapshot),
		scheduler.WithPodInitialBackoffSeconds(3600),
		scheduler.WithPodMaxBackoffSeconds(3600))
	if err != nil {
		return nil, nil, fmt.Errorf("building the scheduler: %w", err)
	}
	profile := sched.Profiles[v1.DefaultSchedulerName]
	// The pod group post filter's words (DefaultPreemption's and DynamicResources' PodGroupPostFilter)
	// end the message of a failed group's pods; the answer's message leaves them out, as it leaves out
	// DefaultPreemption's part for a pod alone.
	var postFilter []string
	var mu sync.Mutex
	sched.Profiles[v1.DefaultSchedulerName] = &recordingFramework{Framework: profile, said: &postFilter, mu: &mu}
	weights := map[string]int64{}
	for _, p := range profile.ListPlugins().Score.Enabled {
		weights[p.Name] = int64(p.Weight)
	}

	decisions := map[string]*podAnswer{}
	failures := map[string]failure{}
	cycles := map[string]*cycleAnswer{}
	key := func(pod *v1.Pod) string { return pod.Namespace + "/" + pod.Name }

	sched.SchedulePod = func(ctx context.Context, f framework.Framework, state fwk.CycleState, podInfo *framework.QueuedPodInfo) (scheduler.ScheduleResult, error) {
		all, err := snapshot.NodeInfos().List()
		if err != nil {
			return scheduler.ScheduleResult{}, err
		}
		if len(all) == 0 {
			return scheduler.ScheduleResult{}, scheduler.ErrNoNodesAvailable
		}
		a := &podAnswer{}
		host, fitErr := decide(ctx, f, weights, state, podInfo.Pod, all, a)
		mu.Lock()
		decisions[key(podInfo.Pod)] = a
		mu.Unlock()
		switch {
		case host != "":
			return scheduler.ScheduleResult{SuggestedHost: host, EvaluatedNodes: len(all), FeasibleNodes: len(a.Scores) + 1}, nil
		case fitErr != nil:
			return scheduler.ScheduleResult{}, fitErr
		default:
			return scheduler.ScheduleResult{}, errors.New(a.Message)
		}
	}
	handleFailure := sched.FailureHandler
	sched.FailureHandler = func(ctx context.Context, f framework.Framework, podInfo *framework.QueuedPodInfo, status *fwk.Status, nominating *fwk.NominatingInfo, start time.Time) {
		got := failure{code: status.Code().String(), message: status.Message(), event: status.Message()}
		mu.Lock()
		for _, said := range postFilter {
			got.message = strings.TrimSuffix(got.message, ", "+said)
		}
		mu.Unlock()
		var fitErr *framework.FitError
		if errors.As(status.AsError(), &fitErr) && fitErr.Diagnosis.PostFilterMsg != "" {
			plain := *fitErr
			plain.Diagnosis.PostFilterMsg = ""
			got.message = plain.Error()
		}
		mu.Lock()
		failures[key(podInfo.Pod)] = got
		mu.Unlock()
		handleFailure(ctx, f, podInfo, status, nominating, start)
	}
	pop := sched.NextEntity
	turn := 0
	sched.NextEntity = func(logger klog.Logger) (framework.QueuedEntityInfo, error) {
		entity, err := pop(logger)
		if err != nil || entity == nil {
			return entity, err
		}
		turn++
		verdict := cycleAnswer{Entity: "pod", Turn: turn}
		if group, ok := entity.(*framework.QueuedPodGroupInfo); ok {
			verdict.Entity = "podGroup"
			if pg := group.PodGroup; pg != nil {
				verdict.PodGroup = pg.Name
				if pg.Spec.SchedulingPolicy.Gang != nil {
					count := pg.Spec.SchedulingPolicy.Gang.MinCount
					verdict.MinCount = &count
				}
			}
		}
		order := 0
		mu.Lock()
		entity.ForEachPodInfo(func(info *framework.QueuedPodInfo) bool {
			v := verdict
			if v.Entity == "podGroup" {
				order++
				v.Order = order
			}
			cycles[key(info.Pod)] = &v
			return true
		})
		mu.Unlock()
		return entity, nil
	}

	factory.Start(ctx.Done())
	if err := waitForInformers(ctx, factory); err != nil {
		return nil, nil, err
	}
	if err := sched.WaitForHandlersSync(ctx); err != nil {
		return nil, nil, err
	}
	if err := waitForDRA(profile, d); err != nil {
		return nil, nil, err
	}
	sched.SchedulingQueue.Run(logger)
	defer sched.SchedulingQueue.Close()
	if sched.APIDispatcher != nil {
		sched.APIDispatcher.Run(logger)
		defer sched.APIDispatcher.Close()
	}

	for _, pod := range pending {
		if _, err := client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return nil, nil, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		if err := waitUntil(func() bool { return queued(sched, pod.UID) }); err != nil {
			return nil, nil, fmt.Errorf("pod %s/%s never reached the scheduling queue", pod.Namespace, pod.Name)
		}
	}
	// The event handlers move a gang's gated pods to the active queue when its last pod arrives, after
	// that pod is queued: wait until every pod that PreEnqueue lets in is active.
	if err := waitUntil(func() bool {
		active := map[types.UID]bool{}
		for _, p := range sched.SchedulingQueue.PodsInActiveQ() {
			active[p.UID] = true
		}
		for _, pod := range pending {
			if plugin, _ := gate(ctx, profile, pod); !active[pod.UID] && plugin == "" {
				return false
			}
		}
		return true
	}); err != nil {
		return nil, nil, fmt.Errorf("the scheduling queue did not take the pods in")
	}
	// Pods that fail go back with an hour's backoff, so the active queue empties: every pod is tried
	// once, except the pods a pod group cycle that bound others left, which the queue puts back at
	// once (AddAttemptedPodGroupIfNeeded), to be tried again in the next cycle.
	for cycles := 0; len(sched.SchedulingQueue.PodsInActiveQ()) > 0; cycles++ {
		if cycles > 10*len(pending)+10 {
			return nil, nil, fmt.Errorf("the scheduling queue did not empty")
		}
		sched.ScheduleOne(ctx)
		if err := waitUntil(func() bool { return settled(ctx, sched, client, factory, pending) }); err != nil {
			return nil, nil, fmt.Errorf("the bindings did not finish")
		}
	}

	answers := make([]podAnswer, 0, len(d.pods))
	for _, pod := range d.pods {
		a := podAnswer{Name: pod.Name, Namespace: pod.Namespace}
		k := key(pod)
		mu.Lock()
		if got := decisions[k]; got != nil {
			a.Tied, a.Nodes, a.Scores = got.Tied, got.Nodes, got.Scores
		}
		a.Cycle = cycles[k]
		fail, failed := failures[k]
		mu.Unlock()
		current, err := client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		switch {
		case pod.Spec.NodeName != "":
			a.Outcome, a.Node = "bound", pod.Spec.NodeName
			a.Cycle = &cycleAnswer{Entity: "bound"}
		case err == nil && current.Spec.NodeName != "":
			a.Outcome, a.Node = "scheduled", current.Spec.NodeName
		case failed:
			a.Outcome, a.Message = "pending", fail.message
			if fail.code == fwk.Error.String() {
				a.Outcome = "error"
			}
			a.Cycle.Status, a.Cycle.Event = fail.code, fail.event
		default:
			a.Outcome = "pending"
			if a.Cycle == nil {
				a.Cycle = &cycleAnswer{Entity: "gated"}
				a.Cycle.GatePlugin, a.Cycle.Gate = gate(ctx, profile, pod)
			}
		}
		if a.Cycle != nil && a.Cycle.PodGroup == "" && pod.Spec.SchedulingGroup != nil && pod.Spec.SchedulingGroup.PodGroupName != nil {
			a.Cycle.PodGroup = *pod.Spec.SchedulingGroup.PodGroupName
		}
		a.Claims = (&world{client: client}).claimsOf(ctx, pod)
		if err == nil {
			a.NodeAllocatable = current.Status.NodeAllocatableResourceClaimStatuses
		}
		answers = append(answers, a)
	}
	var groups []podGroupAnswer
	for _, pg := range podGroupsOf[d] {
		g := podGroupAnswer{Name: pg.Name, Namespace: pg.Namespace}
		if current, err := client.SchedulingV1beta1().PodGroups(pg.Namespace).Get(ctx, pg.Name, metav1.GetOptions{}); err == nil {
			for i := range current.Status.Conditions {
				if current.Status.Conditions[i].Type == "PodGroupInitiallyScheduled" {
					g.Condition = &current.Status.Conditions[i]
				}
			}
		}
		groups = append(groups, g)
	}
	return answers, groups, nil
}

// waitUntil polls done for up to ten seconds.
func waitUntil(done func() bool) error {
	deadline := time.Now().Add(10 * time.Second)
	for !done() {
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out")
		}
		time.Sleep(200 * time.Microsecond)
	}
	return nil
}

// waitForDRA waits until the profile's DRA manager knows every claim and every device they hold.
func waitForDRA(profile framework.Framework, d *dump) error {
	manager, ok := profile.SharedDRAManager().(*dynamicresources.DefaultDRAManager)
	if !ok || manager == nil {
		return nil
	}
	return waitUntil(func() bool {
		for _, c := range d.claims {
			if _, err := manager.ResourceClaims().Get(c.Namespace, c.Name); err != nil {
				return false
			}
		}
		return allocatedSeen(manager, d.claims)
	})
}

// queued says whether the scheduling queue holds the pod (active, backing off, unschedulable, gated
// or waiting for its pod group).
func queued(sched *scheduler.Scheduler, uid types.UID) bool {
	pods, _ := sched.SchedulingQueue.PendingPods()
	for _, p := range pods {
		if p.UID == uid {
			return true
		}
	}
	return false
}

// settled says whether every binding the last cycle started is done (no pod left assumed) and the
// claim informer has seen what PreBind wrote.
func settled(ctx context.Context, sched *scheduler.Scheduler, client *fake.Clientset, factory informers.SharedInformerFactory, pods []*v1.Pod) bool {
	for _, pod := range pods {
		if assumed, err := sched.Cache.IsAssumedPod(pod); err != nil || assumed {
			return false
		}
	}
	api, err := client.ResourceV1().ResourceClaims("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return false
	}
	lister := factory.Resource().V1().ResourceClaims().Lister()
	for _, c := range api.Items {
		seen, err := lister.ResourceClaims(c.Namespace).Get(c.Name)
		if err != nil || seen.ResourceVersion != c.ResourceVersion {
			return false
		}
	}
	return true
}

// gate runs the profile's PreEnqueue plugins on a pod that was never popped: the first that keeps it
// out and its message.
func gate(ctx context.Context, profile framework.Framework, pod *v1.Pod) (string, string) {
	for _, p := range profile.PreEnqueuePlugins() {
		if s := p.PreEnqueue(ctx, pod); !s.IsSuccess() {
			return p.Name(), s.Message()
		}
	}
	return "", ""
}

// recordingFramework is the profile's framework, recording what the pod group post filter says.
type recordingFramework struct {
	framework.Framework
	said *[]string
	mu   *sync.Mutex
}

func (f *recordingFramework) RunPodGroupPostFilterPlugins(ctx context.Context, state *framework.CycleState, info fwk.PodGroupInfo, schedule fwk.PodGroupSchedulingFunc) (*fwk.PodGroupPostFilterResult, *fwk.Status) {
	result, status := f.Framework.RunPodGroupPostFilterPlugins(ctx, state, info, schedule)
	if said := status.String(); said != "" {
		f.mu.Lock()
		*f.said = append(*f.said, said)
		f.mu.Unlock()
	}
	return result, status
}

// objects lists the dump's objects for the fake API server, kind by kind, the pods that keep says.
func (d *dump) objects(keep func(*v1.Pod) bool) []runtime.Object {
	var objects []runtime.Object
	for _, o := range d.nodes {
		objects = append(objects, o)
	}
	for _, o := range d.namespaces {
		objects = append(objects, o)
	}
	for _, o := range d.pods {
		if keep(o) {
			objects = append(objects, o)
		}
	}
	for _, o := range d.classes {
		objects = append(objects, o)
	}
	for _, o := range d.slices {
		objects = append(objects, o)
	}
	for _, o := range d.claims {
		objects = append(objects, o)
	}
	for _, o := range d.templates {
		objects = append(objects, o)
	}
	for _, o := range d.taintRules {
		objects = append(objects, o)
	}
	return objects
}
