# Wrong on purpose: adds to flops_by_op only when an op's FLOPs are truthy, so a table op that
# ran on an empty batch (0 FLOPs, a mixture-of-experts expert with no tokens) gets no entry.
"""An aten op and FLOP counter built on TorchDispatchMode."""

from __future__ import annotations

from math import prod
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

aten = torch.ops.aten


def _mm_flops(a: torch.Tensor, b: torch.Tensor) -> int:
    (m, k), (_, n) = a.shape, b.shape
    return 2 * m * k * n


def _bmm_flops(a: torch.Tensor, b: torch.Tensor) -> int:
    (batch, m, k), (_, _, n) = a.shape, b.shape
    return 2 * batch * m * k * n


def _conv_flops(out_shape: torch.Size, weight: torch.Tensor) -> int:
    """2 * (every output element) * (multiply-adds per output element: Cin/groups * kernel size)."""
    return 2 * prod(out_shape) * prod(weight.shape[1:])


def _flops(packet: Any, args: tuple[Any, ...], out: Any) -> int | None:
    """FLOPs of one call, or None when the op is not in the table."""
    if packet is aten.mm:
        return _mm_flops(args[0], args[1])
    if packet is aten.addmm:  # addmm(bias, mat1, mat2): the bias add is not counted
        return _mm_flops(args[1], args[2])
    if packet is aten.bmm:
        return _bmm_flops(args[0], args[1])
    if packet is aten.baddbmm:  # baddbmm(input, batch1, batch2)
        return _bmm_flops(args[1], args[2])
    if packet is aten.convolution:  # convolution(input, weight, bias, stride, padding, dilation, transposed, ...)
        return _conv_flops(out.shape, args[1])
    if packet is aten.convolution_backward:
        # convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
        #                      transposed, output_padding, groups, output_mask)
        grad_output, weight, output_mask = args[0], args[2], args[10]
        forward = _conv_flops(grad_output.shape, weight)  # grad_output has the forward output's shape
        return forward * (int(bool(output_mask[0])) + int(bool(output_mask[1])))
    return None


class OpCounter(TorchDispatchMode):
    """Counts aten calls by overload packet, and the FLOPs of matmul-like ops, while active.

    ``counts``: {"aten.mm": 3, ...} for every op seen. ``flops``: the total.
    ``flops_by_op``: FLOPs per op, for every op of the FLOP table that ran.
    Entering the mode starts from zero; the results stay readable after exit.
    """

    def __init__(self) -> None:
        super().__init__()
        self.counts: dict[str, int] = {}
        self.flops = 0
        self.flops_by_op: dict[str, int] = {}

    def __enter__(self) -> OpCounter:
        self.counts = {}
        self.flops = 0
        self.flops_by_op = {}
        super().__enter__()
        return self

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None) -> Any:
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        packet = func.overloadpacket
        name = f"{func.namespace}.{packet.__name__}"
        self.counts[name] = self.counts.get(name, 0) + 1
        flops = _flops(packet, args, out)
        if flops:  # skip ops that are not in the table
            self.flops += flops
            self.flops_by_op[name] = self.flops_by_op.get(name, 0) + flops
        return out
