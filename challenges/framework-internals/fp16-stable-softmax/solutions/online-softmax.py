"""Online (chunked) softmax: one (max, sum) pair per chunk, merged.

This is how fused attention kernels do it: each chunk of the row keeps its
own maximum m_k and its sum s_k = sum(exp(x - m_k)); merging rescales every
partial sum to the global maximum M, S = sum(s_k * exp(m_k - M)). A chunk
that is entirely -inf has m_k = -inf; it is shifted by 0 instead, so that
-inf - -inf never produces NaN.
"""

from __future__ import annotations

import torch

CHUNK = 128


def _max_and_sum(x: torch.Tensor, dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    xf = x.to(torch.float32).movedim(dim, -1)
    maxes, sums = [], []
    for chunk in xf.split(CHUNK, dim=-1):
        m = chunk.amax(-1, keepdim=True)
        safe = torch.where(torch.isinf(m), torch.zeros_like(m), m)
        maxes.append(m)
        sums.append(torch.exp(chunk - safe).sum(-1, keepdim=True))
    m_all = torch.cat(maxes, -1)
    s_all = torch.cat(sums, -1)
    big = m_all.amax(-1, keepdim=True)
    safe_m = torch.where(torch.isinf(m_all), big, m_all)
    total = (s_all * torch.exp(safe_m - big)).sum(-1, keepdim=True)
    return big.movedim(-1, dim), total.movedim(-1, dim)


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    big, total = _max_and_sum(x, dim)
    return (torch.exp(x.to(torch.float32) - big) / total).to(x.dtype)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    big, total = _max_and_sum(x, dim)
    return ((x.to(torch.float32) - big) - torch.log(total)).to(x.dtype)
