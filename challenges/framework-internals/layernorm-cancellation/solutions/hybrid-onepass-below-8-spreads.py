"""MISTAKE (red team round 2): a "fast path" keeps the one-pass formula for rows whose mean is
small next to their spread, and falls back to two passes only when |mean| > 8 * std.

The fallback threshold is too lax: the one-pass error relative to var grows like
(A/sigma)^2 * L * u32, and for small D it already exceeds the statement's rstd bound
at A/sigma ~ 4-8 (e.g. D = 8, mean 6, std 1). Rows with a large mean (1e4, -3000,
1024, ...) or a mean near 0 are handled correctly.
"""

from __future__ import annotations

import torch


def layer_norm(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    xf = x.to(torch.float32)
    mean = xf.mean(-1, keepdim=True)
    # one pass over the data: E[x^2] - E[x]^2 (what a fused kernel would do)
    var = ((xf * xf).mean(-1, keepdim=True) - mean * mean).clamp_min(0.0)
    # where cancellation bites (mean large next to the spread), redo it in two passes
    bad = mean * mean > 64.0 * var
    if bool(bad.any()):
        centered = xf - mean
        var2 = (centered * centered).mean(-1, keepdim=True)
        var = torch.where(bad, var2, var)
    rstd = 1.0 / torch.sqrt(var + eps)
    y = (xf - mean) * rstd * weight.to(torch.float32) + bias.to(torch.float32)
    return y.to(x.dtype), mean.squeeze(-1), rstd.squeeze(-1)
