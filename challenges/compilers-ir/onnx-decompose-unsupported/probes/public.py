"""Public probes for onnx-decompose-unsupported: what Run shows.

Two categories. ``report`` compares ``coverage_report`` exactly with the
reference's. ``decompose`` runs ``decompose`` on a model, then checks that
the nodes of other domains are still there unchanged, lists (with the
probe's own copy of the supported set) what else is still unsupported,
runs ``onnx.checker.check_model(full_check=True)`` and runs the rewritten
model in onnxruntime; the check ``decomposition_ok`` compares those outputs
with the reference run's outputs of the *original* model.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from onnx import TensorProto, helper
from probe_common import decompose_case, init, make, randn, report_of, vi
from probekit import probe

# ---------------------------------------------------------------- probes


@probe(category="report", hints=["report-domains"])
def report_small_model(solution: Any) -> Any:
    """Counts per op type of a small opset-20 model, one node of it in the com.microsoft domain."""
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["a"]),
        helper.make_node("Gelu", ["a"], ["b"]),
        helper.make_node("Softmax", ["b"], ["c"]),
        helper.make_node("Gelu", ["c"], ["d"], domain="com.microsoft"),
        helper.make_node("Softmax", ["d"], ["e"]),
        helper.make_node("TopK", ["e", "k"], ["y", "idx"], axis=-1),
    ]
    m = make(nodes, [vi("x", [2, 4])], [vi("y", [2, 2]), vi("idx", [2, 2], TensorProto.INT64)], 20,
             [init("w", randn(1, 4, 4)), init("k", np.array([2], dtype=np.int64))], [("com.microsoft", 1)])  # fmt: skip
    return report_of(solution, m)


@probe(category="decompose", check="decomposition_ok", hints=["gelu-approximate"])
def gelu_opset20(solution: Any) -> dict[str, Any]:
    """Opset 20: MatMul, then Gelu (approximate="none"), then Add."""
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["a"], name="proj"),
        helper.make_node("Gelu", ["a"], ["g"], name="act"),
        helper.make_node("Add", ["g", "b"], ["y"], name="bias"),
    ]
    m = make(nodes, [vi("x", [3, 8])], [vi("y", [3, 8])], 20,
             [init("w", randn(2, 8, 8, scale=0.5)), init("b", randn(3, 8))])  # fmt: skip
    return decompose_case(solution, m, {"x": randn(4, 3, 8, scale=2.0)})


@probe(category="decompose", check="decomposition_ok", hints=["reduce-axes-opset"])
def layernorm_opset20(solution: Any) -> dict[str, Any]:
    """Opset 20: LayerNormalization over the last axis, with scale and bias."""
    nodes = [helper.make_node("LayerNormalization", ["x", "scale", "bias"], ["y"], name="ln")]
    m = make(nodes, [vi("x", [2, 6])], [vi("y", [2, 6])], 20,
             [init("scale", randn(5, 6)), init("bias", randn(6, 6))])  # fmt: skip
    return decompose_case(solution, m, {"x": randn(7, 2, 6, scale=3.0)})


@probe(category="decompose", check="decomposition_ok", hints=["softmax-max", "hardswish"])
def softmax_and_hardswish_opset14(solution: Any) -> dict[str, Any]:
    """Opset 14: HardSwish, then Softmax over the last axis."""
    nodes = [
        helper.make_node("HardSwish", ["x"], ["h"], name="hs"),
        helper.make_node("Softmax", ["h"], ["y"], name="sm"),
    ]
    m = make(nodes, [vi("x", [2, 5])], [vi("y", [2, 5])], 14)
    return decompose_case(solution, m, {"x": randn(8, 2, 5, scale=3.0)})
