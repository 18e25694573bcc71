"""WRONG (one mistake, red team round 2): the return value is compared with
assert_close but the argument copies with torch.equal, so an in-place update
that Inductor computes one rounding step off eager is blamed on Inductor.
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
    out_a, args_a = actual
    out_e, args_e = expected
    try:
        torch.testing.assert_close(out_a, out_e, equal_nan=True)
    except AssertionError:
        return False
    # A mutation is either applied or dropped: the arguments must match exactly.
    for a, e in zip(args_a, args_e, strict=False):
        if isinstance(e, torch.Tensor):
            if a.dtype != e.dtype or a.shape != e.shape:
                return False
            if not torch.equal(a.detach().nan_to_num(), e.detach().nan_to_num()):
                return False
        elif a != e:
            return False
    return True


def first_failing_layer(fn: Callable[..., Any], args: Sequence[Any], *, fullgraph: bool = False, seed: int = 0) -> str | None:
    expected = _run(fn, args, seed)
    for layer, backend in BACKENDS.items():
        torch._dynamo.reset()
        try:
            compiled = torch.compile(fn, backend=backend, fullgraph=fullgraph)
            actual = _run(compiled, args, seed)
        except Exception:  # noqa: BLE001
            return layer
        if not _same(actual, expected):
            return layer
    return None
