"""A correct export; a verification that keeps only the last output's errors.

The loop over the outputs assigns max_abs and max_rel instead of taking the
maximum with what came before: the last output overwrites the others. Right
for single-output models, and whenever the last output drifts most; a drift
in any earlier output is reported as the last output's (tiny) error.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import onnxruntime as ort
import torch

REL_EPS = 1e-7


def export(model: torch.nn.Module, example: tuple[torch.Tensor, ...], path: str) -> None:
    model.eval()
    names = [f"input_{i}" for i in range(len(example))]
    axes = {name: {0: "batch", 1: "sequence"} for name in names}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model,
            tuple(example),
            path,
            dynamo=False,
            opset_version=20,
            input_names=names,
            dynamic_axes=axes,
        )


def _flatten(out: Any) -> list[torch.Tensor]:
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        return [t for item in out for t in _flatten(item)]
    raise TypeError(f"unsupported output type {type(out).__name__}")


def _worst(errors: np.ndarray) -> float:
    """The largest error; NaN (a NaN output) counts as infinitely wrong."""
    worst = float(np.max(errors, initial=0.0))
    return math.inf if math.isnan(worst) else worst


def verify(model: torch.nn.Module, path: str, inputs: tuple[torch.Tensor, ...]) -> dict[str, float]:
    model.eval()
    with torch.no_grad():
        expected = [t.detach().numpy() for t in _flatten(model(*inputs))]
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    feed = {arg.name: t.detach().numpy() for arg, t in zip(session.get_inputs(), inputs, strict=True)}
    actual = session.run(None, feed)
    if len(actual) != len(expected):
        raise ValueError(f"the ONNX graph has {len(actual)} outputs, the model {len(expected)}")
    max_abs = max_rel = 0.0
    for got, want in zip(actual, expected, strict=True):
        if got.shape != want.shape:
            raise ValueError(f"output shape {got.shape} != {want.shape}")
        diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
        rel = diff / (np.abs(want.astype(np.float64)) + REL_EPS)
        max_abs = _worst(diff)
        max_rel = _worst(rel)
    return {"max_abs": max_abs, "max_rel": max_rel}
