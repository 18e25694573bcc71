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

import contextlib
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from typing import Any

import numpy as np
from probekit import probe

# One log line: "batch <n>: delta=<value>", with any spacing, the value
# possibly quoted (tf.strings.format) or in scientific notation.
LINE = re.compile(r'batch\s*(\d+)\s*:\s*delta\s*=\s*"?([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)')


@contextlib.contextmanager
def captured_output(lines: list[str]) -> Iterator[None]:
    """Send file descriptors 1 and 2 (Python's and TensorFlow's output) to a file; append its lines."""
    sys.stdout.flush()
    sys.stderr.flush()
    fd, path = tempfile.mkstemp()
    saved = [os.dup(1), os.dup(2)]
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for f in (*saved, fd):
            os.close(f)
        with open(path, errors="replace") as fh:
            lines.extend(fh.read().splitlines())
        os.unlink(path)


def images(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    """float32 pixels in [0.2, 0.8], far from any clipping."""
    return np.random.default_rng(seed).uniform(0.2, 0.8, size=shape).astype(np.float32)


def tracing_count(fn: Any) -> int | str:
    count = getattr(fn, "experimental_get_tracing_count", None)
    return int(count()) if callable(count) else "not a tf.function"


def read_calls(aug: Any) -> int | str:
    try:
        return int(aug.calls)
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        return f"error: {type(exc).__name__}"


def read_history(aug: Any) -> list[float] | str:
    try:
        return [float(v) for v in np.asarray(aug.history, dtype=np.float64).reshape(-1)]
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        return f"{type(exc).__name__}: {str(exc)[:200]}"


class Session:
    """Drives augmenters in a given order and records what each call did."""

    def __init__(self, solution: Any, checks: list[str]) -> None:
        self.solution, self.checks = solution, checks
        self.augs: dict[str, Any] = {}
        self.runs: dict[str, dict[str, Any]] = {}
        self.order: list[list[Any]] = []
        self.lines: list[str] = []
        self.pairs: dict[str, list[list[str]]] = {}

    def augmenter(self, name: str, seed: int, max_delta: float | None = None) -> None:
        args = () if max_delta is None else (max_delta,)
        self.augs[name] = self.solution.Augmenter(seed, *args)
        bound = 0.1 if max_delta is None else max_delta
        self.runs[name] = {"max_delta": bound, "deltas": [], "calls": [], "means": [], "shapes": []}

    def call(self, name: str, shape: tuple[int, ...], image_seed: int) -> None:
        x = images(image_seed, shape)
        with captured_output(self.lines):
            out = np.asarray(self.augs[name](x), dtype=np.float64)
        run = self.runs[name]
        run["deltas"].append(float(np.mean(out - x)))
        run["means"].append(float(np.mean(out)))
        run["calls"].append(read_calls(self.augs[name]))
        if list(shape) not in run["shapes"]:
            run["shapes"].append(list(shape))
        self.order.append([name, len(run["deltas"])])

    def observation(self, same: list[list[str]] = (), different: list[list[str]] = ()) -> dict[str, Any]:
        runs = {}
        for name, run in self.runs.items():
            aug = self.augs[name]
            runs[name] = {
                **run,
                "shapes": len(run["shapes"]),
                "history": read_history(aug),
                "traces": tracing_count(aug.__call__),
            }
        log = []
        for line in self.lines:
            match = LINE.search(line)
            if match:
                log.append([int(match.group(1)), float(match.group(2))])
        return {
            "checks": self.checks,
            "runs": runs,
            "order": self.order,
            "log": log,
            "same": [list(p) for p in same],
            "different": [list(p) for p in different],
        }

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
