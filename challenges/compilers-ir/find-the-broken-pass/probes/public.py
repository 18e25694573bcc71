"""Public probes for find-the-broken-pass: what Run shows, observations and all.

Each probe writes a small linalg program, compiles it with iree-compile up to
the end of a tensor-level phase with the IR printed after every pass, and, in
most cases, plants one miscompilation at one pass: the dumps from that pass on
come from compiling the program with the bug in it, so every later pass
carries the bug forward (see ``build_case`` in given/pipeline.py). It then calls your
``find_broken_pass`` once and returns your answer with the number of compiles
you used. The trusted checks (probes/checks.py) compare the answer with the
reference's and the compiles with ceil(log2(n)) + 2. The hidden probes use
the same machinery with other programs, bugs, passes and phases.
"""

from __future__ import annotations

from typing import Any

from probe_common import observe
from probekit import probe

# ---------------------------------------------------------------- probes

FUSION = "iree-dispatch-creation-elementwise-op-fusion @main"
CLONE = "iree-dispatch-creation-clone-producers-into-dispatch-regions @main"


@probe(category="bisect", check="same_pass_within_budget", hints=["budget", "identical-dumps", "tolerance"])
def matmul_operands_swapped_by_fusion(solution: Any) -> Any:
    """Matmul + bias + ReLU + row sum, 124 dumps: elementwise fusion swaps the matmul's operands."""
    return observe(solution, "dense_relu_rowsum", 8, bug="swap", at=(FUSION, 0), seed=1, budgeted=True)


@probe(category="localise", weight=2, check="same_pass", hints=["edges", "tolerance"])
def softmax_nothing_broken(solution: Any) -> Any:
    """Softmax, 72 dumps up to global-optimization: no pass is broken."""
    return observe(solution, "softmax_rows", 8, phase="global-optimization", seed=2)


@probe(category="localise", weight=2, check="same_pass", hints=["tight-tolerance", "tolerance"])
def layernorm_constant_in_cloned_producer(solution: Any) -> Any:
    """Layer norm, 124 dumps: cloning producers into dispatch regions rounds 1/12 through bfloat16."""
    return observe(solution, "layernorm_rows", 12, bug="const", at=(CLONE, 0), seed=3)
