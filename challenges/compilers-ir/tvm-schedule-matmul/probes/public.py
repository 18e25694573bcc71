"""Public probes for tvm-schedule-matmul: what Run shows.

Every probe schedules the naive matmul with the candidate's
``schedule_matmul(sch, tiles)`` inside the sandbox. ``correctness`` probes
compile and run it and return the output; the check ``product_ok`` (trusted
worker) compares it with the exact product of the same inputs, regenerated
from the seed. ``loop-nest``, ``annotations`` and ``cache`` probes return the
scheduled PrimFunc's loops and blocks as plain data, which ``nest_ok``,
``annotations_ok`` and ``cache_ok`` compare with the required structure.
The hidden probes (hidden.py) do the same on other shapes and tiles.

The section above the probes is identical in public.py and hidden.py.
"""

from typing import Any

from probe_common import run_product, structure
from probekit import probe

# ---------------------------------------------------------------- probes

SMALL, SMALL_TILES = (30, 21, 13), {"i": 8, "j": 8, "k": 4}


@probe(category="correctness", check="product_ok", hints=["tails"])
def product_with_tails(solution: Any) -> Any:
    """(30 x 13) @ (13 x 21) with tiles i=8, j=8, k=4: a tail on every axis."""
    return run_product(solution, *SMALL, SMALL_TILES, seed=1)


@probe(category="correctness", check="product_ok", hints=["tails"])
def product_timed(solution: Any) -> Any:
    """A 128-cube with tiles i=32, j=16, k=4; also timed against the naive schedule (information only)."""
    return run_product(solution, 128, 128, 128, {"i": 32, "j": 16, "k": 4}, seed=2, timed=True)


@probe(category="loop-nest", check="nest_ok", hints=["loop-order"])
def nest_small(solution: Any) -> Any:
    """The six tile loops around the update block for (30 x 13) @ (13 x 21), tiles i=8, j=8, k=4."""
    return structure(solution, *SMALL, SMALL_TILES)


@probe(category="annotations", check="annotations_ok", hints=["parallel", "vectorize"])
def annotations_small(solution: Any) -> Any:
    """The parallel and vectorized loops for (30 x 13) @ (13 x 21), tiles i=8, j=8, k=4."""
    return structure(solution, *SMALL, SMALL_TILES)


@probe(category="cache", check="cache_ok", hints=["cache"])
def cache_small(solution: Any) -> Any:
    """Where the accumulator tile is copied to C for (30 x 13) @ (13 x 21), tiles i=8, j=8, k=4."""
    return structure(solution, *SMALL, SMALL_TILES)
