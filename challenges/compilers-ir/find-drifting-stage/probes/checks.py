"""Custom checks for find-drifting-stage, run in the trusted worker.

A probe's observation is the candidate's report, ``{"first": name or None,
"errors": {stage: {"max_abs": x, "ratio": q}}}``, or a string saying what was
wrong with it. The expected observation is the reference's report on the
same pipeline and inputs (both are deterministic).

- ``first_stage_matches``: only ``first`` is compared.
- ``report_matches``: ``first`` and every stage's ``max_abs`` and ``ratio``,
  to a relative 1e-4 (float32 arithmetic in the candidate's code is fine);
  an infinite expected value must be reported as infinite.
"""

from __future__ import annotations

import math
from typing import Any

REL = 1e-4
ABS = 1e-12


def _close(got: float, want: float) -> bool:
    if math.isinf(want) or math.isinf(got):
        return got == want
    if math.isnan(got):
        return False
    return abs(got - want) <= REL * abs(want) + ABS


def _fmt(errors: dict[str, Any]) -> str:
    parts = []
    for name, e in errors.items():
        if isinstance(e, dict):
            parts.append(f"{name}: ratio {e.get('ratio', float('nan')):.3g}")
    return ", ".join(parts)


def first_stage_matches(actual: Any, expected: Any) -> tuple[bool, str]:
    if isinstance(actual, str):
        return False, actual
    want, got = expected["first"], actual.get("first")
    if got != want:
        return False, f"the first stage out of tolerance is {want!r}; you named {got!r} (your report: {_fmt(actual['errors'])})"
    return True, f"first drifting stage {want!r}"


def report_matches(actual: Any, expected: Any) -> tuple[bool, str]:
    if isinstance(actual, str):
        return False, actual
    ok, message = first_stage_matches(actual, expected)
    if not ok:
        return ok, message
    want, got = expected["errors"], actual["errors"]
    if sorted(got) != sorted(want):
        return False, f"errors must have one entry per stage after the first, {sorted(want)}; yours has {sorted(got)}"
    for name in want:
        for key in ("max_abs", "ratio"):
            if not _close(got[name][key], want[name][key]):
                return False, f"errors[{name!r}][{key!r}] = {got[name][key]:.6g}, expected {want[name][key]:.6g}"
    return True, "first stage and every stage's max_abs and ratio as expected"
