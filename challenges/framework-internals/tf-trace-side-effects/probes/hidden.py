"""Hidden probes for tf-trace-side-effects: they make the score.

Each probe calls one or more Augmenters on float32 image batches, captures
what they print (file descriptors 1 and 2), and records for each call the
delta actually applied (recovered from the output), ``int(aug.calls)``,
the batch mean and, at the end, ``aug.history`` and the trace count. The
check (``side_effects`` in checks.py) tests properties of that record, not
the reference's random numbers; the reference's observation names which
properties each probe tests. Every probe also requires that ``__call__``
traced at least once and at most once per input shape.

Categories: ``counter`` (calls, scalar and empty batches, long streams,
effects as graph ops), ``log`` (history and printed lines) and
``randomness`` (fresh, in-range, uniform, seed-reproducible draws that
survive a retrace and ignore TensorFlow's global seed).

Descriptions name the input class a probe tests, never its values: the
candidate sees them.
"""

from __future__ import annotations

import json
import linecache
import os
import subprocess
import sys
import tempfile
from typing import Any

import numpy as np
import tensorflow as tf
from probe_common import LINE, Session, captured_output, graph_report, images, read_calls, tracing_count
from probekit import probe

SHAPE = (2, 4, 4)


# ---------------------------------------------------------------- counter


@probe(category="counter", weight=2, check="side_effects", hints=["counter"])
def counter_after_six_calls(solution: Any) -> dict[str, Any]:
    """Several calls with one input shape: int(aug.calls) reads the number of calls so far after each."""
    s = Session(solution, ["traces", "calls"])
    s.augmenter("a", seed=11)
    for k in range(6):
        s.call("a", SHAPE, 1100 + k)
    return s.observation()


@probe(category="counter", weight=2, check="side_effects", hints=["counter", "retrace"])
def counter_across_retraces(solution: Any) -> dict[str, Any]:
    """Input shapes that alternate, so the function retraces: the count carries across traces."""
    s = Session(solution, ["traces", "calls"])
    s.augmenter("a", seed=12)
    for k, shape in enumerate([(2, 4, 4), (5, 4, 4), (2, 4, 4), (1, 8, 8), (5, 4, 4), (2, 4, 4)]):
        s.call("a", shape, 1200 + k)
    return s.observation()


@probe(category="counter", check="side_effects", hints=["counter", "per-instance"])
def counters_per_instance(solution: Any) -> dict[str, Any]:
    """Two augmenters called in an irregular order: each counts its own calls."""
    s = Session(solution, ["traces", "calls"])
    s.augmenter("a", seed=13)
    s.augmenter("b", seed=14)
    for k, name in enumerate("aabab"):
        s.call(name, SHAPE, 1300 + k)
    return s.observation()


@probe(category="counter", check="side_effects", hints=["any-shape", "counter", "retrace"])
def batches_of_any_rank(solution: Any) -> dict[str, Any]:
    """Batches of several ranks (vectors to image stacks with channels) and back: every call counts, logs, records and draws."""
    s = Session(solution, ["traces", "calls", "log", "history", "fresh"])
    s.augmenter("a", seed=15)
    for k, shape in enumerate([(2, 4, 4), (2, 3, 3, 3), (6, 5), (9,), (2, 4, 4)]):
        s.call("a", shape, 1500 + k)
    return s.observation()


# ---------------------------------------------------------------- log


@probe(category="log", weight=2, check="side_effects", hints=["history"])
def history_records_every_call(solution: Any) -> dict[str, Any]:
    """Several calls: aug.history holds the mean of each returned batch, in order."""
    s = Session(solution, ["traces", "history"])
    s.augmenter("a", seed=21)
    for k in range(7):
        s.call("a", SHAPE, 2100 + k)
    return s.observation()


@probe(category="log", weight=2, check="side_effects", hints=["print"])
def printed_line_per_call(solution: Any) -> dict[str, Any]:
    """Several calls: one line 'batch <n>: delta=<value>' per call, numbered from 1, with the delta each call applied."""
    s = Session(solution, ["traces", "log"])
    s.augmenter("a", seed=22)
    for k in range(5):
        s.call("a", SHAPE, 2200 + k)
    return s.observation()


@probe(category="log", check="side_effects", hints=["print", "history", "retrace"])
def log_across_retraces(solution: Any) -> dict[str, Any]:
    """Input shapes that change and come back, so the function retraces: one line and one history entry per call."""
    s = Session(solution, ["traces", "log", "history"])
    s.augmenter("a", seed=23)
    for k, shape in enumerate([(3, 4, 4), (3, 4, 4), (6, 2, 2), (3, 4, 4), (6, 2, 2)]):
        s.call("a", shape, 2300 + k)
    return s.observation()


@probe(category="log", check="side_effects", hints=["print", "history", "per-instance"])
def two_augmenters_interleaved(solution: Any) -> dict[str, Any]:
    """Two augmenters called in an irregular order: lines in call order, each numbered by its own augmenter."""
    s = Session(solution, ["traces", "calls", "log", "history"])
    s.augmenter("a", seed=24)
    s.augmenter("b", seed=25)
    for k, name in enumerate("abbab"):
        s.call(name, SHAPE, 2400 + k)
    return s.observation()


# ---------------------------------------------------------------- randomness


@probe(category="randomness", weight=2, check="side_effects", hints=["random"])
def fresh_delta_every_call(solution: Any) -> dict[str, Any]:
    """Several calls with one shape and the default max_delta: a different delta each call, within range."""
    s = Session(solution, ["traces", "fresh"])
    s.augmenter("a", seed=31)
    for k in range(8):
        s.call("a", SHAPE, 3100 + k)
    return s.observation()


@probe(category="randomness", weight=2, check="side_effects", hints=["random", "seed"])
def same_seed_same_stream(solution: Any) -> dict[str, Any]:
    """Two augmenters with the same seed, called in turn: call k of one applies the same delta as call k of the other."""
    s = Session(solution, ["traces", "fresh", "same"])
    s.augmenter("a", seed=5)
    s.augmenter("b", seed=5)
    for k in range(4):
        s.call("a", SHAPE, 3200 + k)
        s.call("b", SHAPE, 3300 + k)
    return s.observation(same=[["a", "b"]])


@probe(category="randomness", check="side_effects", hints=["random", "seed"])
def different_seeds_differ(solution: Any) -> dict[str, Any]:
    """Augmenters with neighbouring small seeds, created before any is called: different streams."""
    s = Session(solution, ["traces", "fresh", "different"])
    for name, seed in (("a", 5), ("b", 6), ("c", 7)):
        s.augmenter(name, seed=seed)
    for k in range(4):
        for name in "abc":
            s.call(name, SHAPE, 3400 + k)
    return s.observation(different=[["a", "b"], ["a", "c"], ["b", "c"]])


@probe(category="randomness", weight=2, check="side_effects", hints=["random", "retrace"])
def stream_survives_retraces(solution: Any) -> dict[str, Any]:
    """Two same-seed augmenters, one retracing for new shapes, the other not: same deltas, none repeated."""
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
    """A wide and a narrow max_delta: fresh deltas inside each augmenter's range, outputs leaving [0, 1], each logged precisely."""
    s = Session(solution, ["traces", "fresh", "log"])
    s.augmenter("wide", seed=41, max_delta=0.5)
    s.augmenter("narrow", seed=42, max_delta=0.01)
    for k in range(5):
        s.call("wide", SHAPE, 4100 + k)
        s.call("narrow", SHAPE, 4200 + k)
    return s.observation()


@probe(category="randomness", check="side_effects", hints=["uniform"])
def deltas_cover_the_range(solution: Any) -> dict[str, Any]:
    """A large max_delta and tiny ones, many calls each: deltas reach every quarter of the range and take many values, logged precisely."""
    # "cover" and "distinct" rather than "fresh": among 64 draws, two closer
    # than the freshness threshold would be an accident of a correct stream
    # (p ~ 1e-3 for the large range, likely for the tiny ones). A delta rounded
    # to a grid (to print it exactly, say) keeps a few values over a tiny range.
    # The large range makes the log's relative precision matter (|delta| > 0.1).
    s = Session(solution, ["traces", "cover", "distinct", "log"])
    s.augmenter("a", seed=43, max_delta=0.4)
    s.augmenter("tiny", seed=431, max_delta=2e-4)
    s.augmenter("tinier", seed=432, max_delta=4e-5)
    for k in range(64):
        for name in ("a", "tiny", "tinier"):
            s.call(name, SHAPE, 4300 + k)
    return s.observation()



# A thousand calls: 1 s unloaded, but 32 s was measured under the check at load 12 on two cores
# (niced), over 80% of the package's 30 s; 60 s gives this probe and the long stream their headroom back.
@probe(category="randomness", check="side_effects", hints=["uniform"], timeout=60)
def deltas_uniform_in_quarters(solution: Any) -> dict[str, Any]:
    """Many calls: each quarter of [-max_delta, max_delta] gets about a quarter of the deltas, as a uniform draw does."""
    # Bounds per quarter from the Binomial(n, 1/4) tails (checks.quarter_bounds):
    # a uniform stream falls outside them with probability below 1e-7.
    s = Session(solution, ["traces", "uniform"])
    s.augmenter("a", seed=44, max_delta=0.25)
    for k in range(1000):
        s.call("a", (3,), 4400 + k)
    return s.observation()


@probe(category="randomness", check="side_effects", hints=["seed"])
def stream_ignores_global_seed(solution: Any) -> dict[str, Any]:
    """Same-seed augmenters created and first called under different TensorFlow global seeds: the same stream."""
    s = Session(solution, ["traces", "fresh", "same"])
    s.augmenter("a", seed=45)  # under the probe's global seed 0
    s.call("a", SHAPE, 4500)
    tf.random.set_seed(1234)
    s.augmenter("b", seed=45)
    s.call("b", SHAPE, 4501)
    tf.random.set_seed(987654321)
    s.augmenter("c", seed=45)
    s.call("c", SHAPE, 4502)
    for k in range(4):
        for name in "abc":
            s.call(name, SHAPE, 4510 + k)
    return s.observation(same=[["a", "b"], ["a", "c"]])


@probe(category="randomness", check="side_effects", hints=["seed"])
def seeds_far_apart_differ(solution: Any) -> dict[str, Any]:
    """Seeds negative, wider than 32 bits, at the ends of the 64-bit range or alike in low bits: each its own stream."""
    # No seed and its negation: the statement lets them share a stream, as
    # random.Random(s) and random.Random(-s) do. Pairs that a non-injective
    # seed map confuses: s and s + 2**k (a modulo or a cast), -1 and 2**63 - 1
    # and 0 and -2**63 (modulo 2**63), -1 and -2 and 0 and 2**61 - 1 (Python's
    # hash()), 11416 and 70954 (random.Random(s).getrandbits(32)).
    seeds = {
        "a": 5, "b": 5 + 2**31, "c": 5 + 2**32, "d": -6, "e": -1, "f": 2**31 - 1, "g": 2**32 - 1, "h": 5 + 2**62,
        "i": -2, "j": 0, "k": 2**61 - 1, "l": 2**63 - 1, "m": -(2**63), "n": 11416, "o": 70954,
    }
    s = Session(solution, ["traces", "fresh", "different"])
    for name, seed in seeds.items():
        s.augmenter(name, seed=seed)
    for k in range(4):
        for name in seeds:
            s.call(name, SHAPE, 4600 + k)
    names = list(seeds)
    return s.observation(different=[[x, y] for i, x in enumerate(names) for y in names[i + 1 :]])


@probe(category="randomness", check="side_effects", hints=["random"])
def max_delta_of_any_number_type(solution: Any) -> dict[str, Any]:
    """max_delta given as a Python int and as NumPy scalars, signed and unsigned: fresh deltas inside each augmenter's range."""
    s = Session(solution, ["traces", "fresh"])
    s.augmenter("int", seed=47, max_delta=1)
    s.augmenter("float64", seed=48, max_delta=np.float64(0.3))
    s.augmenter("float32", seed=49, max_delta=np.float32(0.05))
    s.augmenter("uint8", seed=50, max_delta=np.uint8(2))  # -np.uint8(2) wraps to 254
    s.augmenter("uint64", seed=46, max_delta=np.uint64(1))
    for k in range(5):
        for name in ("int", "float64", "float32", "uint8", "uint64"):
            s.call(name, SHAPE, 4700 + k)
    return s.observation()


@probe(category="counter", check="side_effects", hints=["any-shape", "counter", "retrace"])
def scalar_and_empty_batches(solution: Any) -> dict[str, Any]:
    """Rank-0 and empty batches among ordinary ones: same shape back, and every call counts, logs and draws."""
    # An empty batch shows no delta, so a same-seed augmenter on ordinary
    # batches tells whether the empty call drew one: the next calls must agree.
    s = Session(solution, ["traces", "calls", "shapes", "log", "history", "same"])
    s.augmenter("varying", seed=51)
    s.augmenter("steady", seed=51)
    shapes = [(2, 4, 4), (), (3,), (0, 4, 4), (), (0,), (2, 4, 4), ()]
    for k, shape in enumerate(shapes):
        s.call("varying", shape, 5100 + k)
        s.call("steady", SHAPE, 5200 + k)
    return s.observation(same=[["varying", "steady"]])


@probe(category="counter", check="side_effects", hints=["counter", "history", "random"], timeout=60)
def long_stream_keeps_going(solution: Any) -> dict[str, Any]:
    """A long stream, far longer than the other probes: it counts, records and logs every call and never repeats itself."""
    # Not all-pairs freshness: among 1100 float32 draws two land within 2e-7
    # by chance (the reference's do); a repeated run of three does not.
    s = Session(solution, ["traces", "calls", "history", "log", "long"])
    s.augmenter("a", seed=53)
    for k in range(1100):
        s.call("a", (2,), 5300 + k)
    return s.observation()


@probe(category="counter", check="side_effects", hints=["trace-vs-run", "counter", "random"])
def effects_are_graph_ops(solution: Any) -> dict[str, Any]:
    """The counter is a variable the traced graph updates, and the output is computed by graph ops, not a Python callback."""
    s = Session(solution, ["traces", "calls", "graph"])
    s.augmenter("a", seed=55)
    for k in range(3):
        s.call("a", SHAPE, 5500 + k)
    observation = s.observation()
    observation["graph"] = graph_report(s.augs["a"], images(5599, SHAPE))
    return observation


# ---------------------------------------------------------------- red team round 3
# New probes only (the older ones are unchanged, so the mutation record carries over). Where a probe
# reads deltas off batches of zeros, the output is the float32 delta itself, exactly: its low bits
# can be read, and a huge max_delta leaves no pixel to lose in the rounding.

ZEROS = (2,)
UNIT_DRAWS = 300
CHILD_SEEDS = (71, -72, 2**40 + 3)
CHILD_CALLS = 4
# A fresh interpreter imports TensorFlow and the solution: a few seconds unloaded.
CHILD_SECONDS = 80
CHILD_SCRIPT = r"""
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import solution
out = {}
for seed in json.loads(sys.argv[2]):
    aug = solution.Augmenter(seed, 1.0)
    out[str(seed)] = [
        float(np.asarray(aug(np.zeros((2,), np.float32)), dtype=np.float64).reshape(-1)[0]) for _ in range(int(sys.argv[3]))
    ]
with open(sys.argv[4], "w") as fh:
    json.dump(out, fh)
"""


def zero_batch_deltas(aug: Any, calls: int) -> dict[str, Any]:
    """Call ``aug`` on batches of zeros: the delta of each call read exactly, the spread and the log lines."""
    deltas: list[float | None] = []
    spreads: list[float | None] = []
    shapes_ok = True
    lines: list[str] = []
    x = np.zeros(ZEROS, np.float32)
    with captured_output(lines):
        for _ in range(calls):
            result = np.asarray(aug(x))
            shapes_ok = shapes_ok and list(result.shape) == list(ZEROS) and result.dtype == np.float32
            out = np.asarray(result, dtype=np.float64).reshape(-1)
            deltas.append(float(out[0]) if out.size and np.isfinite(out[0]) else None)
            spread = float(np.max(out) - np.min(out)) if out.size else None
            spreads.append(spread if spread is not None and np.isfinite(spread) else None)
    log = []
    for line in lines:
        match = LINE.search(line)
        if match:
            log.append([int(match.group(1)), float(match.group(2))])
    return {"deltas": deltas, "spreads": spreads, "shapes_ok": bool(shapes_ok), "log": log}


@probe(category="randomness", weight=2, check="unit_draws", hints=["random", "uniform"], timeout=60)
def draws_fine_grained_and_independent(solution: Any) -> dict[str, Any]:
    """Hundreds of draws, read exactly: float32's resolution (no float16 grid), no repeats, no cycling low bits, consecutive draws independent."""
    # max_delta powers of two: delta = max_delta * (2u - 1) is exact, so u and its bits are read back exactly.
    runs = {}
    for name, seed, bound in (("unit", 61, 1.0), ("tiny", 62, 2.0**-20)):
        aug = solution.Augmenter(seed, bound)
        runs[name] = {"max_delta": bound, **zero_batch_deltas(aug, UNIT_DRAWS)}
    return {"runs": runs}


@probe(category="randomness", check="other_process", hints=["seed"], timeout=120)
def same_stream_in_a_new_process(solution: Any) -> dict[str, Any]:
    """Same-seed augmenters in this process and in a fresh Python process with another hash seed: the same deltas."""
    here = {}
    for seed in CHILD_SEEDS:
        here[str(seed)] = zero_batch_deltas(solution.Augmenter(seed, 1.0), CHILD_CALLS)["deltas"]
    source = "".join(linecache.getlines(solution.__file__))
    if not source:
        with open(solution.__file__, encoding="utf-8") as fh:
            source = fh.read()
    salt = os.environ.get("PYTHONHASHSEED", "")
    env = dict(os.environ, PYTHONHASHSEED=str(int(salt) + 1 if salt.isdigit() else 1))
    with tempfile.TemporaryDirectory() as folder:
        with open(os.path.join(folder, "solution.py"), "w", encoding="utf-8") as fh:
            fh.write(source)
        result = os.path.join(folder, "result.json")
        try:
            done = subprocess.run(
                [sys.executable, "-c", CHILD_SCRIPT, folder, json.dumps(list(CHILD_SEEDS)), str(CHILD_CALLS), result],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                env=env, cwd=folder, timeout=CHILD_SECONDS, check=False,
            )  # fmt: skip
            if done.returncode != 0 or not os.path.exists(result):
                there: Any = f"the fresh process failed (exit status {done.returncode})"
            else:
                with open(result, encoding="utf-8") as fh:
                    there = json.load(fh)
        except subprocess.TimeoutExpired:
            there = "the fresh process did not finish"
    return {"here": here, "there": there}


@probe(category="counter", check="integer_counter", hints=["counter"])
def counter_is_an_integer_variable(solution: Any) -> dict[str, Any]:
    """aug.calls is an integer tf.Variable of 32 or 64 bits (a float32 count stops at 2**24) that counts every call."""
    aug = solution.Augmenter(63)
    calls = []
    with captured_output([]):
        for k in range(3):
            aug(images(6300 + k, SHAPE))
            calls.append(read_calls(aug))
    variable = getattr(aug, "calls", None)
    dtype = variable.dtype.name if isinstance(variable, tf.Variable) else "not a tf.Variable"
    return {"dtype": dtype, "calls": calls}


@probe(category="counter", check="one_trace", hints=["counter", "retrace"])
def one_trace_for_one_shape(solution: Any) -> dict[str, Any]:
    """Calls of one input shape trace __call__ exactly once: the variables exist before the first call (made in __init__)."""
    aug = solution.Augmenter(64)
    with captured_output([]):
        for k in range(3):
            aug(images(6400 + k, SHAPE))
    return {"traces": tracing_count(aug.__call__), "calls": read_calls(aug)}


@probe(category="randomness", check="huge_range", hints=["uniform"], timeout=60)
def max_delta_up_to_1e38(solution: Any) -> dict[str, Any]:
    """max_delta as large as the statement allows, as a float, a Python int and a NumPy scalar: finite deltas over the whole range, logged."""
    runs = {}
    for name, seed, bound in (("float", 65, 1e38), ("int", 66, 10**30), ("float32", 67, np.float32(3e37))):
        aug = solution.Augmenter(seed, bound)
        runs[name] = {"max_delta": float(bound), **zero_batch_deltas(aug, 48)}
    return {"runs": runs}
