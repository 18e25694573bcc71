"""IDEA (red team round 2, correct): statistics by a pairwise tree of Chan/Golub/LeVeque merges, all in float32.

Every element starts as a bucket (count 1, mean x, M2 0). Each level merges
neighbouring buckets pairwise,
    n = na + nb,  d = mb - ma,  m = ma + d * nb / n,  M2 = M2a + M2b + d*d * na*nb / n,
carrying an odd last bucket up unchanged, until one bucket per row remains (depth
ceil(log2 D)). Counts are exact small integers in float32 (D <= 16384).
"""

from __future__ import annotations

import torch


def layer_norm(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    D = x.shape[-1]
    xf = x.to(torch.float32)
    m = xf.contiguous()
    m2 = torch.zeros_like(m)
    n = torch.ones(D, dtype=torch.float32)
    while m.shape[-1] > 1:
        k = m.shape[-1] // 2
        ma, mb = m[..., 0 : 2 * k : 2], m[..., 1 : 2 * k : 2]
        qa, qb = m2[..., 0 : 2 * k : 2], m2[..., 1 : 2 * k : 2]
        na, nb = n[0 : 2 * k : 2], n[1 : 2 * k : 2]
        nn = na + nb
        d = mb - ma
        mm = ma + d * (nb / nn)
        qq = qa + qb + d * d * (na * nb / nn)
        if m.shape[-1] % 2:
            mm = torch.cat([mm, m[..., -1:]], dim=-1)
            qq = torch.cat([qq, m2[..., -1:]], dim=-1)
            nn = torch.cat([nn, n[-1:]])
        m, m2, n = mm, qq, nn
    mean = m  # (..., 1)
    var = m2 / D
    rstd = 1.0 / torch.sqrt(var + eps)
    y = (xf - mean) * rstd * weight.to(torch.float32) + bias.to(torch.float32)
    return y.to(x.dtype), mean.squeeze(-1), rstd.squeeze(-1)
