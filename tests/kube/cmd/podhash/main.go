// Command podhash says what pod-template-hash kube-controller-manager 1.37.2 gives a Deployment's
// pods: the Deployment is decoded as the apiserver decodes it (apps/v1, defaults applied), made
// ready for create (fields of disabled gates dropped, through the internal version and back), stored
// and read back as the controller's informer reads it (protobuf), and its template hashed with the
// controller's own ComputeHash.
//
// Batch mode (--batch): one JSON request per input line, one JSON answer per output line:
//
//	{"object": "<a Deployment, YAML or JSON>", "gates": {"GenericWorkload": true}}
//	{"hash": "...", "dump": "<the hashed dump>"} or {"error": "..."}
//
// --types prints the Go type tree of v1.PodTemplateSpec (field order, names, kinds) as JSON: the
// engine's copy of it (allocator/engine/podtemplate_types.json) is made with it.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"reflect"
	"runtime/debug"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	"k8s.io/utils/dump"
	"sigs.k8s.io/yaml"

	"k8s.io/kubernetes/pkg/api/legacyscheme"
	podutil "k8s.io/kubernetes/pkg/api/pod"
	"k8s.io/kubernetes/pkg/apis/apps"
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	"k8s.io/kubernetes/pkg/controller"
)

type request struct {
	Object string          `json:"object"`
	Gates  map[string]bool `json:"gates,omitempty"` // the apiserver's feature gates for this object only
}

func main() {
	batch := flag.Bool("batch", false, "read one JSON request per line from stdin, answer one JSON line each")
	types := flag.Bool("types", false, "print the type tree of v1.PodTemplateSpec as JSON")
	flag.Parse()
	if *types {
		out, _ := json.MarshalIndent(typeTree(reflect.TypeOf(corev1.PodTemplateSpec{})), "", " ")
		fmt.Println(string(out))
		return
	}
	if !*batch {
		fmt.Fprintln(os.Stderr, "usage: podhash --batch | --types")
		os.Exit(2)
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		var req request
		var reply any
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			reply = map[string]string{"error": "bad request: " + err.Error()}
		} else {
			reply = withGates(req.Gates, func() any { return answer(req.Object) })
		}
		line, _ := json.Marshal(reply)
		out.Write(line)
		out.WriteByte('\n')
		out.Flush()
	}
}

func answer(text string) (reply any) {
	defer func() {
		if r := recover(); r != nil {
			reply = map[string]string{"error": fmt.Sprintf("panic: %v\n%s", r, debug.Stack())}
		}
	}()
	stored, err := created(text)
	if err != nil {
		return map[string]string{"error": err.Error()}
	}
	template := *stored.Spec.Template.DeepCopy()
	return map[string]any{
		"hash": controller.ComputeHash(&template, stored.Status.CollisionCount),
		"dump": dump.ForHash(template),
	}
}

// withGates runs f with the given gates set on the process's default gate, restoring them after.
func withGates(gates map[string]bool, f func() any) any {
	previous := map[string]bool{}
	for name := range gates {
		previous[name] = utilfeature.DefaultFeatureGate.Enabled(featuregate.Feature(name))
	}
	defer func() { _ = utilfeature.DefaultMutableFeatureGate.SetFromMap(previous) }()
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(gates); err != nil {
		return map[string]string{"error": fmt.Sprintf("feature gates: %v", err)}
	}
	return f()
}

// created is the Deployment as the controller's informer sees it after a create.
func created(text string) (*appsv1.Deployment, error) {
	data, err := yaml.YAMLToJSON([]byte(text))
	if err != nil {
		return nil, err
	}
	var given appsv1.Deployment
	if err := json.Unmarshal(data, &given); err != nil {
		return nil, err
	}
	legacyscheme.Scheme.Default(&given)
	var internal apps.Deployment
	if err := legacyscheme.Scheme.Convert(&given, &internal, nil); err != nil {
		return nil, err
	}
	podutil.DropDisabledTemplateFields(&internal.Spec.Template, nil)
	var versioned appsv1.Deployment
	if err := legacyscheme.Scheme.Convert(&internal, &versioned, nil); err != nil {
		return nil, err
	}
	wire, err := versioned.Marshal() // etcd and the informer speak protobuf
	if err != nil {
		return nil, err
	}
	var read appsv1.Deployment
	if err := read.Unmarshal(wire); err != nil {
		return nil, err
	}
	legacyscheme.Scheme.Default(&read) // the apiserver defaults again when it reads from etcd
	return &read, nil
}

var _ runtime.Object = &appsv1.Deployment{}

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
				fields = append(fields, map[string]any{
					"name": f.Name, "json": jsonName, "type": visit(f.Type),
					"inline": f.Anonymous || strings.Contains(f.Tag.Get("json"), ",inline"),
				})
			}
			entry["fields"] = fields
		}
		return name
	}
	return map[string]any{"root": visit(root), "types": types}
}
