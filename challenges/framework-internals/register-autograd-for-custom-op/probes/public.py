"""Public probes for register-autograd-for-custom-op: one per category, small inputs.

Every probe calls the operator through the dispatcher,
``torch.ops.interview.weighted_embedding``, with inputs built from fixed
values or a seeded generator.
"""

from __future__ import annotations

from typing import Any

import torch
from probekit import probe


def embed(table: torch.Tensor, indices: torch.Tensor, weights: torch.Tensor, scale: float) -> torch.Tensor:
    """Call the operator through the dispatcher."""
    return torch.ops.interview.weighted_embedding(table, indices, weights, scale)


def randn(*shape: int, seed: int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """Seeded normal samples, independent of the global generator and of dtype."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=gen, dtype=torch.float64).to(dtype)


def describe(value: Any) -> Any:
    """One entry of what backward returned: None, or a tensor's shape and dtype."""
    if value is None:
        return None
    if isinstance(value, torch.Tensor):
        return {"shape": list(value.shape), "dtype": str(value.dtype)}
    return type(value).__name__


def record_backward(solution: Any) -> list[Any]:
    """Re-register the candidate's own setup_context/backward, wrapped to record what backward returns."""
    calls: list[Any] = []

    def recording_backward(ctx: Any, *grads: torch.Tensor) -> Any:
        result = solution.backward(ctx, *grads)
        calls.append([describe(g) for g in result] if isinstance(result, tuple | list) else describe(result))
        return result

    torch.library.register_autograd(
        "interview::weighted_embedding", recording_backward, setup_context=solution.setup_context
    )
    return calls


INDICES = torch.tensor([[0, 2, 2], [5, 1, 0]])


@probe(category="gradients", rtol=1e-9, atol=1e-12, hints=["formulas", "repeated-indices"])
def gradients_small(solution: Any) -> dict[str, Any]:
    """table (6, 3), indices [[0, 2, 2], [5, 1, 0]], scale 0.5, float64: gradcheck and both gradients."""
    table = randn(6, 3, seed=1).requires_grad_()
    weights = randn(2, 3, seed=2).requires_grad_()
    passed = torch.autograd.gradcheck(lambda t, w: embed(t, INDICES, w, 0.5), (table, weights), raise_exception=False)
    out = embed(table, INDICES, weights, 0.5)
    (out * randn(2, 3, 3, seed=3)).sum().backward()
    return {"gradcheck": passed, "table.grad": table.grad, "weights.grad": weights.grad}


@probe(category="none-grads", hints=["none-grads", "needs-input-grad"])
def none_grads_frozen_table(solution: Any) -> dict[str, Any]:
    """What backward returns, slot by slot, when the table is frozen (requires_grad=False)."""
    calls = record_backward(solution)
    table = randn(6, 3, seed=4)
    weights = randn(2, 3, seed=5).requires_grad_()
    embed(table, INDICES, weights, 0.5).sum().backward()
    return {"backward returned": calls, "table.grad": table.grad}


@probe(category="opcheck", hints=["traceable", "none-grads"])
def opcheck_one_sample(solution: Any) -> dict[str, Any]:
    """torch.library.opcheck on one float64 sample, each test on its own: "ok" or the error's class."""
    table = randn(6, 3, seed=6).requires_grad_()
    weights = randn(2, 3, seed=7).requires_grad_()
    out: dict[str, str] = {}
    for test in ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic"):
        try:
            torch.library.opcheck(
                torch.ops.interview.weighted_embedding.default, (table, INDICES, weights, 0.5), test_utils=test
            )
            out[test] = "ok"
        except Exception as exc:  # noqa: BLE001 - the failure is the observation
            out[test] = type(exc).__name__
    return out


@probe(category="compile", rtol=1e-4, atol=1e-5, hints=["traceable"])
def compile_small(solution: Any) -> dict[str, Any]:
    """torch.compile(fullgraph=True, backend="aot_eager"), float32: output and both gradients."""
    table = randn(6, 3, seed=8, dtype=torch.float32).requires_grad_()
    weights = randn(2, 3, seed=9, dtype=torch.float32).requires_grad_()

    def f(t: torch.Tensor, i: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return torch.sin(embed(t, i, w, 0.5)).sum()

    try:
        loss = torch.compile(f, fullgraph=True, backend="aot_eager")(table, INDICES, weights)
        loss.backward()
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        return {"error": type(exc).__name__, "loss": None, "table.grad": None, "weights.grad": None}
    return {"error": None, "loss": loss.detach(), "table.grad": table.grad, "weights.grad": weights.grad}
