"""The lowering pipeline of find-drifting-stage, as the probes build it (read-only).

Every probe builds its stages with ``build_pipeline`` below and hands them to
your ``find_drifting_stage``. Import it to build a pipeline, plant a drift
in it and try your function locally:

    from given.pipeline import build_pipeline

``build_pipeline(model, example, decompositions=..., symbolics=...,
ort_config=...)`` takes the mechanisms a drift can be planted with:
entries added to the core ATen decomposition table that ``make_fx`` uses,
TorchScript-exporter symbolics registered for the export, and session
config entries for the fully optimized onnxruntime stage.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import onnx
import onnxruntime as ort
import torch
from torch import nn

# ---------------------------------------------------------------- the pipeline


class Stage(NamedTuple):
    """One stage: its name, how to run it on one input batch, and its own tolerance."""

    name: str
    run: Callable[..., tuple[np.ndarray, ...]]
    rtol: float
    atol: float


FP32_TOLERANCE = {"rtol": 1e-5, "atol": 1e-5}
FP16_TOLERANCE = {"rtol": 1e-2, "atol": 2e-3}
OPSET = 17


def flatten(out: Any) -> list[torch.Tensor]:
    if isinstance(out, torch.Tensor):
        return [out]
    return [t for item in out for t in flatten(item)]


def torch_runner(fn: Callable[..., Any]) -> Callable[..., tuple[np.ndarray, ...]]:
    def run(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
        with torch.no_grad():
            return tuple(t.numpy() for t in flatten(fn(*(torch.from_numpy(a) for a in arrays))))

    return run


def ort_runner(
    model_bytes: bytes, level: ort.GraphOptimizationLevel, config: dict[str, str] | None = None, dtype: Any = None
) -> Callable[..., tuple[np.ndarray, ...]]:
    options = ort.SessionOptions()
    options.graph_optimization_level = level
    options.log_severity_level = 3
    for key, value in (config or {}).items():
        options.add_session_config_entry(key, value)
    session = ort.InferenceSession(model_bytes, options, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]

    def run(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
        feed = {n: (a.astype(dtype) if dtype is not None else a) for n, a in zip(names, arrays, strict=True)}
        return tuple(session.run(None, feed))

    return run


def softmax_symbolic(g: Any, x: Any, dim: Any, half_to_float: Any) -> Any:
    """aten::_softmax -> ONNX Softmax (the TorchScript exporter has no symbolic for this core ATen op)."""
    from torch.onnx.symbolic_helper import _get_const

    return g.op("Softmax", x, axis_i=_get_const(dim, "i", "dim"))


def build_pipeline(
    model: nn.Module,
    example: tuple[np.ndarray, ...],
    *,
    decompositions: dict[Any, Callable[..., Any]] | None = None,
    symbolics: dict[str, Callable[..., Any]] | None = None,
    ort_config: dict[str, str] | None = None,
) -> list[Stage]:
    """eager -> fx (make_fx + core ATen decompositions) -> onnx (export of the fx graph, run unoptimized)
    -> ort (the same file, every onnxruntime optimization) ; fp16 (the onnx file in float16, unoptimized)."""
    from onnxruntime.transformers.float16 import convert_float_to_float16
    from torch._decomp import core_aten_decompositions
    from torch.fx.experimental.proxy_tensor import make_fx

    model.eval()
    ex = tuple(torch.from_numpy(a) for a in example)
    table = dict(core_aten_decompositions())
    table.update(decompositions or {})
    with torch.no_grad():
        graph_module = make_fx(model, decomposition_table=table)(*ex)

    registered = {"aten::_softmax": softmax_symbolic, **(symbolics or {})}
    for name, fn in registered.items():
        torch.onnx.register_custom_op_symbolic(name, fn, OPSET)
    buf = io.BytesIO()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(graph_module, ex, buf, dynamo=False, opset_version=OPSET)
    finally:
        for name in registered:
            torch.onnx.unregister_custom_op_symbolic(name, OPSET)
    onnx_bytes = buf.getvalue()
    fp16_bytes = convert_float_to_float16(onnx.load_from_string(onnx_bytes), keep_io_types=False).SerializeToString()

    level = ort.GraphOptimizationLevel
    return [
        Stage("eager", torch_runner(model), rtol=0.0, atol=0.0),
        Stage("fx", torch_runner(graph_module), **FP32_TOLERANCE),
        Stage("onnx", ort_runner(onnx_bytes, level.ORT_DISABLE_ALL), **FP32_TOLERANCE),
        Stage("ort", ort_runner(onnx_bytes, level.ORT_ENABLE_ALL, ort_config), **FP32_TOLERANCE),
        Stage("fp16", ort_runner(fp16_bytes, level.ORT_DISABLE_ALL, dtype=np.float16), **FP16_TOLERANCE),
    ]
