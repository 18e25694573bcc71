# Wrong on purpose (blind red team round 4): the kernel rewritten in torch ops, and a fake kernel that just calls it.
"""WRONG (kernel-rewritten-in-torch, fake kernel = the kernel). The candidate "improves" the given vendor kernel: the NumPy round
trip is replaced by the same formula in torch ops (values equal to float rounding; outputs still new
contiguous tensors, rstd still in acc). Since the kernel now runs on
fake/meta tensors, the "fake kernel" simply calls it; the autograd formula is the reference's.
Breaks: "Your job is to make the operator work with all of them without touching its kernel" and
"Keep the operator's name, its signature and its eager kernel as they are" (the kernel stands in
for an opaque library call that cannot run on fake/meta tensors).
"""

from __future__ import annotations

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
    # Same computation as the vendor call, in torch (no NumPy round trip): faster, and it also
    # runs on meta/fake tensors.
    xs = x.to(acc)
    rstd = 1.0 / torch.sqrt((xs * xs).mean(dim=-1, keepdim=True) + eps)
    y_out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    y_out.copy_(xs * rstd * weight.to(acc))
    rstd_out = torch.empty(x.shape[:-1], dtype=acc, device=x.device)
    rstd_out.copy_(rstd.squeeze(-1))
    return y_out, rstd_out


# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# Fake kernel and autograd formula.
# ---------------------------------------------------------------------------


@rms_norm.register_fake
def _rms_norm_fake(x, weight, eps):
    # the kernel is plain torch now, so it runs on fake and meta tensors as well
    return rms_norm._init_fn(x, weight, eps)


def _setup_context(ctx, inputs, output):
    x, weight, _eps = inputs
    _y, rstd = output
    ctx.save_for_backward(x, weight, rstd)


def _backward(ctx, grad_y, grad_rstd):
    x, weight, rstd = ctx.saved_tensors
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
