# Wrong on purpose (red team round 1): fully masked rows patched with a -1e300 sentinel, which is -inf (then NaN) in float32.
"""WRONG: the fully-masked fix uses a float64-only sentinel, -1e300, which is -inf in float32.

The one mistake: the candidate replaces a -inf row maximum (forward) and a -inf
output (backward) with ``nan_to_num(..., neginf=-1e300)``. In float64 that is a
finite, very negative shift and everything is exact; but -1e300 is not
representable in float32 and nan_to_num silently writes -inf, so a fully
masked float32 row computes -inf - (-inf) = NaN: its output is NaN instead of
-inf and its gradient NaN instead of 0.
"""

from __future__ import annotations

import torch

NEG = -1e300


class LogSumExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, dim: int, keepdim: bool) -> torch.Tensor:
        shift = torch.nan_to_num(x.amax(dim=dim, keepdim=True), neginf=NEG)
        out = torch.log(torch.exp(x - shift).sum(dim=dim, keepdim=True)) + shift
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
        safe_out = torch.nan_to_num(out, neginf=NEG)
        return grad_out * torch.exp(x - safe_out), None, None


def logsumexp(x: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
    return LogSumExp.apply(x, dim, keepdim)
