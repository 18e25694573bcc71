"""A correct export; a verification that checks less than it reports.

verify() compares only the first output, runs the PyTorch model in whatever
mode it arrives in (train mode: dropout on), and divides by |r| (inf, or nan
for 0/0, where the reference is exactly 0).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import onnx
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
    _declare_outputs(model, example, path)


def _resized(t: torch.Tensor, batch: int, sequence: int) -> torch.Tensor:
    """``t`` with its rows and positions repeated cyclically to (batch, sequence, ...): a mask stays a mask."""
    return t.index_select(0, torch.arange(batch) % t.shape[0]).index_select(1, torch.arange(sequence) % t.shape[1])


SIZES = ((2, 3), (5, 7))  # two (batch, sequence) sizes, every number different


def _declare_outputs(model: torch.nn.Module, example: tuple[torch.Tensor, ...], path: str) -> None:
    """Write each output's declared shape from the model's outputs at two sizes."""
    with torch.no_grad():
        shapes = [[tuple(t.shape) for t in _flatten(model(*(_resized(t, b, s) for t in example)))] for b, s in SIZES]
    proto = onnx.load(path)
    for value, first, second in zip(proto.graph.output, *shapes, strict=True):
        dims = value.type.tensor_type.shape.dim
        del dims[:]
        for one, two in zip(first, second, strict=True):
            dim = dims.add()
            if one == two:
                dim.dim_value = one
            elif (one, two) == (SIZES[0][0], SIZES[1][0]):
                dim.dim_param = "batch"
            elif (one, two) == (SIZES[0][1], SIZES[1][1]):
                dim.dim_param = "sequence"
    onnx.save(proto, path)


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
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    got = sess.run(None, {a.name: t.numpy() for a, t in zip(sess.get_inputs(), inputs, strict=False)})[0]
    with torch.no_grad():
        out = model(*inputs)
    want = (out[0] if isinstance(out, tuple) else out).numpy()
    d = np.abs(got.astype(np.float64) - want)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = d / np.abs(want)
    return {"max_abs": float(d.max()), "max_rel": float(rel.max())}
