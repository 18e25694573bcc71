# Wrong on purpose (red team round 2): backward flattens grad_out with .view, which raises on a non-contiguous incoming gradient.
"""WRONG: works on a 2-D (rows, n) view: x is moved so dim is last and
flattened with reshape, but backward flattens grad_out with .view(-1), which
raises when grad_out is not contiguous (e.g. the output is used through .t())."""

from __future__ import annotations

import torch


class LogSumExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, dim: int, keepdim: bool) -> torch.Tensor:
        xm = x.movedim(dim, -1)
        n = xm.shape[-1]
        x2 = xm.reshape(-1, n)
        m = x2.amax(dim=1, keepdim=True)
        m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
        out2 = torch.log(torch.exp(x2 - m).sum(dim=1, keepdim=True)) + m  # (rows, 1)
        out = out2.reshape((*xm.shape[:-1], 1)).movedim(-1, dim)
        if not keepdim:
            out = out.squeeze(dim)
        ctx.save_for_backward(x, out)
        ctx.dim = dim
        ctx.keepdim = keepdim
        return out

    @staticmethod
    def backward(ctx, grad_out: torch.Tensor):
        x, out = ctx.saved_tensors
        dim = ctx.dim
        xm = x.movedim(dim, -1)
        n = xm.shape[-1]
        x2 = xm.reshape(-1, n)
        out2 = out.reshape(-1, 1)
        g2 = grad_out.view(-1, 1)
        safe = torch.where(torch.isfinite(out2), out2, torch.zeros_like(out2))
        grad2 = g2 * torch.exp(x2 - safe)
        return grad2.reshape(xm.shape).movedim(-1, dim), None, None


def logsumexp(x: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
    return LogSumExp.apply(x, dim, keepdim)
