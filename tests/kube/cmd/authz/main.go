// Command authz judges ResourceClaim status writes with the kube-apiserver's own code: the RBAC
// authorizer built from static listers over the given roles and bindings (aggregated as the
// clusterrole-aggregation controller computes it), the front-door authorization of
// resourceclaims/status, and the status strategy's AuthorizedForBinding and
// AuthorizedForDeviceStatus checks.
//
//	authz --bootstrap   prints the 1.37.2 bootstrap roles and bindings as JSON
//	authz --batch       reads one JSON case per line and writes one JSON answer per line
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"

	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/request"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/tools/cache"
	rbacv1defaults "k8s.io/kubernetes/pkg/apis/rbac/v1"
	"k8s.io/kubernetes/pkg/apis/resource"
	resourcev1conv "k8s.io/kubernetes/pkg/apis/resource/v1"
	resourceutils "k8s.io/kubernetes/pkg/registry/resource"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac/bootstrappolicy"
)

type bootstrapSet struct {
	ClusterRoles        []rbacv1.ClusterRole        `json:"clusterRoles"`
	ClusterRoleBindings []rbacv1.ClusterRoleBinding `json:"clusterRoleBindings"`
	Roles               []rbacv1.Role               `json:"roles"`
	RoleBindings        []rbacv1.RoleBinding        `json:"roleBindings"`
}

// bootstrap is what the apiserver's RBAC post-start hook writes (pkg/registry/rbac/rest).
func bootstrap() bootstrapSet {
	set := bootstrapSet{
		ClusterRoles:        append(bootstrappolicy.ClusterRoles(), bootstrappolicy.ControllerRoles()...),
		ClusterRoleBindings: append(bootstrappolicy.ClusterRoleBindings(), bootstrappolicy.ControllerRoleBindings()...),
	}
	roles, bindings := bootstrappolicy.NamespaceRoles(), bootstrappolicy.NamespaceRoleBindings()
	for _, ns := range sortedKeys(roles) {
		for _, r := range roles[ns] {
			r.Namespace = ns
			set.Roles = append(set.Roles, r)
		}
	}
	for _, ns := range sortedKeys(bindings) {
		for _, b := range bindings[ns] {
			b.Namespace = ns
			set.RoleBindings = append(set.RoleBindings, b)
		}
	}
	return set
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

type userInfo struct {
	Name   string              `json:"name"`
	Groups []string            `json:"groups"`
	Extra  map[string][]string `json:"extra"`
}

type check struct {
	User      userInfo                       `json:"user"`
	Verb      string                         `json:"verb"`
	Namespace string                         `json:"namespace"`
	Name      string                         `json:"name"`
	Old       resourcev1.ResourceClaimStatus `json:"old"`
	New       resourcev1.ResourceClaimStatus `json:"new"`
}

type input struct {
	ID                  any                         `json:"id"`
	Bootstrap           bool                        `json:"bootstrap"`
	ClusterRoles        []rbacv1.ClusterRole        `json:"clusterRoles"`
	ClusterRoleBindings []rbacv1.ClusterRoleBinding `json:"clusterRoleBindings"`
	Roles               []rbacv1.Role               `json:"roles"`
	RoleBindings        []rbacv1.RoleBinding        `json:"roleBindings"`
	Granular            bool                        `json:"granular"`
	DeviceStatus        bool                        `json:"deviceStatus"`
	Checks              []check                     `json:"checks"`
}

type front struct {
	Allowed bool   `json:"allowed"`
	Reason  string `json:"reason"`
	Message string `json:"message,omitempty"`
}

type answer struct {
	Front   front    `json:"front"`
	Errors  []string `json:"errors"`
	Message string   `json:"message,omitempty"`
}

type output struct {
	ID      any      `json:"id"`
	Rules   any      `json:"aggregated,omitempty"`
	Answers []answer `json:"answers,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// Listers list in name order: an informer's cache has no order, and the first binding that
// allows is the one RBAC names, so the playground fixes one.
type sortedClusterRoleBindings struct {
	l rbaclisters.ClusterRoleBindingLister
}

func (s sortedClusterRoleBindings) ListClusterRoleBindings(ctx context.Context) ([]*rbacv1.ClusterRoleBinding, error) {
	items, err := s.l.List(labels.Everything())
	sort.Slice(items, func(i, j int) bool { return items[i].Name < items[j].Name })
	return items, err
}

type sortedRoleBindings struct{ l rbaclisters.RoleBindingLister }

func (s sortedRoleBindings) ListRoleBindings(ctx context.Context, namespace string) ([]*rbacv1.RoleBinding, error) {
	items, err := s.l.RoleBindings(namespace).List(labels.Everything())
	sort.Slice(items, func(i, j int) bool { return items[i].Name < items[j].Name })
	return items, err
}

func newIndexer() cache.Indexer {
	return cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
}

// aggregate runs the clusterrole-aggregation controller's sync over every aggregated role, in
// name order, until nothing changes.
func aggregate(roles []*rbacv1.ClusterRole) error {
	byName := append([]*rbacv1.ClusterRole(nil), roles...)
	sort.Slice(byName, func(i, j int) bool { return byName[i].Name < byName[j].Name })
	for pass := 0; pass <= len(byName)+1; pass++ {
		changed := false
		for _, role := range byName {
			if role.AggregationRule == nil {
				continue
			}
			rules := []rbacv1.PolicyRule{}
			for i := range role.AggregationRule.ClusterRoleSelectors {
				selector, err := metav1.LabelSelectorAsSelector(&role.AggregationRule.ClusterRoleSelectors[i])
				if err != nil {
					return err
				}
				for _, other := range byName {
					if other.Name == role.Name || !selector.Matches(labels.Set(other.Labels)) {
						continue
					}
					for _, rule := range other.Rules {
						if !ruleExists(rules, rule) {
							rules = append(rules, rule)
						}
					}
				}
			}
			if !equality.Semantic.DeepEqual(rules, role.Rules) {
				role.Rules = rules
				changed = true
			}
		}
		if !changed {
			return nil
		}
	}
	return fmt.Errorf("aggregation did not settle")
}

func ruleExists(haystack []rbacv1.PolicyRule, needle rbacv1.PolicyRule) bool {
	for _, r := range haystack {
		if equality.Semantic.DeepEqual(r, needle) {
			return true
		}
	}
	return false
}

func judge(in input) output {
	out := output{ID: in.ID}
	if in.Bootstrap {
		b := bootstrap()
		// an object the user wrote replaces the bootstrap one of the same name
		in.ClusterRoles = mergeByName(b.ClusterRoles, in.ClusterRoles, func(r rbacv1.ClusterRole) string { return r.Name })
		in.ClusterRoleBindings = mergeByName(b.ClusterRoleBindings, in.ClusterRoleBindings, func(r rbacv1.ClusterRoleBinding) string { return r.Name })
		in.Roles = mergeByName(b.Roles, in.Roles, func(r rbacv1.Role) string { return r.Namespace + "/" + r.Name })
		in.RoleBindings = mergeByName(b.RoleBindings, in.RoleBindings, func(r rbacv1.RoleBinding) string { return r.Namespace + "/" + r.Name })
	}
	crIdx, crbIdx, rIdx, rbIdx := newIndexer(), newIndexer(), newIndexer(), newIndexer()
	var clusterRoles []*rbacv1.ClusterRole
	for i := range in.ClusterRoles {
		clusterRoles = append(clusterRoles, &in.ClusterRoles[i])
	}
	if err := aggregate(clusterRoles); err != nil {
		out.Error = err.Error()
		return out
	}
	aggregated := map[string][]rbacv1.PolicyRule{}
	for _, r := range clusterRoles {
		if r.AggregationRule != nil {
			aggregated[r.Name] = r.Rules
		}
		_ = crIdx.Add(r)
	}
	out.Rules = aggregated
	for i := range in.ClusterRoleBindings {
		rbacv1defaults.SetObjectDefaults_ClusterRoleBinding(&in.ClusterRoleBindings[i])
		_ = crbIdx.Add(&in.ClusterRoleBindings[i])
	}
	for i := range in.Roles {
		_ = rIdx.Add(&in.Roles[i])
	}
	for i := range in.RoleBindings {
		rbacv1defaults.SetObjectDefaults_RoleBinding(&in.RoleBindings[i])
		_ = rbIdx.Add(&in.RoleBindings[i])
	}
	authz := rbac.New(
		&rbac.RoleGetter{Lister: rbaclisters.NewRoleLister(rIdx)},
		sortedRoleBindings{rbaclisters.NewRoleBindingLister(rbIdx)},
		&rbac.ClusterRoleGetter{Lister: rbaclisters.NewClusterRoleLister(crIdx)},
		sortedClusterRoleBindings{rbaclisters.NewClusterRoleBindingLister(crbIdx)},
	)
	for _, c := range in.Checks {
		a, err := judgeOne(authz, in, c)
		if err != nil {
			out.Error = err.Error()
			return out
		}
		out.Answers = append(out.Answers, a)
	}
	return out
}

func mergeByName[T any](base, mine []T, key func(T) string) []T {
	seen := map[string]bool{}
	for _, m := range mine {
		seen[key(m)] = true
	}
	var result []T
	for _, b := range base {
		if !seen[key(b)] {
			result = append(result, b)
		}
	}
	return append(result, mine...)
}

func judgeOne(authz *rbac.RBACAuthorizer, in input, c check) (answer, error) {
	u := &user.DefaultInfo{Name: c.User.Name, Groups: c.User.Groups, Extra: c.User.Extra}
	attrs := authorizer.AttributesRecord{
		User: u, Verb: c.Verb, Namespace: c.Namespace, APIGroup: resourcev1.GroupName, APIVersion: "v1",
		Resource: "resourceclaims", Subresource: "status", Name: c.Name, ResourceRequest: true,
	}
	ctx := context.Background()
	decision, reason, err := authz.Authorize(ctx, attrs)
	if err != nil {
		return answer{}, err
	}
	a := answer{Front: front{Allowed: decision == authorizer.DecisionAllow, Reason: reason}, Errors: []string{}}
	if !a.Front.Allowed {
		// what the authorization filter answers: 403 Forbidden
		a.Front.Message = responsewriters.ForbiddenStatusError(attrs, reason).Error()
		return a, nil
	}
	if !in.Granular {
		return a, nil
	}
	var oldStatus, newStatus resource.ResourceClaimStatus
	if err := resourcev1conv.Convert_v1_ResourceClaimStatus_To_resource_ResourceClaimStatus(&c.Old, &oldStatus, nil); err != nil {
		return answer{}, err
	}
	if err := resourcev1conv.Convert_v1_ResourceClaimStatus_To_resource_ResourceClaimStatus(&c.New, &newStatus, nil); err != nil {
		return answer{}, err
	}
	ctx = request.WithUser(ctx, u)
	ctx = request.WithRequestInfo(ctx, &request.RequestInfo{
		IsResourceRequest: true, Verb: c.Verb, APIPrefix: "apis", APIGroup: resourcev1.GroupName, APIVersion: "v1",
		Namespace: c.Namespace, Resource: "resourceclaims", Subresource: "status", Name: c.Name,
		Path: fmt.Sprintf("/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims/%s/status", c.Namespace, c.Name),
	})
	var errs field.ErrorList
	errs = append(errs, resourceutils.AuthorizedForBinding(ctx, field.NewPath("status", "allocation"), authz, newStatus, oldStatus)...)
	if in.DeviceStatus && newStatus.Allocation != nil {
		errs = append(errs, resourceutils.AuthorizedForDeviceStatus(ctx, field.NewPath("status", "devices"), authz, newStatus, oldStatus)...)
	}
	for _, e := range errs {
		a.Errors = append(a.Errors, e.Error())
	}
	if len(errs) > 0 {
		a.Message = apierrors.NewInvalid(schema.GroupKind{Group: resourcev1.GroupName, Kind: "ResourceClaim"}, c.Name, errs).Error()
	}
	return a, nil
}

func main() {
	printBootstrap := flag.Bool("bootstrap", false, "print the bootstrap roles and bindings")
	batch := flag.Bool("batch", false, "one JSON case per input line, one JSON answer per output line")
	flag.Parse()
	if *printBootstrap {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", " ")
		if err := enc.Encode(bootstrap()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if !*batch {
		fmt.Fprintln(os.Stderr, "usage: authz --bootstrap | --batch")
		os.Exit(2)
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	w := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(w)
	for in.Scan() {
		var c input
		var out output
		if err := json.Unmarshal(in.Bytes(), &c); err != nil {
			out = output{Error: "cannot read case: " + err.Error()}
		} else {
			out = judge(c)
		}
		if err := enc.Encode(out); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		w.Flush()
	}
}
