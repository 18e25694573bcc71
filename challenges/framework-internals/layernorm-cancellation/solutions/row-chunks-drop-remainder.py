"""MISTAKE (red team round 2): rows are processed in chunks of at most 2^22 elements, and the
chunk count is `R // rows_per_chunk or 1`, which drops the remainder rows.

The `or 1` was patched in after small inputs (fewer rows than one chunk) produced
nothing: with one chunk, the slice [0:rows_per_chunk] covers every row. Once an input
holds more than 2^22 elements (e.g. (5000, 1024), or (300, 16384)), the rows past the
last full chunk keep zero statistics and a zero y.
"""

from __future__ import annotations

import torch

CHUNK_ELEMS = 1 << 22  # 16 MB of float32 working set per chunk


def layer_norm(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    D = x.shape[-1]
    x2 = x.reshape(-1, D)
    R = x2.shape[0]
    w32, b32 = weight.to(torch.float32), bias.to(torch.float32)
    y = torch.zeros((R, D), dtype=x.dtype)
    mean = torch.zeros(R, dtype=torch.float32)
    rstd = torch.zeros(R, dtype=torch.float32)
    rows = max(1, CHUNK_ELEMS // D)
    n_chunks = R // rows or 1
    for i in range(n_chunks):
        sl = slice(i * rows, (i + 1) * rows)
        xf = x2[sl].to(torch.float32)
        m = xf.mean(-1, keepdim=True)
        c = xf - m
        v = (c * c).mean(-1, keepdim=True)
        r = 1.0 / torch.sqrt(v + eps)
        y[sl] = (c * r * w32 + b32).to(x.dtype)
        mean[sl] = m.squeeze(-1)
        rstd[sl] = r.squeeze(-1)
    lead = x.shape[:-1]
    return y.reshape(x.shape), mean.reshape(lead), rstd.reshape(lead)
