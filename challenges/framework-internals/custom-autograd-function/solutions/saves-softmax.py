# Wrong on purpose: the forward computes the softmax and saves it for the backward. First
# derivatives are right, but the saved softmax is an intermediate made under no_grad, so a
# create_graph=True backward treats it as a constant and every d2/dx2 term through it is lost.
"""LogSumExp that saves softmax(x) from the forward to reuse it in the backward."""

from __future__ import annotations

import torch


class LogSumExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, dim: int, keepdim: bool) -> torch.Tensor:
        shift = x.amax(dim=dim, keepdim=True)
        shift = torch.where(torch.isfinite(shift), shift, torch.zeros_like(shift))
        shifted = torch.exp(x - shift)
        total = shifted.sum(dim=dim, keepdim=True)
        out = torch.log(total) + shift
        # softmax = exp(x - shift) / sum; 0 on a fully masked row instead of 0 / 0.
        probs = torch.where(total > 0, shifted / total, torch.zeros_like(shifted))
        ctx.save_for_backward(probs)
        ctx.dim, ctx.keepdim = dim, keepdim
        return out if keepdim else out.squeeze(dim)

    @staticmethod
    def backward(ctx, grad_out: torch.Tensor):
        (probs,) = ctx.saved_tensors
        if not ctx.keepdim:
            grad_out = grad_out.unsqueeze(ctx.dim)
        return grad_out * probs, None, None


def logsumexp(x: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
    return LogSumExp.apply(x, dim, keepdim)
