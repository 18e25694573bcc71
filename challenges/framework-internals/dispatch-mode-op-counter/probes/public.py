"""Public probes for dispatch-mode-op-counter: small versions of each category.

Models and inputs are built before the counter is entered, so that parameter
initialisation is not counted.
"""

from __future__ import annotations

from typing import Any

import torch
from probekit import probe
from torch import nn
from torch.utils._python_dispatch import _get_current_dispatch_mode


def randn(*shape: int, seed: int = 0, requires_grad: bool = False) -> torch.Tensor:
    """Seeded normal samples, independent of the global generator."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=gen).requires_grad_(requires_grad)


def counted(counter: Any) -> dict[str, Any]:
    """A counter's results as plain data."""
    return {"counts": dict(counter.counts), "flops": counter.flops, "flops_by_op": dict(counter.flops_by_op)}


@probe(category="ops-forward", hints=["op-names"])
def linear_forward_counts(solution: Any) -> dict[str, Any]:
    """Forward of nn.Linear(4, 3) on a (2, 4) batch: the op counts."""
    torch.manual_seed(1)
    layer, x = nn.Linear(4, 3), randn(2, 4, seed=2)
    with solution.OpCounter() as counter:
        layer(x)
    return {"counts": dict(counter.counts)}


@probe(category="ops-backward", hints=["op-names", "backward"])
def linear_backward_counts(solution: Any) -> dict[str, Any]:
    """Backward of nn.Linear(4, 3) on a (2, 4) batch that needs no grad: the op counts."""
    torch.manual_seed(1)
    layer, x = nn.Linear(4, 3), randn(2, 4, seed=2)
    loss = layer(x).sum()
    with solution.OpCounter() as counter:
        loss.backward()
    return {"counts": dict(counter.counts)}


@probe(category="flops", hints=["flop-table", "addmm-args"])
def matmul_flops(solution: Any) -> dict[str, Any]:
    """torch.mm (3, 4) @ (4, 5) and torch.addmm with a (5,) bias: counts and FLOPs (2*3*4*5 = 120 each)."""
    a, b, bias = randn(3, 4, seed=3), randn(4, 5, seed=4), randn(5, seed=5)
    with solution.OpCounter() as counter:
        torch.mm(a, b)
        torch.addmm(bias, a, b)
    return counted(counter)


@probe(category="nesting", hints=["reset-on-enter", "exit-cleanly"])
def reuse_resets(solution: Any) -> dict[str, Any]:
    """One counter entered twice: the second use starts from zero; no mode is left active."""
    a, b = randn(3, 4, seed=6), randn(4, 2, seed=7)
    counter = solution.OpCounter()
    with counter:
        torch.mm(a, b)
        torch.mm(a, b)
    first = counted(counter)
    with counter:
        torch.relu(a)
    return {"first": first, "second": counted(counter), "mode after": _get_current_dispatch_mode() is None}
