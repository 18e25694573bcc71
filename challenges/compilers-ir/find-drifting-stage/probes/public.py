"""Public probes for find-drifting-stage: shown on "Run", observations and all.

Each probe builds a real five-stage lowering pipeline for a small model
(eager -> fx -> onnx -> ort, and fp16 from the onnx stage; see
``build_pipeline`` in given/pipeline.py), sometimes with one stage broken by a real mechanism
(a decomposition, an export symbolic, an onnxruntime rewrite), calls your
``find_drifting_stage(stages, inputs)`` and returns your report. The hidden
probes use the same pipeline with other models, inputs and drifts.
"""

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from given.pipeline import Stage, build_pipeline
from probe_common import gelu_tanh
from probekit import probe
from torch import nn

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
