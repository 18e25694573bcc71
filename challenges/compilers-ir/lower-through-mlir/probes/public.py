"""Public probes for lower-through-mlir: shown on "Run", observations and all.

Two kinds of probe, as in the hidden set:

- ``lowering``: the probe calls your ``lower(model, example, workdir)``, then
  runs the artifacts itself: the .onnx file in onnxruntime and the .vmfb in
  IREE's runtime, on a batch of another size. Every level's outputs are
  compared with PyTorch's (check ``levels_match_torch``).
- ``verification``: the probe lowers the model itself (its ``build_artifacts``
  below, sometimes with a compiler setting that changes the numerics), runs
  every level itself, then calls your ``verify(model, artifacts, inputs)``.
  Your report's outputs are compared with the probe's, and its errors with
  the errors your own outputs give (check ``report_is_consistent``).
"""

from __future__ import annotations

from typing import Any

import torch
from probe_common import (
    BF16_MATMULS,
    SEQ,
    D,
    MLPBlock,
    TwoHeads,
    lowering_case,
    verification_case,
)
from probekit import probe
from torch import nn


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


# ---------------------------------------------------------------- probes


@probe(category="lowering", check="levels_match_torch", hints=["dynamic-batch", "mlir-import", "function-name"])
def lower_mlp_block(solution: Any) -> dict[str, Any]:
    """MLP block lowered from a batch-3 example; its .onnx and .vmfb run at batch 2."""
    model = build(MLPBlock, seed=1)
    return lowering_case(solution, model, tokens(3, seed=100), [tokens(2, seed=101)])


@probe(category="verification", check="report_is_consistent", hints=["report-definition", "which-pair", "function-name"])
def verify_faithful_mlp(solution: Any) -> dict[str, Any]:
    """A faithful lowering of an MLP block (function "mlp_block"), verified at batch 4: float32 rounding only."""
    model = build(MLPBlock, seed=2)
    return verification_case(solution, model, tokens(2, seed=200), tokens(4, seed=201), "mlp_block")


@probe(category="verification", check="report_is_consistent", hints=["every-output", "which-pair", "report-definition"])
def verify_bf16_matmuls(solution: Any) -> dict[str, Any]:
    """Two outputs, compiled with bf16 matmul operands: the IREE level drifts, onnxruntime does not."""
    model = build(TwoHeads, seed=3)
    return verification_case(solution, model, tokens(2, seed=300), tokens(3, seed=301), "two_heads", BF16_MATMULS)
