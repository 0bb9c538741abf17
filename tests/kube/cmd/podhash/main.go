// Command podhash says what hash label kube-controller-manager 1.37.2 gives a workload's pods: a
// Deployment's pod-template-hash, a DaemonSet's and a StatefulSet's controller-revision-hash. The
// workload is decoded as the apiserver decodes it (apps/v1, defaults applied), made ready for create
// (fields of disabled gates dropped, through the internal version and back), stored and read back as
// the controller's informer reads it (protobuf), and then:
//
//   - Deployment: its template hashed with the controller's own ComputeHash (the label value);
//   - DaemonSet: the same ComputeHash, which the DaemonSet controller puts in its ControllerRevision's
//     name and label and so in its pods' controller-revision-hash;
//   - StatefulSet: the ControllerRevision the StatefulSet controller makes (history.NewControllerRevision
//     over the controller's patch of spec.template, collision count 0 when the status has none); its
//     pods' controller-revision-hash is the revision's name, <set>-<hash>.
//
// Batch mode (--batch): one JSON request per input line, one JSON answer per output line:
//
//	{"object": "<a Deployment, DaemonSet or StatefulSet, YAML or JSON>", "gates": {"GenericWorkload": true}}
//	{"kind": "...", "hash": "...", "label": "<the pods' label value>", "dump": "<what was hashed>"} or {"error": "..."}
//
// --types prints the Go type tree of v1.PodTemplateSpec (field order, names, kinds) as JSON: the
// engine's copy of it (allocator/engine/podtemplate_types.json) is made with it.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/dump"
	"sigs.k8s.io/yaml"

	"dra-playground/kube/internal/batch"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	"k8s.io/kubernetes/pkg/apis/apps"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	core "k8s.io/kubernetes/pkg/apis/core"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	"k8s.io/kubernetes/pkg/controller"
	"k8s.io/kubernetes/pkg/controller/history"
)

type request struct {
	Object string          `json:"object"`
	Gates  map[string]bool `json:"gates,omitempty"` // the apiserver's feature gates for this object only
}

func main() {
	batchMode := flag.Bool("batch", false, "read one JSON request per line from stdin, answer one JSON line each")
	types := flag.Bool("types", false, "print the type tree of v1.PodTemplateSpec as JSON")
	flag.Parse()
	if *types {
		out, _ := json.MarshalIndent(typeTree(reflect.TypeOf(corev1.PodTemplateSpec{})), "", " ")
		fmt.Println(string(out))
		return
	}
	if !*batchMode {
		fmt.Fprintln(os.Stderr, "usage: podhash --batch | --types")
		os.Exit(2)
	}
	if err := batch.Serve(os.Stdin, os.Stdout, func(req request) any {
		return batch.WithGates(req.Gates, func() any { return answer(req.Object) })
	}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}

func answer(text string) any {
	data, err := yaml.YAMLToJSON([]byte(text))
	if err != nil {
		return batch.Error(err.Error())
	}
	var head metav1.TypeMeta
	if err := json.Unmarshal(data, &head); err != nil {
		return batch.Error(err.Error())
	}
	switch head.Kind {
	case "Deployment":
		var d appsv1.Deployment
		if err := created(data, &d, &apps.Deployment{}, func(o runtime.Object) *core.PodTemplateSpec {
			return &o.(*apps.Deployment).Spec.Template
		}); err != nil {
			return batch.Error(err.Error())
		}
		return templateHash(head.Kind, d.Spec.Template, d.Status.CollisionCount)
	case "DaemonSet":
		var ds appsv1.DaemonSet
		if err := created(data, &ds, &apps.DaemonSet{}, func(o runtime.Object) *core.PodTemplateSpec {
			return &o.(*apps.DaemonSet).Spec.Template
		}); err != nil {
			return batch.Error(err.Error())
		}
		return templateHash(head.Kind, ds.Spec.Template, ds.Status.CollisionCount)
	case "StatefulSet":
		var set appsv1.StatefulSet
		if err := created(data, &set, &apps.StatefulSet{}, func(o runtime.Object) *core.PodTemplateSpec {
			return &o.(*apps.StatefulSet).Spec.Template
		}); err != nil {
			return batch.Error(err.Error())
		}
		patch, err := statefulSetPatch(&set)
		if err != nil {
			return batch.Error(err.Error())
		}
		var collisions int32 // getStatefulSetRevisions passes a count, 0 when the status has none
		if set.Status.CollisionCount != nil {
			collisions = *set.Status.CollisionCount
		}
		revision, err := history.NewControllerRevision(&set, appsv1.SchemeGroupVersion.WithKind("StatefulSet"),
			set.Spec.Template.Labels, runtime.RawExtension{Raw: patch}, 1, &collisions)
		if err != nil {
			return batch.Error(err.Error())
		}
		return map[string]any{"kind": head.Kind, "hash": revision.Labels[history.ControllerRevisionHashLabel],
			"label": revision.Name, "dump": string(patch)}
	}
	return batch.Error(fmt.Sprintf("kind %q: podhash reads Deployments, DaemonSets and StatefulSets", head.Kind))
}

// templateHash is the answer for a Deployment or a DaemonSet: ComputeHash of the template is the label.
func templateHash(kind string, stored corev1.PodTemplateSpec, collisions *int32) map[string]any {
	template := *stored.DeepCopy()
	hash := controller.ComputeHash(&template, collisions)
	return map[string]any{"kind": kind, "hash": hash, "label": hash, "dump": dump.ForHash(template)}
}

// statefulSetPatch is the StatefulSet controller's getPatch (pkg/controller/statefulset, unexported
// there): the set encoded by client-go's legacy codec for apps/v1, then only spec.template kept,
// marked "$patch": "replace", and marshalled again from the generic map (so keys come out sorted).
func statefulSetPatch(set *appsv1.StatefulSet) ([]byte, error) {
	data, err := runtime.Encode(clientscheme.Codecs.LegacyCodec(appsv1.SchemeGroupVersion), set)
	if err != nil {
		return nil, err
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	template := raw["spec"].(map[string]any)["template"].(map[string]any)
	template["$patch"] = "replace"
	return json.Marshal(map[string]any{"spec": map[string]any{"template": template}})
}

// created fills stored (a versioned apps/v1 workload) from data as the controller's informer sees it
// after a create; internal is an empty object of the internal type and templateOf finds its template.
func created(data []byte, stored versioned, internal runtime.Object, templateOf func(runtime.Object) *core.PodTemplateSpec) error {
	var given = stored.DeepCopyObject().(versioned)
	if err := json.Unmarshal(data, given); err != nil {
		return err
	}
	legacyscheme.Scheme.Default(given)
	if err := legacyscheme.Scheme.Convert(given, internal, nil); err != nil {
		return err
	}
	podutil.DropDisabledTemplateFields(templateOf(internal), nil)
	back := stored.DeepCopyObject().(versioned)
	if err := legacyscheme.Scheme.Convert(internal, back, nil); err != nil {
		return err
	}
	wire, err := back.Marshal() // etcd and the informer speak protobuf
	if err != nil {
		return err
	}
	if err := stored.Unmarshal(wire); err != nil {
		return err
	}
	legacyscheme.Scheme.Default(stored) // the apiserver defaults again when it reads from etcd
	return nil
}

// versioned is an apps/v1 object with its protobuf methods.
type versioned interface {
	runtime.Object
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}

// typeTree lists every named type reachable from t: kind, Go's name for it, and its parts.
func typeTree(root reflect.Type) map[string]any {
	types := map[string]any{}
	var visit func(t reflect.Type) string
	visit = func(t reflect.Type) string {
		name := t.String()
		if _, seen := types[name]; seen {
			return name
		}
		entry := map[string]any{"kind": t.Kind().String()}
		types[name] = entry
		switch t.Kind() {
		case reflect.Ptr, reflect.Slice, reflect.Array:
			entry["elem"] = visit(t.Elem())
		case reflect.Map:
			entry["key"] = visit(t.Key())
			entry["elem"] = visit(t.Elem())
		case reflect.Struct:
			var fields []map[string]any
			for i := 0; i < t.NumField(); i++ {
				f := t.Field(i)
				jsonName := strings.Split(f.Tag.Get("json"), ",")[0]
				tag := f.Tag.Get("json")
				fields = append(fields, map[string]any{
					"name": f.Name, "json": jsonName, "type": visit(f.Type),
					"inline":    f.Anonymous || strings.Contains(tag, ",inline"),
					"omitempty": strings.Contains(tag, ",omitempty"),
					"omitzero":  strings.Contains(tag, ",omitzero"),
				})
			}
			entry["fields"] = fields
		}
		return name
	}
	return map[string]any{"root": visit(root), "types": types}
}
