"""OpCounter written from the arguments alone: no result shapes are read.

- matmuls: B, M, K and N unpacked from the two matrix operands (the batch dims multiplied);
- convolutions: C_in from the *input* divided by the ``groups`` argument, the output's spatial size
  from stride, padding and dilation (one-element lists expanded), C_out from the weight;
- convolution_backward: the same forward cost, times the number of the first two mask entries set;
- results kept in defaultdicts, handed out as plain dicts by properties.

Every size may be 0, and nothing divides by a size: a product with a 0 in it is simply 0.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

aten = torch.ops.aten


def _product(values: Any) -> int:
    total = 1
    for value in values:
        total *= int(value)
    return total


def _matmul(left: torch.Tensor, right: torch.Tensor) -> int:
    *batch, rows, inner = left.shape
    cols = right.shape[-1]
    return 2 * _product(batch) * rows * inner * cols


def _expand(values: Any, dims: int) -> list[int]:
    values = [int(v) for v in values]
    return values * dims if len(values) == 1 else values


def _conv(image: torch.Tensor, weight: torch.Tensor, stride: Any, padding: Any, dilation: Any, groups: int) -> int:
    dims = image.dim() - 2
    outputs = 1
    for size, kernel, s, p, d in zip(
        image.shape[2:], weight.shape[2:], _expand(stride, dims), _expand(padding, dims), _expand(dilation, dims), strict=True
    ):
        outputs *= (size + 2 * p - d * (kernel - 1) - 1) // s + 1
    in_per_group = image.shape[1] // groups
    return 2 * image.shape[0] * weight.shape[0] * outputs * in_per_group * _product(weight.shape[2:])


def _cost(packet: Any, args: tuple[Any, ...]) -> int | None:
    if packet is aten.mm or packet is aten.bmm:
        return _matmul(args[0], args[1])
    if packet is aten.addmm or packet is aten.baddbmm:
        return _matmul(args[1], args[2])
    if packet is aten.convolution:
        image, weight, _bias, stride, padding, dilation, _transposed, _output_padding, groups = args[:9]
        return _conv(image, weight, stride, padding, dilation, groups)
    if packet is aten.convolution_backward:
        _grad, image, weight, _bias_sizes, stride, padding, dilation, _transposed, _output_padding, groups, mask = args[:11]
        return _conv(image, weight, stride, padding, dilation, groups) * (bool(mask[0]) + bool(mask[1]))
    return None


class OpCounter(TorchDispatchMode):
    """Counts aten calls by overload packet, and the FLOPs of the table's ops, while active."""

    def __init__(self) -> None:
        super().__init__()
        self._counts: defaultdict[str, int] = defaultdict(int)
        self._by_op: defaultdict[str, int] = defaultdict(int)

    def __enter__(self) -> OpCounter:
        self._counts = defaultdict(int)
        self._by_op = defaultdict(int)
        super().__enter__()
        return self

    @property
    def counts(self) -> dict[str, int]:
        return dict(self._counts)

    @property
    def flops_by_op(self) -> dict[str, int]:
        return dict(self._by_op)

    @property
    def flops(self) -> int:
        return sum(self._by_op.values())

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None) -> Any:
        packet = func.overloadpacket
        key = f"{func.namespace}.{packet.__name__}"
        cost = _cost(packet, args) if func.namespace == "aten" else None
        self._counts[key] += 1
        if cost is not None:
            self._by_op[key] += cost
        return func(*args, **(kwargs or {}))
