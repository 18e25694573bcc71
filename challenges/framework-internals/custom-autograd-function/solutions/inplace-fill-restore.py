# Wrong on purpose (red team round 2): fully masked rows of x zero-filled in place and restored, so x's version counter moves.
"""WRONG: to dodge -inf - (-inf), fully masked rows of x are zero-filled in
place and put back to -inf before returning. x ends up bit-identical, but its
version counter moved: any earlier node that saved x (a second call of this
Function on the same x, log_softmax, ...) now refuses to backward, but only
when x has a fully masked row."""

from __future__ import annotations

import torch

NINF = float("-inf")


class LogSumExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, dim: int, keepdim: bool) -> torch.Tensor:
        dead = (x == NINF).all(dim=dim, keepdim=True)
        has_dead = bool(dead.any())
        if has_dead:
            x.masked_fill_(dead, 0.0)  # temporarily, restored below
        m = x.amax(dim=dim, keepdim=True)
        out = torch.log(torch.exp(x - m).sum(dim=dim, keepdim=True)) + m
        if has_dead:
            x.masked_fill_(dead, NINF)  # x is back to its original values
            out = out.masked_fill(dead, NINF)
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
