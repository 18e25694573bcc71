# Wrong on purpose: the textbook formulas, log(sum(exp(x))) and exp(x) / sum(exp(x)). Right and
# twice differentiable for moderate inputs; inf, -inf or NaN once exp() overflows or underflows.
"""LogSumExp straight from the definition, without the max shift."""

from __future__ import annotations

import torch


class LogSumExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, dim: int, keepdim: bool) -> torch.Tensor:
        ctx.save_for_backward(x)
        ctx.dim, ctx.keepdim = dim, keepdim
        return torch.log(torch.exp(x).sum(dim=dim, keepdim=keepdim))

    @staticmethod
    def backward(ctx, grad_out: torch.Tensor):
        (x,) = ctx.saved_tensors
        if not ctx.keepdim:
            grad_out = grad_out.unsqueeze(ctx.dim)
        e = torch.exp(x)
        return grad_out * e / e.sum(dim=ctx.dim, keepdim=True), None, None


def logsumexp(x: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
    return LogSumExp.apply(x, dim, keepdim)
