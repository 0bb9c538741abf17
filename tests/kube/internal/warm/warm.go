// Package warm names the Kubernetes packages the oracles in this module build on, so that one
// `go build ./...` compiles them once for every oracle (they share the build cache).
package warm

import (
	_ "k8s.io/kubernetes/pkg/apis/resource/validation"
	_ "k8s.io/kubernetes/pkg/features"
	_ "k8s.io/kubernetes/pkg/registry/resource/resourceclaim"
	_ "k8s.io/kubernetes/pkg/scheduler"
	_ "k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac"
	_ "k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac/bootstrappolicy"
)
