"""CEL selectors: the engine's compiler and evaluator against Kubernetes' DRA CEL package (v0.37.2).

The corpus is every selector of the shared cases and real-world manifests plus a handwritten
set that touches each library of the Kubernetes environment. Compilation is compared as the
apiserver validates a stored selector (compile error, too complex, accepted); evaluation on a
device, through one allocation each (true: allocated, false: unsatisfiable, error: invalid).
"""
import pytest

from allocator.engine import cel
from allocator.engine.scenario import cel_check
from tests.upstream.cel_corpus import DERIVED
from tests.conftest import CONFORMANCE_DIR, REALWORLD_DIR
from tests.upstream.cel_corpus import HANDWRITTEN, scenario, realworld_expressions
from tests.upstream.driver import ours

CORPUS = HANDWRITTEN + realworld_expressions(CONFORMANCE_DIR, REALWORLD_DIR)
# The validation view: selectors are stored with every CEL feature declared.
VALIDATION_GATES = "DRAListTypeAttributes=true,DRAConsumableCapacity=true"


def _verdict(mine) -> str:
    if mine is None:
        return "compiled"
    return "too complex" if mine[0] == "forbidden" else "invalid"


def test_selectors_compile_as_upstream(oracle):
    differences = []
    for expression in CORPUS:
        upstream = oracle.ask_cel(expression, gates=VALIDATION_GATES, stored=True)
        theirs = "too complex" if upstream.get("tooComplex") else upstream["outcome"]
        mine = _verdict(cel_check(expression))
        if mine != theirs:
            differences.append(f"{expression!r}: ours {mine}, upstream {theirs} {upstream.get('message', '')}")
        elif theirs != "invalid":
            cost = cel.compile_selector(expression, cel.Options(stored=True, list_type_attributes=True)).estimated_cost
            if cost != upstream["maxCost"]:
                differences.append(f"{expression!r}: estimated cost ours {cost}, upstream {upstream['maxCost']}")
    assert not differences, "\n".join(differences)


def test_derived_attributes_compile_as_upstream(oracle):
    differences = []
    for expression in DERIVED + CORPUS:
        upstream = oracle.ask_cel(expression, gates=VALIDATION_GATES, stored=True, derived=True)
        theirs = "too complex" if upstream.get("tooComplex") else upstream["outcome"]
        mine = _verdict(cel_check.derived(expression))
        if mine != theirs:
            differences.append(f"{expression!r}: ours {mine}, upstream {theirs} {upstream.get('message', '')}")
    assert not differences, "\n".join(differences)


@pytest.mark.parametrize("gates", ["DRAListTypeAttributes=true", "DRAListTypeAttributes=false"])
def test_selectors_evaluate_as_upstream(oracle, gates):
    differences, compared = [], 0
    for expression in CORPUS:
        if cel_check(expression) is not None:
            continue  # refused by validation: compared above
        text = scenario(expression)
        mine = ours(text, node="node-1", gates=gates)
        theirs = oracle.ask(text, node="node-1", gates=gates)
        compared += 1
        if mine["outcome"] != theirs["outcome"]:
            differences.append(f"{expression!r}: ours {mine['outcome']} ({mine.get('message')}), "
                               f"upstream {theirs['outcome']} ({theirs.get('message')})")
    assert not differences, "\n".join(differences)
    assert compared > 200
