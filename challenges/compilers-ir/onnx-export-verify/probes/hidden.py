"""Hidden probes for onnx-export-verify: they make the score.

Three categories:

- ``dynamic-shapes``: the candidate's ``export`` writes a file from one
  example; the probe runs that file in onnxruntime at other batch and
  sequence sizes (including 1) and compares it with the model in eval mode.
  The observation is one "ok" or one failure text per size.
- ``export-hygiene``: the same, for the parts of an export that are not the
  shapes: inference mode (a model handed over in train mode, with dropout)
  and a self-contained file (the .onnx file alone, copied elsewhere).
- ``verification``: the probe writes an ONNX file itself (sometimes with a
  planted numerical drift, made by editing a real node's attribute), measures
  the error between onnxruntime and PyTorch, then calls the candidate's
  ``verify``. The check (``reported_error_matches``) compares what verify
  reported with what the reference run's probe measured.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F
from probe_common import MLPBlock, build, export_and_run, randn, tokens, verify_case
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
