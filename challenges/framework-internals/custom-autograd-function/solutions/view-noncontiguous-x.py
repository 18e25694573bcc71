# Wrong on purpose (red team round 2): forward flattens x with .view when dim is last, which raises on a non-contiguous x.
"""WRONG: forward works on a (rows, n) matrix; when dim is already the last
dim it skips the copy with x.view(-1, n), which raises for a non-contiguous x
(a transposed or sliced tensor) reduced over its last dim."""

from __future__ import annotations

import torch


class LogSumExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, dim: int, keepdim: bool) -> torch.Tensor:
        d = dim % x.dim()
        n = x.shape[d]
        if d == x.dim() - 1:
            x2 = x.view(-1, n)  # no copy needed
        else:
            x2 = x.movedim(d, -1).reshape(-1, n)
        m = x2.amax(dim=1, keepdim=True)
        m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
        o2 = torch.log(torch.exp(x2 - m).sum(dim=1)) + m.squeeze(1)
        out = o2.reshape(x.shape[:d] + x.shape[d + 1 :])
        if keepdim:
            out = out.unsqueeze(d)
        ctx.save_for_backward(x, out)
        ctx.dim = d
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
