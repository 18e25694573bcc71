"""WRONG (red team round 1; breaks the "float32 at most" rule): reads the float32 bit patterns as int32 (integer
``.tolist()`` passes the watch), turns them back into Python floats with ``struct`` and sums them with
``math.fsum``, i.e. in float64 outside torch. The statement forbids taking float values out of torch
("A Python float is a float64"); this does exactly that, through an integer disguise.
"""

from __future__ import annotations

import math
import struct

import torch


def total(x: torch.Tensor) -> torch.Tensor:
    v = x.reshape(-1).to(torch.float32).contiguous()
    n = v.numel()
    if n == 0:
        return torch.zeros((), dtype=torch.float32)
    words = v.view(torch.int32).tolist()  # integers: allowed by the watch
    values = struct.unpack(f"<{n}f", struct.pack(f"<{n}i", *words))  # BUG: Python floats = float64
    s = math.fsum(values)
    bits = struct.unpack("<i", struct.pack("<f", s))[0]  # round to float32 outside torch, too
    return torch.tensor([bits], dtype=torch.int32).view(torch.float32).reshape(())
