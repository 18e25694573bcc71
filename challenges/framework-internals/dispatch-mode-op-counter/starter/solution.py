"""Count the aten ops and the FLOPs of a forward and backward pass.

Write ``OpCounter``, a ``TorchDispatchMode``. While it is active
(``with OpCounter() as counter: ...``), every aten op that reaches the Python
dispatch key, in the forward pass and in the backward pass, goes through its
``__torch_dispatch__``. See the statement for the exact contract: the names
of the counts, the FLOP table, and what happens on re-entry and nesting.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

aten = torch.ops.aten


class OpCounter(TorchDispatchMode):
    """Counts aten calls by overload packet, and the FLOPs of matmul-like ops, while active.

    After (or during) a ``with`` block:

    - ``counts``: {"aten.mm": 3, "aten.t": 2, ...}, one entry per op seen.
    - ``flops``: the total FLOPs of the ops in the FLOP table.
    - ``flops_by_op``: {"aten.mm": ..., ...}, for each op of the table that ran.
    """

    def __init__(self) -> None:
        super().__init__()
        self.counts: dict[str, int] = {}
        self.flops = 0
        self.flops_by_op: dict[str, int] = {}

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None) -> Any:
        # TODO: count the call and its FLOPs.
        return func(*args, **(kwargs or {}))
