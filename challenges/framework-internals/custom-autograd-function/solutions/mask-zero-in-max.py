# Wrong on purpose (red team round 2): the row max taken with -inf replaced by 0, so masked rows of data far below 0 underflow.
"""WRONG: the row max "ignoring masked entries" is taken after replacing -inf
by 0. With any masked entry in a row whose data are all far below 0
(e.g. [-20000, -inf]), the shift is 0 instead of -20000 and exp underflows."""

from __future__ import annotations

import torch


class LogSumExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, dim: int, keepdim: bool) -> torch.Tensor:
        masked = x == float("-inf")
        m = torch.where(masked, torch.zeros_like(x), x).amax(dim=dim, keepdim=True)
        out = torch.log(torch.exp(x - m).sum(dim=dim, keepdim=True)) + m
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
