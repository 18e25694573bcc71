"""Wrong: only an exception counts as a failure; results are never compared with eager."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

BACKENDS = {"dynamo": "eager", "aot_autograd": "aot_eager", "inductor": "inductor"}


def first_failing_layer(fn: Callable[..., Any], args: Sequence[Any], *, fullgraph: bool = False, seed: int = 0) -> str | None:
    for layer, backend in BACKENDS.items():
        torch._dynamo.reset()
        copies = [a.detach().clone().requires_grad_(a.requires_grad) if isinstance(a, torch.Tensor) else a for a in args]
        torch.manual_seed(seed)
        try:
            torch.compile(fn, backend=backend, fullgraph=fullgraph)(*copies)
        except Exception:  # noqa: BLE001
            return layer
    return None
