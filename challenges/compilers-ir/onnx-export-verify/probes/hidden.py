"""Hidden probes for onnx-export-verify: they make the score.

Four categories:

- ``dynamic-shapes``: the candidate's ``export`` writes a file from one
  example; the probe runs that file in onnxruntime at other batch and
  sequence sizes (including 1) and compares it with the model in eval mode.
  The observation is one "ok" or one failure text per size.
- ``export-hygiene``: the same, for the parts of an export that are not the
  shapes: inference mode (a model handed over in train mode, with dropout)
  and a self-contained file (the .onnx file alone, copied elsewhere).
- ``export-interface``: the file read with ``onnx.load``: ``graph.input``
  (one entry per forward argument, no weights), the default-domain opset
  (17 to 20), and the declared input and output shapes against the tensors
  at sizes other than the example's (probe_common.declared_shape_problems).
- ``verification``: the probe writes an ONNX file itself (sometimes with a
  planted numerical drift, made by editing a real node's attribute or by
  exporting other weights; sometimes NaN or inf on one side), measures the
  error between onnxruntime and PyTorch, then calls the candidate's
  ``verify``. The check (``reported_error_matches``) compares what verify
  reported with what the reference run's probe measured. Other verification
  probes call verify several times in one process (a file rewritten at the
  same path, the model's weights changed), or hand it files whose outputs
  do not match the model's in number or shape, where it must raise
  (``verify_refuses``).

Red team round 1 (a blind red team) found 9 wrong files that scored 100
before these probes: NaN dropped by max() or np.nanmax, a session cached
per path, outputs paired by zip() without a count, initializers listed as
graph inputs, opset 16, outputs given the inputs' axis names, one name for
both axes. The last part of this file draws generated models and drifts
from seeds (issue 27).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import math
import os
import shutil
import tempfile
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import torch
import torch.nn.functional as F
from probe_common import (
    ATOL,
    RTOL,
    MLPBlock,
    build,
    copy_of,
    eager,
    export_and_run,
    export_interface,
    first_line,
    measure,
    randn,
    read_report,
    reference_file,
    refusal_of,
    report_of,
    tokens,
    verify_case,
)
from probekit import probe
from torch import nn

# ---------------------------------------------------------------- models


class AttentionBlock(nn.Module):
    """Pre-LayerNorm multi-head self-attention; returns (y, attention probabilities)."""

    def __init__(self, d: int = 32, heads: int = 4, causal: bool = False, p: float = 0.0) -> None:
        super().__init__()
        self.heads = heads
        self.causal = causal
        self.ln = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.drop = nn.Dropout(p)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln(x)).chunk(3, dim=-1)
        q, k, v = (t.reshape(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-1, -2) / math.sqrt(d // self.heads)
        if self.causal:
            future = torch.ones(s, s, dtype=torch.bool, device=x.device).triu(1)
            scores = scores.masked_fill(future, float("-inf"))
        probs = scores.softmax(dim=-1)
        y = (self.drop(probs) @ v).transpose(1, 2).reshape(b, s, d)
        return x + self.out(y), probs


class MaskedEncoder(nn.Module):
    """Tokens and a 0/1 padding mask: per-token features and a masked mean over the sequence."""

    def __init__(self, d: int = 32) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc = nn.Linear(d, d)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = F.gelu(self.fc(self.ln(x))) * mask.unsqueeze(-1)
        pooled = h.sum(dim=1) / mask.sum(dim=1, keepdim=True).clamp(min=1.0)
        return h, pooled


class TwoHeads(nn.Module):
    """Two outputs from one input: a linear head and a GELU head."""

    def __init__(self, d: int = 32) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, d)
        self.aux = nn.Linear(d, 8)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.ln(x)
        return self.head(h), F.gelu(3.0 * self.aux(h))


class GeluHeadFirst(TwoHeads):
    """TwoHeads with its outputs the other way round: the GELU head first, the linear head last."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        head, aux = super().forward(x)
        return aux, head


class ReluHead(nn.Module):
    """LayerNorm, GELU MLP, then ReLU: about half of the outputs are exactly 0."""

    def __init__(self, d: int = 32) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 64)
        self.fc2 = nn.Linear(64, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.fc2(F.gelu(self.fc1(self.ln(x)))))


def tokens_and_mask(b: int, s: int, seed: int, d: int = 32) -> tuple[torch.Tensor, ...]:
    x = randn(b, s, d, seed=seed, scale=2.0)
    lengths = torch.arange(b) % s + 1  # row i keeps its first (i % s) + 1 tokens
    mask = (torch.arange(s)[None, :] < lengths[:, None]).to(torch.float32)
    return x, mask


class ThreeHeads(nn.Module):
    """Three outputs of widths 16, 32 and 8 from one input, each through its own LayerNorm, Linear and GELU."""

    def __init__(self, d: int = 32) -> None:
        super().__init__()
        self.norms = nn.ModuleList(nn.LayerNorm(d) for _ in range(3))
        self.heads = nn.ModuleList([nn.Linear(d, 16), nn.Linear(d, d), nn.Linear(d, 8)])

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return tuple(F.gelu(head(norm(x))) for norm, head in zip(self.norms, self.heads, strict=True))


class Outputs(nn.Module):
    """Another model's outputs, rearranged by ``pick`` (a file that does not match the model it is verified against)."""

    def __init__(self, inner: nn.Module, pick: Any) -> None:
        super().__init__()
        self.inner = inner
        self.pick = pick

    def forward(self, x: torch.Tensor) -> Any:
        return self.pick(self.inner(x))


# ---------------------------------------------------------------- export probes


@probe(category="dynamic-shapes", check="every_size_ok", weight=2, hints=["dynamic-axes"])
def mlp_other_batch_and_sequence(solution: Any) -> dict[str, str]:
    """MLP block exported from a (3, 6) example, run at four other (batch, sequence) sizes, 1 included."""
    model = build(MLPBlock, seed=10)
    return export_and_run(solution, model, tokens, (3, 6), [(1, 1), (5, 13), (8, 2), (2, 40)])


@probe(category="dynamic-shapes", check="every_size_ok", weight=2, hints=["dynamic-axes", "multiple-outputs"])
def attention_other_sizes(solution: Any) -> dict[str, str]:
    """Attention block returning (y, probabilities), exported from (2, 7), run at other sizes."""
    model = build(AttentionBlock, seed=11)
    return export_and_run(solution, model, tokens, (2, 7), [(1, 3), (4, 12), (3, 1)])


@probe(category="dynamic-shapes", check="every_size_ok", weight=2, hints=["size-one-example", "dynamic-axes"])
def causal_attention_single_token_example(solution: Any) -> dict[str, str]:
    """Causal attention exported from a single-token (2, 1) example, run at longer sequences."""
    model = build(AttentionBlock, seed=12, causal=True)
    return export_and_run(solution, model, tokens, (2, 1), [(2, 5), (1, 16), (3, 1)])


@probe(category="dynamic-shapes", check="every_size_ok", weight=2, hints=["size-one-example", "dynamic-axes"])
def mlp_batch_one_example(solution: Any) -> dict[str, str]:
    """MLP block exported from a (1, 4) example: one sequence, run at larger batches."""
    model = build(MLPBlock, seed=13)
    return export_and_run(solution, model, tokens, (1, 4), [(6, 4), (3, 9)])


@probe(category="dynamic-shapes", check="every_size_ok", weight=2, hints=["every-input", "dynamic-axes"])
def two_inputs_share_the_axes(solution: Any) -> dict[str, str]:
    """Tokens plus a (batch, sequence) padding mask: both inputs' axes must be dynamic."""
    model = build(MaskedEncoder, seed=14)
    return export_and_run(solution, model, tokens_and_mask, (3, 5), [(1, 2), (4, 9), (2, 1)])


@probe(category="export-hygiene", check="every_size_ok", weight=2, hints=["eval-mode"])
def dropout_model_in_train_mode(solution: Any) -> dict[str, str]:
    """A freshly built model (train mode) with dropout 0.3: the export must compute the eval-mode model."""
    model = build(AttentionBlock, seed=15, p=0.3)
    return export_and_run(solution, model, tokens, (2, 6), [(2, 6), (3, 4)])


@probe(category="export-hygiene", check="every_size_ok", weight=2, hints=["single-file"])
def onnx_file_alone(solution: Any) -> dict[str, str]:
    """Only the .onnx file is copied to another folder and loaded there: it must be self-contained."""
    model = build(MLPBlock, seed=16)
    return export_and_run(solution, model, tokens, (2, 5), [(3, 7)], alone=True)


# ---------------------------------------------------------------- verification probes


@probe(category="verification", check="reported_error_matches", hints=["verify-definition"])
def verify_faithful_export(solution: Any) -> dict[str, Any]:
    """A faithful export of the MLP block, verified at (4, 9): the error is float32 rounding."""
    return verify_case(solution, build(MLPBlock, seed=20), tokens, (2, 5), (4, 9))


@probe(category="verification", weight=2, check="reported_error_matches", hints=["verify-definition"])
def verify_tanh_gelu_drift(solution: Any) -> dict[str, Any]:
    """The file's Gelu was switched to the tanh approximation: verify must report the drift it causes."""
    edit = {"Gelu": ("approximate", "tanh")}
    return verify_case(solution, build(MLPBlock, seed=21), tokens, (2, 5), (3, 11), edit)


@probe(category="verification", weight=2, check="reported_error_matches", hints=["multiple-outputs"])
def verify_drift_in_second_output(solution: Any) -> dict[str, Any]:
    """Two outputs; only the second (the GELU head) drifts: the maximum covers every output."""
    edit = {"Gelu": ("approximate", "tanh")}
    return verify_case(solution, build(TwoHeads, seed=22), tokens, (2, 5), (3, 6), edit)


@probe(category="verification", weight=2, check="reported_error_matches", hints=["multiple-outputs"])
def verify_drift_in_first_output(solution: Any) -> dict[str, Any]:
    """Two outputs; only the first (the GELU head) drifts: the maximum covers every output, not the last one."""
    edit = {"Gelu": ("approximate", "tanh")}
    return verify_case(solution, build(GeluHeadFirst, seed=26), tokens, (2, 5), (4, 5), edit)


@probe(category="verification", weight=2, check="reported_error_matches", hints=["eval-mode"])
def verify_model_with_dropout(solution: Any) -> dict[str, Any]:
    """A faithful export of an attention block with dropout 0.3; verify receives the model in train mode."""
    return verify_case(solution, build(AttentionBlock, seed=23, p=0.3), tokens, (2, 6), (2, 8))


@probe(category="verification", weight=2, check="reported_error_matches", hints=["input-order"])
def verify_two_inputs_epsilon_drift(solution: Any) -> dict[str, Any]:
    """Tokens and a mask; the file's LayerNorm epsilon became 0.1: inputs fed in the graph's order."""
    edit = {"LayerNormalization": ("epsilon", 0.1)}
    return verify_case(solution, build(MaskedEncoder, seed=24), tokens_and_mask, (3, 5), (4, 7), edit)


@probe(category="verification", weight=2, check="reported_error_matches", hints=["relative-error"])
def verify_relative_error_at_zeros(solution: Any) -> dict[str, Any]:
    """ReLU outputs (many exactly 0) with a drifted LayerNorm: max_rel follows the definition at the zeros too."""
    # The drift moves a few pre-activations across 0, so the file has positive
    # values where the model has exact zeros: there the definition divides by
    # 1e-7 alone, and that element is the maximum. Dividing by |r| gives inf
    # (and NaN at 0/0), skipping the zeros or another epsilon gives another
    # number. (A tanh-Gelu drift is too small to flip a sign here.)
    edit = {"LayerNormalization": ("epsilon", 0.1)}
    return verify_case(solution, build(ReluHead, seed=26), tokens, (2, 5), (3, 10), edit)


# ---------------------------------------------------------------- NaN and infinity
#
# The statement's definition counts a NaN difference (a NaN on one side) as an
# infinite error, and an infinity on one side gives an infinite one: verify
# reports max_abs = max_rel = inf. Each probe puts the non-finite values in the
# first, a middle and the last output of a three-output model, so neither a
# running max() that drops NaN nor one that only keeps it when it comes first
# passes. The truth is measured by the probe (probe_common.measure).

NON_FINITE_TOKENS = {0: (0, 0, 0.75), 1: (1, 4, -1.5), 2: (2, 8, 2.0)}  # output -> (batch, position, value)


def _inf_bias(index: int, feature: int) -> Any:
    def plant(model: nn.Module) -> None:
        with torch.no_grad():
            model.heads[index].bias[feature] = math.inf

    return plant


def _no_epsilon(index: int) -> Any:
    def plant(model: nn.Module) -> None:
        model.norms[index].eps = 0.0

    return plant


@probe(category="verification", weight=2, check="every_report_matches", hints=["nan-and-inf"])
def verify_nan_in_one_file_output(solution: Any) -> dict[str, Any]:
    """Files that produce NaN in one output (the first, a middle or the last) where PyTorch is finite."""
    out = {}
    for k, token in NON_FINITE_TOKENS.items():
        edit = {f"LayerNormalization#{k}": ("epsilon", 0.0)}  # 0/0 on the constant token, in output k only
        out[f"NaN in output {k}"] = verify_case(solution, build(ThreeHeads, seed=30 + k), tokens, (2, 5), (3, 9), edit, constant_token=token)
    return out


@probe(category="verification", weight=2, check="every_report_matches", hints=["nan-and-inf"])
def verify_inf_in_one_file_output(solution: Any) -> dict[str, Any]:
    """Files that produce infinities in one output (the first, a middle or the last) where PyTorch is finite."""
    out = {}
    for k in range(3):
        model = build(ThreeHeads, seed=33 + k)
        file_model = copy_of(model)
        _inf_bias(k, 3 * k + 1)(file_model)
        out[f"inf in output {k}"] = verify_case(solution, model, tokens, (2, 5), (4, 7), file_model=file_model)
    return out


@probe(category="verification", weight=2, check="every_report_matches", hints=["nan-and-inf"])
def verify_nan_or_inf_on_the_pytorch_side(solution: Any) -> dict[str, Any]:
    """The other way round: the model gives NaN or infinities in one output (first, middle, last), the file is finite."""
    plants = {0: ("NaN", _no_epsilon(0)), 1: ("inf", _inf_bias(1, 5)), 2: ("NaN", _no_epsilon(2))}
    out = {}
    for k, (what, plant) in plants.items():
        model = build(ThreeHeads, seed=36 + k)
        token = NON_FINITE_TOKENS[k] if what == "NaN" else None
        out[f"{what} in output {k}"] = verify_case(solution, model, tokens, (2, 5), (3, 9), after_export=plant, constant_token=token)
    return out


# ---------------------------------------------------------------- repeated calls


@probe(category="verification", weight=2, check="every_report_matches", hints=["every-call-fresh"])
def verify_called_again(solution: Any) -> dict[str, Any]:
    """verify called five times in one process: the file at the same path rewritten, another file, other inputs, new weights."""
    model = build(MLPBlock, seed=41)
    example = tokens(2, 5, seed=1)
    faithful = reference_file(model, example)
    drifted = reference_file(model, example, {"Gelu": ("approximate", "tanh")})
    other = reference_file(model, example, {"LayerNormalization": ("epsilon", 0.1)})
    path = os.path.join(tempfile.mkdtemp(), "candidate.onnx")
    first, second = tokens(3, 6, seed=7), tokens(5, 3, seed=8)

    def case(file: str, inputs: tuple[torch.Tensor, ...]) -> dict[str, Any]:
        truth = measure(model, file, inputs)
        model.train()
        return {"report": report_of(solution, model, file, inputs), "truth": truth}

    out = {}
    shutil.copyfile(faithful, path)
    out["a faithful file"] = case(path, first)
    shutil.copyfile(drifted, path)  # rewritten in place: the same path, the same inode, other contents
    out["the same path, rewritten with a drifted file"] = case(path, first)
    out["another file, the same model and inputs"] = case(other, first)
    out["the rewritten file at other inputs"] = case(path, second)
    with torch.no_grad():
        model.fc2.weight.mul_(1.05)  # the same model object, other weights
    out["the same model object with changed weights"] = case(path, second)
    return out


# ---------------------------------------------------------------- red team round 2
#
# A blind red team (round 2) found five wrong files that scored 100 before
# these probes: the errors computed in float32 (inf where float64 is finite),
# a zero-copy IOBinding that ignores strides, a session cache keyed by path,
# mtime and size, the session opened with ORT_DISABLE_ALL, and a maximum that
# raises on an empty output.


@probe(category="verification", weight=2, check="every_report_matches", hints=["verify-definition"])
def verify_errors_beyond_float32_range(solution: Any) -> dict[str, Any]:
    """Errors that are finite in float64 but beyond float32's range (3.4e38): verify must compute in float64."""
    out = {}
    for what, cls, seed, linear in (("MLP block", MLPBlock, 30, "fc2"), ("second output", TwoHeads, 28, "aux")):
        model = build(cls, seed=seed)
        file_model = copy_of(model)
        with torch.no_grad():
            file_model.get_submodule(linear).weight.mul_(1e37)  # |o - r| / (|r| + 1e-7) passes 3.4e38 near r = 0
        out[f"{what}: {linear} weights scaled by 1e37"] = verify_case(solution, model, tokens, (2, 5), (3, 7), file_model=file_model)
    model = build(MLPBlock, seed=31)
    with torch.no_grad():
        model.fc2.bias[5] = -3e38
    file_model = copy_of(model)
    with torch.no_grad():
        file_model.fc2.bias[5] = 3e38  # o near +3e38 where r is near -3e38: |o - r| is 6e38
    out["outputs near +3e38 and -3e38"] = verify_case(solution, model, tokens, (2, 5), (3, 7), file_model=file_model)
    return out


def _transposed_tokens(b: int, s: int, seed: int, d: int = 32) -> tuple[torch.Tensor, ...]:
    """Tokens laid out sequence-major: a (batch, sequence, d) view of a transposed tensor."""
    return (randn(s, b, d, seed=seed, scale=2.0).transpose(0, 1),)


def _sliced_tokens(b: int, s: int, seed: int, d: int = 32) -> tuple[torch.Tensor, ...]:
    """Tokens cut out of a longer sequence: a slice along dim 1."""
    return (randn(b, s + 4, d, seed=seed, scale=2.0)[:, 2 : s + 2],)


def _tokens_and_expanded_mask(b: int, s: int, seed: int, d: int = 32) -> tuple[torch.Tensor, ...]:
    """Transposed tokens and one padding row expanded over the batch (stride 0)."""
    keep = max(1, s - 2)
    mask = (torch.arange(s) < keep).to(torch.float32).expand(b, s)
    return (*_transposed_tokens(b, s, seed, d), mask)


@probe(category="verification", weight=2, check="every_report_matches", hints=["strided-inputs"])
def verify_non_contiguous_inputs(solution: Any) -> dict[str, Any]:
    """Inputs that are views: transposed, sliced, or a mask expanded over the batch; verify must run both sides on their values."""
    tanh = {"Gelu": ("approximate", "tanh")}
    epsilon = {"LayerNormalization": ("epsilon", 0.1)}
    return {
        "transposed tokens, a faithful file": verify_case(solution, build(MLPBlock, seed=55), _transposed_tokens, (2, 5), (3, 7)),
        "sliced tokens, a tanh-GELU drift": verify_case(solution, build(MLPBlock, seed=56), _sliced_tokens, (2, 5), (4, 9), tanh),
        "transposed tokens and an expanded mask, an epsilon drift": verify_case(
            solution, build(MaskedEncoder, seed=57), _tokens_and_expanded_mask, (2, 5), (3, 7), epsilon
        ),
    }


@probe(category="verification", weight=2, check="every_report_matches", hints=["every-call-fresh"])
def verify_file_rewritten_keeping_size_and_mtime(solution: Any) -> dict[str, Any]:
    """The file at one path rewritten twice with a file of the same size, its modification time put back (as cp -p does)."""
    model = build(MLPBlock, seed=48)
    example = tokens(2, 5, seed=1)
    files = {
        "a faithful file": reference_file(model, example),
        "rewritten with a tanh-GELU drift, same size and mtime": reference_file(model, example, {"Gelu": ("approximate", "tanh")}),
        "rewritten with an epsilon drift, same size and mtime": reference_file(model, example, {"LayerNormalization": ("epsilon", 0.1)}),
    }
    assert len({os.path.getsize(f) for f in files.values()}) == 1, "the probe's files must be of one size"
    path = os.path.join(tempfile.mkdtemp(), "candidate.onnx")
    inputs = tokens(3, 6, seed=7)
    out = {}
    stamp = None
    for what, file in files.items():
        shutil.copyfile(file, path)  # in place: the same path, the same inode
        if stamp is None:
            stamp = os.stat(path)
        os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
        truth = measure(model, path, inputs)
        model.train()
        out[what] = {"report": report_of(solution, model, path, inputs), "truth": truth}
    return out


@probe(category="verification", weight=2, check="every_report_matches", hints=["verify-definition"])
def verify_faithful_attention_at_large_sizes(solution: Any) -> dict[str, Any]:
    """Faithful attention files with their probabilities, at about 800 to 1100 tokens: max_rel is float32 rounding at tiny
    probabilities, and it is the one of default session options against the float32 model."""
    # Other session options (ORT_DISABLE_ALL: no fusions) or a float64 PyTorch
    # side round differently; at these sizes the smallest probabilities make
    # that difference larger than the tolerance. Both sides were checked to be
    # bitwise the same at 1 to 16 threads.
    make = functools.partial(tokens, d=16)
    out = {}
    for seed, size in ((70, (13, 61)), (75, (13, 61)), (77, (11, 97))):
        model = build(AttentionBlock, seed=seed, d=16, heads=2)
        out[f"seed {seed} at {size}"] = verify_case(solution, model, make, (2, 5), size)
    return out


@probe(category="verification", weight=2, check="every_report_matches", hints=["empty-inputs"])
def verify_empty_batch_or_sequence(solution: Any) -> dict[str, Any]:
    """Inputs with batch size 0 or sequence length 0: the outputs match in number and shape, and both errors are 0."""
    tanh = {"Gelu": ("approximate", "tanh")}
    epsilon = {"LayerNormalization": ("epsilon", 0.1)}
    return {
        "MLP block, batch 0": verify_case(solution, build(MLPBlock, seed=58), tokens, (2, 5), (0, 7), tanh),
        "MLP block, sequence 0": verify_case(solution, build(MLPBlock, seed=58), tokens, (2, 5), (3, 0), tanh),
        "attention with probabilities, sequence 0": verify_case(solution, build(AttentionBlock, seed=59), tokens, (2, 5), (4, 0)),
        "tokens and a mask, batch 0": verify_case(solution, build(MaskedEncoder, seed=60), tokens_and_mask, (3, 5), (0, 6), epsilon),
    }


# ---------------------------------------------------------------- state kept across calls
#
# Every other probe calls export or verify once per model, file and inputs, in
# a process of its own, so a cache kept between calls was never caught: an
# exported file kept per model id and example shapes, or the PyTorch side of
# verify kept per model id, parameter version counters and input addresses,
# both score 100 on them. This probe calls both several times in one process
# on the same objects changed in place, on look-alikes (same class, parameter
# names, shapes and path, other values) and on objects rebuilt at the ids and
# addresses of freed ones, and reads each result again once every call has run
# (a report dict or a file that a later call rewrites changes a result already
# returned).


def _build_at_freed_id(freed_id: int, cls: type[nn.Module], seed: int, **kwargs: Any) -> nn.Module:
    """``build(cls, seed, **kwargs)``, as a rule a new object at the id of a freed model.

    Empty instances are allocated until one lands at ``freed_id`` (the others
    are kept alive until then, so each try takes the next free slot), and that
    one is initialised as ``build`` does: the same weights as ``build(cls,
    seed)``, the same version counters as any model built so. After 4096 tries
    the last one is used.
    """
    spare: list[nn.Module] = []
    fresh = cls.__new__(cls)
    for _ in range(4096):
        if id(fresh) == freed_id:
            break
        spare.append(fresh)
        fresh = cls.__new__(cls)
    torch.manual_seed(seed)
    fresh.__init__(**kwargs)  # type: ignore[misc]
    with torch.no_grad():
        for module in fresh.modules():
            if isinstance(module, nn.LayerNorm):
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.2, 0.2)
    return fresh


def _clone_into_freed_id(source: torch.Tensor, freed_id: int) -> torch.Tensor:
    """A clone of ``source`` that is, as a rule, a new object at the id of a freed tensor.

    Clones that land elsewhere are kept alive until the one wanted comes up,
    so each try takes the next free slot of the allocator; after 4096 tries
    the last one is used.
    """
    spare: list[torch.Tensor] = []
    for _ in range(4096):
        fresh = source.clone()
        if id(fresh) == freed_id:
            return fresh
        spare.append(fresh)
    return spare.pop()


def _file_computes(model: nn.Module, path: str, inputs: tuple[torch.Tensor, ...]) -> str:
    """"ok" when the file at ``path`` computes ``model`` in eval mode on ``inputs`` (ORT_DISABLE_ALL, 1e-4 + 1e-4|r|)."""
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    try:
        session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        got = session.run(None, {a.name: t.numpy() for a, t in zip(session.get_inputs(), inputs, strict=True)})
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        return "onnxruntime cannot run the file: " + first_line(exc)
    want = eager(model, inputs)
    if len(got) != len(want) or any(g.shape != w.shape for g, w in zip(got, want, strict=False)):
        return "the file's outputs differ from the model's in number or shape"
    for g, w in zip(got, want, strict=True):
        if not np.all(np.abs(g.astype(np.float64) - w) <= ATOL + RTOL * np.abs(w)):
            return "the file does not compute the model as it was when exported"
    return "ok"


@probe(category="verification", weight=2, check="repeated_calls_right", hints=["every-call-fresh"], timeout=240)
def export_and_verify_called_repeatedly(solution: Any) -> dict[str, Any]:
    """export and verify called several times in one process, on objects changed in place, look-alikes and objects
    rebuilt at freed ids: each result right when returned and after the later calls."""
    folder = tempfile.mkdtemp()
    taken: dict[str, bool] = {}
    probe_inputs = tokens(3, 7, seed=600)  # the probe's own inputs for running the exported files

    # export: the same model and example changed in place, then a model rebuilt at the freed model's id.
    exports: list[dict[str, Any]] = []
    kept: list[tuple[str, nn.Module]] = []  # each file and a copy of the model as it was exported

    def export_step(step: str, model: nn.Module, example: tuple[torch.Tensor, ...]) -> None:
        path = os.path.join(folder, f"export-{len(exports)}.onnx")
        model.train()
        solution.export(model, example, path)
        exports.append({"step": step, "at call": _file_computes(model, path, probe_inputs)})
        kept.append((path, copy_of(model)))

    model = build(MLPBlock, seed=601)
    example = tokens(2, 5, seed=602)
    export_step("a first export", model, example)
    with torch.no_grad():
        model.fc1.weight.mul_(-0.5)  # an optimizer-like step
    model.fc2.bias.data.add_(0.5)  # through .data: the parameter's version counter stays
    model.ln.eps = 0.1  # a module attribute, not a parameter
    example[0].copy_(tokens(2, 5, seed=603)[0])  # new values in the same example tensor
    export_step("the same model and example changed in place", model, example)
    freed = id(model)
    del model
    gc.collect()
    model = _build_at_freed_id(freed, MLPBlock, seed=604)
    taken["export model"] = id(model) == freed
    export_step("a new model of the same class and shapes, at the freed model's id", model, tokens(2, 5, seed=605))
    del model
    for entry, (path, as_exported) in zip(exports, kept, strict=True):
        entry["after all calls"] = _file_computes(as_exported, path, probe_inputs)

    # verify: every file is copied to one path; each report is read when returned and again at the end.
    path = os.path.join(folder, "candidate.onnx")
    calls: list[dict[str, Any]] = []
    returned: list[Any] = []

    def verify_step(step: str, model: nn.Module, file: str, inputs: tuple[torch.Tensor, ...]) -> None:
        shutil.copyfile(file, path)
        truth = measure(model, path, inputs)
        model.train()
        raw = solution.verify(model, path, inputs)
        returned.append(raw)
        calls.append({"step": step, "truth": truth, "at call": read_report(raw)})

    example = tokens(2, 5, seed=610)
    model = build(MLPBlock, seed=611)
    faithful = reference_file(model, example)
    x = tokens(3, 7, seed=612)
    verify_step("a first call", model, faithful, x)
    x[0].copy_(tokens(3, 7, seed=613)[0])
    verify_step("the same input tensor refilled in place", model, faithful, x)
    with torch.no_grad():
        model.fc2.weight.mul_(1.05)
    model.fc1.weight.data.mul_(0.9)  # version counter unchanged
    verify_step("the same model's weights changed in place", model, faithful, x)
    other = build(MLPBlock, seed=614)
    verify_step(
        "a look-alike model, file and inputs (same class, names and shapes)",
        other,
        reference_file(other, example, {"Gelu": ("approximate", "tanh")}),
        tokens(3, 7, seed=615),
    )
    y = tokens(3, 7, seed=616)
    verify_step("new inputs of the same shapes, another file", other, reference_file(other, example), y)
    values = tokens(3, 7, seed=618)[0]  # made before the frees, so that it cannot take a freed slot itself
    freed_model, freed_input = id(other), id(y[0])
    del other, y
    gc.collect()
    y = (_clone_into_freed_id(values, freed_input),)  # before the model, whose parameters would take the slot
    rebuilt = _build_at_freed_id(freed_model, MLPBlock, seed=617)
    taken["verify model"] = id(rebuilt) == freed_model
    taken["verify input"] = id(y[0]) == freed_input
    epsilon = reference_file(rebuilt, example, {"LayerNormalization": ("epsilon", 0.1)})
    verify_step("a model and an input rebuilt at the freed ids", rebuilt, epsilon, y)
    memory = np.empty((3, 7, 32), dtype=np.float32)  # one buffer, new tensors over it: a loader's reused batch
    for k in range(2):
        memory[...] = tokens(3, 7, seed=619 + k)[0].numpy()
        verify_step(f"new input tensors over one reused buffer, call {k + 1}", rebuilt, epsilon, (torch.from_numpy(memory),))
    for call, raw in zip(calls, returned, strict=True):
        call["after all calls"] = read_report(raw)
    return {"export": exports, "verify": calls, "freed ids taken": taken}


# ---------------------------------------------------------------- files that do not match the model


def _mismatch(solution: Any, model: nn.Module, file_model: nn.Module, size: tuple[int, int]) -> Any:
    path = reference_file(file_model, tokens(2, 5, seed=1))
    return refusal_of(solution, model, path, tokens(*size, seed=7))


@probe(category="verification", weight=2, check="verify_refuses", hints=["output-mismatch"])
def verify_file_missing_an_output(solution: Any) -> dict[str, Any]:
    """The model returns two or three tensors, the file fewer: verify must raise, not compare the outputs both have."""
    attention = build(AttentionBlock, seed=42)
    heads = build(ThreeHeads, seed=43)
    return {
        "file without the probabilities": _mismatch(solution, attention, Outputs(attention, lambda out: out[0]), (3, 6)),
        "file without the last of three outputs": _mismatch(solution, heads, Outputs(heads, lambda out: out[:2]), (2, 7)),
        "file without the first of three outputs": _mismatch(solution, heads, Outputs(heads, lambda out: out[1:]), (4, 3)),
    }


@probe(category="verification", weight=2, check="verify_refuses", hints=["output-mismatch"])
def verify_file_with_an_extra_output(solution: Any) -> dict[str, Any]:
    """The file returns more tensors than the model: verify must raise."""
    attention = build(AttentionBlock, seed=44)
    heads = build(ThreeHeads, seed=45)
    return {
        "file with the probabilities, model without": _mismatch(solution, Outputs(attention, lambda out: out[0]), attention, (3, 6)),
        "file with three outputs, model with two": _mismatch(solution, Outputs(heads, lambda out: out[:2]), heads, (2, 7)),
    }


@probe(category="verification", weight=2, check="verify_refuses", hints=["output-mismatch"])
def verify_output_of_another_shape(solution: Any) -> dict[str, Any]:
    """As many outputs as the model, one of another shape (some broadcast against the model's): verify must raise."""
    mlp = build(MLPBlock, seed=46)
    heads = build(ThreeHeads, seed=47)
    return {
        "(batch, sequence, 1) for (batch, sequence, 32)": _mismatch(solution, mlp, Outputs(mlp, lambda y: y.mean(dim=-1, keepdim=True)), (3, 6)),
        "(1, sequence, 32) for (batch, sequence, 32)": _mismatch(solution, mlp, Outputs(mlp, lambda y: y[:1]), (3, 6)),
        "the middle output (batch, 1, 32) for (batch, sequence, 32)": _mismatch(
            solution, heads, Outputs(heads, lambda out: (out[0], out[1][:, -1:], out[2])), (2, 5)
        ),
        "the last output transposed, as many elements": _mismatch(
            solution, heads, Outputs(heads, lambda out: (out[0], out[1], out[2].transpose(0, 1))), (3, 4)
        ),
    }


# ---------------------------------------------------------------- the exported file's interface


@probe(category="export-interface", weight=2, check="every_entry_ok", hints=["graph-inputs", "opset"])
def graph_inputs_and_opset(solution: Any) -> dict[str, str]:
    """Tokens and a padding mask: the graph's declared inputs are exactly forward's two arguments, and the opset is in range."""
    return export_interface(solution, build(MaskedEncoder, seed=50), tokens_and_mask, (3, 5), [])


def _declared(obs: dict[str, str]) -> dict[str, str]:
    return {key: value for key, value in obs.items() if key == "load" or key.startswith("declared")}


def _masked_causal_attention(seed: int) -> nn.Module:
    """Causal attention over tokens and a padding mask, returning (y, probabilities). (The TorchScript exporter
    declares these probabilities with one name for their batch and their sequence dims.)"""
    return build(
        GeneratedMaskedBlock,
        seed=seed,
        d=32,
        heads=4,
        hidden=64,
        head_width=8,
        attention=True,
        mlp=False,
        causal=True,
        outputs=("y", "probs"),
        as_tuple=True,
        p=0.0,
    )


@probe(category="export-interface", weight=2, check="every_entry_ok", hints=["declared-shapes"])
def declared_shapes_hold_at_other_sizes(solution: Any) -> dict[str, Any]:
    """The file's declared input and output shapes, read against the tensors at sizes other than the example's."""
    return {
        "attention with probabilities": _declared(
            export_interface(solution, build(AttentionBlock, seed=52), tokens, (2, 7), [(3, 11), (5, 2), (1, 13)])
        ),
        "causal attention with a padding mask": _declared(
            export_interface(solution, _masked_causal_attention(seed=53), tokens_and_mask, (3, 5), [(2, 7), (6, 1)])
        ),
    }


@probe(category="export-interface", weight=2, check="every_entry_ok", hints=["declared-shapes", "size-one-example"])
def declared_shapes_from_single_token_example(solution: Any) -> dict[str, Any]:
    """Causal attention exported from a one-token example: the declared output shapes hold at longer sequences."""
    return _declared(export_interface(solution, build(AttentionBlock, seed=54, causal=True), tokens, (2, 1), [(3, 5), (1, 7)]))


# ---------------------------------------------------------------- generated models
#
# A seeded generator (``_seeded(family, case)`` fixes every draw) builds the
# statement's blocks with other widths (8 to 48), head counts (1 to 8) and
# MLP widths, attention causal or not, with or without a padding mask as a
# second input, with or without dropout, returning one to three of: the
# block's output, the attention probabilities, a (masked) mean over the
# sequence and a small GELU head, as one tensor or a tuple (of one, too).
# ``generated_models_export`` exports each with the candidate's export from an
# example whose batch or sequence may be 1 (or both equal), and checks the file
# at three other sizes (1 on each axis, primes): values and shapes against
# eager PyTorch, and the file's interface. ``generated_drifts_verified`` plants
# one drift per file (an epsilon, the tanh GELU, scaled weights, NaN or inf on
# either side, or none) and judges verify against the probe's float64 measure.


class GeneratedBlock(nn.Module):
    """Pre-LayerNorm attention and/or MLP, drawn by the generator; ``outputs`` names what forward returns."""

    def __init__(
        self,
        *,
        d: int,
        heads: int,
        hidden: int,
        head_width: int,
        attention: bool,
        mlp: bool,
        causal: bool,
        outputs: tuple[str, ...],
        as_tuple: bool,
        p: float,
    ) -> None:
        super().__init__()
        self.heads, self.attention, self.mlp, self.causal = heads, attention, mlp, causal
        self.outputs, self.as_tuple = outputs, as_tuple
        self.drop = nn.Dropout(p)
        if attention:
            self.ln1, self.qkv, self.proj = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
        if mlp:
            self.ln2, self.fc1, self.fc2 = nn.LayerNorm(d), nn.Linear(d, hidden), nn.Linear(hidden, d)
        if "head" in outputs:
            self.ln3, self.head = nn.LayerNorm(d), nn.Linear(d, head_width)

    def body(self, x: torch.Tensor, mask: torch.Tensor | None) -> Any:
        b, s, d = x.shape
        h, probs = x, None
        if self.attention:
            q, k, v = self.qkv(self.ln1(h)).chunk(3, dim=-1)
            q, k, v = (t.reshape(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
            scores = q @ k.transpose(-1, -2) / math.sqrt(d // self.heads)
            if self.causal:
                scores = scores.masked_fill(torch.ones(s, s, dtype=torch.bool).triu(1), float("-inf"))
            if mask is not None:  # padded keys; every row keeps its first token
                scores = scores.masked_fill(mask[:, None, None, :] == 0, float("-inf"))
            probs = scores.softmax(dim=-1)
            h = h + self.proj((self.drop(probs) @ v).transpose(1, 2).reshape(b, s, d))
        if self.mlp:
            h = h + self.drop(self.fc2(F.gelu(self.fc1(self.ln2(h)))))
        if mask is not None:
            h = h * mask.unsqueeze(-1)
        out = []
        for name in self.outputs:
            if name == "y":
                out.append(h)
            elif name == "probs":
                out.append(probs)
            elif name == "pooled":
                if mask is None:
                    out.append(h.mean(dim=1))
                else:
                    out.append(h.sum(dim=1) / mask.sum(dim=1, keepdim=True).clamp(min=1.0))
            else:
                out.append(F.gelu(self.head(self.ln3(h))))
        return tuple(out) if self.as_tuple else out[0]

    def forward(self, x: torch.Tensor) -> Any:
        return self.body(x, None)


class GeneratedMaskedBlock(GeneratedBlock):
    """A generated block that takes a (batch, sequence) 0/1 padding mask as its second input."""

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> Any:  # type: ignore[override]
        return self.body(x, mask)


GEN_CASES = {"export": 8, "verify": 16}
PRIMES = (2, 3, 5, 7, 11, 13)


def _seeded(family: int, case: int) -> np.random.Generator:
    return np.random.default_rng([27, family, case])


def _generated_model(rng: np.random.Generator) -> tuple[GeneratedBlock, Any, str]:
    """A model, its inputs' maker (b, s, seed) -> inputs, and a short description."""
    d = int(rng.choice([8, 16, 24, 40, 48]))
    heads = int(rng.choice([h for h in (1, 2, 4, 8) if d % h == 0]))
    attention = bool(rng.random() < 0.75)
    mlp = not attention or bool(rng.random() < 0.5)
    causal = attention and bool(rng.random() < 0.5)
    masked = bool(rng.random() < 0.4)
    names = ["y", "pooled", "head"] + (["probs"] if attention else [])
    count = int(rng.integers(1, 4))
    outputs = tuple(str(n) for n in rng.permutation(names)[:count])
    as_tuple = count > 1 or bool(rng.random() < 0.3)
    kwargs = {
        "d": d,
        "heads": heads,
        "hidden": d * int(rng.integers(1, 5)),
        "head_width": int(rng.integers(1, 9)),
        "attention": attention,
        "mlp": mlp,
        "causal": causal,
        "outputs": outputs,
        "as_tuple": as_tuple,
        "p": float(rng.choice([0.0, 0.0, 0.1, 0.3])),
    }
    model = build(GeneratedMaskedBlock if masked else GeneratedBlock, seed=int(rng.integers(1 << 30)), **kwargs)
    make = functools.partial(tokens_and_mask if masked else tokens, d=d)
    parts = [f"d={d}"]
    if attention:
        parts.append(f"{heads} heads" + (", causal" if causal else ""))
    if mlp:
        parts.append(f"MLP {kwargs['hidden']}")
    if masked:
        parts.append("mask")
    returns = f"({', '.join(outputs)},)" if as_tuple and count == 1 else ("(" + ", ".join(outputs) + ")" if as_tuple else outputs[0])
    return model, make, f"{'; '.join(parts)}; returns {returns}"


def _example_and_sizes(rng: np.random.Generator, case: int) -> tuple[tuple[int, int], list[tuple[int, int]]]:
    """An example (batch 1, sequence 1, both equal or neither, in turn) and three other sizes: 1 on each axis, primes."""
    kind = ("batch 1", "sequence 1", "equal", "other")[case % 4]
    if kind == "batch 1":
        example = (1, int(rng.integers(2, 7)))
    elif kind == "sequence 1":
        example = (int(rng.integers(2, 5)), 1)
    elif kind == "equal":
        n = int(rng.integers(2, 6))
        example = (n, n)
    else:
        example = (int(rng.integers(2, 5)), int(rng.integers(2, 9)))
    b, s = (int(v) for v in rng.choice(PRIMES, size=2, replace=False))
    sizes = [(1, int(rng.choice(PRIMES[1:]))), (int(rng.choice(PRIMES)), 1), (b, s)]
    return example, [size for size in sizes if size != example]


@probe(category="dynamic-shapes", weight=3, check="every_entry_ok", hints=["dynamic-axes", "size-one-example", "declared-shapes"], timeout=240)
def generated_models_export(solution: Any) -> dict[str, Any]:
    """Generated blocks of other widths, head counts, masks and output tuples, each exported and run at three other sizes."""
    out = {}
    for case in range(GEN_CASES["export"]):
        rng = _seeded(1, case)
        model, make, what = _generated_model(rng)
        example, sizes = _example_and_sizes(rng, case)
        out[f"case {case} ({what}; example {example})"] = export_and_run(solution, model, make, example, sizes, interface=True)
    return out


def _linears(model: nn.Module) -> list[str]:
    return [name for name, module in model.named_modules() if isinstance(module, nn.Linear)]


def _drifted_case(solution: Any, rng: np.random.Generator) -> tuple[str, dict[str, Any]]:
    model, make, what = _generated_model(rng)
    example = (int(rng.integers(2, 5)), int(rng.integers(2, 8)))
    size = (int(rng.choice((1, *PRIMES))), int(rng.choice((1, *PRIMES))))
    gelu = model.mlp or "head" in model.outputs
    drift = str(
        rng.choice(
            [
                "none",
                "epsilon",
                "tanh GELU" if gelu else "epsilon",
                "scaled weights",
                "NaN in the file",
                "inf in the file",
                "NaN in the model",
                "inf in the model",
            ]
        )
    )
    token = (int(rng.integers(size[0])), int(rng.integers(size[1])), float(rng.choice([0.75, -1.5, 2.0])))
    linear = str(rng.choice(_linears(model)))
    kwargs: dict[str, Any] = {}
    if drift == "epsilon":
        which = str(rng.choice(["LayerNormalization", "LayerNormalization#0"]))
        kwargs["edit"] = {which: ("epsilon", float(rng.choice([1e-3, 1e-2, 0.1])))}
    elif drift == "tanh GELU":
        kwargs["edit"] = {"Gelu": ("approximate", "tanh")}
    elif drift == "scaled weights":
        file_model = copy_of(model)
        with torch.no_grad():
            file_model.get_submodule(linear).weight.mul_(1.0 + float(rng.choice([1e-3, 1e-2, 5e-2])))
        kwargs["file_model"] = file_model
    elif drift == "NaN in the file":
        kwargs["edit"] = {"LayerNormalization": ("epsilon", 0.0)}
        kwargs["constant_token"] = token
    elif drift == "NaN in the model":

        def no_epsilon(m: nn.Module) -> None:
            for module in m.modules():
                if isinstance(module, nn.LayerNorm):
                    module.eps = 0.0

        kwargs["after_export"] = no_epsilon
        kwargs["constant_token"] = token
    elif drift in ("inf in the file", "inf in the model"):
        feature = int(rng.integers(model.get_submodule(linear).out_features))

        def inf_bias(m: nn.Module) -> None:
            with torch.no_grad():
                m.get_submodule(linear).bias[feature] = math.inf

        if drift == "inf in the file":
            kwargs["file_model"] = copy_of(model)
            inf_bias(kwargs["file_model"])
        else:
            kwargs["after_export"] = inf_bias
    return f"{what}; {drift}; at {size}", verify_case(solution, model, make, example, size, **kwargs)


@probe(category="verification", weight=3, check="every_report_matches", hints=["verify-definition", "multiple-outputs", "nan-and-inf"])
def generated_drifts_verified(solution: Any) -> dict[str, Any]:
    """Generated blocks, each file with one planted drift or none, verified at sizes with 1s and primes."""
    out = {}
    for case in range(GEN_CASES["verify"]):
        what, obs = _drifted_case(solution, _seeded(2, case))
        out[f"case {case} ({what})"] = obs
    return out


# ---------------------------------------------------------------- red team round 3
#
# A blind red team (round 3) found wrong files that scored 100 before these
# probes: verify returning inf as soon as one output is non-finite, or 0 as
# soon as an input is empty, before the later outputs' count and shapes are
# compared (the mismatch probes above only used finite, non-empty cases); verify
# running onnx.shape_inference.infer_shapes_path, which rewrites the file it
# measures in place; and maxima started at the int 0, so an empty batch was
# reported as ints (probe_common.read_report now takes only Python floats).


def _mismatch_case(
    solution: Any,
    model: nn.Module,
    file_model: nn.Module,
    size: tuple[int, int],
    *,
    edit: dict[str, tuple[str, Any]] | None = None,
    after_export: Any = None,
    constant_token: tuple[int, int, float] | None = None,
    non_finite_first: bool = False,
) -> Any:
    """``_mismatch`` with a planted NaN or inf (``edit``, ``file_model``'s weights or ``after_export``) or an empty size.

    The probe runs the file itself first and asserts what the case claims:
    the file runs, its outputs differ from the model's in number or shape,
    and with ``non_finite_first`` output 0 is NaN or infinite on one side.
    """
    path = reference_file(file_model, tokens(2, 5, seed=1), edit)
    if after_export is not None:
        after_export(model)
    inputs = tokens(*size, seed=7)
    if constant_token is not None:
        b, s, value = constant_token
        inputs[0][b, s, :] = value
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    got = session.run(None, {a.name: t.numpy() for a, t in zip(session.get_inputs(), inputs, strict=True)})
    want = eager(model, inputs)
    assert len(got) != len(want) or any(g.shape != w.shape for g, w in zip(got, want, strict=False)), "the probe's file must not match"
    if non_finite_first:
        assert not (np.isfinite(got[0]).all() and np.isfinite(want[0]).all()), "output 0 must be NaN or inf on one side"
    return refusal_of(solution, model, path, inputs)


def _nan_token(k: int) -> dict[str, tuple[str, Any]]:
    return {f"LayerNormalization#{k}": ("epsilon", 0.0)}


@probe(category="verification", weight=2, check="verify_refuses", hints=["output-mismatch", "nan-and-inf"])
def verify_mismatch_with_non_finite_values(solution: Any) -> dict[str, Any]:
    """NaN or inf in the first output (file or model side) and a later output that does not match, or one output
    too many or too few: verify must raise, not report inf."""
    token = (0, 0, 0.75)
    out = {}
    heads = build(ThreeHeads, seed=80)
    out["NaN in the file's first output, its last output transposed"] = _mismatch_case(
        solution,
        heads,
        Outputs(heads, lambda o: (o[0], o[1], o[2].transpose(0, 1))),
        (3, 7),
        edit=_nan_token(0),
        constant_token=token,
        non_finite_first=True,
    )
    heads = build(ThreeHeads, seed=81)
    file_model = copy_of(heads)
    _inf_bias(0, 2)(file_model)
    out["inf in the file's first output, the middle output (batch, 1, 32)"] = _mismatch_case(
        solution, heads, Outputs(file_model, lambda o: (o[0], o[1][:, -1:], o[2])), (4, 6), non_finite_first=True
    )
    heads = build(ThreeHeads, seed=82)
    out["NaN in the model's first output, the file's middle output (batch, sequence, 1)"] = _mismatch_case(
        solution,
        heads,
        Outputs(copy_of(heads), lambda o: (o[0], o[1].mean(dim=-1, keepdim=True), o[2])),
        (3, 5),
        after_export=_no_epsilon(0),
        constant_token=token,
        non_finite_first=True,
    )
    heads = build(ThreeHeads, seed=83)
    out["NaN in the file's first output, one output too many"] = _mismatch_case(
        solution, Outputs(heads, lambda o: o[:2]), heads, (2, 7), edit=_nan_token(0), constant_token=token, non_finite_first=True
    )
    heads = build(ThreeHeads, seed=84)
    out["inf in the model's first output, the file without its last output"] = _mismatch_case(
        solution, heads, Outputs(copy_of(heads), lambda o: o[:2]), (3, 4), after_export=_inf_bias(0, 6), non_finite_first=True
    )
    attention = build(AttentionBlock, seed=85)
    file_model = copy_of(attention)
    with torch.no_grad():
        file_model.out.bias[0] = math.nan
    out["attention: NaN in the file's first output, its probabilities transposed"] = _mismatch_case(
        solution, attention, Outputs(file_model, lambda o: (o[0], o[1].transpose(1, 2))), (3, 7), non_finite_first=True
    )
    return out


@probe(category="verification", weight=2, check="verify_refuses", hints=["output-mismatch", "empty-inputs"])
def verify_mismatch_at_empty_batch_or_sequence(solution: Any) -> dict[str, Any]:
    """A batch size or a sequence length of 0 with a file whose outputs do not match the model's in number or shape:
    verify must raise, not report 0."""
    heads = build(ThreeHeads, seed=86)
    mlp = build(MLPBlock, seed=87)
    attention = build(AttentionBlock, seed=88)
    return {
        "batch 0, the file with one output too many": _mismatch_case(solution, Outputs(heads, lambda o: o[:2]), heads, (0, 6)),
        "sequence 0, the file without its last output": _mismatch_case(solution, heads, Outputs(heads, lambda o: o[:2]), (3, 0)),
        "batch 0, the output (sequence, 0, 32) for (0, sequence, 32)": _mismatch_case(
            solution, mlp, Outputs(mlp, lambda y: y.transpose(0, 1)), (0, 6)
        ),
        "sequence 0, the output (batch, 0, 1) for (batch, 0, 32)": _mismatch_case(
            solution, mlp, Outputs(mlp, lambda y: y.mean(dim=-1, keepdim=True)), (3, 0)
        ),
        "batch 0, the middle output (0, 1, 32) for (0, sequence, 32)": _mismatch_case(
            solution, heads, Outputs(heads, lambda o: (o[0], o[1][:, -1:], o[2])), (0, 5)
        ),
        "sequence 0, the probabilities transposed": _mismatch_case(
            solution, attention, Outputs(attention, lambda o: (o[0], o[1].transpose(1, 2))), (4, 0)
        ),
    }


def _digest(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _verify_keeps(solution: Any, model: nn.Module, path: str, inputs: tuple[torch.Tensor, ...]) -> str:
    """Return "ok" when the file at ``path`` is byte for byte the same after ``verify`` (which may return or raise)."""
    before = _digest(path)
    model.train()
    with contextlib.suppress(Exception):  # returning or raising: only the file matters here
        solution.verify(model, path, inputs)
    return "ok" if _digest(path) == before else "verify() changed the file it was given: its bytes differ after the call"


@probe(category="verification", weight=2, check="every_entry_ok", hints=["file-read-only"])
def verify_leaves_the_file_unchanged(solution: Any) -> dict[str, str]:
    """verify only reads the file: a probe-written file, a drifted one, one whose outputs do not match and the
    candidate's own export are byte for byte the same after verify."""
    attention = build(AttentionBlock, seed=89)
    masked = build(MaskedEncoder, seed=90)
    heads = build(ThreeHeads, seed=91)
    out = {
        "attention with probabilities, a faithful file": _verify_keeps(
            solution, attention, reference_file(attention, tokens(2, 5, seed=1)), tokens(3, 7, seed=7)
        ),
        "tokens and a mask, an epsilon drift": _verify_keeps(
            solution,
            masked,
            reference_file(masked, tokens_and_mask(3, 5, seed=1), {"LayerNormalization": ("epsilon", 0.1)}),
            tokens_and_mask(4, 6, seed=7),
        ),
        "a file without the model's last output": _verify_keeps(
            solution, heads, reference_file(Outputs(heads, lambda o: o[:2]), tokens(2, 5, seed=1)), tokens(3, 4, seed=7)
        ),
    }
    path = os.path.join(tempfile.mkdtemp(), "model.onnx")
    model = _masked_causal_attention(seed=92)
    solution.export(model, tokens_and_mask(3, 5, seed=1), path)
    out["your own export of causal attention with a mask"] = _verify_keeps(solution, model, path, tokens_and_mask(2, 7, seed=7))
    return out


# ---------------------------------------------------------------- red team round 4
#
# A blind red team (round 4) found an export that wrote the outputs'
# declarations from the example's run compared with one more run at a size it
# picked, (4, 6): a dim whose size is the same in both runs was declared as
# that number. Every example above has a batch of 1 to 3, so a batch of 4
# never stood still and the file passed. These generated models are exported
# from examples of larger batches (4 to 8, and 16) and sequences (6 to 16),
# so a declaration from any one fixed size whose batch is 1 to 8 or 16, or
# whose sequence is one of these, is read back false at the sizes that follow
# (1 on each axis, then primes).

LARGER_EXAMPLES = ((4, 9), (5, 6), (6, 16), (7, 12), (8, 10), (16, 11))


@probe(category="export-interface", weight=2, check="every_entry_ok", hints=["declared-shapes"], timeout=240)
def generated_models_from_larger_examples(solution: Any) -> dict[str, Any]:
    """Generated blocks exported from examples of batches 4 to 16 and sequences 6 to 16, each run and read back at
    three other sizes."""
    out = {}
    for case, example in enumerate(LARGER_EXAMPLES):
        rng = _seeded(3, case)
        model, make, what = _generated_model(rng)
        b, s = (int(v) for v in rng.choice([p for p in PRIMES if p not in example], size=2, replace=False))
        sizes = [(1, int(rng.choice(PRIMES[1:]))), (int(rng.choice(PRIMES)), 1), (b, s)]
        out[f"case {case} ({what}; example {example})"] = export_and_run(solution, model, make, example, sizes, interface=True)
    return out


# ---------------------------------------------------------------- red team round 5
#
# A blind red team (round 5) found two wrong files that scored 100 before these
# probes. One fed the inputs to the session's inputs sorted by name: every
# two-input file above names its inputs in_0 and in_1 (or input_0 and
# input_1), which sort in graph order, while the dynamo exporter names them
# after forward's arguments (x, mask), which do not. The other validated the
# file with onnx.checker.check_model(full_check=True) first, which refuses a
# file that onnxruntime runs and whose outputs match the model's whenever a
# declared output shape contradicts the ops; no file above declared a false
# shape, though the statement says exporters write such declarations and
# verify raises only for outputs that do not match in number or shape.


def _reported(solution: Any, model: nn.Module, path: str, inputs: tuple[torch.Tensor, ...]) -> dict[str, Any]:
    """The probe's measurement of the file at ``path``, then what ``verify`` reports, or that it raised."""
    truth = measure(model, path, inputs)
    model.train()
    try:
        report = report_of(solution, model, path, inputs)
    except Exception as exc:  # noqa: BLE001 - the file matches the model: raising is the failure
        report = f"verify() raised {first_line(exc)}, for a file that onnxruntime runs and whose outputs match the model's in number and shape"
    return {"report": report, "truth": truth}


def _inputs_renamed(path: str, names: tuple[str, ...]) -> str:
    """The file at ``path`` with its graph inputs renamed, in graph order, to ``names`` (written in place)."""
    proto = onnx.load(path)
    renames = {vi.name: new for vi, new in zip(proto.graph.input, names, strict=True)}
    for vi in proto.graph.input:
        vi.name = renames[vi.name]
    for node in proto.graph.node:
        node.input[:] = [renames.get(name, name) for name in node.input]
    onnx.checker.check_model(proto)
    onnx.save(proto, path)
    return path


#: Input names in graph order, each pair sorting the other way round: the dynamo exporter's (forward's argument
#: names) and those of common model code.
OUT_OF_ORDER_NAMES = (("x", "mask"), ("tokens", "mask"), ("hidden_states", "attention_mask"))


def _masked_block(seed: int, **kwargs: Any) -> nn.Module:
    spec = {"d": 32, "heads": 4, "hidden": 64, "head_width": 8, "attention": True, "mlp": True, "causal": False}
    spec.update({"outputs": ("y", "pooled"), "as_tuple": True, "p": 0.0})
    spec.update(kwargs)
    return build(GeneratedMaskedBlock, seed=seed, **spec)


@probe(category="verification", weight=2, check="every_report_matches", hints=["input-order"])
def verify_inputs_named_out_of_alphabetical_order(solution: Any) -> dict[str, Any]:
    """Tokens and a mask in files whose inputs are named (x, mask), (tokens, mask) or (hidden_states, attention_mask):
    names that do not sort in graph order; verify feeds them in the order of session.get_inputs()."""
    cases = (
        ("an epsilon drift", build(MaskedEncoder, seed=93), {"LayerNormalization": ("epsilon", 0.1)}, (4, 7)),
        ("masked attention, a faithful file", _masked_block(94, mlp=False, outputs=("y", "probs")), None, (3, 6)),
        ("masked attention and MLP, a tanh-GELU drift", _masked_block(95), {"Gelu": ("approximate", "tanh")}, (5, 3)),
    )
    out = {}
    for names, (what, model, edit, size) in zip(OUT_OF_ORDER_NAMES, cases, strict=True):
        path = _inputs_renamed(reference_file(model, tokens_and_mask(3, 5, seed=1), edit), names)
        out[f"inputs {names}, {what}"] = _reported(solution, model, path, tokens_and_mask(*size, seed=7))
    return out


def _declare_outputs_falsely(path: str, shapes: dict[int, list[int | str | None]]) -> str:
    """The file at ``path`` with the declared shapes of some outputs replaced (written in place).

    ``shapes`` maps an output's index to its new dims: a number, a name, or
    None for a dim without a size; the list's length is the declared rank.
    onnxruntime runs such a file (it warns that the declarations do not hold);
    onnx's strict shape inference refuses most of them.
    """
    proto = onnx.load(path)
    for index, dims in shapes.items():
        shape = proto.graph.output[index].type.tensor_type.shape
        del shape.dim[:]
        for value in dims:
            dim = shape.dim.add()
            if isinstance(value, int):
                dim.dim_value = value
            elif isinstance(value, str):
                dim.dim_param = value
    onnx.save(proto, path)
    return path


@probe(category="verification", weight=2, check="every_report_matches", hints=["verify-definition"])
def verify_file_with_false_output_declarations(solution: Any) -> dict[str, Any]:
    """Files whose declared output shapes are false (another width, a traced 1, one name for two sizes, another rank)
    but whose outputs match the model's in number and shape: verify reports the error there is, it does not raise."""
    tanh = {"Gelu": ("approximate", "tanh")}
    epsilon = {"LayerNormalization": ("epsilon", 0.01)}
    cases = (
        ("MLP block declared (batch, sequence, 33), a faithful file", build(MLPBlock, seed=96), tokens, None, (3, 7), {0: ["batch", "sequence", 33]}),
        (
            "attention: y declared (batch, sequence), the probabilities (batch, 2, 1, 1), an epsilon drift",
            build(AttentionBlock, seed=97),
            tokens,
            epsilon,
            (3, 6),
            {0: ["batch", "sequence"], 1: ["batch", 2, 1, 1]},
        ),
        (
            "two heads declared with each other's widths, a tanh-GELU drift",
            build(TwoHeads, seed=98),
            tokens,
            tanh,
            (4, 5),
            {0: ["batch", "sequence", 8], 1: ["batch", "sequence", 32]},
        ),
        (
            "tokens and a mask: (batch, batch, 32) and (sequence, 33), an epsilon drift",
            build(MaskedEncoder, seed=99),
            tokens_and_mask,
            {"LayerNormalization": ("epsilon", 0.1)},
            (4, 7),
            {0: ["batch", "batch", 32], 1: ["sequence", 33]},
        ),
    )
    out = {}
    for what, model, make, edit, size, shapes in cases:
        path = _declare_outputs_falsely(reference_file(model, make(2, 5, seed=1), edit), shapes)
        out[what] = _reported(solution, model, path, make(*size, seed=7))
    return out


# The red team's export that declared each output dim from one run on the example (a dim as large as the example's
# batch named "batch", as large as its sequence "sequence", any other a number) failed only the two generated
# families. Here a fixed dim is as large as the example's batch or sequence (two heads from a batch of 2, a width of
# 6 from a sequence of 6), or batch and sequence are equal, each in a model of its own.


@probe(category="export-interface", weight=2, check="every_entry_ok", hints=["declared-shapes"])
def declared_shapes_where_a_fixed_dim_equals_an_example_size(solution: Any) -> dict[str, Any]:
    """Declared output shapes read back at other sizes, from examples where a fixed dim (the head count, the width)
    is as large as the example's batch or sequence, or batch and sequence are equal."""
    narrow = functools.partial(tokens, d=6)
    return {
        "attention with 2 heads, from a batch of 2": _declared(
            export_interface(solution, build(AttentionBlock, seed=100, heads=2), tokens, (2, 5), [(3, 7), (5, 2)])
        ),
        "MLP block of width 6, from a sequence of 6": _declared(
            export_interface(solution, build(MLPBlock, seed=101, d=6, hidden=12), narrow, (3, 6), [(2, 5), (7, 1)])
        ),
        "attention with probabilities, from batch 4 and sequence 4": _declared(
            export_interface(solution, build(AttentionBlock, seed=102), tokens, (4, 4), [(2, 9), (6, 3)])
        ),
    }
