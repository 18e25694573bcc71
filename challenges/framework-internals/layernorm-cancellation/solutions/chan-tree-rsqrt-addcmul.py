"""CORRECT (red team round 3): per-column statistics merged pairwise in a tree with Chan's formula.

Every column starts as a one-element group (n=1, mean=x, M2=0); adjacent groups are
merged level by level (an odd group out is carried up unchanged), so means and M2
are never formed as E[x^2] - E[x]^2 and errors grow with the tree depth log2(D).
Everything is float32; y uses rsqrt and addcmul. The tree starts from a copy of the rows, so that
for D = 1 (no merge at all) the mean returned is a new tensor, not a view of a float32 x.
"""

from __future__ import annotations

import torch


def _chan_tree(rows: torch.Tensor):
    """rows: (R, D) float32 -> mean (R,), M2 (R,)."""
    mean = rows.clone()  # for D = 1 the loop never runs: the mean returned must not be a view of x
    m2 = torch.zeros_like(rows)
    counts = [1] * rows.shape[-1]
    while mean.shape[-1] > 1:
        c = mean.shape[-1]
        p = c // 2
        na = torch.tensor(counts[0:2 * p:2], dtype=torch.float32)
        nb = torch.tensor(counts[1:2 * p:2], dtype=torch.float32)
        n = na + nb
        ma, mb = mean[:, 0:2 * p:2], mean[:, 1:2 * p:2]
        delta = mb - ma
        new_mean = ma + delta * (nb / n)
        new_m2 = m2[:, 0:2 * p:2] + m2[:, 1:2 * p:2] + (delta * delta) * (na * nb / n)
        new_counts = [a + b for a, b in zip(counts[0:2 * p:2], counts[1:2 * p:2], strict=True)]
        if c % 2:
            new_mean = torch.cat([new_mean, mean[:, -1:]], dim=-1)
            new_m2 = torch.cat([new_m2, m2[:, -1:]], dim=-1)
            new_counts.append(counts[-1])
        mean, m2, counts = new_mean, new_m2, new_counts
    return mean[:, 0], m2[:, 0]


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5):
    d = x.shape[-1]
    lead = x.shape[:-1]
    rows = x.reshape(-1, d).to(torch.float32)
    if rows.shape[0] == 0:
        mean = rows.new_zeros((0,))
        m2 = rows.new_zeros((0,))
    else:
        mean, m2 = _chan_tree(rows)
    rstd = torch.rsqrt(m2 / d + eps)
    normed = (rows - mean[:, None]) * rstd[:, None]
    y = torch.addcmul(bias.to(torch.float32), normed, weight.to(torch.float32))
    return y.reshape(x.shape).to(x.dtype), mean.reshape(lead), rstd.reshape(lead)
