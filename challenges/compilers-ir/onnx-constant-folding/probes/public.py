"""Public probes for onnx-constant-folding: what Run shows.

Each probe builds a model in the sandbox, runs the original in onnxruntime,
calls ``fold_constants`` on a copy, and observes the folded model: whether
``check_model(full_check=True)`` accepts it, its node count per op type, its
number of initializers, its interface, and its onnxruntime outputs for the
same feeds. The check ``folded_ok`` compares the structure with the
reference's folded model and the outputs with the *original* model's.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from onnx import helper
from probe_common import const, fold_case, init, make, randn, vi
from probekit import probe

# ---------------------------------------------------------------- probes


@probe(category="folding", check="folded_ok", hints=["propagate"])
def small_constant_chain(solution: Any) -> dict[str, Any]:
    """A Constant times an initializer, plus another initializer, then added to the input."""
    nodes = [
        const("k", np.float32(0.5)),
        helper.make_node("Mul", ["w", "k"], ["wk"]),
        helper.make_node("Add", ["wk", "b"], ["wb"]),
        helper.make_node("Add", ["x", "wb"], ["y"]),
    ]
    m = make(nodes, [vi("x", [4])], [vi("y", [4])], [init("w", randn(1, 4)), init("b", randn(2, 4))])
    return fold_case(solution, m, [{"x": randn(3, 4)}])


@probe(category="cleanup", check="folded_ok", hints=["identity", "dead-code"])
def identity_and_dead_branch(solution: Any) -> dict[str, Any]:
    """An Identity between two nodes, and a branch nobody reads."""
    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Identity", ["r"], ["r1"]),
        helper.make_node("Exp", ["x"], ["unused"]),
        helper.make_node("Neg", ["r1"], ["y"]),
    ]
    m = make(nodes, [vi("x", [3])], [vi("y", [3])])
    return fold_case(solution, m, [{"x": randn(4, 3)}])


@probe(category="semantics", check="folded_ok", hints=["input-dependent"])
def shape_of_input(solution: Any) -> dict[str, Any]:
    """Shape(x) depends on the input: it stays, while a constant reshape target folds."""
    nodes = [
        helper.make_node("Shape", ["x"], ["xs"]),
        helper.make_node("Reshape", ["w", "xs"], ["wr"]),
        const("flat", np.array([-1], dtype=np.int64)),
        const("two", np.array([2], dtype=np.int64)),
        helper.make_node("Concat", ["two", "flat"], ["target"], axis=0),
        helper.make_node("Add", ["x", "wr"], ["s"]),
        helper.make_node("Reshape", ["s", "target"], ["y"]),
    ]
    m = make(nodes, [vi("x", [2, 3])], [vi("y", [2, 3])], [init("w", randn(5, 6))])
    return fold_case(solution, m, [{"x": randn(6, 2, 3)}])
