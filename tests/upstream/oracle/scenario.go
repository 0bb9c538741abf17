package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/structured"
	yaml3 "sigs.k8s.io/yaml/goyaml.v3"
)

// scenario holds the objects of one scenario file, in input order.
type scenario struct {
	classes         map[string]*resourceapi.DeviceClass
	slices          []*resourceapi.ResourceSlice
	claims          []*pendingClaim // every claim, allocated or not, in input order
	allocatedClaims []*resourceapi.ResourceClaim
	nodes           map[string]*v1.Node
	taintRules      []*resourceapi.DeviceTaintRule
}

type pendingClaim struct {
	claim   *resourceapi.ResourceClaim
	rawSpec any // the spec as given, echoed in the output
}

func (s *scenario) pendingClaims() []*pendingClaim {
	var out []*pendingClaim
	for _, c := range s.claims {
		if c.claim.Status.Allocation == nil {
			out = append(out, c)
		}
	}
	return out
}

// nodeNames is every node the scenario names (Node objects and slices'
// nodeName) in name order: the playground's convention without --node.
func (s *scenario) nodeNames() []string {
	seen := map[string]bool{}
	for name := range s.nodes {
		seen[name] = true
	}
	for _, sl := range s.slices {
		if sl.Spec.NodeName != nil && *sl.Spec.NodeName != "" {
			seen[*sl.Spec.NodeName] = true
		}
	}
	names := make([]string, 0, len(seen))
	for name := range seen {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

type header struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Items      []json.RawMessage `json:"items"`
}

// decodeScenario reads a YAML stream the way the playground does: YAML 1.2
// scalars (so `Y` or `on` stay strings, where YAML 1.1 readers such as
// kubectl's would see booleans), documents separated by `---`.
func decodeScenario(data []byte) (*scenario, error) {
	sc := &scenario{classes: map[string]*resourceapi.DeviceClass{}, nodes: map[string]*v1.Node{}}
	dec := yaml3.NewDecoder(bytes.NewReader(data))
	for doc := 1; ; doc++ {
		var node yaml3.Node
		err := dec.Decode(&node)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %v", doc, err)
		}
		var buf bytes.Buffer
		if err := writeJSON(&buf, &node); err != nil {
			return nil, fmt.Errorf("document %d: %v", doc, err)
		}
		js := buf.Bytes()
		if s := strings.TrimSpace(string(js)); s == "null" || s == "" {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %v", doc, err)
		}
		if err := sc.add(js, fmt.Sprintf("document %d", doc)); err != nil {
			return nil, err
		}
	}
	for _, c := range sc.claims {
		setClaimDefaults(c.claim)
	}
	return sc, nil
}

// jsonNumber is the JSON number syntax: a YAML number written that way keeps
// its text, so a quantity such as `10e9` keeps its decimal-exponent format.
var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$`)

func writeJSON(buf *bytes.Buffer, n *yaml3.Node) error {
	switch n.Kind {
	case yaml3.DocumentNode:
		if len(n.Content) == 0 {
			buf.WriteString("null")
			return nil
		}
		return writeJSON(buf, n.Content[0])
	case yaml3.AliasNode:
		return writeJSON(buf, n.Alias)
	case yaml3.MappingNode:
		buf.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				buf.WriteByte(',')
			}
			key, _ := json.Marshal(n.Content[i].Value)
			buf.Write(key)
			buf.WriteByte(':')
			if err := writeJSON(buf, n.Content[i+1]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
		return nil
	case yaml3.SequenceNode:
		buf.WriteByte('[')
		for i, item := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeJSON(buf, item); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	}
	switch tag := n.ShortTag(); {
	case (tag == "!!int" || tag == "!!float") && jsonNumber.MatchString(n.Value):
		buf.WriteString(n.Value)
		return nil
	case tag == "!!str" || tag == "!!binary" || tag == "!!timestamp":
		out, _ := json.Marshal(n.Value)
		buf.Write(out)
		return nil
	}
	var value any
	if err := n.Decode(&value); err != nil {
		return err
	}
	out, err := json.Marshal(value)
	if err != nil {
		// .inf and .nan have no JSON form: pass the text on.
		out, _ = json.Marshal(n.Value)
	}
	buf.Write(out)
	return nil
}

// setClaimDefaults applies the kube-apiserver's defaulting for resource.k8s.io/v1
// requests, as every stored claim has it: the allocation mode is ExactCount
// unless given, an exact count is 1 unless given, a toleration's operator is
// Equal unless given.
func setClaimDefaults(claim *resourceapi.ResourceClaim) {
	defaultMode := func(mode *resourceapi.DeviceAllocationMode, count *int64) {
		if *mode == "" {
			*mode = resourceapi.DeviceAllocationModeExactCount
		}
		if *mode == resourceapi.DeviceAllocationModeExactCount && *count == 0 {
			*count = 1
		}
	}
	defaultOperator := func(tolerations []resourceapi.DeviceToleration) {
		for i := range tolerations {
			if tolerations[i].Operator == "" {
				tolerations[i].Operator = resourceapi.DeviceTolerationOpEqual
			}
		}
	}
	for i := range claim.Spec.Devices.Requests {
		req := &claim.Spec.Devices.Requests[i]
		if req.Exactly != nil {
			defaultMode(&req.Exactly.AllocationMode, &req.Exactly.Count)
			defaultOperator(req.Exactly.Tolerations)
		}
		for j := range req.FirstAvailable {
			defaultMode(&req.FirstAvailable[j].AllocationMode, &req.FirstAvailable[j].Count)
			defaultOperator(req.FirstAvailable[j].Tolerations)
		}
	}
}

func (sc *scenario) add(js []byte, where string) error {
	var h header
	if err := json.Unmarshal(js, &h); err != nil {
		return fmt.Errorf("%s: %v", where, err)
	}
	if h.Kind == "List" {
		for i, item := range h.Items {
			if err := sc.add(item, fmt.Sprintf("%s, items[%d]", where, i)); err != nil {
				return err
			}
		}
		return nil
	}
	decode := func(into any) error {
		if err := json.Unmarshal(js, into); err != nil {
			return fmt.Errorf("%s (%s): %v", where, h.Kind, err)
		}
		return nil
	}
	switch {
	case h.APIVersion == "resource.k8s.io/v1" && h.Kind == "DeviceClass":
		c := &resourceapi.DeviceClass{}
		if err := decode(c); err != nil {
			return err
		}
		sc.classes[c.Name] = c
	case h.APIVersion == "resource.k8s.io/v1" && h.Kind == "ResourceSlice":
		s := &resourceapi.ResourceSlice{}
		if err := decode(s); err != nil {
			return err
		}
		sc.slices = append(sc.slices, s)
	case h.APIVersion == "resource.k8s.io/v1" && h.Kind == "ResourceClaim":
		c := &resourceapi.ResourceClaim{}
		if err := decode(c); err != nil {
			return err
		}
		if c.Namespace == "" {
			c.Namespace = "default"
		}
		var spec struct {
			Spec any `json:"spec"`
		}
		_ = json.Unmarshal(js, &spec)
		if spec.Spec == nil {
			spec.Spec = map[string]any{}
		}
		sc.claims = append(sc.claims, &pendingClaim{claim: c, rawSpec: spec.Spec})
		if c.Status.Allocation != nil {
			sc.allocatedClaims = append(sc.allocatedClaims, c)
		}
	case h.APIVersion == "resource.k8s.io/v1" && h.Kind == "DeviceTaintRule":
		r := &resourceapi.DeviceTaintRule{}
		if err := decode(r); err != nil {
			return err
		}
		sc.taintRules = append(sc.taintRules, r)
	case h.APIVersion == "v1" && h.Kind == "Node":
		n := &v1.Node{}
		if err := decode(n); err != nil {
			return err
		}
		sc.nodes[n.Name] = n
	case h.Kind == "Pod":
		return fmt.Errorf("%s: Pods are not modelled by the oracle (one scheduling cycle for the claims only)", where)
	case strings.HasPrefix(h.APIVersion, "resource.k8s.io/") && h.APIVersion != "resource.k8s.io/v1" && h.Kind != "ResourceClaimTemplate" && h.Kind != "DeviceTaintRule":
		return fmt.Errorf("%s: %s %s: only resource.k8s.io/v1 is read by the oracle", where, h.APIVersion, h.Kind)
	default:
		// Namespaces, templates and other kinds do not reach the allocator.
	}
	return nil
}

// gate is one Kubernetes 1.37 feature gate the oracle knows, with its default.
var gateDefaults = map[string]bool{
	"DynamicResourceAllocation":                   true,
	"DRAPrioritizedList":                          true,
	"DRAAdminAccess":                              true,
	"DRAResourceClaimDeviceStatus":                true,
	"DRADeviceTaints":                             true,
	"DRADeviceTaintRules":                         true,
	"DRAPartitionableDevices":                     true,
	"DRAConsumableCapacity":                       true,
	"DRAFractionalCapacityRange":                  true,
	"DRADeviceBindingConditions":                  true,
	"DRASchedulerFilterTimeout":                   true,
	"DRAResourceClaimGranularStatusAuthorization": true,
	"DRAListTypeAttributes":                       false,
	"DRADeviceCompatibilityGroups":                false,
	"DRAOptionalNodeOperations":                   false,
	"DRADerivedAttributes":                        false,
}

func parseGates(text string) (map[string]bool, error) {
	gates := map[string]bool{}
	for name, value := range gateDefaults {
		gates[name] = value
	}
	for _, item := range strings.Split(text, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, raw, ok := strings.Cut(item, "=")
		name = strings.TrimSpace(name)
		if !ok {
			return nil, fmt.Errorf("missing bool value for %s", name)
		}
		if _, known := gateDefaults[name]; !known {
			return nil, fmt.Errorf("unrecognized feature gate: %s", name)
		}
		value, err := strconv.ParseBool(strings.TrimSpace(raw))
		if err != nil {
			return nil, fmt.Errorf("invalid value of %s=%s, err: %v", name, raw, err)
		}
		gates[name] = value
	}
	return gates, nil
}

// allocatorFeatures derives the allocator's features from the scheduler's
// gates as kube-scheduler does; binding conditions need both of their gates.
// Compatibility groups also need partitionable devices: Kubernetes declares
// that dependency between the gates, so a scheduler never runs with one alone.
func allocatorFeatures(g map[string]bool) structured.Features {
	return structured.Features{
		AdminAccess:             g["DRAAdminAccess"],
		CompatibilityGroups:     g["DRADeviceCompatibilityGroups"] && g["DRAPartitionableDevices"],
		ConsumableCapacity:      g["DRAConsumableCapacity"],
		DerivedAttributes:       g["DRADerivedAttributes"],
		DeviceBindingAndStatus:  g["DRADeviceBindingConditions"] && g["DRAResourceClaimDeviceStatus"],
		DeviceTaints:            g["DRADeviceTaints"],
		FractionalCapacityRange: g["DRAFractionalCapacityRange"],
		ListTypeAttributes:      g["DRAListTypeAttributes"],
		OptionalNodeOperations:  g["DRAOptionalNodeOperations"],
		PartitionableDevices:    g["DRAPartitionableDevices"],
		PrioritizedList:         g["DRAPrioritizedList"],
	}
}

// scheduledSlices is what kube-scheduler's slice lister hands to the
// allocator: with DRADeviceTaintRules, each DeviceTaintRule's taint is
// appended to every device its selector names (driver, pool, device; each
// optional; no selector names nothing), rules in input order. This is the
// scheduler's ResourceSlice tracker, not allocation.
func (sc *scenario) scheduledSlices(gates map[string]bool) []*resourceapi.ResourceSlice {
	if !gates["DRADeviceTaintRules"] || len(sc.taintRules) == 0 {
		return sc.slices
	}
	out := make([]*resourceapi.ResourceSlice, 0, len(sc.slices))
	for _, slice := range sc.slices {
		patched := slice
		for _, rule := range sc.taintRules {
			sel := rule.Spec.DeviceSelector
			if sel == nil || (sel.Driver != nil && *sel.Driver != slice.Spec.Driver) ||
				(sel.Pool != nil && *sel.Pool != slice.Spec.Pool.Name) {
				continue
			}
			for i := range slice.Spec.Devices {
				if sel.Device != nil && *sel.Device != slice.Spec.Devices[i].Name {
					continue
				}
				if patched == slice {
					patched = slice.DeepCopy()
				}
				patched.Spec.Devices[i].Taints = append(patched.Spec.Devices[i].Taints, rule.Spec.Taint)
			}
		}
		out = append(out, patched)
	}
	return out
}
