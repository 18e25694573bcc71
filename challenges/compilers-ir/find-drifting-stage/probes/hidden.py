"""Hidden probes for find-drifting-stage: they make the score.

Most probes build a real five-stage lowering pipeline for a small model
(see ``build_pipeline`` in given/pipeline.py), sometimes with one stage broken by a real
mechanism, call the candidate's ``find_drifting_stage(stages, inputs)`` and
return its report, compared with the reference's. The others hand over
stages of their own, which return fixed arrays, and return the candidate's
report on each of their cases beside the exact report, worked out with
fractions (``exact_report``); their checks judge the candidate against that
truth. Two categories:

- ``localise``: only the stage it names as the first to drift is checked
  (``first_stage_matches``, ``first_stages_match_truth``). There is a
  pipeline with no drift, one with drift at each stage, drift that only one
  input batch shows, drift that only one output shows, drift that turns
  outputs into NaN, and a stage that is out of tolerance only at the small
  values of an output that also holds large ones. With stages of their own:
  errors exactly on the stage's tolerance (a ratio of exactly 1, within) or
  past it by 3e-8 of it, which a tolerance computed in float32 misses
  (``errors_exactly_at_the_tolerance``); past or inside it by a few float64
  rounding units, which any slack on the verdict misses
  (``ratio_a_few_ulps_over_one``, red team round 1); and stages each moving
  the output a little from the one before, the moves adding up, or a stage
  out, later ones back within and out again (``drift_adds_up_across_stages``,
  red team round 1).
- ``report``: the whole report is checked, the first stage and every
  stage's ``max_abs`` and ``ratio`` (``report_matches``,
  ``reports_match_truth``). One pipeline has two inputs and two outputs,
  and its drift shows in the first output of the middle batch only. With
  stages of their own (red team round 1): a reference not called eager,
  outputs and batches with no elements, 0-d outputs, size-1 dimensions and
  three dtypes at once, and cached, shared or read-only arrays; and three
  seeded families of generated stage sequences (``generated_*``).

Red team round 2 added: errors the next float64 number past the tolerance,
for tolerances across magnitudes (``ratio_one_unit_over_one``: a ratio
computed as ``d * (1 / tol)`` misses about one in five); outputs in any
memory layout, Fortran order, transposed or permuted views and negative
strides, of the probes' own stages and of a real pipeline whose model
returns views (``outputs_in_any_memory_layout``,
``report_outputs_that_are_views``); float32 outputs whose difference from
the reference rounds or overflows in float32
(``float32_differences_that_float32_cannot_hold``); and stages handed over
as a tuple, a list that must be left as it was or another sequence, as
SimpleNamespaces, dataclasses or a NamedTuple with another field order
(``stages_in_any_sequence``).

The state round added ``repeated_calls``: many calls in one process, each
judged against the exact report of its step, as returned and again after
every call has run (``reports_in_sequence_match_truth``). The steps: the
same stages and inputs changed in place (parameters updated, a caching
stage refilling the same read-only arrays, input arrays refilled, a stage
of the caller's list replaced), look-alike stages with the same names and
tolerances on equal or on new inputs of the same shapes, and everything
freed and rebuilt at the freed ids (the reference's run must show that the
ids were taken). A memo keyed on ids, names, shapes, the inputs' bytes or
the objects themselves, and a report reused by the next call, fail it.

Red team round 3 added inputs the statement allows that no probe built:
stages in a collections.deque and in a sequence that takes integer
positions only, no slices (``stages_in_sequences_without_slices``; the
reference sliced ``stages[1:]`` until then), a pipeline of the reference
alone (``pipeline_of_the_reference_alone``), a stage named by the empty
string (``stage_named_by_the_empty_string``), a call by keyword
(``called_with_keyword_arguments``), batches whose inputs and outputs
differ in shape (``batches_of_different_shapes``) or hold the same bytes in
other shapes (``batches_with_the_same_bytes``), and finite outputs whose sum
overflows their dtype, of stages of the probes' own and of a real pipeline
whose outputs sit near 100 (``finite_outputs_whose_sum_overflows``,
``report_healthy_outputs_near_100``).

Red team round 4 added: a call that leaves torch's or NumPy's process-wide
settings changed (the default dtype set to float64, grad mode off, one
thread, NumPy's errors silenced), seen after each call and after the import,
and through a pipeline built after an earlier call
(``process_left_as_found``); stages that count their runs, so that a stage
not run on a batch once its numbers are settled (NaN, or out) fails
(``every_stage_runs_on_every_batch``); outputs that overflow to +inf or
-inf with no NaN (``outputs_that_overflow_to_infinity``); finite float64
outputs past float32's largest value and float32 ones past float16's
(``finite_outputs_beyond_a_narrower_range``); a batch of zero rows whose
outputs have elements (``batch_of_zero_rows_with_outputs``); and outputs
with no elements before one that drifts
(``empty_output_before_a_drifted_one``).

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

import collections
import gc
import math
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from types import SimpleNamespace
from typing import Any, NamedTuple

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


class TransposedHeads(nn.Module):
    """Two outputs, both views of a tensor in another order: an MLP's output with two axes swapped, a head's with its axes reversed."""

    def __init__(self) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(D)
        self.fc1 = nn.Linear(D, 2 * D)
        self.fc2 = nn.Linear(2 * D, D)
        self.aux = nn.Linear(D, 8)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.ln(x)
        return self.fc2(F.gelu(self.fc1(h))).transpose(0, 1), self.aux(h).permute(2, 1, 0)


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
    return plain_report(solution.find_drifting_stage(stages, inputs))


def plain_report(report: Any) -> Any:
    """The candidate's report as plain data, read as it is now (or what is wrong with it)."""
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


# ---------------------------------------------------------------- stages of the probes' own, judged exactly
#
# Most probes build a real pipeline and compare the candidate's report with
# the reference's. The probes below hand over stages of their own instead: a
# stage returns fixed arrays for each input batch, and the candidate's report
# is judged against the report computed exactly, with fractions, from the
# values the stages return (``exact_report``; the checks ``*_match_truth``
# read the one computed in the reference's run). No element of these stages
# sits so close to its tolerance that float64 rounding could change its
# verdict, unless every float64 step of the statement's formulas is exact
# there: a ratio of exactly 1 is within, and a ratio of 1 + a few float64
# rounding units is out, whichever of the usual float64 formulations
# computes it (``d / tol > 1``, ``d > tol``, ``numpy.isclose``).

F16, F32, F64 = np.float16, np.float32, np.float64


def batch_key(batch: tuple[Any, ...]) -> tuple[Any, ...]:
    """What tells a probe's input batches apart: each array's shape and values."""
    return tuple((np.shape(a), np.asarray(a, dtype=F32).tobytes()) for a in batch)


def table_stage(
    name: str,
    inputs: list[tuple[np.ndarray, ...]],
    outputs: list[tuple[np.ndarray, ...]],
    rtol: float = 1e-5,
    atol: float = 1e-5,
    *,
    cached: bool = False,
) -> Stage:
    """A stage that returns ``outputs[i]`` for the batch ``inputs[i]``.

    A fresh copy on every call, or, when ``cached``, the very same array
    objects every time (a stage that caches its results, as a runtime's
    output buffers or a memoised compile can).
    """
    index = {batch_key(b): i for i, b in enumerate(inputs)}
    assert len(index) == len(inputs), "two batches of a case are alike"
    assert len(outputs) == len(inputs)

    def run(*batch: np.ndarray) -> tuple[np.ndarray, ...]:
        outs = outputs[index[batch_key(batch)]]
        return tuple(outs) if cached else tuple(np.array(o, copy=True) for o in outs)

    return Stage(name, run, rtol=rtol, atol=atol)


def read_only(a: np.ndarray) -> np.ndarray:
    """``a``, no longer writeable."""
    a.flags.writeable = False
    return a


def exact_ratio(y: float, r: float, rtol: float, atol: float) -> Fraction:
    """|y - r| / (atol + rtol * |r|), exactly."""
    fr = Fraction(r)
    return abs(Fraction(y) - fr) / (Fraction(atol) + Fraction(rtol) * abs(fr))


def exact_report(stages: list[Stage], inputs: list[tuple[np.ndarray, ...]]) -> dict[str, Any]:
    """The statement's report, worked out exactly with fractions from the values the stages return.

    ``max_abs`` and ``ratio`` are the exact maxima rounded once to float64;
    ``first`` is the first stage with an element where |y - r| > atol + rtol |r|
    exactly. Called before the candidate's function, so that nothing it might
    write into a stage's arrays can change the truth.
    """
    ref = [[np.array(o, dtype=F64) for o in stages[0].run(*b)] for b in inputs]
    first, errors = None, {}
    for stage in stages[1:]:
        atol, rtol = Fraction(stage.atol), Fraction(stage.rtol)
        assert stage.atol > 0 and stage.rtol >= 0
        worst_abs = worst_ratio = Fraction(0)
        finite = True
        for batch, refs in zip(inputs, ref, strict=True):
            outs = stage.run(*batch)
            assert len(outs) == len(refs), "a stage of the probe returns too few or too many outputs"
            for y, r in zip(outs, refs, strict=True):
                assert np.shape(y) == r.shape, "a stage of the probe returns an output of another shape"
                y = np.array(y, dtype=F64)
                if not np.isfinite(y).all():
                    finite = False
                    continue
                for yv, rv in zip(y.ravel().tolist(), r.ravel().tolist(), strict=True):
                    if yv != rv:
                        d = abs(Fraction(yv) - Fraction(rv))
                        worst_abs = max(worst_abs, d)
                        worst_ratio = max(worst_ratio, d / (atol + rtol * abs(Fraction(rv))))
        if finite:
            errors[stage.name] = {"max_abs": float(worst_abs), "ratio": float(worst_ratio)}
        else:
            errors[stage.name] = {"max_abs": math.inf, "ratio": math.inf}
        if first is None and (not finite or worst_ratio > 1):
            first = stage.name
    return {"first": first, "errors": errors}


Case = tuple[list[Stage], list[tuple[np.ndarray, ...]]]


def judged_exactly(solution: Any, cases: list[Case]) -> dict[str, Any]:
    """The candidate's report on each case, beside the exact report (worked out first)."""
    truth = [exact_report(stages, inputs) for stages, inputs in cases]
    return {"reports": [observe(solution, stages, inputs) for stages, inputs in cases], "truth": truth}


def token_batches(seed: int, *shapes: tuple[int, ...]) -> list[tuple[np.ndarray, ...]]:
    """One batch of one float32 input per shape (its values only tell the batches apart)."""
    rng = np.random.default_rng(seed)
    return [(rng.normal(size=shape).astype(F32),) for shape in shapes]


def ulps_from(x: float, toward: float, count: int) -> float:
    """x moved ``count`` float64 rounding units toward ``toward``."""
    v = np.float64(x)
    for _ in range(count):
        v = np.nextafter(v, toward)
    return float(v)


def one_output(*arrays: np.ndarray) -> list[tuple[np.ndarray, ...]]:
    """Per-batch outputs of a one-output stage."""
    return [(a,) for a in arrays]


def nudged(r: np.ndarray, by: np.ndarray | float, rtol: float = 1e-5, atol: float = 1e-5) -> np.ndarray:
    """r moved by ``by`` times its tolerance atol + rtol * |r| (per element), in float64."""
    r64 = np.asarray(r, dtype=F64)
    return r64 + by * (atol + rtol * np.abs(r64))


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


@probe(category="localise", weight=2, check="first_stages_match_truth", hints=["boundary", "report-definition"])
def ratio_a_few_ulps_over_one(solution: Any) -> Any:
    """Stages of the probe's own: errors exactly on the tolerance (within) and past it by a few float64 rounding units (out)."""
    # float64 outputs whose worst element is off by exactly atol + rtol * |r|
    # (a ratio of exactly 1), or by that and 1 to 3 float64 rounding units
    # more or less: ratios from 1 + 4.4e-16 (2**-51) to 1 + 1.1e-13, out, and
    # 1 - 1.7e-14 and 1 - 4.1e-14, within. Every float64 step is exact there. A verdict with any slack
    # ("ratio > 1 + 1e-9", math.isclose(ratio, 1)) calls the stages that are
    # out within.
    cases: list[Case] = []

    # 1. rtol = 0, atol = 1/4: a tie at 1.0, then 0 moved to 1/4 + 2**-53
    inputs = token_batches(60, (4,), (2, 2))
    ref = [F32([1.0, 0.0, -2.0, 0.5]), F32([0.25, 0.0, 3.0, -1.0])]
    tie = [F64([1.25, 0.0, -2.0, 0.5]), ref[1].astype(F64)]
    hair = [ref[0].astype(F64), F64([0.25, 0.25 + 2.0**-53, 3.0, -1.0])]
    assert exact_ratio(1.25, 1.0, 0.0, 0.25) == 1 and 1 < exact_ratio(0.25 + 2.0**-53, 0.0, 0.0, 0.25) < 1 + 1e-15
    cases.append(
        (
            [
                table_stage("eager", inputs, one_output(*ref), 0.0, 0.0),
                table_stage("fx", inputs, one_output(*tie), 0.0, 0.25),
                table_stage("onnx", inputs, one_output(*hair), 0.0, 0.25),
                table_stage("ort", inputs, one_output(*hair), 0.0, 0.25),
            ],
            inputs,
        )
    )

    # 2. rtol = 2**-7, atol = 2**-10 at r = 1.5 (tolerance 13/1024): on it, one unit inside, one unit past
    inputs = token_batches(61, (2, 3))
    dyadic = {"rtol": 2.0**-7, "atol": 2.0**-10}
    r = F32([1.5, -0.75, 2.0, 0.25])
    edge = 1.5 + 13 / 1024

    def at0(value: float) -> np.ndarray:
        y = r.astype(F64)
        y[0] = value
        return y

    assert exact_ratio(1.5 - 13 / 1024, 1.5, **dyadic) == 1
    assert 1 - 1e-13 < exact_ratio(ulps_from(edge, 0.0, 1), 1.5, **dyadic) < 1
    assert 1 < exact_ratio(ulps_from(edge, math.inf, 1), 1.5, **dyadic) < 1 + 1e-13
    cases.append(
        (
            [
                table_stage("eager", inputs, one_output(r), 0.0, 0.0),
                table_stage("fx", inputs, one_output(at0(1.5 - 13 / 1024)), **dyadic),
                table_stage("onnx", inputs, one_output(at0(ulps_from(edge, 0.0, 1))), **dyadic),
                table_stage("ort", inputs, one_output(at0(ulps_from(edge, math.inf, 1))), **dyadic),
                table_stage("fp16", inputs, one_output(r.astype(F16)), rtol=1e-2, atol=2e-3),
            ],
            inputs,
        )
    )

    # 3. nothing out: ties in float64 and float32, three units inside a tie
    inputs = token_batches(62, (3,), (5,))
    dyadic = {"rtol": 2.0**-6, "atol": 2.0**-10}
    ref = [F32([[2.0, -0.5], [0.125, 3.0]]), F32([[1.0, 0.0], [-4.0, 0.5]])]

    def moved(batch: int, where: tuple[int, int], value: float, dtype: Any) -> list[np.ndarray]:
        ys = [x.astype(F64) for x in ref]
        ys[batch][where] = value
        out = [y.astype(dtype) for y in ys]
        assert out[batch][where] == value, "a tie is not exact in its dtype"
        return out

    tie_2 = 2.0 + 33 / 1024  # tolerance at 2.0: 2**-10 + 2**-5
    assert exact_ratio(tie_2, 2.0, **dyadic) == 1 and exact_ratio(3.0 - 49 / 1024, 3.0, **dyadic) == 1
    inside = moved(0, (0, 0), ulps_from(tie_2, 0.0, 3), F64)
    inside[0][0, 1] = -0.5 - 9 / 1024
    assert 1 - 1e-12 < exact_ratio(inside[0][0, 0], 2.0, **dyadic) < 1 and exact_ratio(inside[0][0, 1], -0.5, **dyadic) == 1
    cases.append(
        (
            [
                table_stage("eager", inputs, one_output(*ref), 0.0, 0.0),
                table_stage("fx", inputs, one_output(*moved(0, (0, 0), tie_2, F64)), **dyadic),
                table_stage("onnx", inputs, one_output(*moved(0, (1, 1), 3.0 - 49 / 1024, F32)), **dyadic),
                table_stage("ort", inputs, one_output(*inside), **dyadic),
                table_stage("fp16", inputs, one_output(*moved(1, (1, 1), 0.5 + 2.0**-10 + 2.0**-7, F16)), **dyadic),
            ],
            inputs,
        )
    )

    # 4. two outputs and two batches: a tie in the first output, three units past in the second output of the second batch
    inputs = token_batches(63, (4, 2), (1, 3))
    dyadic = {"rtol": 2.0**-8, "atol": 2.0**-12}
    ref4 = [
        (F32([0.5, -1.0, 4.0, 0.0]), F32([[1.0, 2.0], [-3.0, 0.75]])),
        (F32([0.25, 0.0, -0.5, 1.0]), F32([[0.5, -2.0], [6.0, -0.25]])),
    ]
    tie_4 = 4.0 + 65 / 4096  # tolerance at 4.0: 2**-12 + 2**-6
    past_6 = ulps_from(6.0 + 97 / 4096, math.inf, 3)  # tolerance at 6.0: 2**-12 + 3 * 2**-7
    assert exact_ratio(tie_4, 4.0, **dyadic) == 1 and 1 < exact_ratio(past_6, 6.0, **dyadic) < 1 + 1e-12
    tied = [tuple(o.astype(F64) for o in outs) for outs in ref4]
    tied[0][0][2] = tie_4
    past = [tuple(o.astype(F64) for o in outs) for outs in ref4]
    past[1][1][1, 0] = past_6
    cases.append(
        (
            [
                table_stage("eager", inputs, ref4, 0.0, 0.0),
                table_stage("aot", inputs, tied, **dyadic),
                table_stage("inductor", inputs, past, **dyadic),
                table_stage("triton", inputs, past, **dyadic),
            ],
            inputs,
        )
    )
    return judged_exactly(solution, cases)


def creeping(r: np.ndarray, steps: list[float], signs: np.ndarray, rtol: float = 1e-5, atol: float = 1e-5) -> list[np.ndarray]:
    """r moved step after step, each by steps[k] times the tolerance at r (signs per element): the running totals, in float64."""
    tol = atol + rtol * np.abs(r.astype(F64))
    out, y = [], r.astype(F64)
    for step in steps:
        y = y + step * signs * tol
        out.append(y)
    return out


@probe(category="localise", weight=2, check="first_stages_match_truth", hints=["compare-to-eager"])
def drift_adds_up_across_stages(solution: Any) -> Any:
    """Stages of the probe's own: each moves the output a little from the stage before, within its tolerance, and the moves add up."""
    # Judged against the reference, a stage is out once the moves before it
    # add up past its tolerance, though its own step is small; and a stage
    # that moves a drifted output back toward the reference is within though
    # its step is large. A verdict read from each stage's step from the stage
    # before gets the first four cases wrong; the fifth has a stage out, two
    # back within and two out again, which a bisection over the verdicts
    # (as if they were monotone) gets wrong.
    cases: list[Case] = []

    # 1. 0.8 of the tolerance, then 0.5 more: 1.3
    inputs = token_batches(70, (2,))
    cases.append(
        (
            [
                table_stage("eager", inputs, one_output(F32([1.0])), 0.0, 0.0),
                table_stage("a", inputs, one_output(F64([1.2])), 0.0, 0.25),
                table_stage("b", inputs, one_output(F64([1.325])), 0.0, 0.25),
            ],
            inputs,
        )
    )

    # 2. four stages, 0.4 of the tolerance each (float32 outputs): 0.4, 0.8, 1.2, 1.6
    rng = np.random.default_rng(71)
    inputs = token_batches(71, (3, 8), (2, 8))
    refs = [rng.normal(0.0, 2.0, size=(3, 8)).astype(F32) for _ in inputs]
    signs = [rng.choice([-1.0, 1.0], size=(3, 8)) for _ in inputs]
    runs = [creeping(r, [0.4] * 4, s) for r, s in zip(refs, signs, strict=True)]
    names = ["fx", "onnx", "ort", "tensorrt"]
    stages = [table_stage("eager", inputs, one_output(*refs), 0.0, 0.0)]
    stages += [table_stage(name, inputs, one_output(*(run[k].astype(F32) for run in runs))) for k, name in enumerate(names)]
    cases.append((stages, inputs))

    # 3. fx 0.6, onnx 0.3 more (0.9), ort 0.3 more (1.2); fp16 is built from onnx and stays within its looser tolerance
    inputs = token_batches(72, (4, 4))
    r = rng.normal(0.0, 1.0, size=(4, 8)).astype(F32)
    s = rng.choice([-1.0, 1.0], size=(4, 8))
    fx, onnx, ort = creeping(r, [0.6, 0.3, 0.3], s)
    cases.append(
        (
            [
                table_stage("eager", inputs, one_output(r), 0.0, 0.0),
                table_stage("fx", inputs, one_output(fx.astype(F32))),
                table_stage("onnx", inputs, one_output(onnx.astype(F32))),
                table_stage("ort", inputs, one_output(ort.astype(F32))),
                table_stage("fp16", inputs, one_output(onnx.astype(F16)), rtol=1e-2, atol=2e-3),
            ],
            inputs,
        )
    )

    # 4. fx 0.7 one way, onnx 1.4 back (0.7 the other way): both within
    inputs = token_batches(73, (2, 5), (5, 2))
    refs = [rng.normal(0.0, 3.0, size=(5,)).astype(F32) for _ in inputs]
    signs = [rng.choice([-1.0, 1.0], size=(5,)) for _ in inputs]
    runs = [creeping(r, [0.7, -1.4], s) for r, s in zip(refs, signs, strict=True)]
    cases.append(
        (
            [
                table_stage("eager", inputs, one_output(*refs), 0.0, 0.0),
                table_stage("fx", inputs, one_output(*(run[0] for run in runs))),
                table_stage("onnx", inputs, one_output(*(run[1] for run in runs))),
            ],
            inputs,
        )
    )

    # 5. fx out (1.5), onnx and ort back within (0.5, 0.2), trt and fp16 out again: the verdicts are not
    # monotone along the pipeline, and a bisection over them finds trt
    inputs = token_batches(74, (3, 3))
    r = rng.normal(0.0, 1.0, size=(3, 4)).astype(F32)
    s = rng.choice([-1.0, 1.0], size=(3, 4))
    moves = {"fx": 1.5, "onnx": 0.5, "ort": 0.2, "trt": 2.0, "fp16": 3.0}
    cases.append(
        (
            [table_stage("eager", inputs, one_output(r), 0.0, 0.0)]
            + [table_stage(name, inputs, one_output(nudged(r, by * s))) for name, by in moves.items()],
            inputs,
        )
    )
    return judged_exactly(solution, cases)


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


@probe(category="report", weight=2, check="reports_match_truth", hints=["reference-first", "report-definition"])
def reference_not_called_eager(solution: Any) -> Any:
    """Stages of the probe's own whose reference has another name, and where a later stage is called eager."""
    # stages[0] is the reference whatever it is called. Looking it up by the
    # name "eager" finds none (case 1) or a drifted stage (case 2), and
    # skipping the stages called "eager" reports the reference and leaves a
    # stage out: `errors` must hold exactly the stages after the first.
    cases: list[Case] = []
    inputs = token_batches(80, (2, 4))
    same = one_output(F32([1.0, 2.0]))
    cases.append(([table_stage("ref", inputs, same, 0.0, 0.0), table_stage("lowered", inputs, same)], inputs))

    rng = np.random.default_rng(81)
    inputs = token_batches(81, (3, 4), (4, 3))
    refs = [rng.normal(0.0, 2.0, size=(2, 6)).astype(F32) for _ in inputs]
    half = [nudged(r, 0.5 * rng.choice([-1.0, 1.0], size=r.shape)).astype(F32) for r in refs]
    far = [nudged(r, np.where(rng.random(r.shape) < 0.2, 3.0, 0.3)).astype(F32) for r in refs]
    cases.append(
        (
            [
                table_stage("torch", inputs, one_output(*refs), 0.0, 0.0),
                table_stage("export", inputs, one_output(*half)),
                table_stage("eager", inputs, one_output(*far)),
                table_stage("compiled", inputs, one_output(*half), rtol=1e-3, atol=1e-4),
            ],
            inputs,
        )
    )

    inputs = token_batches(82, (5,))
    r = rng.normal(0.0, 1.0, size=(3, 3)).astype(F32)
    cases.append(
        (
            [
                table_stage("golden", inputs, one_output(r), 0.0, 0.0),
                table_stage("fx", inputs, one_output(r.copy())),
                table_stage("onnx", inputs, one_output(nudged(r, 2.0).astype(F32))),
            ],
            inputs,
        )
    )
    return judged_exactly(solution, cases)


@probe(category="report", weight=2, check="reports_match_truth", hints=["any-shape", "every-output", "every-batch"])
def outputs_with_no_elements(solution: Any) -> Any:
    """Stages of the probe's own whose outputs, or whole batches, have no elements."""
    # A maximum over no elements is 0: `d.max()` without an initial value
    # raises on every case, and a stage whose outputs are all empty has
    # errors 0.
    cases: list[Case] = []
    rng = np.random.default_rng(90)

    # 1. a second output of shape (0, 3); onnx drifts in the first
    inputs = token_batches(90, (2, 2))
    empty = np.zeros((0, 3), F32)
    ref = [(F32([1.0, 2.0]), empty)]
    cases.append(
        (
            [
                table_stage("eager", inputs, ref, 0.0, 0.0),
                table_stage("fx", inputs, ref),
                table_stage("onnx", inputs, [(F32([1.5, 2.0]), empty)]),
            ],
            inputs,
        )
    )

    # 2. batches of 3, 0 and 2 rows; outputs (rows, 4) and (rows,)
    rows = (3, 0, 2)
    inputs = token_batches(91, *((n, 4) for n in rows))
    refs = [(rng.normal(0.0, 1.0, size=(n, 4)).astype(F32), rng.normal(0.0, 5.0, size=(n,)).astype(F32)) for n in rows]
    within = [tuple(nudged(o, 0.5).astype(F32) for o in outs) for outs in refs]
    out = [tuple(o.astype(F64) for o in outs) for outs in within]
    out[2][1][1] = nudged(refs[2][1][1], 2.0)
    cases.append(
        (
            [
                table_stage("eager", inputs, refs, 0.0, 0.0),
                table_stage("fx", inputs, [tuple(o.copy() for o in outs) for outs in refs]),
                table_stage("onnx", inputs, out),
                table_stage("ort", inputs, within),
                table_stage("fp16", inputs, [tuple(o.astype(F16) for o in outs) for outs in refs], rtol=1e-2, atol=2e-3),
            ],
            inputs,
        )
    )

    # 3. every output of every batch is empty: errors 0, no stage out
    inputs = token_batches(92, (0, 2), (0, 5))
    ref = [(np.zeros((0,), F32), np.zeros((2, 0, 3), F32)) for _ in inputs]
    cases.append(
        (
            [
                table_stage("eager", inputs, ref, 0.0, 0.0),
                table_stage("fx", inputs, ref),
                table_stage("onnx", inputs, [tuple(o.astype(F64) for o in outs) for outs in ref]),
                table_stage("fp16", inputs, [tuple(o.astype(F16) for o in outs) for outs in ref], rtol=1e-2, atol=2e-3),
            ],
            inputs,
        )
    )
    return judged_exactly(solution, cases)


@probe(category="report", weight=2, check="reports_match_truth", hints=["any-shape", "report-definition"])
def outputs_of_every_shape_and_dtype(solution: Any) -> Any:
    """Stages of the probe's own with 0-d outputs, size-1 dimensions in every position, and outputs of three dtypes at once."""
    # Each output is compared with the reference's output of the same shape,
    # element by element: broadcasting a (5, 1) output against a (5,) one,
    # or stacking outputs of different shapes or dtypes, reports other
    # numbers.
    cases: list[Case] = []
    rng = np.random.default_rng(100)

    # 1. a 0-d output beside a (1,) one
    inputs = token_batches(100, (3,), (1, 3))
    refs = [(np.array(1.5, F32), F32([-0.25])), (np.array(-3.0, F32), F32([0.75]))]

    def scaled(by: float, dtype: Any) -> list[tuple[np.ndarray, ...]]:
        return [(nudged(a, by).astype(dtype), b.copy()) for a, b in refs]

    cases.append(
        (
            [
                table_stage("eager", inputs, refs, 0.0, 0.0),
                table_stage("fx", inputs, [tuple(o.copy() for o in outs) for outs in refs]),
                table_stage("onnx", inputs, scaled(0.5, F64)),
                table_stage("ort", inputs, scaled(1.25, F64)),
            ],
            inputs,
        )
    )

    # 2. size-1 dimensions in every position; ort is out at one element of the (5, 1) output
    shapes = [(1, 5), (5, 1), (1, 1, 3), (3, 1, 1), (1,)]
    inputs = token_batches(101, (2, 3), (3, 2))
    refs = [tuple(rng.normal(0.0, 2.0, size=shape).astype(F32) for shape in shapes) for _ in inputs]
    signs = [tuple(rng.choice([-1.0, 1.0], size=shape) for shape in shapes) for _ in inputs]
    near = [tuple(nudged(r, 0.8 * s) for r, s in zip(outs, ss, strict=True)) for outs, ss in zip(refs, signs, strict=True)]
    ort = [tuple(o.copy() for o in outs) for outs in near]
    ort[1][1][3, 0] = nudged(refs[1][1][3, 0], -2.5)
    cases.append(
        (
            [
                table_stage("eager", inputs, refs, 0.0, 0.0),
                table_stage("fx", inputs, [tuple(o.copy() for o in outs) for outs in refs]),
                table_stage("onnx", inputs, near),
                table_stage("ort", inputs, ort),
                table_stage("fp16", inputs, [tuple(o.astype(F16) for o in outs) for outs in refs], rtol=1e-2, atol=2e-3),
            ],
            inputs,
        )
    )

    # 3. three outputs, each stage returning them in three different dtypes;
    # onnx is exactly on its tolerance in its float16 output, ort out in its float16 output only
    dyadic = {"rtol": 2.0**-5, "atol": 2.0**-8}
    inputs = token_batches(102, (2, 2))
    refs = [tuple((rng.integers(-16, 17, size=(2, 3)) / 8).astype(F32) for _ in range(3))]
    refs[0][1][0, 0] = 0.5

    def typed(by: list[np.ndarray], dtypes: tuple[Any, Any, Any]) -> list[tuple[np.ndarray, ...]]:
        return [tuple(nudged(r, b, **dyadic).astype(t) for r, b, t in zip(refs[0], by, dtypes, strict=True))]

    small = [rng.uniform(-0.5, 0.5, size=(2, 3)) for _ in range(3)]
    tie = [b.copy() for b in small]
    tie[1][0, 0] = 1.0
    past = [b.copy() for b in small]
    past[2][1, 2] = 3.0
    onnx = typed(tie, (F64, F16, F32))
    assert exact_ratio(float(onnx[0][1][0, 0]), 0.5, **dyadic) == 1, "the float16 tie is not exact"
    cases.append(
        (
            [
                table_stage("eager", inputs, refs, 0.0, 0.0),
                table_stage("fx", inputs, typed(small, (F16, F32, F64)), **dyadic),
                table_stage("onnx", inputs, onnx, **dyadic),
                table_stage("ort", inputs, typed(past, (F32, F64, F16)), **dyadic),
            ],
            inputs,
        )
    )
    return judged_exactly(solution, cases)


@probe(category="report", weight=2, check="reports_match_truth", hints=["read-only-outputs", "report-definition"])
def outputs_shared_and_read_only(solution: Any) -> Any:
    """Stages of the probe's own that return cached arrays: shared by two stages, by two batches, twice in one call, or read-only."""
    # The arrays a stage returns are its own: writing |y - r| into a float64
    # output (np.asarray does not copy it) changes what the next stage, the
    # next batch or the next output returns, and a read-only one raises.
    cases: list[Case] = []
    rng = np.random.default_rng(110)

    # 1. onnx and ort return one cached float64 array, equal to the reference
    inputs = token_batches(110, (3,))
    cached = [(F64([1.0, 2.0, 3.0]),)]
    cases.append(
        (
            [
                table_stage("eager", inputs, one_output(F32([1.0, 2.0, 3.0])), 0.0, 0.0),
                table_stage("onnx", inputs, cached, cached=True),
                table_stage("ort", inputs, cached, cached=True),
            ],
            inputs,
        )
    )

    # 2. a stale cache: fx returns its first batch's array for every batch
    inputs = token_batches(111, (2, 4), (4, 2), (1, 8))
    refs = [rng.normal(0.0, 1.0, size=(4,)).astype(F32) for _ in inputs]
    stale = nudged(refs[0], 0.5)
    cases.append(
        (
            [
                table_stage("eager", inputs, one_output(*refs), 0.0, 0.0),
                table_stage("fx", inputs, one_output(*([stale] * len(inputs))), cached=True),
                table_stage("onnx", inputs, one_output(*(r.copy() for r in refs))),
            ],
            inputs,
        )
    )

    # 3. the model returns one tensor twice: every stage returns one array object twice
    inputs = token_batches(112, (6,), (2, 3))
    refs = [rng.normal(0.0, 4.0, size=(2, 3)).astype(F32) for _ in inputs]
    within = [nudged(r, 0.6 * rng.choice([-1.0, 1.0], size=r.shape)) for r in refs]
    cases.append(
        (
            [
                table_stage("eager", inputs, [(r, r) for r in refs], 0.0, 0.0, cached=True),
                table_stage("fx", inputs, [(y, y) for y in within], cached=True),
                table_stage("onnx", inputs, [(y, y) for y in within], cached=True),
            ],
            inputs,
        )
    )

    # 4. every array read-only, the reference's too, in each dtype; onnx is out
    inputs = token_batches(113, (2, 2), (3, 3))
    refs = [read_only(rng.normal(0.0, 1.0, size=(3, 2)).astype(F32)) for _ in inputs]
    signs = [rng.choice([-1.0, 1.0], size=(3, 2)) for _ in inputs]
    out = [nudged(r, 0.4 * s) for r, s in zip(refs, signs, strict=True)]
    out[0][2, 1] = nudged(refs[0][2, 1], 1.5)
    cases.append(
        (
            [
                table_stage("eager", inputs, one_output(*refs), 0.0, 0.0, cached=True),
                table_stage("fx", inputs, one_output(*(read_only(nudged(r, 0.4 * s)) for r, s in zip(refs, signs, strict=True))), cached=True),
                table_stage("onnx", inputs, one_output(*(read_only(y) for y in out)), cached=True),
                table_stage("ort", inputs, one_output(*(read_only(y.astype(F32)) for y in out)), cached=True),
                table_stage("fp16", inputs, one_output(*(read_only(r.astype(F16)) for r in refs)), rtol=1e-2, atol=2e-3, cached=True),
            ],
            inputs,
        )
    )
    return judged_exactly(solution, cases)


# ---------------------------------------------------------------- layouts, float32 differences, stage containers (red team round 2)


@probe(category="report", weight=2, check="report_matches", hints=["memory-layout", "report-definition"])
def report_outputs_that_are_views(solution: Any) -> Any:
    """A model whose outputs are a transposed and a permuted view: eager and fx return strided arrays, onnxruntime contiguous ones."""
    # torch_runner returns t.numpy(), which keeps the tensor's strides: the
    # eager and fx stages' outputs are not in C order, the onnxruntime
    # stages' are. Flattening in memory order (ravel(order="K"),
    # reshape(order="A")) pairs different elements of the two, and the ort
    # stage's planted drift is blamed on onnx.
    return case(solution, TransposedHeads, 30, PLAIN, **ORT_GELU)


def laid_out(values: np.ndarray, layout: str) -> np.ndarray:
    """A fresh array equal to ``values``, its memory laid out as ``layout`` says.

    "C": C order; "F": Fortran order; "T": a transposed view of a C-ordered
    array; "flip": every axis reversed in memory (negative strides); "flip0":
    the first axis only; "perm": a view whose axes are rotated in memory;
    "strided": every other element of a wider buffer.
    """
    v = np.array(values, copy=True)
    every = (slice(None, None, -1),) * v.ndim
    rotate = (*range(1, v.ndim), 0)
    out = {
        "C": lambda: np.ascontiguousarray(v),
        "F": lambda: np.asfortranarray(v),
        "T": lambda: np.ascontiguousarray(v.T).T,
        "flip": lambda: np.ascontiguousarray(v[every])[every],
        "flip0": lambda: np.ascontiguousarray(v[::-1])[::-1],
        "perm": lambda: np.ascontiguousarray(v.transpose(rotate)).transpose(np.argsort(rotate)),
        "strided": lambda: strided(v),
    }[layout]()
    assert out.dtype == values.dtype and out.shape == values.shape and np.array_equal(out, values)
    assert layout == "C" or not out.flags.c_contiguous, f"layout {layout!r} of shape {values.shape} is C order"
    return out


def strided(v: np.ndarray) -> np.ndarray:
    """``v`` as every other element of the last axis of a buffer twice as wide."""
    buf = np.zeros((*v.shape[:-1], 2 * v.shape[-1]), v.dtype)
    buf[..., ::2] = v
    return buf[..., ::2]


def layout_stage(
    name: str,
    inputs: list[tuple[np.ndarray, ...]],
    outputs: list[tuple[np.ndarray, ...]],
    layouts: tuple[str, ...],
    rtol: float = 1e-5,
    atol: float = 1e-5,
) -> Stage:
    """A stage that returns ``outputs[i]`` for the batch ``inputs[i]``, its output j laid out as ``layouts[j]`` (fresh arrays every call)."""
    index = {batch_key(b): i for i, b in enumerate(inputs)}
    assert len(index) == len(inputs) == len(outputs)

    def run(*batch: np.ndarray) -> tuple[np.ndarray, ...]:
        outs = outputs[index[batch_key(batch)]]
        return tuple(laid_out(o, layout) for o, layout in zip(outs, layouts, strict=True))

    return Stage(name, run, rtol=rtol, atol=atol)


@probe(category="report", weight=2, check="reports_match_truth", hints=["memory-layout", "any-shape"])
def outputs_in_any_memory_layout(solution: Any) -> Any:
    """Stages of the probe's own whose outputs (the reference's too) are Fortran-ordered, transposed or permuted views, or have negative strides."""
    # The element at a position is the one at that index, whatever the
    # memory order: flattening in memory order (ravel(order="K"),
    # reshape(order="A")) pairs other elements when the two layouts differ,
    # and torch.from_numpy refuses negative strides.
    cases: list[Case] = []
    rng = np.random.default_rng(120)

    # 1. a C-ordered reference; fx returns its values exactly, in Fortran order (errors 0); onnx is
    # within as a transposed view, ort out at one element with negative strides, fp16 within in Fortran order
    inputs = token_batches(120, (2, 2), (3, 2))
    refs = [rng.normal(0.0, 2.0, size=(3, 4)).astype(F32) for _ in inputs]
    within = [nudged(r, 0.5 * rng.choice([-1.0, 1.0], size=r.shape)) for r in refs]
    out = [y.astype(F32) for y in within]
    out[1][2, 0] = nudged(refs[1][2, 0], 3.0)
    cases.append(
        (
            [
                layout_stage("eager", inputs, one_output(*refs), ("C",), 0.0, 0.0),
                layout_stage("fx", inputs, one_output(*refs), ("F",)),
                layout_stage("onnx", inputs, one_output(*within), ("T",)),
                layout_stage("ort", inputs, one_output(*out), ("flip0",)),
                layout_stage("fp16", inputs, one_output(*(r.astype(F16) for r in refs)), ("F",), rtol=1e-2, atol=2e-3),
            ],
            inputs,
        )
    )

    # 2. the reference's outputs are a transposed view, a permuted view and a reversed array; the
    # stages return theirs in C order or in other layouts; onnx is out in the 3-d output of the second batch
    shapes = [(3, 4), (2, 3, 4), (5,)]
    inputs = token_batches(121, (4,), (2, 3))
    refs2 = [tuple(rng.normal(0.0, 1.0, size=shape).astype(F32) for shape in shapes) for _ in inputs]
    near = [tuple(nudged(r, 0.7 * rng.choice([-1.0, 1.0], size=r.shape)) for r in outs) for outs in refs2]
    onnx = [tuple(y.copy() for y in outs) for outs in near]
    onnx[1][1][1, 2, 0] = nudged(refs2[1][1][1, 2, 0], -1.5)
    cases.append(
        (
            [
                layout_stage("torch", inputs, refs2, ("T", "perm", "flip0"), 0.0, 0.0),
                layout_stage("fx", inputs, [tuple(r.copy() for r in outs) for outs in refs2], ("C", "C", "C")),
                layout_stage("onnx", inputs, onnx, ("F", "flip", "strided")),
                layout_stage("ort", inputs, near, ("flip", "T", "C")),
                layout_stage("fp16", inputs, [tuple(r.astype(F16) for r in outs) for outs in refs2], ("strided", "F", "flip0"), rtol=1e-2, atol=2e-3),
            ],
            inputs,
        )
    )

    # 3. reference and stage in the same non-C layout, with size-1 dimensions: only a within stage and an exact one
    inputs = token_batches(122, (3, 3))
    r3 = rng.normal(0.0, 3.0, size=(2, 1, 3)).astype(F32)
    cases.append(
        (
            [
                layout_stage("eager", inputs, one_output(r3), ("F",), 0.0, 0.0),
                layout_stage("fx", inputs, one_output(nudged(r3, 0.9)), ("F",)),
                layout_stage("onnx", inputs, one_output(r3.astype(F64)), ("flip",)),
            ],
            inputs,
        )
    )
    return judged_exactly(solution, cases)


def exact_tolerance(r: float, rtol: float, atol: float) -> float | None:
    """atol + rtol * |r| when every float64 step of it is exact, else None."""
    scaled = rtol * abs(r)
    tol = atol + scaled
    exact = Fraction(scaled) == Fraction(rtol) * abs(Fraction(r)) and Fraction(tol) == Fraction(atol) + Fraction(scaled)
    return tol if exact and math.isfinite(tol) else None


def one_unit_from_tolerance(rng: np.random.Generator, kind: str) -> tuple[float, float, float, float]:
    """(r, y, rtol, atol) with r float32 and y float64 whose error |y - r| is the tolerance atol + rtol |r| exactly
    ("tie"), the next float64 above it ("past", out) or below it ("inside", within); every float64 step is exact.

    The tolerances are drawn across magnitudes, decimal as in the pipeline's table; r is 0 or, with a dyadic rtol,
    a value small beside the tolerance (so that y can sit one float64 unit of the tolerance from its edge).
    """
    for _ in range(10_000):
        atol = float(f"{10 ** rng.uniform(-9.0, 0.0):.{int(rng.integers(1, 4))}g}")
        if rng.random() < 0.4:
            rtol, r = float(rng.choice([0.0, 1e-5, 1e-2, 1.3e-6])), 0.0
        else:
            rtol = float(rng.choice([2.0**-4, 2.0**-7, 2.0**-10, 3 * 2.0**-9]))
            r = float(F32(rng.choice([-1.0, 1.0]) * rng.integers(1, 64) * 2.0 ** int(np.floor(np.log2(atol)) - rng.integers(6, 20))))
        tol = exact_tolerance(r, rtol, atol)
        if tol is None:
            continue
        error = {"tie": tol, "past": float(np.nextafter(tol, math.inf)), "inside": float(np.nextafter(tol, 0.0))}[kind]
        y = r + (1.0 if rng.random() < 0.5 else -1.0) * error
        if Fraction(y) - Fraction(r) not in (Fraction(error), -Fraction(error)):
            continue
        q = exact_ratio(y, r, rtol, atol)
        assert (q == 1) if kind == "tie" else (1 < q < 1 + Fraction(2) ** -51) if kind == "past" else (1 - Fraction(2) ** -51 < q < 1)
        return r, y, rtol, atol
    raise AssertionError("no value one unit from a tolerance found")


@probe(category="localise", weight=2, check="first_stages_match_truth", hints=["boundary", "report-definition"])
def ratio_one_unit_over_one(solution: Any) -> Any:
    """Stages of the probe's own whose error is the float64 number just past their tolerance (out), or on it or just inside it (within)."""
    # An error one float64 unit past atol + rtol |r|, for tolerances across
    # magnitudes: the ratio is 1 + 1.1e-16 to 1 + 2.2e-16, which the
    # statement's division rounds to 1 + 2.2e-16, out. Every float64 step is
    # exact, so d / tol > 1, d > tol and numpy.isclose agree; a ratio computed
    # as d * (1 / tol) rounds twice and comes out exactly 1 for about one
    # tolerance in five. Each case: a stage on or inside its tolerance, then
    # one past it, then (sometimes) one within again.
    rng = np.random.default_rng(130)
    cases: list[Case] = []
    for number in range(24):
        inputs = token_batches(130 + number, (2,), (3, 1))
        refs = [(rng.integers(-8, 9, size=(2, 3)) / 4.0).astype(F32) for _ in inputs]
        kinds = ["tie" if rng.random() < 0.5 else "inside", "past"] + (["tie"] if rng.random() < 0.5 else [])
        places = rng.choice(len(inputs) * refs[0].size, size=len(kinds), replace=False)
        marks = []
        for kind, place in zip(kinds, places, strict=True):
            r, y, rtol, atol = one_unit_from_tolerance(rng, kind)
            b, k = divmod(int(place), refs[0].size)
            refs[b].reshape(-1)[k] = r
            marks.append((b, k, y, rtol, atol))
        stages = [table_stage("eager", inputs, one_output(*refs), 0.0, 0.0)]
        for name, (b, k, y, rtol, atol) in zip(("fx", "onnx", "ort"), marks, strict=False):
            ys = [x.astype(F64) for x in refs]
            ys[b].reshape(-1)[k] = y
            stages.append(table_stage(name, inputs, one_output(*ys), rtol, atol))
        cases.append((stages, inputs))
    return judged_exactly(solution, cases)


def difference_beyond_float32(rng: np.random.Generator) -> tuple[float, float, Any, float, float]:
    """(r, y, dtype, rtol, atol): r float32, y of ``dtype`` (float32 or float16) orders of magnitude smaller, whose
    difference is exact in float64 but rounds in float32; the tolerance is that difference exactly (a tie, within)
    when float32 rounds it up, the float64 number below it (out) when float32 rounds it down. Every float64 step is exact.
    """
    for _ in range(10_000):
        dtype = F16 if rng.random() < 0.3 else F32
        r = float(F32(rng.choice([-1.0, 1.0]) * 10 ** rng.uniform(-1.0, 4.0)))
        y = float(np.asarray(rng.choice([-1.0, 1.0]) * abs(r) * 2.0 ** -rng.uniform(12.0, 30.0), dtype=dtype))
        d = abs(Fraction(y) - Fraction(r))
        if y == 0.0 or Fraction(float(d)) != d:
            continue
        in_float32 = abs(float((np.asarray([y], dtype=dtype) - np.asarray([r], dtype=F32))[0]))
        if Fraction(in_float32) == d:
            continue
        target = float(d) if Fraction(in_float32) > d else float(np.nextafter(float(d), 0.0))
        rtol = float(rng.choice([0.0, 2.0**-10, 2.0**-6, 2.0**-3]))
        atol = target - rtol * abs(r)
        if atol <= 0.0 or exact_tolerance(r, rtol, atol) != target:
            continue
        q = exact_ratio(y, r, rtol, atol)
        assert q == 1 or 1 < q < 1 + Fraction(2) ** -50
        return r, y, dtype, rtol, atol
    raise AssertionError("no difference that float32 rounds found")


@probe(category="report", weight=2, check="reports_match_truth", hints=["float64-before-subtracting", "report-definition"])
def float32_differences_that_float32_cannot_hold(solution: Any) -> Any:
    """Stages of the probe's own with float32 and float16 outputs whose difference from the reference rounds or overflows in float32."""
    # Both values are taken to float64 before they are subtracted. Near the
    # float32 limit a difference of opposite signs overflows in float32
    # (max_abs is finite, about 6e38); and where |y| is orders of magnitude
    # below |r| with a tolerance near |r|, |y - r| in float32 rounds by up to
    # 6e-8 of itself, across a tolerance it is exactly on (within) or one
    # float64 unit above (out).
    cases: list[Case] = []
    rng = np.random.default_rng(140)

    # 1. opposite signs near the float32 limit: a stage with a very loose rtol is within, the others out
    inputs = token_batches(140, (2,), (1, 2))
    refs = [F32([3.1e38, -2.9e38, 1.5, 0.25]), F32([-3.3e38, 2.0e38, -0.75, 3.0e38])]
    flipped = [np.where(np.abs(r) > 1e30, -r, r).astype(F32) for r in refs]
    cases.append(
        (
            [
                table_stage("eager", inputs, one_output(*refs), 0.0, 0.0),
                table_stage("loose", inputs, one_output(*flipped), rtol=2.5, atol=1e-5),
                table_stage("fx", inputs, one_output(*flipped)),
                table_stage("onnx", inputs, one_output(*(f.astype(F64) for f in flipped))),
            ],
            inputs,
        )
    )

    # 2. one element far below its reference value, on its tolerance or a float64 unit inside it, per case
    for number in range(16):
        inputs = token_batches(141 + number, (3,), (2, 2))
        refs = [(rng.integers(-8, 9, size=(2, 3)) / 4.0).astype(F32) for _ in inputs]
        r, y, dtype, rtol, atol = difference_beyond_float32(rng)
        b, k = int(rng.integers(len(inputs))), int(rng.integers(refs[0].size))
        refs[b].reshape(-1)[k] = r
        ys = [x.astype(dtype) for x in refs]
        ys[b].reshape(-1)[k] = y
        assert sum(int(np.count_nonzero(x.astype(F64) != z)) for x, z in zip(ys, refs, strict=True)) == 1
        cases.append(
            (
                [
                    table_stage("eager", inputs, one_output(*refs), 0.0, 0.0),
                    table_stage("fx", inputs, one_output(*(x.copy() for x in refs))),
                    table_stage("onnx", inputs, one_output(*ys), rtol, atol),
                ],
                inputs,
            )
        )
    return judged_exactly(solution, cases)


class ReorderedStage(NamedTuple):
    """A stage as a NamedTuple whose fields come in another order than given/pipeline.py's Stage."""

    atol: float
    rtol: float
    run: Callable[..., tuple[np.ndarray, ...]]
    name: str


@dataclass(frozen=True)
class StageRecord:
    """A stage as a plain record: attributes only, no tuple."""

    name: str
    run: Callable[..., tuple[np.ndarray, ...]]
    rtol: float
    atol: float


class StageChain(Sequence[Any]):
    """A read-only sequence of stages that is neither a list nor a tuple (a slice is a StageChain too)."""

    def __init__(self, stages: Any) -> None:
        self._stages = tuple(stages)

    def __getitem__(self, i: Any) -> Any:
        return StageChain(self._stages[i]) if isinstance(i, slice) else self._stages[i]

    def __len__(self) -> int:
        return len(self._stages)


def observe_keeping(solution: Any, stages: Any, inputs: list[tuple[np.ndarray, ...]]) -> Any:
    """``observe``, and what is wrong if the call changed the sequence of stages it was given."""
    before = list(stages)
    report = observe(solution, stages, inputs)
    if len(stages) != len(before) or any(a is not b for a, b in zip(stages, before, strict=False)):
        return (
            f"find_drifting_stage changed the sequence of stages it was given: {len(before)} stages before the call, {len(stages)} after, or others"
        )
    return report


@probe(category="report", weight=2, check="reports_match_truth", hints=["stage-objects", "reference-first"])
def stages_in_any_sequence(solution: Any) -> Any:
    """Stages of the probe's own passed as a tuple, a list or another sequence, as objects of other types; the list is left as it was."""
    # Only the attributes .name, .run, .rtol and .atol are promised: a
    # SimpleNamespace, a dataclass or a NamedTuple with its fields in another
    # order cannot be unpacked as (name, run, rtol, atol). A tuple has no
    # pop(), and a list the caller passes must hold the same stages after
    # the call.
    rng = np.random.default_rng(150)

    def stages_of(seed: int) -> Case:
        inputs = token_batches(seed, (2, 3), (3, 2))
        refs = [rng.normal(0.0, 2.0, size=(4,)).astype(F32) for _ in inputs]
        signs = [rng.choice([-1.0, 1.0], size=(4,)) for _ in inputs]
        out = [nudged(r, 0.5 * s) for r, s in zip(refs, signs, strict=True)]
        out[1][2] = nudged(refs[1][2], 1.75)
        return (
            [
                table_stage("eager", inputs, one_output(*refs), 0.0, 0.0),
                table_stage("fx", inputs, one_output(*(nudged(r, 0.5 * s) for r, s in zip(refs, signs, strict=True)))),
                table_stage("onnx", inputs, one_output(*out), rtol=1e-3, atol=1e-4),
                table_stage("ort", inputs, one_output(*out)),
                table_stage("fp16", inputs, one_output(*(r.astype(F16) for r in refs)), rtol=1e-2, atol=2e-3),
            ],
            inputs,
        )

    wrapped: list[tuple[Any, list[tuple[np.ndarray, ...]]]] = []
    stages, inputs = stages_of(150)
    wrapped.append((tuple(SimpleNamespace(name=s.name, run=s.run, rtol=s.rtol, atol=s.atol) for s in stages), inputs))
    stages, inputs = stages_of(151)
    wrapped.append(([ReorderedStage(atol=s.atol, rtol=s.rtol, run=s.run, name=s.name) for s in stages], inputs))
    stages, inputs = stages_of(152)
    wrapped.append((StageChain(StageRecord(s.name, s.run, s.rtol, s.atol) for s in stages), inputs))
    stages, inputs = stages_of(153)
    wrapped.append((list(stages), inputs))  # given/pipeline.py's Stage, in a list that must be left as it was
    truth = [exact_report(list(stages), inputs) for stages, inputs in wrapped]
    return {"reports": [observe_keeping(solution, stages, inputs) for stages, inputs in wrapped], "truth": truth}


# ---------------------------------------------------------------- generated stage sequences
#
# Seeded families of stage sequences of the probes' own, each judged against
# the exact report. A case draws: two to seven stages with names from a
# pool (the reference called eager, or something else while a later stage
# is called eager); each stage's tolerance (dyadic, so that exact ties
# exist, or decimal as in the pipeline's table) and the dtype of each of its
# outputs (float16, float32, float64, mixed); one to three batches, some
# with no rows; one to three outputs of shapes with size-1 and 0-sized
# dimensions, or 0-d; and stages built from the stage before them or from an
# earlier one (a lineage branch), each copying its parent, moving it within
# its tolerance, creeping further in the same direction (drift that adds up
# across stages), jumping out at a few elements, going stale (the first
# batch's result for every batch), or producing NaN or inf. Marks then put
# single elements exactly on a stage's tolerance, or 1 to 3 rounding units
# of its dtype past or inside it. Stages may return cached arrays, shared
# with their parent, the same object twice, or read-only.

GEN_NAMES = (
    "fx", "aot", "inductor", "triton", "onnx", "ort", "ort-opt", "trt", "tvm", "xla", "iree", "fp16", "bf16", "int8",
    "qdq", "export", "lowered", "compiled", "cpu", "gpu", "torch", "ref", "golden", "jit", "tflite", "coreml", "stage2", "v1",
)  # fmt: skip
DYADIC_RTOL = (0.0, 2.0**-4, 2.0**-6, 2.0**-9, 2.0**-13, 2.0**-17)
DYADIC_ATOL = (2.0**-5, 2.0**-8, 2.0**-11, 2.0**-14, 2.0**-17)
DECIMAL_TOLERANCES = ((1e-5, 1e-5), (1e-3, 1e-4), (1.3e-6, 1e-5), (0.0, 1e-4), (1e-2, 2e-3), (1.6e-2, 1e-5))
PLAIN_TAILS = ((4,), (2, 3), (6,))
ANY_TAILS = ((), (), (1,), (1, 4), (4, 1), (1, 1, 3), (3, 1, 1), (0,), (2, 0), (5,), (2, 1, 2))
NEAR_ONE = 2.0**-20  # elements whose ratio is this close to 1 must be exact in every float64 step
MODES = ("copy", "within", "creep", "jump", "stale")
# Per family: how often each of MODES makes a stage, each stage's main dtype
# (float16, float32, float64), the chance a stage gets marks and how often
# a mark is a tie, past or inside it; the chance a stage is built from an
# earlier stage than the one before it, or holds a NaN or inf; the output
# shapes; the chance a batch may have no rows; how often arrays are shared,
# cached or read-only; and the chance a stage's tolerance is dyadic.
FAMILIES: dict[str, dict[str, Any]] = {
    # ties and rounding units past and inside them, in every dtype; few other drifts, so that they decide
    "boundaries": {
        "modes": (0.3, 0.45, 0.1, 0.1, 0.05),
        "precisions": (0.2, 0.3, 0.5),
        "marks": 0.9,
        "kinds": (0.35, 0.4, 0.25),
        "branch": 0.2,
        "nonfinite": 0.03,
        "tails": PLAIN_TAILS,
        "empty_rows": 0.0,
        "share": 0.1,
        "dyadic": 0.9,
    },
    # drift inherited, adding up, coming back, lineage branches, NaN and inf
    "lineages": {
        "modes": (0.15, 0.25, 0.4, 0.15, 0.05),
        "precisions": (0.25, 0.45, 0.3),
        "marks": 0.25,
        "kinds": (0.4, 0.3, 0.3),
        "branch": 0.4,
        "nonfinite": 0.12,
        "tails": PLAIN_TAILS,
        "empty_rows": 0.0,
        "share": 0.2,
        "dyadic": 0.5,
    },
    # every shape, dtype and way of returning arrays
    "shapes": {
        "modes": (0.3, 0.3, 0.15, 0.15, 0.1),
        "precisions": (0.25, 0.4, 0.35),
        "marks": 0.5,
        "kinds": (0.4, 0.3, 0.3),
        "branch": 0.3,
        "nonfinite": 0.06,
        "tails": ANY_TAILS,
        "empty_rows": 0.3,
        "share": 0.6,
        "dyadic": 0.7,
    },
}


def reference_values(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """float32 reference values: normal at a random scale, a grid of sixteenths (exact ties in float16), or both; some zeros."""
    normal = rng.normal(0.0, 10.0 ** rng.uniform(-2.0, 1.5), size=shape)
    grid = rng.integers(-48, 49, size=shape) / 16.0
    kind = int(rng.integers(3))
    values = normal if kind == 0 else grid if kind == 1 else np.where(rng.random(shape) < 0.5, grid, normal)
    return np.where(rng.random(shape) < 0.1, 0.0, values).astype(F32)


def near_one_is_exact(y: float, r: float, rtol: float, atol: float) -> bool:
    """Whether every float64 step of the statement's test is exact at (y, r), and the exact ratio is 1, below 1, or 2**-51 or more past it."""
    fy, fr = Fraction(y), Fraction(r)
    d, scaled = abs(fy - fr), Fraction(rtol) * abs(fr)
    d64, scaled64 = abs(y - r), rtol * abs(r)
    exact = Fraction(d64) == d and Fraction(scaled64) == scaled and Fraction(atol + scaled64) == Fraction(atol) + scaled
    exact = exact and Fraction(d64 - scaled64) == d - scaled
    q = d / (Fraction(atol) + scaled)
    return exact and (q <= 1 or q >= 1 + Fraction(2) ** -51)


def settle(y: np.ndarray, r: np.ndarray, rtol: float, atol: float) -> None:
    """Move, in place, every element of y whose verdict float64 rounding could change: to r in y's dtype, or a few units past it."""
    flat, r64 = y.reshape(-1), r.astype(F64).reshape(-1)
    assert np.shares_memory(flat, y) or y.size == 0

    def ambiguous(v: Any, rv: float) -> bool:
        q = abs(float(v) - rv) / (atol + rtol * abs(rv))
        return abs(q - 1.0) < NEAR_ONE and not near_one_is_exact(float(v), rv, rtol, atol)

    with np.errstate(invalid="ignore", over="ignore"):
        q = np.abs(flat.astype(F64) - r64) / (atol + rtol * np.abs(r64))
    for i in np.flatnonzero(np.abs(q - 1.0) < 2 * NEAR_ONE):
        rv = float(r64[i])
        if ambiguous(flat[i], rv):
            v = np.asarray(rv, dtype=y.dtype)[()]
            away = np.asarray(math.inf if float(v) >= rv else -math.inf, dtype=y.dtype)[()]
            while ambiguous(v, rv):
                v = np.nextafter(v, away)
            flat[i] = v


def mark(rng: np.random.Generator, y: np.ndarray, r: np.ndarray, rtol: float, atol: float, kinds: tuple[float, ...]) -> None:
    """Put one element of y exactly on the tolerance, or 1 to 3 rounding units of y's dtype past or inside it, if y's dtype holds it."""
    i = int(rng.integers(y.size))
    rv = float(r.reshape(-1)[i])
    sign = 1.0 if rng.random() < 0.5 else -1.0
    edge = Fraction(rv) + sign * (Fraction(atol) + Fraction(rtol) * abs(Fraction(rv)))
    value = np.asarray(float(edge), dtype=y.dtype)
    if not np.isfinite(value) or Fraction(float(value)) != edge:
        return
    kind = ("tie", "past", "inside")[int(rng.choice(3, p=kinds))]
    toward = np.asarray(sign * math.inf if kind == "past" else rv, dtype=y.dtype)
    for _ in range(0 if kind == "tie" else int(rng.integers(1, 4))):
        value = np.nextafter(value, toward)
    y.reshape(-1)[i] = value


def generated_case(rng: np.random.Generator, knobs: dict[str, Any]) -> Case:
    n = int(rng.integers(2, 8))
    names = [str(x) for x in rng.choice(GEN_NAMES, size=n, replace=False)]
    where = rng.random()
    if where < 0.35:
        names[int(rng.integers(1, n))] = "eager"  # a later stage is called eager; the reference is not
    elif where < 0.7:
        names[0] = "eager"

    rows = [int(rng.integers(0, 4)) if rng.random() < knobs["empty_rows"] else int(rng.integers(1, 4)) for _ in range(int(rng.integers(1, 4)))]
    inputs = [(rng.normal(size=(m, 3 + b)).astype(F32),) for b, m in enumerate(rows)]
    tails = [knobs["tails"][int(rng.integers(len(knobs["tails"])))] for _ in range(int(rng.integers(1, 4)))]
    batched = [bool(rng.random() < 0.6) for _ in tails]
    twice = len(tails) > 1 and rng.random() < knobs["share"] * 0.3  # the model returns its first output twice
    if twice:
        tails[1], batched[1] = tails[0], batched[0]
    shapes = [[((m,) if bat else ()) + tail for tail, bat in zip(tails, batched, strict=True)] for m in rows]

    def outputs_of(arrays: list[list[np.ndarray]]) -> list[tuple[np.ndarray, ...]]:
        return [tuple([outs[0], outs[0], *outs[2:]] if twice else outs) for outs in arrays]

    ref = [[reference_values(rng, shape) for shape in batch] for batch in shapes]
    stored = [outputs_of(ref)]  # per stage, per batch: the tuple of arrays it returns
    cached = [bool(twice)]
    signs = [[rng.choice([-1.0, 1.0], size=shape) for shape in batch] for batch in shapes]
    tolerances = [(0.0, 0.0)]
    same_shapes = all(s == shapes[0] for s in shapes)

    for s in range(1, n):
        parent = s - 1 if s == 1 or rng.random() > knobs["branch"] else int(rng.integers(0, s - 1))
        precision = (F16, F32, F64)[int(rng.choice(3, p=knobs["precisions"]))]
        if rng.random() < knobs["dyadic"]:
            rtol, atol = float(rng.choice(DYADIC_RTOL)), float(rng.choice(DYADIC_ATOL))
            if precision is F16:
                rtol, atol = max(rtol, 2.0**-6), max(atol, 2.0**-11)
        else:
            rtol, atol = DECIMAL_TOLERANCES[int(rng.integers(4, 6) if precision is F16 else rng.integers(4))]
        tolerances.append((rtol, atol))
        dtypes = [precision if rng.random() < 0.75 else (F16, F32, F64)[int(rng.integers(3))] for _ in tails]
        mode = MODES[int(rng.choice(len(MODES), p=knobs["modes"]))]
        if mode == "stale" and not (same_shapes and len(rows) > 1):
            mode = "within"
        scale = rng.uniform(0.05, 0.7)
        arrays: list[list[np.ndarray]] = []
        for b, batch in enumerate(shapes):
            outs = []
            for j, shape in enumerate(batch):
                base = stored[parent][b][j].astype(F64)
                r = ref[b][j].astype(F64)
                tol = atol + rtol * np.abs(r)
                if mode == "copy":
                    step = np.zeros(shape)
                elif mode == "creep":
                    step = signs[b][j] * rng.uniform(0.25, 0.6, size=shape)
                else:
                    step = rng.uniform(-1.0, 1.0, size=shape) * scale
                with np.errstate(invalid="ignore"):
                    outs.append(np.asarray(base + step * tol).astype(dtypes[j]))
            arrays.append(outs)
        if mode == "stale":
            arrays = [arrays[0]] * len(rows)
        filled = [(b, j) for b, batch in enumerate(shapes) for j, shape in enumerate(batch) if math.prod(shape) > 0 and not (twice and j == 1)]
        if filled and mode == "jump":
            for _ in range(int(rng.integers(1, 3))):
                b, j = filled[int(rng.integers(len(filled)))]
                k = int(rng.integers(arrays[b][j].size))
                r = float(ref[b][j].reshape(-1)[k])
                arrays[b][j].reshape(-1)[k] = r + rng.choice([-1.0, 1.0]) * rng.uniform(1.1, 30.0) * (atol + rtol * abs(r))
        if filled and rng.random() < knobs["marks"]:
            for _ in range(int(rng.integers(1, 4))):
                b, j = filled[int(rng.integers(len(filled)))]
                mark(rng, arrays[b][j], ref[b][j], rtol, atol, knobs["kinds"])
        for _ in range(2 if mode == "stale" else 1):  # a stale array is settled against every batch's reference
            for b, batch in enumerate(shapes):
                for j in range(len(batch)):
                    settle(arrays[b][j], ref[b][j], rtol, atol)
        if filled and rng.random() < knobs["nonfinite"]:
            b, j = filled[int(rng.integers(len(filled)))]
            arrays[b][j].reshape(-1)[int(rng.integers(arrays[b][j].size))] = rng.choice([math.nan, math.inf, -math.inf])
        is_cached = mode == "stale" or bool(twice)
        unchanged = all(
            a.dtype == p.dtype and np.array_equal(a, p, equal_nan=True)
            for batch, pb in zip(outputs_of(arrays), stored[parent], strict=True)
            for a, p in zip(batch, pb, strict=True)
        )
        if mode == "copy" and unchanged and rng.random() < knobs["share"]:
            outs_of_stage = stored[parent]  # the very arrays its parent returns
            cached[parent] = is_cached = True
        else:
            outs_of_stage = outputs_of(arrays)
        if rng.random() < knobs["share"] * 0.5:
            for batch in outs_of_stage:
                for a in batch:
                    a.flags.writeable = False
            is_cached = True
        stored.append(outs_of_stage)
        cached.append(is_cached)

    for outs_of_stage, (rtol, atol) in zip(stored[1:], tolerances[1:], strict=True):
        for ys, rs in zip(outs_of_stage, stored[0], strict=True):
            for y, r in zip(ys, rs, strict=True):
                assert y.shape == r.shape
                for yv, rv in zip(y.astype(F64).ravel().tolist(), r.astype(F64).ravel().tolist(), strict=True):
                    q = abs(yv - rv) / (atol + rtol * abs(rv))
                    assert not abs(q - 1.0) < NEAR_ONE or near_one_is_exact(yv, rv, rtol, atol), "float64 rounding could decide a verdict"
    stages = [
        table_stage(name, inputs, outs, rtol, atol, cached=c) for name, outs, (rtol, atol), c in zip(names, stored, tolerances, cached, strict=True)
    ]
    return stages, inputs


def generated_family(solution: Any, family: str, seed: int, count: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    return judged_exactly(solution, [generated_case(rng, FAMILIES[family]) for _ in range(count)])


GEN_CASES = 30


@probe(category="report", weight=2, check="reports_match_truth", hints=["boundary", "report-definition", "reference-first"])
def generated_boundaries(solution: Any) -> Any:
    """Generated stage sequences with elements exactly on their tolerance, or a few rounding units past or inside it, in every dtype."""
    return generated_family(solution, "boundaries", seed=2701, count=GEN_CASES)


@probe(category="report", weight=2, check="reports_match_truth", hints=["compare-to-eager", "own-tolerance", "nan-is-drift", "reference-first"])
def generated_lineages(solution: Any) -> Any:
    """Generated stage sequences whose drift is inherited, adds up across stages, comes back, branches, or turns into NaN or inf."""
    return generated_family(solution, "lineages", seed=2702, count=GEN_CASES)


@probe(category="report", weight=2, check="reports_match_truth", hints=["any-shape", "read-only-outputs", "every-output", "every-batch"])
def generated_shapes_and_sharing(solution: Any) -> Any:
    """Generated stage sequences with outputs of every shape (empty and 0-d too) and dtype, returned cached, shared or read-only."""
    return generated_family(solution, "shapes", seed=2703, count=GEN_CASES)


# ---------------------------------------------------------------- repeated calls (state kept across calls)
#
# One process, many calls: the same stages and inputs changed in place
# between calls, look-alikes with the same names, tolerances, shapes and
# dtypes, and objects freed and rebuilt at the ids of the freed ones. Every
# stage computes from the batch it is given and from its model's parameters
# as they are at that moment, so a memo keyed on anything that does not
# determine the outputs (an object's id, the object itself, a name, a shape,
# the inputs' bytes) returns an earlier call's numbers at one of the steps.

LIVE_ROWS, LIVE_D = 4, 6
# name, dtype of its outputs, rtol, atol, and whether it hands back the same output arrays at every call
# (a runtime's output buffers, refilled in place by each run)
LIVE_TABLE = (
    ("fx", F32, 1e-5, 1e-5, False),
    ("onnx", F32, 1e-5, 1e-5, True),
    ("ort", F64, 1e-5, 1e-5, False),
    ("fp16", F16, 1e-2, 2e-3, False),
)


class LiveModel:
    """Parameters the probe may change in place between calls.

    ``w`` scales the reference's outputs; ``moves[key]`` is how far a stage's
    outputs sit from the reference's, in units of that stage's own tolerance
    (never near 1, so float64 rounding cannot decide a verdict), with a fixed
    sign per element.
    """

    def __init__(self, seed: int, moves: dict[str, float]) -> None:
        rng = np.random.default_rng(seed)
        self.w = rng.uniform(0.5, 2.0, size=LIVE_D).astype(F32)
        self.moves = dict(moves)
        self.signs = {key: (rng.choice([-1.0, 1.0], size=(LIVE_ROWS, LIVE_D)), rng.choice([-1.0, 1.0], size=(LIVE_D, LIVE_ROWS))) for key in moves}

    def reference(self, x: np.ndarray) -> tuple[np.ndarray, ...]:
        """Two float32 outputs: x scaled by w, and x - w transposed (a view)."""
        return (x * self.w).astype(F32), (x - self.w).astype(F32).T

    def moved(self, key: str, x: np.ndarray, rtol: float, atol: float, dtype: Any) -> tuple[np.ndarray, ...]:
        outs = []
        for r, signs in zip(self.reference(x), self.signs[key], strict=True):
            r64 = r.astype(F64)
            outs.append((r64 + self.moves[key] * signs * (atol + rtol * np.abs(r64))).astype(dtype))
        return tuple(outs)


def live_stage(model: LiveModel, name: str, inputs: list[tuple[np.ndarray, ...]], key: str | None = None) -> "LiveStage":
    """The stage ``name`` of LIVE_TABLE, computed from ``model`` (``moves[key or name]``) at every call.

    A caching stage keeps one set of read-only output arrays per batch of
    ``inputs`` (found by identity) and refills them in place at every call.
    """
    _, dtype, rtol, atol, caching = next(row for row in LIVE_TABLE if row[0] == name)
    buffers: dict[int, tuple[np.ndarray, ...]] = {}

    def run(x: np.ndarray) -> tuple[np.ndarray, ...]:
        outs = model.moved(key or name, x, rtol, atol, dtype)
        slot = next((i for i, batch in enumerate(inputs) if batch[0] is x), None)
        if not caching or slot is None:
            return outs
        if slot not in buffers:
            buffers[slot] = tuple(read_only(o) for o in outs)
        for buffer, out in zip(buffers[slot], outs, strict=True):
            buffer.flags.writeable = True
            buffer[...] = out
            buffer.flags.writeable = False
        return tuple(buffers[slot])

    return LiveStage().fill(name, run, rtol, atol)


def live_pipeline(model: LiveModel, inputs: list[tuple[np.ndarray, ...]]) -> list[Any]:
    return [LiveStage().fill("eager", model.reference, 0.0, 0.0)] + [live_stage(model, row[0], inputs) for row in LIVE_TABLE]


def live_inputs(seed: int, count: int = 2) -> list[tuple[np.ndarray, ...]]:
    rng = np.random.default_rng(seed)
    return [(rng.normal(0.0, 1.5, size=(LIVE_ROWS, LIVE_D)).astype(F32),) for _ in range(count)]


def at_freed_ids(make: Callable[[], Any], freed: list[int]) -> list[Any]:
    """New objects from ``make()``, one per id in ``freed``, each, as a rule, at that id of a freed object.

    Objects that land elsewhere are kept alive until every id wanted has come
    up, so each try takes the next free slot of the allocator; after 4096
    tries the ids not found get objects elsewhere (adapted from
    register-autograd-for-custom-op's ``_clone_into_freed_id``). The caller
    fills each object in after it has its id: whichever freed slot comes up
    first serves whichever object was there.
    """
    found: dict[int, Any] = {}
    spare: list[Any] = []
    for _ in range(4096):
        if len(found) == len(freed):
            break
        fresh = make()
        if id(fresh) in freed and id(fresh) not in found:
            found[id(fresh)] = fresh
        else:
            spare.append(fresh)
    return [found[i] if i in found else spare.pop() for i in freed]


class LiveStage:
    """A stage as a plain object with the four attributes, filled in after it is made."""

    __slots__ = ("atol", "name", "rtol", "run")

    def fill(self, name: str, run: Callable[..., tuple[np.ndarray, ...]], rtol: float, atol: float) -> "LiveStage":
        self.name, self.run, self.rtol, self.atol = name, run, rtol, atol
        return self


def rebuild_at_freed_ids(live: dict[str, Any], model: LiveModel, values: list[np.ndarray]) -> dict[str, bool]:
    """Free the stages and inputs held in ``live`` and build new ones from ``model`` and ``values``, each object
    (input arrays, batch tuples, the inputs list, every stage and its run, the stages list) at the id of the one it
    replaces, as a rule; for each kind of object, whether every one took its id (they do when nothing else holds
    the freed ones)."""
    inputs, stages = live.pop("inputs"), live.pop("stages")
    freed_arrays, freed_batches, freed_inputs = [id(x) for (x,) in inputs], [id(b) for b in inputs], id(inputs)
    freed_stages, freed_runs, freed_list = [id(s) for s in stages], [id(s.run) for s in stages], id(stages)
    tolerances = [(s.name, s.rtol, s.atol) for s in stages]
    del inputs, stages
    live.pop("model")
    gc.collect()
    # the objects that are filled in after they are made come first, before anything else long-lived is allocated
    new_stages = at_freed_ids(LiveStage, freed_stages)
    inputs, stage_list = at_freed_ids(list, [freed_inputs, freed_list])
    shape, dtype = values[0].shape, values[0].dtype
    arrays = at_freed_ids(lambda: np.empty(shape, dtype), freed_arrays)
    for array, value in zip(arrays, values, strict=True):
        array[...] = value
    batches = [at_freed_ids(lambda a=a: (a,), [i])[0] for a, i in zip(arrays, freed_batches, strict=True)]
    inputs.extend(batches)
    runs = at_freed_ids(lambda: model.reference, freed_runs[:1])
    runs += [at_freed_ids(lambda n=n: live_stage(model, n, inputs).run, [i])[0] for (n, _, _), i in zip(tolerances[1:], freed_runs[1:], strict=True)]
    stage_list.extend(stage.fill(n, r, q, a) for stage, (n, q, a), r in zip(new_stages, tolerances, runs, strict=True))
    live.update(model=model, inputs=inputs, stages=stage_list)
    return {
        "input arrays": [id(x) for x in arrays] == freed_arrays,
        "stages": [id(s) for s in stage_list] == freed_stages,
        "lists": (id(inputs), id(stage_list)) == (freed_inputs, freed_list),
        "batch tuples": [id(b) for b in batches] == freed_batches,
        "runs": [id(r) for r in runs] == freed_runs,
    }


@probe(category="report", weight=2, check="reports_in_sequence_match_truth", hints=["state"])
def repeated_calls(solution: Any) -> Any:
    """Many calls in one process: stages and inputs changed in place between calls, look-alikes, objects rebuilt at freed ids."""
    # Each call is judged against the exact report worked out just before it
    # ("at each call"), and every report again once all calls have run
    # ("after all calls": a report that a later call reuses or clears changes
    # under its caller). The steps: parameters updated in place (the
    # reference and every stage move; a caching stage refills the same
    # read-only arrays), the input arrays refilled in place, a stage of the
    # caller's list replaced; new stages with the same names and tolerances
    # on inputs equal to the earlier ones, then on other inputs of the same
    # shapes; and twice, everything freed and rebuilt at the freed ids.
    labels: list[str] = []
    returned: list[Any] = []
    at_call: list[Any] = []
    truth: list[Any] = []

    def call(label: str, stages: list[Stage], inputs: list[tuple[np.ndarray, ...]]) -> None:
        truth.append(exact_report(stages, inputs))
        report = solution.find_drifting_stage(stages, inputs)
        labels.append(label)
        returned.append(report)
        at_call.append(plain_report(report))

    model = LiveModel(900, {"fx": 0.3, "onnx": 0.6, "ort": 2.5, "fp16": 0.5, "fx-replaced": 2.0})
    inputs = live_inputs(901)
    stages = live_pipeline(model, inputs)
    call("first call", stages, inputs)

    model.w[...] = LiveModel(902, {}).w  # a parameter update: the reference moves, and every stage with it
    model.moves.update({"fx": 1.6, "onnx": 0.4, "ort": 0.7, "fp16": 3.0})
    call("parameters updated in place", stages, inputs)

    for k, (x,) in enumerate(inputs):  # a loader refilling its buffers with the next batches
        x[...] = live_inputs(903 + k, 1)[0][0]
    model.moves.update({"fx": 0.2, "onnx": 2.5})
    call("input arrays refilled in place", stages, inputs)

    stages[1] = live_stage(model, "fx", inputs, key="fx-replaced")  # the caller's list, edited
    call("a stage of the same list replaced", stages, inputs)

    look_alike = [(x.copy(),) for (x,) in inputs]
    other = LiveModel(905, {"fx": 0.5, "onnx": 0.3, "ort": 0.1, "fp16": 1.4})
    stages_b = live_pipeline(other, look_alike)
    call("new stages of the same names on equal inputs", stages_b, look_alike)

    live = {"model": LiveModel(907, {"fx": 2.2, "onnx": 0.8, "ort": 0.0, "fp16": 0.6}), "inputs": live_inputs(906)}
    live["stages"] = live_pipeline(live["model"], live["inputs"])
    call("new stages of the same names on new inputs of the same shapes", live["stages"], live["inputs"])
    del model, inputs, stages, look_alike, other, stages_b

    taken = []
    for round_ in range(2):
        new_model = LiveModel(910 + 2 * round_, {"fx": 0.4, "onnx": 1.8 - 1.5 * round_, "ort": 0.9, "fp16": 0.2 + 2.5 * round_})
        taken.append(rebuild_at_freed_ids(live, new_model, [x for (x,) in live_inputs(911 + 2 * round_)]))
        del new_model
        call(f"everything freed and rebuilt at the same ids, round {round_ + 1}", live["stages"], live["inputs"])

    return {
        "steps": labels,
        "at each call": at_call,
        "after all calls": [plain_report(report) for report in returned],
        "truth": truth,
        # in the reference's run the check requires that the input arrays, the stages and both lists took the ids
        # of the freed ones in some round (the other kinds are ids a candidate might key on, not required)
        "freed ids taken": all(any(t[kind] for t in taken) for kind in ("input arrays", "stages", "lists")),
    }


# ---------------------------------------------------------------- red team round 3
#
# Inputs the statement allows that no probe above builds: a sequence of
# stages that takes no slices, a pipeline of the reference alone, a stage
# whose name is the empty string, a call by keyword, batches whose inputs
# and outputs differ in shape from one batch to the next (two of them with
# the same bytes), and finite outputs whose sum overflows their dtype.


class IndexOnlyChain(Sequence[Any]):
    """A read-only sequence of stages that takes integer positions only, no slices (as collections.deque)."""

    def __init__(self, stages: Any) -> None:
        self._stages = tuple(stages)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            raise TypeError("sequence index must be integer, not 'slice'")
        return self._stages[operator.index(i)]

    def __len__(self) -> int:
        return len(self._stages)


def four_stage_case(seed: int, names: tuple[str, ...] = ("eager", "fx", "onnx", "fp16")) -> Case:
    """Two batches of one output; the second stage is out (at one element of the second batch), the others within."""
    rng = np.random.default_rng(seed)
    inputs = token_batches(seed, (2, 3), (3, 3))
    refs = [rng.normal(0.0, 2.0, size=(5,)).astype(F32) for _ in inputs]
    signs = [rng.choice([-1.0, 1.0], size=(5,)) for _ in inputs]
    out = [nudged(r, 0.5 * s) for r, s in zip(refs, signs, strict=True)]
    out[1][3] = nudged(refs[1][3], -2.25)
    return (
        [
            table_stage(names[0], inputs, one_output(*refs), 0.0, 0.0),
            table_stage(names[1], inputs, one_output(*(nudged(r, 0.25 * s) for r, s in zip(refs, signs, strict=True)))),
            table_stage(names[2], inputs, one_output(*out), rtol=1e-5, atol=1e-5),
            table_stage(names[3], inputs, one_output(*(r.astype(F16) for r in refs)), rtol=1e-2, atol=2e-3),
        ],
        inputs,
    )


@probe(category="report", weight=2, check="reports_match_truth", hints=["stage-objects"])
def stages_in_sequences_without_slices(solution: Any) -> Any:
    """Stages handed over in a collections.deque and in a sequence that takes integer positions only, left as they were."""
    # Both are collections.abc.Sequence: len, integer positions and
    # iteration, but no slices (``stages[1:]`` raises TypeError).
    wrapped: list[tuple[Any, list[tuple[np.ndarray, ...]]]] = []
    stages, inputs = four_stage_case(160)
    wrapped.append((collections.deque(stages), inputs))
    stages, inputs = four_stage_case(161, ("golden", "eager", "ort", "fp16"))
    wrapped.append((IndexOnlyChain(SimpleNamespace(name=s.name, run=s.run, rtol=s.rtol, atol=s.atol) for s in stages), inputs))
    truth = [exact_report(list(stages), inputs) for stages, inputs in wrapped]
    return {"reports": [observe_keeping(solution, stages, inputs) for stages, inputs in wrapped], "truth": truth}


@probe(category="report", weight=2, check="reports_match_truth", hints=["reference-first", "report-definition"])
def pipeline_of_the_reference_alone(solution: Any) -> Any:
    """Stage sequences that hold the reference only (a list, a tuple, another sequence): no stage after it, so no entry and no first."""
    # Every one of them takes slices: a sequence that does not is stages_in_sequences_without_slices' business.
    cases: list[tuple[Any, list[tuple[np.ndarray, ...]]]] = []
    for seed, wrap in ((170, list), (171, tuple), (172, StageChain)):
        stages, inputs = four_stage_case(seed)
        cases.append((wrap(stages[:1]), inputs))
    truth = [exact_report(list(stages), inputs) for stages, inputs in cases]
    return {"reports": [observe_keeping(solution, stages, inputs) for stages, inputs in cases], "truth": truth}


@probe(category="report", weight=2, check="reports_match_truth", hints=["reference-first", "report-definition"])
def stage_named_by_the_empty_string(solution: Any) -> Any:
    """A stage whose unique name is the empty string: out of tolerance before another stage is, or within it."""
    cases = []
    stages, inputs = four_stage_case(180, ("eager", "fx", "", "fp16"))  # "" is the first out, and a later stage is out too
    stages.append(table_stage("ort", inputs, [stages[2].run(*b) for b in inputs]))
    cases.append((stages, inputs))
    cases.append(four_stage_case(181, ("", "fx", "onnx", "fp16")))  # the reference is called ""
    cases.append(four_stage_case(182, ("eager", "", "onnx", "fp16")))  # "" within, then onnx out
    stages, inputs = four_stage_case(183, ("eager", "onnx", "", "fx"))  # onnx out, "" out after it
    stages[1] = table_stage("onnx", inputs, [tuple(o + 1.0 for o in stages[0].run(*b)) for b in inputs])
    cases.append((stages, inputs))
    return judged_exactly(solution, cases)


@probe(category="report", weight=2, check="reports_match_truth", hints=["signature"])
def called_with_keyword_arguments(solution: Any) -> Any:
    """find_drifting_stage called by keyword, find_drifting_stage(stages=..., inputs=...), as the statement writes it."""
    cases = [four_stage_case(190), four_stage_case(191, ("ref", "fx", "onnx", "eager"))]
    truth = [exact_report(stages, inputs) for stages, inputs in cases]
    reports = [plain_report(solution.find_drifting_stage(stages=stages, inputs=inputs)) for stages, inputs in cases[:1]]
    reports += [plain_report(solution.find_drifting_stage(inputs=inputs, stages=stages)) for stages, inputs in cases[1:]]
    return {"reports": reports, "truth": truth}


@probe(category="report", weight=2, check="reports_match_truth", hints=["any-shape", "every-batch"])
def batches_of_different_shapes(solution: Any) -> Any:
    """Batches whose inputs and outputs differ in shape from one batch to the next: other lengths, other numbers of dimensions."""
    rng = np.random.default_rng(200)
    cases: list[Case] = []
    for seed, drifted in ((200, 1), (201, 2), (202, 0)):
        inputs = token_batches(seed, (2, 3), (2, 5), (4,))
        # per batch, two outputs: the input's shape, and a shape of its own ((3,), (5, 1), 0-d)
        ref = [
            (np.array(rng.normal(size=x.shape), dtype=F32), np.array(rng.normal(size=tail), dtype=F32))
            for (x,), tail in zip(inputs, ((3,), (5, 1), ()), strict=True)
        ]
        signs = [tuple(np.array(rng.choice([-1.0, 1.0], size=r.shape)) for r in outs) for outs in ref]
        within = [tuple(np.array(nudged(r, 0.5 * s), dtype=F64) for r, s in zip(outs, ss, strict=True)) for outs, ss in zip(ref, signs, strict=True)]
        out = [tuple(o.copy() for o in outs) for outs in within]
        j = int(rng.integers(2))
        out[drifted][j].reshape(-1)[-1] = nudged(ref[drifted][j].reshape(-1)[-1], 3.5)
        cases.append(
            (
                [
                    table_stage("eager", inputs, ref, 0.0, 0.0),
                    table_stage("fx", inputs, within),
                    table_stage("onnx", inputs, [tuple(o.astype(F32) for o in outs) for outs in out], rtol=1e-4, atol=1e-4),
                    table_stage("ort", inputs, out),
                    table_stage("fp16", inputs, [tuple(r.astype(F16) for r in outs) for outs in ref], rtol=1e-2, atol=2e-3),
                ],
                inputs,
            )
        )
    return judged_exactly(solution, cases)


@probe(category="report", weight=2, check="reports_match_truth", hints=["every-batch", "state"])
def batches_with_the_same_bytes(solution: Any) -> Any:
    """Batches alike in bytes but not in shape: zeros of (2, 3) and (3, 2), one array reshaped, two inputs split differently."""
    rng = np.random.default_rng(210)
    grid = np.arange(6, dtype=F32)
    batch_sets = [
        [(np.zeros((2, 3), F32),), (np.zeros((3, 2), F32),)],
        [(grid.reshape(2, 3),), (grid.reshape(6),), (grid.reshape(3, 2).copy(),)],
        [(grid[:2].copy(), grid[2:].copy()), (grid[:4].copy(), grid[4:].copy())],
    ]
    cases: list[Case] = []
    for inputs in batch_sets:
        ref = [(rng.normal(size=(len(b[0]),)).astype(F32),) for b in inputs]
        signs = [rng.choice([-1.0, 1.0], size=r.shape) for (r,) in ref]
        within = [(nudged(r, 0.5 * s),) for (r,), s in zip(ref, signs, strict=True)]
        out = [(y.copy(),) for (y,) in within]
        out[-1][0][0] = nudged(ref[-1][0][0], -4.0)  # only the last batch shows the drift
        cases.append(
            (
                [
                    table_stage("eager", inputs, ref, 0.0, 0.0),
                    table_stage("fx", inputs, within),
                    table_stage("onnx", inputs, out),
                    table_stage("fp16", inputs, [(r.astype(F16),) for (r,) in ref], rtol=1e-2, atol=2e-3),
                ],
                inputs,
            )
        )
    return judged_exactly(solution, cases)


@probe(category="report", weight=2, check="reports_match_truth", hints=["finite-values", "report-definition"])
def finite_outputs_whose_sum_overflows(solution: Any) -> Any:
    """Finite outputs near the top of their dtype's range, whose sum (in that dtype, or in float64) overflows: they are not NaN or inf."""
    rng = np.random.default_rng(220)
    inputs = token_batches(220, (2, 3), (3, 3))
    cases: list[Case] = []
    # float16 values near 40000: each finite and within its tolerance, their float16 sum is inf
    refs = [rng.uniform(30000.0, 60000.0, size=(8,)).astype(F32) for _ in inputs]
    drifted = [r.astype(F16) for r in refs]
    drifted[1][5] = np.float16(refs[1][5] * 1.03)
    cases.append(
        (
            [
                table_stage("eager", inputs, one_output(*refs), 0.0, 0.0),
                table_stage("fp16", inputs, one_output(*(r.astype(F16) for r in refs)), rtol=1e-2, atol=2e-3),
                table_stage("fp16-drift", inputs, one_output(*drifted), rtol=1e-2, atol=2e-3),
            ],
            inputs,
        )
    )
    # float32 values near 3e38: within 1e-5 of the reference, their float32 sum is inf
    refs = [(rng.uniform(2.0, 3.3, size=(6,)) * 1e38).astype(F32) for _ in inputs]
    cases.append(
        (
            [
                table_stage("eager", inputs, one_output(*refs), 0.0, 0.0),
                table_stage("fx", inputs, one_output(*(nudged(r, 0.5).astype(F32) for r in refs))),
                table_stage("onnx", inputs, one_output(*(r.copy() for r in refs))),
            ],
            inputs,
        )
    )
    # float64 values near 1e308, far out but finite: so are |y - r| and the ratio, while their float64 sum is inf
    refs = [(rng.uniform(1.0, 3.0, size=(4,)) * 1e38).astype(F32) for _ in inputs]
    far = [np.array([1.2e308, 1.5e308, 1.1e308, 1.6e308]) for _ in refs]
    cases.append(
        (
            [
                table_stage("eager", inputs, one_output(*refs), 0.0, 0.0),
                table_stage("fx", inputs, one_output(*(nudged(r, 0.25).astype(F32) for r in refs))),
                table_stage("onnx", inputs, one_output(*far), rtol=1e-2, atol=2e-3),
                table_stage("fp16", inputs, one_output(*(np.full(r.shape, 6e4, F16) for r in refs)), rtol=1e-2, atol=2e-3),
            ],
            inputs,
        )
    )
    return judged_exactly(solution, cases)


class OffsetHead(nn.Module):
    """LayerNorm then Linear whose bias sits near 100: every output near 100, healthy in float16 (spacing 0.0625)."""

    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(D)
        self.proj = nn.Linear(D, D)
        with torch.no_grad():
            self.proj.bias.add_(100.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(self.norm(x))


@probe(category="report", weight=2, check="report_matches", hints=["finite-values", "own-tolerance"])
def report_healthy_outputs_near_100(solution: Any) -> Any:
    """A healthy pipeline whose outputs sit near 100: the float16 stage is finite and within, though its outputs' float16 sum overflows."""
    return case(solution, OffsetHead, 230, PLAIN)


# ---------------------------------------------------------------- red team round 4
#
# A call that changes the caller's process (torch's default dtype, grad
# mode, thread count, NumPy's error handling ...) and does not put it back;
# a stage not run on a batch once its numbers are settled; outputs that
# overflow to infinity (no NaN) and finite outputs beyond a narrower
# dtype's range; a batch of zero rows whose outputs still have elements;
# and an output with no elements before one that drifts.


def subnormals_work() -> bool:
    """Whether float32 arithmetic on subnormal numbers still gives subnormal results (no flush-to-zero)."""
    tiny = torch.full((8,), 1e-40, dtype=torch.float32)
    return bool(((tiny * 1.0) != 0).all())


def process_settings() -> dict[str, Any]:
    """The process-wide settings of torch and NumPy a call must leave as it found them (read only: each probe runs in a
    process of its own). The random generators are left out: the statement asks nothing of them."""
    return {
        "torch default dtype": str(torch.get_default_dtype()),
        "torch default device": str(torch.get_default_device()),
        "torch number of threads": torch.get_num_threads(),
        "torch grad mode": torch.is_grad_enabled(),
        "torch inference mode": torch.is_inference_mode_enabled(),
        "torch deterministic algorithms": [torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()],
        "torch deterministic debug mode": torch.get_deterministic_debug_mode(),
        "torch anomaly detection": torch.is_anomaly_enabled(),
        "torch float32 matmul precision": torch.get_float32_matmul_precision(),
        "torch subnormal arithmetic": subnormals_work(),
        "torch warn-always": torch.is_warn_always_enabled(),
        "torch print options": {k: repr(v) for k, v in sorted(vars(torch._tensor_str.PRINT_OPTS).items())},
        "numpy error handling": dict(sorted(np.geterr().items())),
        "numpy print options": {k: repr(v) for k, v in sorted(np.get_printoptions().items())},
    }


# What a fresh interpreter has (the number of threads depends on the host, and is left out).
PROCESS_DEFAULTS = {
    "torch default dtype": "torch.float32",
    "torch default device": "cpu",
    "torch grad mode": True,
    "torch inference mode": False,
    "torch deterministic algorithms": [False, False],
    "torch deterministic debug mode": 0,
    "torch anomaly detection": False,
    "torch float32 matmul precision": "highest",
    "torch subnormal arithmetic": True,
    "torch warn-always": False,
    "numpy error handling": {"divide": "warn", "invalid": "warn", "over": "warn", "under": "ignore"},
}


def settings_changed(before: dict[str, Any]) -> list[str]:
    """The names of the settings that differ now from ``before`` (nothing is put back)."""
    now = process_settings()
    return [name for name in before if now[name] != before[name]]


@probe(category="report", weight=2, check="reports_and_process_as_found", hints=["process-state"])
def process_left_as_found(solution: Any) -> Any:
    """Two calls in one process, the second on a pipeline built after the first: reports right, torch and NumPy settings as each call found them."""
    # A call that sets torch's default dtype to float64 and leaves it so gets
    # its own report right, but the next model the caller builds has float64
    # parameters, and its pipeline cannot run on float32 inputs. The same for
    # grad mode switched off, one thread, NumPy's warnings silenced: none of
    # it may outlive the call (context managers put it back).
    at_start = sorted(name for name, value in PROCESS_DEFAULTS.items() if process_settings()[name] != value)
    torch.set_num_threads(2)  # not what a solution would set, so that a call setting one thread (or two) shows
    steps: list[Any] = []
    for cls, seed, specs, drift in ((MLPBlock, 240, PLAIN, ORT_GELU), (TwoHeads, 241, OFFSET_LAST, FX_GELU)):
        inputs = batches(seed, *specs)
        try:
            stages = build_pipeline(build(cls, seed), inputs[0], **drift)
            stages[0].run(*inputs[0])
        except Exception as exc:  # noqa: BLE001 - what the last call left behind broke the caller's next pipeline
            steps.append({"report": f"a pipeline built after the call could not be built or run ({type(exc).__name__})", "changed": []})
            break
        before = process_settings()
        report = observe(solution, stages, inputs)
        steps.append({"report": report, "changed": settings_changed(before)})
    return {"changed before any call": at_start, "steps": steps}


class CountedStage:
    """A stage that counts its runs on each batch of its case (found by shape and values)."""

    def __init__(self, stage: Stage, inputs: list[tuple[np.ndarray, ...]]) -> None:
        self.name, self.rtol, self.atol = stage.name, stage.rtol, stage.atol
        self._run = stage.run
        self._index = {batch_key(b): i for i, b in enumerate(inputs)}
        self.runs = [0] * len(inputs)

    def run(self, *batch: np.ndarray) -> tuple[np.ndarray, ...]:
        self.runs[self._index[batch_key(batch)]] += 1
        return self._run(*batch)


@probe(category="report", weight=2, check="reports_and_runs_match_truth", hints=["every-batch", "nan-is-drift"])
def every_stage_runs_on_every_batch(solution: Any) -> Any:
    """Stages of the probe's own that count their runs: every stage, the reference too, runs on every batch, also after its numbers are settled."""
    # A stage whose first batch gives NaN has both numbers inf whatever the
    # later batches give, and a stage out at its first batch is out: the
    # report is the same if the remaining batches are not run, but the
    # statement says run every stage on every batch. So is a batch of zero
    # rows run: its outputs can still have elements.
    rng = np.random.default_rng(250)
    cases: list[Case] = []

    # 1. fx is NaN at the first batch, onnx inf at the second, ort out at the first, fp16 within
    inputs = token_batches(250, (2, 4), (3, 4), (4, 4))
    refs = [rng.normal(0.0, 2.0, size=(5,)).astype(F32) for _ in inputs]
    fx = [nudged(r, 0.5) for r in refs]
    fx[0][2] = np.nan
    onnx = [nudged(r, -0.5) for r in refs]
    onnx[1][0] = np.inf
    ort = [nudged(r, 0.25) for r in refs]
    ort[0][4] = nudged(refs[0][4], 3.0)
    cases.append(
        (
            [
                table_stage("eager", inputs, one_output(*refs), 0.0, 0.0),
                table_stage("fx", inputs, one_output(*fx)),
                table_stage("onnx", inputs, one_output(*onnx)),
                table_stage("ort", inputs, one_output(*ort)),
                table_stage("fp16", inputs, one_output(*(r.astype(F16) for r in refs)), rtol=1e-2, atol=2e-3),
            ],
            inputs,
        )
    )

    # 2. two outputs; a batch of zero rows in the middle, whose pooled output has elements; fx NaN in the last batch only
    inputs = token_batches(251, (3, 4), (0, 4), (2, 4))
    refs = [(rng.normal(size=(len(x), 4)).astype(F32), rng.normal(size=(4,)).astype(F32)) for (x,) in inputs]
    within = [tuple(nudged(o, 0.5) for o in outs) for outs in refs]
    fx = [tuple(o.copy() for o in outs) for outs in within]
    fx[2][1][3] = np.nan
    onnx = [tuple(o.copy() for o in outs) for outs in within]
    onnx[1] = (onnx[1][0], nudged(refs[1][1], 2.5))
    cases.append(
        (
            [
                table_stage("golden", inputs, refs, 0.0, 0.0),
                table_stage("fx", inputs, fx),
                table_stage("onnx", inputs, onnx),
                table_stage("eager", inputs, within),
            ],
            inputs,
        )
    )
    truth = [exact_report(stages, inputs) for stages, inputs in cases]
    counted = [([CountedStage(s, inputs) for s in stages], inputs) for stages, inputs in cases]
    reports = [observe(solution, stages, inputs) for stages, inputs in counted]
    return {"reports": reports, "truth": truth, "runs": [[s.runs for s in stages] for stages, _ in counted]}


@probe(category="report", weight=2, check="reports_match_truth", hints=["nan-is-drift", "report-definition"])
def outputs_that_overflow_to_infinity(solution: Any) -> Any:
    """Stages of the probe's own whose outputs overflow to +inf or -inf, with no NaN: both numbers are inf, reported as inf."""
    # float16 stops at 65504: a float16 stage of a model whose activations
    # reach 7e4 returns inf there, and float32 stops near 3.4e38. Cleaning
    # the difference with np.nan_to_num, or clipping it, reports a finite
    # number for an infinite one.
    rng = np.random.default_rng(260)
    cases: list[Case] = []

    # 1. activations near 6e4 to 1e5: the float16 stage holds +inf and -inf, a clipped one does not
    inputs = token_batches(260, (2, 3), (3, 3))
    refs = [(rng.uniform(5e4, 1e5, size=(6,)) * rng.choice([-1.0, 1.0], size=(6,))).astype(F32) for _ in inputs]
    refs[0][0], refs[1][1] = 7.5e4, -9e4
    fp16 = [r.astype(F16) for r in refs]
    assert all(np.isinf(y).any() and not np.isnan(y).any() for y in fp16)
    cases.append(
        (
            [
                table_stage("eager", inputs, one_output(*refs), 0.0, 0.0),
                table_stage("onnx", inputs, one_output(*(nudged(r, 0.5) for r in refs))),
                table_stage("fp16", inputs, one_output(*fp16), rtol=1e-2, atol=2e-3),
                table_stage("fp16-clipped", inputs, one_output(*(np.clip(r, -65504, 65504).astype(F16) for r in refs)), rtol=1e-2, atol=2e-3),
            ],
            inputs,
        )
    )

    # 2. float32 near its limit: one stage overflows to +inf at a single element of the last batch, of the second output
    inputs = token_batches(261, (4,), (2, 2), (1, 4))
    refs = [(rng.normal(size=(3,)).astype(F32), (rng.uniform(1.0, 3.0, size=(2, 2)) * 1e38).astype(F32)) for _ in inputs]
    over = [(a.copy(), b.copy()) for a, b in refs]
    over[2][1][1, 0] = np.float32(np.inf)
    cases.append(
        (
            [
                table_stage("eager", inputs, refs, 0.0, 0.0),
                table_stage("fx", inputs, [tuple(nudged(o, -0.5) for o in outs) for outs in refs]),
                table_stage("ort", inputs, over),
                table_stage("fp16", inputs, [(a.astype(F16), np.full(b.shape, 6e4, F16)) for a, b in refs], rtol=1e-2, atol=2e-3),
            ],
            inputs,
        )
    )

    # 3. -inf only, in a float64 output of the first batch; the stage after it is within
    inputs = token_batches(262, (2, 2), (2, 3))
    refs = [rng.normal(0.0, 3.0, size=(2, 2)).astype(F32) for _ in inputs]
    neg = [nudged(r, 0.5) for r in refs]
    neg[0][1, 1] = -np.inf
    cases.append(
        (
            [
                table_stage("reference", inputs, one_output(*refs), 0.0, 0.0),
                table_stage("onnx", inputs, one_output(*neg)),
                table_stage("ort", inputs, one_output(*(nudged(r, -0.75) for r in refs))),
            ],
            inputs,
        )
    )
    return judged_exactly(solution, cases)


@probe(category="report", weight=2, check="reports_match_truth", hints=["finite-values", "report-definition"])
def finite_outputs_beyond_a_narrower_range(solution: Any) -> Any:
    """Finite outputs beyond a narrower dtype's range: float64 values past float32's largest, float32 values past float16's. They are not inf."""
    # Testing finiteness on an output cast to float32 (the reference's
    # dtype) or to float16 turns these finite values into inf.
    rng = np.random.default_rng(270)
    top = float(np.finfo(F32).max)
    cases: list[Case] = []

    # 1. float64 outputs past 3.4e38: within their tolerance at the very top of float32's range, or far out but finite
    inputs = token_batches(270, (2, 3), (3, 2))
    refs = [np.array([top, -top, 1.0, 2.5e38], F32), np.array([-1.5, top, 3e38, -2e38], F32)]
    within = [nudged(r, np.where(r < 0, -0.5, 0.5)) for r in refs]
    assert all(np.isinf(y.astype(F32)).any() and np.isfinite(y).all() for y in within)
    far = [r.astype(F64) * np.array([4.0, 1.0, 1.0, 1e5]) for r in refs]
    far[1][3] = 1e300
    cases.append(
        (
            [
                table_stage("eager", inputs, one_output(*refs), 0.0, 0.0),
                table_stage("fx", inputs, one_output(*within)),
                table_stage("onnx", inputs, one_output(*far), rtol=1e-2, atol=2e-3),
                table_stage("ort", inputs, one_output(*(r.copy() for r in refs))),
            ],
            inputs,
        )
    )

    # 2. float32 outputs between 7e4 and 3e5, past float16's 65504: within their tolerance, and one stage out
    inputs = token_batches(271, (4,), (2, 2))
    refs = [(rng.uniform(7e4, 3e5, size=(2, 3)) * rng.choice([-1.0, 1.0], size=(2, 3))).astype(F32) for _ in inputs]
    out = [nudged(r, 0.5).astype(F32) for r in refs]
    out[1][0, 2] = nudged(refs[1][0, 2], -8.0)
    cases.append(
        (
            [
                table_stage("eager", inputs, one_output(*refs), 0.0, 0.0),
                table_stage("fx", inputs, one_output(*(nudged(r, -0.5).astype(F32) for r in refs)), rtol=1e-4, atol=1e-4),
                table_stage("onnx", inputs, one_output(*out), rtol=1e-4, atol=1e-4),
                table_stage("fp16", inputs, one_output(*(nudged(r, 0.5) for r in refs)), rtol=1e-2, atol=2e-3),
            ],
            inputs,
        )
    )
    return judged_exactly(solution, cases)


@probe(category="report", weight=2, check="reports_match_truth", hints=["any-shape", "every-batch"])
def batch_of_zero_rows_with_outputs(solution: Any) -> Any:
    """Stages of the probe's own run on a batch of zero rows whose outputs still have elements (a sum over rows plus a bias): the drift is there."""
    # An input with no elements does not make a batch with nothing to
    # compare: a pooled output, a bias, a count have elements. Skipping such
    # a batch misses what its outputs show.
    rng = np.random.default_rng(280)
    cases: list[Case] = []
    for seed, rows, drifted in ((280, (3, 0, 2), 1), (281, (0, 4), 0), (282, (2, 0), 1)):
        inputs = token_batches(seed, *((n, 4) for n in rows))
        bias = rng.normal(size=(4,)).astype(F32)
        refs = [((x.sum(axis=0) + bias).astype(F32), (x * 2.0).astype(F32)) for (x,) in inputs]
        within = [tuple(nudged(o, 0.5) for o in outs) for outs in refs]
        onnx = [tuple(o.copy() for o in outs) for outs in within]
        onnx[drifted][0][2] = nudged(refs[drifted][0][2], 4.0)
        fp16 = [tuple(o.astype(F16) for o in outs) for outs in refs]
        fp16[drifted][0][0] = np.nan if seed == 281 else fp16[drifted][0][0]
        cases.append(
            (
                [
                    table_stage("eager", inputs, refs, 0.0, 0.0),
                    table_stage("fx", inputs, within),
                    table_stage("onnx", inputs, onnx),
                    table_stage("fp16", inputs, fp16, rtol=1e-2, atol=2e-3),
                ],
                inputs,
            )
        )
    return judged_exactly(solution, cases)


@probe(category="report", weight=2, check="reports_match_truth", hints=["any-shape", "every-output"])
def empty_output_before_a_drifted_one(solution: Any) -> Any:
    """Stages of the probe's own whose outputs with no elements come before outputs that drift, in the same batch."""
    # An output with no elements has nothing to compare, and the outputs
    # after it in the same batch still do: leaving the batch's loop there
    # (break for continue) misses them.
    rng = np.random.default_rng(290)
    cases: list[Case] = []

    # 1. outputs (0, 3) then (4,): onnx out in the second output of the second batch
    inputs = token_batches(290, (2, 2), (3, 2))
    refs = [(np.zeros((0, 3), F32), rng.normal(size=(4,)).astype(F32)) for _ in inputs]
    within = [(e.copy(), nudged(r, 0.5)) for e, r in refs]
    onnx = [(e.copy(), y.copy()) for e, y in within]
    onnx[1][1][2] = nudged(refs[1][1][2], -3.0)
    cases.append(
        (
            [
                table_stage("eager", inputs, refs, 0.0, 0.0),
                table_stage("fx", inputs, within),
                table_stage("onnx", inputs, onnx),
                table_stage("ort", inputs, [(e.copy(), y.copy()) for e, y in within]),
            ],
            inputs,
        )
    )

    # 2. three outputs, the middle one (2, 0): fx out in the third, ort NaN in the third
    inputs = token_batches(291, (4,), (2, 3))
    refs = [(rng.normal(size=(3,)).astype(F32), np.zeros((2, 0), F32), rng.normal(size=(2, 2)).astype(F32)) for _ in inputs]
    within = [tuple(nudged(o, -0.5) for o in outs) for outs in refs]
    fx = [tuple(o.copy() for o in outs) for outs in within]
    fx[0][2][1, 1] = nudged(refs[0][2][1, 1], 2.0)
    ort = [tuple(o.copy() for o in outs) for outs in within]
    ort[1][2][0, 0] = np.nan
    cases.append(
        (
            [
                table_stage("eager", inputs, refs, 0.0, 0.0),
                table_stage("fx", inputs, fx),
                table_stage("onnx", inputs, within),
                table_stage("ort", inputs, ort),
            ],
            inputs,
        )
    )

    # 3. the first output has a row per input row, none in the first batch; onnx out only in that batch's second output
    inputs = token_batches(292, (0, 2), (3, 2))
    refs = [(rng.normal(size=(len(x), 2)).astype(F32), rng.normal(size=(2,)).astype(F32)) for (x,) in inputs]
    within = [tuple(nudged(o, 0.5) for o in outs) for outs in refs]
    onnx = [tuple(o.copy() for o in outs) for outs in within]
    onnx[0][1][1] = nudged(refs[0][1][1], 5.0)
    cases.append(
        (
            [
                table_stage("eager", inputs, refs, 0.0, 0.0),
                table_stage("fx", inputs, within),
                table_stage("onnx", inputs, onnx),
                table_stage("fp16", inputs, [tuple(o.astype(F16) for o in outs) for outs in refs], rtol=1e-2, atol=2e-3),
            ],
            inputs,
        )
    )
    return judged_exactly(solution, cases)
