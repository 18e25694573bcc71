# Correct alternative (red team round 2): the shift saved as a constant, backward e / sum(e), which cancels it.
"""Correct alternative: forward saves the (constant) row shift; backward
recomputes the softmax as e / sum(e) with e = exp(x - shift), all with
differentiable ops, so the shift cancels and double backward is exact.
Fully masked rows: the sum is 0, replaced by 1 before dividing."""

from __future__ import annotations

import torch


class LogSumExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, dim: int, keepdim: bool) -> torch.Tensor:
        m = x.amax(dim=dim, keepdim=True)
        m = torch.where(m == float("-inf"), torch.zeros_like(m), m)
        s = torch.exp(x - m).sum(dim=dim, keepdim=True)
        out = torch.log(s) + m
        if not keepdim:
            out = out.squeeze(dim)
        ctx.save_for_backward(x, m)
        ctx.dim = dim
        ctx.keepdim = keepdim
        return out

    @staticmethod
    def backward(ctx, grad_out: torch.Tensor):
        x, m = ctx.saved_tensors
        dim = ctx.dim
        if not ctx.keepdim:
            grad_out = grad_out.unsqueeze(dim)
        e = torch.exp(x - m)
        s = e.sum(dim=dim, keepdim=True)
        s = torch.where(s == 0, torch.ones_like(s), s)
        return grad_out * (e / s), None, None


def logsumexp(x: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
    return LogSumExp.apply(x, dim, keepdim)
