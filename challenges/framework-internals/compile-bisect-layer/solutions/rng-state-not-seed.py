"""WRONG (one mistake, red team round 2): every run restores the random state
captured on entry instead of calling torch.manual_seed(seed), so all runs
share one state but the `seed` argument is ignored: the caller's state
decides a random branch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

BACKENDS: dict[str, str] = {
    "dynamo": "eager",
    "aot_autograd": "aot_eager",
    "inductor": "inductor",
}


def _copy(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach().clone().requires_grad_(value.requires_grad)
    return value


def _run(fn: Callable[..., Any], args: Sequence[Any], rng_state: torch.Tensor) -> tuple[Any, list[Any]]:
    copies = [_copy(a) for a in args]
    torch.set_rng_state(rng_state)
    out = fn(*copies)
    return out, copies


def _same(actual: Any, expected: Any) -> bool:
    try:
        torch.testing.assert_close(actual, expected, equal_nan=True)
    except AssertionError:
        return False
    return True


def first_failing_layer(fn: Callable[..., Any], args: Sequence[Any], *, fullgraph: bool = False, seed: int = 0) -> str | None:
    # Every run starts from the same random state: the one we were called with.
    rng_state = torch.get_rng_state()
    expected = _run(fn, args, rng_state)
    for layer, backend in BACKENDS.items():
        torch._dynamo.reset()
        try:
            compiled = torch.compile(fn, backend=backend, fullgraph=fullgraph)
            actual = _run(compiled, args, rng_state)
        except Exception:  # noqa: BLE001
            return layer
        if not _same(actual, expected):
            return layer
    return None
