"""WRONG (one mistake): the default dim copies torch's deprecated implicit-dim rule.

``dim=None`` picks dim like the old ``F.softmax(x)`` without a dim
(``_get_softmax_dim``): 0 for 0-, 1- and 3-D inputs, 1 otherwise. That
agrees with the statement's default ``dim=-1`` for 1-D and 2-D inputs only;
``softmax(x)`` on a 3-D or 4-D tensor normalises over the wrong dim.
"""

from __future__ import annotations

import torch


def _resolve(x: torch.Tensor, dim) -> int:
    if dim is None:
        dim = 0 if x.dim() in (0, 1, 3) else 1
    return dim


def _shifted(x: torch.Tensor, dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    xf = x.to(torch.float32)
    shifted = xf - xf.amax(dim, keepdim=True)
    return shifted, torch.exp(shifted).sum(dim, keepdim=True)


def softmax(x: torch.Tensor, dim=None) -> torch.Tensor:
    shifted, total = _shifted(x, _resolve(x, dim))
    return (torch.exp(shifted) / total).to(x.dtype)


def log_softmax(x: torch.Tensor, dim=None) -> torch.Tensor:
    shifted, total = _shifted(x, _resolve(x, dim))
    return (shifted - torch.log(total)).to(x.dtype)
