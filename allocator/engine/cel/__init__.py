"""A pure-Python CEL implementation with the Kubernetes DRA selector environment.

Compile with `compile_selector(expression, options)` (cached), then call
`program.evaluate(device)` for each `DeviceInput`; `program.estimated_cost` is
the worst-case estimate validation compares with COST_LIMIT, and
`program.evaluate_with_cost(device)` also returns the actual cost. Semantics,
error texts and cost accounting follow cel-go as Kubernetes configures it for DRA.
"""
from .errors import CelCompileError, CelCostLimitError, CelError, CelInterruptedError, CelRuntimeError
from .inputs import DeviceInput, Options
from .program import (
    COST_LIMIT,
    MAX_EXPRESSION_LENGTH,
    Program,
    compile_derived_attribute,
    compile_expression,
    compile_selector,
)

__all__ = [
    "COST_LIMIT",
    "MAX_EXPRESSION_LENGTH",
    "CelCompileError",
    "CelCostLimitError",
    "CelError",
    "CelInterruptedError",
    "CelRuntimeError",
    "DeviceInput",
    "Options",
    "Program",
    "compile_derived_attribute",
    "compile_expression",
    "compile_selector",
]
