# Wrong on purpose (red team round 1): a size-1 reduction taken as the identity, derivative 1 even on a lone -inf.
"""WRONG: reducing a size-1 dimension is treated as the identity, forward AND backward.

The one mistake: when ``x.size(dim) == 1`` the Function short-circuits (out = x,
grad_x = grad_out). That is right for finite entries, but a size-1 row holding
-inf is a *fully masked row*, whose derivative the statement fixes at 0; the
shortcut passes grad_out through (derivative 1). Everything else is the
reference.
"""

from __future__ import annotations

import torch


class LogSumExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, dim: int, keepdim: bool) -> torch.Tensor:
        ctx.dim = dim
        ctx.keepdim = keepdim
        if x.size(dim) == 1:
            # log(sum(exp(x))) over a single entry is x itself.
            ctx.trivial = True
            ctx.save_for_backward(x)
            out = x.clone()
            return out if keepdim else out.squeeze(dim)
        ctx.trivial = False
        shift = x.amax(dim=dim, keepdim=True)
        shift = torch.where(torch.isfinite(shift), shift, torch.zeros_like(shift))
        out = torch.log(torch.exp(x - shift).sum(dim=dim, keepdim=True)) + shift
        if not keepdim:
            out = out.squeeze(dim)
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad_out: torch.Tensor):
        if ctx.trivial:
            (x,) = ctx.saved_tensors
            # d out / d x = 1 for the identity.
            return grad_out.reshape(x.shape), None, None
        x, out = ctx.saved_tensors
        if not ctx.keepdim:
            out = out.unsqueeze(ctx.dim)
            grad_out = grad_out.unsqueeze(ctx.dim)
        safe_out = torch.where(torch.isfinite(out), out, torch.zeros_like(out))
        return grad_out * torch.exp(x - safe_out), None, None


def logsumexp(x: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
    return LogSumExp.apply(x, dim, keepdim)
