# Correct (blind red team round 2): a backward with eps explicit, grad_x = r^3 [eps g + mean_j x_j (g_i x_j - x_i g_j)]
# - grad_rstd r^3 x / D, with no cancellation: more exact than the reference where eps is tiny (D = 1).
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
    y = x.new_empty(x.shape)
    rstd = x.new_empty(x.shape[:-1], dtype=accumulation_dtype(x.dtype))
    return y, rstd


def _setup_context(ctx, inputs, output):
    x, weight, eps = inputs
    ctx.eps = eps
    ctx.save_for_backward(x, weight, output[1])


def _backward(ctx, grad_y, grad_rstd):
    # With r^2 (mean(x^2) + eps) = 1:
    #   dL/dx_i = r^3 [ eps g_i + mean_j x_j (g_i x_j - x_i g_j) ] - grad_rstd r^3 x_i / D,  g = grad_y * w
    # The eps term is explicit, so the result does not come from cancelling r g_i against r^3 x_i mean(g x)
    # (exact for D = 1, where the pairwise term is exactly zero).
    x, weight, rstd = ctx.saved_tensors
    acc = rstd.dtype
    D = x.shape[-1]
    xf = x.to(acc)
    gy = grad_y.to(acc)
    g = gy * weight.to(acc)
    r3 = rstd.pow(3).unsqueeze(-1)
    pair = g.unsqueeze(-1) * xf.unsqueeze(-2) - xf.unsqueeze(-1) * g.unsqueeze(-2)  # [..., i, j] = g_i x_j - x_i g_j
    inner = (pair * xf.unsqueeze(-2)).mean(dim=-1)
    grad_x = r3 * (ctx.eps * g + inner) - grad_rstd.to(acc).unsqueeze(-1) * r3 * xf / D
    grad_w = (gy * xf * rstd.unsqueeze(-1)).reshape(-1, D).sum(dim=0)
    return grad_x.to(x.dtype), grad_w.to(weight.dtype), None


torch.library.register_autograd("interview::rms_norm", _backward, setup_context=_setup_context)
