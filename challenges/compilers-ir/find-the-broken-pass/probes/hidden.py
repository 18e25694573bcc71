"""Hidden probes for find-the-broken-pass: they make the score.

The same machinery as the public probes (given/pipeline.py): a small linalg
program compiled by iree-compile with the IR printed after every pass, one
miscompilation planted at one pass (or none) and carried into every later
dump, and one call of ``find_broken_pass``. ``localise`` probes check the
answer only; ``bisect`` probes also hold the number of compiles to
ceil(log2(n)) + 2 for n dumps.
"""

from __future__ import annotations

from typing import Any

from probe_common import observe
from probekit import probe

# ---------------------------------------------------------------- localise: the answer

FUSION = "iree-dispatch-creation-elementwise-op-fusion @main"
CLONE = "iree-dispatch-creation-clone-producers-into-dispatch-regions @main"
COLLAPSE = "iree-dispatch-creation-collapse-dimensions @main"
GENERALIZE = "iree-global-opt-generalize-linalg-named-ops @main"
OUTLINE = "iree-flow-outline-dispatch-regions"


@probe(category="localise", weight=2, check="same_pass", hints=["edges", "tight-tolerance"])
def constant_broken_by_the_first_pass(solution: Any) -> Any:
    """Layer norm: the very first pass, input conversion, already rounds a constant through bfloat16."""
    return observe(solution, "layernorm_rows", 6, bug="const", at="first", seed=11)


@probe(category="localise", weight=2, check="same_pass", hints=["tolerance"])
def inliner_swaps_operands_first_output(solution: Any) -> Any:
    """Two outputs: an early pass swaps a subtraction's operands; only the first output shows it."""
    return observe(solution, "diff_and_energy", 8, bug="swap", at=("inline", 0), seed=12)


@probe(category="localise", weight=2, check="same_pass", hints=["every-output", "tolerance"])
def collapse_reduces_wrong_dim_second_output(solution: Any) -> Any:
    """Two outputs: a late pass reduces along the wrong dimension; only the second output shows it."""
    return observe(solution, "diff_and_energy", 12, bug="reduce", at=(COLLAPSE, 0), seed=13)


@probe(category="localise", weight=2, check="same_pass", hints=["tight-tolerance", "tolerance"])
def constant_rounded_in_cloned_producer(solution: Any) -> Any:
    """Matmul + bias + ReLU + row sum: a late pass rounds 1/7 through bfloat16."""
    return observe(solution, "dense_relu_rowsum", 10, bug="const", at=(CLONE, 0), seed=14)


@probe(category="localise", weight=2, check="same_pass", hints=["edges", "tolerance"])
def gelu_nothing_broken(solution: Any) -> Any:
    """GELU + column mean, 124 dumps: no pass is broken."""
    return observe(solution, "gelu_colmean", 8, seed=15)


@probe(category="localise", weight=2, check="same_pass", hints=["edges", "tolerance"])
def broken_by_the_last_pass(solution: Any) -> Any:
    """GELU + column mean: only the very last dump is broken (a reduction along the wrong dimension)."""
    return observe(solution, "gelu_colmean", 10, bug="reduce", at="last", seed=16)


# ---------------------------------------------------------------- bisect: the answer within ceil(log2(n)) + 2 compiles


@probe(category="bisect", check="same_pass_within_budget", hints=["budget", "identical-dumps"])
def bisect_generalized_reduction(solution: Any) -> Any:
    """Softmax, 146 dumps up to flow: generalizing a named reduction picks the wrong dimension."""
    return observe(solution, "softmax_rows", 8, bug="reduce", at=(GENERALIZE, 0), phase="flow", seed=17)


@probe(category="bisect", check="same_pass_within_budget", hints=["budget", "identical-dumps"])
def bisect_fusion_swap(solution: Any) -> Any:
    """GELU + column mean, 124 dumps: elementwise fusion swaps the matmul's operands."""
    return observe(solution, "gelu_colmean", 12, bug="swap", at=(FUSION, 0), seed=18)


@probe(category="bisect", check="same_pass_within_budget", hints=["budget", "tight-tolerance"])
def bisect_outlined_constant(solution: Any) -> Any:
    """Matmul + bias + ReLU + row sum, 145 dumps up to flow: outlining dispatches rounds a constant."""
    return observe(solution, "dense_relu_rowsum", 12, bug="const", at=(OUTLINE, 0), phase="flow", seed=19)


@probe(category="bisect", check="same_pass_within_budget", hints=["budget", "edges"])
def bisect_nothing_broken(solution: Any) -> Any:
    """Layer norm, 72 dumps up to global-optimization: no pass is broken."""
    return observe(solution, "layernorm_rows", 8, phase="global-optimization", seed=20)
