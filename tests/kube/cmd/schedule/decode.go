package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	// The apiserver's defaulting functions for the objects a dump holds.
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/resource/install"
)

// dump holds the objects of one scenario, in input order within each kind.
type dump struct {
	nodes      []*v1.Node
	pods       []*v1.Pod
	namespaces []*v1.Namespace
	classes    []*resourceapi.DeviceClass
	slices     []*resourceapi.ResourceSlice
	claims     []*resourceapi.ResourceClaim
	templates  []*resourceapi.ResourceClaimTemplate
	taintRules []*resourceapi.DeviceTaintRule
}

// decodeDump reads a YAML or JSON stream (documents may be `kind: List`) and applies the apiserver's
// defaults to every object, as `kubectl apply` would have them stored.
func decodeDump(text string) (*dump, error) {
	decoder := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(text), 4096)
	var docs []json.RawMessage
	for {
		var doc map[string]any
		err := decoder.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the dump: %w", err)
		}
		if doc == nil {
			continue
		}
		if doc["kind"] == "List" {
			items, _ := doc["items"].([]any)
			for _, item := range items {
				raw, _ := json.Marshal(item)
				docs = append(docs, raw)
			}
			continue
		}
		raw, _ := json.Marshal(doc)
		docs = append(docs, raw)
	}
	out := &dump{}
	deserializer := scheme.Codecs.UniversalDeserializer()
	for i, raw := range docs {
		obj, _, err := deserializer.Decode(bytes.TrimSpace(raw), nil, nil)
		if err != nil {
			return nil, fmt.Errorf("object %d: %w", i+1, err)
		}
		legacyscheme.Scheme.Default(obj)
		if gvk := obj.GetObjectKind().GroupVersionKind(); gvk.Group == resourceapi.GroupName && gvk.Version != "v1" {
			// Older resource.k8s.io versions are stored as v1, through the apiserver's conversions.
			internal, err := legacyscheme.Scheme.ConvertToVersion(obj, schema.GroupVersion{Group: resourceapi.GroupName, Version: runtime.APIVersionInternal})
			if err == nil {
				obj, err = legacyscheme.Scheme.ConvertToVersion(internal, resourceapi.SchemeGroupVersion)
			}
			if err != nil {
				return nil, fmt.Errorf("object %d: converting to resource.k8s.io/v1: %w", i+1, err)
			}
		}
		if err := out.add(obj); err != nil {
			return nil, fmt.Errorf("object %d: %w", i+1, err)
		}
	}
	return out, nil
}

func (d *dump) add(obj runtime.Object) error {
	switch o := obj.(type) {
	case *v1.Node:
		d.nodes = append(d.nodes, o)
	case *v1.Pod:
		if o.Namespace == "" {
			o.Namespace = "default"
		}
		d.pods = append(d.pods, o)
	case *v1.Namespace:
		d.namespaces = append(d.namespaces, o)
	case *resourceapi.DeviceClass:
		d.classes = append(d.classes, o)
	case *resourceapi.ResourceSlice:
		d.slices = append(d.slices, o)
	case *resourceapi.ResourceClaim:
		if o.Namespace == "" {
			o.Namespace = "default"
		}
		d.claims = append(d.claims, o)
	case *resourceapi.ResourceClaimTemplate:
		if o.Namespace == "" {
			o.Namespace = "default"
		}
		d.templates = append(d.templates, o)
	case *resourceapi.DeviceTaintRule:
		d.taintRules = append(d.taintRules, o)
	default:
		if d.addPodGroup(obj) { // podgroups.go
			return nil
		}
		return fmt.Errorf("kind %T is not read by the scheduler oracle", obj)
	}
	return nil
}
