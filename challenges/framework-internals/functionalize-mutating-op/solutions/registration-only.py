# Wrong on purpose: declares the mutation, so compiled updates work, but adds no functional
# variant and leaves ema_trajectory appending the same mutated tensor.
"""An exponential moving average as a custom operator, ``interview::ema_update_``.

Given below: the in-place operator and its eager CPU kernel, which stands in
for a vendor library call (it writes through NumPy into the memory of
``avg``), a module that keeps a running mean with it, and a helper that
returns the average after each of several updates.

Eagerly the operator gives the right answers. Under ``torch.compile`` its
updates silently disappear, and callers of ``ema_trajectory`` find that every
state it returned holds the last one, and that their own ``avg`` changed. Fix the operator's registration, add a functional
variant ``interview::ema_update``, and use each one where it belongs. Keep the
in-place operator's name, signature and kernel.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn


def _check_args(avg: Tensor, value: Tensor) -> None:
    torch._check(avg.dtype in (torch.float32, torch.float64), lambda: f"ema: avg must be float32 or float64, got {avg.dtype}")
    torch._check(value.dtype == avg.dtype, lambda: f"ema: value is {value.dtype} but avg is {avg.dtype}")
    torch._check(value.shape == avg.shape, lambda: f"ema: value has shape {tuple(value.shape)}, avg {tuple(avg.shape)}")


@torch.library.custom_op("interview::ema_update_", mutates_args={"avg"}, device_types="cpu")
def ema_update_(avg: Tensor, value: Tensor, decay: float) -> None:
    """In place: ``avg <- decay * avg + (1 - decay) * value``. Returns nothing.

    ``avg`` may be any view (sliced, transposed): the kernel writes through
    NumPy into exactly the elements ``avg`` covers, and nowhere else.
    """
    _check_args(avg, value)
    a = avg.numpy()  # shares avg's memory and strides
    a *= decay
    a += (1.0 - decay) * value.detach().numpy()


@ema_update_.register_fake
def _ema_update_fake(avg: Tensor, value: Tensor, decay: float) -> None:
    """Added so that torch.compile stops complaining: there is no output to describe."""
    return None


class RunningMean(nn.Module):
    """Centres its input on a running mean of the batches seen in training.

    In training mode each call first folds the batch mean into the buffer
    ``running`` (in place), then returns ``x - running``. In eval mode the
    buffer is only read.
    """

    def __init__(self, dim: int, decay: float = 0.9) -> None:
        super().__init__()
        self.decay = decay
        self.register_buffer("running", torch.zeros(dim))

    def forward(self, x: Tensor) -> Tensor:
        if self.training:
            torch.ops.interview.ema_update_(self.running, x.detach().mean(0), self.decay)
        return x - self.running


def ema_trajectory(avg: Tensor, values: list[Tensor], decay: float) -> list[Tensor]:
    """The average after each value: ``[s1, ..., sn]`` with ``s0 = avg`` and
    ``s_i = decay * s_{i-1} + (1 - decay) * values[i-1]``.

    The caller's ``avg`` must not change, and every returned state must be a
    tensor of its own.
    """
    states = []
    for value in values:
        torch.ops.interview.ema_update_(avg, value, decay)
        states.append(avg)
    return states
