"""WRONG (one mistake, red team round 2): a hand-written comparison (the
statement's dtype table, NaN and inf handled) reduces the error with
.max(), which raises on a tensor with no elements.
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


_TOL = {
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
    torch.float32: (1.3e-6, 1e-5),
    torch.float64: (1e-7, 1e-7),
}


def _same(actual: Any, expected: Any) -> bool:
    flat_a, _spec_a = torch.utils._pytree.tree_flatten(actual)
    flat_e, _spec_e = torch.utils._pytree.tree_flatten(expected)
    if len(flat_a) != len(flat_e):
        return False
    for a, e in zip(flat_a, flat_e, strict=False):
        if not isinstance(e, torch.Tensor):
            if a != e:
                return False
            continue
        if not isinstance(a, torch.Tensor) or a.shape != e.shape or a.dtype != e.dtype:
            return False
        rtol, atol = _TOL.get(e.dtype, (1.3e-6, 1e-5))
        a = a.detach().double()
        e = e.detach().double()
        both_nan = a.isnan() & e.isnan()
        same_inf = (a == e)
        excess = ((a - e).abs() - (atol + rtol * e.abs())).masked_fill(both_nan | same_inf, 0.0)
        if excess.nan_to_num(nan=1.0).max().item() > 0:
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
