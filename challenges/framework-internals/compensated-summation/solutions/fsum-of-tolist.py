"""Exact summation with math.fsum: right to the last bit, but it leaves torch.

math.fsum keeps every partial sum exactly, so the answer is the correctly
rounded sum. It works on Python floats, though: .tolist() turns every element
into a float64 outside torch, which is exactly what the float32 rule is
about. No name in this file is forbidden, so the grader runs it, and the
probes' watch fails every probe.
"""

from __future__ import annotations

import math

import torch


def total(x: torch.Tensor) -> torch.Tensor:
    return torch.tensor(math.fsum(x.reshape(-1).tolist()), dtype=torch.float32)
