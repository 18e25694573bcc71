# Wrong on purpose: stable forward and backward, but @once_differentiable makes the backward a
# dead end for create_graph=True, so every second derivative fails.
"""LogSumExp whose backward is marked @once_differentiable."""

from __future__ import annotations

import torch
from torch.autograd.function import once_differentiable


class LogSumExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, dim: int, keepdim: bool) -> torch.Tensor:
        shift = x.amax(dim=dim, keepdim=True)
        shift = torch.where(torch.isfinite(shift), shift, torch.zeros_like(shift))
        out = torch.log(torch.exp(x - shift).sum(dim=dim, keepdim=True)) + shift
        if not keepdim:
            out = out.squeeze(dim)
        ctx.save_for_backward(x, out)
        ctx.dim, ctx.keepdim = dim, keepdim
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out: torch.Tensor):
        x, out = ctx.saved_tensors
        if not ctx.keepdim:
            out, grad_out = out.unsqueeze(ctx.dim), grad_out.unsqueeze(ctx.dim)
        safe_out = torch.where(torch.isfinite(out), out, torch.zeros_like(out))
        return grad_out * torch.exp(x - safe_out), None, None


def logsumexp(x: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
    return LogSumExp.apply(x, dim, keepdim)
