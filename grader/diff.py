"""Structured diffs: where a public probe's result differs from the expected one, for the candidate's page.

Place in the flow: ``grade.evaluate`` calls :func:`structured_diff` for every
public probe (Run) that failed with an observation, and
:func:`expected_summary` for one that raised, and stores the answer on the
probe (``ProbeResult.diff``). Both sides are decoded observations, so arrays
still hold every element here; the page's JSON holds values only for small
arrays (``codec.to_jsonable``). The feedback policy passes ``diff`` to the
candidate for public probes only: it names expected values, which a public
probe may show and a hidden one never does.

The answer is small whatever the observation's size: a type line for each
side (kind, dtype, shape first), then a tree in which runs of equal entries
are collapsed into a count and only differing entries are spelled out, at
most :data:`MAX_DIFFERENCES` of them; for an array the first
:data:`MAX_INDICES` mismatching indices with both values and the tolerance
used. Every value is already text (at most :data:`VALUE_CHARS` characters),
so the page inserts it as it is.

Equality follows the probe's check (``grader/checks.py``): its mode, its
tolerances or the dtype's defaults. A probe with a custom check is diffed
with the default tolerances and says so, since its check may accept a result
that differs from the reference's.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from grader.checks import DEFAULT_TOLERANCES, PYTHON_FLOAT_TOLERANCE, check
from sandbox.runner.codec import TaggedArray

MAX_DIFFERENCES = 24  # differing entries spelled out in one diff
MAX_INDICES = 8  # mismatching indices listed for one array
VALUE_CHARS = 80
PREVIEW_ELEMENTS = 8  # values of an array shown in a one-line preview


# ---------------------------------------------------------------- text


def _cut(text: str, limit: int = VALUE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _number(x: Any) -> str:
    """A number as text: shortest round-trip for its own dtype (a float32 stays ``0.1``)."""
    if isinstance(x, np.generic):
        return str(x)
    if isinstance(x, float):
        return repr(x)
    return str(x)


def _label(step: str | int) -> str:
    return f"[{step}]" if isinstance(step, int) else f"[{_cut(repr(step), 40)}]"


def _shape(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


def describe(value: Any) -> str:
    """What a value is, before what it holds: ``numpy float32 array, shape (4,)``, ``dict of 3 keys``, ``float 0.5``."""
    if isinstance(value, TaggedArray):
        return f"{value.source} {value.dtype} array, shape {_shape(value.data.shape)}"
    if isinstance(value, dict):
        return f"dict of {len(value)} key{'s' if len(value) != 1 else ''}"
    if isinstance(value, list):
        return f"list of {len(value)} item{'s' if len(value) != 1 else ''}"
    if value is None:
        return "None"
    return _cut(f"{type(value).__name__} {_leaf(value)}")


def _leaf(value: Any) -> str:
    if isinstance(value, str):
        return _cut(repr(value))
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int | float):
        return _cut(_number(value))
    return _cut(describe(value))


def preview(value: Any, limit: int = 600) -> str:
    """A bounded one-line picture of a whole value: small lists and arrays in full, large ones by their first values."""
    out: list[str] = []
    size = 0

    def add(text: str) -> bool:
        nonlocal size
        out.append(text)
        size += len(text)
        return size < limit

    def walk(v: Any) -> bool:
        if isinstance(v, TaggedArray):
            flat = v.data.reshape(-1)
            shown = ", ".join(_number(x) for x in flat[:PREVIEW_ELEMENTS])
            more = f", … {flat.size - PREVIEW_ELEMENTS} more" if flat.size > PREVIEW_ELEMENTS else ""
            return add(f"{v.dtype} array {_shape(v.data.shape)} [{shown}{more}]")
        if isinstance(v, dict):
            if not add("{"):
                return False
            for i, (k, x) in enumerate(v.items()):
                if (i and not add(", ")) or not add(f"{_cut(repr(k), 40)}: ") or not walk(x):
                    return False
            return add("}")
        if isinstance(v, list):
            if not add("["):
                return False
            for i, x in enumerate(v):
                if (i and not add(", ")) or not walk(x):
                    return False
            return add("]")
        return add(_leaf(v))

    complete = walk(value)
    text = "".join(out)
    return text if complete and len(text) <= limit else text[: limit - 1] + "…"


# ---------------------------------------------------------------- the diff


class _Budget:
    """How many differing entries may still be spelled out, and how many were left out."""

    def __init__(self, limit: int) -> None:
        self.left = limit
        self.shown = 0
        self.omitted = 0

    def take(self) -> bool:
        if self.left <= 0:
            self.omitted += 1
            return False
        self.left -= 1
        self.shown += 1
        return True


def structured_diff(actual: Any, expected: Any, *, check_mode: str = "auto", rtol: float | None = None, atol: float | None = None) -> dict[str, Any]:
    """The candidate's result against the expected one, bounded in size (see the module docstring).

    ``check_mode`` is the probe's check: ``auto`` or ``exact`` compare as that
    check does; any other name is a custom check, diffed with the defaults.
    """
    custom = check_mode not in ("auto", "exact")
    mode = "auto" if custom else check_mode
    budget = _Budget(MAX_DIFFERENCES)
    tree = _node(actual, expected, "result", "result", mode, rtol, atol, budget)
    return {
        "received": describe(actual),
        "expected": describe(expected),
        "tree": tree,
        "equal": tree["equal"],
        "shown": budget.shown,
        "omitted": budget.omitted,
        "custom_check": custom,
    }


def expected_summary(expected: Any) -> dict[str, Any]:
    """For a public probe that returned nothing (it raised, crashed, timed out): the expected value, to read beside the error."""
    return {"received": None, "expected": describe(expected), "expected_preview": preview(expected), "tree": None}


def _equal_leaf(a: Any, e: Any, mode: str, rtol: float | None, atol: float | None) -> bool:
    return check(a, e, mode=mode, rtol=rtol, atol=atol).passed


def _node(a: Any, e: Any, label: str, path: str, mode: str, rtol: float | None, atol: float | None, budget: _Budget) -> dict[str, Any]:
    node: dict[str, Any] = {"label": label, "path": path, "equal": True}
    if isinstance(e, dict) and isinstance(a, dict):
        missing = [k for k in e if k not in a]
        extra = [k for k in a if k not in e]
        steps: list[str | int] = [k for k in e if k in a]
        children = [(_label(k), a[k], e[k], k) for k in steps]
        notes = []
        if missing:
            notes.append("missing keys " + ", ".join(_cut(repr(k), 40) for k in missing[:MAX_INDICES]) + (" …" if len(missing) > MAX_INDICES else ""))
        if extra:
            notes.append("unexpected keys " + ", ".join(_cut(repr(k), 40) for k in extra[:MAX_INDICES]) + (" …" if len(extra) > MAX_INDICES else ""))
        return _container(node, children, "; ".join(notes), a, e, path, mode, rtol, atol, budget)
    if isinstance(e, list) and isinstance(a, list):
        n = min(len(a), len(e))
        children = [(f"[{i}]", a[i], e[i], i) for i in range(n)]
        note = f"{len(a)} items where {len(e)} are expected" if len(a) != len(e) else ""
        return _container(node, children, note, a, e, path, mode, rtol, atol, budget)
    if isinstance(e, TaggedArray) and isinstance(a, TaggedArray):
        return _array(node, a, e, mode, rtol, atol, budget)
    if _same_kind(a, e) and not isinstance(e, dict | list | TaggedArray) and _equal_leaf(a, e, mode, rtol, atol):
        return node
    node["equal"] = False
    if budget.take():
        node.update(received=_leaf(a) if _is_leaf(a) else describe(a), expected=_leaf(e) if _is_leaf(e) else describe(e))
        if not _same_kind(a, e):
            node["note"] = f"{_kind(a)} where {_kind(e)} is expected"
    else:
        node["omitted"] = True
    return node


def _is_leaf(v: Any) -> bool:
    return not isinstance(v, dict | list | TaggedArray)


def _kind(v: Any) -> str:
    if isinstance(v, TaggedArray):
        return f"a {v.source} array"
    if v is None:
        return "None"
    return {"dict": "a dict", "list": "a list", "int": "an int"}.get(type(v).__name__, f"a {type(v).__name__}")


def _same_kind(a: Any, e: Any) -> bool:
    numbers = (int, float)
    if isinstance(a, bool) or isinstance(e, bool):
        return type(a) is type(e)
    if isinstance(a, numbers) and isinstance(e, numbers):
        return True
    return type(a) is type(e)


def _container(
    node: dict[str, Any], children: list[tuple[str, Any, Any, str | int]], note: str, a: Any, e: Any, path: str,
    mode: str, rtol: float | None, atol: float | None, budget: _Budget,
) -> dict[str, Any]:  # fmt: skip
    """A dict or list: its differing children spelled out, each run of equal ones collapsed into a count."""
    node["received"], node["expected"] = describe(a), describe(e)
    entries: list[dict[str, Any]] = []
    run: list[str] = []

    def close_run() -> None:
        if run:
            entries.append({"collapsed": len(run), "first": run[0], "last": run[-1]})
            run.clear()

    for label, ai, ei, step in children:
        child = _node(ai, ei, label, path + _label(step), mode, rtol, atol, budget)
        if child["equal"]:
            run.append(label)
            continue
        close_run()
        if child.get("omitted") and entries and entries[-1].get("omitted"):
            entries[-1]["omitted"] += 1
        elif child.get("omitted"):
            entries.append({"omitted": 1})
        else:
            entries.append(child)
    close_run()
    if note:
        node["note"] = note
        budget.take()
    node["equal"] = not note and all("collapsed" in entry for entry in entries)
    node["children"] = entries
    return node


@np.errstate(divide="ignore", invalid="ignore", over="ignore")
def _array(
    node: dict[str, Any], a: TaggedArray, e: TaggedArray, mode: str, rtol: float | None, atol: float | None, budget: _Budget
) -> dict[str, Any]:
    """An array: shape and dtype first; then how many elements differ and the first few, with both values."""
    node["received"], node["expected"] = describe(a), describe(e)
    outcome = check(a, e, mode=mode, rtol=rtol, atol=atol)
    if outcome.passed:
        return node
    node["equal"] = False
    failure = outcome.details.get("failure")
    if not budget.take():
        node["omitted"] = True
        return node
    node["failure"] = failure
    if failure in ("framework", "shape", "dtype"):
        node["note"] = {"framework": "another framework", "shape": "another shape", "dtype": "another dtype"}[failure] + " than expected"
        return node
    ad, ed = a.data, e.data
    if np.issubdtype(ed.dtype, np.floating) or np.issubdtype(ed.dtype, np.complexfloating):
        bad, r, t = _float_mismatches(ad, ed, e.dtype, mode, rtol, atol)
        node["tolerance"] = "exact comparison" if mode == "exact" else f"rtol={r:g}, atol={t:g}"
        for key in ("max_abs_error", "max_rel_error"):
            if isinstance(outcome.details.get(key), int | float):
                node[key] = float(outcome.details[key]) if math.isfinite(outcome.details[key]) else str(outcome.details[key])
    else:
        bad = ad != ed
        node["tolerance"] = "exact comparison"
    count = int(bad.sum())
    node["mismatches"] = count
    node["elements"] = int(ed.size)
    # The first mismatches in row-major order, each with the run of equal elements before it.
    flat = np.flatnonzero(bad.reshape(-1))[:MAX_INDICES]
    node["first"] = []
    previous = -1
    for position in flat:
        index = tuple(int(i) for i in np.unravel_index(int(position), bad.shape))
        node["first"].append(
            {"index": list(index), "received": _number(ad[index]), "expected": _number(ed[index]), "equal_before": int(position) - previous - 1}
        )
        previous = int(position)
    if count == len(flat):
        node["equal_after"] = int(ed.size) - previous - 1
    if isinstance(outcome.details.get("worst_index"), list):
        worst = tuple(outcome.details["worst_index"])
        node["worst"] = {"index": list(worst), "received": _number(ad[worst]), "expected": _number(ed[worst])}
    return node


def _float_mismatches(
    ad: np.ndarray, ed: np.ndarray, dtype: str, mode: str, rtol: float | None, atol: float | None
) -> tuple[np.ndarray, float, float]:
    """The elements ``checks._compare_arrays`` counts as wrong (same rules: NaN matches NaN, infinities exactly), and its tolerance."""
    if mode == "exact":
        r, t = 0.0, 0.0
    else:
        dr, dt = DEFAULT_TOLERANCES.get(dtype, PYTHON_FLOAT_TOLERANCE)
        r = dr if rtol is None else rtol
        t = dt if atol is None else atol
    wide = np.complex128 if np.iscomplexobj(ed) else np.float64
    av, ev = ad.astype(wide), ed.astype(wide)
    a_nan, e_nan = np.isnan(av), np.isnan(ev)
    a_inf, e_inf = np.isinf(av), np.isinf(ev)
    finite = ~(a_nan | e_nan | a_inf | e_inf)
    special = (a_nan != e_nan) | ((a_inf | e_inf) & ~(a_nan | e_nan) & (av != ev))
    abs_err = np.where(finite, np.abs(av - ev), 0.0).real.astype(np.float64)
    allowed = t + r * np.abs(ev).real.astype(np.float64)
    return special | (finite & (abs_err > allowed)), r, t
