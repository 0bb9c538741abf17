package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sort"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	"k8s.io/dynamic-resource-allocation/deviceclass/extendedresourcecache"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkplugins "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"

	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// podAnswer is what the oracle reports for one pod.
type podAnswer struct {
	Name      string        `json:"name"`
	Namespace string        `json:"namespace"`
	Outcome   string        `json:"outcome"` // bound, scheduled, pending, error
	Node      string        `json:"node,omitempty"`
	Tied      []string      `json:"tied,omitempty"`
	Message   string        `json:"message,omitempty"`
	Nodes     []nodeVerdict `json:"nodes,omitempty"`
	Scores    []nodeScore   `json:"scores,omitempty"`
	Claims    []claimAnswer `json:"claims,omitempty"`
	Queue     *queueVerdict `json:"queue,omitempty"` // asked for with "queue": true (queue.go)
	// NodeAllocatable is the bound pod's status.nodeAllocatableResourceClaimStatuses (DRANodeAllocatableResources).
	NodeAllocatable []v1.NodeAllocatableResourceClaimStatus `json:"nodeAllocatable,omitempty"`
	// Cycle says how the scheduler's own loop handled the pod (a request with "cycle": true; cycle.go).
	Cycle *cycleAnswer `json:"cycle,omitempty"`
}

type nodeVerdict struct {
	Node    string   `json:"node"`
	Fits    bool     `json:"fits"`
	Plugin  string   `json:"plugin,omitempty"`
	Code    string   `json:"code,omitempty"`
	Reasons []string `json:"reasons,omitempty"`
}

type pluginScore struct {
	Raw    int64 `json:"raw"`
	Score  int64 `json:"score"`
	Weight int64 `json:"weight"`
}

type nodeScore struct {
	Node    string                 `json:"node"`
	Total   int64                  `json:"total"`
	Plugins map[string]pluginScore `json:"plugins"`
}

type claimAnswer struct {
	PodClaimName string                                       `json:"podClaimName,omitempty"`
	Extended     bool                                         `json:"extended,omitempty"`
	Name         string                                       `json:"name"`
	Allocation   *resourceapi.AllocationResult                `json:"allocation,omitempty"`
	Error        string                                       `json:"error,omitempty"`
	ReservedFor  []resourceapi.ResourceClaimConsumerReference `json:"reservedFor,omitempty"`
}

// world is one dump loaded into a fake API server, its informers, the scheduler's cache and a
// framework built from the default profile.
type world struct {
	client    *fake.Clientset
	factory   informers.SharedInformerFactory
	cache     internalcache.Cache
	snapshot  *internalcache.Snapshot
	framework framework.Framework
	weights   map[string]int64
}

var metricsRegistered = false // metrics.Register may run once per process

func defaultProfile() (*schedulerapi.KubeSchedulerProfile, error) {
	var versioned configv1.KubeSchedulerConfiguration
	scheme.Scheme.Default(&versioned)
	var cfg schedulerapi.KubeSchedulerConfiguration
	if err := scheme.Scheme.Convert(&versioned, &cfg, nil); err != nil {
		return nil, err
	}
	return &cfg.Profiles[0], nil
}

// suffix stands for the five random characters the apiserver appends to a generateName; here derived
// from seed, so that answers repeat.
func suffix(seed string) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	sum := sha256.Sum256([]byte(seed))
	out := make([]byte, 5)
	for i := range out {
		out[i] = alphabet[int(sum[i])%len(alphabet)]
	}
	return string(out)
}

func newWorld(ctx context.Context, d *dump) (*world, error) {
	if !metricsRegistered {
		metrics.Register()
		metricsRegistered = true
	}
	logger := klog.FromContext(ctx)
	objects := d.objects(func(*v1.Pod) bool { return true })
	client := newFakeClient(objects)
	factory := informers.NewSharedInformerFactory(client, 0)

	claimInformer := factory.Resource().V1().ResourceClaims().Informer()
	claimCache := assumecache.NewAssumeCache(logger, claimInformer, "ResourceClaim", "", nil)
	trackerOpts := resourceslicetracker.Options{
		EnableDeviceTaintRules:   utilfeature.DefaultFeatureGate.Enabled(features.DRADeviceTaintRules),
		EnableConsumableCapacity: utilfeature.DefaultFeatureGate.Enabled(features.DRAConsumableCapacity),
		SliceInformer:            factory.Resource().V1().ResourceSlices(),
		KubeClient:               client,
	}
	if trackerOpts.EnableDeviceTaintRules {
		trackerOpts.TaintInformer = factory.Resource().V1().DeviceTaintRules()
	}
	tracker, err := resourceslicetracker.StartTracker(ctx, trackerOpts)
	if err != nil {
		return nil, err
	}
	draManager := dynamicresources.NewDRAManager(ctx, claimCache, tracker, factory)
	// The scheduler's event handlers feed DeviceClasses to the cache that maps extended resource
	// names to classes (DRAExtendedResource); without them no class backs an extended resource.
	var classesSynced func() bool = func() bool { return true }
	if erCache, ok := draManager.DeviceClassResolver().(*extendedresourcecache.ExtendedResourceCache); ok && erCache != nil {
		registration, err := factory.Resource().V1().DeviceClasses().Informer().AddEventHandler(erCache)
		if err != nil {
			return nil, err
		}
		classesSynced = registration.HasSynced
	}

	profile, err := defaultProfile()
	if err != nil {
		return nil, err
	}
	cache := internalcache.New(ctx, nil, genericWorkload(), false)
	addPodGroupsToCache(d, cache)
	snapshot := internalcache.NewEmptySnapshot()
	fw, err := frameworkruntime.NewFramework(ctx, frameworkplugins.NewInTreeRegistry(), profile,
		frameworkruntime.WithClientSet(client),
		frameworkruntime.WithInformerFactory(factory),
		frameworkruntime.WithSharedDRAManager(draManager),
		frameworkruntime.WithSnapshotSharedLister(snapshot),
		frameworkruntime.WithMutableSnapshotLister(snapshot),
		frameworkruntime.WithEventRecorder(events.NewFakeRecorder(1000)),
		frameworkruntime.WithParallelism(1),
		frameworkruntime.WithMetricsRecorder(metrics.NewMetricsAsyncRecorder(1000, time.Second, ctx.Done())),
		frameworkruntime.WithWaitingPods(frameworkruntime.NewWaitingPodsMap()),
		frameworkruntime.WithPodsInPreBind(frameworkruntime.NewPodsInPreBindMap()),
		frameworkruntime.WithPodGroupManager(cache),
	)
	if err != nil {
		return nil, fmt.Errorf("building the framework: %w", err)
	}
	weights := map[string]int64{}
	for _, p := range fw.ListPlugins().Score.Enabled {
		weights[p.Name] = int64(p.Weight)
	}
	factory.Start(ctx.Done())
	if err := waitForInformers(ctx, factory); err != nil {
		return nil, err
	}
	// The informers have listed everything; wait until their consumers (the claims' assume cache
	// and the slice tracker) have seen it too, as a scheduler that has started would have.
	deadline := time.Now().Add(10 * time.Second)
	for !classesSynced() || !ready(claimCache, tracker, d.claims) {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the claim cache or the slice tracker did not sync")
		}
		time.Sleep(200 * time.Microsecond)
	}
	// The claim tracker learns the allocated devices from the assume cache's events, after the
	// cache itself: wait for it too, or a loaded machine can hand out a device a claim holds.
	for !allocatedSeen(draManager, d.claims) {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the claim tracker did not see every allocated device")
		}
		time.Sleep(200 * time.Microsecond)
	}
	// The scheduler's cache learns the nodes as its informer lists them: by name. (It keeps the
	// size of an image as the first node reporting it gave it.)
	nodes := append([]*v1.Node(nil), d.nodes...)
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	for _, node := range nodes {
		cache.AddNode(logger, node)
	}
	return &world{client: client, factory: factory, cache: cache, snapshot: snapshot, framework: fw, weights: weights}, nil
}

// newFakeClient loads objects into client-go's fake clientset, with what the fake lacks: every write
// gets a new resourceVersion (the assume cache orders claims by it), objects created with
// generateName get a name and objects without a UID get one.
func newFakeClient(objects []runtime.Object) *fake.Clientset {
	for _, o := range objects {
		// The assume cache orders claims by resourceVersion; stored objects always have one.
		if meta, err := apimeta.Accessor(o); err == nil && meta.GetResourceVersion() == "" {
			meta.SetResourceVersion("1")
		}
	}
	client := fake.NewClientset(objects...)
	// The apiserver names objects created with generateName and gives every write a new
	// resourceVersion (the assume cache orders claims by it); the fake one does neither.
	version := 1
	client.PrependReactor("*", "*", func(action clienttesting.Action) (bool, runtime.Object, error) {
		var obj runtime.Object
		switch a := action.(type) {
		case clienttesting.CreateAction:
			obj = a.GetObject()
		case clienttesting.UpdateAction:
			obj = a.GetObject()
		default:
			return false, nil, nil
		}
		meta, err := apimeta.Accessor(obj)
		if err != nil {
			return false, nil, nil
		}
		if action.GetVerb() == "create" && meta.GetName() == "" && meta.GetGenerateName() != "" {
			meta.SetName(meta.GetGenerateName() + suffix(meta.GetNamespace()+"/"+meta.GetGenerateName()))
		}
		if action.GetVerb() == "create" && meta.GetUID() == "" {
			meta.SetUID(types.UID(fmt.Sprintf("uid-%s-%s", meta.GetNamespace(), meta.GetName())))
		}
		version++
		meta.SetResourceVersion(strconv.Itoa(version))
		return false, nil, nil
	})
	return client
}

// waitForInformers waits for every started informer to have listed its objects. The factory's own
// wait polls every 100 ms; the fake API answers in microseconds, so ask again in short slices.
func waitForInformers(ctx context.Context, factory informers.SharedInformerFactory) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		slice, cancel := context.WithTimeout(ctx, time.Millisecond)
		synced := factory.WaitForCacheSync(slice.Done())
		cancel()
		all := true
		for _, ok := range synced {
			all = all && ok
		}
		if all {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the informers did not sync")
		}
	}
}

func ready(claims *assumecache.AssumeCache, tracker *resourceslicetracker.Tracker, want []*resourceapi.ResourceClaim) bool {
	if !tracker.HasSynced() {
		return false
	}
	for _, c := range want {
		if _, err := claims.Get(c.Namespace + "/" + c.Name); err != nil {
			return false
		}
	}
	return true
}

// allocatedSeen says whether the DRA manager lists every device that the input's claims hold whole.
func allocatedSeen(manager *dynamicresources.DefaultDRAManager, claims []*resourceapi.ResourceClaim) bool {
	seen, err := manager.ResourceClaims().ListAllAllocatedDevices()
	if err != nil {
		return false
	}
	for _, c := range claims {
		if c.Status.Allocation == nil {
			continue
		}
		for _, r := range c.Status.Allocation.Devices.Results {
			if (r.AdminAccess != nil && *r.AdminAccess) || r.ShareID != nil {
				continue
			}
			if !seen.Has(structured.MakeDeviceID(r.Driver, r.Pool, r.Device)) {
				return false
			}
		}
	}
	return true
}

func terminal(pod *v1.Pod) bool {
	return pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed
}

// scheduleAll binds the pods that have spec.nodeName, makes the claims of ResourceClaimTemplates
// as the resourceclaim controller would, then schedules every other pod in input order, binding
// each (claims allocated by PreBind) before the next.
func scheduleAll(ctx context.Context, d *dump) ([]podAnswer, error) {
	logger := klog.FromContext(ctx)
	defer delete(podGroupsOf, d)
	makePodGroupClaims(d)
	makeTemplateClaims(d)
	var queued map[string]queueVerdict
	if reportQueue {
		var err error
		if queued, err = queueVerdicts(ctx, d); err != nil {
			return nil, fmt.Errorf("the scheduling queue: %w", err)
		}
	}
	w, err := newWorld(ctx, d)
	if err != nil {
		return nil, err
	}
	answers := make([]podAnswer, 0, len(d.pods))
	for _, pod := range d.pods {
		if pod.Spec.NodeName != "" && !terminal(pod) {
			if err := w.cache.AddPod(logger, pod); err != nil {
				return nil, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
			}
		}
	}
	for _, pod := range d.pods {
		answer := podAnswer{Name: pod.Name, Namespace: pod.Namespace}
		if pod.Spec.NodeName != "" {
			answer.Outcome = "bound"
			answer.Node = pod.Spec.NodeName
		} else {
			w.scheduleOne(ctx, pod, &answer)
		}
		answer.Claims = w.claimsOf(ctx, pod)
		if current, err := w.client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{}); err == nil {
			answer.NodeAllocatable = current.Status.NodeAllocatableResourceClaimStatuses
		}
		if verdict, ok := queued[pod.Namespace+"/"+pod.Name]; ok {
			answer.Queue = &verdict
		}
		answers = append(answers, answer)
	}
	return answers, nil
}

// makeTemplateClaims does what the resourceclaim controller does for a pod claim from a template:
// a claim owned by the pod, named <pod>-<claim>-<suffix>, recorded in the pod's status.
func makeTemplateClaims(d *dump) {
	templates := map[string]*resourceapi.ResourceClaimTemplate{}
	for _, t := range d.templates {
		templates[t.Namespace+"/"+t.Name] = t
	}
	for _, pod := range d.pods {
		if pod.UID == "" {
			pod.UID = types.UID("uid-pod-" + pod.Namespace + "-" + pod.Name)
		}
		have := map[string]bool{}
		for _, s := range pod.Status.ResourceClaimStatuses {
			have[s.Name] = true
		}
		for _, pc := range pod.Spec.ResourceClaims {
			if pc.ResourceClaimTemplateName == nil || have[pc.Name] {
				continue
			}
			t := templates[pod.Namespace+"/"+*pc.ResourceClaimTemplateName]
			if t == nil {
				continue // the scheduler waits for the claim, as for a missing template
			}
			name := pod.Name + "-" + pc.Name + "-" + suffix(pod.Namespace+"/"+pod.Name+"/"+pc.Name)
			controller := true
			claim := &resourceapi.ResourceClaim{
				ObjectMeta: metav1.ObjectMeta{
					Name:        name,
					Namespace:   pod.Namespace,
					UID:         types.UID("uid-claim-" + pod.Namespace + "-" + name),
					Labels:      t.Spec.Labels,
					Annotations: map[string]string{"resource.kubernetes.io/pod-claim-name": pc.Name},
					OwnerReferences: []metav1.OwnerReference{{
						APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID,
						Controller: &controller, BlockOwnerDeletion: &controller,
					}},
				},
				Spec: *t.Spec.Spec.DeepCopy(),
			}
			d.claims = append(d.claims, claim)
			claimName := name
			pod.Status.ResourceClaimStatuses = append(pod.Status.ResourceClaimStatuses,
				v1.PodResourceClaimStatus{Name: pc.Name, ResourceClaimName: &claimName})
		}
	}
}

func (w *world) scheduleOne(ctx context.Context, pod *v1.Pod, answer *podAnswer) {
	logger := klog.FromContext(ctx)
	if err := w.cache.UpdateSnapshot(logger, w.snapshot); err != nil {
		answer.Outcome, answer.Message = "error", err.Error()
		return
	}
	allNodes, err := w.snapshot.NodeInfos().List()
	if err != nil || len(allNodes) == 0 {
		answer.Outcome, answer.Message = "pending", "no nodes available to schedule pods"
		return
	}
	state := framework.NewCycleState()
	host, _ := decide(ctx, w.framework, w.weights, state, pod, allNodes, answer)
	if host == "" {
		return
	}
	answer.Node = host
	w.bind(ctx, state, pod, host, answer)
}

// decide runs the scheduling algorithm for one pod on the given nodes with the given cycle state,
// as schedulePod does, except that every node is filtered and the first by name is taken among the
// best scored: PreFilter, Filter, PreScore, Score. It fills the answer's nodes, scores and tied nodes
// and returns the host, or "" with the answer's outcome and message set (and the FitError when no
// node fits).
func decide(ctx context.Context, fw framework.Framework, weights map[string]int64, state fwk.CycleState, pod *v1.Pod, allNodes []fwk.NodeInfo, answer *podAnswer) (string, *framework.FitError) {
	allNodes = append([]fwk.NodeInfo(nil), allNodes...)
	sort.Slice(allNodes, func(i, j int) bool { return allNodes[i].Node().Name < allNodes[j].Node().Name })
	diagnosis := framework.Diagnosis{NodeToStatus: framework.NewDefaultNodeToStatus()}

	preRes, status, unschedulable := fw.RunPreFilterPlugins(ctx, state, pod)
	diagnosis.UnschedulablePlugins = unschedulable
	var feasible []fwk.NodeInfo
	if !status.IsSuccess() {
		if !status.IsRejected() {
			answer.Outcome, answer.Message = "error", status.AsError().Error()
			return "", nil
		}
		diagnosis.NodeToStatus.SetAbsentNodesStatus(status)
		diagnosis.PreFilterMsg = status.Message()
		diagnosis.AddPluginStatus(status)
		for _, n := range allNodes {
			answer.Nodes = append(answer.Nodes, verdict(n.Node().Name, status))
		}
	} else {
		nodes := allNodes
		if !preRes.AllNodes() {
			nodes = nil
			absent := fwk.NewStatus(fwk.UnschedulableAndUnresolvable,
				fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(unschedulable)))
			diagnosis.NodeToStatus.SetAbsentNodesStatus(absent)
			for _, n := range allNodes {
				if preRes.NodeNames.Has(n.Node().Name) {
					nodes = append(nodes, n)
				}
			}
		}
		chosen := map[string]bool{}
		for _, n := range nodes {
			chosen[n.Node().Name] = true
		}
		for _, n := range allNodes {
			name := n.Node().Name
			if !chosen[name] {
				answer.Nodes = append(answer.Nodes, verdict(name, diagnosis.NodeToStatus.AbsentNodesStatus()))
				continue
			}
			s := fw.RunFilterPlugins(ctx, state, pod, n)
			if s.Code() == fwk.Error {
				answer.Outcome, answer.Message = "error", s.AsError().Error()
				return "", nil
			}
			answer.Nodes = append(answer.Nodes, verdict(name, s))
			if s.IsSuccess() {
				feasible = append(feasible, n)
			} else {
				diagnosis.NodeToStatus.Set(name, s)
				diagnosis.AddPluginStatus(s)
			}
		}
	}
	if len(feasible) == 0 {
		fitErr := &framework.FitError{Pod: pod, NumAllNodes: len(allNodes), Diagnosis: diagnosis}
		answer.Outcome, answer.Message = "pending", fitErr.Error()
		return "", fitErr
	}
	host := feasible[0].Node().Name
	answer.Tied = []string{host}
	if len(feasible) > 1 {
		scores, err := score(ctx, fw, weights, state, pod, feasible)
		if err != nil {
			answer.Outcome, answer.Message = "error", err.Error()
			return "", nil
		}
		answer.Scores = scores
		best := int64(-1 << 62)
		answer.Tied = nil
		for _, s := range scores {
			if s.Total > best {
				best, answer.Tied = s.Total, nil
			}
			if s.Total == best {
				answer.Tied = append(answer.Tied, s.Node)
			}
		}
		sort.Strings(answer.Tied)
		host = answer.Tied[0] // the scheduler picks one at random: the first by name keeps later pods comparable
	}
	return host, nil
}

func score(ctx context.Context, fw framework.Framework, weights map[string]int64, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) ([]nodeScore, error) {
	if s := fw.RunPreScorePlugins(ctx, state, pod, nodes); !s.IsSuccess() {
		return nil, s.AsError()
	}
	all := make([]fwk.NodePluginScores, len(nodes))
	for i, n := range nodes {
		raw, s := fw.RunRawScorePlugins(ctx, state, pod, n)
		if !s.IsSuccess() {
			return nil, s.AsError()
		}
		all[i] = fwk.NodePluginScores{Name: n.Node().Name, RawScores: raw}
	}
	raws := make([]map[string]int64, len(all))
	for i, n := range all {
		raws[i] = map[string]int64{}
		for _, r := range n.RawScores {
			raws[i][r.Name] = r.Score
		}
	}
	if s := fw.NormalizeScores(ctx, state, pod, all); !s.IsSuccess() {
		return nil, s.AsError()
	}
	out := make([]nodeScore, len(all))
	for i, n := range all {
		ns := nodeScore{Node: n.Name, Total: n.TotalScore, Plugins: map[string]pluginScore{}}
		for _, s := range n.Scores {
			weight := weights[s.Name]
			normalised := s.Score
			if weight != 0 {
				normalised = s.Score / weight
			}
			ns.Plugins[s.Name] = pluginScore{Raw: raws[i][s.Name], Score: normalised, Weight: weight}
		}
		out[i] = ns
	}
	return out, nil
}

// bind assumes the pod on the host, runs Reserve and PreBind (DynamicResources writes the claims'
// allocations there) and then binds it, as the binding cycle does.
func (w *world) bind(ctx context.Context, state fwk.CycleState, pod *v1.Pod, host string, answer *podAnswer) {
	logger := klog.FromContext(ctx)
	assumed := pod.DeepCopy()
	assumed.Spec.NodeName = host
	if utilfeature.DefaultFeatureGate.Enabled(features.DRANodeAllocatableResources) {
		// As schedulingCycle does before it assumes the pod: the node-allocatable resources that
		// DynamicResources' Filter computed for this node, so that the cache counts them.
		assumed.Status.NodeAllocatableResourceClaimStatuses =
			dynamicresources.ExtractPodNodeAllocatableResourceClaimStatus(logger, state, host)
	}
	if err := w.cache.AssumePod(logger, assumed); err != nil {
		answer.Outcome, answer.Message = "error", err.Error()
		return
	}
	if s := w.framework.RunReservePluginsReserve(ctx, state, assumed, host); !s.IsSuccess() {
		w.framework.RunReservePluginsUnreserve(ctx, state, assumed, host)
		_ = w.cache.ForgetPod(logger, assumed)
		answer.Outcome, answer.Message = "error", "reserve: "+s.Message()
		return
	}
	if s := w.framework.RunPreBindPreFlights(ctx, state, assumed, host); s.Code() == fwk.Error || s.IsRejected() {
		answer.Outcome, answer.Message = "error", "prebind preflight: "+s.Message()
		return
	}
	if s := w.framework.RunPreBindPlugins(ctx, state, assumed, host); !s.IsSuccess() {
		w.framework.RunReservePluginsUnreserve(ctx, state, assumed, host)
		_ = w.cache.ForgetPod(logger, assumed)
		answer.Outcome, answer.Message = "error", "prebind: "+s.Message()
		return
	}
	// Bind: the API object gets spec.nodeName (the fake clientset has no binding subresource).
	current, err := w.client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	if err == nil {
		current.Spec.NodeName = host
		_, err = w.client.CoreV1().Pods(pod.Namespace).Update(ctx, current, metav1.UpdateOptions{})
	}
	if err != nil {
		answer.Outcome, answer.Message = "error", "bind: "+err.Error()
		return
	}
	answer.Outcome = "scheduled"
	w.waitForClaims(ctx, pod)
}

// waitForClaims waits until the claim informer has seen what PreBind wrote, so the next pod's
// cycle sees these devices in use, as the scheduler would by then.
func (w *world) waitForClaims(ctx context.Context, pod *v1.Pod) {
	lister := w.factory.Resource().V1().ResourceClaims().Lister()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		api, err := w.client.ResourceV1().ResourceClaims(pod.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return
		}
		synced := true
		for _, c := range api.Items {
			seen, err := lister.ResourceClaims(c.Namespace).Get(c.Name)
			if err != nil || seen.ResourceVersion != c.ResourceVersion {
				synced = false
				break
			}
		}
		if synced {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func (w *world) claimsOf(ctx context.Context, pod *v1.Pod) []claimAnswer {
	current, err := w.client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		current = pod
	}
	names := map[string]string{}
	for _, s := range pod.Status.ResourceClaimStatuses {
		if s.ResourceClaimName != nil {
			names[s.Name] = *s.ResourceClaimName
		}
	}
	var out []claimAnswer
	get := func(a claimAnswer) claimAnswer {
		claim, err := w.client.ResourceV1().ResourceClaims(pod.Namespace).Get(ctx, a.Name, metav1.GetOptions{})
		if err != nil {
			a.Error = err.Error()
		} else {
			a.Allocation = claim.Status.Allocation
			if reportReservations {
				a.ReservedFor = claim.Status.ReservedFor
			}
		}
		return a
	}
	for _, pc := range pod.Spec.ResourceClaims {
		name := names[pc.Name]
		if pc.ResourceClaimName != nil {
			name = *pc.ResourceClaimName
		}
		if name == "" {
			out = append(out, claimAnswer{PodClaimName: pc.Name, Error: "no claim"})
			continue
		}
		out = append(out, get(claimAnswer{PodClaimName: pc.Name, Name: name}))
	}
	if s := current.Status.ExtendedResourceClaimStatus; s != nil {
		out = append(out, get(claimAnswer{Extended: true, Name: s.ResourceClaimName}))
	}
	return out
}

func verdict(node string, s *fwk.Status) nodeVerdict {
	if s.IsSuccess() {
		return nodeVerdict{Node: node, Fits: true}
	}
	return nodeVerdict{Node: node, Plugin: s.Plugin(), Code: s.Code().String(), Reasons: s.Reasons()}
}
