# Wrong on purpose (red team round 2, found in the shipped dispatch-table): convolution output
# sizes from stride, padding and dilation zipped with the spatial sizes; a one-element list
# ([2], as F.conv2d(..., stride=(2,)) passes it) stops the zip after the first dimension.
"""An aten op and FLOP counter built on TorchDispatchMode."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

aten = torch.ops.aten


def _matmul(a: torch.Tensor, b: torch.Tensor) -> int:
    """2 * (batch) * M * K * N for (..., M, K) @ (..., K, N)."""
    batch = 1
    for d in a.shape[:-2]:
        batch *= d
    return 2 * batch * a.shape[-2] * a.shape[-1] * b.shape[-1]


def _conv_forward(x: torch.Tensor, w: torch.Tensor, stride: list[int], padding: list[int], dilation: list[int]) -> int:
    flops = 2 * x.shape[0] * w.shape[0]
    for d in w.shape[1:]:
        flops *= d
    for size, k, s, p, dl in zip(x.shape[2:], w.shape[2:], stride, padding, dilation, strict=False):
        flops *= (size + 2 * p - dl * (k - 1) - 1) // s + 1
    return flops


def _conv_backward(grad: Any, x: Any, w: Any, _bias: Any, stride: Any, padding: Any, dilation: Any, *rest: Any) -> int:
    output_mask = rest[-1]
    return _conv_forward(x, w, stride, padding, dilation) * sum(1 for wanted in output_mask[:2] if wanted)


FLOPS: dict[Any, Callable[..., int]] = {
    aten.mm: lambda a, b, *_: _matmul(a, b),
    aten.bmm: lambda a, b, *_: _matmul(a, b),
    aten.addmm: lambda _c, a, b, *_: _matmul(a, b),
    aten.baddbmm: lambda _c, a, b, *_: _matmul(a, b),
    aten.convolution: lambda x, w, _b, stride, padding, dilation, *_: _conv_forward(x, w, stride, padding, dilation),
    aten.convolution_backward: _conv_backward,
}


class OpCounter(TorchDispatchMode):
    """``counts``, ``flops`` and ``flops_by_op`` of the ops run while the mode is active."""

    def __init__(self) -> None:
        super().__init__()
        self.reset()

    def reset(self) -> None:
        self.counts: Counter[str] = Counter()
        self.flops_by_op: Counter[str] = Counter()
        self.flops = 0

    def __enter__(self) -> OpCounter:
        self.reset()
        return super().__enter__()

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None) -> Any:
        name = str(func.overloadpacket)  # "aten.mm"
        self.counts[name] += 1
        formula = FLOPS.get(func.overloadpacket)
        if formula is not None:
            flops = formula(*args)
            self.flops += flops
            self.flops_by_op[name] += flops
        return func(*args, **(kwargs or {}))
