# Wrong on purpose (blind red team round 4, caught): an empty batch returns None for the weight's gradient.
"""WRONG (empty-batch-returns-none-weight-grad). The backward short-cuts an empty batch with
`return zeros_like(x), None, None`: x's gradient is right, but weight's gradient, which is asked
for and is all zeros (shape (D,)), is None, so weight.grad stays unset and autograd.grad raises.
Breaks: "A gradient that is asked for is a tensor, even where it is all zeros" and "the batch may be
empty".
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
    torch._check(weight.dim() == 1 and weight.shape[0] == x.shape[-1], lambda: "rms_norm: bad weight shape")
    y = x.new_empty(x.shape)
    rstd = x.new_empty(x.shape[:-1], dtype=accumulation_dtype(x.dtype))
    return y, rstd


def _setup_context(ctx, inputs, output):
    x, weight, _eps = inputs
    _y, rstd = output
    ctx.save_for_backward(x, weight, rstd)


def _backward(ctx, grad_y, grad_rstd):
    x, weight, rstd = ctx.saved_tensors
    if x.numel() == 0:
        # empty batch: nothing flows back
        return torch.zeros_like(x), None, None
    acc = rstd.dtype
    xf = x.to(acc)
    r = rstd.unsqueeze(-1)
    x_hat = xf * r
    gy = grad_y.to(acc)
    g = gy * weight.to(acc)
    grad_x = r * (g - x_hat * (g * x_hat).mean(dim=-1, keepdim=True))
    grad_w = (gy * x_hat).reshape(-1, x.shape[-1]).sum(dim=0).to(weight.dtype)
    grad_x = grad_x - grad_rstd.to(acc).unsqueeze(-1) * r.pow(3) * xf / x.shape[-1]
    return grad_x.to(x.dtype), grad_w, None


torch.library.register_autograd("interview::rms_norm", _backward, setup_context=_setup_context)
