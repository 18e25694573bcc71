"""WRONG (one mistake, red team round 2): a try fails only if it raises
RuntimeError or AssertionError, on the belief that Dynamo, AOTAutograd and
Inductor always wrap their failures; a kernel's own ValueError, raised only
when AOTAutograd runs it, escapes from first_failing_layer instead.
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


def _run(fn: Callable[..., Any], args: Sequence[Any], seed: int) -> tuple[Any, list[Any]]:
    copies = [_copy(a) for a in args]
    torch.manual_seed(seed)
    out = fn(*copies)
    return out, copies


def _same(actual: Any, expected: Any) -> bool:
    try:
        torch.testing.assert_close(actual, expected, equal_nan=True)
    except AssertionError:
        return False
    return True


def first_failing_layer(fn: Callable[..., Any], args: Sequence[Any], *, fullgraph: bool = False, seed: int = 0) -> str | None:
    expected = _run(fn, args, seed)
    for layer, backend in BACKENDS.items():
        torch._dynamo.reset()
        try:
            compiled = torch.compile(fn, backend=backend, fullgraph=fullgraph)
            actual = _run(compiled, args, seed)
        except (RuntimeError, AssertionError):
            # Dynamo, AOTAutograd and Inductor wrap their failures in
            # torch._dynamo.exc.* (RuntimeError subclasses); Inductor's
            # generated size/stride checks raise AssertionError.
            return layer
        if not _same(actual, expected):
            return layer
    return None
