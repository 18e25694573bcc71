"""Hidden probes for find-drifting-stage: they make the score.

Each probe builds a real five-stage lowering pipeline for a small model
(see ``build_pipeline`` in given/pipeline.py), sometimes with one stage broken by a real
mechanism, calls the candidate's ``find_drifting_stage(stages, inputs)`` and
returns its report. Two categories:

- ``localise``: only the stage it names as the first to drift is checked
  (``first_stage_matches``). There is a pipeline with no drift, one with
  drift at each stage, drift that only one input batch shows, drift that
  only one output shows, drift that turns outputs into NaN, and a stage
  that is out of tolerance only at the small values of an output that
  also holds large ones. One probe (``errors_exactly_at_the_tolerance``)
  builds no pipeline: its stages return exact outputs whose errors sit
  exactly on the stage's tolerance (a ratio of exactly 1, within) or past
  it by 3e-8 of it, which a tolerance computed in float32 misses.
- ``report``: the whole report is checked, the first stage and every
  stage's ``max_abs`` and ``ratio`` (``report_matches``), against the
  reference's. One of them has two inputs and two outputs, and its
  drift shows in the first output of the middle batch only.

The drift mechanisms (all real, none is added noise):

- fx: the decomposition table maps ``aten.gelu`` to the tanh approximation,
  ``aten.native_layer_norm`` to the one-pass variance ``E[x^2] - E[x]^2``
  (catastrophic cancellation once activations carry a large offset), or
  ``aten._softmax`` to ``exp(x) / sum(exp(x))`` without subtracting the
  maximum (``exp`` overflows for logits above 88.7: NaN);
- onnx: the exporter's symbolic for ``aten::gelu`` emits the tanh formula,
  or the one for ``aten::_softmax`` emits ``Exp``/``ReduceSum``/``Div``;
- ort: the session enables onnxruntime's ``GeluApproximation`` rewrite
  (``optimization.enable_gelu_approximation``), a real optimizer pass that
  turns the fused Gelu into FastGelu;
- fp16: no planted bug; float16's 11-bit significand cannot hold
  activations that carry a large common offset (its spacing is 0.03125
  at 50, 0.0625 at 100), and LayerNorm amplifies what is lost.
"""

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from given.pipeline import Stage, build_pipeline
from probe_common import gelu_tanh
from probekit import probe
from torch import nn


def layer_norm_one_pass(
    x: torch.Tensor, normalized_shape: list[int], weight: torch.Tensor, bias: torch.Tensor, eps: float
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A LayerNorm decomposition with the one-pass variance E[x^2] - E[x]^2."""
    dims = list(range(x.dim() - len(normalized_shape), x.dim()))
    mean = x.mean(dims, keepdim=True)
    var = (x * x).mean(dims, keepdim=True) - mean * mean
    rstd = torch.rsqrt(var + eps)
    return (x - mean) * rstd * weight + bias, mean, rstd


def softmax_no_max(x: torch.Tensor, dim: int, half_to_float: bool) -> torch.Tensor:
    """A softmax decomposition that skips the max subtraction."""
    e = torch.exp(x)
    return e / e.sum(dim, keepdim=True)


def gelu_tanh_symbolic(g: Any, x: Any, approximate: Any = "none") -> Any:
    """An export symbolic for aten::gelu that emits the tanh formula."""

    def c(v: float) -> Any:
        return g.op("Constant", value_t=torch.tensor(v))

    inner = g.op("Mul", c(0.7978845608028654), g.op("Add", x, g.op("Mul", c(0.044715), g.op("Pow", x, c(3.0)))))
    return g.op("Mul", g.op("Mul", c(0.5), x), g.op("Add", c(1.0), g.op("Tanh", inner)))


def softmax_no_max_symbolic(g: Any, x: Any, dim: Any, half_to_float: Any) -> Any:
    """An export symbolic for aten::_softmax as Exp / ReduceSum / Div."""
    from torch.onnx.symbolic_helper import _get_const

    axes = g.op("Constant", value_t=torch.tensor([_get_const(dim, "i", "dim")], dtype=torch.int64))
    e = g.op("Exp", x)
    return g.op("Div", e, g.op("ReduceSum", e, axes, keepdims_i=1))


ATEN = torch.ops.aten
FX_GELU = {"decompositions": {ATEN.gelu.default: gelu_tanh}}
FX_LAYER_NORM = {"decompositions": {ATEN.native_layer_norm.default: layer_norm_one_pass}}
FX_SOFTMAX = {"decompositions": {ATEN._softmax.default: softmax_no_max}}
ONNX_GELU = {"symbolics": {"aten::gelu": gelu_tanh_symbolic}}
ONNX_SOFTMAX = {"symbolics": {"aten::_softmax": softmax_no_max_symbolic}}
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


class CosineAttention(nn.Module):
    """Attention on cosine similarity with a logit scale of 100 (tied query/key projection)."""

    def __init__(self, heads: int = 2, scale: float = 100.0) -> None:
        super().__init__()
        self.heads, self.scale = heads, scale
        self.ln = nn.LayerNorm(D)
        self.qk = nn.Linear(D, D)
        self.v = nn.Linear(D, D)
        self.out = nn.Linear(D, D)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        h = self.ln(x)
        qk = F.normalize(self.qk(h).reshape(b, t, self.heads, d // self.heads).transpose(1, 2), dim=-1)
        v = self.v(h).reshape(b, t, self.heads, d // self.heads).transpose(1, 2)
        probs = (self.scale * qk @ qk.transpose(-1, -2)).softmax(dim=-1)
        return self.out((probs @ v).transpose(1, 2).reshape(b, t, d))


class TwoHeads(nn.Module):
    """Two outputs: a linear head, and a small GELU head."""

    def __init__(self) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(D)
        self.head = nn.Linear(D, D)
        self.fc = nn.Linear(D, 2 * D)
        self.aux = nn.Linear(2 * D, 8)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.ln(x)
        return self.head(h), self.aux(F.gelu(self.fc(h)))


class TokensAndContext(nn.Module):
    """Two inputs, two outputs: a LayerNorm MLP on the tokens, and a linear head on a context."""

    def __init__(self) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(D)
        self.fc1 = nn.Linear(D, 2 * D)
        self.fc2 = nn.Linear(2 * D, D)
        self.ctx = nn.Linear(D, D)

    def forward(self, x: torch.Tensor, context: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.fc2(F.gelu(self.fc1(self.ln(x)))), self.ctx(context)


class ContextResidual(nn.Module):
    """Two inputs: a LayerNorm MLP on the tokens, added to a context (a residual stream)."""

    def __init__(self) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(D)
        self.fc1 = nn.Linear(D, 2 * D)
        self.fc2 = nn.Linear(2 * D, D)

    def forward(self, x: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        return context + self.fc2(F.gelu(self.fc1(self.ln(x))))


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
OFFSET_LAST = ((1.0, 0.0), (2.5, 0.0), (1.0, 100.0))
MODERATE_OFFSET_LAST = ((1.0, 0.0), (2.5, 0.0), (1.0, 50.0))
OFFSET_MIDDLE = ((1.0, 0.0), (1.0, 100.0), (2.5, 0.0))


def paired_batches(seed: int, *specs: tuple[float, float]) -> list[tuple[np.ndarray, ...]]:
    """One (tokens, context) pair of (4, 8, 32) float32 arrays per (scale, offset) of the tokens; the context is normal(0, 1)."""
    rng = np.random.default_rng(seed)
    return [
        ((rng.normal(0.0, scale, size=(4, 8, D)) + offset).astype(np.float32), rng.normal(size=(4, 8, D)).astype(np.float32))
        for scale, offset in specs
    ]


def outlier_context_batches(seed: int, *specs: tuple[float, float]) -> list[tuple[np.ndarray, ...]]:
    """(tokens, context) pairs as in paired_batches, but two channels of the context sit near 50 (outlier features)."""
    rng = np.random.default_rng(seed)
    out = []
    for scale, offset in specs:
        x = rng.normal(0.0, scale, size=(4, 8, D)) + offset
        context = rng.normal(0.0, 1.0, size=(4, 8, D))
        context[..., :2] += 50.0
        out.append((x.astype(np.float32), context.astype(np.float32)))
    return out


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


# ---------------------------------------------------------------- localise


@probe(category="localise", weight=2, check="first_stage_matches", hints=["own-tolerance"])
def no_drift_anywhere(solution: Any) -> Any:
    """A healthy pipeline: fp16 is further off than the others, but within its own tolerance."""
    return case(solution, MLPBlock, 10, PLAIN)


@probe(category="localise", weight=2, check="first_stage_matches", hints=["compare-to-eager"])
def fx_tanh_gelu_decomposition(solution: Any) -> Any:
    """A drift planted in the fx stage; every later stage inherits it."""
    return case(solution, MLPBlock, 11, PLAIN, **FX_GELU)


@probe(category="localise", weight=2, check="first_stage_matches", hints=["nan-is-drift"])
def fx_softmax_overflow(solution: Any) -> Any:
    """Cosine attention with logit scale 100; a drift planted in the fx stage turns outputs into NaN."""
    return case(solution, CosineAttention, 12, PLAIN, **FX_SOFTMAX)


@probe(category="localise", weight=2, check="first_stage_matches", hints=["every-batch"])
def fx_layernorm_variance_last_batch(solution: Any) -> Any:
    """A drift planted in the fx stage that only the last of three batches (activations near 100) shows."""
    return case(solution, MLPBlock, 13, OFFSET_LAST, **FX_LAYER_NORM)


@probe(category="localise", weight=2, check="first_stage_matches", hints=["compare-to-eager"])
def onnx_tanh_gelu_symbolic(solution: Any) -> Any:
    """A drift planted in the onnx stage (the exporter's lowering of one op)."""
    return case(solution, MLPBlock, 14, PLAIN, **ONNX_GELU)


@probe(category="localise", weight=2, check="first_stage_matches", hints=["every-output"])
def ort_rewrite_in_second_output(solution: Any) -> Any:
    """Two outputs; a drift planted in the ort stage shows in the second output only."""
    return case(solution, TwoHeads, 15, PLAIN, **ORT_GELU)


@probe(category="localise", weight=2, check="first_stage_matches", hints=["every-batch", "own-tolerance", "report-definition"])
def fp16_offset_activations(solution: Any) -> Any:
    """A healthy pipeline, but the last batch's activations carry a large common offset."""
    # At an offset of 50 the fp16 stage is out of tolerance by a small factor,
    # at elements whose reference value is small: a verdict that compares the
    # largest error with atol + rtol * (the largest |r|) calls it within.
    return case(solution, MLPBlock, 16, MODERATE_OFFSET_LAST)


@probe(category="localise", weight=2, check="first_stage_matches", hints=["report-definition", "own-tolerance"])
def fp16_small_values_beside_large_ones(solution: Any) -> Any:
    """A healthy pipeline whose output mixes large and small values; one stage is out of tolerance at its small ones."""
    # The context adds values near 50 to two channels: there fp16 rounds the
    # output by up to 0.016, the largest absolute error of the stage but well
    # within rtol * |r|. The last batch's tokens carry an offset of 50, and what
    # the fp16 LayerNorm loses shows in the small channels, by a few of their
    # own tolerances. A verdict read at the element with the largest error, or
    # against the largest |r|, calls the stage within.
    inputs = outlier_context_batches(18, *MODERATE_OFFSET_LAST)
    stages = build_pipeline(build(ContextResidual, 18), inputs[0])
    return observe(solution, stages, inputs)




def on_the_boundary(x: np.ndarray, rtol: float, atol: float, signs: np.ndarray) -> np.ndarray:
    """x moved by exactly its tolerance, atol + rtol * |x|, where signs is +1 or -1 (0: not moved).

    The tolerances and the moved values are dyadic, so the moved values are exact in float32 and float16.
    """
    r = x.astype(np.float64)
    return r + signs * (atol + rtol * np.abs(r))


# A float32 reference value and a stage's value beside it whose error is
# above the table's float32 tolerance (rtol = atol = 1e-5) by 3e-8 of it in
# float64, and exactly on it when atol + rtol * |r| is computed in float32.
HAIR_R, HAIR_Y = np.float32(0.9907950758934021), np.float32(0.9908149838447571)


@probe(category="localise", weight=2, check="first_stage_matches", hints=["boundary", "report-definition"])
def errors_exactly_at_the_tolerance(solution: Any) -> Any:
    """Stages of the probe's own: two sit exactly on their tolerance (within), the next is out by a hair."""
    # onnx and fp16 are off by exactly atol + rtol * |r| (a ratio of exactly
    # 1: within), ort by a hair more than its tolerance, which only float64
    # resolves. A test with >= names onnx; a tolerance computed in float32
    # (a reference left in float32) calls ort within and names no stage.
    dyadic = {"rtol": 2.0**-7, "atol": 2.0**-10}
    grid = np.array([[1.5, -0.75, 2.0, 0.25], [-3.0, 0.5, 1.0, HAIR_R]], np.float32)
    inputs = [(grid,), (grid[::-1] * np.float32(0.5),)]
    signs = np.zeros(grid.shape)
    signs[0, 1], signs[1, 1] = 1.0, -1.0

    def exact(x: np.ndarray) -> tuple[np.ndarray, ...]:
        return (x.copy(),)

    def boundary(dtype: Any) -> Any:
        def run(x: np.ndarray) -> tuple[np.ndarray, ...]:
            y = on_the_boundary(x, dyadic["rtol"], dyadic["atol"], signs)
            moved = signs != 0
            assert np.array_equal(y.astype(dtype).astype(np.float64)[moved], y[moved]), "a boundary value is not exact"
            return (y.astype(dtype),)

        return run

    def hair(x: np.ndarray) -> tuple[np.ndarray, ...]:
        return (np.where(x == HAIR_R, HAIR_Y, x).astype(np.float32),)

    stages = [
        Stage("eager", exact, rtol=0.0, atol=0.0),
        Stage("fx", exact, **dyadic),
        Stage("onnx", boundary(np.float32), **dyadic),
        Stage("ort", hair, rtol=1e-5, atol=1e-5),
        Stage("fp16", boundary(np.float16), **dyadic),
    ]
    return observe(solution, stages, inputs)

# ---------------------------------------------------------------- report


@probe(category="report", weight=2, check="report_matches", hints=["report-definition", "own-tolerance"])
def report_healthy_attention(solution: Any) -> Any:
    """Every stage's max_abs and ratio for a healthy cosine-attention pipeline."""
    return case(solution, CosineAttention, 20, PLAIN)


@probe(category="report", weight=2, check="report_matches", hints=["compare-to-eager", "report-definition"])
def report_fx_drift_downstream(solution: Any) -> Any:
    """The fx stage drifts: the later stages' errors, measured against eager, carry that drift."""
    return case(solution, MLPBlock, 21, PLAIN, **FX_GELU)


@probe(category="report", weight=2, check="report_matches", hints=["nan-is-drift", "report-definition"])
def report_onnx_softmax_nan(solution: Any) -> Any:
    """The onnx stage's softmax overflows: NaN outputs from there on, reported as infinite errors."""
    return case(solution, CosineAttention, 22, PLAIN, **ONNX_SOFTMAX)


@probe(category="report", weight=2, check="report_matches", hints=["own-tolerance", "report-definition"])
def report_ort_drift_fp16_clean(solution: Any) -> Any:
    """The ort stage drifts; the fp16 stage is built from the onnx stage and stays within its tolerance."""
    return case(solution, MLPBlock, 23, PLAIN, **ORT_GELU)


@probe(category="report", weight=2, check="report_matches", hints=["every-output", "every-batch", "report-definition"])
def report_two_inputs_one_output_one_batch(solution: Any) -> Any:
    """Two inputs and two outputs; the drift shows in one output of one batch: the report covers them all."""
    # The fx stage's one-pass LayerNorm variance loses its digits only on the
    # middle batch (tokens near 100), and only the first output has a
    # LayerNorm; the context head is exact in every float32 stage. So reading
    # only the first or the last batch, only the last output, or only the
    # first positional input of a batch each gives a different report.
    inputs = paired_batches(17, *OFFSET_MIDDLE)
    stages = build_pipeline(build(TokensAndContext, 17), inputs[0], **FX_LAYER_NORM)
    return observe(solution, stages, inputs)
