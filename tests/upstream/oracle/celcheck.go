package main

import (
	"fmt"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apiserver/pkg/cel/environment"
	dracel "k8s.io/dynamic-resource-allocation/cel"
)

// CelResult is the answer to a CEL request: whether Kubernetes' DRA CEL
// compiler accepts the selector and its estimated cost, as the apiserver's
// validation of a new (or a stored) selector sees it.
type CelResult struct {
	Outcome string `json:"outcome"` // "compiled" or "invalid"
	Message string `json:"message,omitempty"`
	MaxCost uint64 `json:"maxCost"`
	// TooComplex: the estimate exceeds the selector cost limit, which the apiserver rejects.
	TooComplex bool `json:"tooComplex"`
}

func compileCEL(expression, gateText string, stored, derived bool) (*CelResult, error) {
	gates, err := parseGates(gateText)
	if err != nil {
		return nil, fmt.Errorf("--feature-gates: %v", err)
	}
	features := allocatorFeatures(gates)
	envType := environment.NewExpressions
	if stored {
		envType = environment.StoredExpressions
	}
	compiler := dracel.GetCompiler(dracel.Features{
		EnableConsumableCapacity: features.ConsumableCapacity,
		EnableListTypeAttributes: features.ListTypeAttributes,
	})
	result := compiler.CompileCELExpression(expression, dracel.Options{EnvType: &envType, DerivedAttribute: derived})
	if result.Error != nil {
		return &CelResult{Outcome: "invalid", Message: result.Error.Detail, MaxCost: result.MaxCost}, nil
	}
	return &CelResult{Outcome: "compiled", MaxCost: result.MaxCost,
		TooComplex: result.MaxCost > resourceapi.CELSelectorExpressionMaxCost}, nil
}
