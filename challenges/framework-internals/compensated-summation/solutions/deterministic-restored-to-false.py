"""WRONG (global setting): turns deterministic mode on for the call and "restores" it to False.

Mistake: for a reproducible sum, the call runs under torch.use_deterministic_algorithms(True)
and its `finally` sets it back to False, the default, instead of to the value it found.
A caller who had deterministic mode ON finds it OFF after the call. Sum: exact TwoSum tree.
Breaks: "Importing your file, and each call, must leave torch's global settings as they
found them" (deterministic mode is named in the list).
"""

from __future__ import annotations

import torch


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _tree(v):
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


def total(x: torch.Tensor) -> torch.Tensor:
    torch.use_deterministic_algorithms(True)
    try:
        return _tree(x.reshape(-1).to(torch.float32))
    finally:
        torch.use_deterministic_algorithms(False)
