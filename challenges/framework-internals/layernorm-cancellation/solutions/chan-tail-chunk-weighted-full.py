"""MISTAKE: per-chunk statistics (chunks of 512 columns, like one GPU block each) merged with
Chan's formula, but the merge weights every chunk by the chunk size 512, including the last,
partial chunk. Exact when D <= 512 (one chunk) or D a multiple of 512 (16384, 1024, ...).
Oracle: oracle/check.py 'basic ... D=1000' and 'D=3001' -> mean/rstd/y fail in all dtypes; D=7,
1024, 16384 pass.
"""

from __future__ import annotations

import torch

CH = 512


def layer_norm(x, weight, bias, eps=1e-5):
    xf = x.to(torch.float32)
    D = xf.shape[-1]
    n = 0
    mean = m2 = None
    for s in range(0, D, CH):
        blk = xf[..., s : s + CH]
        bm = blk.mean(-1, keepdim=True)
        c = blk - bm
        bq = (c * c).sum(-1, keepdim=True)
        if mean is None:
            n, mean, m2 = CH, bm, bq
            continue
        tot = n + CH
        d = bm - mean
        mean = mean + d * (CH / tot)
        m2 = m2 + bq + d * d * (n * CH / tot)
        n = tot
    var = m2 / D
    rstd = 1.0 / torch.sqrt(var + eps)
    y = (xf - mean) * rstd * weight.to(torch.float32) + bias.to(torch.float32)
    return y.to(x.dtype), mean.squeeze(-1), rstd.squeeze(-1)
