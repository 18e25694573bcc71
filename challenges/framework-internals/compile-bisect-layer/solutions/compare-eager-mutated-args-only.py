"""WRONG (one mistake): arguments are compared only if the eager run mutated
them (their _version counter moved), to skip comparing large unchanged
inputs. A layer that mutates an argument eager leaves alone is not caught.
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


def mutated_positions(copies: Sequence[Any]) -> list[int]:
    return [i for i, c in enumerate(copies) if isinstance(c, torch.Tensor) and c._version > 0]


def first_failing_layer(fn: Callable[..., Any], args: Sequence[Any], *, fullgraph: bool = False, seed: int = 0) -> str | None:
    """Return the first layer ("dynamo", "aot_autograd", "inductor") that breaks fn, or None."""
    expected_out, expected_args = run_once(fn, args, seed)
    watched = mutated_positions(expected_args)
    expected = (expected_out, [expected_args[i] for i in watched])
    for layer, backend in BACKENDS.items():
        # Forget every compiled frame: a cached graph from an earlier try (or
        # an earlier call) would otherwise answer instead of this backend.
        torch._dynamo.reset()
        try:
            compiled = torch.compile(fn, backend=backend, fullgraph=fullgraph)
            out, after = run_once(compiled, args, seed)
            actual = (out, [after[i] for i in watched])
            torch.testing.assert_close(actual, expected, equal_nan=True)
        except Exception:  # noqa: BLE001 - an error and a wrong result both mean "this layer fails"
            return layer
    torch._dynamo.reset()
    return None
