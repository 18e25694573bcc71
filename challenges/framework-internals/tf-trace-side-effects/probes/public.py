"""Public probes for tf-trace-side-effects: shown on "Run", inputs and all.

Each probe calls one or more Augmenters on float32 image batches, captures
what they print (file descriptors 1 and 2), and records for each call the
delta actually applied (recovered from the output), ``int(aug.calls)``,
the batch mean and, at the end, ``aug.history`` and the trace count. The
check (``side_effects`` in checks.py) tests properties of that record, not
the reference's random numbers: see the statement.
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


@probe(category="counter", check="side_effects", hints=["counter"])
def counter_counts_calls(solution: Any) -> dict[str, Any]:
    """Three calls on (2, 4, 4) batches: int(aug.calls) reads 1, 2, 3."""
    s = Session(solution, ["traces", "calls"])
    s.augmenter("a", seed=1)
    for k in range(3):
        s.call("a", (2, 4, 4), 10 + k)
    return s.observation()


@probe(category="log", check="side_effects", hints=["print", "history"])
def one_log_line_per_call(solution: Any) -> dict[str, Any]:
    """Three calls: three 'batch <n>: delta=<value>' lines, and a history of three batch means."""
    s = Session(solution, ["traces", "log", "history"])
    s.augmenter("a", seed=2)
    for k in range(3):
        s.call("a", (2, 4, 4), 20 + k)
    return s.observation()


@probe(category="randomness", check="side_effects", hints=["random"])
def new_delta_each_call(solution: Any) -> dict[str, Any]:
    """Four calls: four different deltas, each within [-0.1, 0.1]."""
    s = Session(solution, ["traces", "fresh"])
    s.augmenter("a", seed=3)
    for k in range(4):
        s.call("a", (2, 4, 4), 30 + k)
    return s.observation()
