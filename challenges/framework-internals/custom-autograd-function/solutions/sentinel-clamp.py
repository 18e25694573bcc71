# Wrong on purpose (red team round 1): the row max clamped to a -1e30 mask value, so finite rows below it read as masked.
"""WRONG: -inf is handled with a finite "mask value" sentinel (-1e30) via clamp.

The one mistake: instead of replacing a non-finite shift by 0, the candidate
clamps the row maximum, and the saved output, to a large negative sentinel
(``MASK = -1e30``, the attention-mask habit). For -inf entries, fully masked
rows, and every row in the thousands this is exact (x - (-1e30) = -inf for a
masked entry, exp = 0). But the statement allows any finite entry; a row whose
entries are all below the sentinel (e.g. [-1e31, -1e31], true result
-1e31 + log 2, derivatives 1/2 each) is treated as masked: forward gives -inf
and the derivatives 0.
"""

from __future__ import annotations

import torch

MASK = -1e30


class LogSumExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, dim: int, keepdim: bool) -> torch.Tensor:
        shift = x.amax(dim=dim, keepdim=True).clamp(min=MASK)
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
        safe_out = out.clamp(min=MASK)
        return grad_out * torch.exp(x - safe_out), None, None


def logsumexp(x: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
    return LogSumExp.apply(x, dim, keepdim)
