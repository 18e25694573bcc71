"""verify returns one module-level report dict, reset and refilled by every call.

A report kept from an earlier call reads the latest call's numbers.
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
_REPORT: dict[str, float] = {"max_abs": 0.0, "max_rel": 0.0}


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
    model.eval()
    with torch.no_grad():
        expected = [t.detach().numpy() for t in _flatten(model(*inputs))]
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    feed = {arg.name: t.detach().numpy() for arg, t in zip(session.get_inputs(), inputs, strict=True)}
    actual = session.run(None, feed)
    if len(actual) != len(expected):
        raise ValueError(f"the ONNX graph has {len(actual)} outputs, the model {len(expected)}")
    _REPORT["max_abs"] = _REPORT["max_rel"] = 0.0
    for got, want in zip(actual, expected, strict=True):
        if got.shape != want.shape:
            raise ValueError(f"output shape {got.shape} != {want.shape}")
        diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
        rel = diff / (np.abs(want.astype(np.float64)) + REL_EPS)
        _REPORT["max_abs"] = max(_REPORT["max_abs"], _worst(diff))
        _REPORT["max_rel"] = max(_REPORT["max_rel"], _worst(rel))
    return _REPORT
