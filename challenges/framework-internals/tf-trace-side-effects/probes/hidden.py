"""Hidden probes for tf-trace-side-effects: they make the score.

Each probe calls one or more Augmenters on float32 image batches, captures
what they print (file descriptors 1 and 2), and records for each call the
delta actually applied (recovered from the output), ``int(aug.calls)``,
the batch mean and, at the end, ``aug.history`` and the trace count. The
check (``side_effects`` in checks.py) tests properties of that record, not
the reference's random numbers; the reference's observation names which
properties each probe tests. Every probe also requires that ``__call__``
traced at least once and at most once per input shape.

Categories: ``counter`` (calls), ``log`` (history and printed lines) and
``randomness`` (fresh, in-range, seed-reproducible draws that survive a
retrace).
"""

from __future__ import annotations

from typing import Any

from probe_common import Session
from probekit import probe

SHAPE = (2, 4, 4)


# ---------------------------------------------------------------- counter


@probe(category="counter", weight=2, check="side_effects", hints=["counter"])
def counter_after_six_calls(solution: Any) -> dict[str, Any]:
    """Six calls with one input shape: int(aug.calls) reads 1 to 6."""
    s = Session(solution, ["traces", "calls"])
    s.augmenter("a", seed=11)
    for k in range(6):
        s.call("a", SHAPE, 1100 + k)
    return s.observation()


@probe(category="counter", weight=2, check="side_effects", hints=["counter", "retrace"])
def counter_across_retraces(solution: Any) -> dict[str, Any]:
    """Input shapes alternate between (2, 4, 4), (5, 4, 4) and (1, 8, 8): the count carries across traces."""
    s = Session(solution, ["traces", "calls"])
    s.augmenter("a", seed=12)
    for k, shape in enumerate([(2, 4, 4), (5, 4, 4), (2, 4, 4), (1, 8, 8), (5, 4, 4), (2, 4, 4)]):
        s.call("a", shape, 1200 + k)
    return s.observation()


@probe(category="counter", check="side_effects", hints=["counter", "per-instance"])
def counters_per_instance(solution: Any) -> dict[str, Any]:
    """Two augmenters called in turn (a, a, b, a, b): each counts its own calls."""
    s = Session(solution, ["traces", "calls"])
    s.augmenter("a", seed=13)
    s.augmenter("b", seed=14)
    for k, name in enumerate("aabab"):
        s.call(name, SHAPE, 1300 + k)
    return s.observation()


@probe(category="counter", check="side_effects", hints=["any-shape", "counter", "retrace"])
def batches_of_any_rank(solution: Any) -> dict[str, Any]:
    """Batches of rank 1 to 4, one rank at a time and back: every call counts, logs, records and draws."""
    s = Session(solution, ["traces", "calls", "log", "history", "fresh"])
    s.augmenter("a", seed=15)
    for k, shape in enumerate([(2, 4, 4), (2, 3, 3, 3), (6, 5), (9,), (2, 4, 4)]):
        s.call("a", shape, 1500 + k)
    return s.observation()


# ---------------------------------------------------------------- log


@probe(category="log", weight=2, check="side_effects", hints=["history"])
def history_records_every_call(solution: Any) -> dict[str, Any]:
    """Seven calls: aug.history holds the mean of each returned batch, in order."""
    s = Session(solution, ["traces", "history"])
    s.augmenter("a", seed=21)
    for k in range(7):
        s.call("a", SHAPE, 2100 + k)
    return s.observation()


@probe(category="log", weight=2, check="side_effects", hints=["print"])
def printed_line_per_call(solution: Any) -> dict[str, Any]:
    """Five calls: five lines 'batch <n>: delta=<value>' with n = 1..5 and the delta each call applied."""
    s = Session(solution, ["traces", "log"])
    s.augmenter("a", seed=22)
    for k in range(5):
        s.call("a", SHAPE, 2200 + k)
    return s.observation()


@probe(category="log", check="side_effects", hints=["print", "history", "retrace"])
def log_across_retraces(solution: Any) -> dict[str, Any]:
    """Shapes (3, 4, 4), (3, 4, 4), (6, 2, 2), (3, 4, 4), (6, 2, 2): one line and one history entry per call."""
    s = Session(solution, ["traces", "log", "history"])
    s.augmenter("a", seed=23)
    for k, shape in enumerate([(3, 4, 4), (3, 4, 4), (6, 2, 2), (3, 4, 4), (6, 2, 2)]):
        s.call("a", shape, 2300 + k)
    return s.observation()


@probe(category="log", check="side_effects", hints=["print", "history", "per-instance"])
def two_augmenters_interleaved(solution: Any) -> dict[str, Any]:
    """Two augmenters called in turn (a, b, b, a, b): lines in call order, each numbered by its own augmenter."""
    s = Session(solution, ["traces", "calls", "log", "history"])
    s.augmenter("a", seed=24)
    s.augmenter("b", seed=25)
    for k, name in enumerate("abbab"):
        s.call(name, SHAPE, 2400 + k)
    return s.observation()


# ---------------------------------------------------------------- randomness


@probe(category="randomness", weight=2, check="side_effects", hints=["random"])
def fresh_delta_every_call(solution: Any) -> dict[str, Any]:
    """Eight calls with one shape: eight different deltas within [-0.1, 0.1]."""
    s = Session(solution, ["traces", "fresh"])
    s.augmenter("a", seed=31)
    for k in range(8):
        s.call("a", SHAPE, 3100 + k)
    return s.observation()


@probe(category="randomness", weight=2, check="side_effects", hints=["random", "seed"])
def same_seed_same_stream(solution: Any) -> dict[str, Any]:
    """Two augmenters with seed 5, called in turn: call k of one applies the same delta as call k of the other."""
    s = Session(solution, ["traces", "fresh", "same"])
    s.augmenter("a", seed=5)
    s.augmenter("b", seed=5)
    for k in range(4):
        s.call("a", SHAPE, 3200 + k)
        s.call("b", SHAPE, 3300 + k)
    return s.observation(same=[["a", "b"]])


@probe(category="randomness", check="side_effects", hints=["random", "seed"])
def different_seeds_differ(solution: Any) -> dict[str, Any]:
    """Augmenters with seeds 5, 6 and 7: three different streams."""
    s = Session(solution, ["traces", "fresh", "different"])
    for name, seed in (("a", 5), ("b", 6), ("c", 7)):
        s.augmenter(name, seed=seed)
    for k in range(4):
        for name in "abc":
            s.call(name, SHAPE, 3400 + k)
    return s.observation(different=[["a", "b"], ["a", "c"], ["b", "c"]])


@probe(category="randomness", weight=2, check="side_effects", hints=["random", "retrace"])
def stream_survives_retraces(solution: Any) -> dict[str, Any]:
    """Seed 9 twice, one augmenter retracing for three shapes, the other not: same deltas, none repeated.

    The varying augmenter gets shapes (2,4,4), (2,4,4), (3,4,4), (3,4,4),
    (2,4,4), (4,2,2); the steady one always (2,4,4).
    """
    s = Session(solution, ["traces", "fresh", "same"])
    s.augmenter("varying", seed=9)
    s.augmenter("steady", seed=9)
    shapes = [(2, 4, 4), (2, 4, 4), (3, 4, 4), (3, 4, 4), (2, 4, 4), (4, 2, 2)]
    for k, shape in enumerate(shapes):
        s.call("varying", shape, 3500 + k)
        s.call("steady", SHAPE, 3600 + k)
    return s.observation(same=[["varying", "steady"]])


@probe(category="randomness", check="side_effects", hints=["random"])
def max_delta_respected(solution: Any) -> dict[str, Any]:
    """max_delta 0.5 and 0.01: five fresh deltas each, inside each augmenter's range."""
    s = Session(solution, ["traces", "fresh"])
    s.augmenter("wide", seed=41, max_delta=0.5)
    s.augmenter("narrow", seed=42, max_delta=0.01)
    for k in range(5):
        s.call("wide", SHAPE, 4100 + k)
        s.call("narrow", SHAPE, 4200 + k)
    return s.observation()


@probe(category="randomness", check="side_effects", hints=["uniform"])
def deltas_cover_the_range(solution: Any) -> dict[str, Any]:
    """max_delta 0.4, sixty-four calls: deltas reach every quarter of [-0.4, 0.4], one offset per batch.

    A uniform stream leaves one quarter empty with probability below 1e-7;
    outputs above 1 show that nothing is clipped.
    """
    # "cover" rather than "fresh": among 64 draws, two closer than the
    # freshness threshold would be an accident of a correct stream (p ~ 1e-3).
    s = Session(solution, ["traces", "cover"])
    s.augmenter("a", seed=43, max_delta=0.4)
    for k in range(64):
        s.call("a", SHAPE, 4300 + k)
    return s.observation()
