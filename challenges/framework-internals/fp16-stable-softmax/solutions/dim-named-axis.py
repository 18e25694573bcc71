"""WRONG (one mistake): the second parameter is named ``axis`` (numpy/TF habit).

Positional calls ``softmax(x, 0)`` and default calls work and are exact, but
the statement's signature is ``softmax(x, dim=-1)``: ``softmax(x, dim=0)``
raises TypeError.
"""

from __future__ import annotations

import torch


def _shifted(x: torch.Tensor, axis: int) -> tuple[torch.Tensor, torch.Tensor]:
    xf = x.to(torch.float32)
    shifted = xf - xf.amax(axis, keepdim=True)
    return shifted, torch.exp(shifted).sum(axis, keepdim=True)


def softmax(x: torch.Tensor, axis: int = -1) -> torch.Tensor:
    shifted, total = _shifted(x, axis)
    return (torch.exp(shifted) / total).to(x.dtype)


def log_softmax(x: torch.Tensor, axis: int = -1) -> torch.Tensor:
    shifted, total = _shifted(x, axis)
    return (shifted - torch.log(total)).to(x.dtype)
