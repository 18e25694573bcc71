"""Hidden probes for tvm-schedule-matmul: they make the score.

Every probe builds the naive matmul PrimFunc with TVM's tensor expressions,
wraps it in a ``tvm.s_tir.Schedule`` and hands it to the candidate's
``schedule_matmul(sch, tiles)``. Then, still inside the sandbox:

- ``correctness`` probes compile the scheduled module with LLVM, run it on
  inputs generated from a seed (into an output filled with NaN, so elements
  the schedule never writes show up) and return the output. The check
  ``product_ok`` regenerates the inputs in the trusted worker and compares
  with their exact float64 product. Two of them also time the naive and the
  scheduled kernel: the speed-up is shown to the candidate, never graded.
- ``loop-nest``, ``annotations`` and ``cache`` probes walk the scheduled
  PrimFunc (``loop_nest``) and return its loops and blocks as plain data:
  extents, kinds, nesting, which block iterator each loop feeds, which
  buffers each block reads and writes. The checks ``nest_ok``,
  ``parallel_ok``, ``vectorize_ok`` and ``cache_ok`` compare that structure
  with the one the statement requires, computed from the shape and tiles of
  the reference's observation.

The section above the probes is identical in public.py and hidden.py.
"""

from typing import Any

from probe_common import run_product, structure
from probekit import probe

# ---------------------------------------------------------------- correctness


@probe(category="correctness", check="product_ok", hints=["tails"])
def product_divisible(solution: Any) -> Any:
    """A product whose dimensions every tile size divides."""
    return run_product(solution, 96, 64, 128, {"i": 32, "j": 16, "k": 8}, seed=11)


@probe(category="correctness", check="product_ok", hints=["tails"])
def product_no_tile_divides(solution: Any) -> Any:
    """No tile size divides its dimension: every loop has a tail."""
    return run_product(solution, 43, 35, 27, {"i": 16, "j": 8, "k": 4}, seed=12)


@probe(category="correctness", check="product_ok", hints=["tails"])
def product_reduction_tail(solution: Any) -> Any:
    """Only the reduction dimension has a tail."""
    return run_product(solution, 64, 48, 50, {"i": 16, "j": 16, "k": 8}, seed=13)


@probe(category="correctness", check="product_ok", hints=["tails"])
def product_tiles_exceed_matrix(solution: Any) -> Any:
    """Tiles larger than the whole matrix."""
    return run_product(solution, 7, 9, 5, {"i": 16, "j": 16, "k": 8}, seed=14)


@probe(category="correctness", check="product_ok", hints=["tails"])
def product_single_row(solution: Any) -> Any:
    """A single row times a wide matrix."""
    return run_product(solution, 1, 70, 33, {"i": 8, "j": 32, "k": 4}, seed=15)


@probe(category="correctness", check="product_ok", hints=["tails"])
def product_large_timed(solution: Any) -> Any:
    """A larger product with tails; also timed against the naive schedule (information only)."""
    return run_product(solution, 250, 190, 130, {"i": 32, "j": 16, "k": 8}, seed=16, timed=True)


@probe(category="correctness", check="product_ok", hints=["tails"])
def product_square_timed(solution: Any) -> Any:
    """A 256-cube product; also timed against the naive schedule (information only)."""
    return run_product(solution, 256, 256, 256, {"i": 32, "j": 32, "k": 4}, seed=17, timed=True)


# ---------------------------------------------------------------- loop nest


@probe(category="loop-nest", check="nest_ok", hints=["loop-order"])
def nest_with_tails(solution: Any) -> Any:
    """The six tile loops around the compute block, when no tile divides its dimension."""
    return structure(solution, 43, 35, 27, {"i": 16, "j": 8, "k": 4})


@probe(category="loop-nest", check="nest_ok", hints=["loop-order"])
def nest_rectangular_tiles(solution: Any) -> Any:
    """The six tile loops around the compute block, with tiles of three different sizes."""
    return structure(solution, 128, 96, 80, {"i": 32, "j": 16, "k": 8})


@probe(category="loop-nest", check="nest_ok", hints=["loop-order"])
def nest_wide_vector(solution: Any) -> Any:
    """The six tile loops around the compute block, with a wide j tile and a short k tile."""
    return structure(solution, 100, 96, 30, {"i": 8, "j": 32, "k": 2})


@probe(category="loop-nest", check="nest_ok", hints=["tails", "loop-order"])
def nest_tiles_exceed_matrix(solution: Any) -> Any:
    """The six tile loops when every tile is larger than its dimension: inner extents are still the tiles."""
    return structure(solution, 7, 9, 5, {"i": 16, "j": 16, "k": 8})


# ---------------------------------------------------------------- annotations


@probe(category="annotations", check="parallel_ok", hints=["parallel"])
def parallel_with_tails(solution: Any) -> Any:
    """Which loop around the update is parallel, when no tile divides its dimension."""
    return structure(solution, 43, 35, 27, {"i": 16, "j": 8, "k": 4})


@probe(category="annotations", check="vectorize_ok", hints=["vectorize"])
def vectorize_rectangular_tiles(solution: Any) -> Any:
    """Which loop around the update is vectorized, with tiles of three different sizes."""
    return structure(solution, 128, 96, 80, {"i": 32, "j": 16, "k": 8})


# ---------------------------------------------------------------- cache


@probe(category="cache", check="cache_ok", hints=["cache"])
def cache_with_tails(solution: Any) -> Any:
    """Where the accumulator tile is written back to C, when no tile divides its dimension."""
    return structure(solution, 43, 35, 27, {"i": 16, "j": 8, "k": 4})


@probe(category="cache", check="cache_ok", hints=["cache"])
def cache_rectangular_tiles(solution: Any) -> Any:
    """Where the accumulator tile is written back to C, with tiles of three different sizes."""
    return structure(solution, 128, 96, 80, {"i": 32, "j": 16, "k": 8})
