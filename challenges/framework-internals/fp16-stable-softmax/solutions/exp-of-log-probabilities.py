"""WRONG (one mistake): softmax is exp(log-softmax), both in float32.

One code path for both functions: t = (x - max) - log(sum), p = exp(t).
Exact in real numbers, and fine for float16/bfloat16 outputs. But for
float32 outputs the argument of exp now carries two roundings, that of
x - max and that of the subtraction of log(sum), each up to u32*|t|, and
exp turns them into a relative error of up to 2*u32*|t| (+ the others).
The bound allows u32*(|t| + 2L + 16) + 2*u32: for |t| above ~2L+18 (about
20-40) a float32 probability can miss it. Nothing is NaN or grossly off.
"""

from __future__ import annotations

import torch


def _log_probs(x: torch.Tensor, dim: int) -> torch.Tensor:
    xf = x.to(torch.float32)
    shifted = xf - xf.amax(dim, keepdim=True)
    return shifted - torch.log(torch.exp(shifted).sum(dim, keepdim=True))


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    return torch.exp(_log_probs(x, dim)).to(x.dtype)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    return _log_probs(x, dim).to(x.dtype)
