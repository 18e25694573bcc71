# Correct, written differently from the reference (red team round 2, blind): the in-place op is defined
# with torch.library.Library.define and a Tensor(a!) schema, then impl and register_fake; the functional
# op is the formula in torch ops, and its fake runs the same formula on fake tensors.
"""In-place op declared with an explicit schema string through ``torch.library``;
functional op computed with tensor arithmetic, whose fake kernel runs the very same
arithmetic on fake tensors (so the strides it reports are, by construction, the
ones TensorIterator gives the real output)."""

from __future__ import annotations

import torch
from torch import Tensor, nn


def _check_args(avg: Tensor, value: Tensor) -> None:
    torch._check(avg.dtype in (torch.float32, torch.float64), lambda: f"ema: avg must be float32 or float64, got {avg.dtype}")
    torch._check(value.dtype == avg.dtype, lambda: f"ema: value is {value.dtype} but avg is {avg.dtype}")
    torch._check(value.shape == avg.shape, lambda: f"ema: value has shape {tuple(value.shape)}, avg {tuple(avg.shape)}")


_lib = torch.library.Library("interview", "FRAGMENT")
_lib.define("ema_update_(Tensor(a!) avg, Tensor value, float decay) -> ()")


def ema_update_(avg: Tensor, value: Tensor, decay: float) -> None:
    """In place: ``avg <- decay * avg + (1 - decay) * value``. Returns nothing."""
    _check_args(avg, value)
    a = avg.numpy()  # shares avg's memory and strides
    a *= decay
    a += (1.0 - decay) * value.detach().numpy()


torch.library.impl("interview::ema_update_", "cpu", lib=_lib)(ema_update_)


@torch.library.register_fake("interview::ema_update_", lib=_lib)
def _ema_update_fake(avg: Tensor, value: Tensor, decay: float) -> None:
    return None


def _formula(avg: Tensor, value: Tensor, decay: float) -> Tensor:
    return decay * avg + (1.0 - decay) * value


@torch.library.custom_op("interview::ema_update", mutates_args=(), device_types="cpu")
def ema_update(avg: Tensor, value: Tensor, decay: float) -> Tensor:
    _check_args(avg, value)
    return _formula(avg, value, decay)


@ema_update.register_fake
def _ema_update_functional_fake(avg: Tensor, value: Tensor, decay: float) -> Tensor:
    _check_args(avg, value)
    return _formula(avg, value, decay)


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
        state = torch.ops.interview.ema_update(state, value, decay)
        states.append(state)
    return states
