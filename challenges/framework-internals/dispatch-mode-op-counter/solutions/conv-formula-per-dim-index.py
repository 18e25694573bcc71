"""OpCounter: count aten calls and matmul/conv FLOPs with a TorchDispatchMode.

RED-TEAM WRONG SOLUTION: the forward convolution's output size is computed with the full formula
(stride, padding, dilation) indexed per spatial dim, which fails when aten.convolution receives
one-element lists (F.conv2d(x, w, stride=(2,), padding=(1,)) or a direct aten call with [2], [1], [1]).
"""

from __future__ import annotations

from math import prod
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

aten = torch.ops.aten


def _shape(t: Any) -> tuple[int, ...]:
    return tuple(int(s) for s in t.shape)


def _conv_out_shape(inp: Any, weight: Any, stride: Any, padding: Any, dilation: Any) -> tuple[int, ...]:
    n = _shape(inp)[0]
    c_out = _shape(weight)[0]
    spatial = []
    for i, size in enumerate(_shape(inp)[2:]):
        k = _shape(weight)[2 + i]
        spatial.append((size + 2 * padding[i] - dilation[i] * (k - 1) - 1) // stride[i] + 1)
    return (n, c_out, *spatial)


def _conv_flops(out_shape: tuple[int, ...], weight: Any) -> int:
    return 2 * prod(out_shape) * prod(_shape(weight)[1:])


def _count_flops(packet: Any, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> int | None:
    if packet is aten.mm:
        (m, k), (_, n) = _shape(args[0]), _shape(args[1])
        return 2 * m * k * n
    if packet is aten.addmm:
        (m, k), (_, n) = _shape(args[1]), _shape(args[2])
        return 2 * m * k * n
    if packet is aten.bmm:
        (b, m, k), (_, _, n) = _shape(args[0]), _shape(args[1])
        return 2 * b * m * k * n
    if packet is aten.baddbmm:
        (b, m, k), (_, _, n) = _shape(args[1]), _shape(args[2])
        return 2 * b * m * k * n
    if packet is aten.convolution:
        inp, weight, _bias, stride, padding, dilation = args[:6]
        return _conv_flops(_conv_out_shape(inp, weight, stride, padding, dilation), weight)
    if packet is aten.convolution_backward:
        grad_output, weight, mask = args[0], args[2], args[10]
        return _conv_flops(_shape(grad_output), weight) * (int(bool(mask[0])) + int(bool(mask[1])))
    return None


class OpCounter(TorchDispatchMode):
    """Counts aten calls by overload packet, and the FLOPs of matmul-like ops, while active."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: dict[str, int] = {}
        self.flops = 0
        self.flops_by_op: dict[str, int] = {}

    def __enter__(self) -> OpCounter:
        self.counts = {}
        self.flops = 0
        self.flops_by_op = {}
        return super().__enter__()

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None) -> Any:
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        packet = func.overloadpacket
        name = f"{func.namespace}.{packet.__name__}"
        self.counts[name] = self.counts.get(name, 0) + 1
        f = _count_flops(packet, args, kwargs, out)
        if f is not None:
            self.flops += f
            self.flops_by_op[name] = self.flops_by_op.get(name, 0) + f
        return out
