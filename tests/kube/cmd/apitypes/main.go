// Command apitypes prints, as JSON, the fields of the resource.k8s.io/v1 object types and of
// ObjectMeta as the Go types of k8s.io/api and k8s.io/apimachinery declare them: for every
// struct reachable from ResourceSlice, ResourceClaim, ResourceClaimTemplate and DeviceClass,
// each JSON field name with its Go type written in a small notation:
//
//	string, bool, int32, int64, ...   a scalar (a named type is written as its underlying kind)
//	Name                              a struct of this table, or one with its own JSON form
//	                                  (Time, Quantity, RawExtension, FieldsV1, ...)
//	*T, []T, map[K]V                  a pointer, a list, a map
//
// The playground's allocator/engine/apitypes.json is this program's output; a test regenerates it.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"runtime/debug"
	"sort"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
)

var unmarshaler = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()

type table struct {
	Source string                       `json:"source"`
	Roots  []string                     `json:"roots"`
	Types  map[string]map[string]string `json:"types"`
}

type walker struct {
	types   map[string]map[string]string
	origins map[string]string // type name -> package path, to catch two types of one name
	pending []reflect.Type
}

// opaque: a struct that decodes itself (metav1.Time, resource.Quantity, runtime.RawExtension, ...).
func opaque(t reflect.Type) bool {
	return reflect.PointerTo(t).Implements(unmarshaler)
}

func (w *walker) name(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return "*" + w.name(t.Elem())
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "bytes"
		}
		return "[]" + w.name(t.Elem())
	case reflect.Map:
		return "map[" + w.name(t.Key()) + "]" + w.name(t.Elem())
	case reflect.Struct:
		if origin, seen := w.origins[t.Name()]; seen && origin != t.PkgPath() {
			panic(fmt.Sprintf("two types named %s: %s and %s", t.Name(), origin, t.PkgPath()))
		}
		if _, seen := w.origins[t.Name()]; !seen {
			w.origins[t.Name()] = t.PkgPath()
			if !opaque(t) {
				w.pending = append(w.pending, t)
			}
		}
		return t.Name()
	default:
		return t.Kind().String()
	}
}

// fields adds the JSON fields of struct t (embedded inline structs flattened) to into.
func (w *walker) fields(t reflect.Type, into map[string]string) {
	for i := 0; i < t.NumField(); i++ {
		field := t.Field(i)
		tag := field.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" || (!field.IsExported() && !field.Anonymous) {
			continue
		}
		if field.Anonymous && name == "" {
			w.fields(field.Type, into)
			continue
		}
		if name == "" {
			name = field.Name
		}
		into[name] = w.name(field.Type)
	}
}

func (w *walker) walk(roots ...reflect.Type) {
	for _, root := range roots {
		w.name(root)
	}
	for len(w.pending) > 0 {
		t := w.pending[0]
		w.pending = w.pending[1:]
		fields := map[string]string{}
		w.fields(t, fields)
		w.types[t.Name()] = fields
	}
}

func source() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var modules []string
	for _, dep := range info.Deps {
		if dep.Path == "k8s.io/api" || dep.Path == "k8s.io/apimachinery" {
			modules = append(modules, dep.Path+" "+dep.Version)
		}
	}
	sort.Strings(modules)
	return strings.Join(modules, ", ")
}

func main() {
	roots := []reflect.Type{
		reflect.TypeOf(resourcev1.ResourceSlice{}),
		reflect.TypeOf(resourcev1.ResourceClaim{}),
		reflect.TypeOf(resourcev1.ResourceClaimTemplate{}),
		reflect.TypeOf(resourcev1.DeviceClass{}),
	}
	w := &walker{types: map[string]map[string]string{}, origins: map[string]string{}}
	w.walk(roots...)
	out := table{Source: source(), Types: w.types}
	for _, root := range roots {
		out.Roots = append(out.Roots, root.Name())
	}
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Stdout.Write(append(data, '\n'))
}
