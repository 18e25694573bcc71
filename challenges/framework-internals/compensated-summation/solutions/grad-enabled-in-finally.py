"""WRONG (global setting): disables autograd for the call and "restores" it to True.

Mistake: `torch.set_grad_enabled(False)` at the start and `torch.set_grad_enabled(True)` in
`finally`, instead of restoring the mode it found. Called inside a caller's
`with torch.no_grad():` block, the call switches gradient recording back ON for the rest
of that block. Sum: exact TwoSum tree.
Breaks: "Importing your file, and each call, must leave torch's global settings as they
found them" (grad mode is the setting the earlier round's import-time-grad-disabled broke).
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
    torch.set_grad_enabled(False)
    try:
        return _tree(x.reshape(-1).to(torch.float32))
    finally:
        torch.set_grad_enabled(True)
