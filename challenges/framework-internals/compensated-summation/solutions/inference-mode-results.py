"""WRONG (red team round 3, written as right): the whole call runs under @torch.inference_mode(), a common speed idiom.

Route: exact TwoSum pairwise tree, all errors summed once in float32, folded at the root,
decorated with torch.inference_mode() (which restores the grad/inference state on exit,
so no global setting is left changed). The value is right, but the result is an
"inference tensor": a caller who later changes it in place outside inference mode, or
uses it in a computation autograd records, gets a RuntimeError from torch. The statement
now says results are ordinary tensors, not inference tensors (unless the call was made
inside the caller's inference mode).
"""

from __future__ import annotations

import torch


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


@torch.inference_mode()
def total(x: torch.Tensor) -> torch.Tensor:
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
