"""WRONG (global setting): runs on one thread and restores the thread count saved AT IMPORT.

Mistake: for a reproducible torch.sum, each call sets torch.set_num_threads(1) and its
`finally` restores `_THREADS`, read once when the module was imported, rather than the
count in force when the call began. A caller who changes the thread count after importing
finds it reset by every call. Sum: exact TwoSum tree.
Breaks: "each call, must leave torch's global settings as they found them" (the number of
threads is named in the list).
"""

from __future__ import annotations

import torch

_THREADS = torch.get_num_threads()


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
    torch.set_num_threads(1)
    try:
        return _tree(x.reshape(-1).to(torch.float32))
    finally:
        torch.set_num_threads(_THREADS)
