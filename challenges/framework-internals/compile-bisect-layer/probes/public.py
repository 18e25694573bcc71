"""Public probes for compile-bisect-layer: one function per answer.

Each probe hands ``first_failing_layer`` a function that breaks at a known
layer of torch.compile's stack (or not at all) and observes the layer it
names. Inductor is set up for speed: one compile thread, no vectorisation and
no precompiled header.
"""

from __future__ import annotations

from typing import Any

import torch
import torch._inductor.config as inductor_config
from probekit import probe

inductor_config.compile_threads = 1
inductor_config.cpp.vec_isa_ok = False
inductor_config.cpp_cache_precompile_headers = False


def randn(*shape: int, dtype: torch.dtype = torch.float32, seed: int = 0) -> torch.Tensor:
    """Seeded normal samples, independent of the global generator."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=gen, dtype=torch.float64).to(dtype)


@torch.library.custom_op("bisect_public::gelu_approx", mutates_args=())
def gelu_approx(x: torch.Tensor) -> torch.Tensor:
    """A custom op with a correct fake kernel and no autograd formula."""
    return x * torch.sigmoid(1.702 * x)


@gelu_approx.register_fake
def _(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x)


@torch.library.custom_op("bisect_public::transpose_scale", mutates_args=())
def transpose_scale(x: torch.Tensor) -> torch.Tensor:
    """Returns 2 * x in column-major memory; its fake kernel claims row-major."""
    return (2 * x).t().contiguous().t()


@transpose_scale.register_fake
def _(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@probe(category="errors", hints=["fullgraph", "try-order"])
def data_dependent_branch(solution: Any) -> dict[str, Any]:
    """fullgraph=True; a Python `if` on a tensor's value: Dynamo cannot capture it in one graph."""

    def fn(x: torch.Tensor) -> torch.Tensor:
        if x.sum() > 0:
            return x * 2
        return x - 1

    return {"layer": solution.first_failing_layer(fn, (randn(4, 8, seed=1),), fullgraph=True)}


@probe(category="errors", hints=["requires-grad", "catch-errors"])
def custom_op_without_autograd(solution: Any) -> dict[str, Any]:
    """A custom op with no autograd formula, input requires grad: AOTAutograd cannot trace its backward."""

    def fn(x: torch.Tensor) -> torch.Tensor:
        return gelu_approx(x) * 2

    x = randn(4, 8, seed=2).requires_grad_()
    return {"layer": solution.first_failing_layer(fn, (x,), fullgraph=True)}


@probe(category="errors", hints=["catch-errors"])
def custom_op_wrong_fake_strides(solution: Any) -> dict[str, Any]:
    """A custom op whose fake kernel has the wrong strides: Inductor's generated code asserts them."""

    def fn(x: torch.Tensor) -> torch.Tensor:
        return transpose_scale(x)

    return {"layer": solution.first_failing_layer(fn, (randn(4, 8, seed=3),), fullgraph=True)}


@probe(category="passing", hints=["compare-results"])
def matmul_chain(solution: Any) -> dict[str, Any]:
    """Two matmuls, fullgraph=True: every layer works, so the answer is None."""

    def fn(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return (a @ b) @ b.t()

    return {"layer": solution.first_failing_layer(fn, (randn(4, 8, seed=4), randn(8, 3, seed=5)), fullgraph=True)}
