# Wrong on purpose (red team round 2): -inf clamped to finfo.min, and a result at finfo.min taken for a fully masked row.
"""WRONG: -inf is clamped to finfo(dtype).min so no inf - inf can appear, and a
row whose result comes out at finfo.min is taken for fully masked (-inf, zero
gradient). A row of real data at the dtype's most negative value, which the
statement allows, gets -inf and a zero gradient."""

from __future__ import annotations

import torch


class LogSumExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, dim: int, keepdim: bool) -> torch.Tensor:
        lo = torch.finfo(x.dtype).min
        xc = x.clamp(min=lo)
        m = xc.amax(dim=dim, keepdim=True)
        out = torch.log(torch.exp(xc - m).sum(dim=dim, keepdim=True)) + m
        out = torch.where(out <= lo, torch.full_like(out, float("-inf")), out)
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
        p = torch.exp(x - safe_out) * torch.isfinite(out).to(x.dtype)
        return grad_out * p, None, None


def logsumexp(x: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
    return LogSumExp.apply(x, dim, keepdim)
