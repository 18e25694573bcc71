"""Public probes for implement-engine-execute: shown on "Run", inputs and all.

Every probe builds a small graph with the framework (given/autograd.py,
which the candidate's solution.py imports and re-exports), runs a backward
pass and returns what ended up in ``.grad``.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
from probekit import probe, raises


def _grad(v: Any) -> np.ndarray | None:
    """The values of ``v.grad`` (a copy), or None when no gradient was accumulated."""
    return None if v.grad is None else np.array(v.grad.data, dtype=np.float64)


@probe(category="correctness", rtol=1e-9, atol=1e-12, hints=["topo-order"])
def simple_expression(solution: ModuleType) -> dict[str, Any]:
    """f = sum(x*y + sin(x)): gradients of both leaves."""
    V = solution.Variable
    x = V([0.5, -1.2, 2.0], requires_grad=True)
    y = V([1.5, 0.3, -0.7], requires_grad=True)
    f = (x * y + x.sin()).sum()
    f.backward()
    return {"x.grad": _grad(x), "y.grad": _grad(y)}


@probe(category="correctness", rtol=1e-9, atol=1e-12, hints=["accumulate", "topo-order"])
def reused_input(solution: ModuleType) -> dict[str, Any]:
    """f = sum(x*x + 3x + exp(x)): a leaf used four times gets the sum of four gradients."""
    x = solution.Variable([0.1, -0.4, 0.9], requires_grad=True)
    f = (x * x + x * 3.0 + x.exp()).sum()
    f.backward()
    return {"x.grad": _grad(x)}


@probe(category="correctness", rtol=1e-9, atol=1e-12, hints=["input-buffer"])
def split_outputs(solution: ModuleType) -> dict[str, Any]:
    """a, b = x.chunk(2); f = sum(a*b + a): gradients for the two outputs of one node."""
    x = solution.Variable([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    a, b = x.chunk(2)
    f = (a * b + a).sum()
    f.backward()
    return {"x.grad": _grad(x)}


@probe(category="retain-graph", rtol=1e-9, atol=1e-12, hints=["retain-graph"])
def second_backward_raises(solution: ModuleType) -> dict[str, Any]:
    """Without retain_graph, a second backward through the same graph raises RuntimeError."""
    x = solution.Variable([1.0, -2.0], requires_grad=True)
    f = (x * x).sum()
    f.backward()
    first = _grad(x)
    return {"x.grad": first, "second backward": raises(f.backward)}


@probe(category="double-backward", rtol=1e-9, atol=1e-12, hints=["create-graph"])
def double_backward_cube(solution: ModuleType) -> dict[str, Any]:
    """f = sum(x**3) with create_graph=True: x.grad = 3x^2 is differentiable again, giving 6x."""
    x = solution.Variable([1.0, 2.0, -0.5], requires_grad=True)
    f = (x**3).sum()
    f.backward(create_graph=True)
    g = x.grad
    first = {"values": _grad(x), "requires_grad": bool(g.requires_grad)}
    x.grad = None
    g.sum().backward()
    return {"first": first, "second": _grad(x)}
