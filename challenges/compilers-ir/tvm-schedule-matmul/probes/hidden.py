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

Several probes, and every generated case, list the keys of ``tiles`` in an
order other than i, j, k (with three different sizes): the statement says
the tiles are looked up by axis name, so a schedule that unpacks
``tiles.values()`` by position gets the wrong tile on some axis (red team
round 2). ``annotations_small_and_wide`` holds a fixed list of small
problems with several i tiles and j tiles of 72 to 300: rule 2 applies
whatever the size. ``FAR_TILES`` (red team round 3) has i, j and k tiles far
above any dimension (300 to 4096, and since round 4 up to 2**24, the largest
tile the statement allows): a schedule that clamps a tile to 256, 512 or
4096, or vectorizes only up to 512 lanes, passed every probe before. The nest
and annotation probes over it only read the scheduled TIR (the kernel's run
time grows with ti * tk * tj, not with the matrix: a tile of 10**6 would
never finish); ``products_tiles_far_above_matrix`` compiles two cheap ones.
``annotations_unit_copy`` has 1 x 1 tiles and 1 x 1 matrices: the copy of
such a tile has no loop of its own (TVM drops unit loops), so a schedule that
vectorizes "the copy's innermost loop" unguarded vectorizes the outer j loop
(rule 2 forbids it when its extent is above 1) or has TVM refuse.

Below the hand-written probes, ``generated_cases`` draws shapes and tiles
from a fixed seed: every axis 1, a prime or any size up to 256, every tile
1, a divisor, a non-divisor, the dimension itself or larger than it, and in
the structural families (which build nothing) also far above 256 and 512,
and 6 more cases of their own seed (``huge_cases``) with tiles above 4096, up
to 2**24. One
probe per rule runs the reference's check on each generated case
(``generated_ok``), and ``memory_stays_in_bounds`` reads each scheduled
PrimFunc for a block iterator that can leave its domain or an access that
can leave its buffer (``memory_problems``, TVM's own OOB checker plus a
proof over the loop ranges and the block predicates; when the OOB checker
refuses, each access is proven again under the conditions it is evaluated
in, the taken branch of a T.if_then_else included, which the OOB checker
ignores: red team round 4's B packed with transform_layout(pad_value=0.0)).
``check="memory_ok"`` names the rule and the first case that fails.
Loops of extent 1 may feed no block iterator (``preserve_unit_iters=False``):
the checks count such a loop as the one rule 1 puts at its place.
"""

import random
from typing import Any

import tvm
from probe_common import naive_matmul, run_product, scheduled, structure
from probekit import probe

# ---------------------------------------------------------------- correctness


@probe(category="correctness", check="product_ok", hints=["tails"])
def product_divisible(solution: Any) -> Any:
    """A product whose dimensions every tile size divides."""
    return run_product(solution, 96, 64, 128, {"i": 32, "j": 16, "k": 8}, seed=11)


@probe(category="correctness", check="product_ok", hints=["tails"])
def product_no_tile_divides(solution: Any) -> Any:
    """No tile size divides its dimension: every loop has a tail."""
    return run_product(solution, 43, 35, 27, {"k": 4, "j": 8, "i": 16}, seed=12)


@probe(category="correctness", check="product_ok", hints=["tails"])
def product_reduction_tail(solution: Any) -> Any:
    """Only the reduction dimension has a tail."""
    return run_product(solution, 64, 48, 50, {"k": 8, "i": 16, "j": 16}, seed=13)


@probe(category="correctness", check="product_ok", hints=["tails"])
def product_tiles_exceed_matrix(solution: Any) -> Any:
    """Tiles larger than the whole matrix."""
    return run_product(solution, 7, 9, 5, {"i": 16, "j": 16, "k": 8}, seed=14)


@probe(category="correctness", check="product_ok", hints=["tails"])
def product_single_row(solution: Any) -> Any:
    """A single row times a wide matrix."""
    return run_product(solution, 1, 70, 33, {"j": 32, "i": 8, "k": 4}, seed=15)


@probe(category="correctness", check="product_ok", hints=["tails"])
def product_large_timed(solution: Any) -> Any:
    """A larger product with tails; also timed against the naive schedule (information only)."""
    return run_product(solution, 250, 190, 130, {"j": 16, "k": 8, "i": 32}, seed=16, timed=True)


@probe(category="correctness", check="product_ok", hints=["tails"])
def product_square_timed(solution: Any) -> Any:
    """A 256-cube product; also timed against the naive schedule (information only)."""
    return run_product(solution, 256, 256, 256, {"i": 32, "j": 32, "k": 4}, seed=17, timed=True)


@probe(category="correctness", check="generated_ok", hints=["tails"])
def products_tiles_far_above_matrix(solution: Any) -> Any:
    """Tiles far above the matrix (i 1000, j 600 and 4096, k 300): the product of each."""
    cases = [(45, 37, 29, {"k": 300, "i": 1000, "j": 600}), (20, 256, 9, {"j": 4096, "i": 300, "k": 2})]
    return {"check": "product_ok", "cases": [run_product(solution, M, N, K, t, seed=30 + n) for n, (M, N, K, t) in enumerate(cases)]}


@probe(category="correctness")
def transforms_sch_in_place(solution: Any) -> Any:
    """The schedule returned is the one passed in, transformed in place."""
    sch = tvm.s_tir.Schedule(naive_matmul(43, 35, 27))
    out = solution.schedule_matmul(sch, {"i": 16, "j": 8, "k": 4})
    naive = tvm.s_tir.Schedule(naive_matmul(43, 35, 27)).mod.script()
    mine = sch.mod.script()
    return {
        "returned_is_sch": bool(isinstance(out, tvm.s_tir.Schedule) and out.mod.script() == mine),
        "sch_transformed": mine != naive,
    }


# ---------------------------------------------------------------- loop nest


@probe(category="loop-nest", check="nest_ok", hints=["loop-order"])
def nest_with_tails(solution: Any) -> Any:
    """The six tile loops around the compute block, when no tile divides its dimension."""
    return structure(solution, 43, 35, 27, {"k": 4, "j": 8, "i": 16})


@probe(category="loop-nest", check="nest_ok", hints=["loop-order"])
def nest_rectangular_tiles(solution: Any) -> Any:
    """The six tile loops around the compute block, with tiles of three different sizes (keys in the order j, k, i)."""
    return structure(solution, 128, 96, 80, {"j": 16, "k": 8, "i": 32})


@probe(category="loop-nest", check="nest_ok", hints=["loop-order"])
def nest_wide_vector(solution: Any) -> Any:
    """The six tile loops around the compute block, with a wide j tile and a short k tile."""
    return structure(solution, 100, 96, 30, {"k": 2, "i": 8, "j": 32})


@probe(category="loop-nest", check="nest_ok", hints=["tails", "loop-order"])
def nest_tiles_exceed_matrix(solution: Any) -> Any:
    """The six tile loops when every tile is larger than its dimension: inner extents are still the tiles."""
    return structure(solution, 7, 9, 5, {"k": 8, "j": 16, "i": 16})


@probe(category="loop-nest", check="nest_ok", hints=["loop-order"])
def nest_tiles_of_one(solution: Any) -> Any:
    """The six tile loops when the j and k tiles are 1: every axis is still split, into inner loops of extent 1."""
    return structure(solution, 10, 7, 5, {"j": 1, "k": 1, "i": 4})


# ---------------------------------------------------------------- annotations


@probe(category="annotations", check="parallel_ok", hints=["parallel"])
def parallel_with_tails(solution: Any) -> Any:
    """Which loop around the update is parallel, when no tile divides its dimension."""
    return structure(solution, 43, 35, 27, {"i": 16, "j": 8, "k": 4})


@probe(category="annotations", check="vectorize_ok", hints=["vectorize"])
def vectorize_rectangular_tiles(solution: Any) -> Any:
    """Which loop around the update is vectorized, with tiles of three different sizes."""
    return structure(solution, 128, 96, 80, {"k": 8, "i": 32, "j": 16})


@probe(category="annotations", check="parallel_ok", hints=["parallel"])
def parallel_small_problem(solution: Any) -> Any:
    """Which loop around the update is parallel in a small product (720 multiply-adds) with four i tiles."""
    return structure(solution, 12, 10, 6, {"k": 4, "i": 3, "j": 8})


@probe(category="annotations", check="vectorize_ok", hints=["vectorize"])
def vectorize_wide_j_tile(solution: Any) -> Any:
    """Which loop around the update is vectorized, with a j tile of 100 (wider than 64) and a tail on j."""
    return structure(solution, 40, 210, 24, {"j": 100, "i": 16, "k": 8})


# Small problems with several i tiles, and j tiles wider than 64 up to wider than the matrix: a schedule that
# parallelizes only large problems, or vectorizes only up to some width, leaves one of these loops serial. And one
# i tile with several j tiles: the outer i loop has extent 1, and no other loop may be parallel instead.
SMALL_AND_WIDE = (
    (8, 37, 29, {"i": 2, "j": 8, "k": 4}),
    (7, 40, 20, {"k": 4, "j": 16, "i": 8}),
    (5, 3, 2, {"k": 1, "j": 2, "i": 1}),
    (16, 128, 16, {"j": 128, "k": 4, "i": 4}),
    (24, 256, 12, {"k": 3, "i": 8, "j": 256}),
    (9, 200, 5, {"i": 4, "k": 5, "j": 300}),
    (3, 256, 256, {"j": 72, "i": 1, "k": 64}),
    # The outer i loop runs ceil(M / ti) times: two i tiles although M // ti is 1, three although it is 2 (red team
    # round 4: a schedule that parallelized i0 only when M // ti >= 2 was caught by one generated case alone).
    (20, 37, 29, {"j": 8, "i": 16, "k": 4}),
    (5, 12, 3, {"i": 3, "k": 2, "j": 4}),
    (250, 40, 8, {"k": 8, "j": 16, "i": 100}),
)


@probe(category="annotations", check="generated_ok", hints=["parallel", "vectorize"])
def annotations_small_and_wide(solution: Any) -> Any:
    """Small products with one or several i tiles (two where M // ti is 1: the outer extent is a ceiling), j tiles of 2 to 300: rule 2."""
    return {"check": "annotations_ok", "cases": [structure(solution, M, N, K, t) for M, N, K, t in SMALL_AND_WIDE]}


# Tiles far above every dimension (M, N, K <= 256; a tile goes up to 2**24): i, j and k tiles above 256 and above
# 512, up to 4096 and above, with one and with several i tiles. A schedule that clamps a tile to 256 or 512 ("no axis is
# longer") gets an inner loop shorter than the tile; one that vectorizes only up to 512 lanes leaves j_1 serial
# (red team round 3). Read from the scheduled TIR only: nothing is built.
FAR_TILES = (
    (45, 37, 29, {"k": 300, "i": 1000, "j": 8}),
    (45, 37, 29, {"j": 600, "k": 4, "i": 16}),
    (200, 256, 256, {"i": 300, "j": 1000, "k": 520}),
    (250, 3, 17, {"k": 600, "j": 2048, "i": 8}),
    (256, 20, 9, {"j": 4096, "i": 257, "k": 2}),
    (7, 200, 256, {"k": 4096, "i": 4096, "j": 4096}),
    (1, 1, 1, {"j": 4096, "k": 4096, "i": 4096}),
    # Above 4096 (red team round 4: a clamp at 4096, where the probes used to stop, passed them all): any fixed cap
    # is wrong, up to the largest tile the statement allows (2**24).
    (2, 2, 2, {"i": 5000, "j": 8192, "k": 10000}),
    (45, 37, 29, {"j": 65536, "k": 4097, "i": 1_000_000}),
    (3, 5, 2, {"k": 2**24, "i": 9000, "j": 100_000}),
    (20, 256, 9, {"i": 2**24, "j": 2**24, "k": 123_457}),
)


@probe(category="loop-nest", check="generated_ok", hints=["tails", "loop-order"], timeout=45)
def nest_tiles_far_above_matrix(solution: Any) -> Any:
    """Rule 1 with i, j and k tiles of 257 to 2**24, far above every dimension: the inner extents are the tiles, however large."""
    return {"check": "nest_ok", "cases": [structure(solution, M, N, K, t) for M, N, K, t in FAR_TILES]}


@probe(category="annotations", check="generated_ok", hints=["parallel", "vectorize"], timeout=45)
def annotations_tiles_far_above_matrix(solution: Any) -> Any:
    """Rule 2 with j tiles of 600 to 2**24 lanes (i and k tiles far above the matrix too): j_1 vectorized whatever its width, i_0 parallel."""
    return {"check": "annotations_ok", "cases": [structure(solution, M, N, K, t) for M, N, K, t in FAR_TILES]}


# Tiles of 1 on i and j, and 1 x 1 matrices: the copy of a 1 x 1 tile has no loop of its own (TVM drops unit
# loops), so "the copy's innermost loop" is then a loop around the update. Vectorizing it unguarded either
# vectorizes the outer j loop (extent 9 or 40 here: rule 2 forbids it) or has TVM refuse (red team round 3).
# The last case has one column and a j tile of 3: j_1 is still vectorized.
UNIT_COPY = (
    (6, 9, 5, {"j": 1, "i": 1, "k": 2}),
    (1, 40, 7, {"k": 3, "j": 1, "i": 4}),
    (1, 1, 29, {"i": 4, "k": 5, "j": 8}),
    (13, 1, 3, {"i": 1, "j": 3, "k": 1}),
)


@probe(category="annotations", check="generated_ok", hints=["parallel", "vectorize"])
def annotations_unit_copy(solution: Any) -> Any:
    """Tiles of 1 on i and j, a single row, a 1 x 1 product (the copy has no loop of its own), one column with a j tile of 3: rule 2."""
    return {"check": "annotations_ok", "cases": [structure(solution, M, N, K, t) for M, N, K, t in UNIT_COPY]}


# ---------------------------------------------------------------- cache


@probe(category="cache", check="cache_ok", hints=["cache"])
def cache_with_tails(solution: Any) -> Any:
    """Where the accumulator tile is written back to C, when no tile divides its dimension."""
    return structure(solution, 43, 35, 27, {"i": 16, "j": 8, "k": 4})


@probe(category="cache", check="cache_ok", hints=["cache"])
def cache_rectangular_tiles(solution: Any) -> Any:
    """Where the accumulator tile is written back to C, with tiles of three different sizes."""
    return structure(solution, 128, 96, 80, {"j": 16, "i": 32, "k": 8})


# Red team round 6: a schedule that skips the write cache when one tile covers its dimension ("a single tile gains
# nothing from staging", "a single k tile writes each element once anyway") passed both cases above, which have
# several tiles on every axis, and failed only the generated family. Rule 3 holds for every shape and tile.
CACHE_TILES_COVER_MATRIX = (
    (45, 37, 29, {"j": 64, "i": 64, "k": 4}),  # one i tile and one j tile, several k tiles
    (7, 9, 5, {"k": 8, "j": 16, "i": 16}),  # one tile covers the whole problem
    (13, 17, 19, {"i": 13, "j": 17, "k": 19}),  # tiles equal to the dimensions
    (3, 5, 2, {"k": 2**24, "i": 9000, "j": 100_000}),  # far above every dimension
    (1, 1, 1, {"i": 1, "k": 1, "j": 1}),  # a 1 x 1 product: the copy has no loop of its own
)
CACHE_SINGLE_K_TILE = (
    (32, 32, 7, {"i": 8, "j": 8, "k": 16}),  # several i and j tiles, one k tile larger than K
    (43, 35, 27, {"k": 27, "i": 16, "j": 8}),  # a k tile equal to K, tails on i and j
    (64, 48, 5, {"j": 16, "k": 4096, "i": 32}),
    (7, 9, 5, {"i": 16, "k": 5, "j": 16}),  # one tile covers the whole problem
)


@probe(category="cache", check="generated_ok", hints=["cache"])
def cache_tiles_cover_matrix(solution: Any) -> Any:
    """Where the accumulator tile is written back to C when one i tile and one j tile cover the matrix (the whole problem, too)."""
    return {"check": "cache_ok", "cases": [structure(solution, M, N, K, t) for M, N, K, t in CACHE_TILES_COVER_MATRIX]}


@probe(category="cache", check="generated_ok", hints=["cache"])
def cache_single_k_tile(solution: Any) -> Any:
    """Where the accumulator tile is written back to C when one k tile covers K (a single pass over k per tile of C)."""
    return {"check": "cache_ok", "cases": [structure(solution, M, N, K, t) for M, N, K, t in CACHE_SINGLE_K_TILE]}


# ---------------------------------------------------------------- generated shapes and tiles

PRIMES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97, 101, 103, 107,
          109, 113, 127, 131, 137, 139, 149, 151, 157, 163, 167, 173, 179, 181, 191, 193, 197, 199, 211, 223, 227, 229,
          233, 239, 241, 251)  # fmt: skip


def _dimension(rng: random.Random, largest: int) -> int:
    kind = rng.choices(("one", "prime", "any"), weights=(2, 3, 5))[0]
    if kind == "one":
        return 1
    if kind == "prime":
        return rng.choice([p for p in PRIMES if p <= largest])
    return rng.randint(2, largest)


def _tile(rng: random.Random, n: int, kind: str) -> int:
    tails = [t for t in range(2, n) if n % t]
    if kind == "tail" and tails:  # no tile divides: a partial last tile
        return rng.choice(tails)
    if kind == "divisor":  # a proper divisor; n itself when n is 1 or prime
        return rng.choice([d for d in range(2, n) if n % d == 0] or [n])
    if kind == "equal":
        return n
    if kind == "larger":
        return rng.randint(n + 1, 2 * n + 8)
    if kind == "far":  # above the largest dimension (256), above 512, or far above any
        return rng.choice((rng.randint(257, 512), rng.randint(513, 1100), 4096))
    if kind == "huge":  # above 4096, log-uniform up to 2**24, the largest tile the statement allows
        return min(round(2 ** rng.uniform(12.01, 24)), 2**24)
    return 1


# The orders in which a generated case lists the keys of ``tiles``: all six, in turn (a dict's key order carries
# no meaning, so a schedule that unpacks ``tiles.values()`` by position gets the wrong tile on some axis).
KEY_ORDERS = ("ijk", "kji", "jki", "ikj", "kij", "jik")


def generated_cases(seed: int, count: int, largest: int, far: bool = False) -> list[tuple[int, int, int, dict[str, int]]]:
    """Shapes with axes of 1, primes or any size up to ``largest``, and tiles of every kind the statement allows:
    every other case has a tail on every axis that can have one. The keys of the tiles come in every order in turn.
    With ``far`` (the families that only read the scheduled TIR) a tile may also be far above every dimension."""
    rng = random.Random(seed)
    kinds_of_tile, weights = ("one", "divisor", "tail", "equal", "larger"), (2, 2, 4, 1, 2)
    if far:
        kinds_of_tile, weights = (*kinds_of_tile, "far"), (*weights, 3)
    cases = []
    for n in range(count):
        M, N, K = (_dimension(rng, largest) for _ in range(3))
        kinds = ["tail"] * 3 if n % 2 == 0 else rng.choices(kinds_of_tile, weights=weights, k=3)
        tiles = {axis: _tile(rng, dim, kind) for axis, dim, kind in zip("ijk", (M, N, K), kinds, strict=True)}
        cases.append((M, N, K, {axis: tiles[axis] for axis in KEY_ORDERS[n % len(KEY_ORDERS)]}))
    return cases


def huge_cases(seed: int, count: int) -> list[tuple[int, int, int, dict[str, int]]]:
    """Shapes as in ``generated_cases`` with tiles above 4096 up to 2**24 (red team round 4: a clamp at 4096 passed):
    each case has one or more huge tiles, the others of any kind. From a seed of their own, so that adding them left
    the cases ``generated_cases`` draws unchanged."""
    rng = random.Random(seed)
    cases = []
    for n in range(count):
        M, N, K = (_dimension(rng, 256) for _ in range(3))
        kinds = [rng.choice(("huge", "far", "tail", "one", "larger")) for _ in range(3)]
        kinds[n % 3] = "huge"
        tiles = {axis: _tile(rng, dim, kind) for axis, dim, kind in zip("ijk", (M, N, K), kinds, strict=True)}
        cases.append((M, N, K, {axis: tiles[axis] for axis in KEY_ORDERS[(n + 3) % len(KEY_ORDERS)]}))
    return cases


def far_cases() -> list[tuple[int, int, int, dict[str, int]]]:
    """The structural families' cases: 24 generated ones with tiles up to 4096, and 6 with tiles up to 2**24."""
    return generated_cases(LARGE_SEED, 24, 256, far=True) + huge_cases(HUGE_SEED, 6)


def _conjuncts(condition: Any, out: list[Any]) -> None:
    if isinstance(condition, tvm.tirx.And):
        _conjuncts(condition.a, out)
        _conjuncts(condition.b, out)
    else:
        out.append(condition)


def _within(analyzer: Any, value: Any, low: Any, high: Any, bounds: list[Any]) -> bool:
    """Whether ``low <= value < high`` follows from the loop ranges and the conditions (tried several ways: the
    analyzer does not always see through a regrouped sum, as in ``j_0 * 7 + (a * 4 + b)`` under ``a * 4 + b < 7``)."""
    if not (analyzer.can_prove(value >= low) or analyzer.can_prove(analyzer.canonical_simplify(value >= low))):
        return False
    if analyzer.can_prove(value < high) or analyzer.can_prove(analyzer.canonical_simplify(value < high)):
        return True
    # A condition a < b on part of the value: value = (value - a) + a <= (value - a) + b - 1.
    return any(
        isinstance(c, tvm.tirx.LT) and analyzer.can_prove(analyzer.canonical_simplify(value - c.a + c.b - 1) < high)
        for c in bounds
    )


# Red team round 4: TVM's OOBChecker does not look at the condition of a T.if_then_else, so it refused the statement's
# own "going further" step, B packed by cache_read + transform_layout(..., pad_value=0.0), whose padding reads
# B[k, j0 * tj + j2] only in the branch where that index is below N (the other branch, never evaluated, yields the
# pad). When the OOBChecker refuses, every access is proven again, under the conditions it is evaluated in.
MAX_CASES = 64


def _cases(condition: Any, negate: bool = False) -> list[list[Any]] | None:
    """``condition`` (or its negation) as a disjunction of conjunctions of comparisons: a list of cases, each a list
    of conditions that all hold in it (a != b split into a < b and a > b), or None if there are over MAX_CASES."""
    tirx = tvm.tirx
    if isinstance(condition, tirx.Not):
        return _cases(condition.a, not negate)
    if isinstance(condition, tirx.And | tirx.Or):
        left, right = _cases(condition.a, negate), _cases(condition.b, negate)
        if left is None or right is None:
            return None
        if isinstance(condition, tirx.And) != negate:  # a conjunction: every pair of cases
            out = [[*x, *y] for x in left for y in right]
        else:  # a disjunction: the cases of either side
            out = [*left, *right]
        return out if len(out) <= MAX_CASES else None
    if (isinstance(condition, tirx.EQ) and negate) or (isinstance(condition, tirx.NE) and not negate):
        return [[tirx.LT(condition.a, condition.b)], [tirx.GT(condition.a, condition.b)]]
    if negate:
        flipped = {tirx.LT: tirx.GE, tirx.GE: tirx.LT, tirx.LE: tirx.GT, tirx.GT: tirx.LE, tirx.NE: tirx.EQ}
        kind = flipped.get(type(condition))
        return [[kind(condition.a, condition.b)]] if kind else [[tirx.Not(condition)]]
    return [[condition]]


def _in_buffer(analyzer: Any, value: Any, extent: Any, conditions: list[Any]) -> bool:
    """Whether 0 <= value < extent holds in every case the conditions allow."""
    cases: list[list[Any]] | None = [[]]
    for c in conditions:
        more = _cases(c)
        cases = None if cases is None or more is None else [[*x, *y] for x in cases for y in more]
        if cases is None or len(cases) > MAX_CASES:
            return False
    for case in cases:
        condition = tvm.tirx.const(True, "bool")
        for c in case:
            condition = tvm.tirx.And(condition, c)
        if analyzer.can_prove(tvm.tirx.Not(condition)):
            continue  # a case no iteration is in (v > 2 for a v over 0..2)
        with analyzer.constraint_scope(condition):
            low = analyzer.can_prove(value >= 0) or analyzer.can_prove(analyzer.canonical_simplify(value >= 0))
            high = analyzer.can_prove(value < extent) or analyzer.can_prove(analyzer.canonical_simplify(value < extent))
            if not (low and high):
                return False
    return True


def guarded_access_problems(func: Any) -> list[str]:
    """The accesses of a PrimFunc's blocks that cannot be proven inside their buffers, given the block iterators'
    domains (the iterators themselves are checked apart) and the conditions each access is evaluated under: an
    IfThenElse statement's, and the taken branch's of a T.if_then_else, which unlike T.Select never evaluates the
    other branch (tvm.tirx.if_then_else's documentation)."""
    tirx = tvm.tirx
    problems: list[str] = []
    if_then_else = tvm.ir.Op.get("prim.if_then_else")

    def access(analyzer: Any, block: str, buffer: Any, indices: Any, conditions: list[Any]) -> None:
        values = []
        for index in indices:
            if isinstance(index, tirx.Ramp):  # lanes base, base + stride, ...: the first and the last
                values.append([index.base, index.base + index.stride * (int(index.lanes) - 1)])
            else:
                values.append([index])
        ok = len(indices) == len(buffer.shape) and all(
            _in_buffer(analyzer, value, extent, conditions) for group, extent in zip(values, buffer.shape, strict=True) for value in group
        )
        if not ok:
            problems.append(f"block {block}: an access to {buffer.name} can leave its buffer")

    def expr(analyzer: Any, block: str, node: Any, conditions: list[Any]) -> None:
        if isinstance(node, tvm.ir.TensorLoad):
            for index in node.indices:
                expr(analyzer, block, index, conditions)
            access(analyzer, block, node.source, node.indices, conditions)
        elif isinstance(node, tvm.ir.Call) and node.op.same_as(if_then_else):
            condition, then, other = node.args
            expr(analyzer, block, condition, conditions)
            expr(analyzer, block, then, [*conditions, condition])
            expr(analyzer, block, other, [*conditions, tirx.Not(condition)])
        elif isinstance(node, tvm.ir.Call):
            for arg in node.args:
                expr(analyzer, block, arg, conditions)
        elif isinstance(node, tirx.Let):
            problems.append(f"block {block}: a Let binding (not proven)")
        elif isinstance(node, tvm.ir.Expr):
            for attr in ("a", "b", "value", "condition", "true_value", "false_value", "base", "stride"):
                child = getattr(node, attr, None)
                if isinstance(child, tvm.ir.Expr):
                    expr(analyzer, block, child, conditions)

    def stmt(analyzer: Any, block: str, node: Any, conditions: list[Any]) -> None:
        if node is None:
            return
        if isinstance(node, tirx.BufferStore):
            for index in node.indices:
                expr(analyzer, block, index, conditions)
            expr(analyzer, block, node.value, conditions)
            access(analyzer, block, node.buffer, node.indices, conditions)
        elif isinstance(node, tirx.IfThenElse):
            expr(analyzer, block, node.condition, conditions)
            stmt(analyzer, block, node.then_case, [*conditions, node.condition])
            stmt(analyzer, block, node.else_case, [*conditions, tirx.Not(node.condition)])
        elif isinstance(node, tirx.SeqStmt):
            for child in node.seq:
                stmt(analyzer, block, child, conditions)
        elif isinstance(node, tirx.For):
            analyzer.bind(node.loop_var, tvm.ir.Range.from_min_extent(node.min, node.extent))
            stmt(analyzer, block, node.body, conditions)
        elif isinstance(node, tvm.s_tir.SBlockRealize):
            inner = tvm.sym.Analyzer()  # a block's body sees only its own iterators, over their domains
            for iv in node.block.iter_vars:
                inner.bind(iv.var, iv.dom)
            stmt(inner, str(node.block.name_hint), node.block.init, [])
            stmt(inner, str(node.block.name_hint), node.block.body, [])
        elif isinstance(node, tirx.Evaluate):
            expr(analyzer, block, node.value, conditions)
        else:  # AllocBuffer, DeclBuffer, AttrStmt, ...: follow the body
            child = getattr(node, "body", None)
            if isinstance(child, tirx.Stmt):
                stmt(analyzer, block, child, conditions)

    stmt(tvm.sym.Analyzer(), "root", func.body, [])
    return problems


def memory_problems(func: Any) -> list[str]:
    """Where a scheduled PrimFunc can step outside a block iterator's domain or outside a buffer."""
    problems = []
    try:
        tvm.s_tir.analysis.OOBChecker()(tvm.IRModule({"main": func}))
    except Exception:  # noqa: BLE001 - TVM reports an access outside its buffer with a ScheduleError
        # It ignores the condition of a T.if_then_else: prove every access again under its conditions.
        problems += guarded_access_problems(func) or []

    def visit(node: Any, loops: list[Any], conditions: list[Any]) -> None:
        if node is None:
            return
        if isinstance(node, tvm.tirx.For):
            visit(node.body, [*loops, node], conditions)
        elif isinstance(node, tvm.s_tir.SBlockRealize):
            block = node.block
            analyzer = tvm.sym.Analyzer()
            for loop in loops:
                analyzer.bind(loop.loop_var, tvm.ir.Range.from_min_extent(loop.min, loop.extent))
            condition = tvm.tirx.const(True, "bool")
            for c in [*conditions, node.predicate]:
                condition = tvm.tirx.And(condition, c)
            bounds: list[Any] = []  # the conjuncts of the conditions, as written and canonically simplified
            for c in [*conditions, node.predicate]:
                _conjuncts(c, bounds)
            bounds += [analyzer.canonical_simplify(c) for c in bounds]
            with analyzer.constraint_scope(analyzer.canonical_simplify(condition)):
                for iv, value in zip(block.iter_vars, node.iter_values, strict=True):
                    if not _within(analyzer, value, iv.dom.min, iv.dom.min + iv.dom.extent, bounds):
                        problems.append(f"block {block.name_hint}: an iterator can leave its domain")
            visit(block.init, loops, [*conditions, node.predicate])
            visit(block.body, loops, [*conditions, node.predicate])
        elif isinstance(node, tvm.tirx.SeqStmt):
            for child in node.seq:
                visit(child, loops, conditions)
        elif isinstance(node, tvm.tirx.IfThenElse):
            visit(node.then_case, loops, [*conditions, node.condition])
            visit(node.else_case, loops, [*conditions, tvm.tirx.Not(node.condition)])
        else:  # AllocBuffer, DeclBuffer, AttrStmt, ...: follow the body
            child = getattr(node, "body", None)
            if isinstance(child, tvm.tirx.Stmt):
                visit(child, loops, conditions)

    visit(func.body, [], [])
    return sorted(set(problems))


SMALL_SEED, LARGE_SEED, HUGE_SEED = 2711, 2712, 2713


@probe(category="correctness", check="generated_ok", hints=["tails"], timeout=45)
def generated_products(solution: Any) -> Any:
    """Generated shapes (axes of 1, primes, any size) and tiles of every kind: the product of each."""
    cases = generated_cases(SMALL_SEED, 12, 64)
    return {"check": "product_ok", "cases": [run_product(solution, M, N, K, t, seed=40 + n) for n, (M, N, K, t) in enumerate(cases)]}


@probe(category="correctness", check="memory_ok", hints=["tails"], timeout=45)
def memory_stays_in_bounds(solution: Any) -> Any:
    """Rule 4 on generated shapes and tiles, read off the scheduled TIR: no block iterator leaves its domain and no access leaves its buffer."""
    cases = generated_cases(SMALL_SEED, 12, 64) + far_cases()
    return {"cases": [
        {"shape": [M, N, K], "tiles": dict(t), "problems": memory_problems(scheduled(solution, M, N, K, t).mod["main"])}
        for M, N, K, t in cases
    ]}  # fmt: skip


# Red team round 6: the ti x tk tile of A staged by read_at(k0, ...) with no tail guard reads A past its last row or
# column on a partial tile; the values are never used, so C is right, and only the generated family above (and a
# heap crash on tiles far above the matrix) saw it. Fixed shapes with the usual tails, read off the TIR the same way.
MEMORY_TAILS = (
    (43, 35, 27, {"k": 4, "j": 8, "i": 16}),  # a tail on every axis
    (64, 48, 50, {"k": 8, "i": 16, "j": 16}),  # a tail on k alone
    (45, 64, 32, {"j": 16, "i": 16, "k": 8}),  # a tail on i alone
    (40, 37, 32, {"i": 8, "k": 8, "j": 16}),  # a tail on j alone
    (7, 9, 5, {"i": 16, "j": 16, "k": 8}),  # tiles larger than the matrix
)


@probe(category="correctness", check="memory_ok", hints=["tails"])
def memory_in_bounds_with_tails(solution: Any) -> Any:
    """Rule 4 read off the scheduled TIR on shapes with tails and tiles above the matrix: no block reads or writes outside a buffer."""
    return {"cases": [
        {"shape": [M, N, K], "tiles": dict(t), "problems": memory_problems(scheduled(solution, M, N, K, t).mod["main"])}
        for M, N, K, t in MEMORY_TAILS
    ]}  # fmt: skip


@probe(category="loop-nest", check="generated_ok", hints=["tails", "loop-order"], timeout=45)
def generated_nests(solution: Any) -> Any:
    """Generated shapes and tiles: the six tile loops around the update, with the tiles' extents."""
    return {"check": "nest_ok", "cases": [structure(solution, M, N, K, t) for M, N, K, t in far_cases()]}


@probe(category="annotations", check="generated_ok", hints=["parallel", "vectorize"], timeout=45)
def generated_annotations(solution: Any) -> Any:
    """Generated shapes and tiles: the outer i loop parallel, the inner j loop vectorized, no other."""
    return {"check": "annotations_ok", "cases": [structure(solution, M, N, K, t) for M, N, K, t in far_cases()]}


@probe(category="cache", check="generated_ok", hints=["cache"], timeout=45)
def generated_caches(solution: Any) -> Any:
    """Generated shapes and tiles: one copy of the accumulator tile into C per (i outer, j outer) tile."""
    return {"check": "cache_ok", "cases": [structure(solution, M, N, K, t) for M, N, K, t in far_cases()]}
