"""Hidden probes for onnx-decompose-unsupported: they make the score.

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
import onnx
from onnx import TensorProto, helper, numpy_helper
from probe_common import F64, decompose_case, init, make, randn, report_of, vi
from probekit import probe

# ---------------------------------------------------------------- report


@probe(category="report", weight=2, hints=["report-domains"])
def report_domains_and_counts(solution: Any) -> Any:
    """Counts per op type; contrib (com.microsoft) and custom-domain nodes are keyed with their domain."""
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["a"]),
        helper.make_node("Gelu", ["a"], ["b"], domain="com.microsoft"),
        helper.make_node("Relu", ["b"], ["c"], domain="ai.onnx"),
        helper.make_node("Relu", ["c"], ["d"], domain="npu.custom"),
        helper.make_node("Softmax", ["d"], ["e"]),
        helper.make_node("Einsum", ["e", "e"], ["f"], equation="ij,ij->ij"),
        helper.make_node("Softmax", ["f"], ["g"], axis=0),
        helper.make_node("Gelu", ["g"], ["h"]),
        helper.make_node("Einsum", ["h", "x"], ["y"], equation="ij,ij->ij"),
        helper.make_node("FusedMatMul", ["y", "w"], ["z"], domain="com.microsoft"),
    ]
    m = make(nodes, [vi("x", [4, 4])], [vi("z", [4, 4])], 20, [init("w", randn(1, 4, 4))],
             [("com.microsoft", 1), ("npu.custom", 1)])  # fmt: skip
    return report_of(solution, m)


@probe(category="report", weight=2, hints=["report-subgraphs"])
def report_nested_subgraphs(solution: Any) -> Any:
    """An If whose branches hold unsupported ops, one branch holding another If."""
    inner_then = helper.make_graph(
        [helper.make_node("HardSwish", ["x"], ["it"]), helper.make_node("Softmax", ["it"], ["io"])],
        "inner_then", [], [vi("io", [2, 3])],
    )  # fmt: skip
    inner_else = helper.make_graph(
        [helper.make_node("Sin", ["x"], ["ie"]), helper.make_node("Relu", ["ie"], ["io2"])],
        "inner_else", [], [vi("io2", [2, 3])],
    )  # fmt: skip
    then_g = helper.make_graph(
        [helper.make_node("If", ["c"], ["t"], then_branch=inner_then, else_branch=inner_else)],
        "then", [], [vi("t", [2, 3])],
    )  # fmt: skip
    else_g = helper.make_graph(
        [helper.make_node("Gelu", ["x"], ["e1"]), helper.make_node("Softmax", ["e1"], ["e2"])],
        "else", [], [vi("e2", [2, 3])],
    )  # fmt: skip
    nodes = [
        helper.make_node("If", ["c"], ["r"], then_branch=then_g, else_branch=else_g),
        helper.make_node("Softmax", ["r"], ["y"]),
    ]
    m = make(nodes, [vi("c", [], TensorProto.BOOL), vi("x", [2, 3])], [vi("y", [2, 3])], 20)
    return report_of(solution, m)


@probe(category="report", hints=["report-domains"])
def report_fully_supported(solution: Any) -> Any:
    """A model that uses only supported ops: the report is empty."""
    nodes = [
        helper.make_node("Constant", [], ["k"], value=numpy_helper.from_array(np.float32(2.0))),
        helper.make_node("MatMul", ["x", "w"], ["a"]),
        helper.make_node("Mul", ["a", "k"], ["b"]),
        helper.make_node("Sigmoid", ["b"], ["c"]),
        helper.make_node("Identity", ["c"], ["y"]),
    ]
    m = make(nodes, [vi("x", [2, 4])], [vi("y", [2, 4])], 17, [init("w", randn(2, 4, 4))])
    return report_of(solution, m)


@probe(category="report", hints=["report-domains"])
def report_torchscript_export(solution: Any) -> Any:
    """A torch block exported with the TorchScript exporter at opset 17."""
    import io
    import warnings

    import torch

    class Block(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln = torch.nn.LayerNorm(8)
            self.fc = torch.nn.Linear(8, 8)
            self.act = torch.nn.Hardswish()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            h = self.ln(x)
            att = torch.softmax(h @ h.transpose(-1, -2), dim=-1)
            return self.ln(self.act(self.fc(att @ h)))

    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(Block().eval(), (torch.zeros(2, 3, 8),), buf, dynamo=False, opset_version=17)
    return report_of(solution, onnx.load_from_string(buf.getvalue()))


@probe(category="report", hints=["report-subgraphs"])
def report_loop_and_scan_bodies(solution: Any) -> Any:
    """A Loop whose body holds a Scan, and a Scan at the top level: every body's nodes count."""
    inner_scan_body = helper.make_graph(
        [
            helper.make_node("Add", ["acc", "row"], ["acc_next"]),
            helper.make_node("HardSwish", ["acc_next"], ["h"]),
            helper.make_node("Gelu", ["h"], ["row_out"]),
        ],
        "inner_scan_body", [vi("acc", [3]), vi("row", [3])], [vi("acc_next", [3]), vi("row_out", [3])],
    )  # fmt: skip
    loop_body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Softmax", ["state"], ["s"]),
            helper.make_node("Scan", ["zeros", "s"], ["acc_last", "scanned"], num_scan_inputs=1, body=inner_scan_body),
            helper.make_node("Sin", ["scanned"], ["state_next"]),
        ],
        "loop_body", [vi("iteration", [], TensorProto.INT64), vi("cond_in", [], TensorProto.BOOL), vi("state", [2, 3])],
        [vi("cond_out", [], TensorProto.BOOL), vi("state_next", [2, 3])],
    )  # fmt: skip
    top_scan_body = helper.make_graph(
        [
            helper.make_node("Mul", ["total", "item"], ["total_next"]),
            helper.make_node("Softmax", ["total_next"], ["item_out"]),
        ],
        "top_scan_body", [vi("total", [3]), vi("item", [3])], [vi("total_next", [3]), vi("item_out", [3])],
    )  # fmt: skip
    nodes = [
        helper.make_node("Loop", ["trips", "go", "x"], ["looped"], body=loop_body),
        helper.make_node("Scan", ["ones", "looped"], ["total_last", "y"], num_scan_inputs=1, body=top_scan_body),
    ]
    m = make(nodes, [vi("x", [2, 3])], [vi("y", [2, 3])], 20,
             [init("trips", np.array(2, np.int64)), init("go", np.array(True)),
              init("zeros", np.zeros(3, np.float32)), init("ones", np.ones(3, np.float32))])  # fmt: skip
    return report_of(solution, m)


@probe(category="report", hints=["report-domains"])
def report_default_domain_spelled_out(solution: Any) -> Any:
    """Nodes whose domain is written "ai.onnx" are ONNX ops: keyed by op type alone, supported when in the set."""
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], domain="ai.onnx"),
        helper.make_node("Einsum", ["a", "a"], ["b"], equation="ij,ij->ij", domain="ai.onnx"),
        helper.make_node("Einsum", ["b", "x"], ["c"], equation="ij,ij->ij"),
        helper.make_node("Softmax", ["c"], ["d"], domain="ai.onnx"),
        helper.make_node("Gelu", ["d"], ["y"]),
    ]
    m = make(nodes, [vi("x", [2, 3])], [vi("y", [2, 3])], 20)
    return report_of(solution, m)


# ---------------------------------------------------------------- decompose


@probe(category="decompose", check="decomposition_ok", hints=["gelu-approximate"])
def gelu_exact_and_tanh(solution: Any) -> dict[str, Any]:
    """Opset 20: Gelu with approximate="none" and approximate="tanh" side by side."""
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["a"], name="proj"),
        helper.make_node("Gelu", ["a"], ["y_exact"], name="act_exact"),
        helper.make_node("Gelu", ["a"], ["y_tanh"], name="act_tanh", approximate="tanh"),
    ]
    m = make(nodes, [vi("x", [4, 16])], [vi("y_exact", [4, 16]), vi("y_tanh", [4, 16])], 20,
             [init("w", randn(3, 16, 16, scale=0.6))])  # fmt: skip
    return decompose_case(solution, m, {"x": randn(4, 4, 16, scale=2.0)})


@probe(category="decompose", check="decomposition_ok", hints=["fresh-names"])
def unnamed_nodes(solution: Any) -> dict[str, Any]:
    """Opset 20: two Gelu, two Softmax and two HardSwish nodes, none of them named."""
    nodes = [
        helper.make_node("Gelu", ["x"], ["g1"]),
        helper.make_node("Gelu", ["g1"], ["g2"]),
        helper.make_node("Softmax", ["g2"], ["s1"]),
        helper.make_node("HardSwish", ["s1"], ["h1"]),
        helper.make_node("HardSwish", ["x"], ["h2"]),
        helper.make_node("Add", ["h1", "h2"], ["a"]),
        helper.make_node("Softmax", ["a"], ["y"], axis=0),
    ]
    m = make(nodes, [vi("x", [3, 5])], [vi("y", [3, 5])], 20)
    return decompose_case(solution, m, {"x": randn(5, 3, 5, scale=3.0)})


@probe(category="decompose", check="decomposition_ok", hints=["reduce-axes-opset"])
def layernorm_opset17(solution: Any) -> dict[str, Any]:
    """Opset 17: LayerNormalization over the last axis with scale and bias (ReduceMean takes axes as an attribute)."""
    nodes = [helper.make_node("LayerNormalization", ["x", "scale", "bias"], ["y"], name="ln")]
    m = make(nodes, [vi("x", [2, 3, 8])], [vi("y", [2, 3, 8])], 17,
             [init("scale", randn(6, 8)), init("bias", randn(7, 8))])  # fmt: skip
    return decompose_case(solution, m, {"x": randn(8, 2, 3, 8, scale=4.0) + 3.0})


@probe(category="decompose", check="decomposition_ok", hints=["reduce-axes-opset", "layernorm-axis"])
def layernorm_opset18_positive_axis(solution: Any) -> dict[str, Any]:
    """Opset 18: LayerNormalization with axis=1 on an intermediate rank-3 tensor, no bias, epsilon 1e-3."""
    nodes = [
        helper.make_node("Mul", ["x", "two"], ["t"], name="scale_up"),
        helper.make_node("LayerNormalization", ["t", "scale"], ["y"], name="ln", axis=1, epsilon=1e-3),
    ]
    m = make(nodes, [vi("x", [2, 3, 4])], [vi("y", [2, 3, 4])], 18,
             [init("two", np.float32(2.0)), init("scale", randn(9, 3, 4))])  # fmt: skip
    return decompose_case(solution, m, {"x": randn(10, 2, 3, 4, scale=0.05)})


@probe(category="decompose", check="decomposition_ok", hints=["softmax-max", "reduce-axes-opset"])
def softmax_opset13_large_logits(solution: Any) -> dict[str, Any]:
    """Opset 13: Softmax over a middle axis of logits in the hundreds."""
    nodes = [helper.make_node("Softmax", ["x"], ["y"], name="sm", axis=1)]
    m = make(nodes, [vi("x", [2, 5, 3])], [vi("y", [2, 5, 3])], 13)
    x = randn(11, 2, 5, 3, scale=40.0) + 300.0
    x[1, :, 0] = [-900.0, -880.0, -905.0, -899.0, -950.0]
    return decompose_case(solution, m, {"x": x})


@probe(category="decompose", check="decomposition_ok", hints=["softmax-legacy"])
def softmax_opset11_legacy(solution: Any) -> dict[str, Any]:
    """Opset 11: Softmax with the default axis and with axis=2 on a rank-3 input."""
    nodes = [
        helper.make_node("Softmax", ["x"], ["y_default"], name="sm_default"),
        helper.make_node("Softmax", ["x"], ["y_axis2"], name="sm_axis2", axis=2),
    ]
    m = make(nodes, [vi("x", [2, 3, 4])], [vi("y_default", [2, 3, 4]), vi("y_axis2", [2, 3, 4])], 11)
    return decompose_case(solution, m, {"x": randn(12, 2, 3, 4, scale=2.0)})


@probe(category="decompose", check="decomposition_ok", hints=["hardswish"])
def hardswish_both_saturations(solution: Any) -> dict[str, Any]:
    """Opset 14: HardSwish on values from -6 to 6, both flat regions and the ramp."""
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("HardSwish", ["c"], ["y"], name="hs"),
    ]
    m = make(nodes, [vi("x", [1, 2, 5, 5])], [vi("y", [1, 3, 5, 5])], 14, [init("w", randn(13, 3, 2, 3, 3))])
    return decompose_case(solution, m, {"x": randn(14, 1, 2, 5, 5, scale=1.5)})


@probe(category="decompose", check="decomposition_ok", hints=["constant-dtype"])
def float64_model(solution: Any) -> dict[str, Any]:
    """Opset 17, float64 tensors: LayerNormalization then Softmax; every constant must be float64 too."""
    nodes = [
        helper.make_node("LayerNormalization", ["x", "scale", "bias"], ["n"], name="ln", epsilon=1e-6),
        helper.make_node("Softmax", ["n"], ["y"], name="sm"),
    ]
    m = make(nodes, [vi("x", [3, 6], F64)], [vi("y", [3, 6], F64)], 17,
             [init("scale", randn(15, 6, dtype=np.float64)), init("bias", randn(16, 6, dtype=np.float64))])  # fmt: skip
    return decompose_case(solution, m, {"x": randn(17, 3, 6, scale=5.0, dtype=np.float64)})


@probe(category="decompose", check="decomposition_ok", weight=2,
       hints=["gelu-approximate", "reduce-axes-opset", "softmax-max", "hardswish"])  # fmt: skip
def exported_block_opset20(solution: Any) -> dict[str, Any]:
    """A torch block (LayerNorm, attention softmax, GELU both ways, Hardswish) from torch.onnx.export at opset 20."""
    import io
    import warnings

    import torch

    class Block(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln1 = torch.nn.LayerNorm(16)
            self.fc = torch.nn.Linear(16, 16)
            self.act = torch.nn.GELU()
            self.hs = torch.nn.Hardswish()
            self.ln2 = torch.nn.LayerNorm(16, bias=False)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            h = self.ln1(x)
            att = torch.softmax(h @ h.transpose(-1, -2) * 0.25, dim=-1)
            h = att @ h
            h = self.act(self.fc(h)) + torch.nn.functional.gelu(h, approximate="tanh")
            return self.ln2(self.hs(h))

    torch.manual_seed(0)
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # The TorchScript exporter: the dynamo one gives the same ops but costs seconds per export.
        torch.onnx.export(Block().eval(), (torch.zeros(2, 5, 16),), buf, dynamo=False, opset_version=20)
    model = onnx.load_from_string(buf.getvalue())
    return decompose_case(solution, model, {model.graph.input[0].name: randn(18, 2, 5, 16, scale=2.0)})


@probe(category="decompose", check="decomposition_ok", hints=["softmax-default-axis"])
def softmax_opset13_default_axis_rank3(solution: Any) -> dict[str, Any]:
    """Opset 13, rank 3: Softmax with no axis attribute, and with axis=-2."""
    nodes = [
        helper.make_node("Softmax", ["x"], ["y_default"], name="sm_default"),
        helper.make_node("Softmax", ["x"], ["y_minus2"], name="sm_minus2", axis=-2),
    ]
    m = make(nodes, [vi("x", [2, 3, 4])], [vi("y_default", [2, 3, 4]), vi("y_minus2", [2, 3, 4])], 13)
    return decompose_case(solution, m, {"x": randn(19, 2, 3, 4, scale=2.0)})


@probe(category="decompose", check="decomposition_ok", hints=["softmax-legacy"])
def softmax_opset12_legacy(solution: Any) -> dict[str, Any]:
    """Opset 12, rank 4: Softmax with the default axis and with axis=-2 (both still the pre-13 definition)."""
    nodes = [
        helper.make_node("Softmax", ["x"], ["y_default"], name="sm_default"),
        helper.make_node("Softmax", ["x"], ["y_minus2"], name="sm_minus2", axis=-2),
    ]
    m = make(nodes, [vi("x", [2, 3, 2, 4])], [vi("y_default", [2, 3, 2, 4]), vi("y_minus2", [2, 3, 2, 4])], 12)
    return decompose_case(solution, m, {"x": randn(20, 2, 3, 2, 4, scale=2.0)})


@probe(category="decompose", check="decomposition_ok", hints=["opset-import", "reduce-axes-opset"])
def opset_listed_after_other_domains(solution: Any) -> dict[str, Any]:
    """Opset 18, declared after two other domains' opsets: LayerNormalization then Softmax."""
    nodes = [
        helper.make_node("LayerNormalization", ["x", "scale", "bias"], ["n"], name="ln"),
        helper.make_node("Softmax", ["n"], ["y"], name="sm"),
    ]
    graph = helper.make_graph(nodes, "g", [vi("x", [3, 6])], [vi("y", [3, 6])],
                              initializer=[init("scale", randn(21, 6)), init("bias", randn(22, 6))])  # fmt: skip
    opsets = [helper.make_opsetid("com.microsoft", 1), helper.make_opsetid("ai.onnx.ml", 3), helper.make_opsetid("", 18)]
    m = helper.make_model(graph, opset_imports=opsets, ir_version=10)
    return decompose_case(solution, m, {"x": randn(23, 3, 6, scale=2.0)})


@probe(category="decompose", check="decomposition_ok", hints=["layernorm-axis"])
def layernorm_default_epsilon(solution: Any) -> dict[str, Any]:
    """Opset 18: LayerNormalization without an epsilon attribute, on rows whose variance is close to epsilon."""
    nodes = [helper.make_node("LayerNormalization", ["x", "scale", "bias"], ["y"], name="ln")]
    m = make(nodes, [vi("x", [4, 8])], [vi("y", [4, 8])], 18,
             [init("scale", randn(24, 8)), init("bias", randn(25, 8))])  # fmt: skip
    return decompose_case(solution, m, {"x": randn(26, 4, 8, scale=0.004)})


@probe(category="decompose", check="decomposition_ok", hints=["layernorm-variance"])
def layernorm_large_offset(solution: Any) -> dict[str, Any]:
    """Opset 17: LayerNormalization of rows whose mean is a hundred times their spread."""
    nodes = [helper.make_node("LayerNormalization", ["x", "scale", "bias"], ["y"], name="ln")]
    m = make(nodes, [vi("x", [4, 16])], [vi("y", [4, 16])], 17,
             [init("scale", randn(30, 16)), init("bias", randn(31, 16))])  # fmt: skip
    return decompose_case(solution, m, {"x": randn(32, 4, 16) + 100.0})


@probe(category="decompose", check="decomposition_ok", hints=["layernorm-axis"])
def layernorm_negative_axis_no_bias(solution: Any) -> dict[str, Any]:
    """Opset 17: LayerNormalization with axis=-2 on a rank-3 input, without bias."""
    # Not ["x", "scale", ""]: onnxruntime 1.32 crashes on an empty trailing input name here.
    nodes = [helper.make_node("LayerNormalization", ["x", "scale"], ["y"], name="ln", axis=-2)]
    m = make(nodes, [vi("x", [2, 3, 4])], [vi("y", [2, 3, 4])], 17, [init("scale", randn(27, 3, 4))])
    return decompose_case(solution, m, {"x": randn(28, 2, 3, 4, scale=3.0) + 1.0})


@probe(category="decompose", check="decomposition_ok", hints=["constant-dtype"])
def float32_cast_to_float64(solution: Any) -> dict[str, Any]:
    """Opset 20: a float32 input through Gelu, a Cast to float64, then LayerNormalization and Softmax in float64."""
    # No float64 HardSwish here: onnxruntime has no float64 kernel for it.
    nodes = [
        helper.make_node("Gelu", ["x"], ["g"], name="gelu"),
        helper.make_node("Cast", ["g"], ["g64"], name="widen", to=F64),
        helper.make_node("LayerNormalization", ["g64", "scale", "bias"], ["n"], name="ln"),
        helper.make_node("Softmax", ["n"], ["y"], name="sm"),
    ]
    m = make(nodes, [vi("x", [3, 5])], [vi("y", [3, 5], F64)], 20,
             [init("scale", randn(33, 5, dtype=np.float64)), init("bias", randn(34, 5, dtype=np.float64))])  # fmt: skip
    return decompose_case(solution, m, {"x": randn(29, 3, 5, scale=3.0)})


@probe(category="decompose", check="decomposition_ok", hints=["layernorm-axis", "reduce-axes-opset"])
def layernorm_axis_zero(solution: Any) -> dict[str, Any]:
    """Opset 17: LayerNormalization with axis=0 normalizes over every axis of the rank-3 input at once."""
    nodes = [helper.make_node("LayerNormalization", ["x", "scale", "bias"], ["y"], name="ln", axis=0)]
    m = make(nodes, [vi("x", [2, 3, 4])], [vi("y", [2, 3, 4])], 17,
             [init("scale", randn(35, 2, 3, 4)), init("bias", randn(36, 2, 3, 4))])  # fmt: skip
    return decompose_case(solution, m, {"x": randn(37, 2, 3, 4, scale=2.0) - 1.0})


@probe(category="decompose", check="decomposition_ok", hints=["fresh-names"])
def names_that_clash(solution: Any) -> dict[str, Any]:
    """Opset 20: tensor, node, initializer and graph-input names in the styles a rewrite makes up.

    Some of the names belong to what the rewrite cannot see by following the
    nodes: an initializer no node reads and a graph input no node reads. The
    nodes that keep their names (a Mul and an Add) have names a generated
    node could take too.
    """
    nodes = [
        helper.make_node("Mul", ["x", "Mul_0"], ["Sub_0"], name="gelu_Mul_0"),
        helper.make_node("Gelu", ["Sub_0"], ["mean"]),
        helper.make_node("LayerNormalization", ["mean", "scale", "Add_0"], ["var"], name="layernormalization_Sub_0"),
        helper.make_node("Softmax", ["var"], ["softmax_1"]),
        helper.make_node("Add", ["softmax_1", "mean"], ["tmp_0"], name="softmax_ReduceMax_0"),
        helper.make_node("HardSwish", ["tmp_0"], ["y"], name="hardswish_Mul_0"),
    ]
    inits = [
        init("Mul_0", np.float32(1.5)),
        init("scale", randn(38, 6)),
        init("Add_0", randn(39, 6)),
        init("gelu_k_0", np.float32(0.7071)),  # read by no node
        init("layernormalization_axes_0", np.array([-1], np.int64)),  # read by no node
    ]
    unused = vi("hardswish_0", [1])
    m = make(nodes, [vi("x", [3, 6]), unused], [vi("y", [3, 6])], 20, inits)
    feeds = {"x": randn(40, 3, 6, scale=2.0), "hardswish_0": np.zeros(1, np.float32)}
    return decompose_case(solution, m, feeds)


@probe(category="decompose", check="decomposition_ok", hints=["decompose-domains", "fresh-names"])
def other_domains_stay(solution: Any) -> dict[str, Any]:
    """Opset 20 with com.microsoft nodes: a contrib Gelu next to an ONNX one, and a SkipLayerNormalization.

    Only the default domain's Gelu, LayerNormalization and Softmax are
    rewritten; the contrib nodes stay as they are (onnxruntime runs them).
    The SkipLayerNormalization's last output is read by nobody and has a
    name a generated tensor could take.
    """
    nodes = [
        helper.make_node("Gelu", ["x"], ["g"], name="gelu"),
        helper.make_node("Gelu", ["x"], ["y_contrib"], name="contrib_gelu", domain="com.microsoft"),
        helper.make_node("LayerNormalization", ["g", "scale", "bias"], ["n"], name="ln"),
        helper.make_node("Softmax", ["n"], ["y"], name="sm"),
        helper.make_node("SkipLayerNormalization", ["x", "s", "gamma", "beta"], ["y_skip", "", "", "layernormalization_0"],
                         name="skip_ln", domain="com.microsoft", epsilon=1e-5),
    ]  # fmt: skip
    inits = [init("scale", randn(41, 8)), init("bias", randn(42, 8)), init("gamma", randn(43, 8)), init("beta", randn(44, 8))]
    outputs = [vi("y", [2, 3, 8]), vi("y_contrib", [2, 3, 8]), vi("y_skip", [2, 3, 8])]
    m = make(nodes, [vi("x", [2, 3, 8]), vi("s", [2, 3, 8])], outputs, 20, inits, [("com.microsoft", 1)])
    return decompose_case(solution, m, {"x": randn(45, 2, 3, 8, scale=2.0), "s": randn(46, 2, 3, 8)})


@probe(category="decompose", check="decomposition_ok", hints=["constant-dtype", "gelu-approximate"])
def float64_gelu_tanh(solution: Any) -> dict[str, Any]:
    """Opset 20, float64: Gelu with approximate="tanh" (onnxruntime runs it in float64; the erf form only in float32)."""
    nodes = [helper.make_node("Gelu", ["x"], ["y"], name="gelu", approximate="tanh")]
    m = make(nodes, [vi("x", [4, 6], F64)], [vi("y", [4, 6], F64)], 20)
    return decompose_case(solution, m, {"x": randn(47, 4, 6, scale=3.0, dtype=np.float64)})
