# Correct, written differently from the reference (red team round 2, blind): the functional op always
# returns a fresh C-contiguous tensor (fake: new_empty), and ema_trajectory runs the in-place op on a
# fresh contiguous clone per step.
"""Mutation declared with custom_op; the functional op always returns a fresh
C-contiguous tensor (its fake says exactly that); ema_trajectory runs the in-place
op on a fresh copy per step."""

from __future__ import annotations

import torch
from torch import Tensor, nn


def _check_args(avg: Tensor, value: Tensor) -> None:
    torch._check(avg.dtype in (torch.float32, torch.float64), lambda: f"ema: avg must be float32 or float64, got {avg.dtype}")
    torch._check(value.dtype == avg.dtype, lambda: f"ema: value is {value.dtype} but avg is {avg.dtype}")
    torch._check(value.shape == avg.shape, lambda: f"ema: value has shape {tuple(value.shape)}, avg {tuple(avg.shape)}")


@torch.library.custom_op("interview::ema_update_", mutates_args=["avg"], device_types="cpu")
def ema_update_(avg: Tensor, value: Tensor, decay: float) -> None:
    """In place: ``avg <- decay * avg + (1 - decay) * value``. Returns nothing."""
    _check_args(avg, value)
    a = avg.numpy()  # shares avg's memory and strides
    a *= decay
    a += (1.0 - decay) * value.detach().numpy()


@ema_update_.register_fake
def _ema_update_fake(avg: Tensor, value: Tensor, decay: float) -> None:
    return None


@torch.library.custom_op("interview::ema_update", mutates_args=(), device_types="cpu")
def ema_update(avg: Tensor, value: Tensor, decay: float) -> Tensor:
    _check_args(avg, value)
    out = torch.empty(avg.shape, dtype=avg.dtype, device=avg.device)  # C-contiguous, fresh
    out.copy_(avg)
    ema_update_(out, value, decay)
    return out


@ema_update.register_fake
def _ema_update_functional_fake(avg: Tensor, value: Tensor, decay: float) -> Tensor:
    _check_args(avg, value)
    return avg.new_empty(avg.shape)


class RunningMean(nn.Module):
    def __init__(self, dim: int, decay: float = 0.9) -> None:
        super().__init__()
        self.decay = decay
        self.register_buffer("running", torch.zeros(dim))

    def forward(self, x: Tensor) -> Tensor:
        if self.training:
            torch.ops.interview.ema_update_(self.running, x.detach().mean(0), self.decay)
        return x - self.running


def ema_trajectory(avg: Tensor, values: list[Tensor], decay: float) -> list[Tensor]:
    states = []
    state = avg
    for value in values:
        state = state.clone(memory_format=torch.contiguous_format)
        torch.ops.interview.ema_update_(state, value, decay)
        states.append(state)
    return states
