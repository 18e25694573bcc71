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


def _history(name: str, run: dict) -> None:
    history, means = run.get("history"), run["means"]
    if not isinstance(history, list):
        raise Failed(f"augmenter {name}: np.asarray(aug.history) failed: {history}")
    if len(history) != len(means):
        raise Failed(f"augmenter {name}: the history has {len(history)} entries after {len(means)} calls")
    for i, (h, m) in enumerate(zip(history, means, strict=True)):
        if not isinstance(h, float) or abs(h - m) > HISTORY_ATOL + HISTORY_RTOL * abs(m):
            raise Failed(f"augmenter {name}: history[{i}] is {h!r}, but batch {i + 1} came back with mean {m:.7g}")


def _offsets(name: str, run: dict) -> None:
    """Each call added one offset to the whole batch, within [-max_delta, max_delta]."""
    deltas, bound = run["deltas"], run["max_delta"]
    spreads = run.get("spreads")
    if not isinstance(spreads, list) or len(spreads) != len(deltas):
        raise Failed(f"augmenter {name}: the record of what each call added is incomplete")
    for i, spread in enumerate(spreads):
        if not spread <= SPREAD:
            raise Failed(
                f"augmenter {name}: call {i + 1} did not add the same offset to every pixel of the batch "
                f"(output - input varies by {spread:.3g}); the output must be images + delta with one delta per call"
            )
    for i, d in enumerate(deltas):
        if not abs(d) <= bound * (1 + 1e-6) + 1e-7:
            raise Failed(f"augmenter {name}: call {i + 1} applied delta {d:.7g}, outside [-{bound:g}, {bound:g}]")


def _fresh(name: str, run: dict) -> None:
    deltas = run["deltas"]
    for i in range(len(deltas)):
        for j in range(i):
            if abs(deltas[i] - deltas[j]) <= FRESH:
                raise Failed(
                    f"augmenter {name}: calls {j + 1} and {i + 1} applied the same delta {deltas[i]:.7g}; "
                    "each call must draw a new one"
                )


def _cover(name: str, run: dict) -> None:
    """Many uniform draws reach every quarter of [-max_delta, max_delta] (a correct stream misses one with p < 1e-7)."""
    deltas, bound = run["deltas"], run["max_delta"]
    for q, which in enumerate(QUARTERS):
        low, high = -bound + q * bound / 2, -bound + (q + 1) * bound / 2
        if not any(low <= d <= high for d in deltas):
            raise Failed(
                f"augmenter {name}: none of its {len(deltas)} deltas fell in the {which} quarter of "
                "[-max_delta, max_delta]; the deltas must be drawn uniformly from the whole range"
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
        if not isinstance(printed, float) or abs(printed - applied) > LOG_ATOL + LOG_RTOL * abs(applied):
            raise Failed(f"log line {i + 1} says delta={printed!r}, but call {k} of augmenter {name} applied {applied:.7g}")


def _same(actual: dict, pairs: list) -> None:
    for a, b in pairs:
        da, db = actual["runs"][a]["deltas"], actual["runs"][b]["deltas"]
        for i, (x, y) in enumerate(zip(da, db, strict=True)):
            if abs(x - y) > SAME:
                raise Failed(
                    f"augmenters {a} and {b} have the same seed but their call {i + 1} applied {x:.7g} and {y:.7g}; "
                    "the deltas must depend only on the seed and the call's position"
                )


def _different(actual: dict, pairs: list) -> None:
    for a, b in pairs:
        da, db = actual["runs"][a]["deltas"], actual["runs"][b]["deltas"]
        if max((abs(x - y) for x, y in zip(da, db, strict=True)), default=0.0) <= 1e-4:
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
            if "history" in checks:
                _history(name, got)
            if "fresh" in checks or "cover" in checks:
                _offsets(name, got)
            if "fresh" in checks:
                _fresh(name, got)
            if "cover" in checks:
                _cover(name, got)
        if "log" in checks:
            _log(actual, expected)
        if "same" in checks:
            _same(actual, expected["same"])
        if "different" in checks:
            _different(actual, expected["different"])
    except Failed as failure:
        return CheckResult(False, str(failure))
    return CheckResult(True, "")
