"""Public probes for find-drifting-stage: shown on "Run", observations and all.

Each probe builds a real five-stage lowering pipeline for a small model
(eager -> fx -> onnx -> ort, and fp16 from the onnx stage; see
``build_pipeline``), sometimes with one stage broken by a real mechanism
(a decomposition, an export symbolic, an onnxruntime rewrite), calls your
``find_drifting_stage(stages, inputs)`` and returns your report. The hidden
probes use the same pipeline with other models, inputs and drifts.
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
import torch.nn.functional as F
from probekit import probe
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


# ---------------------------------------------------------------- planted drifts


def gelu_tanh(x: torch.Tensor, approximate: str = "none") -> torch.Tensor:
    """A GELU decomposition that quietly uses the tanh approximation."""
    return 0.5 * x * (1 + torch.tanh(0.7978845608028654 * (x + 0.044715 * x**3)))


ATEN = torch.ops.aten
FX_GELU = {"decompositions": {ATEN.gelu.default: gelu_tanh}}
ORT_GELU = {"ort_config": {"optimization.enable_gelu_approximation": "1"}}

# ---------------------------------------------------------------- models and inputs

D = 32


class MLPBlock(nn.Module):
    """LayerNorm -> Linear -> GELU -> Linear."""

    def __init__(self) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(D)
        self.fc1 = nn.Linear(D, 2 * D)
        self.fc2 = nn.Linear(2 * D, D)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.gelu(self.fc1(self.ln(x))))


def build(cls: type[nn.Module], seed: int) -> nn.Module:
    torch.manual_seed(seed)
    model = cls()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.LayerNorm):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
    return model.eval()


def batches(seed: int, *specs: tuple[float, float]) -> list[tuple[np.ndarray, ...]]:
    """One (4, 8, 32) float32 batch per (scale, offset): normal(offset, scale)."""
    rng = np.random.default_rng(seed)
    return [((rng.normal(0.0, scale, size=(4, 8, D)) + offset).astype(np.float32),) for scale, offset in specs]


PLAIN = ((1.0, 0.0), (2.5, 0.0))

# ---------------------------------------------------------------- running the candidate


def observe(solution: Any, stages: list[Stage], inputs: list[tuple[np.ndarray, ...]]) -> Any:
    """Call the candidate and return its report as plain data (or what is wrong with it)."""
    report = solution.find_drifting_stage(stages, inputs)
    if not isinstance(report, dict) or "first" not in report or "errors" not in report:
        return f"find_drifting_stage returned {type(report).__name__}, not a dict with 'first' and 'errors'"
    first = report["first"]
    if first is not None and not isinstance(first, str):
        return f"'first' is a {type(first).__name__}, not a stage name or None"
    errors = report["errors"]
    if not isinstance(errors, dict):
        return f"'errors' is a {type(errors).__name__}, not a dict"
    out: dict[str, Any] = {}
    for name, entry in errors.items():
        if not isinstance(entry, dict):
            return f"errors[{name!r}] is a {type(entry).__name__}, not a dict"
        values = {}
        for key in ("max_abs", "ratio"):
            value = entry.get(key)
            if isinstance(value, np.generic | np.ndarray | torch.Tensor) and np.size(value) == 1:
                value = float(value)
            if isinstance(value, bool) or not isinstance(value, int | float):
                return f"errors[{name!r}][{key!r}] is {value!r}, not a number"
            values[key] = float(value)
        out[str(name)] = values
    return {"first": first, "errors": out}


def case(solution: Any, cls: type[nn.Module], seed: int, specs: tuple[tuple[float, float], ...], **drift: Any) -> Any:
    inputs = batches(seed, *specs)
    stages = build_pipeline(build(cls, seed), inputs[0], **drift)
    return observe(solution, stages, inputs)


# ---------------------------------------------------------------- probes


@probe(category="report", check="report_matches", hints=["report-definition", "own-tolerance"])
def report_healthy_mlp(solution: Any) -> Any:
    """Every stage's max_abs and ratio for a healthy MLP pipeline: first is None."""
    return case(solution, MLPBlock, 1, PLAIN)


@probe(category="localise", check="first_stage_matches", hints=["compare-to-eager"])
def fx_gelu_decomposition(solution: Any) -> Any:
    """The fx stage's decomposition table maps aten.gelu to the tanh approximation: first is "fx"."""
    return case(solution, MLPBlock, 2, PLAIN, **FX_GELU)


@probe(category="localise", check="first_stage_matches", hints=["own-tolerance"])
def ort_gelu_approximation(solution: Any) -> Any:
    """The ort stage enables onnxruntime's GeluApproximation rewrite: first is "ort", fp16 stays within."""
    return case(solution, MLPBlock, 3, PLAIN, **ORT_GELU)
