"""Owner's alternative (red team round 4): saved values copied, fake strides computed, float64 by promotion.

The operator's definition and eager CPU kernel are the starter's, unchanged.
The kernel stands in for a vendor library call: it leaves PyTorch through
NumPy, so it can only run on real CPU tensors. The fake kernel and the
autograd formula at the end of this file let FakeTensor propagation, the
meta device, autograd and ``torch.compile`` work with it.
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
# Fake kernel: strides computed by hand. Autograd: copies of what the call was given, kept on ctx.
# ---------------------------------------------------------------------------


def _standard_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides of shape, the ones torch.empty(shape) gets (a size-0 or size-1 dim counts as 1)."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)
    return tuple(reversed(strides))


@rms_norm.register_fake
def _fake(x: torch.Tensor, weight: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    shape = tuple(x.shape)
    y = torch.empty_strided(shape, _standard_strides(shape), dtype=x.dtype, device=x.device)
    rshape = shape[:-1]
    rstd = torch.empty_strided(rshape, _standard_strides(rshape), dtype=accumulation_dtype(x.dtype), device=x.device)
    return y, rstd


def _setup_context(ctx, inputs, output) -> None:
    x, weight, eps = inputs
    # Copies in float64 of the values this call was given: a later in-place change of x or weight
    # cannot reach them, so the backward always returns the gradients of the call that ran.
    ctx.x = x.detach().to(torch.float64, copy=True)
    ctx.weight = weight.detach().to(torch.float64, copy=True)
    ctx.eps = eps
    ctx.dtypes = (x.dtype, weight.dtype)


def _backward(ctx, grad_y, grad_rstd):
    x, weight, eps = ctx.x, ctx.weight, ctx.eps
    x_dtype, w_dtype = ctx.dtypes
    d = x.shape[-1]
    r = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps)
    x_hat = x * r
    gy = grad_y * weight  # float64 by promotion: the incoming gradient is converted exactly
    grad_x = r * (gy - x_hat * (gy * x_hat).mean(dim=-1, keepdim=True)) - grad_rstd.unsqueeze(-1) * r**3 * x / d
    grad_w = (grad_y * x_hat).reshape(-1, d).sum(dim=0)
    return grad_x.to(x_dtype), grad_w.to(w_dtype), None


torch.library.register_autograd("interview::rms_norm", _backward, setup_context=_setup_context)
