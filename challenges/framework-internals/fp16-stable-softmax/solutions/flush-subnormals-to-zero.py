"""WRONG (one mistake): softmax flushes subnormal float32 exponentials to 0.

Like a CUDA kernel built with fast-math (FTZ), exp(x - max) below float32's
smallest normal (1.18e-38, i.e. x - max < -87.34) is set to zero. For
float16 outputs that is harmless, but for float32 and bfloat16 outputs the
exact probability in [~1e-45, 1.2e-38] (float32) or [~1e-40, 1.2e-38]
(bfloat16) is representable and must be returned within the bound; 0 is off
by the whole value, far more than s_min. log_softmax is untouched.
"""

from __future__ import annotations

import torch


def _shifted(x: torch.Tensor, dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    xf = x.to(torch.float32)
    shifted = xf - xf.amax(dim, keepdim=True)
    return shifted, torch.exp(shifted).sum(dim, keepdim=True)


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    shifted, total = _shifted(x, dim)
    e = torch.exp(shifted)
    e = torch.where(e < torch.finfo(torch.float32).tiny, torch.zeros_like(e), e)  # FTZ
    return (e / total).to(x.dtype)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    shifted, total = _shifted(x, dim)
    return (shifted - torch.log(total)).to(x.dtype)
