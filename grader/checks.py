"""Checks: compare an observation with its expectation, in the trusted worker.

Pure functions ``check(actual, expected, **options) -> CheckResult``. Both
sides are decoded observations (see ``sandbox/runner/codec.py``): plain
values and :class:`TaggedArray`. The message of a failed check is what a
coach and the candidate of a public probe read, so it says *where* (a path
such as ``result['grad'][2]``), *what* (shape, dtype, type, value) and *by how
much* (max abs and rel error, how many elements, the worst index, the
tolerance used). It names expected values, so a hidden probe never shows it:
the feedback policy (``grader/feedback.py``) composes that one from the
details instead, ``failure`` (which property, one of :data:`FAILURES`),
``path``, ``worst_index`` and ``error_ratio`` (the worst element's error over
what its tolerance allows).

Float rules, on purpose rather than by accident:
- Default tolerances depend on the expected dtype (:data:`DEFAULT_TOLERANCES`,
  the same spirit as ``torch.testing.assert_close``); a probe may override.
- Shapes and dtypes must match exactly; a tolerance never hides a float64
  where float32 was asked for.
- NaN matches only NaN; +inf only +inf, -inf only -inf. An element that is
  NaN or infinite on one side only is a mismatch and is reported as such.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sandbox.runner.codec import TaggedArray

# dtype -> (rtol, atol)
DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
    "float8_e4m3fn": (0.125, 1e-3),
    "float8_e5m2": (0.25, 1e-3),
    "float8_e4m3fnuz": (0.125, 1e-3),
    "float8_e5m2fnuz": (0.25, 1e-3),
}
# A Python float is a float64.
PYTHON_FLOAT_TOLERANCE = DEFAULT_TOLERANCES["float64"]


@dataclass
class CheckResult:
    passed: bool
    message: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    # Where a float tensor is wrong (grader/error_report.py): a custom check's third item, turned into a report.
    error_report: dict[str, Any] | None = None


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def _kind(value: Any) -> str:
    if isinstance(value, TaggedArray):
        return f"a {value.source} array"
    if value is None:
        return "None"
    return f"a {type(value).__name__}"


# What a failed comparison reports besides its message (``CheckResult.details``):
# ``failure`` names the property that failed, one of FAILURES, and ``path`` is
# where, as keys and indices from the top of the observation. The feedback
# policy (grader/feedback.py) composes a hidden probe's message from these
# fields alone, because the message names expected values.
FAILURES = ("type", "keys", "length", "value", "float", "nonfinite", "framework", "shape", "dtype", "elements")


class _Mismatch(Exception):
    def __init__(self, message: str, details: dict[str, Any] | None = None, *, failure: str, at: tuple[str | int, ...]) -> None:
        super().__init__(message)
        self.message = message
        self.details = {"failure": failure, "path": list(at), **(details or {})}


def check(
    actual: Any,
    expected: Any,
    *,
    mode: str = "auto",
    rtol: float | None = None,
    atol: float | None = None,
) -> CheckResult:
    """Compare recursively; ``mode`` is ``"auto"`` (tolerance for floats) or ``"exact"``."""
    if mode not in ("auto", "exact"):
        raise ValueError(f"unknown check mode {mode!r}")
    stats: dict[str, Any] = {}
    try:
        _compare(actual, expected, "result", (), mode, rtol, atol, stats)
    except _Mismatch as mismatch:
        return CheckResult(False, mismatch.message, mismatch.details)
    return CheckResult(True, "", stats)


def _compare(
    a: Any, e: Any, path: str, at: tuple[str | int, ...], mode: str, rtol: float | None, atol: float | None, stats: dict[str, Any]
) -> None:
    if isinstance(e, TaggedArray):
        if not isinstance(a, TaggedArray):
            raise _Mismatch(f"{path}: expected {_kind(e)} of dtype {e.dtype}, got {_kind(a)}", failure="type", at=at)
        _compare_arrays(a, e, path, at, mode, rtol, atol, stats)
        return
    if isinstance(e, dict):
        if not isinstance(a, dict):
            raise _Mismatch(f"{path}: expected a dict, got {_kind(a)}", failure="type", at=at)
        missing = sorted(set(e) - set(a))
        extra = sorted(set(a) - set(e))
        if missing or extra:
            parts = []
            if missing:
                parts.append("missing keys " + ", ".join(repr(k) for k in missing))
            if extra:
                parts.append("unexpected keys " + ", ".join(repr(k) for k in extra))
            raise _Mismatch(f"{path}: " + "; ".join(parts), failure="keys", at=at)
        for key in e:
            _compare(a[key], e[key], f"{path}[{key!r}]", (*at, key), mode, rtol, atol, stats)
        return
    if isinstance(e, list):
        if not isinstance(a, list):
            raise _Mismatch(f"{path}: expected a list of {len(e)}, got {_kind(a)}", failure="type", at=at)
        if len(a) != len(e):
            raise _Mismatch(f"{path}: expected {len(e)} items, got {len(a)}", failure="length", at=at)
        for i, (ai, ei) in enumerate(zip(a, e, strict=True)):
            _compare(ai, ei, f"{path}[{i}]", (*at, i), mode, rtol, atol, stats)
        return
    if isinstance(e, float) and not isinstance(e, bool):
        _compare_float(a, e, path, at, mode, rtol, atol, stats)
        return
    if isinstance(e, bool) or e is None or isinstance(e, str):
        if type(a) is not type(e) or a != e:
            raise _Mismatch(f"{path}: expected {_short(e)}, got {_short(a)}", failure="value", at=at)
        return
    if isinstance(e, int):
        # An int expectation is a count or an index: it must be exact; a float
        # holding the same integer value is accepted in auto mode.
        ok = (type(a) is int and a == e) or (
            mode == "auto" and isinstance(a, float) and math.isfinite(a) and a == e
        )
        if not ok:
            raise _Mismatch(f"{path}: expected {_short(e)}, got {_short(a)}", failure="value", at=at)
        return
    raise _Mismatch(f"{path}: cannot compare {_kind(e)}", failure="type", at=at)  # decode never produces other types


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _compare_float(
    a: Any, e: float, path: str, at: tuple[str | int, ...], mode: str, rtol: float | None, atol: float | None, stats: dict[str, Any]
) -> None:
    if isinstance(a, bool) or not isinstance(a, int | float):
        raise _Mismatch(f"{path}: expected the float {_fmt(e)}, got {_short(a)}", failure="type", at=at)
    a = float(a)
    if math.isnan(e) or math.isnan(a):
        if math.isnan(e) and math.isnan(a):
            return
        raise _Mismatch(f"{path}: expected {_fmt(e)}, got {_fmt(a)}" + (" (NaN)" if math.isnan(a) else ""), failure="nonfinite", at=at)
    if math.isinf(e) or math.isinf(a) or mode == "exact":
        if a != e:
            raise _Mismatch(f"{path}: expected {_fmt(e)}, got {_fmt(a)}", failure="nonfinite" if math.isinf(e) or math.isinf(a) else "value", at=at)
        return
    r, t = PYTHON_FLOAT_TOLERANCE
    r = r if rtol is None else rtol
    t = t if atol is None else atol
    err = abs(a - e)
    rel = err / abs(e) if e != 0 else (math.inf if err else 0.0)
    stats["max_abs_error"] = max(stats.get("max_abs_error", 0.0), err)
    allowed = t + r * abs(e)
    if err > allowed:
        raise _Mismatch(
            f"{path}: expected {e!r}, got {a!r} (abs error {_fmt(err)}, rel error {_fmt(rel)}; rtol={r:g}, atol={t:g})",
            {"max_abs_error": err, "max_rel_error": rel, "rtol": r, "atol": t, "error_ratio": err / allowed if allowed else math.inf},
            failure="float",
            at=at,
        )


@np.errstate(divide="ignore", invalid="ignore")  # inf - inf and 0 * inf are masked out below
def _compare_arrays(
    a: TaggedArray, e: TaggedArray, path: str, at: tuple[str | int, ...], mode: str, rtol: float | None, atol: float | None, stats: dict[str, Any]
) -> None:
    if a.source != e.source:
        raise _Mismatch(f"{path}: expected a {e.source} array, got a {a.source} array", failure="framework", at=at)
    if a.data.shape != e.data.shape:
        raise _Mismatch(
            f"{path}: shape mismatch: expected {tuple(e.data.shape)}, got {tuple(a.data.shape)}",
            {"expected_shape": list(e.data.shape), "actual_shape": list(a.data.shape)},
            failure="shape",
            at=at,
        )
    if a.dtype != e.dtype:
        raise _Mismatch(f"{path}: dtype mismatch: expected {e.dtype}, got {a.dtype}", failure="dtype", at=at)
    ad, ed = a.data, e.data
    if ad.size == 0:
        return
    is_float = np.issubdtype(ed.dtype, np.floating) or np.issubdtype(ed.dtype, np.complexfloating)
    if not is_float:
        bad = ad != ed
        if ad.dtype != ed.dtype:
            raise _Mismatch(f"{path}: dtype mismatch: expected {ed.dtype}, got {ad.dtype}", failure="dtype", at=at)
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            raise _Mismatch(
                f"{path}: {int(bad.sum())} of {ad.size} elements differ; first at {list(idx)}: "
                f"expected {ed[idx].item()!r}, got {ad[idx].item()!r}",
                {"mismatches": int(bad.sum()), "worst_index": list(idx)},
                failure="elements",
                at=at,
            )
        return
    wide = np.complex128 if np.iscomplexobj(ed) else np.float64
    av = ad.astype(wide)
    ev = ed.astype(wide)
    a_nan, e_nan = np.isnan(av), np.isnan(ev)
    a_inf, e_inf = np.isinf(av), np.isinf(ev)
    finite = ~(a_nan | e_nan | a_inf | e_inf)
    special_bad = (a_nan != e_nan) | ((a_inf | e_inf) & ~(a_nan | e_nan) & (av != ev))
    if mode == "exact":
        r, t = 0.0, 0.0
    else:
        dr, dt = DEFAULT_TOLERANCES.get(e.dtype, PYTHON_FLOAT_TOLERANCE)
        r = dr if rtol is None else rtol
        t = dt if atol is None else atol
    abs_err = np.where(finite, np.abs(av - ev), 0.0).real.astype(np.float64)
    mag = np.abs(ev).real.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel_err = np.where(finite & (mag > 0), abs_err / np.where(mag > 0, mag, 1.0), np.where(abs_err > 0, np.inf, 0.0))
    allowed = t + r * mag
    value_bad = finite & (abs_err > allowed)
    bad = special_bad | value_bad
    max_abs = float(abs_err.max())
    max_rel = float(np.where(finite, rel_err, 0.0).max())
    stats["max_abs_error"] = max(stats.get("max_abs_error", 0.0), max_abs)
    stats["max_rel_error"] = max(stats.get("max_rel_error", 0.0), max_rel)
    if not bad.any():
        return
    count = int(bad.sum())
    # The worst element: a NaN/Inf mismatch first, else the one furthest over its allowance.
    if special_bad.any():
        worst = tuple(int(i) for i in np.argwhere(special_bad)[0])
    else:
        excess = np.where(value_bad, abs_err - allowed, -np.inf)
        worst = tuple(int(i) for i in np.unravel_index(int(np.argmax(excess)), excess.shape))
    got, want = av[worst], ev[worst]
    what = ""
    if np.isnan(got) and not np.isnan(want):
        what = " (NaN where a finite value was expected)" if np.isfinite(want) else " (NaN)"
    elif np.isinf(got) and np.isfinite(want):
        what = " (infinite where a finite value was expected)"
    index = list(worst) if worst else []
    bound = float(allowed[worst])
    ratio = float(abs_err[worst]) / bound if bound > 0 else math.inf
    tolerance = "exact comparison" if mode == "exact" else f"rtol={r:g}, atol={t:g}"
    raise _Mismatch(
        f"{path}: {count} of {ad.size} elements differ; worst at index {index}: expected {_fmt_num(want)}, "
        f"got {_fmt_num(got)}{what}; over the elements finite on both sides, max abs error {_fmt(max_abs)}, "
        f"max rel error {_fmt(max_rel)} ({tolerance})",
        {
            "mismatches": count,
            "elements": int(ad.size),
            "max_abs_error": max_abs,
            "max_rel_error": max_rel,
            "worst_index": index,
            "rtol": r,
            "atol": t,
            # The worst element's error over what its tolerance allows (inf: compared exactly).
            "error_ratio": ratio,
        },
        failure="nonfinite" if special_bad[worst] else "elements",
        at=at,
    )


def _fmt_num(x: Any) -> str:
    if isinstance(x, complex | np.complexfloating):
        return f"{complex(x):.6g}"
    return _fmt(float(x))
