# Wrong on purpose (red team round 1): a size-1 reduction whose gradient carries no graph, so it cannot be differentiated again.
"""WRONG: a size-1 reduction short-circuits to a gradient with no graph (no double backward).

The one mistake: for ``x.size(dim) == 1`` the candidate notes that
LSE is the identity with derivative 1 (0 on a masked entry, handled), and
returns ``grad_out * isfinite(x)`` -- a tensor that does not depend on x with
any history. First derivatives are exact, and so is the forward; but with
create_graph=True the returned grad_x has no grad_fn, so differentiating it
again (an HVP, gradgradcheck, or d grad_x / d x) raises RuntimeError instead of
giving the correct second derivative 0. The statement requires a gradient that
"can be differentiated again" for every dim.
"""

from __future__ import annotations

import torch


class LogSumExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, dim: int, keepdim: bool) -> torch.Tensor:
        ctx.dim = dim
        ctx.keepdim = keepdim
        if x.size(dim) == 1:
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
            g = grad_out if ctx.keepdim else grad_out.unsqueeze(ctx.dim)
            return g * torch.isfinite(x), None, None
        x, out = ctx.saved_tensors
        if not ctx.keepdim:
            out = out.unsqueeze(ctx.dim)
            grad_out = grad_out.unsqueeze(ctx.dim)
        safe_out = torch.where(torch.isfinite(out), out, torch.zeros_like(out))
        return grad_out * torch.exp(x - safe_out), None, None


def logsumexp(x: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
    return LogSumExp.apply(x, dim, keepdim)
