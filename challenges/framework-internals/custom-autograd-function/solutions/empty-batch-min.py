# Wrong on purpose (red team round 2): a fast path tests x.min() == -inf, which raises on an empty batch.
"""WRONG: a fast path skips the mask handling when nothing is masked, tested
with `x.min() == -inf`. min() of a tensor with no elements raises, so an empty
batch (shape (0, n), reduced over the non-empty dim) crashes instead of
returning an empty result."""

from __future__ import annotations

import torch

NINF = float("-inf")


class LogSumExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, dim: int, keepdim: bool) -> torch.Tensor:
        m = x.amax(dim=dim, keepdim=True)
        masked = bool(x.min() == NINF)
        if masked:
            m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
        out = torch.log(torch.exp(x - m).sum(dim=dim, keepdim=True)) + m
        if not keepdim:
            out = out.squeeze(dim)
        ctx.save_for_backward(x, out)
        ctx.dim = dim
        ctx.keepdim = keepdim
        ctx.masked = masked
        return out

    @staticmethod
    def backward(ctx, grad_out: torch.Tensor):
        x, out = ctx.saved_tensors
        if not ctx.keepdim:
            out = out.unsqueeze(ctx.dim)
            grad_out = grad_out.unsqueeze(ctx.dim)
        if ctx.masked:
            out = torch.where(torch.isfinite(out), out, torch.zeros_like(out))
        return grad_out * torch.exp(x - out), None, None


def logsumexp(x: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
    return LogSumExp.apply(x, dim, keepdim)
