package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
)

// The scheduler's default filter timeout (DRASchedulerFilterTimeout) per node.
const defaultTimeout = 10 * time.Second

// Result is shaped like the playground's `allocate -o json` output.
type Result struct {
	Outcome string        `json:"outcome"`
	Node    *string       `json:"node"`
	Message string        `json:"message,omitempty"`
	Claims  []OutputClaim `json:"claims"`
	// Nodes lists each node tried and why it did not fit (the playground's `nodes`).
	Nodes []NodeVerdict `json:"nodes,omitempty"`
	// Variant is the allocator NewAllocator chose. With stable, which gathers pools in Go map
	// order, the allocation runs again over shuffled slice lists: Answers holds every distinct
	// result when they differ (the first is this one).
	Variant string    `json:"variant,omitempty"`
	Answers []*Result `json:"answers,omitempty"`
}

// stableRuns is how often a stable allocation is repeated to see whether its answer depends on map order.
const stableRuns = 6

// maxStableRuns bounds the runs of one stable scenario.
const maxStableRuns = 400

type NodeVerdict struct {
	Node    string `json:"node"`
	Fits    bool   `json:"fits"`
	Message string `json:"message,omitempty"`
}

type OutputClaim struct {
	APIVersion string       `json:"apiVersion"`
	Kind       string       `json:"kind"`
	Metadata   ClaimMeta    `json:"metadata"`
	Spec       any          `json:"spec"`
	Status     *ClaimStatus `json:"status,omitempty"`
}

type ClaimMeta struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

type ClaimStatus struct {
	Allocation *resourceapi.AllocationResult `json:"allocation,omitempty"`
}

func (r *Result) ExitCode() int {
	switch r.Outcome {
	case "allocated":
		return exitAllocated
	case "unsatisfiable", "gave-up":
		return exitUnsatisfiable
	case "panic":
		return 3
	default:
		return exitInvalid
	}
}

func invalid(message string) *Result {
	return &Result{Outcome: "invalid", Message: message, Claims: []OutputClaim{}}
}

// Allocate runs one scenario: every node named (or the one given) in name
// order, the first that fits wins, as `manage.py allocate` does.
// Allocate answers one scenario as kube-scheduler would, with the variant NewAllocator picks.
func Allocate(data []byte, nodeName, gateText string, timeout time.Duration) *Result {
	first := allocateOnce(data, nodeName, gateText, timeout, nil)
	if first.Variant != "stable" {
		return first
	}
	seen := map[string]bool{answerKey(first): true}
	own := *first // a copy: first.Answers must not hold first itself (encoding/json refuses cycles)
	answers := []*Result{&own}
	rng := rand.New(rand.NewPCG(uint64(len(data)), 19))
	// Go's map order is random in every run, so which answers a few runs meet is random too, and
	// a comparison could miss the one the playground shows (a flaky disagreement). Run until no new
	// answer has come for quietRuns(pools) runs in a row: each of the pools' orders then had its
	// chance many times over.
	quiet := quietRuns(poolCount(data))
	for i, lastNew := 1, 0; i < maxStableRuns && (i < stableRuns || i-lastNew < quiet); i++ {
		again := allocateOnce(data, nodeName, gateText, timeout, rng)
		if key := answerKey(again); !seen[key] {
			seen[key] = true
			answers = append(answers, again)
			lastNew = i
		}
	}
	if len(answers) > 1 {
		first.Answers = answers
	}
	return first
}

// quietRuns is how many runs in a row must bring no new answer before the stable allocator's
// answers count as all met: twelve per order the pools can be gathered in.
func quietRuns(pools int) int {
	orders := 1
	for n := 2; n <= pools; n++ {
		orders *= n
		if orders > maxStableRuns {
			return maxStableRuns
		}
	}
	return 12 * orders
}

// poolCount is the number of distinct pools (driver and pool name) among the scenario's slices.
func poolCount(data []byte) int {
	sc, err := decodeScenario(data)
	if err != nil {
		return 0
	}
	pools := map[[2]string]bool{}
	for _, s := range sc.slices {
		pools[[2]string{s.Spec.Driver, s.Spec.Pool.Name}] = true
	}
	return len(pools)
}

func answerKey(r *Result) string {
	data, _ := json.Marshal(struct {
		Outcome string
		Node    *string
		Claims  []OutputClaim
	}{r.Outcome, r.Node, r.Claims})
	return string(data)
}

// variantOf names the allocator NewAllocator picks for these features: the first of stable,
// incubating and experimental whose supported features cover them.
func variantOf(f structured.Features) string {
	if f.ListTypeAttributes || f.OptionalNodeOperations || f.DerivedAttributes || f.CompatibilityGroups {
		return "experimental"
	}
	if f.DeviceBindingAndStatus || f.ConsumableCapacity || f.FractionalCapacityRange {
		return "incubating"
	}
	return "stable"
}

func allocateOnce(data []byte, nodeName, gateText string, timeout time.Duration, shuffle *rand.Rand) (result *Result) {
	defer func() {
		// A panic inside the allocator is a finding, not a crash of the batch.
		if p := recover(); p != nil {
			result = invalid(fmt.Sprintf("oracle panic: %v", p))
			result.Outcome = "panic"
		}
	}()
	gates, err := parseGates(gateText)
	if err != nil {
		return invalid(fmt.Sprintf("--feature-gates: %v", err))
	}
	sc, err := decodeScenario(data)
	if err != nil {
		return invalid(err.Error())
	}
	pending := sc.pendingClaims()
	claimsOut := func(results []resourceapi.AllocationResult) []OutputClaim {
		out := make([]OutputClaim, 0, len(pending))
		for i, c := range pending {
			oc := OutputClaim{
				APIVersion: "resource.k8s.io/v1",
				Kind:       "ResourceClaim",
				Metadata:   ClaimMeta{Name: c.claim.Name, Namespace: c.claim.Namespace},
				Spec:       c.rawSpec,
			}
			if results != nil {
				alloc := results[i]
				oc.Status = &ClaimStatus{Allocation: &alloc}
			}
			out = append(out, oc)
		}
		return out
	}
	fail := func(message string) *Result {
		r := invalid(message)
		r.Claims = claimsOut(nil)
		return r
	}

	features := allocatorFeatures(gates)
	// What the scheduler's PreFilter rejects before the allocator runs: the pod is unschedulable.
	if msg := preFilter(sc, pending, features); msg != "" {
		return &Result{Outcome: "unsatisfiable", Message: msg, Claims: claimsOut(nil)}
	}

	claims := make([]*resourceapi.ResourceClaim, len(pending))
	for i, c := range pending {
		claims[i] = c.claim
	}
	celCache := cel.NewCache(10, cel.Features{
		EnableConsumableCapacity: features.ConsumableCapacity,
		EnableListTypeAttributes: features.ListTypeAttributes,
	})
	ctx := context.Background()
	slices := sc.scheduledSlices(gates)
	if shuffle != nil {
		slices = append([]*resourceapi.ResourceSlice(nil), slices...)
		shuffle.Shuffle(len(slices), func(i, j int) { slices[i], slices[j] = slices[j], slices[i] })
	}
	allocator, err := structured.NewAllocator(ctx, features, allocatedState(sc, features), classLister{sc.classes}, slices, celCache)
	if err != nil {
		return fail(err.Error())
	}
	defer func() {
		if result != nil {
			result.Variant = variantOf(features)
		}
	}()

	var names []string
	if nodeName != "" {
		names = []string{nodeName}
	} else {
		names = sc.nodeNames()
	}
	var verdicts []NodeVerdict
	for _, name := range names {
		node := sc.nodes[name]
		if node == nil {
			node = &v1.Node{}
			node.Name = name
		}
		nodeCtx, cancel := context.WithTimeout(ctx, timeout)
		results, err := allocator.Allocate(nodeCtx, node, claims)
		cancel()
		switch {
		case err != nil && errors.Is(err, structured.ErrFailedAllocationOnNode):
			verdicts = append(verdicts, NodeVerdict{Node: name, Message: err.Error()})
		case err != nil && errors.Is(err, context.DeadlineExceeded):
			verdicts = append(verdicts, NodeVerdict{Node: name, Message: "timed out trying to allocate devices"})
			r := &Result{Outcome: "gave-up", Message: "search gave up: " + err.Error(), Claims: claimsOut(nil), Nodes: verdicts}
			return r
		case err != nil:
			r := fail(err.Error())
			r.Node = &name
			r.Nodes = verdicts
			return r
		case len(results) == 0 && len(claims) > 0:
			verdicts = append(verdicts, NodeVerdict{Node: name, Message: "cannot allocate all claims"})
		default:
			verdicts = append(verdicts, NodeVerdict{Node: name, Fits: true})
			chosen := name
			return &Result{Outcome: "allocated", Node: &chosen, Claims: claimsOut(results), Nodes: verdicts}
		}
	}
	message := "cannot allocate all claims"
	if nodeName != "" && len(verdicts) == 1 {
		message = verdicts[0].Message
	} else {
		message = fmt.Sprintf("0/%d nodes are available", len(verdicts))
	}
	return &Result{Outcome: "unsatisfiable", Message: message, Claims: claimsOut(nil), Nodes: verdicts}
}

// allocatedState is what the scheduler derives from every allocated claim:
// results with admin access occupy nothing; with consumable capacity, a
// result with a share ID is one share of the device and adds its consumed
// capacity; every other result takes the whole device.
func allocatedState(sc *scenario, features structured.Features) structured.AllocatedState {
	state := structured.AllocatedState{
		AllocatedDevices:         sets.New[structured.DeviceID](),
		AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
		AggregatedCapacity:       structured.NewConsumedCapacityCollection(),
	}
	for _, claim := range sc.allocatedClaims {
		for _, r := range claim.Status.Allocation.Devices.Results {
			if r.AdminAccess != nil && *r.AdminAccess {
				continue
			}
			id := structured.MakeDeviceID(r.Driver, r.Pool, r.Device)
			if features.ConsumableCapacity && r.ShareID != nil {
				state.AllocatedSharedDeviceIDs.Insert(structured.MakeSharedDeviceID(id, r.ShareID))
				if r.ConsumedCapacity != nil {
					state.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(id, r.ConsumedCapacity))
				}
				continue
			}
			state.AllocatedDevices.Insert(id)
		}
	}
	return state
}

// preFilter mirrors the scheduler's PreFilter checks on the pod's unallocated
// claims: subrequests need DRAPrioritizedList, every device class must exist.
func preFilter(sc *scenario, pending []*pendingClaim, features structured.Features) string {
	for _, c := range pending {
		for _, req := range c.claim.Spec.Devices.Requests {
			if len(req.FirstAvailable) > 0 && !features.PrioritizedList {
				return fmt.Sprintf("resource claim %s/%s, request %s: has subrequests, but the DRAPrioritizedList feature is disabled",
					c.claim.Namespace, c.claim.Name, req.Name)
			}
		}
	}
	for _, c := range pending {
		for _, req := range c.claim.Spec.Devices.Requests {
			if req.Exactly != nil {
				if name := req.Exactly.DeviceClassName; name != "" && sc.classes[name] == nil {
					return fmt.Sprintf("request %s: device class %s does not exist", req.Name, name)
				}
			}
			for _, sub := range req.FirstAvailable {
				if name := sub.DeviceClassName; name != "" && sc.classes[name] == nil {
					return fmt.Sprintf("request %s/%s: device class %s does not exist", req.Name, sub.Name, name)
				}
			}
		}
	}
	return ""
}

type classLister struct {
	classes map[string]*resourceapi.DeviceClass
}

func (l classLister) List() ([]*resourceapi.DeviceClass, error) {
	names := make([]string, 0, len(l.classes))
	for name := range l.classes {
		names = append(names, name)
	}
	sort.Strings(names)
	out := make([]*resourceapi.DeviceClass, 0, len(names))
	for _, name := range names {
		out = append(out, l.classes[name])
	}
	return out, nil
}

func (l classLister) Get(name string) (*resourceapi.DeviceClass, error) {
	if c := l.classes[name]; c != nil {
		return c, nil
	}
	return nil, fmt.Errorf("deviceclass.resource.k8s.io %q not found", name)
}
