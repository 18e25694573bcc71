"""WRONG: onnxruntime sessions are cached, keyed by (path, st_mtime_ns, st_size),
on the theory that a rewritten file gets a new modification time. A file
rewritten at the same path with the same size and the same mtime (a drifted
copy of the same model written within one filesystem timestamp tick, or copied
with `cp -p` / shutil.copy2 / os.utime) is measured with the stale session.
"""

from __future__ import annotations

import math
import os
import warnings
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import torch

REL_EPS = 1e-7
_SESSIONS: dict = {}


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
    st = os.stat(path)
    key = (os.path.abspath(path), st.st_mtime_ns, st.st_size)
    session = _SESSIONS.get(key)
    if session is None:
        session = _SESSIONS[key] = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
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
        max_abs = max(max_abs, _worst(diff))
        max_rel = max(max_rel, _worst(rel))
    return {"max_abs": max_abs, "max_rel": max_rel}
