"""Wrong: the argument copies drop requires_grad, so AOTAutograd never traces a backward."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch.utils._pytree import tree_map

BACKENDS = {"dynamo": "eager", "aot_autograd": "aot_eager", "inductor": "inductor"}


def _run(fn: Callable[..., Any], args: Sequence[Any], seed: int) -> Any:
    copies = tree_map(lambda a: a.detach().clone() if isinstance(a, torch.Tensor) else a, list(args))
    torch.manual_seed(seed)
    return fn(*copies), copies


def first_failing_layer(fn: Callable[..., Any], args: Sequence[Any], *, fullgraph: bool = False, seed: int = 0) -> str | None:
    expected = _run(fn, args, seed)
    for layer, backend in BACKENDS.items():
        torch._dynamo.reset()
        try:
            actual = _run(torch.compile(fn, backend=backend, fullgraph=fullgraph), args, seed)
            torch.testing.assert_close(actual, expected, equal_nan=True)
        except Exception:  # noqa: BLE001
            return layer
    return None
