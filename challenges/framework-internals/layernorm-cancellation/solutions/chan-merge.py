"""Welford/Chan: per-chunk statistics merged pairwise, as GPU kernels do.

Each chunk of 64 columns gets its own count, mean and M2 (sum of squared
deviations from its own mean, two-pass inside the chunk). Chunks are then
merged in a tree with Chan et al.'s formula:

    delta = mean_b - mean_a
    mean  = mean_a + delta * n_b / n
    M2    = M2_a + M2_b + delta^2 * n_a * n_b / n

Every quantity is a deviation or a mean, never a raw second moment, so
nothing cancels.
"""

from __future__ import annotations

import torch

CHUNK = 64


def _stats(xf: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(mean, var) over the last dim of a float32 tensor, merged from chunks."""
    parts = []
    for chunk in xf.split(CHUNK, dim=-1):
        m = chunk.mean(-1)
        c = chunk - m[..., None]
        parts.append((float(chunk.shape[-1]), m, (c * c).sum(-1)))
    while len(parts) > 1:
        merged = []
        for i in range(0, len(parts) - 1, 2):
            (na, ma, qa), (nb, mb, qb) = parts[i], parts[i + 1]
            n = na + nb
            delta = mb - ma
            merged.append((n, ma + delta * (nb / n), qa + qb + delta * delta * (na * nb / n)))
        if len(parts) % 2:
            merged.append(parts[-1])
        parts = merged
    n, mean, m2 = parts[0]
    return mean, m2 / n


def layer_norm(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    xf = x.to(torch.float32)
    mean, var = _stats(xf)
    rstd = 1.0 / torch.sqrt(var + eps)
    y = (xf - mean[..., None]) * rstd[..., None] * weight.to(torch.float32) + bias.to(torch.float32)
    return y.to(x.dtype), mean, rstd
