"""Reference solution: a numerically stable log-sum-exp as a torch.autograd.Function.

Forward: subtract the row maximum before exponentiating, so that no exp()
overflows and a row of very negative numbers does not underflow to log(0).
A row whose maximum is -inf (every entry masked) uses 0 as its shift, so
the forward gives -inf instead of NaN.

Backward: grad_x = grad_out * exp(x - out), written with differentiable
torch ops, from the saved input and the saved *output*. Because ``out`` is
an output of this Function, it keeps its grad_fn when saved, and a
create_graph=True backward differentiates through it correctly. On a fully
masked row, ``out`` is -inf and exp(x - out) would be exp(-inf + inf) =
NaN; the shift is replaced with 0 *before* the subtraction (not the result
after it), so no NaN ever appears, not even in a second derivative.
"""

from __future__ import annotations

import torch


class LogSumExp(torch.autograd.Function):
    """log(sum(exp(x), dim)), stable for large and -inf inputs, twice differentiable."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, dim: int, keepdim: bool) -> torch.Tensor:
        shift = x.amax(dim=dim, keepdim=True)
        shift = torch.where(torch.isfinite(shift), shift, torch.zeros_like(shift))
        out = torch.log(torch.exp(x - shift).sum(dim=dim, keepdim=True)) + shift
        if not keepdim:
            out = out.squeeze(dim)
        ctx.save_for_backward(x, out)
        ctx.dim = dim
        ctx.keepdim = keepdim
        return out

    @staticmethod
    def backward(ctx, grad_out: torch.Tensor) -> tuple[torch.Tensor, None, None]:
        x, out = ctx.saved_tensors
        if not ctx.keepdim:
            out = out.unsqueeze(ctx.dim)
            grad_out = grad_out.unsqueeze(ctx.dim)
        safe_out = torch.where(torch.isfinite(out), out, torch.zeros_like(out))
        return grad_out * torch.exp(x - safe_out), None, None


def logsumexp(x: torch.Tensor, dim: int, keepdim: bool = False) -> torch.Tensor:
    """Convenience wrapper: ``LogSumExp.apply`` takes its arguments positionally."""
    return LogSumExp.apply(x, dim, keepdim)
