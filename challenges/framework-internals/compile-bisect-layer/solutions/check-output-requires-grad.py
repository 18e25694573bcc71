"""WRONG (one mistake, red team round 2): after assert_close it also requires
every output's requires_grad to match eager's, which the statement's
comparison ignores: Inductor marks an output as requiring grad where eager
does not, with the same values.
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
    # assert_close ignores autograd metadata; a layer that attaches or drops the
    # graph of an output (AOTAutograd's job) is also a different result.
    leaves_a = torch.utils._pytree.tree_leaves(actual)
    leaves_e = torch.utils._pytree.tree_leaves(expected)
    for a, e in zip(leaves_a, leaves_e, strict=False):
        if isinstance(e, torch.Tensor) and a.requires_grad != e.requires_grad:
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
