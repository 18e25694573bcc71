"""WRONG (one mistake): deepcopy for the inputs, fork_rng for the seed, a hand-written comparison.

Once shipped as correct; red team round 1 showed that copy.deepcopy raises on an
argument that requires grad but is not a leaf (the output of an earlier computation).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch.utils import _pytree as pytree

LAYERS = (("dynamo", "eager"), ("aot_autograd", "aot_eager"), ("inductor", "inductor"))
# assert_close's defaults: (rtol, atol) per dtype; other dtypes compare exactly.
TOLERANCES = {
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
    torch.float32: (1.3e-6, 1e-5),
    torch.float64: (1e-7, 1e-7),
}


def _same(actual: Any, expected: Any) -> bool:
    a_leaves, a_spec = pytree.tree_flatten(actual)
    e_leaves, e_spec = pytree.tree_flatten(expected)
    if a_spec != e_spec:
        return False
    for a, e in zip(a_leaves, e_leaves, strict=True):
        if isinstance(e, torch.Tensor):
            if not isinstance(a, torch.Tensor) or a.dtype != e.dtype or a.shape != e.shape or a.device != e.device:
                return False
            rtol, atol = TOLERANCES.get(e.dtype, (0.0, 0.0))
            if not torch.allclose(a.detach(), e.detach(), rtol=rtol, atol=atol, equal_nan=True):
                return False
        elif a != e:
            return False
    return True


def _run(fn: Callable[..., Any], args: Sequence[Any], seed: int) -> tuple[Any, list[Any]]:
    inputs = copy.deepcopy(list(args))  # leaf tensors deep-copy to leaves with the same requires_grad
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        out = fn(*inputs)
    return out, inputs


def first_failing_layer(fn: Callable[..., Any], args: Sequence[Any], *, fullgraph: bool = False, seed: int = 0) -> str | None:
    expected = _run(fn, args, seed)
    for layer, backend in LAYERS:
        torch.compiler.reset()
        try:
            actual = _run(torch.compile(fn, backend=backend, fullgraph=fullgraph), args, seed)
        except Exception:  # noqa: BLE001
            return layer
        if not _same(actual, expected):
            return layer
    return None
