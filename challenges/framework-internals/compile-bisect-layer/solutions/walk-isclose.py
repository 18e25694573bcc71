"""Correct, written another way (red team round 3's owner): a hand-written
comparison that walks tuples, lists and dicts (same length, same keys, the
same nesting), requires the same shape, dtype and device for every tensor and
compares values with torch.isclose at the statement's per-dtype tolerances
(NaN equal to NaN, an infinity equal to itself); every run inside fork_rng,
so the caller's random state is left alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch

LAYERS = (("dynamo", "eager"), ("aot_autograd", "aot_eager"), ("inductor", "inductor"))
TOLERANCES = {
    torch.float32: (1.3e-6, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
    torch.float16: (1e-3, 1e-5),
    torch.float64: (1e-7, 1e-7),
}


def same(actual: Any, expected: Any) -> bool:
    """assert_close's notion of "the same", written out for tensors in tuples, lists and dicts."""
    if isinstance(expected, torch.Tensor):
        if not isinstance(actual, torch.Tensor):
            return False
        if actual.shape != expected.shape or actual.dtype != expected.dtype or actual.device != expected.device:
            return False
        rtol, atol = TOLERANCES[expected.dtype]
        return bool(torch.isclose(actual.detach(), expected.detach(), rtol=rtol, atol=atol, equal_nan=True).all())
    if isinstance(expected, Mapping):
        return (
            isinstance(actual, Mapping)
            and set(actual) == set(expected)
            and all(same(actual[key], expected[key]) for key in expected)
        )
    if isinstance(expected, Sequence) and not isinstance(expected, str):
        return (
            isinstance(actual, Sequence)
            and not isinstance(actual, str)
            and len(actual) == len(expected)
            and all(same(a, e) for a, e in zip(actual, expected, strict=True))
        )
    return type(actual) is type(expected) and actual == expected


def run(fn: Callable[..., Any], args: Sequence[Any], seed: int) -> tuple[Any, list[Any]]:
    """One run on new leaf copies (clone's layout, the given requires_grad), from the given seed."""
    copies = [
        a.detach().clone(memory_format=torch.preserve_format).requires_grad_(a.requires_grad)
        if isinstance(a, torch.Tensor)
        else a
        for a in args
    ]
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        out = fn(*copies)
    return out, copies


def first_failing_layer(fn: Callable[..., Any], args: Sequence[Any], *, fullgraph: bool = False, seed: int = 0) -> str | None:
    expected = run(fn, args, seed)
    for layer, backend in LAYERS:
        torch.compiler.reset()
        try:
            if not same(run(torch.compile(fn, backend=backend, fullgraph=fullgraph), args, seed), expected):
                return layer
        except Exception:  # noqa: BLE001 - an error and a wrong result both fail the layer
            return layer
    torch.compiler.reset()
    return None
