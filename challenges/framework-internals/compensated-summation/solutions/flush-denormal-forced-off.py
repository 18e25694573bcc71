"""WRONG (global state): defensively turns flushing of subnormals OFF in every call, never restores.

Mistake: knowing subnormals must count, the candidate calls torch.set_flush_denormal(False)
at the start of each call. torch has no getter, so the old value is not saved: a caller
who had flushing ON finds it OFF after the call. Sum itself: exact TwoSum tree.
Breaks: "Importing your file, and each call, must leave torch's global settings as they
found them." (Only visible if the caller had flushing on.)
"""

from __future__ import annotations

import torch


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def total(x: torch.Tensor) -> torch.Tensor:
    torch.set_flush_denormal(False)
    v = x.reshape(-1).to(torch.float32)
    if v.numel() == 0:
        return torch.zeros((), dtype=torch.float32)
    errs = []
    while v.numel() > 1:
        if v.numel() % 2:
            v = torch.cat([v, v.new_zeros(1)])
        v, e = _two_sum(v[0::2], v[1::2])
        errs.append(e)
    comp = torch.cat(errs).sum() if errs else torch.zeros((), dtype=torch.float32)
    return v[0] + comp
