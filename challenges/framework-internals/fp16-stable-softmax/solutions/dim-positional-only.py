"""WRONG (one mistake): ``dim`` is a positional-only parameter (``/``).

A C-extension-style signature ``softmax(x, dim=-1, /)``. ``softmax(x)`` and
``softmax(x, 0)`` are exact, but the statement's signature
``softmax(x: Tensor, dim: int = -1)`` admits ``softmax(x, dim=0)``, which
raises TypeError here. (Nearby variant of dim-named-axis.py.)
"""

from __future__ import annotations

import torch


def _shifted(x: torch.Tensor, dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    xf = x.to(torch.float32)
    shifted = xf - xf.amax(dim, keepdim=True)
    return shifted, torch.exp(shifted).sum(dim, keepdim=True)


def softmax(x: torch.Tensor, dim: int = -1, /) -> torch.Tensor:
    shifted, total = _shifted(x, dim)
    return (torch.exp(shifted) / total).to(x.dtype)


def log_softmax(x: torch.Tensor, dim: int = -1, /) -> torch.Tensor:
    shifted, total = _shifted(x, dim)
    return (shifted - torch.log(total)).to(x.dtype)
