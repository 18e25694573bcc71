"""OpCounter: count aten calls and matmul/conv FLOPs with a TorchDispatchMode.

RED-TEAM WRONG SOLUTION: the calls are logged cheaply during the block and the
three results are aggregated in __exit__, so they are stale while the block runs.
"""

from __future__ import annotations

from math import prod
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

aten = torch.ops.aten


def _shape(t: Any) -> tuple[int, ...]:
    return tuple(int(s) for s in t.shape)


def _flops(packet: Any, args: tuple[Any, ...], out: Any) -> int | None:
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
        return 2 * prod(_shape(out)) * prod(_shape(args[1])[1:])
    if packet is aten.convolution_backward:
        mask = args[10]
        return 2 * prod(_shape(args[0])) * prod(_shape(args[2])[1:]) * (int(bool(mask[0])) + int(bool(mask[1])))
    return None


class OpCounter(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self._log: list[tuple[str, int | None]] = []
        self.counts: dict[str, int] = {}
        self.flops = 0
        self.flops_by_op: dict[str, int] = {}

    def __enter__(self) -> OpCounter:
        self._log = []
        self.counts, self.flops, self.flops_by_op = {}, 0, {}
        return super().__enter__()

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> Any:
        try:
            return super().__exit__(exc_type, exc_val, exc_tb)
        finally:
            counts: dict[str, int] = {}
            by_op: dict[str, int] = {}
            for name, f in self._log:
                counts[name] = counts.get(name, 0) + 1
                if f is not None:
                    by_op[name] = by_op.get(name, 0) + f
            self.counts, self.flops_by_op, self.flops = counts, by_op, sum(by_op.values())

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None) -> Any:
        out = func(*args, **(kwargs or {}))
        packet = func.overloadpacket
        self._log.append((f"{func.namespace}.{packet.__name__}", _flops(packet, args, out)))
        return out
