"""Wrong: Dynamo's cache is never reset, so a frame compiled by an earlier call can answer for a later one."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

BACKENDS = {"dynamo": "eager", "aot_autograd": "aot_eager", "inductor": "inductor"}


def _copy(a: Any) -> Any:
    return a.detach().clone().requires_grad_(a.requires_grad) if isinstance(a, torch.Tensor) else a


def first_failing_layer(fn: Callable[..., Any], args: Sequence[Any], *, fullgraph: bool = False, seed: int = 0) -> str | None:
    copies = [_copy(a) for a in args]
    torch.manual_seed(seed)
    expected = (fn(*copies), copies)
    for layer, backend in BACKENDS.items():
        # Each torch.compile call makes a new wrapper, which feels like a fresh
        # start; the compiled frames live in a cache keyed by fn's code object.
        compiled = torch.compile(fn, backend=backend, fullgraph=fullgraph)
        copies = [_copy(a) for a in args]
        torch.manual_seed(seed)
        try:
            actual = (compiled(*copies), copies)
            torch.testing.assert_close(actual, expected, equal_nan=True)
        except Exception:  # noqa: BLE001
            return layer
    return None
