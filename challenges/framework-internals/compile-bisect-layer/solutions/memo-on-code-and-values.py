"""WRONG (one mistake): answers are memoised per (fn.__code__, fullgraph, seed, and
the arguments' metadata and bytes). The arguments' values are in the key, but
the function is known only by its code: two closures of one factory, or a
function whose captured tensor the caller updates in place, share an entry.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

# Layer name -> the backend that stops the stack right after that layer.
BACKENDS: dict[str, str] = {
    "dynamo": "eager",
    "aot_autograd": "aot_eager",
    "inductor": "inductor",
}


def fresh_copy(value: Any) -> Any:
    """A copy of one argument that no earlier run can have touched.

    Tensors become new leaves with the same values and the same
    requires_grad (AOTAutograd traces a backward only for inputs that
    require grad); other values are shared, they are not mutated.
    """
    if isinstance(value, torch.Tensor):
        return value.detach().clone().requires_grad_(value.requires_grad)
    return value


def run_once(fn: Callable[..., Any], args: Sequence[Any], seed: int) -> tuple[Any, list[Any]]:
    """Call fn on fresh copies of args from a fixed RNG state; return (output, args after the call)."""
    copies = [fresh_copy(a) for a in args]
    torch.manual_seed(seed)
    out = fn(*copies)
    return out, copies


_ANSWERS: dict[Any, str | None] = {}


def _digest(args: Sequence[Any]) -> tuple:
    return tuple(
        (tuple(a.shape), a.stride(), a.dtype, a.requires_grad, a.detach().contiguous().view(torch.uint8).numpy().tobytes())
        if isinstance(a, torch.Tensor)
        else repr(a)
        for a in args
    )


def first_failing_layer(fn: Callable[..., Any], args: Sequence[Any], *, fullgraph: bool = False, seed: int = 0) -> str | None:
    """Return the first layer ("dynamo", "aot_autograd", "inductor") that breaks fn, or None."""
    key = (fn.__code__, fullgraph, seed, _digest(args))
    if key not in _ANSWERS:
        _ANSWERS[key] = _bisect(fn, args, fullgraph=fullgraph, seed=seed)
    return _ANSWERS[key]


def _bisect(fn: Callable[..., Any], args: Sequence[Any], *, fullgraph: bool = False, seed: int = 0) -> str | None:
    expected = run_once(fn, args, seed)
    for layer, backend in BACKENDS.items():
        # Forget every compiled frame: a cached graph from an earlier try (or
        # an earlier call) would otherwise answer instead of this backend.
        torch._dynamo.reset()
        try:
            compiled = torch.compile(fn, backend=backend, fullgraph=fullgraph)
            actual = run_once(compiled, args, seed)
            torch.testing.assert_close(actual, expected, equal_nan=True)
        except Exception:  # noqa: BLE001 - an error and a wrong result both mean "this layer fails"
            return layer
    torch._dynamo.reset()
    return None
