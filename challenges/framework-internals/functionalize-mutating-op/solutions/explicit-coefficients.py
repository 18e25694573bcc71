# Correct, written differently from the reference (red team round 3, the owner's alternative): the
# functional kernel spells out the statement's arithmetic step by step in torch ops: both coefficients
# formed in float64 from the Python float and cast to avg's dtype (a decay float32 rounds to 1 keeps
# 1 - decay; 1e39 becomes inf), each product rounded into its own tensor, then one plain addition
# (no alpha, so no fused multiply-add). The output is always C-contiguous, and so is the fake's.
"""An exponential moving average as a custom operator, ``interview::ema_update_``, with its
mutation declared, and a functional variant ``interview::ema_update``."""

from __future__ import annotations

import torch
from torch import Tensor, nn


def _check_args(avg: Tensor, value: Tensor) -> None:
    torch._check(avg.dtype in (torch.float32, torch.float64), lambda: f"ema: avg must be float32 or float64, got {avg.dtype}")
    torch._check(value.dtype == avg.dtype, lambda: f"ema: value is {value.dtype} but avg is {avg.dtype}")
    torch._check(value.shape == avg.shape, lambda: f"ema: value has shape {tuple(value.shape)}, avg {tuple(avg.shape)}")


@torch.library.custom_op("interview::ema_update_", mutates_args=["avg"], device_types="cpu")
def ema_update_(avg: Tensor, value: Tensor, decay: float) -> None:
    """In place: ``avg <- decay * avg + (1 - decay) * value``, through NumPy into avg's own memory."""
    _check_args(avg, value)
    a = avg.numpy()  # shares avg's memory and strides
    a *= decay
    a += (1.0 - decay) * value.detach().numpy()


def _coefficient(x: float, dtype: torch.dtype) -> Tensor:
    """A Python float rounded once to dtype (beyond float32's range: +-inf), as a 0-d tensor."""
    return torch.tensor(x, dtype=torch.float64).to(dtype)


@torch.library.custom_op("interview::ema_update", mutates_args=(), device_types="cpu")
def ema_update(avg: Tensor, value: Tensor, decay: float) -> Tensor:
    _check_args(avg, value)
    keep, take = _coefficient(decay, avg.dtype), _coefficient(1.0 - decay, avg.dtype)
    out = torch.empty(avg.shape, dtype=avg.dtype, device=avg.device)
    torch.mul(avg, keep, out=out)
    out.add_(torch.mul(value, take))
    return out


@ema_update.register_fake
def _(avg: Tensor, value: Tensor, decay: float) -> Tensor:
    _check_args(avg, value)
    return avg.new_empty(avg.shape)


class RunningMean(nn.Module):
    """Centres its input on a running mean of the training batches, kept in the buffer ``running``."""

    def __init__(self, dim: int, decay: float = 0.9) -> None:
        super().__init__()
        self.decay = decay
        self.register_buffer("running", torch.zeros(dim))

    def forward(self, x: Tensor) -> Tensor:
        if self.training:
            torch.ops.interview.ema_update_(self.running, x.detach().mean(dim=0), self.decay)
        return x - self.running


def ema_trajectory(avg: Tensor, values: list[Tensor], decay: float) -> list[Tensor]:
    """``[s1, ..., sn]``, each state a fresh tensor from the functional op; avg is only read."""
    states: list[Tensor] = []
    for value in values:
        states.append(torch.ops.interview.ema_update(states[-1] if states else avg, value, decay))
    return states
