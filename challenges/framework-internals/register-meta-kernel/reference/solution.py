"""Reference solution: ``interview::rms_norm`` with a fake kernel and an autograd formula.

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
# The fake kernel and the autograd formula for interview::rms_norm.
# ---------------------------------------------------------------------------


@rms_norm.register_fake
def _rms_norm_fake(x: torch.Tensor, weight: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Describe the outputs (shape, dtype, strides, device) without computing them.

    ``new_empty`` allocates on ``x``'s device (meta, fake or real) with
    contiguous strides, which is what the eager kernel returns. ``empty_like``
    would copy the strides of a transposed ``x`` instead.
    """
    torch._check(x.dim() >= 1, lambda: "rms_norm: x needs at least one dimension")
    torch._check(
        weight.dim() == 1 and weight.shape[0] == x.shape[-1],
        lambda: f"rms_norm: weight must have shape ({x.shape[-1]},), got {tuple(weight.shape)}",
    )
    torch._check(weight.dtype == x.dtype, lambda: f"rms_norm: weight is {weight.dtype} but x is {x.dtype}")
    y = x.new_empty(x.shape)
    rstd = x.new_empty(x.shape[:-1], dtype=accumulation_dtype(x.dtype))
    return y, rstd


def _setup_context(
    ctx: torch.autograd.function.FunctionCtx,
    inputs: tuple[torch.Tensor, torch.Tensor, float],
    output: tuple[torch.Tensor, torch.Tensor],
) -> None:
    """Save what the backward needs: the input, the weight and rstd (x_hat = x * rstd)."""
    x, weight, _eps = inputs
    _y, rstd = output
    # Not y: recovering x_hat as y / weight divides by zero where weight is 0.
    ctx.save_for_backward(x, weight, rstd)


def _backward(
    ctx: torch.autograd.function.FunctionCtx, grad_y: torch.Tensor | None, grad_rstd: torch.Tensor | None
) -> tuple[torch.Tensor | None, torch.Tensor | None, None]:
    """Gradients for (x, weight, eps); eps is a float, so its gradient is None.

    With x_hat = x * rstd, y = x_hat * weight and D = x.shape[-1]:
      through y:    dx = rstd * (g - x_hat * mean(g * x_hat, -1)), g = grad_y * weight
                    dweight = sum over all rows of grad_y * x_hat
      through rstd: d rstd / dx = -rstd**3 * x / D
    Everything is computed in rstd's (accumulation) dtype, then cast back.
    """
    x, weight, rstd = ctx.saved_tensors
    # custom_op materialises the gradient of an unused output as zeros, so
    # None does not arrive by default. Were that turned off, a None grad_y
    # still owes the weight a zero gradient, never None: hence zeros here.
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
