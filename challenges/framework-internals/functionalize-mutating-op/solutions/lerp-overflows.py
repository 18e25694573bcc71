"""WRONG (one mistake): the functional op is written as ``torch.lerp(avg, value,
1 - decay)`` (= avg + (1 - decay) * (value - avg)) instead of
``decay * avg + (1 - decay) * value``. Algebraically the same, but near the
dtype's limits value - avg overflows: avg = 3e38, value = -3e38 (float32),
decay = 0.5 gives -inf instead of 0; with large cancelling magnitudes it is
also off by far more than the tolerance.
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
    """No output to describe: the declared mutation of avg is all the compiler needs."""
    return None


@torch.library.custom_op("interview::ema_update", mutates_args=(), device_types="cpu")
def ema_update(avg: Tensor, value: Tensor, decay: float) -> Tensor:
    """Out of place: a new tensor ``decay * avg + (1 - decay) * value``; reads avg, writes nothing."""
    return torch.lerp(avg, value, 1.0 - decay)


@ema_update.register_fake
def _ema_update_functional_fake(avg: Tensor, value: Tensor, decay: float) -> Tensor:
    """clone() keeps avg's strides when avg is dense; empty_like() allocates the same layout."""
    _check_args(avg, value)
    return torch.lerp(avg, value, 1.0 - decay)


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
    state = avg
    for value in values:
        state = torch.ops.interview.ema_update(state, value, decay)
        states.append(state)
    return states
