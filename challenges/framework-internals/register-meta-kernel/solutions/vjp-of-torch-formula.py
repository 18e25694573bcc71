# Correct (blind red team round 2): backward is torch.func.vjp of a torch re-implementation of the kernel's
# formula in acc; saves x, weight and eps, not rstd.
"""The custom operator ``interview::rms_norm`` and what it still lacks.

Given below: the operator's definition and its eager CPU kernel. The kernel
stands in for a vendor library call: it leaves PyTorch through NumPy, so it
can only run on real CPU tensors. Eager calls work already; FakeTensor
propagation, autograd and ``torch.compile`` do not.

Your work goes at the end of this file: a fake kernel registered with
``register_fake`` and an autograd formula registered with
``torch.library.register_autograd``. Do not change the operator's name, its
signature or its eager kernel.
"""

from __future__ import annotations

import numpy as np
import torch


def accumulation_dtype(dtype: torch.dtype) -> torch.dtype:
    """The dtype the kernel computes in: float64 for float64, float32 for every narrower float."""
    return torch.promote_types(dtype, torch.float32)


@torch.library.custom_op("interview::rms_norm", mutates_args=(), device_types="cpu")
def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Normalise each row of ``x`` (its last dimension) by its root mean square.

    Args:
        x: a float tensor of shape ``(..., D)``, any strides.
        weight: shape ``(D,)``, the same dtype as ``x``.
        eps: a positive float added to the mean square.

    Returns:
        ``(y, rstd)`` where, computed in ``accumulation_dtype(x.dtype)``,
        ``rstd = 1 / sqrt(mean(x**2, dim=-1) + eps)`` has shape ``x.shape[:-1]``
        and that accumulation dtype, and ``y = x * rstd[..., None] * weight``
        has the shape of ``x`` and the dtype of ``x``. Both are new contiguous
        tensors, whatever the strides of ``x``.
    """
    torch._check(x.dim() >= 1, lambda: "rms_norm: x needs at least one dimension")
    torch._check(x.dtype.is_floating_point, lambda: f"rms_norm: x must be a float tensor, got {x.dtype}")
    torch._check(
        weight.dim() == 1 and weight.shape[0] == x.shape[-1],
        lambda: f"rms_norm: weight must have shape ({x.shape[-1]},), got {tuple(weight.shape)}",
    )
    torch._check(weight.dtype == x.dtype, lambda: f"rms_norm: weight is {weight.dtype} but x is {x.dtype}")
    acc = accumulation_dtype(x.dtype)
    # NumPy has no bfloat16, and the kernel accumulates in float32 anyway, so
    # the conversion happens in torch before the data leaves it.
    xs = x.to(acc).contiguous().numpy()
    ws = weight.to(acc).contiguous().numpy()
    # keepdims keeps a 1-D input working: its rstd is a 0-d array, not a scalar.
    rstd = 1.0 / np.sqrt(np.mean(xs * xs, axis=-1, keepdims=True) + eps)
    y = xs * rstd * ws
    y_out = torch.from_numpy(np.ascontiguousarray(y)).to(x.dtype)
    rstd_out = torch.from_numpy(rstd.reshape(tuple(x.shape[:-1])).copy())
    return y_out, rstd_out


# ---------------------------------------------------------------------------
# Your code below: the fake kernel and the autograd formula for
# interview::rms_norm.
# ---------------------------------------------------------------------------



@rms_norm.register_fake
def _rms_norm_fake(x, weight, eps):
    torch._check(x.dim() >= 1, lambda: "rms_norm: x needs at least one dimension")
    torch._check(weight.dim() == 1 and weight.shape[0] == x.shape[-1], lambda: "rms_norm: bad weight shape")
    torch._check(weight.dtype == x.dtype, lambda: "rms_norm: weight dtype")
    acc = accumulation_dtype(x.dtype)
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)  # torch.empty is always contiguous
    rstd = torch.empty(x.shape[:-1], dtype=acc, device=x.device)
    return y, rstd


def _setup_context(ctx, inputs, output):
    x, weight, eps = inputs
    ctx.eps = eps
    ctx.save_for_backward(x, weight)


def _math(xf, wf, eps):
    # the same formula as the kernel, in torch ops on acc-dtype tensors
    rstd = torch.rsqrt(xf.pow(2).mean(dim=-1) + eps)
    return xf * rstd.unsqueeze(-1) * wf, rstd


def _backward(ctx, grad_y, grad_rstd):
    # Differentiate a torch re-implementation of the forward with torch.func.vjp,
    # everything in the accumulation dtype.
    x, weight = ctx.saved_tensors
    acc = accumulation_dtype(x.dtype)
    xf, wf = x.detach().to(acc), weight.detach().to(acc)
    gy = torch.zeros(x.shape, dtype=acc, device=x.device) if grad_y is None else grad_y.to(acc)
    gr = torch.zeros(x.shape[:-1], dtype=acc, device=x.device) if grad_rstd is None else grad_rstd.to(acc)
    _, vjp_fn = torch.func.vjp(lambda a, b: _math(a, b, ctx.eps), xf, wf)
    gx, gw = vjp_fn((gy, gr))
    return gx.to(x.dtype), gw.to(weight.dtype), None


torch.library.register_autograd("interview::rms_norm", _backward, setup_context=_setup_context)
