"""Hidden probes for onnx-constant-folding: they make the score.

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
import onnx
from onnx import helper, numpy_helper
from probe_common import F32, const, fold_case, init, make, randn, vi
from probekit import probe

# ---------------------------------------------------------------- folding


@probe(category="folding", check="folded_ok", weight=2, hints=["propagate"])
def weight_preprocessing_chain(solution: Any) -> dict[str, Any]:
    """A chain of Constant, Mul, Add, Transpose and Reshape on weights, feeding one MatMul with the input."""
    nodes = [
        const("two", np.float32(2.0)),
        helper.make_node("Mul", ["w", "two"], ["w2"]),
        helper.make_node("Add", ["w2", "b"], ["w3"]),
        helper.make_node("Transpose", ["w3"], ["wt"], perm=[1, 0]),
        const("shape", np.array([6, 4], dtype=np.int64)),
        helper.make_node("Reshape", ["wt", "shape"], ["wr"]),
        helper.make_node("MatMul", ["x", "wr"], ["y"]),
    ]
    m = make(nodes, [vi("x", [3, 6])], [vi("y", [3, 4])], [init("w", randn(1, 4, 6)), init("b", randn(2, 1, 6))])
    return fold_case(solution, m, [{"x": randn(3, 3, 6)}])


@probe(category="folding", check="folded_ok", hints=["empty-input", "propagate"])
def optional_empty_inputs(solution: Any) -> dict[str, Any]:
    """Clip with an omitted min ("") on a constant, and the same Clip on the input."""
    nodes = [
        const("hi", np.float32(0.5)),
        helper.make_node("Clip", ["w", "", "hi"], ["wc"]),
        helper.make_node("Clip", ["x", "", "hi"], ["xc"]),
        helper.make_node("Mul", ["xc", "wc"], ["y"]),
    ]
    m = make(nodes, [vi("x", [2, 5])], [vi("y", [2, 5])], [init("w", randn(4, 5))])
    return fold_case(solution, m, [{"x": randn(5, 2, 5)}])


@probe(category="folding", check="folded_ok", hints=["propagate"])
def multi_output_and_types(solution: Any) -> dict[str, Any]:
    """Split of a constant into three (two used), ConstantOfShape, Cast and Range: every dtype kept."""
    nodes = [
        helper.make_node("Split", ["w"], ["s0", "s1", "s2"], axis=0, num_outputs=3),
        const("shp", np.array([2, 4], dtype=np.int64)),
        helper.make_node("ConstantOfShape", ["shp"], ["ones"], value=numpy_helper.from_array(np.array([1.5], np.float32))),
        helper.make_node("Add", ["s0", "ones"], ["a"]),
        const("start", np.int64(0)),
        const("limit", np.int64(8)),
        const("delta", np.int64(1)),
        helper.make_node("Range", ["start", "limit", "delta"], ["r"]),
        helper.make_node("Cast", ["r"], ["rf"], to=F32),
        const("rshape", np.array([2, 4], dtype=np.int64)),
        helper.make_node("Reshape", ["rf", "rshape"], ["r2"]),
        helper.make_node("Mul", ["x", "a"], ["m1"]),
        helper.make_node("Add", ["m1", "s2"], ["m2"]),
        helper.make_node("Sub", ["m2", "r2"], ["y"]),
    ]
    m = make(nodes, [vi("x", [2, 4])], [vi("y", [2, 4])], [init("w", randn(6, 6, 4))])
    return fold_case(solution, m, [{"x": randn(7, 2, 4)}])


@probe(category="folding", check="folded_ok", hints=["graph-output"])
def constant_graph_output(solution: Any) -> dict[str, Any]:
    """One graph output is computed from constants only; it must become an initializer with the output's name."""
    nodes = [
        helper.make_node("ReduceSum", ["w"], ["wsum"], keepdims=0),
        helper.make_node("Sqrt", ["wsum"], ["norm"]),
        helper.make_node("Div", ["w", "norm"], ["wn"]),
        helper.make_node("Mul", ["x", "wn"], ["y"]),
        helper.make_node("Exp", ["wn"], ["scale"]),
    ]
    w = np.abs(randn(8, 3)) + 0.1
    m = make(nodes, [vi("x", [3])], [vi("y", [3]), vi("scale", [3])], [init("w", w)])
    return fold_case(solution, m, [{"x": randn(9, 3)}])


@probe(category="folding", check="folded_ok", weight=2, hints=["propagate", "identity", "dead-code"])
def torchscript_export_unfolded(solution: Any) -> dict[str, Any]:
    """A torch module exported with do_constant_folding=False: weight transforms, a flatten and Identity nodes."""
    import io
    import warnings

    import torch

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(8, 12))
            self.b = torch.nn.Parameter(torch.randn(8))
            self.register_buffer("scale", torch.tensor([0.5, 2.0, 1.0, 4.0]))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            h = x.reshape(x.shape[0], -1) @ (self.w * 2.0).t() + self.b.sum()
            s = torch.cat([self.scale, self.scale * 3.0])
            return torch.relu(h) * s

    torch.manual_seed(0)
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(Net().eval(), (torch.zeros(2, 3, 4),), buf, dynamo=False, opset_version=17,
                          do_constant_folding=False, input_names=["x"], output_names=["y"])  # fmt: skip
    m = onnx.load_from_string(buf.getvalue())
    return fold_case(solution, m, [{"x": randn(10, 2, 3, 4)}])


# ---------------------------------------------------------------- semantics


@probe(category="semantics", check="folded_ok", weight=2, hints=["overridable"])
def overridable_initializer(solution: Any) -> dict[str, Any]:
    """An initializer that is also a graph input is a default value: run with it and with a fed value."""
    nodes = [
        helper.make_node("Mul", ["gain", "k"], ["g2"]),
        helper.make_node("Mul", ["bias", "k"], ["b2"]),
        helper.make_node("Mul", ["x", "g2"], ["xg"]),
        helper.make_node("Add", ["xg", "b2"], ["y"]),
    ]
    m = make(
        nodes,
        [vi("x", [2, 3]), vi("gain", [3])],
        [vi("y", [2, 3])],
        [init("gain", np.float32([1.0, 2.0, 3.0])), init("bias", randn(11, 3)), init("k", np.float32(3.0))],
    )
    x = randn(12, 2, 3)
    return fold_case(solution, m, [{"x": x}, {"x": x, "gain": np.float32([-1.0, 0.5, 10.0])}])


@probe(category="semantics", check="folded_ok", hints=["input-dependent"])
def shape_of_input_not_folded(solution: Any) -> dict[str, Any]:
    """Reshape targets built from Shape(x) (input-dependent, kept) and from constants only (folded)."""
    nodes = [
        helper.make_node("Shape", ["x"], ["xs"]),
        const("zero", np.array([0], dtype=np.int64)),
        helper.make_node("Gather", ["xs", "zero"], ["batch"], axis=0),
        const("minus1", np.array([-1], dtype=np.int64)),
        helper.make_node("Concat", ["batch", "minus1"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["flat"]),
        const("six", np.array([6], dtype=np.int64)),
        const("one", np.array([1], dtype=np.int64)),
        helper.make_node("Concat", ["one", "six"], ["wshape"], axis=0),
        helper.make_node("Reshape", ["w", "wshape"], ["wrow"]),
        helper.make_node("Mul", ["flat", "wrow"], ["y"]),
    ]
    m = make(nodes, [vi("x", ["batch", 2, 3])], [vi("y", ["batch", 6])], [init("w", randn(13, 2, 3))])
    return fold_case(solution, m, [{"x": randn(14, 4, 2, 3)}, {"x": randn(15, 1, 2, 3)}])


@probe(category="semantics", check="folded_ok", weight=2, hints=["random"])
def random_ops_not_folded(solution: Any) -> dict[str, Any]:
    """RandomUniform has no inputs but a new value every run: it must stay. The model is run twice."""
    nodes = [
        helper.make_node("RandomUniform", [], ["noise"], shape=[2, 3], seed=7.0, low=-0.1, high=0.1),
        const("c", np.float32(0.0)),
        helper.make_node("Add", ["noise", "c"], ["noise0"]),
        helper.make_node("Add", ["x", "noise0"], ["y"]),
    ]
    m = make(nodes, [vi("x", [2, 3])], [vi("y", [2, 3])])
    return fold_case(solution, m, [{"x": randn(16, 2, 3)}], times=2)


# ---------------------------------------------------------------- cleanup


@probe(category="cleanup", check="folded_ok", hints=["identity"])
def identity_chains(solution: Any) -> dict[str, Any]:
    """Identity before, between and after nodes; one Identity maps a graph input straight to a graph output."""
    nodes = [
        helper.make_node("Identity", ["x"], ["x1"]),
        helper.make_node("Relu", ["x1"], ["r"]),
        helper.make_node("Identity", ["r"], ["r1"]),
        helper.make_node("Identity", ["r1"], ["r2"]),
        helper.make_node("Neg", ["r2"], ["n"]),
        helper.make_node("Identity", ["n"], ["y"]),
        helper.make_node("Identity", ["x"], ["x_copy"]),
        helper.make_node("Identity", ["w"], ["w1"]),
        helper.make_node("Add", ["r1", "w1"], ["z"]),
    ]
    m = make(nodes, [vi("x", [4])], [vi("y", [4]), vi("x_copy", [4]), vi("z", [4])], [init("w", randn(17, 4))])
    return fold_case(solution, m, [{"x": randn(18, 4)}])


@probe(category="cleanup", check="folded_ok", hints=["dead-code"])
def dead_nodes_and_initializers(solution: Any) -> dict[str, Any]:
    """Nodes whose results nobody reads (some from the input), and initializers only they used."""
    nodes = [
        helper.make_node("Mul", ["x", "unused_w"], ["dead1"]),
        helper.make_node("Relu", ["dead1"], ["dead2"]),
        helper.make_node("Sigmoid", ["x"], ["s"]),
        helper.make_node("Add", ["s", "b"], ["y"]),
        helper.make_node("Exp", ["dead2"], ["dead3"]),
        helper.make_node("Transpose", ["big"], ["bigt"], perm=[1, 0]),
    ]
    m = make(
        nodes,
        [vi("x", [3])],
        [vi("y", [3])],
        [init("unused_w", randn(19, 3)), init("b", randn(20, 3)), init("big", randn(21, 16, 16)), init("orphan", randn(22, 5))],
    )
    return fold_case(solution, m, [{"x": randn(23, 3)}])


@probe(category="cleanup", check="folded_ok", hints=["dead-code", "identity"])
def identity_to_two_outputs(solution: Any) -> dict[str, Any]:
    """One tensor is exposed under two graph output names through two Identity nodes."""
    nodes = [
        helper.make_node("Tanh", ["x"], ["t"]),
        helper.make_node("Identity", ["t"], ["out_a"]),
        helper.make_node("Identity", ["t"], ["out_b"]),
        helper.make_node("Mul", ["t", "t"], ["sq"]),
        helper.make_node("Identity", ["sq"], ["out_c"]),
    ]
    m = make(nodes, [vi("x", [3])], [vi("out_a", [3]), vi("out_b", [3]), vi("out_c", [3])])
    return fold_case(solution, m, [{"x": randn(24, 3)}])
