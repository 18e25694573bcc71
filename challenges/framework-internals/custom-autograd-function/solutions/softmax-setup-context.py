# Correct, written differently from the reference: the forward/setup_context split, only x is
# saved, and the backward recomputes softmax with the "double where" guard on fully masked rows.
"""LogSumExp with a separate setup_context; the backward rebuilds softmax from x alone."""

from __future__ import annotations

import torch


class LogSumExp(torch.autograd.Function):
    @staticmethod
    def forward(x: torch.Tensor, dim: int, keepdim: bool) -> torch.Tensor:
        top = x.amax(dim=dim, keepdim=True)
        top = top.masked_fill(top == float("-inf"), 0.0)
        out = top + torch.log(torch.sum(torch.exp(x - top), dim=dim, keepdim=True))
        return out if keepdim else out.squeeze(dim)

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:
        x, dim, keepdim = inputs
        ctx.save_for_backward(x)
        ctx.dim, ctx.keepdim = dim, keepdim

    @staticmethod
    def backward(ctx, grad_out: torch.Tensor):
        (x,) = ctx.saved_tensors
        dim = ctx.dim
        if not ctx.keepdim:
            grad_out = grad_out.unsqueeze(dim)
        dead = (x == float("-inf")).all(dim=dim, keepdim=True)  # every entry masked
        # Replace the input of softmax, not only its output: softmax of an all -inf row is NaN,
        # and a NaN inside the backward graph would leak into second derivatives as 0 * NaN.
        probs = torch.softmax(torch.where(dead, torch.zeros_like(x), x), dim=dim)
        probs = torch.where(dead, torch.zeros_like(probs), probs)
        return grad_out * probs, None, None


def logsumexp(x: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
    return LogSumExp.apply(x, dim, keepdim)
