# Wrong on purpose (red team round 1): float32 computed in float64 without the max shift, inf and -inf beyond about 710.
"""WRONG: float32 inputs are upcast to float64 and reduced WITHOUT the max shift.

The one mistake: the candidate reasons "float32 overflows exp() at ~88, float64
only at ~709, so upcasting float32 is enough (and more accurate)", and keeps the
max-shift only for float64 inputs. float32 rows around +-100 or +-230 are fine,
but a float32 row in the thousands (the statement allows entries in the
thousands for either dtype) overflows float64 exp() to inf, or underflows to
log(0) = -inf.
"""

from __future__ import annotations

import torch


class LogSumExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, dim: int, keepdim: bool) -> torch.Tensor:
        if x.dtype == torch.float32:
            out = torch.log(torch.exp(x.double()).sum(dim=dim, keepdim=True)).to(x.dtype)
        else:
            shift = x.amax(dim=dim, keepdim=True)
            shift = torch.where(torch.isfinite(shift), shift, torch.zeros_like(shift))
            out = torch.log(torch.exp(x - shift).sum(dim=dim, keepdim=True)) + shift
        if not keepdim:
            out = out.squeeze(dim)
        ctx.save_for_backward(x, out)
        ctx.dim = dim
        ctx.keepdim = keepdim
        return out

    @staticmethod
    def backward(ctx, grad_out: torch.Tensor):
        x, out = ctx.saved_tensors
        if not ctx.keepdim:
            out = out.unsqueeze(ctx.dim)
            grad_out = grad_out.unsqueeze(ctx.dim)
        safe_out = torch.where(torch.isfinite(out), out, torch.zeros_like(out))
        return grad_out * torch.exp(x - safe_out), None, None


def logsumexp(x: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
    return LogSumExp.apply(x, dim, keepdim)
