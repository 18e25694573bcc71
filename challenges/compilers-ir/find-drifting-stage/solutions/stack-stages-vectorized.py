"""Vectorised over stages: every stage's outputs are flattened into one row of a (stages, elements) matrix."""

import math

import numpy as np


def _row(stage, inputs):
    return np.concatenate([np.asarray(o, dtype=np.float64).reshape(-1) for b in inputs for o in stage.run(*b)])


def find_drifting_stage(stages, inputs):
    stages = list(stages)
    r = _row(stages[0], inputs)
    rest = stages[1:]
    Y = np.stack([_row(s, inputs) for s in rest])  # (stages, elements)
    atol = np.array([s.atol for s in rest])[:, None]
    rtol = np.array([s.rtol for s in rest])[:, None]
    finite = np.isfinite(Y).all(axis=1)
    D = np.abs(Y - r)
    max_abs = D.max(axis=1, initial=0.0)
    ratio = (D / (atol + rtol * np.abs(r))).max(axis=1, initial=0.0)
    max_abs[~finite] = math.inf
    ratio[~finite] = math.inf
    errors = {s.name: {"max_abs": float(a), "ratio": float(q)} for s, a, q in zip(rest, max_abs, ratio, strict=False)}
    out = np.flatnonzero(ratio > 1)
    return {"first": rest[out[0]].name if out.size else None, "errors": errors}
