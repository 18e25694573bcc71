"""Sum a long 1-D tensor of float16, bfloat16 or float32 values.

Write ``total(x)``: it returns the sum of ``x`` as a 0-d float32 tensor, close
to the exact sum even when the terms cancel (see the statement for the
bound). Work in torch with float32 at most: no float64 tensors, no Python
floats, lists or NumPy arrays made from the data, and no cumsum, var/std or
normalisation ops (they accumulate in float64 inside).

The version below is what most code does. It is close on positive terms
(though not always within the bound) and loses the answer as soon as large
terms cancel.
"""

from __future__ import annotations

import torch


def total(x: torch.Tensor) -> torch.Tensor:
    """The sum of a 1-D float16/bfloat16/float32 tensor, as a 0-d float32 tensor."""
    return x.sum(dtype=torch.float32)
