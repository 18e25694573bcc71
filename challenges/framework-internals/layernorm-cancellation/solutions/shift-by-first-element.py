"""Wrong: a one-pass variance of shifted data, with each row's FIRST element as the shift.

    K = x[..., 0],  s = x - K,  var = E[s^2] - E[s]^2,  mean = K + E[s]

This is the textbook "shifted data" algorithm: exact in real numbers, and it
cancels nothing as long as K is close to the mean, which the first element of
an ordinary row is. It fails when the first channel is far from the rest (a
"massive activation", which LLM hidden states have in a few fixed channels):
then every s_i is about as large as that outlier, E[s^2] is about the
outlier's square, and the subtraction cancels as catastrophically as
E[x^2] - E[x]^2 on a row with a large mean.

Confirmed against the float64 two-pass truth and the statement's bounds,
outside the grader (numpy float64, the bounds written from statement.md): on
rows of spread 0.5-2 whose first channel is +-100 to +-3000, rstd is 9.7 to 35
times its bound away (float32 D=768, bfloat16 D=4096, float16 D=1024, two
seeds each), and y up to 21 times. With the outlier in a middle or the last
channel it stays within every bound: the rows that catch it are exactly those
whose first element is far from the mean.
"""

from __future__ import annotations

import torch


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    xf = x.to(torch.float32)
    shift = xf[..., :1]
    s = xf - shift
    s_mean = s.mean(-1, keepdim=True)
    var = ((s * s).mean(-1, keepdim=True) - s_mean * s_mean).clamp_min(0.0)
    mean = shift + s_mean
    rstd = torch.rsqrt(var + eps)
    y = (xf - mean) * rstd * weight.to(torch.float32) + bias.to(torch.float32)
    return y.to(x.dtype), mean.squeeze(-1), rstd.squeeze(-1)
