"""What the public and hidden probes of tf-trace-side-effects share, imported by both as ``probe_common``."""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from typing import Any

import numpy as np

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

    def augmenter(self, name: str, seed: int, max_delta: float | None = None) -> None:
        args = () if max_delta is None else (max_delta,)
        self.augs[name] = self.solution.Augmenter(seed, *args)
        bound = 0.1 if max_delta is None else max_delta
        self.runs[name] = {"max_delta": bound, "deltas": [], "spreads": [], "calls": [], "means": [], "shapes": []}

    def call(self, name: str, shape: tuple[int, ...], image_seed: int) -> None:
        x = images(image_seed, shape)
        with captured_output(self.lines):
            out = np.asarray(self.augs[name](x), dtype=np.float64)
        run = self.runs[name]
        added = out - x
        run["deltas"].append(float(np.mean(added)))
        # One offset for the whole batch: what was added is the same everywhere (up to float32 rounding).
        run["spreads"].append(float(np.max(added) - np.min(added)))
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
