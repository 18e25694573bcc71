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
    """A chain of Constant, Mul, Add, Transpose and Reshape on weights, feeding one MatMul with the input; one Mul
    reads the same constant twice."""
    nodes = [
        const("two", np.float32(2.0)),
        helper.make_node("Mul", ["w", "two"], ["w2"]),
        helper.make_node("Mul", ["b", "b"], ["b_sq"]),
        helper.make_node("Add", ["w2", "b_sq"], ["w3"]),
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


@probe(category="folding", check="folded_ok", weight=2, hints=["opset"])
def older_opset_model(solution: Any) -> dict[str, Any]:
    """An opset-11 model: Unsqueeze, ReduceSum and Split of weights, whose axes and sizes are attributes at that opset."""
    nodes = [
        helper.make_node("Split", ["w"], ["w_top", "w_bottom"], axis=0, split=[2, 4]),
        helper.make_node("ReduceSum", ["w_top"], ["top_sum"], axes=[0], keepdims=0),
        helper.make_node("Unsqueeze", ["top_sum"], ["row"], axes=[0]),
        helper.make_node("Squeeze", ["lone"], ["lone_sq"], axes=[0, 2]),
        helper.make_node("Mul", ["x", "row"], ["xr"]),
        helper.make_node("MatMul", ["xr", "w_bottom_t"], ["h"]),
        helper.make_node("Transpose", ["w_bottom"], ["w_bottom_t"], perm=[1, 0]),
        helper.make_node("Add", ["h", "lone_sq"], ["y"]),
    ]
    # Topological order: the Transpose must come before the MatMul that reads it.
    nodes[5], nodes[6] = nodes[6], nodes[5]
    m = make(nodes, [vi("x", [2, 5])], [vi("y", [2, 4])],
             [init("w", randn(30, 6, 5)), init("lone", randn(31, 1, 4, 1))], opset=11)  # fmt: skip
    return fold_case(solution, m, [{"x": randn(32, 2, 5)}])


@probe(category="folding", check="folded_ok", weight=2, hints=["propagate"])
def constant_attribute_forms(solution: Any) -> dict[str, Any]:
    """Constant nodes written with value_float, value_floats, value_int and value_ints, not a tensor value."""
    nodes = [
        helper.make_node("Constant", [], ["half"], value_float=0.5),
        helper.make_node("Constant", [], ["gains"], value_floats=[1.0, -2.0, 3.0, 0.25]),
        helper.make_node("Constant", [], ["two"], value_int=2),
        helper.make_node("Constant", [], ["shape"], value_ints=[2, 2]),
        helper.make_node("Mul", ["gains", "half"], ["g"]),
        helper.make_node("Reshape", ["g", "shape"], ["g2"]),
        helper.make_node("Cast", ["two"], ["two_f"], to=F32),
        helper.make_node("Mul", ["x", "g2"], ["xg"]),
        helper.make_node("Add", ["xg", "two_f"], ["y"]),
    ]
    m = make(nodes, [vi("x", [3, 2, 2])], [vi("y", [3, 2, 2])])
    return fold_case(solution, m, [{"x": randn(33, 3, 2, 2)}])


@probe(category="folding", check="folded_ok", hints=["no-merge"])
def equal_constants_stay_apart(solution: Any) -> dict[str, Any]:
    """Two Constant nodes and an initializer with equal values, each read by its own input-dependent node."""
    ones = np.ones(4, dtype=np.float32)
    nodes = [
        const("c1", ones),
        const("c2", ones.copy()),
        helper.make_node("Add", ["x", "c1"], ["a"]),
        helper.make_node("Mul", ["a", "c2"], ["b"]),
        helper.make_node("Sub", ["b", "w"], ["y"]),
    ]
    m = make(nodes, [vi("x", [4])], [vi("y", [4])], [init("w", ones.copy())])
    return fold_case(solution, m, [{"x": randn(34, 4)}])


# ---------------------------------------------------------------- semantics


@probe(category="semantics", check="folded_ok", weight=2, hints=["overridable"])
def overridable_initializer(solution: Any) -> dict[str, Any]:
    """An initializer that is also a graph input is a default value: run with it and with a fed value. An Identity
    exposes it as a graph output too, and must stay (its input is a graph input)."""
    nodes = [
        helper.make_node("Mul", ["gain", "k"], ["g2"]),
        helper.make_node("Mul", ["bias", "k"], ["b2"]),
        helper.make_node("Mul", ["x", "g2"], ["xg"]),
        helper.make_node("Add", ["xg", "b2"], ["y"]),
        helper.make_node("Identity", ["gain"], ["gain_seen"]),
    ]
    m = make(
        nodes,
        [vi("x", [2, 3]), vi("gain", [3])],
        [vi("y", [2, 3]), vi("gain_seen", [3])],
        [init("gain", np.float32([1.0, 2.0, 3.0])), init("bias", randn(11, 3)), init("k", np.float32(3.0))],
    )
    x = randn(12, 2, 3)
    return fold_case(solution, m, [{"x": x}, {"x": x, "gain": np.float32([-1.0, 0.5, 10.0])}])


@probe(category="semantics", check="folded_ok", hints=["input-dependent"])
def shape_of_input_not_folded(solution: Any) -> dict[str, Any]:
    """Reshape targets built from Shape(x) (input-dependent, kept) and from constants only (folded), one of them
    from Shape(w) of an initializer (constant, so folded)."""
    nodes = [
        helper.make_node("Shape", ["x"], ["xs"]),
        const("zero", np.array([0], dtype=np.int64)),
        helper.make_node("Gather", ["xs", "zero"], ["batch"], axis=0),
        const("minus1", np.array([-1], dtype=np.int64)),
        helper.make_node("Concat", ["batch", "minus1"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["flat"]),
        helper.make_node("Shape", ["w"], ["w_dims"]),
        helper.make_node("ReduceProd", ["w_dims"], ["six"], keepdims=1),
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


@probe(category="semantics", check="folded_ok", weight=2, hints=["random"])
def other_random_ops_not_folded(solution: Any) -> dict[str, Any]:
    """RandomUniformLike, RandomNormalLike, Bernoulli and Multinomial of constant inputs: they must stay. Run twice."""
    nodes = [
        helper.make_node("RandomUniformLike", ["w"], ["u"], seed=1.0, low=-0.1, high=0.1),
        helper.make_node("RandomNormalLike", ["w"], ["n"], seed=2.0, scale=0.05),
        helper.make_node("Bernoulli", ["p"], ["mask"], seed=3.0),
        helper.make_node("Multinomial", ["logits"], ["pick"], seed=4.0, sample_size=3),
        helper.make_node("Cast", ["pick"], ["pick_f"], to=F32),
        helper.make_node("Add", ["x", "u"], ["xu"]),
        helper.make_node("Add", ["xu", "n"], ["xun"]),
        helper.make_node("Mul", ["xun", "mask"], ["y"]),
        helper.make_node("Mul", ["x", "pick_f"], ["z"]),
    ]
    m = make(
        nodes,
        [vi("x", [2, 3])],
        [vi("y", [2, 3]), vi("z", [2, 3])],
        [init("w", randn(35, 2, 3)), init("p", np.full((2, 3), 0.5, np.float32)), init("logits", randn(36, 2, 4))],
    )
    return fold_case(solution, m, [{"x": randn(37, 2, 3)}], times=2)


@probe(category="semantics", check="folded_ok", weight=2, hints=["overridable", "dead-code"])
def overridable_initializer_nobody_reads(solution: Any) -> dict[str, Any]:
    """A graph input with a default value, read only by a dead branch: run without feeding it, and feeding it."""
    nodes = [
        helper.make_node("Mul", ["x", "temperature"], ["scaled"]),  # dead: no output reads it
        helper.make_node("Tanh", ["x"], ["t"]),
        helper.make_node("Add", ["t", "b"], ["y"]),
    ]
    m = make(
        nodes,
        [vi("x", [3]), vi("temperature", [])],
        [vi("y", [3])],
        [init("temperature", np.float32(1.0)), init("b", randn(38, 3))],
    )
    x = randn(39, 3)
    return fold_case(solution, m, [{"x": x}, {"x": x, "temperature": np.array(4.0, dtype=np.float32)}])


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


@probe(category="cleanup", check="folded_ok", weight=2, hints=["dead-code"])
def later_output_of_a_multi_output_node(solution: Any) -> dict[str, Any]:
    """Split and TopK of the input whose first outputs nobody reads: only a later output is used."""
    nodes = [
        helper.make_node("Split", ["x"], ["left", "right"], axis=1, num_outputs=2),
        helper.make_node("Relu", ["right"], ["y"]),
        const("k", np.array([2], dtype=np.int64)),
        helper.make_node("TopK", ["x", "k"], ["top_values", "top_indices"], axis=1),
        helper.make_node("Cast", ["top_indices"], ["z"], to=F32),
    ]
    m = make(nodes, [vi("x", [3, 6])], [vi("y", [3, 3]), vi("z", [3, 2])])
    return fold_case(solution, m, [{"x": randn(40, 3, 6)}])


@probe(category="cleanup", check="folded_ok", hints=["identity"])
def identity_of_a_shared_constant(solution: Any) -> dict[str, Any]:
    """An initializer read directly by one node and through an Identity by another."""
    nodes = [
        helper.make_node("Identity", ["w"], ["w_alias"]),
        helper.make_node("Add", ["x", "w"], ["a"]),
        helper.make_node("Mul", ["a", "w_alias"], ["y"]),
    ]
    m = make(nodes, [vi("x", [4])], [vi("y", [4])], [init("w", randn(41, 4))])
    return fold_case(solution, m, [{"x": randn(42, 4)}])
