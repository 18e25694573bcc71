"""Custom check for tf-trace-side-effects: properties of the candidate's own run.

The jitter is random, so a correct solution need not draw the reference's
numbers. The truth is a set of properties of the candidate's observation:
the counter counts, the history holds the mean of each returned batch, each
printed line names the call and the delta actually applied, each call adds
one offset to the whole batch, draws are fresh, in range, spread over the
whole range and reproducible from the seed, and the function still runs as
a graph. Which properties a probe tests is read from the reference's
observation (its ``checks`` list), never from the candidate's.

An observation (built by the probes) looks like::

    {"checks": [...], "runs": {name: run}, "order": [[name, k], ...],
     "log": [[n, delta], ...], "same": [[a, b]], "different": [[a, b]]}

where a run holds ``max_delta``, ``deltas`` (recovered from the outputs),
``spreads`` (per call, the largest minus the smallest of ``output - input``),
``calls`` (``int(aug.calls)`` after each call), ``history`` (the values of
``aug.history`` at the end, or an error text), ``means`` (the mean of each
returned batch), ``traces`` and ``shapes`` (distinct input shapes).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from grader.checks import CheckResult

FRESH = 2e-7  # two draws closer than this are "the same value" (recovering a delta costs ~3e-8)
SAME = 1e-6  # two streams from one seed must agree to this
LOG_ATOL, LOG_RTOL = 1e-4, 1e-3  # a printed delta has at least four decimals
HISTORY_ATOL, HISTORY_RTOL = 1e-5, 1e-5
# One delta per batch: output - input is the same for every pixel, up to the
# float32 rounding of images + delta (below 2e-7 for outputs under 2).
SPREAD = 1e-6
QUARTERS = ("lowest", "second", "third", "highest")
REPEAT_RUN = 3  # a long stream may not repeat this many consecutive deltas of an earlier run
UNIFORM_ALPHA = 1e-7 / 8  # per tail and quarter: a uniform stream fails the quarter counts with p < 1e-7
# Many draws from a tiny range: at least this share of them must be distinct (more than FRESH apart).
# A continuous draw keeps far more even where max_delta is a few hundred times FRESH (64 draws
# over [-4e-5, 4e-5] merge about 10 of them); a delta rounded to a grid of 1e-5 or coarser keeps a handful.
DISTINCT_SHARE = 0.5
# NumPy dtype names a message may show; anything else is "another dtype".
DTYPES = frozenset({"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool", "object"})


class Failed(Exception):
    pass


def _structure(actual: dict, expected: dict) -> None:
    runs = actual.get("runs")
    if not isinstance(runs, dict) or set(runs) != set(expected["runs"]):
        raise Failed("result['runs']: the probe's runs are missing")
    for name, run in expected["runs"].items():
        got = runs[name]
        if not isinstance(got, dict) or len(got.get("deltas", [])) != len(run["deltas"]):
            raise Failed(f"result['runs'][{name!r}]: expected {len(run['deltas'])} calls to be recorded")


def _traces(name: str, run: dict, expected: dict) -> None:
    traces, shapes = run.get("traces"), expected["shapes"]
    if isinstance(traces, bool) or not isinstance(traces, int):
        raise Failed(f"augmenter {name}: __call__ is not a tf.function ({traces!r})")
    if traces < 1:
        raise Failed(f"augmenter {name}: __call__ never traced: it ran eagerly instead of as a graph")
    if traces > shapes:
        raise Failed(f"augmenter {name}: __call__ traced {traces} times for {shapes} input shape(s)")


def _calls(name: str, run: dict, expected: dict) -> None:
    if run.get("calls") != expected["calls"]:
        raise Failed(f"augmenter {name}: int(aug.calls) after each call read {run.get('calls')!r}, expected {expected['calls']!r}")


def _empty(expected: dict, i: int) -> bool:
    """Whether call i + 1 of this run had an empty batch: it counts, logs and draws, but shows no delta and no mean."""
    shapes = expected.get("in_shapes", [])
    return i < len(shapes) and math.prod(shapes[i]) == 0


def _history(name: str, run: dict, expected: dict) -> None:
    history, means = run.get("history"), run["means"]
    if not isinstance(history, list):
        raise Failed(f"augmenter {name}: np.asarray(aug.history) failed: {history}")
    if len(history) != len(means):
        raise Failed(f"augmenter {name}: the history has {len(history)} entries after {len(means)} calls")
    for i, (h, m) in enumerate(zip(history, means, strict=True)):
        if _empty(expected, i):
            continue  # the mean of an empty batch is not defined: any entry will do
        if not isinstance(h, float) or not isinstance(m, float) or abs(h - m) > HISTORY_ATOL + HISTORY_RTOL * abs(m):
            shown = f"{m:.7g}" if isinstance(m, float) else repr(m)
            raise Failed(f"augmenter {name}: history[{i}] is {h!r}, but batch {i + 1} came back with mean {shown}")


def _shapes(name: str, run: dict, expected: dict) -> None:
    """Each call returned a batch of its input's shape (a scalar stays a scalar, an empty batch stays empty)."""
    got, wanted = run.get("out_shapes"), expected["in_shapes"]
    if not isinstance(got, list) or len(got) != len(wanted):
        raise Failed(f"augmenter {name}: the record of the returned shapes is incomplete")
    for i, (out, x) in enumerate(zip(got, wanted, strict=True)):
        if out != x:
            raise Failed(f"augmenter {name}: call {i + 1} returned shape {tuple(out)} for an input of shape {tuple(x)}")
    dtypes = run.get("out_dtypes")
    if not isinstance(dtypes, list) or len(dtypes) != len(wanted):
        raise Failed(f"augmenter {name}: the record of the returned dtypes is incomplete")
    for i, dtype in enumerate(dtypes):
        if dtype != "float32":
            shown = dtype if dtype in DTYPES else "another dtype"
            raise Failed(
                f"augmenter {name}: call {i + 1} returned a {shown} batch for a float32 input; "
                "the output is images + delta, float32 like the input"
            )


def _offsets(name: str, run: dict, expected: dict) -> None:
    """Each call added one offset to the whole batch, within [-max_delta, max_delta]."""
    deltas, bound = run["deltas"], run["max_delta"]
    spreads = run.get("spreads")
    if not isinstance(spreads, list) or len(spreads) != len(deltas):
        raise Failed(f"augmenter {name}: the record of what each call added is incomplete")
    for i, spread in enumerate(spreads):
        if _empty(expected, i):
            continue
        if not isinstance(spread, float) or not spread <= SPREAD:
            raise Failed(
                f"augmenter {name}: call {i + 1} did not add the same offset to every pixel of the batch "
                f"(output - input varies by {spread!r}); the output must be images + delta with one delta per call"
            )
    for i, d in enumerate(deltas):
        if _empty(expected, i):
            continue
        if not isinstance(d, float) or not abs(d) <= bound * (1 + 1e-6) + 1e-7:
            raise Failed(f"augmenter {name}: call {i + 1} applied delta {d!r}, outside [-{bound:g}, {bound:g}]")


def _drawn(run: dict) -> list[float]:
    """The deltas that calls on non-empty batches applied."""
    return [d for d in run["deltas"] if isinstance(d, float)]


def _fresh(name: str, run: dict) -> None:
    """A short stream: every delta differs from every earlier one."""
    deltas = run["deltas"]
    for i in range(len(deltas)):
        for j in range(i):
            if isinstance(deltas[i], float) and isinstance(deltas[j], float) and abs(deltas[i] - deltas[j]) <= FRESH:
                raise Failed(
                    f"augmenter {name}: calls {j + 1} and {i + 1} applied the same delta {deltas[i]:.7g}; "
                    "each call must draw a new one"
                )


def _no_repeated_run(name: str, run: dict) -> None:
    """A long stream: no run of REPEAT_RUN consecutive deltas repeats an earlier run.

    Two fresh float32 draws land within FRESH of each other by chance (a
    birthday collision, about once in a thousand-call stream), so a long
    stream is not held to all-pairs freshness. Three in a row at the same lag
    happen by chance with probability below 1e-10; a cycling stream repeats
    a run as long as what is left after its period.
    """
    deltas = run["deltas"]
    if not all(isinstance(d, float) for d in deltas):
        raise Failed(f"augmenter {name}: some call's delta could not be recovered")
    n = len(deltas)
    for lag in range(1, n):
        streak = 0
        for k in range(n - lag):
            streak = streak + 1 if abs(deltas[k] - deltas[k + lag]) <= FRESH else 0
            if streak == REPEAT_RUN:
                first = k - REPEAT_RUN + 2
                raise Failed(
                    f"augmenter {name}: calls {first + lag} to {first + lag + REPEAT_RUN - 1} applied the same deltas "
                    f"as calls {first} to {first + REPEAT_RUN - 1}: the stream repeats itself; every call must draw a new delta"
                )


def _cover(name: str, run: dict) -> None:
    """Many uniform draws reach every quarter of [-max_delta, max_delta] (a correct stream misses one with p < 1e-7)."""
    deltas, bound = _drawn(run), run["max_delta"]
    for q, which in enumerate(QUARTERS):
        low, high = -bound + q * bound / 2, -bound + (q + 1) * bound / 2
        if not any(low <= d <= high for d in deltas):
            raise Failed(
                f"augmenter {name}: none of its {len(deltas)} deltas fell in the {which} quarter of "
                "[-max_delta, max_delta]; the deltas must be drawn uniformly from the whole range"
            )


def _distinct(name: str, run: dict) -> None:
    """Many draws take many values: a delta rounded to a grid repeats a few values, however small max_delta is."""
    deltas = sorted(_drawn(run))
    distinct = 1 + sum(1 for x, y in itertools.pairwise(deltas) if y - x > FRESH) if deltas else 0
    if distinct < DISTINCT_SHARE * len(deltas):
        raise Failed(
            f"augmenter {name}: its {len(deltas)} deltas took only {distinct} distinct values; a uniform draw "
            "over [-max_delta, max_delta] takes a new value each call, however small max_delta is (no rounding)"
        )


def quarter_bounds(n: int, alpha: float = UNIFORM_ALPHA) -> tuple[int, int]:
    """Counts (lo, hi) such that a Binomial(n, 1/4) count falls below lo, or above hi, with probability at most alpha each."""
    log_pmf = [
        math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * math.log(0.25) + (n - k) * math.log(0.75)
        for k in range(n + 1)
    ]
    pmf = [math.exp(v) for v in log_pmf]
    lo, tail = 0, 0.0
    while tail + pmf[lo] <= alpha:
        tail += pmf[lo]
        lo += 1
    hi, tail = n, 0.0
    while tail + pmf[hi] <= alpha:
        tail += pmf[hi]
        hi -= 1
    return lo, hi


def _uniform(name: str, run: dict) -> None:
    """Each quarter of [-max_delta, max_delta] gets about a quarter of many draws.

    For a uniform stream each quarter's count is Binomial(n, 1/4); the bounds
    leave out at most UNIFORM_ALPHA per tail, so all four quarters pass with
    probability above 1 - 8 * UNIFORM_ALPHA = 1 - 1e-7.
    """
    deltas, bound = _drawn(run), run["max_delta"]
    lo, hi = quarter_bounds(len(deltas))
    counts = [0, 0, 0, 0]
    for d in deltas:
        counts[min(3, max(0, int((d + bound) / (bound / 2))))] += 1
    for count, which in zip(counts, QUARTERS, strict=True):
        if not lo <= count <= hi:
            raise Failed(
                f"augmenter {name}: {count} of its {len(deltas)} deltas fell in the {which} quarter of "
                f"[-max_delta, max_delta], where a uniform draw puts between {lo} and {hi}; "
                "the deltas must be uniform over the whole range, not merely spread across it"
            )


def _graph(actual: dict) -> None:
    report = actual.get("graph")
    if not isinstance(report, dict):
        raise Failed("the traced graph could not be inspected")
    if "error" in report:
        raise Failed(f"getting the traced graph of __call__ failed: {report['error']}")
    if report.get("counter_is_variable") is not True:
        raise Failed("aug.calls is not a tf.Variable: the counter must be state that the graph updates")
    if report.get("counter_in_graph") is not True:
        raise Failed("the traced graph does not update aug.calls itself: the count must be a TensorFlow op of the graph")
    if report.get("output_through_python") is not False:
        raise Failed(
            "the returned batch is computed inside tf.py_function or tf.numpy_function: the drawing and the "
            "adding must be TensorFlow ops of the graph, not Python run from it"
        )
    if report.get("output_from_python_state") is not False:
        raise Failed(
            "the returned batch reads a variable that only Python run from the graph changes (no op of the graph "
            "writes it): the draw must be computed by TensorFlow ops of the graph, not inside tf.py_function"
        )


def _log(actual: dict, expected: dict) -> None:
    log, order = actual.get("log"), expected["order"]
    if not isinstance(log, list) or len(log) != len(order):
        n = len(log) if isinstance(log, list) else 0
        raise Failed(f"the output has {n} 'batch <n>: delta=<value>' line(s) for {len(order)} calls; expected one per call")
    for i, ((name, k), line) in enumerate(zip(order, log, strict=True)):
        n, printed = line
        applied = actual["runs"][name]["deltas"][k - 1]
        if n != k:
            raise Failed(f"log line {i + 1} says 'batch {n}', but it was call {k} of augmenter {name}")
        if applied is None and _empty(expected["runs"][name], k - 1):
            continue  # an empty batch shows no delta to compare with
        if (
            not isinstance(printed, float)
            or not isinstance(applied, float)
            or abs(printed - applied) > LOG_ATOL + LOG_RTOL * abs(applied)
        ):
            raise Failed(f"log line {i + 1} says delta={printed!r}, but call {k} of augmenter {name} applied {applied!r}")


def _same(actual: dict, pairs: list) -> None:
    for a, b in pairs:
        da, db = actual["runs"][a]["deltas"], actual["runs"][b]["deltas"]
        for i, (x, y) in enumerate(zip(da, db, strict=True)):
            if x is None or y is None:
                continue  # an empty batch: the next call shows whether the stream moved on
            if not isinstance(x, float) or not isinstance(y, float) or abs(x - y) > SAME:
                raise Failed(
                    f"augmenters {a} and {b} have the same seed but their call {i + 1} applied {x!r} and {y!r}; "
                    "the deltas must depend only on the seed and the call's position"
                )


def _different(actual: dict, pairs: list) -> None:
    for a, b in pairs:
        da, db = actual["runs"][a]["deltas"], actual["runs"][b]["deltas"]
        gaps = [abs(x - y) for x, y in zip(da, db, strict=True) if isinstance(x, float) and isinstance(y, float)]
        if max(gaps, default=0.0) <= 1e-4:
            raise Failed(f"augmenters {a} and {b} have different seeds but applied the same deltas")


def side_effects(actual: Any, expected: Any) -> CheckResult:
    try:
        if not isinstance(actual, dict):
            raise Failed("the result is not a dict")
        _structure(actual, expected)
        checks = expected["checks"]
        for name, run in expected["runs"].items():
            got = actual["runs"][name]
            if "traces" in checks:
                _traces(name, got, run)
            if "calls" in checks:
                _calls(name, got, run)
            if "shapes" in checks:
                _shapes(name, got, run)
            if "history" in checks:
                _history(name, got, run)
            if {"fresh", "cover", "distinct", "uniform", "long"} & set(checks):
                _offsets(name, got, run)
            if "fresh" in checks:
                _fresh(name, got)
            if "long" in checks:
                _no_repeated_run(name, got)
            if "cover" in checks:
                _cover(name, got)
            if "distinct" in checks:
                _distinct(name, got)
            if "uniform" in checks:
                _uniform(name, got)
        if "graph" in checks:
            _graph(actual)
        if "log" in checks:
            _log(actual, expected)
        if "same" in checks:
            _same(actual, expected["same"])
        if "different" in checks:
            _different(actual, expected["different"])
    except Failed as failure:
        return CheckResult(False, str(failure))
    return CheckResult(True, "")


# ---------------------------------------------------------------- red team round 3
# Checks of the round-3 probes, which read deltas off batches of zeros (each output is the float32
# delta itself). Each failure names a reason, so the diagnosis tells the mistakes apart.

UNIT_DISTINCT_SHARE = 0.95  # of a few hundred float32 draws, at most a handful coincide; a float16 draw keeps ~87%
GRID_BITS = 16  # u = (delta + max_delta) / (2 max_delta) on a grid of 2**-16 or coarser: a float16 or 16-bit draw
GRID_SHARE = 0.5  # a float32 draw lands on that grid once in 128 (23 random bits), never half the time
LOW_BITS = 24  # the bits of u read for cycles: float32's resolution
LONGEST_CYCLE = 64  # an LCG's low k bits cycle every 2**k calls: bits 0 to 5 of its state within 64
PAIR_CELLS = 4  # consecutive draws (u_k, u_k+1) in a 4 x 4 grid: an independent stream fills every cell
INTEGER_DTYPES = ("int32", "int64", "uint32", "uint64")


def _result(reason: str, message: str) -> CheckResult:
    return CheckResult(False, message, {"reason": reason})


def _units(name: str, run: dict) -> list[float] | CheckResult:
    """u = (delta + max_delta) / (2 max_delta) of every call, each delta one offset inside the range; or the failure."""
    deltas, spreads, bound = run.get("deltas"), run.get("spreads"), run.get("max_delta")
    if not isinstance(deltas, list) or not isinstance(spreads, list) or not isinstance(bound, float):
        return _result("record", f"augmenter {name}: the record of its calls is incomplete")
    if run.get("shapes_ok") is not True:
        return _result("shape", f"augmenter {name}: a call returned another shape or dtype than its float32 input's")
    for i, (d, spread) in enumerate(zip(deltas, spreads, strict=False)):
        if not isinstance(d, float) or not abs(d) <= bound * (1 + 1e-6):
            return _result("range", f"augmenter {name}: call {i + 1} applied {d!r}, outside [-{bound:g}, {bound:g}] or not finite")
        if not isinstance(spread, float) or spread > abs(d) * 1e-6:
            return _result("offset", f"augmenter {name}: call {i + 1} did not add one offset to the whole batch")
    return [(d + bound) / (2 * bound) for d in deltas]


def _binomial_low(n: int, p: float, alpha: float) -> int:
    """The largest lo with P(Binomial(n, p) < lo) <= alpha."""
    lo, tail = 0, 0.0
    while lo <= n:
        pmf = math.exp(math.lgamma(n + 1) - math.lgamma(lo + 1) - math.lgamma(n - lo + 1) + lo * math.log(p) + (n - lo) * math.log(1 - p))
        if tail + pmf > alpha:
            break
        tail += pmf
        lo += 1
    return lo


def unit_draws(actual: Any, expected: Any) -> CheckResult:
    """Draws with float32's resolution, no repeats, consecutive draws independent, no cycling low bits."""
    runs = actual.get("runs") if isinstance(actual, dict) else None
    if not isinstance(runs, dict) or set(runs) != set(expected["runs"]):
        return _result("record", "result['runs']: the probe's runs are missing")
    streams: dict[str, list[float]] = {}
    for name in expected["runs"]:
        units = _units(name, runs[name])
        if isinstance(units, CheckResult):
            return units
        n = len(units)
        if n != len(expected["runs"][name]["deltas"]):
            return _result("record", f"augmenter {name}: expected {len(expected['runs'][name]['deltas'])} calls")
        distinct = len(set(units))
        if distinct < UNIT_DISTINCT_SHARE * n:
            return _result(
                "repeats",
                f"augmenter {name}: its {n} deltas took only {distinct} distinct values; a few hundred float32 uniform "
                "draws almost never repeat one (a float16 draw has about a thousand values to take)",
            )
        on_grid = sum(1 for u in units if (u * 2**GRID_BITS).is_integer())
        if on_grid >= GRID_SHARE * n:
            return _result(
                "grid",
                f"augmenter {name}: {on_grid} of its {n} deltas lie on a grid of 2**{GRID_BITS} evenly spaced values "
                "over the range: the draw has fewer random bits than float32's (a float16 or bfloat16 uniform, say)",
            )
        streams[name] = units
    pairs = [[0] * PAIR_CELLS for _ in range(PAIR_CELLS)]
    for units in streams.values():
        for a, b in itertools.pairwise(units):
            pairs[min(PAIR_CELLS - 1, int(a * PAIR_CELLS))][min(PAIR_CELLS - 1, int(b * PAIR_CELLS))] += 1
    total = sum(map(sum, pairs))
    lo = _binomial_low(total, 1 / PAIR_CELLS**2, 1e-9)
    for i, row in enumerate(pairs):
        for j, count in enumerate(row):
            if count < lo:
                return _result(
                    "pairs",
                    f"{count} of {total} pairs of consecutive deltas fell in cell ({i}, {j}) of a {PAIR_CELLS} x {PAIR_CELLS} "
                    f"grid over the range, where independent uniform draws put at least {lo}: each delta must be a new "
                    "random draw, not a step of a deterministic walk from the last one",
                )
    for name, units in streams.items():
        n = len(units)
        for bit in range(LOW_BITS, 0, -1):
            bits = [int(u * 2**bit) % 2 for u in units]
            if len(set(bits)) < 2:
                continue  # below the draw's resolution: always 0
            for cycle in range(2, LONGEST_CYCLE + 1):
                if all(bits[j] == bits[j + cycle] for j in range(n - cycle)):
                    return _result(
                        "low-bits",
                        f"augmenter {name}: bit {bit} of its unit draws repeats every {cycle} calls: the low bits of the "
                        "generator cycle (those of a linear congruential generator do), so the stream repeats itself",
                    )
    return CheckResult(True, "")


def other_process(actual: Any, expected: Any) -> CheckResult:
    """The same seeds give the same deltas in a fresh Python process with another hash seed."""
    here = actual.get("here") if isinstance(actual, dict) else None
    there = actual.get("there") if isinstance(actual, dict) else None
    if not isinstance(here, dict) or set(here) != set(expected["here"]):
        return _result("record", "result['here']: the record of this process's deltas is incomplete")
    if not isinstance(there, dict):
        return _result("child-failed", f"the solution did not run in a fresh process: {there!r}"[:300])
    for seed, wanted in here.items():
        got = there.get(seed)
        if not isinstance(wanted, list) or not isinstance(got, list) or len(got) != len(wanted):
            return _result("child-failed", f"seed {seed}: the fresh process recorded no stream")
        for k, (x, y) in enumerate(zip(wanted, got, strict=True)):
            if not isinstance(x, float) or not isinstance(y, float) or abs(x - y) > SAME:
                return _result(
                    "process",
                    f"seed {seed}, call {k + 1}: {x!r} in this process, {y!r} in a fresh one with another hash seed; "
                    "the stream must depend on the seed alone, in any process (Python's str hash is salted per process)",
                )
    return CheckResult(True, "")


def integer_counter(actual: Any, expected: Any) -> CheckResult:
    """aug.calls is an integer variable of 32 or 64 bits, and it counts."""
    if not isinstance(actual, dict):
        return _result("record", "the result is not a dict")
    dtype = actual.get("dtype")
    if dtype not in INTEGER_DTYPES:
        shown = dtype if dtype in DTYPES or dtype == "not a tf.Variable" else "another dtype"
        return _result(
            "dtype",
            f"aug.calls is {shown}; the counter must be an integer tf.Variable (int32 or int64): a float32 count "
            "stops at 2**24, where adding 1 rounds back",
        )
    if actual.get("calls") != expected["calls"]:
        return _result("calls", f"int(aug.calls) after each call read {actual.get('calls')!r}, expected {expected['calls']!r}")
    return CheckResult(True, "")


def one_trace(actual: Any, expected: Any) -> CheckResult:
    """Calls of one shape trace once, and the counter counts them."""
    if not isinstance(actual, dict):
        return _result("record", "the result is not a dict")
    traces = actual.get("traces")
    if traces != 1 or isinstance(traces, bool):
        return _result(
            "traces",
            f"__call__ traced {traces!r} times for calls of one input shape; a tf.function that creates variables "
            "in its first call traces twice: create them in __init__",
        )
    if actual.get("calls") != expected["calls"]:
        return _result("calls", f"int(aug.calls) read {actual.get('calls')!r} after {expected['calls']!r} calls")
    return CheckResult(True, "")


def huge_range(actual: Any, expected: Any) -> CheckResult:
    """A max_delta up to 1e38: finite deltas in range, reaching every quarter, each logged."""
    runs = actual.get("runs") if isinstance(actual, dict) else None
    if not isinstance(runs, dict) or set(runs) != set(expected["runs"]):
        return _result("record", "result['runs']: the probe's runs are missing")
    for name in expected["runs"]:
        run = runs[name]
        units = _units(name, run)
        if isinstance(units, CheckResult):
            return units
        if len(units) != len(expected["runs"][name]["deltas"]):
            return _result("record", f"augmenter {name}: expected {len(expected['runs'][name]['deltas'])} calls")
        for q, which in enumerate(QUARTERS):
            if not any(q / 4 <= u <= (q + 1) / 4 for u in units):
                return _result("cover", f"augmenter {name}: none of its {len(units)} deltas fell in the {which} quarter of the range")
        log = run.get("log")
        if not isinstance(log, list) or len(log) != len(units):
            n = len(log) if isinstance(log, list) else 0
            return _result("log", f"augmenter {name}: {n} log line(s) for {len(units)} calls")
        for k, (line, d) in enumerate(zip(log, run["deltas"], strict=True)):
            if not isinstance(line, list) or len(line) != 2 or line[0] != k + 1 or not isinstance(line[1], float):
                return _result("log", f"augmenter {name}: log line {k + 1} does not read 'batch {k + 1}: delta=<value>'")
            if abs(line[1] - d) > LOG_ATOL + LOG_RTOL * abs(d):
                return _result("log", f"augmenter {name}: log line {k + 1} says delta={line[1]!r}, but the call applied {d!r}")
    return CheckResult(True, "")
