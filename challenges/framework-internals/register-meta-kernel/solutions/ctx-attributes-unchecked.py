# Wrong on purpose (blind red team round 4): x, weight and rstd kept as plain ctx attributes, so an in-place change
# between a call and its backward gives a silently wrong gradient instead of autograd's version error.
"""WRONG (ctx-attributes-instead-of-save-for-backward). setup_context keeps x, weight and rstd as
plain ctx attributes instead of ctx.save_for_backward. Everything one call needs still goes through
its ctx, but autograd no longer checks versions: if x or weight is changed in place after the call and
before its backward (a weight updated before a delayed backward, an activation overwritten in place),
the backward silently differentiates at the NEW values instead of raising as save_for_backward does.
Breaks: "Each call ... computes from the arguments it is given, as they are at that moment" (the
gradient returned belongs to no forward that ran).
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


# ---------------------------------------------------------------------------
# Fake kernel and autograd formula.
# ---------------------------------------------------------------------------


@rms_norm.register_fake
def _rms_norm_fake(x, weight, eps):
    torch._check(x.dim() >= 1, lambda: "rms_norm: x needs at least one dimension")
    torch._check(weight.dim() == 1 and weight.shape[0] == x.shape[-1], lambda: "rms_norm: bad weight shape")
    torch._check(weight.dtype == x.dtype, lambda: "rms_norm: weight dtype")
    y = x.new_empty(x.shape)
    rstd = x.new_empty(x.shape[:-1], dtype=accumulation_dtype(x.dtype))
    return y, rstd


def _setup_context(ctx, inputs, output):
    x, weight, _eps = inputs
    _y, rstd = output
    # keep them on ctx directly (save_for_backward is only needed for outputs, or so I thought)
    ctx.x, ctx.weight, ctx.rstd = x, weight, rstd.detach()


def _backward(ctx, grad_y, grad_rstd):
    x, weight, rstd = ctx.x, ctx.weight, ctx.rstd
    acc = rstd.dtype
    xf = x.to(acc)
    r = rstd.unsqueeze(-1)
    x_hat = xf * r
    grad_x = torch.zeros_like(xf)
    grad_w = torch.zeros_like(weight)
    if grad_y is not None:
        gy = grad_y.to(acc)
        g = gy * weight.to(acc)
        grad_x = r * (g - x_hat * (g * x_hat).mean(dim=-1, keepdim=True))
        grad_w = (gy * x_hat).reshape(-1, x.shape[-1]).sum(dim=0).to(weight.dtype)
    if grad_rstd is not None:
        grad_x = grad_x - grad_rstd.to(acc).unsqueeze(-1) * r.pow(3) * xf / x.shape[-1]
    return grad_x.to(x.dtype), grad_w, None


torch.library.register_autograd("interview::rms_norm", _backward, setup_context=_setup_context)
