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


def _finite(v: float) -> float | None:
    """A float, or None for NaN and infinities (JSON has no NaN; an empty batch's mean is NaN)."""
    return float(v) if np.isfinite(v) else None


def read_history(aug: Any) -> list[float | None] | str:
    try:
        return [_finite(v) for v in np.asarray(aug.history, dtype=np.float64).reshape(-1)]
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        return f"{type(exc).__name__}: {str(exc)[:200]}"


PYTHON_OPS = frozenset({"EagerPyFunc", "PyFunc", "PyFuncStateless"})
# Ops that only read a resource variable; any other op given its handle may write it.
VARIABLE_READS = frozenset({"ReadVariableOp", "ResourceGather", "ResourceGatherNd", "VarIsInitializedOp", "VariableShape"})


def _read_handle(handle: Any) -> np.ndarray | None:
    """The value of the resource variable behind a captured handle, or None if its dtype is not recorded."""
    import tensorflow as tf

    data = getattr(handle, "_handle_data", None)
    kinds = list(getattr(data, "shape_and_type", []) or [])
    if not kinds:
        return None
    try:
        return np.asarray(tf.raw_ops.ReadVariableOp(resource=handle, dtype=tf.as_dtype(kinds[0].dtype)))
    except Exception:  # noqa: BLE001 - an unreadable handle is not inspected
        return None


def graph_report(aug: Any, x: np.ndarray) -> dict[str, Any]:
    """Whether the counting and the drawing are ops of the traced graph rather than Python run by a callback.

    ``counter_is_variable``: ``aug.calls`` is a ``tf.Variable``. ``counter_in_graph``:
    the traced graph (or a function it calls) writes that variable with an op
    of its own. ``output_through_python``: the returned tensor depends, through
    data edges, on a ``tf.py_function`` / ``tf.numpy_function`` op (or on a
    call of a function holding one). ``output_from_python_state``: the returned
    tensor reads a variable that no op of the graph writes (only reads), yet
    its value changes from one call to the next: Python run from the graph (a
    ``tf.py_function`` assigning it) computes what the output adds.
    """
    import tensorflow as tf

    report: dict[str, Any] = {"counter_is_variable": isinstance(getattr(aug, "calls", None), tf.Variable)}
    try:
        try:
            concrete = aug.__call__.get_concrete_function(x)
        except (TypeError, ValueError):
            concrete = aug.__call__.get_concrete_function()
        graph_def = concrete.graph.as_graph_def()
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        return {**report, "error": f"{type(exc).__name__}: {str(exc)[:200]}"}
    library = {f.signature.name: f for f in graph_def.library.function}
    memo: dict[str, bool] = {}

    def called(node: Any) -> list[str]:
        names = []
        for value in node.attr.values():
            if value.func.name:
                names.append(value.func.name)
            names.extend(f.name for f in value.list.func)
        return names

    def function_runs_python(name: str) -> bool:
        if name not in memo:
            memo[name] = False  # recursion guard
            nodes = library[name].node_def if name in library else []
            memo[name] = any(is_python(n) for n in nodes)
        return memo[name]

    def is_python(node: Any) -> bool:
        return node.op in PYTHON_OPS or any(function_runs_python(f) for f in called(node))

    nodes = {n.name: n for n in graph_def.node}
    seen: set[str] = set()
    todo = [t.op.name for t in concrete.outputs]
    through_python = False
    while todo:
        name = todo.pop()
        if name in seen or name not in nodes:
            continue
        seen.add(name)
        node = nodes[name]
        if is_python(node):
            through_python = True
            break
        todo.extend(i.split(":")[0] for i in node.input if not i.startswith("^"))
    report["output_through_python"] = through_python
    report["output_from_python_state"] = False
    if not through_python:
        externals = {internal.op.name: external for external, internal in concrete.graph.captures}
        read_only = []
        for name in sorted(seen & set(externals)):
            users = [n for n in graph_def.node if any(i.split(":")[0] == name for i in n.input if not i.startswith("^"))]
            if all(n.op in VARIABLE_READS and not is_python(n) for n in users):
                read_only.append(externals[name])
        # Python is the only thing that can change a variable the graph only reads: one more call shows it.
        before = [_read_handle(h) for h in read_only]
        if any(v is not None for v in before):
            with captured_output([]):
                aug(x)
            after = [_read_handle(h) for h in read_only]
            report["output_from_python_state"] = any(
                b is not None and (a is None or a.shape != b.shape or not np.array_equal(a, b, equal_nan=True))
                for b, a in zip(before, after, strict=True)
            )
    handle = getattr(aug.calls, "handle", None) if report["counter_is_variable"] else None
    inner = [internal.op.name for external, internal in concrete.graph.captures if external is handle]
    writes = False
    for node in graph_def.node:
        if any(i.split(":")[0] in inner for i in node.input if not i.startswith("^")):
            if not is_python(node) and (node.op.startswith("Assign") or called(node)):
                writes = True
    report["counter_in_graph"] = writes
    return report


class Session:
    """Drives augmenters in a given order and records what each call did."""

    def __init__(self, solution: Any, checks: list[str]) -> None:
        self.solution, self.checks = solution, checks
        self.augs: dict[str, Any] = {}
        self.runs: dict[str, dict[str, Any]] = {}
        self.order: list[list[Any]] = []
        self.lines: list[str] = []

    def augmenter(self, name: str, seed: int, max_delta: Any = None) -> None:
        args = () if max_delta is None else (max_delta,)
        self.augs[name] = self.solution.Augmenter(seed, *args)
        bound = 0.1 if max_delta is None else float(max_delta)
        self.runs[name] = {
            "max_delta": bound, "deltas": [], "spreads": [], "calls": [], "means": [], "shapes": [],
            "in_shapes": [], "out_shapes": [], "out_dtypes": [],
        }

    def call(self, name: str, shape: tuple[int, ...], image_seed: int) -> None:
        x = images(image_seed, shape)
        with captured_output(self.lines):
            result = np.asarray(self.augs[name](x))
            out = np.asarray(result, dtype=np.float64)
        run = self.runs[name]
        run["in_shapes"].append(list(x.shape))
        run["out_shapes"].append(list(out.shape))
        run["out_dtypes"].append(result.dtype.name)
        added = out - x  # a wrong output shape is reported by the "shapes" check
        if added.size:
            run["deltas"].append(_finite(np.mean(added)))
            # One offset for the whole batch: what was added is the same everywhere (up to float32 rounding).
            run["spreads"].append(_finite(np.max(added) - np.min(added)))
            run["means"].append(_finite(np.mean(out)))
        else:
            # An empty batch: it still counts, logs and draws, but shows no delta and has no mean.
            run["deltas"].append(None)
            run["spreads"].append(0.0)
            run["means"].append(None)
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
