"""Softmax / log-softmax with sum = 1 + R, R the sum over all but one argmax.

In float32: s = x - max; e = exp(s); R = sum of e with one argmax zeroed;
p = e / (1 + R), t = s - log1p(R). log1p keeps the top log-probability
accurate when R is small. Rounded once to the input dtype.
"""
from __future__ import annotations

import torch


def _parts(x: torch.Tensor, dim: int):
    xf = x.to(torch.float32)
    idx = xf.argmax(dim, keepdim=True)
    m = xf.gather(dim, idx)
    s = xf - m
    e = torch.exp(s)
    rest = e.scatter(dim, idx, 0.0)
    return s, e, rest.sum(dim, keepdim=True)


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    _, e, R = _parts(x, dim)
    return (e / (1.0 + R)).to(x.dtype)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    s, _, R = _parts(x, dim)
    return (s - torch.log1p(R)).to(x.dtype)
