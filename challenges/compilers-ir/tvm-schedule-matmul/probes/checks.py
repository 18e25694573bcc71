"""Custom checks for tvm-schedule-matmul, run in the trusted worker.

The sandbox sends observations only: the output of the candidate's compiled
kernel, or its scheduled loop nest as plain data (see ``loop_nest`` in the
probe files). Everything is judged here:

- ``product_ok`` regenerates the probe's inputs from the seed of the
  *reference's* observation (pure integer hashing, the same code as the
  probes' ``operand``) and compares the kernel's output with their exact
  float64 product, element by element, within 1e-4 of sum_k |A[i,k] B[k,j]|.
  That bound holds for any order of accumulation in float32 (the worst case
  is about K * 6e-8 of the same sum) and is far below what one missing or
  duplicated term costs. Timings, when the probe sent some, are shown as
  information and never decide anything.
- ``nest_ok``, ``annotations_ok`` (or its halves ``parallel_ok`` and
  ``vectorize_ok``) and ``cache_ok`` compare the loop structure
  with the one the statement requires, computed from the shape and tiles of
  the reference's observation. Loops are identified by what they do (which
  block iterator their variable feeds, their extent and kind), never by name.
  A loop of extent 1 may carry any annotation, or none: it runs once.
- ``generated_ok`` runs one of those checks (the one the reference's
  observation names) on every case of a family of cases (hidden.py: the
  generated families and a fixed list of small and wide ones).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from grader.checks import CheckResult

RTOL_OF_ABS_SUM = 1e-4
AXES = ("i", "j", "k")


class Malformed(Exception):
    """The observation does not have the shape the probes produce."""


def failed(reason: str, message: str) -> CheckResult:
    """A failed check that says how it failed: the diagnosis (grader/diagnose.py) tells apart mistakes that fail one
    check for different reasons (a copy inside the k loops, or after the whole product). Never shown to a candidate."""
    return CheckResult(False, message, {"reason": reason})


def _verdict(outcome: Any) -> tuple[bool, str, str | None]:
    """(passed, message, reason) of a check's outcome: a CheckResult or (passed, message)."""
    if isinstance(outcome, CheckResult):
        reason = outcome.details.get("reason")
        return outcome.passed, outcome.message, reason if isinstance(reason, str) else None
    return bool(outcome[0]), str(outcome[1]), None


# ---------------------------------------------------------------- inputs (as in the probes)


def operand(rows: int, cols: int, seed: int) -> np.ndarray:
    """A float32 matrix with entries in [-1, 1), from a splitmix64 hash of (seed, index)."""
    x = np.arange(rows * cols, dtype=np.uint64) + np.uint64(seed * 0x9E3779B97F4A7C15 % 2**64)
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return ((x >> np.uint64(40)).astype(np.float64) / 2.0**23 - 1.0).astype(np.float32).reshape(rows, cols)


# ---------------------------------------------------------------- correctness


def _spans(indices: np.ndarray) -> str:
    """[0, 1, 2, 7, 9, 10] -> '0-2, 7, 9-10' (at most six spans)."""
    values = sorted(int(v) for v in np.unique(indices))
    spans: list[str] = []
    start = prev = values[0]
    for v in [*values[1:], None]:
        if v is not None and v == prev + 1:
            prev = v
            continue
        spans.append(str(start) if start == prev else f"{start}-{prev}")
        if v is not None:
            start = prev = v
    return ", ".join(spans[:6]) + (", ..." if len(spans) > 6 else "")


def _timing(actual: dict[str, Any]) -> str:
    naive, yours = actual.get("naive_ms"), actual.get("yours_ms")
    if not all(isinstance(v, int | float) and math.isfinite(v) and v > 0 for v in (naive, yours)):
        return ""
    return (
        f"\nSpeed-up over the naive schedule: {naive / yours:.1f}x (naive {naive:.2f} ms, yours {yours:.2f} ms; "
        "median of 5 calls in the sandbox on a shared machine: information only, never graded)"
    )


def product_ok(actual: Any, expected: Any) -> tuple[bool, str] | CheckResult:
    try:
        M, N, K = (int(v) for v in expected["shape"])
        seed = int(expected["seed"])
        got = actual["C"]
        data, dtype = got.data, got.dtype
    except (KeyError, TypeError, ValueError, AttributeError):
        return False, "the probe's observation is malformed"
    timing = _timing(actual) if isinstance(actual, dict) else ""
    outside = actual.get("outside")
    if not isinstance(outside, dict):
        return False, "the probe's observation is malformed"
    if outside:
        # The probe's buffers lie between guard zones (probes/common.py: Guarded): a changed guard is a write past
        # a buffer, which rule 4 forbids even when every element of C comes out right.
        wrote = "; ".join(
            f"{name}: {counts.get('before', 0)} element(s) before it and {counts.get('after', 0)} past its end"
            for name, counts in sorted(outside.items())
            if isinstance(counts, dict)
        )
        return failed("write-past-buffer", (
            f"The kernel wrote outside its buffers ({wrote}): a loop ran past the end of its axis without a guard, "
            "which rule 4 forbids even when the values of C are right." + timing
        ))
    if data.shape != (M, N) or dtype != "float32":
        return failed("c-shape-or-dtype", f"C has shape {tuple(data.shape)} and dtype {dtype}; expected ({M}, {N}) float32" + timing)
    A = operand(M, K, seed).astype(np.float64)
    B = operand(K, N, seed + 1).astype(np.float64)
    exact = A @ B
    bound = RTOL_OF_ABS_SUM * (np.abs(A) @ np.abs(B))
    C = data.astype(np.float64)
    with np.errstate(invalid="ignore"):
        ratio = np.abs(C - exact) / bound
    bad = ~(ratio <= 1.0)  # NaN counts as bad
    if not bad.any():
        return True, (
            f"Correct: the worst element used {float(ratio.max()):.2%} of its allowed error "
            f"(max abs error {float(np.abs(C - exact).max()):.2g})." + timing
        )
    rows, cols = np.nonzero(bad)
    never = np.isnan(C)
    worst = np.unravel_index(int(np.nanargmax(np.where(never, np.inf, ratio))), ratio.shape)
    i, j = int(worst[0]), int(worst[1])
    parts = [
        f"{int(bad.sum())} of {M * N} elements of C are wrong (C is {M}x{N}, K = {K}), "
        f"in rows {_spans(rows)} and columns {_spans(cols)}."
    ]
    if never.any():
        parts.append(f"{int(never.sum())} of them are NaN: never written (C starts as NaN), or computed from garbage.")
    parts.append(
        f"Worst at [{i}, {j}]: expected {exact[i, j]:.6g}, got {C[i, j]:.6g}; "
        f"allowed error {bound[i, j]:.3g} (1e-4 x sum_k |A[{i},k] B[k,{j}]|)."
    )
    return failed("wrong-values", " ".join(parts) + timing)


# ---------------------------------------------------------------- loop structure


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _parse(expected: Any, actual: Any) -> tuple[tuple[int, int, int], dict[str, int], dict[str, Any]]:
    try:
        M, N, K = (int(v) for v in expected["shape"])
        tiles = {a: int(expected["tiles"][a]) for a in AXES}
        loops, blocks, params = actual["loops"], actual["blocks"], actual["params"]
        if not (isinstance(loops, list) and isinstance(blocks, list) and isinstance(params, list) and len(params) == 3):
            raise Malformed
        if not all(isinstance(x, dict) and {"extent", "kind", "var", "parent"} <= x.keys() for x in loops):
            raise Malformed
        if not all(isinstance(x, dict) and {"name", "loops", "at", "iters", "reads", "writes"} <= x.keys() for x in blocks):
            raise Malformed
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise Malformed from exc
    return (M, N, K), tiles, actual


def _compute_block(obs: dict[str, Any]) -> dict[str, Any]:
    """The block that does the multiply-accumulate: the one with a reduction iterator."""
    found = [b for b in obs["blocks"] if any(it.get("kind") == "reduce" for it in b["iters"])]
    if len(found) != 1:
        names = ", ".join(repr(b["name"]) for b in found) or "none"
        raise Malformed(f"Expected one block with a reduction iterator (the matmul's update), found {names}")
    block = found[0]
    kinds = [it.get("kind") for it in block["iters"]]
    if kinds != ["spatial", "spatial", "reduce"]:
        raise Malformed(f"block {block['name']!r} has iterators {kinds}; the matmul's are (spatial i, spatial j, reduce k)")
    return block


def _axes(block: dict[str, Any], loop: int) -> list[str]:
    """The matmul axes whose block iterator this loop's variable feeds."""
    return [AXES[p] for p, it in enumerate(block["iters"]) if loop in it["loops"]]


# The axes of the six loops around the update, outermost first (rule 1).
REQUIRED_AXES = ("i", "j", "k", "i", "k", "j")


def _nest_axes(obs: dict[str, Any], block: dict[str, Any], shape: tuple[int, int, int]) -> dict[int, list[str]]:
    """The axes of the loops around ``block``, by loop index: the iterators each loop feeds. With
    ``split(..., preserve_unit_iters=False)`` TVM leaves out of the block's bindings a loop of extent 1 (always 0),
    and every loop of an axis of length 1 (its iterator is always 0; the predicate keeps the first iteration):
    nothing changes, so in a nest of six loops a loop that feeds nothing and is one of those counts as the loop
    over the axis rule 1 puts at its place (red team round 4: the same nest, extents and kinds as the reference
    failed seven probes because its outer i loop of extent 1 fed no iterator)."""
    loops, nest = obs["loops"], block["loops"]
    length = dict(zip(AXES, shape, strict=True))
    axes = {index: _axes(block, index) for index in nest}
    if len(nest) == len(REQUIRED_AXES):
        for position, index in enumerate(nest):
            axis = REQUIRED_AXES[position]
            if not axes[index] and (loops[index]["extent"] == 1 or length[axis] == 1):
                axes[index] = [axis]
    return axes


def _label(axes: list[str], extent: Any, kind: str = "serial") -> str:
    text = f"{'+'.join(axes) or '-'}:{extent}"
    return text if kind == "serial" else f"{text} {kind}"


def render(obs: dict[str, Any], block: dict[str, Any] | None = None) -> str:
    """The scheduled nest as indented pseudo-TVMScript; loops around ``block`` are tagged with their axis."""
    loops, blocks = obs["loops"], obs["blocks"]
    children: dict[int, list[tuple[float, str, int]]] = {}
    for index, loop in enumerate(loops):
        children.setdefault(int(loop["parent"]), []).append((index, "loop", index))
    for index, b in enumerate(blocks):
        parent = b["loops"][-1] if b["loops"] else -1
        # A block comes after the loops visited before it in pre-order and before the later ones.
        children.setdefault(parent, []).append((int(b["at"]) - 0.5, "block", index))
    lines: list[str] = []

    def emit(parent: int, depth: int) -> None:
        for _, what, index in sorted(children.get(parent, [])):
            pad = "    " * depth
            if what == "loop":
                loop = loops[index]
                kind = loop["kind"]
                head = f"for {loop['var']} in {'range' if kind == 'serial' else kind}({loop['extent']}):"
                if block is not None and index in block["loops"]:
                    head = f"{pad + head:<52}# {'+'.join(_axes(block, index)) or 'no axis'}"
                else:
                    head = pad + head
                lines.append(head)
                emit(index, depth + 1)
            else:
                b = blocks[index]
                reads = ", ".join(f"{n}" + ("" if s == "global" else f" ({s})") for n, s in b["reads"]) or "nothing"
                writes = ", ".join(f"{n}" + ("" if s == "global" else f" ({s})") for n, s in b["writes"]) or "nothing"
                lines.append(f"{pad}block {b['name']!r}: reads {reads}; writes {writes}")

    emit(-1, 0)
    return "\n".join(lines)


def _required(shape: tuple[int, int, int], tiles: dict[str, int]) -> list[tuple[str, int]]:
    M, N, K = shape
    ti, tj, tk = tiles["i"], tiles["j"], tiles["k"]
    return [("i", _ceil(M, ti)), ("j", _ceil(N, tj)), ("k", _ceil(K, tk)), ("i", ti), ("k", tk), ("j", tj)]


def _structured(fn: Any) -> Any:
    """Turn a malformed observation into a failed check with a message."""

    def wrapper(actual: Any, expected: Any) -> tuple[bool, str] | CheckResult:
        try:
            return fn(*_parse(expected, actual))  # type: ignore[no-any-return]
        except Malformed as exc:
            return False, str(exc) or "the probe's observation is malformed"
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            # Only a forged observation gets here (the probes always send the full shape).
            return False, "the probe's observation is malformed"

    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


@_structured
def nest_ok(shape: tuple[int, int, int], tiles: dict[str, int], obs: dict[str, Any]) -> tuple[bool, str] | CheckResult:
    """Six loops around the compute block: i0 j0 k0 i1 k1 j1 with the required extents."""
    block = _compute_block(obs)
    loops = obs["loops"]
    fed = _nest_axes(obs, block, shape)
    got = [(fed[index], loops[index]["extent"]) for index in block["loops"]]
    required = _required(shape, tiles)
    problem, reason = "", "loop-count"
    if len(got) != len(required):
        problem = f"has {len(got)} loops around it; the statement requires {len(required)}"
    else:
        for position, ((axes, extent), (axis, want)) in enumerate(zip(got, required, strict=True)):
            unit = extent == want == 1 and not axes  # a unit loop may feed nothing
            if not unit and (axes != [axis] or extent != want):
                name = loops[block["loops"][position]]["var"]
                reason = "loop-axis" if axes != [axis] else "loop-extent"
                problem = (
                    f"has {name} as loop {position + 1} from the outside, over {'+'.join(axes) or 'no axis'} "
                    f"with extent {extent}; the statement requires a loop over {axis} with extent {want} there"
                )
                break
    if not problem:
        return True, ""
    mine = " > ".join(_label(axes, extent) for axes, extent in got)
    want = " > ".join(_label([axis], extent) for axis, extent in required)
    return failed(reason, (
        f"Block {block['name']!r} {problem}.\n"
        f"Loops around it, outermost first (axis:extent):\n"
        f"  yours:    {mine}\n  required: {want}\n\n{render(obs, block)}"
    ))


def _annotation_problems(
    obs: dict[str, Any], want: tuple[str, ...], shape: tuple[int, int, int]
) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """What breaks rule 2 for the annotations in ``want`` ("parallel", "vectorized"): (reason, words) pairs."""
    block = _compute_block(obs)
    loops = obs["loops"]
    nest = block["loops"]
    fed = _nest_axes(obs, block, shape)
    outer_i = next((index for index in nest if "i" in fed[index]), None)
    inner_j = next((index for index in reversed(nest) if "j" in fed[index]), None)
    problems: list[tuple[str, str]] = []
    for kind, loop, name in (("parallel", outer_i, "outer i"), ("vectorized", inner_j, "inner j")):
        if loop is not None and loops[loop]["extent"] == 1:
            continue  # a loop of extent 1 runs once: with or without the annotation it is the same loop
        if kind in want and (loop is None or loops[loop]["kind"] != kind):
            what = "there is none" if loop is None else f"{loops[loop]['var']}, {loops[loop]['kind']}"
            problems.append((f"{name.replace(' ', '-')}-not-{kind}", f"the {name} loop ({what}) must be {kind}"))
    for position, index in enumerate(nest):
        kind = loops[index]["kind"]
        if kind not in want or index == (outer_i if kind == "parallel" else inner_j):
            continue
        if loops[index]["extent"] == 1:
            continue  # a loop of extent 1 runs once: its annotation changes nothing (a copy's loops may all be unit)
        axes = "+".join(_axes(block, index)) or "no axis"
        if kind == "parallel":
            extents = [loops[o]["extent"] for o in nest[:position]]
            entries = math.prod(e for e in extents if isinstance(e, int))
            problems.append((
                "other-loop-parallel",
                f"{loops[index]['var']} (over {axes}) is parallel: the loops outside it enter it {entries} times per call, "
                "and every entry hands its iterations to the thread pool and waits for all of them; only the outer i "
                "loop may be parallel",
            ))
        else:
            problems.append(("other-loop-vectorized", f"{loops[index]['var']} (over {axes}) is vectorized; only the inner j loop may be"))
    return block, problems


def _annotations_verdict(obs: dict[str, Any], want: tuple[str, ...], shape: tuple[int, int, int]) -> tuple[bool, str] | CheckResult:
    block, problems = _annotation_problems(obs, want, shape)
    if not problems:
        return True, ""
    words = "; ".join(text for _, text in problems)
    return failed(problems[0][0], f"Around block {block['name']!r}: " + words + ".\n\n" + render(obs, block))


@_structured
def annotations_ok(shape: tuple[int, int, int], tiles: dict[str, int], obs: dict[str, Any]) -> tuple[bool, str] | CheckResult:
    """The outer i loop is parallel, the inner j loop vectorized, and no other loop is either."""
    return _annotations_verdict(obs, ("parallel", "vectorized"), shape)


@_structured
def parallel_ok(shape: tuple[int, int, int], tiles: dict[str, int], obs: dict[str, Any]) -> tuple[bool, str] | CheckResult:
    """The outer i loop is parallel and no other loop around the update is."""
    return _annotations_verdict(obs, ("parallel",), shape)


@_structured
def vectorize_ok(shape: tuple[int, int, int], tiles: dict[str, int], obs: dict[str, Any]) -> tuple[bool, str] | CheckResult:
    """The inner j loop is vectorized and no other loop around the update is."""
    return _annotations_verdict(obs, ("vectorized",), shape)


@_structured
def cache_ok(shape: tuple[int, int, int], tiles: dict[str, int], obs: dict[str, Any]) -> tuple[bool, str] | CheckResult:
    """The compute block accumulates in a cache that is copied to C once per (i0, j0) tile."""
    block = _compute_block(obs)
    output = obs["params"][2]
    written = [name for name, _ in block["writes"]]
    if output in written or len(written) != 1:
        return failed("no-write-cache", (
            f"Block {block['name']!r} writes {', '.join(written) or 'nothing'}: it must accumulate into a write cache "
            f"(a buffer of its own), not into {output} itself.\n\n{render(obs, block)}"
        ))
    cache = written[0]
    copies = [b for b in obs["blocks"] if cache in [n for n, _ in b["reads"]] and output in [n for n, _ in b["writes"]]]
    if len(copies) != 1:
        return failed("copy-count", f"Expected one block copying {cache} to {output}, found {len(copies)}.\n\n{render(obs, block)}")
    copy = copies[0]
    nest = block["loops"]
    fed = _nest_axes(obs, block, shape)
    outer = {a: next((index for index in nest if a in fed[index]), None) for a in AXES}
    inside = set(copy["loops"])
    if outer["i"] is not None and outer["j"] is not None and outer["i"] in inside and outer["j"] not in inside:
        _, N, _ = shape
        return failed("copy-outside-j-tile", (
            f"The copy from {cache} to {output} (block {copy['name']!r}) is inside the outer i loop but not inside "
            f"the outer j loop of block {block['name']!r}: it runs once per strip of rows, after all the j tiles, so "
            f"{cache} holds a {tiles['i']} x {N} strip instead of one {tiles['i']} x {tiles['j']} tile. The statement "
            f"requires the copy inside the outer i and j loops, after the k loops: once per finished tile."
            f"\n\n{render(obs, block)}"
        ))
    if outer["i"] is None or outer["j"] is None or not {outer["i"], outer["j"]} <= inside:
        M, N, _ = shape
        return failed("copy-after-product", (
            f"The copy from {cache} to {output} (block {copy['name']!r}) is not inside the outer i and j loops of "
            f"block {block['name']!r}: it runs after the whole product, so {cache} is as large as {output} "
            f"({M} x {N}) instead of one {tiles['i']} x {tiles['j']} tile. The statement requires the copy inside "
            f"the outer i and j loops, after the k loops: once per finished tile.\n\n{render(obs, block)}"
        ))
    if outer["k"] is not None and outer["k"] in inside:
        return failed("copy-inside-k", (
            f"The copy from {cache} to {output} (block {copy['name']!r}) is inside the k tile loop: it copies partial "
            f"sums once per k tile instead of the finished tile once.\n\n{render(obs, block)}"
        ))
    return True, ""


# ---------------------------------------------------------------- memory (rule 4, read off the TIR)


def memory_ok(actual: Any, expected: Any) -> tuple[bool, str] | CheckResult:
    """hidden.py's ``memory_stays_in_bounds``: for every generated case, what ``memory_problems`` found in the
    scheduled PrimFunc (a block iterator that can leave its domain, an access that can leave its buffer); none may."""
    try:
        cases, got = expected["cases"], actual["cases"]
        if not isinstance(got, list) or len(got) != len(cases):
            raise TypeError
        found = [(index, case, [str(p) for p in mine["problems"]]) for index, (mine, case) in enumerate(zip(got, cases, strict=True))]
    except (KeyError, TypeError, AttributeError):
        return False, "the probe's observation is malformed"
    bad = [(index, case, problems) for index, case, problems in found if problems]
    if not bad:
        return True, f"all {len(cases)} generated cases stay in bounds"
    index, case, problems = bad[0]
    M, N, K = case["shape"]
    tiles = case["tiles"]
    return failed("out-of-bounds", (
        f"Rule 4 (correctness): in {len(bad)} of {len(cases)} generated cases the scheduled TIR can step outside a "
        f"domain or a buffer. First, case {index + 1}: {M} x {N} x {K} (M, N, K), tiles i={tiles['i']}, "
        f"j={tiles['j']}, k={tiles['k']}: {'; '.join(problems[:4])}. A block iterator must stay in its domain and an "
        "access in its buffer on every iteration the kernel runs, including the ones a predicate throws away; only "
        "the branch of a T.if_then_else its condition rules out is never evaluated."
    ))


# ---------------------------------------------------------------- generated cases

GENERATED_CHECKS = ("product_ok", "nest_ok", "annotations_ok", "cache_ok")


def generated_ok(actual: Any, expected: Any) -> tuple[bool, str] | CheckResult:
    """hidden.py's families of cases: the family's check (named by the reference's observation) on every case."""
    try:
        name = expected["check"]
        cases = expected["cases"]
        got = actual["cases"]
    except (KeyError, TypeError):
        return False, "the probe's observation is malformed"
    if name not in GENERATED_CHECKS or not isinstance(got, list) or len(got) != len(cases):
        return False, "the probe's observation is malformed"
    check = globals()[name]
    for index, (mine, want) in enumerate(zip(got, cases, strict=True)):
        ok, message, reason = _verdict(check(mine, want))
        if not ok:
            M, N, K = want["shape"]
            tiles = want["tiles"]
            words = (
                f"case {index + 1} of {len(cases)}: {M} x {N} x {K} (M, N, K), tiles i={tiles['i']}, j={tiles['j']}, "
                f"k={tiles['k']}:\n{message}"
            )
            return failed(reason, words) if reason else (False, words)
    return True, f"all {len(cases)} generated cases pass"
