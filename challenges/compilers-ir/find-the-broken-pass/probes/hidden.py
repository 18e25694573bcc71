"""Hidden probes for find-the-broken-pass: they make the score.

The same machinery as the public probes (given/pipeline.py): a small linalg
program compiled by iree-compile with the IR printed after every pass, one
miscompilation planted at one pass (or none) and carried into every later
dump, and one call of ``find_broken_pass``. ``localise`` probes check the
answer only; ``bisect`` probes also hold the number of compiles to
ceil(log2(n)) + 2 for n dumps, and stop a search at the call past it.
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
FORM = "iree-dispatch-creation-form-dispatch-regions @main"
BARRIERS = "iree-dispatch-creation-insert-tensor-barriers @main"


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


@probe(category="localise", weight=2, check="same_pass", hints=["tight-tolerance", "tolerance"])
def softmax_scale_rounded_just_over_tolerance(solution: Any) -> Any:
    """Softmax: forming dispatch regions rounds the 1/sqrt(12) scale through bfloat16.

    The outputs move by only 3.6 times the statement's bound at worst (seed
    31 was picked for that), so a tolerance about ten times looser
    (rtol = 1e-3, or a flat atol = 1e-4) passes the broken dumps as good.
    """
    return observe(solution, "softmax_rows", 8, bug="const", at=(FORM, 0), seed=31)


@probe(category="localise", weight=2, check="same_pass", hints=["elementwise", "tight-tolerance"])
def gelu_constant_visible_elementwise_only(solution: Any) -> Any:
    """GELU + column mean: an early pass rounds sqrt(2/pi) through bfloat16.

    4.4 times the bound on the worst element, but under it on average: a
    check on the mean error, on the norm of the error, or relative to the
    output's largest value passes the broken dumps (seed 38 was picked for
    that), as does rtol = 1e-3. Only the statement's per-element test fails them.
    """
    return observe(solution, "gelu_colmean", 8, bug="const", at=(BARRIERS, 0), seed=38)


@probe(category="localise", weight=2, check="same_pass", hints=["tolerance"])
def layernorm_output_near_zero(solution: Any) -> Any:
    """Layer norm: a late pass reduces along the wrong dimension, and one output is close to zero.

    Where beta nearly cancels the normalized value, an output is as small as
    6e-5 (seed 126 was picked for that). There, IREE's float32 rounding is
    under 1% of the statement's bound, thanks to its atol, but 12 times a
    bound with no atol (rtol = 1e-4 alone) and 7 times NumPy's default
    allclose (rtol = 1e-5, atol = 1e-8). Such a test calls the good dumps
    broken and names a pass that is too early.
    """
    return observe(solution, "layernorm_rows", 12, bug="reduce", at=(COLLAPSE, 0), seed=126)


@probe(category="localise", weight=2, check="same_pass", hints=["tolerance"])
def energy_outputs_large(solution: Any) -> Any:
    """Two outputs, 32 x 32: a late pass swaps a subtraction's operands, and the energies are large.

    Each energy is a sum of 32 squares, 66 on average and up to 115, and
    IREE's float32 sum is off by up to 2.8e-5 (seed 96 was picked for that):
    0.3% of the statement's bound, but 2.8 times a flat atol = 1e-5 with no
    rtol. Such a test calls the good dumps broken and names a pass that is
    too early.
    """
    return observe(solution, "diff_and_energy", 32, bug="swap", at=(CLONE, 0), seed=96)


# ---------------------------------------------------------------- bisect: the answer within ceil(log2(n)) + 2 compiles


@probe(category="bisect", check="same_pass_within_budget", hints=["budget", "identical-dumps"])
def bisect_generalized_reduction(solution: Any) -> Any:
    """Softmax, 146 dumps up to flow: generalizing a named reduction picks the wrong dimension."""
    return observe(solution, "softmax_rows", 8, bug="reduce", at=(GENERALIZE, 0), phase="flow", seed=17, budgeted=True)


@probe(category="bisect", check="same_pass_within_budget", hints=["budget", "identical-dumps"])
def bisect_fusion_swap(solution: Any) -> Any:
    """GELU + column mean, 124 dumps: elementwise fusion swaps the matmul's operands."""
    return observe(solution, "gelu_colmean", 12, bug="swap", at=(FUSION, 0), seed=18, budgeted=True)


@probe(category="bisect", check="same_pass_within_budget", hints=["budget", "tight-tolerance"])
def bisect_outlined_constant(solution: Any) -> Any:
    """Matmul + bias + ReLU + row sum, 145 dumps up to flow: outlining dispatches rounds a constant."""
    return observe(solution, "dense_relu_rowsum", 12, bug="const", at=(OUTLINE, 0), phase="flow", seed=19, budgeted=True)


@probe(category="bisect", check="same_pass_within_budget", hints=["budget", "edges"])
def bisect_nothing_broken(solution: Any) -> Any:
    """Layer norm, 72 dumps up to global-optimization: no pass is broken."""
    return observe(solution, "layernorm_rows", 8, phase="global-optimization", seed=20, budgeted=True)
