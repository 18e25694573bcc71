"""Public probes for onnx-fold-batchnorm: shown on "Run", observations and all.

Each probe builds a model (exported from torch with constant folding off, or
built with onnx.helper), runs it in onnxruntime with graph optimizations off,
calls your ``fold_batchnorm`` and describes the result: node counts per op
type, ``onnx.checker``'s verdict, and the numerics against the original
(``1e-4 + 1e-4 * |y|``, every output). The hidden probes use the same helpers.
"""

from typing import Any

import numpy as np
import torch
from probe_common import (
    apply_pass,
    bn,
    bn_weights,
    conv,
    conv_weights,
    from_torch,
    graph_model,
)
from probekit import probe
from torch import nn

# ---------------------------------------------------------------- probes


class ConvBnRelu(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c = nn.Conv2d(3, 8, 3, padding=1)
        self.b = nn.BatchNorm2d(8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.b(self.c(x)))


class ConvReluBn(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c = nn.Conv2d(3, 8, 3, padding=1)
        self.b = nn.BatchNorm2d(8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(torch.relu(self.c(x)))


@probe(category="folding", check="graph_matches", hints=["fold-math"])
def conv_bn_relu(solution: Any) -> dict[str, Any]:
    """Exported Conv2d -> BatchNorm2d -> ReLU: the pair folds into one Conv."""
    return apply_pass(solution, from_torch(ConvBnRelu(), (2, 3, 8, 8), seed=1), seed=1)


@probe(category="folding", check="graph_matches", hints=["conv-no-bias", "epsilon"])
def conv_without_bias(solution: Any) -> dict[str, Any]:
    """A Conv with no bias input, then a BN without an epsilon attribute: the folded Conv gets a bias."""
    rng = np.random.default_rng(2)
    inits = conv_weights(rng, "c", 4, 3, 3, bias=False) + bn_weights(rng, "bn", 4)
    nodes = [conv("c", "x", "c_out", bias=False), bn("bn", "c_out", "y")]
    return apply_pass(solution, graph_model(nodes, [("x", [1, 3, 6, 6])], ["y"], inits), seed=2)


@probe(category="untouched", check="graph_matches", hints=["match-producer"])
def batchnorm_after_relu(solution: Any) -> dict[str, Any]:
    """Exported Conv2d -> ReLU -> BatchNorm2d: the BN does not follow the Conv, nothing changes."""
    return apply_pass(solution, from_torch(ConvReluBn(), (2, 3, 8, 8), seed=3), seed=3)
