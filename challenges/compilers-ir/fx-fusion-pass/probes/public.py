"""Public probes for fx-fusion-pass: what Run shows.

Each probe builds a small module with seeded parameters, traces it with
``torch.fx.symbolic_trace``, runs the candidate's ``fuse`` on the
GraphModule, and observes what the returned graph holds (node targets,
counted, without placeholders, outputs and get_attr nodes, and the fused
calls' argument form), what a GraphModule rebuilt from that graph computes
on fixed inputs, whether the returned module called as it is dispatches
what its graph does (recompiled), and whether any of the module's own
parameters or buffers changed. All are compared with the reference's (auto
check: exact for the counts and flags, float32 tolerance for the values).
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from probe_common import randn, run_pass
from probekit import probe
from torch import nn

# ---------------------------------------------------------------- probes


class Swish(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(x) + 1.0


@probe(category="silu", hints=["silu-forms"])
def silu_basic(solution: Any) -> dict[str, Any]:
    """x * torch.sigmoid(x) + 1: the product becomes one F.silu call."""
    return run_pass(solution, Swish(), randn(1, 2, 4))


class LinearRelu(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.fc(x))


@probe(category="linear-relu", hints=["linear-relu-forms", "get-attr"])
def linear_relu_basic(solution: Any) -> dict[str, Any]:
    """F.relu(self.fc(x)) with an nn.Linear: one fused_linear_relu call."""
    torch.manual_seed(3)
    return run_pass(solution, LinearRelu(), randn(4, 5, 4))


class Gate(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(y)


@probe(category="leave-alone", hints=["same-operand"])
def sigmoid_gate_untouched(solution: Any) -> dict[str, Any]:
    """x * torch.sigmoid(y) is a gate, not a SiLU: the graph stays as it is."""
    return run_pass(solution, Gate(), randn(5, 3, 3), randn(6, 3, 3))
