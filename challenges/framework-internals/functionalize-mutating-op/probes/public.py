"""Public probes for functionalize-mutating-op: one small probe per category.

Every probe calls the operators through the dispatcher
(``torch.ops.interview...``) and builds its inputs from fixed seeds. A probe
whose target is missing or raises returns the exception's class name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from probekit import probe


def randn(*shape: int, dtype: torch.dtype = torch.float32, seed: int = 0) -> torch.Tensor:
    """Seeded normal samples, independent of the global generator."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=gen, dtype=torch.float64).to(dtype)


def root_error(exc: BaseException) -> str:
    """The innermost exception's class name (torch.compile wraps the real one)."""
    while exc.__cause__ is not None or exc.__context__ is not None:
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return type(exc).__name__


def guarded(fn: Callable[[], dict[str, Any]], keys: tuple[str, ...]) -> dict[str, Any]:
    """fn()'s observation with an "error": None entry, or the error with every key None."""
    try:
        return {"error": None, **fn()}
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        return {"error": root_error(exc), **dict.fromkeys(keys)}


@probe(category="eager", rtol=1e-6, atol=1e-6, hints=["functional-op"])
def eager_functional_small(solution: Any) -> dict[str, Any]:
    """Eager ema_update on a float32 (2, 3) tensor: the result, and avg left unchanged."""
    avg = torch.tensor([[1.0, 2.0, 3.0], [-1.0, 0.0, 4.0]])
    value = torch.tensor([[0.0, 2.0, 1.0], [1.0, -2.0, 0.0]])

    def run() -> dict[str, Any]:
        y = torch.ops.interview.ema_update(avg, value, 0.75)
        return {"y": y, "avg": avg.clone()}

    return guarded(run, ("y", "avg"))


@probe(category="compile", rtol=1e-6, atol=1e-6, hints=["declare-mutation"])
def compile_updates_input(solution: Any) -> dict[str, Any]:
    """torch.compile(fullgraph=True, backend="aot_eager") of a fn that calls ema_update_ on its input."""

    def f(avg: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
        torch.ops.interview.ema_update_(avg, value, 0.5)
        return avg * 10.0

    avg = torch.tensor([1.0, 2.0, 3.0, 4.0])

    def run() -> dict[str, Any]:
        out = torch.compile(f, fullgraph=True, backend="aot_eager")(avg, torch.zeros(4))
        return {"out": out, "avg after": avg.clone()}

    return guarded(run, ("out", "avg after"))


@probe(category="aliasing", hints=["declare-mutation"])
def opcheck_schema_inplace(solution: Any) -> dict[str, Any]:
    """torch.library.opcheck(..., test_utils="test_schema") on ema_update_."""
    args = (randn(3, 4, seed=1), randn(3, 4, seed=2), 0.5)
    try:
        torch.library.opcheck(torch.ops.interview.ema_update_.default, args, test_utils="test_schema")
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        return {"test_schema": type(exc).__name__}
    return {"test_schema": "ok"}


@probe(category="aliasing", rtol=1e-6, atol=1e-6, hints=["trajectory"])
def trajectory_small(solution: Any) -> dict[str, Any]:
    """ema_trajectory over two values: the states, avg afterwards, and whether states share memory."""
    avg = torch.tensor([0.0, 8.0])
    values = [torch.tensor([4.0, 0.0]), torch.tensor([8.0, 4.0])]

    def run() -> dict[str, Any]:
        states = solution.ema_trajectory(avg, values, 0.5)
        ptrs = {s.untyped_storage().data_ptr() for s in states}
        return {
            "states": [s.clone() for s in states],
            "avg after": avg.clone(),
            "states share memory": len(ptrs) < len(states) or avg.untyped_storage().data_ptr() in ptrs,
        }

    return guarded(run, ("states", "avg after", "states share memory"))
