# Wrong on purpose: forward drops the reduced dimension with a bare out.squeeze(), which also
# drops every other dimension of size 1 (a batch of one, a single head). Everything is right
# for inputs without such dimensions; with one, the output has the wrong shape.
"""LogSumExp whose forward squeezes every size-1 dimension, not only the reduced one."""

from __future__ import annotations

import torch


class LogSumExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, dim: int, keepdim: bool) -> torch.Tensor:
        shift = x.amax(dim=dim, keepdim=True)
        shift = torch.where(torch.isfinite(shift), shift, torch.zeros_like(shift))
        out = torch.log(torch.exp(x - shift).sum(dim=dim, keepdim=True)) + shift
        if not keepdim:
            out = out.squeeze()
        ctx.save_for_backward(x, out)
        ctx.dim, ctx.keepdim = dim, keepdim
        return out

    @staticmethod
    def backward(ctx, grad_out: torch.Tensor):
        x, out = ctx.saved_tensors
        if not ctx.keepdim:
            # x's shape with a 1 at dim: the shape out had before the squeeze.
            keep = list(x.shape)
            keep[ctx.dim] = 1
            out, grad_out = out.reshape(keep), grad_out.reshape(keep)
        safe_out = torch.where(torch.isfinite(out), out, torch.zeros_like(out))
        return grad_out * torch.exp(x - safe_out), None, None


def logsumexp(x: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
    return LogSumExp.apply(x, dim, keepdim)
