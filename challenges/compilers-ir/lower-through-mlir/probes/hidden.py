"""Hidden probes for lower-through-mlir: they make the score.

Two categories:

- ``lowering``: the probe calls the candidate's ``lower(model, example,
  workdir)``, checks the artifacts (three files in workdir; the .mlir is the
  torch-dialect import of the .onnx file and holds the named function), runs
  the .onnx file in onnxruntime and the .vmfb in IREE itself, on batches of
  other sizes, and returns their outputs next to PyTorch's
  (``levels_match_torch``). Models: an MLP block, an attention block with two
  outputs, a conv net exported from a single image, a token classifier with
  int64 ids in and an int64 argmax out, and a 1-d signal model (Conv1d, max
  pooling, nearest Resize, CumSum, TopK) for operator coverage.
- ``verification``: the probe lowers the model itself (``build_artifacts``,
  with a function name other than "main_graph"), runs every level itself,
  then calls the candidate's ``verify`` (``report_is_consistent``). Three of
  the lowerings really drift, each at one level:

  - the ONNX level: ``ClippedMLP`` rescales its activations in a Python
    ``if`` on a tensor value; tracing records the branch the example took
    (not rescaled), the verification inputs take the other one. onnxruntime
    and IREE agree with each other and both differ from PyTorch;
  - the IREE level: iree-compile with bf16 matmul operands
    (``--iree-global-opt-demote-contraction-inputs-type=bf16``): onnxruntime
    matches PyTorch, IREE drifts by about 1e-3. In the token classifier
    that drift flips one row's int64 argmax, so the integer output carries
    the largest error.

  One more verification hands ``verify`` a model left in training mode
  (``verify_model_left_in_training_mode``): the torch level runs in eval
  mode whatever mode the model comes in.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F
from probe_common import (
    BF16_MATMULS,
    SEQ,
    D,
    MLPBlock,
    TwoHeads,
    build_artifacts,
    lowering_case,
    observe_report,
    run_levels,
    verification_case,
)
from probekit import probe
from torch import nn


class AttentionBlock(nn.Module):
    """Pre-LayerNorm self-attention with 2 heads; returns (y, attention probabilities)."""

    def __init__(self, heads: int = 2) -> None:
        super().__init__()
        self.heads = heads
        self.ln = nn.LayerNorm(D)
        self.qkv = nn.Linear(D, 3 * D)
        self.out = nn.Linear(D, D)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln(x)).chunk(3, dim=-1)
        q, k, v = (t.reshape(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        probs = (q @ k.transpose(-1, -2) / math.sqrt(d // self.heads)).softmax(dim=-1)
        y = (probs @ v).transpose(1, 2).reshape(b, s, d)
        return x + self.out(y), probs


class ConvNet(nn.Module):
    """Two convolutions (BatchNorm in eval mode, ReLU), global average pooling, log-softmax over 10 classes."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.relu(self.bn(self.conv1(x)))
        h = F.relu(self.conv2(h))
        return self.fc(h.mean(dim=(2, 3))).log_softmax(dim=-1)


class TokenClassifier(nn.Module):
    """int64 token ids and a float padding mask in; class probabilities and the int64 argmax out."""

    def __init__(self, vocab: int = 50, classes: int = 6) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, D)
        self.ln = nn.LayerNorm(D)
        self.fc = nn.Linear(D, classes)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.embed(ids) * mask.unsqueeze(-1)
        pooled = h.sum(dim=1) / mask.sum(dim=1, keepdim=True).clamp(min=1.0)
        probs = self.fc(self.ln(pooled)).softmax(dim=-1)
        return probs, probs.argmax(dim=-1)


class SignalNet(nn.Module):
    """1-d signal ops: Conv1d, max pooling, nearest upsampling, a cumulative sum and a top-k."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv1d(4, 8, 3, padding=1)
        self.conv2 = nn.Conv1d(8, 4, 3, padding=1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = F.max_pool1d(F.relu(self.conv1(x)), 2)
        h = F.interpolate(h, scale_factor=2, mode="nearest")
        return self.conv2(h).cumsum(dim=-1), torch.topk(h.mean(dim=1), 3, dim=-1).values


class ClippedMLP(nn.Module):
    """An MLP that rescales its hidden activations when their largest row norm passes a limit.

    The limit is a Python `if` on a tensor value: tracing (the TorchScript
    exporter) records only the branch the example took.
    """

    def __init__(self, limit: float = 6.0) -> None:
        super().__init__()
        self.limit = limit
        self.ln = nn.LayerNorm(D)
        self.fc1 = nn.Linear(D, 4 * D)
        self.fc2 = nn.Linear(4 * D, D)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.gelu(self.fc1(x))
        norms = h.norm(dim=-1, keepdim=True)
        if norms.max() > self.limit:
            h = h * (self.limit / norms).clamp(max=1.0)
        return self.fc2(h)


def build(cls: type[nn.Module], seed: int) -> nn.Module:
    """A model with seeded weights, in eval mode, with non-trivial normalization parameters."""
    torch.manual_seed(seed)
    model = cls()
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.LayerNorm | nn.BatchNorm2d):
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.2, 0.2)
            if isinstance(module, nn.BatchNorm2d):
                module.running_mean.uniform_(-0.5, 0.5)
                module.running_var.uniform_(0.5, 2.0)
    return model.eval()


def randn(*shape: int, seed: int, scale: float = 1.0) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(*shape, generator=gen, dtype=torch.float64) * scale).to(torch.float32)


def tokens(batch: int, seed: int, scale: float = 1.0) -> tuple[torch.Tensor, ...]:
    return (randn(batch, SEQ, D, seed=seed, scale=scale),)


def images(batch: int, seed: int) -> tuple[torch.Tensor, ...]:
    return (randn(batch, 3, 12, 12, seed=seed),)


def signals(batch: int, seed: int) -> tuple[torch.Tensor, ...]:
    return (randn(batch, 4, 16, seed=seed),)


def ids_and_mask(batch: int, seed: int, vocab: int = 50) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, vocab, (batch, SEQ), generator=gen, dtype=torch.int64)
    lengths = torch.arange(batch) % SEQ + 1  # row i keeps its first (i % SEQ) + 1 tokens
    mask = (torch.arange(SEQ)[None, :] < lengths[:, None]).to(torch.float32)
    return ids, mask


# ---------------------------------------------------------------- lowering


@probe(category="lowering", check="levels_match_torch", hints=["dynamic-batch", "mlir-import"])
def lower_mlp_other_batches(solution: Any) -> dict[str, Any]:
    """MLP block lowered from a batch-2 example, run at batch 1 and batch 5."""
    model = build(MLPBlock, seed=10)
    return lowering_case(solution, model, tokens(2, seed=1000), [tokens(1, seed=1001), tokens(5, seed=1002)])


@probe(category="lowering", check="levels_match_torch", hints=["dynamic-batch", "function-name"])
def lower_attention_two_outputs(solution: Any) -> dict[str, Any]:
    """Attention block returning (y, probabilities): both outputs at both levels."""
    model = build(AttentionBlock, seed=11)
    return lowering_case(solution, model, tokens(2, seed=1100), [tokens(3, seed=1101)])


@probe(category="lowering", check="levels_match_torch", hints=["dynamic-batch", "mlir-import"])
def lower_convnet_single_image_example(solution: Any) -> dict[str, Any]:
    """Conv net lowered from a single-image example (batch 1), run at batch 4."""
    model = build(ConvNet, seed=12)
    return lowering_case(solution, model, images(1, seed=1200), [images(4, seed=1201)])


@probe(category="lowering", check="levels_match_torch", hints=["dynamic-batch", "input-dtypes"])
def lower_token_classifier_int64(solution: Any) -> dict[str, Any]:
    """int64 token ids and a float mask in, float probabilities and an int64 argmax out, at batch 6."""
    model = build(TokenClassifier, seed=13)
    return lowering_case(solution, model, ids_and_mask(2, seed=1300), [ids_and_mask(6, seed=1301)])


@probe(category="lowering", check="levels_match_torch", hints=["dynamic-batch", "mlir-import"])
def lower_signal_ops(solution: Any) -> dict[str, Any]:
    """Conv1d, max pooling, nearest upsampling, a cumulative sum and a top-k, at batch 3."""
    model = build(SignalNet, seed=14)
    return lowering_case(solution, model, signals(2, seed=1400), [signals(3, seed=1401)])


# ---------------------------------------------------------------- verification


@probe(category="verification", check="report_is_consistent", hints=["report-definition", "which-pair", "function-name"])
def verify_faithful_mlp(solution: Any) -> dict[str, Any]:
    """A faithful lowering of an MLP block, verified at batch 5: every error is float32 rounding."""
    model = build(MLPBlock, seed=20)
    return verification_case(solution, model, tokens(2, seed=2000), tokens(5, seed=2001), "mlp_block")


@probe(category="verification", check="report_is_consistent", hints=["every-output", "report-definition"])
def verify_attention_two_outputs(solution: Any) -> dict[str, Any]:
    """A faithful lowering of an attention block with two outputs: every output, every level."""
    model = build(AttentionBlock, seed=21)
    return verification_case(solution, model, tokens(2, seed=2100), tokens(3, seed=2101), "attention_block")


@probe(category="verification", check="report_is_consistent", hints=["which-pair", "report-definition"])
def verify_traced_branch_drift(solution: Any) -> dict[str, Any]:
    """The export froze a data-dependent branch: onnxruntime and IREE agree, and both drift from PyTorch."""
    model = build(ClippedMLP, seed=22)
    example = tokens(2, seed=2200, scale=0.1)  # small activations: the rescaling branch is not taken
    inputs = tokens(4, seed=2201, scale=4.0)  # large ones: PyTorch takes it, the exported graph cannot
    return verification_case(solution, model, example, inputs, "clipped_mlp")


@probe(category="verification", check="report_is_consistent", hints=["which-pair", "every-output", "report-definition"])
def verify_bf16_matmuls_iree_drift(solution: Any) -> dict[str, Any]:
    """Compiled with bf16 matmul operands: the IREE level drifts from both PyTorch and onnxruntime."""
    model = build(TwoHeads, seed=23)
    return verification_case(solution, model, tokens(2, seed=2300), tokens(5, seed=2301), "two_heads", BF16_MATMULS)


@probe(category="verification", check="report_is_consistent", hints=["input-dtypes", "every-output", "report-definition"])
def verify_token_classifier_int64(solution: Any) -> dict[str, Any]:
    """int64 ids and a float mask in, probabilities and an int64 argmax out, bf16 matmuls: one argmax flips.

    Compiled with bf16 matmul operands. Row 11 of these inputs (seed 2426
    was picked for it) has its two best classes 7.6e-5 apart in PyTorch and
    onnxruntime; IREE's probabilities drift by about 7e-4, and its argmax
    picks the other class. The integer output then carries the largest error
    of the IREE pairs, so a report that leaves integer outputs out of its
    errors fails here.
    """
    model = build(TokenClassifier, seed=24)
    return verification_case(solution, model, ids_and_mask(2, seed=2400), ids_and_mask(12, seed=2426), "token_classifier", BF16_MATMULS)


@probe(category="verification", check="report_is_consistent", hints=["eval-mode", "report-definition"])
def verify_model_left_in_training_mode(solution: Any) -> dict[str, Any]:
    """A faithful lowering of the conv net, whose model reaches verify() in training mode.

    The probe lowers the model and runs every level in eval mode, then calls
    ``model.train()`` before ``verify``, as a model fresh from a training
    loop would come. The statement's torch level is eval mode: a verify()
    that runs the model in the mode it came in normalizes with the batch's
    own statistics (BatchNorm), so its torch outputs are not the eval-mode
    outputs the other levels were exported from.
    """
    model = build(ConvNet, seed=25)
    artifacts = build_artifacts(model, images(2, seed=2500), "conv_net")
    inputs = images(3, seed=2501)
    truth = run_levels(model, artifacts, inputs)
    model.train()
    report = solution.verify(model, dict(artifacts), inputs)
    return {"truth": truth, "report": observe_report(report)}
