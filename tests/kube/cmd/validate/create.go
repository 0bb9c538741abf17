package main

import (
	"context"
	"encoding/json"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage/names"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/component-base/featuregate"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	"k8s.io/kubernetes/pkg/apis/resource"
	_ "k8s.io/kubernetes/pkg/apis/resource/install"
	resourcevalidation "k8s.io/kubernetes/pkg/apis/resource/validation"
	_ "k8s.io/kubernetes/pkg/features" // registers the Kubernetes gates on the default gate
	"k8s.io/kubernetes/pkg/registry/core/pod"
	"k8s.io/kubernetes/pkg/registry/resource/deviceclass"
	"k8s.io/kubernetes/pkg/registry/resource/devicetaintrule"
	"k8s.io/kubernetes/pkg/registry/resource/resourceclaim"
	"k8s.io/kubernetes/pkg/registry/resource/resourceclaimtemplate"
	"k8s.io/kubernetes/pkg/registry/resource/resourceslice"
)

// pristine is the default gate as the features package registered it, before
// any request set a gate; every request starts from a copy of it.
var pristine = utilfeature.DefaultMutableFeatureGate.DeepCopy()
var currentGates = "\x00"

func useGates(text string) error {
	if text == currentGates {
		return nil
	}
	m, err := parseGates(text)
	if err != nil {
		return err
	}
	g := pristine.DeepCopy()
	if err := g.SetFromMap(m); err != nil {
		return err
	}
	utilfeature.DefaultMutableFeatureGate = g
	utilfeature.DefaultFeatureGate = featuregate.FeatureGate(g)
	currentGates = text
	return nil
}

// admitAll is a namespace client whose every namespace carries the DRA admin
// label: admission of admin access by namespace is the playground's own check,
// not compared here.
func admitAll() *fake.Clientset {
	client := fake.NewSimpleClientset()
	client.PrependReactor("get", "namespaces", func(action clienttesting.Action) (bool, runtime.Object, error) {
		name := action.(clienttesting.GetAction).GetName()
		return true, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels: map[string]string{resource.DRAAdminNamespaceLabelKey: "true"}}}, nil
	})
	return client
}

var namespaces = admitAll().CoreV1().Namespaces()
var claimStrategy = resourceclaim.NewStrategy(namespaces, nil)

type kindInfo struct {
	gv       schema.GroupVersion
	resource string
	strategy rest.RESTCreateStrategy
}

var kinds = map[string]kindInfo{
	"resource.k8s.io/v1 DeviceClass":           {schema.GroupVersion{Group: "resource.k8s.io", Version: "v1"}, "deviceclasses", deviceclass.Strategy},
	"resource.k8s.io/v1 ResourceSlice":         {schema.GroupVersion{Group: "resource.k8s.io", Version: "v1"}, "resourceslices", resourceslice.Strategy},
	"resource.k8s.io/v1 ResourceClaim":         {schema.GroupVersion{Group: "resource.k8s.io", Version: "v1"}, "resourceclaims", claimStrategy},
	"resource.k8s.io/v1 ResourceClaimTemplate": {schema.GroupVersion{Group: "resource.k8s.io", Version: "v1"}, "resourceclaimtemplates", resourceclaimtemplate.NewStrategy(namespaces)},
	"resource.k8s.io/v1 DeviceTaintRule":       {schema.GroupVersion{Group: "resource.k8s.io", Version: "v1"}, "devicetaintrules", devicetaintrule.Strategy},
	"v1 Pod":                                   {schema.GroupVersion{Version: "v1"}, "pods", pod.Strategy},
}

var scheme = legacyscheme.Scheme
var strict = kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme, scheme, kjson.SerializerOptions{Strict: true})

func create(d document) objectResult {
	// Keys are matched exactly, as the apiserver's decoder does (`apiversion` is not `apiVersion`).
	var top map[string]any
	_ = json.Unmarshal(d.value, &top)
	metadata, _ := top["metadata"].(map[string]any)
	apiVersion, _ := top["apiVersion"].(string)
	kind, _ := top["kind"].(string)
	res := objectResult{Doc: d.doc, Item: d.item, APIVersion: apiVersion, Kind: kind,
		Errors: []fieldError{}, Warnings: []string{}, Dropped: []string{}}
	res.Name, _ = metadata["name"].(string)
	res.Namespace, _ = metadata["namespace"].(string)
	info, ok := kinds[apiVersion+" "+kind]
	if !ok {
		res.Outcome = "not-read"
		return res
	}
	gvk := info.gv.WithKind(kind)
	into, err := scheme.New(gvk)
	if err != nil {
		panic(err)
	}
	obj, _, err := strict.Decode(d.value, &gvk, into)
	if err != nil {
		if strictErr, ok := runtime.AsStrictDecodingError(err); ok {
			for _, e := range strictErr.Errors() {
				res.Warnings = append(res.Warnings, e.Error())
			}
		} else {
			res.Outcome = "decode-error"
			res.Decode = err.Error()
			return res
		}
	}
	scheme.Default(obj)
	before := asMap(obj)
	internal, err := scheme.New(schema.GroupVersionKind{Group: info.gv.Group, Version: runtime.APIVersionInternal, Kind: kind})
	if err != nil {
		panic(err)
	}
	if err := scheme.Convert(obj, internal, nil); err != nil {
		res.Outcome = "decode-error"
		res.Decode = "conversion: " + err.Error()
		return res
	}
	withStatus := internal.DeepCopyObject()

	objMeta, err := meta.Accessor(internal)
	if err != nil {
		panic(err)
	}
	namespace := ""
	if info.strategy.NamespaceScoped() {
		namespace = objMeta.GetNamespace()
		if namespace == "" {
			namespace = "default" // kubectl's namespace when the object names none
		}
	}
	ctx := genericapirequest.WithNamespace(context.Background(), namespace)
	ctx = genericapirequest.WithRequestInfo(ctx, &genericapirequest.RequestInfo{
		IsResourceRequest: true, Verb: "create", APIPrefix: "apis", APIGroup: info.gv.Group,
		APIVersion: info.gv.Version, Resource: info.resource, Namespace: namespace, Name: objMeta.GetName(),
	})
	rest.FillObjectMetaSystemFields(objMeta)
	if objMeta.GetGenerateName() != "" && objMeta.GetName() == "" {
		objMeta.SetName(generateName(objMeta.GetGenerateName()))
	}
	if err := rest.EnsureObjectNamespaceMatchesRequestNamespace(rest.ExpectedNamespaceForScope(namespace, info.strategy.NamespaceScoped()), objMeta); err != nil {
		res.Outcome = "invalid"
		res.Errors = append(res.Errors, fieldError{Field: "metadata.namespace", Type: "NamespaceMismatch", Message: err.Error()})
		return res
	}
	info.strategy.PrepareForCreate(ctx, internal)
	errs := rest.ValidateCreate(ctx, internal, info.strategy)
	res.Dropped = dropped(before, asMap(toVersioned(internal, info.gv)), "spec")

	// A claim's status is written by a status update after the create.
	if claim, ok := withStatus.(*resource.ResourceClaim); ok && len(errs) == 0 && hasStatus(before) {
		old := internal.(*resource.ResourceClaim)
		old.ResourceVersion = "1" // as stored
		claim.ObjectMeta = *old.ObjectMeta.DeepCopy()
		resourceclaim.NewStatusStrategy(claimStrategy).PrepareForUpdate(ctx, claim, old)
		errs = append(errs, resourcevalidation.ValidateResourceClaimStatusUpdate(claim, old)...)
		after := asMap(toVersioned(claim, info.gv))
		res.Dropped = append(res.Dropped, dropped(before, after, "status")...)
	}
	if res.Dropped == nil {
		res.Dropped = []string{}
	}
	res.Outcome = "valid"
	if len(errs) > 0 {
		res.Outcome = "invalid"
	}
	for _, e := range errs {
		res.Errors = append(res.Errors, fieldError{Field: e.Field, Type: string(e.Type), Detail: e.Detail, Message: e.ErrorBody()})
	}
	return res
}

// generateName is the registry's name generator (names.SimpleNameGenerator: the prefix cut to
// MaxGeneratedNameLength bytes, then 5 random characters) with "xxxxx" for the random part, a
// suffix it can draw: the same object always gets the same answer, so answers can be stored.
func generateName(base string) string {
	if len(base) > names.MaxGeneratedNameLength {
		base = base[:names.MaxGeneratedNameLength]
	}
	return base + "xxxxx"
}

func hasStatus(m map[string]any) bool {
	s, ok := m["status"].(map[string]any)
	return ok && len(s) > 0
}

func toVersioned(obj runtime.Object, gv schema.GroupVersion) runtime.Object {
	out, err := scheme.ConvertToVersion(obj.DeepCopyObject(), gv)
	if err != nil {
		panic(err)
	}
	return out
}

func asMap(obj runtime.Object) map[string]any {
	data, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	out := map[string]any{}
	if err := json.Unmarshal(data, &out); err != nil {
		panic(err)
	}
	return out
}

// dropped lists the fields under the given top-level keys that before has
// and after no longer has, in field-path form.
func dropped(before, after map[string]any, keys ...string) []string {
	var out []string
	for _, k := range keys {
		if b, ok := before[k]; ok {
			if a, ok := after[k]; ok {
				out = append(out, droppedValue(b, a, k)...)
			} else {
				out = append(out, k)
			}
		}
	}
	return out
}

func droppedPaths(before, after map[string]any, prefix string) []string {
	var out []string
	keys := make([]string, 0, len(before))
	for k := range before {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		path := prefix + "." + k
		a, present := after[k]
		if !present {
			out = append(out, path)
			continue
		}
		out = append(out, droppedValue(before[k], a, path)...)
	}
	return out
}

func droppedValue(b, a any, path string) []string {
	switch bv := b.(type) {
	case map[string]any:
		if av, ok := a.(map[string]any); ok {
			return droppedPaths(bv, av, path)
		}
	case []any:
		if av, ok := a.([]any); ok && len(av) == len(bv) {
			var out []string
			for i := range bv {
				out = append(out, droppedValue(bv[i], av[i], path+"["+strconv.Itoa(i)+"]")...)
			}
			return out
		}
	}
	return nil
}
