"""Public probes for custom-autograd-function: small versions of each category.

Every probe calls ``solution.LogSumExp.apply(x, dim, keepdim)`` on float64
inputs built from fixed values or a seeded generator, and observes outputs,
first derivatives (``torch.autograd.grad``) and second derivatives (a
``create_graph=True`` backward differentiated again).
"""

from __future__ import annotations

from typing import Any

import torch
from probekit import probe


def randn(*shape: int, seed: int, scale: float = 1.0) -> torch.Tensor:
    """Seeded float64 normal samples, independent of the global generator."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=gen, dtype=torch.float64) * scale


def flag(fn: Any) -> bool | str:
    """gradcheck-style result: True/False, or the class name of an unexpected exception."""
    try:
        return bool(fn())
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        return type(exc).__name__


@probe(category="forward", rtol=1e-10, atol=1e-12, hints=["stable-forward", "protocol"])
def forward_small(solution: Any) -> dict[str, Any]:
    """A (2, 3) input reduced over dim=1: values, shape and the output's grad_fn."""
    x = torch.tensor([[0.5, -1.0, 2.0], [3.0, 0.0, -0.25]], dtype=torch.float64, requires_grad=True)
    y = solution.LogSumExp.apply(x, 1, False)
    return {"y": y.detach(), "shape": list(y.shape), "grad_fn": type(y.grad_fn).__name__}


@probe(category="gradients", rtol=1e-9, atol=1e-12, hints=["backward-shape", "protocol"])
def gradients_small(solution: Any) -> dict[str, Any]:
    """A (3, 4) input, dim=-1: float64 gradcheck, and the gradient of a weighted sum of the outputs."""
    x = randn(3, 4, seed=1).requires_grad_()
    passed = flag(lambda: torch.autograd.gradcheck(lambda t: solution.LogSumExp.apply(t, -1, False), (x,), raise_exception=False))
    y = solution.LogSumExp.apply(x, -1, False)
    (grad,) = torch.autograd.grad((y * torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)).sum(), x)
    return {"gradcheck": passed, "x.grad": grad}


@probe(category="double-backward", rtol=1e-9, atol=1e-12, hints=["double-backward", "saved-intermediates"])
def double_backward_small(solution: Any) -> dict[str, Any]:
    """A (2, 3) input, dim=1: gradgradcheck, and a Hessian-vector product of sum(y**2)."""
    x = randn(2, 3, seed=2).requires_grad_()
    passed = flag(lambda: torch.autograd.gradgradcheck(lambda t: solution.LogSumExp.apply(t, 1, False), (x,), raise_exception=False))
    try:
        y = solution.LogSumExp.apply(x, 1, False)
        (grad,) = torch.autograd.grad((y**2).sum(), x, create_graph=True)
        (hvp,) = torch.autograd.grad((grad * randn(2, 3, seed=3)).sum(), x)
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        return {"gradgradcheck": passed, "error": type(exc).__name__, "hvp": None}
    return {"gradgradcheck": passed, "error": None, "hvp": hvp}


@probe(category="extremes", rtol=1e-9, atol=1e-12, hints=["stable-forward", "stable-backward"])
def extremes_large_row(solution: Any) -> dict[str, Any]:
    """The row [1000, 999, -1000]: exp() overflows float64 there. Value and gradient."""
    x = torch.tensor([[1000.0, 999.0, -1000.0]], dtype=torch.float64, requires_grad=True)
    y = solution.LogSumExp.apply(x, 1, False)
    (grad,) = torch.autograd.grad(y.sum(), x)
    return {"y": y.detach(), "x.grad": grad}
