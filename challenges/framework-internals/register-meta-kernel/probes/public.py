"""Public probes for register-meta-kernel: one per category, small inputs.

Every probe calls the operator through the dispatcher
(``torch.ops.interview.rms_norm``), the way torch.compile and other callers
reach it, and builds its own inputs from a fixed seed.
"""

from __future__ import annotations

from typing import Any

import torch
from probekit import probe
from torch._subclasses.fake_tensor import FakeTensorMode

EPS = 1e-5


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = EPS) -> tuple[torch.Tensor, torch.Tensor]:
    """Call the operator through the dispatcher."""
    return torch.ops.interview.rms_norm(x, weight, eps)


def randn(*shape: int, dtype: torch.dtype = torch.float32, seed: int = 0) -> torch.Tensor:
    """Seeded normal samples, independent of the global generator."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=gen, dtype=torch.float64).to(dtype)


def describe(t: torch.Tensor) -> dict[str, Any]:
    """A fake tensor's metadata as plain data (fake tensors have no values)."""
    return {
        "shape": list(t.shape),
        "dtype": str(t.dtype),
        "stride": list(t.stride()),
        "device": t.device.type,
    }


def root_cause(exc: BaseException) -> str:
    """The innermost exception's class and first line.

    torch.compile wraps the real error (a missing fake kernel or autograd
    formula) in its own exceptions; the innermost one says what to fix.
    """
    while exc.__cause__ is not None or exc.__context__ is not None:
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0][:300] if lines else ''}"


@probe(category="eager", rtol=1e-6, atol=1e-6)
def eager_small_float32(solution: Any) -> dict[str, Any]:
    """Eager call on a float32 (2, 4) input: y and rstd values."""
    x = torch.tensor([[1.0, -2.0, 3.0, -4.0], [0.5, 0.25, -0.125, 2.0]])
    weight = torch.tensor([1.0, 0.5, 2.0, -1.0])
    y, rstd = rms_norm(x, weight)
    return {"y": y, "rstd": rstd}


@probe(category="fake", hints=["fake-kernel", "fake-dtype"])
def fake_float32_and_bfloat16(solution: Any) -> dict[str, Any]:
    """Under FakeTensorMode, a (4, 8) input in float32 and bfloat16: metadata of y and rstd."""
    out: dict[str, Any] = {}
    with FakeTensorMode():
        for dtype in (torch.float32, torch.bfloat16):
            x = torch.empty(4, 8, dtype=dtype)
            weight = torch.empty(8, dtype=dtype)
            y, rstd = rms_norm(x, weight)
            out[str(dtype)] = {"y": describe(y), "rstd": describe(rstd)}
    return out


@probe(category="autograd", rtol=1e-9, atol=1e-12, hints=["autograd-formula", "autograd-save"])
def gradcheck_float64(solution: Any) -> dict[str, Any]:
    """float64 (3, 5): gradcheck through both outputs, and the gradients of a weighted sum."""
    x = randn(3, 5, dtype=torch.float64, seed=1).requires_grad_()
    weight = randn(5, dtype=torch.float64, seed=2).requires_grad_()
    passed = torch.autograd.gradcheck(lambda a, b: rms_norm(a, b), (x, weight), raise_exception=False)
    y, rstd = rms_norm(x, weight)
    loss = (y * randn(3, 5, dtype=torch.float64, seed=3)).sum() + (rstd * randn(3, dtype=torch.float64, seed=4)).sum()
    loss.backward()
    return {"gradcheck": passed, "x.grad": x.grad, "weight.grad": weight.grad}


@probe(category="compile", rtol=1e-4, atol=1e-5, hints=["fake-kernel", "autograd-formula"])
def compile_forward_backward(solution: Any) -> dict[str, Any]:
    """torch.compile(fullgraph=True, backend="aot_eager"), float32 (4, 8): outputs and gradients."""

    def f(x: torch.Tensor, weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y, rstd = rms_norm(x, weight)
        return y * 2.0, rstd + 1.0

    x = randn(4, 8, seed=5).requires_grad_()
    weight = randn(8, seed=6).requires_grad_()
    # The same keys either way, "error" first, so a failure is reported as
    # the error's text rather than as missing keys.
    try:
        y, rstd = torch.compile(f, fullgraph=True, backend="aot_eager")(x, weight)
        (y.sum() + rstd.sum()).backward()
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        return {"error": root_cause(exc), "y": None, "rstd": None, "x.grad": None, "weight.grad": None}
    return {"error": None, "y": y.detach(), "rstd": rstd.detach(), "x.grad": x.grad, "weight.grad": weight.grad}
