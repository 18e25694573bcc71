"""Wrong: every run gets the caller's own tensors, so a run that mutates them changes the next run's inputs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

BACKENDS = {"dynamo": "eager", "aot_autograd": "aot_eager", "inductor": "inductor"}


def first_failing_layer(fn: Callable[..., Any], args: Sequence[Any], *, fullgraph: bool = False, seed: int = 0) -> str | None:
    torch.manual_seed(seed)
    expected = fn(*args)
    for layer, backend in BACKENDS.items():
        torch._dynamo.reset()
        try:
            compiled = torch.compile(fn, backend=backend, fullgraph=fullgraph)
            torch.manual_seed(seed)
            actual = compiled(*args)
            torch.testing.assert_close(actual, expected, equal_nan=True)
        except Exception:  # noqa: BLE001
            return layer
    return None
