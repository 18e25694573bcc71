"""WRONG (one mistake): the comparison spells out the statement's two tolerance
pairs (float32 and bfloat16) and uses the float32 pair for every other dtype,
instead of assert_close's per-dtype defaults. float16 results are judged with
float32's rtol=1.3e-6 (too strict) and float64 with atol=1e-5 (too loose).
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


# The tolerances the statement gives; float32's is the general case.
TOLERANCES = {torch.bfloat16: (1.6e-2, 1e-5)}
DEFAULT_TOL = (1.3e-6, 1e-5)


def same_result(actual: Any, expected: Any) -> None:
    """Raise AssertionError unless actual matches expected (structure, dtype, shape, values)."""
    a_leaves, a_spec = torch.utils._pytree.tree_flatten(actual)
    e_leaves, e_spec = torch.utils._pytree.tree_flatten(expected)
    if a_spec != e_spec:
        raise AssertionError(f"structure differs: {a_spec} vs {e_spec}")
    for a, e in zip(a_leaves, e_leaves):
        if isinstance(e, torch.Tensor):
            rtol, atol = TOLERANCES.get(e.dtype, DEFAULT_TOL)
            torch.testing.assert_close(a, e, rtol=rtol, atol=atol, equal_nan=True)
        else:
            torch.testing.assert_close(a, e, equal_nan=True)


def first_failing_layer(fn: Callable[..., Any], args: Sequence[Any], *, fullgraph: bool = False, seed: int = 0) -> str | None:
    """Return the first layer ("dynamo", "aot_autograd", "inductor") that breaks fn, or None."""
    expected = run_once(fn, args, seed)
    for layer, backend in BACKENDS.items():
        # Forget every compiled frame: a cached graph from an earlier try (or
        # an earlier call) would otherwise answer instead of this backend.
        torch._dynamo.reset()
        try:
            compiled = torch.compile(fn, backend=backend, fullgraph=fullgraph)
            actual = run_once(compiled, args, seed)
            same_result(actual, expected)
        except Exception:  # noqa: BLE001 - an error and a wrong result both mean "this layer fails"
            return layer
    torch._dynamo.reset()
    return None
