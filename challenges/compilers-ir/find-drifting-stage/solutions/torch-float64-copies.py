"""Correct, written differently (red team round 2): the comparison is done with torch in float64 (outputs copied
into fresh float64 tensors); the verdict is taken from the per-element test
|y - r| <= atol + rtol*|r| rather than from the ratio, and a non-finite output makes
both numbers inf."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch


def _t(a: Any) -> torch.Tensor:
    return torch.tensor(np.array(a, dtype=np.float64, copy=True), dtype=torch.float64)


def find_drifting_stage(stages: Sequence[Any], inputs: Sequence[tuple[np.ndarray, ...]]) -> dict[str, Any]:
    ref_stage = stages[0]
    refs = [[_t(o) for o in ref_stage.run(*b)] for b in inputs]
    report: dict[str, Any] = {"first": None, "errors": {}}
    for st in list(stages)[1:]:
        atol, rtol = float(st.atol), float(st.rtol)
        max_abs = torch.zeros((), dtype=torch.float64)
        ratio = torch.zeros((), dtype=torch.float64)
        finite, within = True, True
        for b, rs in zip(inputs, refs, strict=False):
            ys = st.run(*b)
            assert len(ys) == len(rs)
            for y, r in zip(ys, rs, strict=False):
                y = _t(y)
                if not bool(torch.isfinite(y).all()):
                    finite = False
                    continue
                if y.numel() == 0:
                    continue
                d = (y - r).abs()
                tol = atol + rtol * r.abs()
                max_abs = torch.maximum(max_abs, d.max())
                ratio = torch.maximum(ratio, (d / tol).max())
                within = within and bool((d <= tol).all())
        if not finite:
            report["errors"][st.name] = {"max_abs": math.inf, "ratio": math.inf}
            within = False
        else:
            report["errors"][st.name] = {"max_abs": max_abs.item(), "ratio": ratio.item()}
        if report["first"] is None and not within:
            report["first"] = st.name
    return report
