"""Error reports: where a float tensor that failed its check is wrong, small enough to store with the probe.

Place in the flow: ``grade.evaluate`` asks :func:`auto_report` for every
probe whose built-in check (``grader/checks.py``) failed on a float array,
and ``custom_checks.run_check`` asks :func:`report_from_check` when a
package's own check returned the per-element ratio of error to bound as a
third item. The report is stored on the probe (``ProbeResult.error_report``);
the result panel draws it as a heat-map and a histogram; the feedback policy
(``grader/feedback.py``) passes it whole for public probes and only its
positions and relative sizes (:func:`hidden_view`) for hidden ones.

Everything is computed here, in the trusted worker, from the decoded arrays;
what is stored is bounded whatever the tensor's size (a few KiB): numbers,
index lists and one map string.

- ``ratio`` is error / bound per element: ``|actual - expected| / (atol +
  rtol * |expected|)`` for the built-in check, whatever the custom check
  says for its own. At most 1 is within the bound.
- ``map`` down-samples the ratio to at most :data:`MAP_CELLS` x
  :data:`MAP_CELLS` cells, each the largest ratio of the block it covers.
  Rows are the leading dims flattened, columns the last dim (a 1-D tensor
  is one strip of columns). Each cell is one character of ``map.cells``
  (row-major): :data:`LEVELS`\\[k] for level ``k`` of :func:`level`, or
  ``"!"`` where an element is NaN or infinite on one side only. Level 30 is
  the bound (ratio exactly 1), so a level above 30 is out of bound.
- ``histogram`` counts elements by log10(ratio) in whole decades from
  1e-6 to 1e6, with one bin below and one above; the bound is the edge 0.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from sandbox.runner.codec import TaggedArray

log = logging.getLogger(__name__)

MAP_CELLS = 64
LEVELS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"  # 62 levels: 0 ... 61
NONFINITE = "!"
LOWEST_DECADE = -6  # level 0: ratio <= 1e-6, exact included
STEPS_PER_DECADE = 5  # level k > 0: ratio in (10^(-6 + (k-1)/5), 10^(-6 + k/5)]
BOUND_LEVEL = -LOWEST_DECADE * STEPS_PER_DECADE  # 30: the ratio 1
TOP_LEVEL = len(LEVELS) - 1  # 61: above 1e6, infinity included
HISTOGRAM_EDGES = list(range(LOWEST_DECADE, -LOWEST_DECADE + 1))  # log10(ratio); the bound is 0

# Bits of a float format for its ULP: (precision with the implicit bit, smallest normal exponent).
FLOAT_FORMATS: dict[str, tuple[int, int]] = {
    "float16": (11, -14),
    "bfloat16": (8, -126),
    "float32": (24, -126),
    "float64": (53, -1022),
    "float8_e4m3fn": (4, -6),
    "float8_e4m3fnuz": (4, -7),
    "float8_e5m2": (3, -14),
    "float8_e5m2fnuz": (3, -15),
}

# What a hidden probe's view keeps (hidden_view): positions and relative sizes, never a value.
HIDDEN_FIELDS = ("dtype", "shape", "elements", "over_bound", "nan_mismatches", "inf_mismatches", "worst_index")


def _num(x: float) -> float | None:
    """A number for the page: 4 significant digits, None when it is not finite."""
    return float(f"{x:.4g}") if math.isfinite(x) else None


def ulp(values: np.ndarray, dtype: str) -> np.ndarray:
    """The spacing of ``dtype`` at each value's magnitude (subnormal spacing near 0)."""
    precision, emin = FLOAT_FORMATS[dtype]
    magnitude = np.abs(values)
    _, exponent = np.frexp(magnitude)  # |x| = m * 2**e with m in [0.5, 1): floor(log2 |x|) = e - 1
    top = np.where(magnitude > 0, np.maximum(exponent.astype(np.int64) - 1, emin), emin)
    return np.ldexp(1.0, (top - (precision - 1)).astype(np.int32))


def level(ratio: np.ndarray) -> np.ndarray:
    """Each ratio's level 0..61 (see the module's docstring); NaN counts as infinite."""
    r = np.where(np.isnan(ratio), np.inf, ratio)
    with np.errstate(divide="ignore"):
        lg = np.log10(np.where(r > 0, r, 1.0))
    k = np.ceil((lg - LOWEST_DECADE) * STEPS_PER_DECADE)
    k = np.where(r > 0, np.clip(k, 1, TOP_LEVEL), 0)
    return k.astype(np.int8)


def _edges(size: int) -> np.ndarray:
    cells = min(size, MAP_CELLS)
    return (np.arange(cells) * size) // cells


def _map(levels: np.ndarray) -> dict[str, Any] | None:
    """The down-sampled map of per-element levels, with which original dims each axis stands for."""
    shape = levels.shape
    if levels.ndim == 0:
        return None
    if levels.ndim == 1:
        grid = levels.reshape(1, -1)
        rows = {"dims": [], "shape": [], "size": 1}
    else:
        grid = levels.reshape(-1, shape[-1])
        rows = {"dims": list(range(levels.ndim - 1)), "shape": list(shape[:-1]), "size": int(grid.shape[0])}
    cols = {"dims": [levels.ndim - 1], "shape": [int(shape[-1])], "size": int(shape[-1])}
    row_edges, col_edges = _edges(grid.shape[0]), _edges(grid.shape[1])
    cells = np.maximum.reduceat(np.maximum.reduceat(grid, row_edges, axis=0), col_edges, axis=1)
    alphabet = np.array(list(LEVELS + NONFINITE))
    rows["cells"], cols["cells"] = int(cells.shape[0]), int(cells.shape[1])
    return {"rows": rows, "cols": cols, "cells": "".join(alphabet[cells.reshape(-1)])}


def _histogram(ratio: np.ndarray, nonfinite: np.ndarray) -> dict[str, Any]:
    """Counts by decade of the ratio, bins (lo, hi] so that the bound (ratio 1) ends the last bin within it."""
    finite = ratio[~nonfinite]
    low, high = HISTOGRAM_EDGES[0], HISTOGRAM_EDGES[-1]
    inside = finite[(finite > 10.0**low) & (finite <= 10.0**high)]
    index = np.clip(np.ceil(np.log10(inside)).astype(np.int64) - low - 1, 0, len(HISTOGRAM_EDGES) - 2)
    inner = np.bincount(index, minlength=len(HISTOGRAM_EDGES) - 1)
    below = int((finite <= 10.0**low).sum())  # exact elements included
    above = int((finite > 10.0**high).sum())
    return {"edges": HISTOGRAM_EDGES, "counts": [below, *(int(c) for c in inner), above], "nonfinite": int(nonfinite.sum())}


def build(
    ratio: np.ndarray,
    *,
    dtype: str,
    actual: np.ndarray | None = None,
    truth: np.ndarray | None = None,
    abs_error: np.ndarray | None = None,
    path: Sequence[str | int] = (),
    label: str = "",
) -> dict[str, Any]:
    """The report of one tensor from its per-element ratio (and, when known, both sides or the absolute error)."""
    ratio = np.asarray(ratio, dtype=np.float64)
    shape = ratio.shape
    nan_mismatch = np.zeros(shape, dtype=bool)
    inf_mismatch = np.zeros(shape, dtype=bool)
    if actual is not None and truth is not None:
        a = np.asarray(actual, dtype=np.float64)
        t = np.asarray(truth, dtype=np.float64)
        nan_mismatch = np.isnan(a) != np.isnan(t)
        inf_mismatch = ~(np.isnan(a) | np.isnan(t)) & (np.isinf(a) | np.isinf(t)) & (a != t)
        if abs_error is None:
            with np.errstate(invalid="ignore"):
                abs_error = np.where(np.isfinite(a) & np.isfinite(t), np.abs(a - t), 0.0)
    # NaN or infinite on one side only ("!" on the map); an infinite ratio (a zero bound) is the top level.
    nonfinite = nan_mismatch | inf_mismatch | np.isnan(ratio)
    levels = np.where(nonfinite, len(LEVELS), level(np.where(nonfinite, 0.0, ratio))).astype(np.int8)
    over = nonfinite | (ratio > 1.0)
    if nonfinite.any():
        worst = np.unravel_index(int(np.argmax(nonfinite)), shape)
    else:
        worst = np.unravel_index(int(np.argmax(ratio)), shape)
    worst_ratio = math.nan if nonfinite[worst] else float(ratio[worst])
    report: dict[str, Any] = {
        "label": label[:200],
        "path": list(path),
        "dtype": dtype,
        "shape": [int(n) for n in shape],
        "elements": int(ratio.size),
        "over_bound": int(over.sum()),
        "nan_mismatches": int(nan_mismatch.sum()),
        "inf_mismatches": int(inf_mismatch.sum()),
        "worst_index": [int(i) for i in worst],
        "worst_ratio": _num(worst_ratio),
        "max_abs_error": None,
        "max_rel_error": None,
        "max_ulp_error": None,
        "map": _map(levels),
        "histogram": _histogram(ratio, nonfinite),
    }
    if abs_error is not None:
        err = np.where(nonfinite, 0.0, np.asarray(abs_error, dtype=np.float64))
        err = np.where(np.isfinite(err), err, 0.0)
        report["max_abs_error"] = _num(float(err.max()))
        if truth is not None:
            mag = np.abs(np.where(nonfinite, 0.0, np.asarray(truth, dtype=np.float64)))
            mag = np.where(np.isfinite(mag), mag, 0.0)
            with np.errstate(divide="ignore", invalid="ignore"):
                rel = np.where(mag > 0, err / np.where(mag > 0, mag, 1.0), np.where(err > 0, np.inf, 0.0))
            report["max_rel_error"] = _num(float(rel.max()))
            if dtype in FLOAT_FORMATS:
                with np.errstate(over="ignore"):  # float64 near 0: an error over 2**-1074 is beyond counting
                    report["max_ulp_error"] = _num(float((err / ulp(mag, dtype)).max()))
    report["summary"] = summary(report)
    return report


def _g(x: float | None) -> str:
    return "not finite" if x is None else f"{x:.3g}"


def summary(report: Mapping[str, Any]) -> str:
    """One line for a coach and a public probe (it names error values, so never for a hidden one)."""
    shape = "(" + ", ".join(str(n) for n in report["shape"]) + ")"
    parts = [f"{report['dtype']} {shape}: {report['over_bound']} of {report['elements']} elements over their bound"]
    if report.get("max_abs_error") is not None:
        errors = f"max abs error {_g(report['max_abs_error'])}"
        if report.get("max_rel_error") is not None:
            errors += f", max rel error {_g(report.get('max_rel_error'))}"
        if report.get("max_ulp_error") is not None:
            errors += f" ({_g(report['max_ulp_error'])} ULP of {report['dtype']})"
        parts.append(errors)
    worst = f"worst at {report['worst_index']}"
    if report.get("worst_ratio") is not None:
        worst += f", {_g(report['worst_ratio'])} times its bound"
    elif report["nan_mismatches"] or report["inf_mismatches"]:
        worst += ", NaN or infinite where the other side is not"
    else:
        worst += ", any error is over a zero bound"
    parts.append(worst)
    if report["nan_mismatches"] or report["inf_mismatches"]:
        parts.append(f"{report['nan_mismatches']} NaN and {report['inf_mismatches']} Inf mismatches")
    return "; ".join(parts)


# ---------------------------------------------------------------- where a report comes from


def _at(value: Any, path: Sequence[Any]) -> Any:
    for step in path:
        if isinstance(value, dict) and isinstance(step, str):
            value = value.get(step)
        elif isinstance(value, list) and isinstance(step, int) and 0 <= step < len(value):
            value = value[step]
        else:
            return None
    return value


def _real_float(arr: Any) -> bool:
    return isinstance(arr, TaggedArray) and np.issubdtype(arr.data.dtype, np.floating) and arr.data.size > 0


def auto_report(actual: Any, expected: Any, details: Mapping[str, Any], *, rtol: float, atol: float) -> dict[str, Any] | None:
    """The report of the array the built-in check failed on (its ``details``); None for anything but a float tensor."""
    if details.get("failure") not in ("elements", "nonfinite") or not isinstance(details.get("path"), list):
        return None
    a, e = _at(actual, details["path"]), _at(expected, details["path"])
    if not (_real_float(a) and _real_float(e)) or a.data.shape != e.data.shape:
        return None
    av, ev = a.data.astype(np.float64), e.data.astype(np.float64)
    finite = np.isfinite(av) & np.isfinite(ev)
    with np.errstate(invalid="ignore"):
        err = np.where(finite, np.abs(av - ev), 0.0)
    bound = atol + rtol * np.abs(np.where(finite, ev, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(bound > 0, err / np.where(bound > 0, bound, 1.0), np.where(err > 0, np.inf, 0.0))
    same_special = ~finite & ((av == ev) | (np.isnan(av) & np.isnan(ev)))
    ratio = np.where(finite | same_special, ratio, np.inf)
    return build(ratio, dtype=e.dtype, actual=av, truth=ev, abs_error=err, path=details["path"])


def report_from_check(extra: Any, actual: Any) -> dict[str, Any] | None:
    """A custom check's third item as a report: ``{"ratio": array, "abs_error"?, "truth"?, "actual"?, "dtype"?, "label"?}``.

    ``ratio`` is the check's own error over bound per element. Without
    ``actual``, the arrays must be of the observation's shape; ``dtype``
    defaults to the ratio's. A third item that is not such a dict is ignored
    (the check's verdict stands either way).
    """
    if not isinstance(extra, Mapping) or "ratio" not in extra:
        return None
    ratio = np.asarray(_plain(extra["ratio"]), dtype=np.float64)
    if ratio.size == 0:
        return None
    arrays = {}
    for key in ("abs_error", "truth", "actual"):
        if extra.get(key) is not None:
            arr = np.asarray(_plain(extra[key]), dtype=np.float64)
            if arr.shape != ratio.shape:
                raise ValueError(f"the check's {key} has shape {arr.shape}, its ratio {ratio.shape}")
            arrays[key] = arr
    dtype = str(extra.get("dtype") or ratio.dtype)
    return build(
        ratio,
        dtype=dtype,
        actual=arrays.get("actual"),
        truth=arrays.get("truth"),
        abs_error=arrays.get("abs_error"),
        label=str(extra.get("label") or ""),
    )


def _plain(value: Any) -> Any:
    return value.data if isinstance(value, TaggedArray) else value


# ---------------------------------------------------------------- the hidden view


def _coarse(char: str) -> str:
    """A hidden map's level: the top of its decade, everything at most 1e-3 of the bound as one, above 1e4 as one."""
    if char not in LEVELS:
        return NONFINITE
    k = LEVELS.index(char)
    floor, ceiling = BOUND_LEVEL - 3 * STEPS_PER_DECADE, BOUND_LEVEL + 4 * STEPS_PER_DECADE
    if k <= floor:
        return LEVELS[floor]
    if k > ceiling:
        return LEVELS[TOP_LEVEL]
    return LEVELS[-(-k // STEPS_PER_DECADE) * STEPS_PER_DECADE]


_COARSE = str.maketrans({c: _coarse(c) for c in LEVELS + NONFINITE})


def hidden_view(report: Any) -> dict[str, Any] | None:
    """What a hidden probe's candidate sees of a report: positions and relative sizes, never a value.

    The map (re-quantized to whole decades of error/bound), the histogram's
    counts, the worst index, the counts of elements over the bound and of
    NaN/Inf mismatches, shape and dtype (the candidate's own output's).
    Never an error value, a truth, the check's label or the summary line.
    Every field is rebuilt from its type, so nothing else stored can pass.
    """
    if not isinstance(report, Mapping):
        return None
    view: dict[str, Any] = {"hidden": True}
    for name in HIDDEN_FIELDS:
        value = report.get(name)
        if name == "dtype":
            view[name] = value if isinstance(value, str) and value in FLOAT_FORMATS else None
        elif name in ("shape", "worst_index"):
            view[name] = _ints(value)
        else:
            view[name] = value if isinstance(value, int) and not isinstance(value, bool) else None
    grid = report.get("map")
    view["map"] = None
    if isinstance(grid, Mapping) and isinstance(grid.get("cells"), str):
        axes: dict[str, dict[str, Any]] = {}
        for axis in ("rows", "cols"):
            given = grid.get(axis)
            spec: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
            axes[axis] = {key: _ints(spec.get(key)) for key in ("dims", "shape")}
            axes[axis].update({key: spec.get(key) if isinstance(spec.get(key), int) else 0 for key in ("size", "cells")})
        cells = grid["cells"][: MAP_CELLS * MAP_CELLS]
        if set(cells) <= set(LEVELS + NONFINITE):
            view["map"] = {**axes, "cells": cells.translate(_COARSE)}
    histogram = report.get("histogram")
    view["histogram"] = None
    if isinstance(histogram, Mapping):
        view["histogram"] = {
            "edges": HISTOGRAM_EDGES,
            "counts": _ints(histogram.get("counts"), limit=len(HISTOGRAM_EDGES) + 1),
            "nonfinite": histogram.get("nonfinite") if isinstance(histogram.get("nonfinite"), int) else 0,
        }
    return view


def _ints(value: Any, limit: int = 16) -> list[int]:
    if not isinstance(value, list) or len(value) > limit:
        return []
    return [int(v) for v in value if isinstance(v, int) and not isinstance(v, bool)]
