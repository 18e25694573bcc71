"""Hidden probes for onnx-fold-batchnorm: they make the score.

Each probe builds one or more ONNX models (exported from torch with the
TorchScript exporter and ``do_constant_folding=False``, which keeps every
BatchNormalization as its own node, or built directly with onnx.helper),
runs the original in onnxruntime with graph optimizations off (onnxruntime
would otherwise fold Conv + BN itself), calls the candidate's
``fold_batchnorm``, and observes the result:

- ``ops``: how many nodes of each type the returned graph has;
- ``valid``: whether ``onnx.checker.check_model`` accepts it;
- ``numerics``: the returned model run on the same inputs, within
  ``1e-4 + 1e-4 * |y|`` of the original, every output, names included;
- for the hygiene probes, whether the model passed in was left unchanged.

Categories: ``folding`` (patterns that must fold), ``untouched`` (patterns
that must not, because folding would change what the graph computes: another
reader of the Conv's output, in a subgraph too; a training-mode
BatchNormalization, by attribute or, before opset 14, by its outputs; ops of
the same names from another domain; parameters that are not constants),
``hygiene`` (shared weights, the caller's model, a second run, a subgraph that
still reads the BN's output and an initializer after the fold). The folding
category also covers the forms other exporters write: ``auto_pad``,
``float_data`` initializers, two and three folds of one shared weight, and a
model that already uses the names a fold would choose.
"""

from typing import Any

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper
from probe_common import (
    apply_pass,
    bn,
    bn_weights,
    conv,
    conv_weights,
    from_torch,
    graph_model,
    op_counts,
)
from probekit import probe
from torch import nn

# ---------------------------------------------------------------- torch models


class Stem(nn.Module):
    """ResNet-style stem: conv-bn-relu, a bias-free depthwise conv-bn, pooling."""

    def __init__(self) -> None:
        super().__init__()
        self.c1 = nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.b1 = nn.BatchNorm2d(16)
        self.c2 = nn.Conv2d(16, 16, 3, padding=1, groups=16, bias=False)
        self.b2 = nn.BatchNorm2d(16)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(torch.relu(self.b2(self.c2(torch.relu(self.b1(self.c1(x)))))))


class Conv1dNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c = nn.Conv1d(4, 12, 5, padding=3, dilation=2)
        self.b = nn.BatchNorm1d(12)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.b(self.c(x)))


class Conv3dNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c = nn.Conv3d(2, 6, 3, padding=1, stride=(1, 2, 2), bias=False)
        self.b = nn.BatchNorm3d(6)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(self.c(x))


class TransposedNet(nn.Module):
    """A ConvTranspose followed by BatchNorm: not a Conv, its weight is laid out (C_in, C_out, ...)."""

    def __init__(self) -> None:
        super().__init__()
        self.t = nn.ConvTranspose2d(4, 4, 2, stride=2)
        self.b = nn.BatchNorm2d(4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(self.t(x))


class ResidualNet(nn.Module):
    """Three conv-bn pairs; the middle conv's raw output also feeds the skip connection."""

    def __init__(self) -> None:
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8)
        self.c2, self.b2 = nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8)
        self.c3, self.b3 = nn.Conv2d(8, 8, 1, bias=False), nn.BatchNorm2d(8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.b1(self.c1(x)))
        raw = self.c2(h)
        h = torch.relu(self.b2(raw)) + raw
        return self.b3(self.c3(h))


# ---------------------------------------------------------------- folding


@probe(category="folding", check="graph_matches", weight=2, hints=["fold-math", "conv-no-bias"])
def resnet_stem(solution: Any) -> dict[str, Any]:
    """Exported stem: conv-bn-relu, then a bias-free depthwise conv-bn: both pairs fold."""
    return apply_pass(solution, from_torch(Stem(), (2, 3, 16, 16), seed=10), seed=1)


@probe(category="folding", check="graph_matches", weight=2, hints=["fold-math", "weight-layout"])
def conv1d_and_conv3d(solution: Any) -> dict[str, Any]:
    """A dilated Conv1d + BatchNorm1d and a strided bias-free Conv3d + BatchNorm3d: the filters are 3-D and 5-D."""
    return {
        "conv1d": apply_pass(solution, from_torch(Conv1dNet(), (2, 4, 20), seed=11), seed=2),
        "conv3d": apply_pass(solution, from_torch(Conv3dNet(), (1, 2, 6, 8, 8), seed=12), seed=3),
    }


@probe(category="folding", check="graph_matches", weight=2, hints=["epsilon"])
def epsilon_attribute_and_default(solution: Any) -> dict[str, Any]:
    """Small running variances: one BN with epsilon=0.01, one with no epsilon attribute (default 1e-5)."""
    rng = np.random.default_rng(13)
    inits = conv_weights(rng, "c1", 6, 3, 3) + bn_weights(rng, "bn1", 6, var_scale=1e-2)
    inits += conv_weights(rng, "c2", 6, 6, 3) + bn_weights(rng, "bn2", 6, var_scale=1e-3)
    nodes = [
        conv("c1", "x", "c1_out"),
        bn("bn1", "c1_out", "bn1_out", epsilon=0.01),
        helper.make_node("Relu", ["bn1_out"], ["r"]),
        conv("c2", "r", "c2_out"),
        bn("bn2", "c2_out", "y"),
    ]
    return apply_pass(solution, graph_model(nodes, [("x", [2, 3, 8, 8])], ["y"], inits), seed=4)


@probe(category="folding", check="graph_matches", weight=2, hints=["fold-until-fixpoint"])
def two_batchnorms_in_a_row(solution: Any) -> dict[str, Any]:
    """Conv -> BN -> BN -> Relu: after the first fold, the second BN follows a Conv too."""
    rng = np.random.default_rng(14)
    inits = conv_weights(rng, "c", 5, 3, 3) + bn_weights(rng, "bnA", 5) + bn_weights(rng, "bnB", 5)
    nodes = [
        conv("c", "x", "c_out"),
        bn("bnA", "c_out", "a"),
        bn("bnB", "a", "b"),
        helper.make_node("Relu", ["b"], ["y"]),
    ]
    return apply_pass(solution, graph_model(nodes, [("x", [1, 3, 7, 7])], ["y"], inits), seed=5)


@probe(category="folding", check="graph_matches", weight=2, hints=["keep-output-name"])
def batchnorm_output_is_a_graph_output(solution: Any) -> dict[str, Any]:
    """The BN's output is a graph output and feeds two nodes: the folded Conv must produce that name."""
    rng = np.random.default_rng(15)
    inits = conv_weights(rng, "c", 4, 2, 3) + bn_weights(rng, "bn", 4)
    nodes = [
        conv("c", "x", "c_out"),
        bn("bn", "c_out", "features"),
        helper.make_node("Relu", ["features"], ["r"]),
        helper.make_node("Add", ["features", "r"], ["y"]),
    ]
    return apply_pass(solution, graph_model(nodes, [("x", [2, 2, 6, 6])], ["features", "y"], inits), seed=6)


@probe(category="folding", check="graph_matches", weight=2, hints=["keep-attributes", "shared-weights"])
def attribute_and_storage_forms(solution: Any) -> dict[str, Any]:
    """Forms a pass meets in other exporters: a Conv padded by auto_pad, parameters stored as float_data rather than
    raw bytes, two pairs of unnamed nodes, and two Convs that share one weight, each followed by its own BN: all of them
    fold."""
    rng = np.random.default_rng(34)
    inits = conv_weights(rng, "c", 4, 3, 3) + bn_weights(rng, "bn", 4)
    same_upper = [
        helper.make_node("Conv", ["x", "c.W", "c.B"], ["c_out"], name="c", auto_pad="SAME_UPPER", strides=[2, 2], kernel_shape=[3, 3]),
        bn("bn", "c_out", "y"),
    ]
    as_float_data = [
        helper.make_tensor(t.name, TensorProto.FLOAT, list(t.dims), numpy_helper.to_array(t).ravel().tolist()) for t in inits
    ]
    stored = [conv("c", "x", "c_out"), bn("bn", "c_out", "y")]
    inits2 = bn_weights(rng, "bn2", 4)
    params = ["scale", "bias", "mean", "var"]
    shared = [
        helper.make_node("Conv", ["x", "c.W", "c.B"], ["a"], name="left", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["a", *[f"bn.{p}" for p in params]], ["a_bn"], name="left_bn"),
        helper.make_node("Conv", ["x", "c.W", "c.B"], ["b"], name="right", pads=[0, 0, 0, 0]),
        helper.make_node("BatchNormalization", ["b", *[f"bn2.{p}" for p in params]], ["b_bn"], name="right_bn", epsilon=1e-3),
        helper.make_node("Relu", ["b_bn"], ["y2"]),
    ]
    # Node names are optional; the folded Convs need names that differ (onnxruntime refuses two nodes of one name).
    inits3 = conv_weights(rng, "d", 4, 4, 3) + bn_weights(rng, "bn3", 4)
    unnamed = [
        helper.make_node("Conv", ["x", "c.W", "c.B"], ["u1"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["u1", *[f"bn.{p}" for p in params]], ["u1_bn"]),
        helper.make_node("Relu", ["u1_bn"], ["u1_r"]),
        helper.make_node("Conv", ["u1_r", "d.W", "d.B"], ["u2"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["u2", *[f"bn3.{p}" for p in params]], ["y"]),
    ]
    return {
        "auto_pad": apply_pass(solution, graph_model(same_upper, [("x", [1, 3, 7, 7])], ["y"], inits), seed=34),
        "unnamed nodes": apply_pass(solution, graph_model(unnamed, [("x", [1, 3, 6, 6])], ["y"], inits + inits3), seed=39),
        "float_data": apply_pass(solution, graph_model(stored, [("x", [1, 3, 5, 5])], ["y"], as_float_data), seed=35),
        "two folds of one shared weight": apply_pass(
            solution, graph_model(shared, [("x", [2, 3, 6, 6])], ["a_bn", "y2"], inits + inits2), seed=36
        ),
    }


# A pass whose search for a free name never moves on to the next candidate loops forever the
# first time two candidates in a row are taken: the short limit makes that a quick failure.
@probe(category="folding", check="graph_matches", weight=2, hints=["keep-attributes", "shared-weights"], timeout=10)
def names_already_in_use(solution: Any) -> dict[str, Any]:
    """New names must skip every name in use, however many candidates are taken: three unnamed Convs that share one
    weight, each followed by its own BN (every fold after the first finds the names it would derive from the weight and
    from the Conv taken, the third finds two of them taken), and a model whose other tensors and nodes already carry the
    names a pass would derive from the Conv, its weight and the BN's output."""
    rng = np.random.default_rng(40)
    params = ["scale", "bias", "mean", "var"]
    inits = conv_weights(rng, "c", 4, 3, 3) + bn_weights(rng, "p", 4) + bn_weights(rng, "q", 4) + bn_weights(rng, "r", 4)
    three: list[onnx.NodeProto] = []
    for i, prefix in enumerate("pqr"):
        three.append(helper.make_node("Conv", ["x", "c.W", "c.B"], [f"z{i}"], pads=[1, 1, 1, 1]))
        three.append(helper.make_node("BatchNormalization", [f"z{i}", *[f"{prefix}.{p}" for p in params]], [f"n{i}"]))
    three.append(helper.make_node("Concat", ["n0", "n1", "n2"], ["y"], axis=1))
    # Tensors and nodes named the way passes name what a fold creates: after the Conv's weight, the BN's output
    # and the Conv, with and without a counter.
    taken_inits = conv_weights(rng, "c", 4, 3, 3) + bn_weights(rng, "bn", 4)
    taken = [
        helper.make_node("Relu", ["x"], ["c.W_bn_folded"], name="c_bn_folded"),
        helper.make_node("Sigmoid", ["x"], ["c.W_bn_folded_1"], name="c_bn_folded_1"),
        helper.make_node("Add", ["c.W_bn_folded", "c.W_bn_folded_1"], ["c.W_folded"], name="c_folded"),
        conv("c", "c.W_folded", "c_out"),
        bn("bn", "c_out", "y"),
        helper.make_node("Neg", ["y"], ["y_bias_bn_folded"], name="Conv_bn_folded"),
        helper.make_node("Abs", ["y_bias_bn_folded"], ["y_bias"], name="y_bn_folded"),
    ]
    return {
        "three folds of one shared weight": apply_pass(solution, graph_model(three, [("x", [1, 3, 5, 5])], ["y"], inits), seed=40),
        "the names a fold would choose are taken": apply_pass(
            solution, graph_model(taken, [("x", [1, 3, 5, 5])], ["y", "y_bias"], taken_inits), seed=41
        ),
    }


# ---------------------------------------------------------------- untouched


@probe(category="untouched", check="graph_matches", weight=2, hints=["match-producer"])
def batchnorm_not_after_a_conv(solution: Any) -> dict[str, Any]:
    """BatchNormalization on a graph input, and after an Add of two Convs: nothing to fold."""
    rng = np.random.default_rng(16)
    inits = bn_weights(rng, "bn0", 3) + conv_weights(rng, "c1", 3, 3, 3) + conv_weights(rng, "c2", 3, 3, 3)
    inits += bn_weights(rng, "bn1", 3)
    nodes = [
        bn("bn0", "x", "n0"),
        conv("c1", "n0", "a"),
        conv("c2", "n0", "b"),
        helper.make_node("Add", ["a", "b"], ["s"]),
        bn("bn1", "s", "y"),
    ]
    return apply_pass(solution, graph_model(nodes, [("x", [1, 3, 6, 6])], ["y"], inits), seed=7)


@probe(category="untouched", check="graph_matches", weight=2, hints=["single-consumer"])
def conv_output_used_elsewhere(solution: Any) -> dict[str, Any]:
    """The Conv's raw output also feeds an Add (the BN and the Add named or not), or is itself a graph output: the Conv
    must stay as it is."""
    rng = np.random.default_rng(17)
    inits = conv_weights(rng, "c", 4, 4, 3) + bn_weights(rng, "bn", 4)
    skip = [
        conv("c", "x", "c_out"),
        bn("bn", "c_out", "n"),
        helper.make_node("Add", ["n", "c_out"], ["y"]),
    ]
    exposed = [conv("c", "x", "c_out"), bn("bn", "c_out", "y")]
    # Node names are optional: two readers without a name are still two readers.
    unnamed = [
        conv("c", "x", "c_out"),
        helper.make_node("BatchNormalization", ["c_out", "bn.scale", "bn.bias", "bn.mean", "bn.var"], ["n"]),
        helper.make_node("Add", ["n", "c_out"], ["y"]),
    ]
    return {
        "unnamed readers": apply_pass(solution, graph_model(unnamed, [("x", [1, 4, 5, 5])], ["y"], inits), seed=38),
        "raw output feeds an Add": apply_pass(solution, graph_model(skip, [("x", [1, 4, 5, 5])], ["y"], inits), seed=8),
        "raw output is a graph output": apply_pass(solution, graph_model(exposed, [("x", [1, 4, 5, 5])], ["c_out", "y"], inits), seed=9),
    }


@probe(category="untouched", check="graph_matches", weight=2, hints=["match-producer", "weight-layout"])
def conv_transpose_then_batchnorm(solution: Any) -> dict[str, Any]:
    """Exported ConvTranspose2d + BatchNorm2d: only Conv is folded; ConvTranspose's weight layout differs."""
    return apply_pass(solution, from_torch(TransposedNet(), (2, 4, 5, 5), seed=18), seed=10)


@probe(category="untouched", check="graph_matches", weight=2, hints=["constants-only"])
def parameters_that_are_not_constants(solution: Any) -> dict[str, Any]:
    """A BN or Conv parameter fed by a graph input or a node, or an initializer that is also an input (a BN's or the Conv's): no fold."""
    rng = np.random.default_rng(19)
    inits = conv_weights(rng, "c", 3, 3, 3) + bn_weights(rng, "bn", 3)
    nodes = [conv("c", "x", "c_out"), bn("bn", "c_out", "y")]
    values = {t.name: numpy_helper.to_array(t) for t in inits}

    def without(name: str) -> list[TensorProto]:
        return [t for t in inits if t.name != name]

    runtime_bias = graph_model(nodes, [("x", [1, 3, 5, 5]), ("c.B", [3])], ["y"], without("c.B"))
    from_a_node = graph_model(
        [helper.make_node("Constant", [], ["bn.scale"], value=numpy_helper.from_array(values["bn.scale"])), *nodes],
        [("x", [1, 3, 5, 5])],
        ["y"],
        without("bn.scale"),
    )
    runtime_var = graph_model(nodes, [("x", [1, 3, 5, 5]), ("bn.var", [3])], ["y"], without("bn.var"))
    runtime_weight = graph_model(nodes, [("x", [1, 3, 5, 5]), ("c.W", [3, 3, 3, 3])], ["y"], without("c.W"))
    overridable = graph_model(nodes, [("x", [1, 3, 5, 5]), ("bn.mean", [3])], ["y"], inits)
    overridable_weight = graph_model(nodes, [("x", [1, 3, 5, 5]), ("c.W", [3, 3, 3, 3])], ["y"], inits)
    overridable_bias = graph_model(nodes, [("x", [1, 3, 5, 5]), ("c.B", [3])], ["y"], inits)
    return {
        "variance is an input": apply_pass(solution, runtime_var, seed=11, fixed={"bn.var": values["bn.var"]}),
        "weight is an input": apply_pass(solution, runtime_weight, seed=12, fixed={"c.W": values["c.W"]}),
        "mean is an initializer and an input": apply_pass(solution, overridable, seed=13),
        "the Conv's weight is an initializer and an input": apply_pass(solution, overridable_weight, seed=30),
        "the Conv's bias is an initializer and an input": apply_pass(solution, overridable_bias, seed=31),
        "the Conv's bias is an input": apply_pass(solution, runtime_bias, seed=23, fixed={"c.B": values["c.B"]}),
        "scale is a node's output": apply_pass(solution, from_a_node, seed=24),
    }


@probe(category="untouched", check="graph_matches", weight=2, hints=["single-consumer", "fold-math"])
def residual_network_folds_only_safe_pairs(solution: Any) -> dict[str, Any]:
    """Three exported conv-bn pairs; the middle conv's raw output feeds the skip path: exactly two fold."""
    return apply_pass(solution, from_torch(ResidualNet(), (2, 3, 8, 8), seed=20), seed=14)


@probe(category="untouched", check="graph_matches", weight=2, hints=["inference-only"])
def batchnorm_in_training_mode(solution: Any) -> dict[str, Any]:
    """A BN with training_mode=1 normalizes with the batch's statistics: it stays; an inference BN after it folds."""
    rng = np.random.default_rng(25)
    inits = conv_weights(rng, "c1", 5, 3, 3) + bn_weights(rng, "bn1", 5)
    inits += conv_weights(rng, "c2", 5, 5, 3) + bn_weights(rng, "bn2", 5)
    params = ["bn1.scale", "bn1.bias", "bn1.mean", "bn1.var"]
    net = [
        conv("c1", "x", "c1_out"),
        helper.make_node("BatchNormalization", ["c1_out", *params], ["t", "bn1.new_mean", "bn1.new_var"], training_mode=1, momentum=0.9),
        helper.make_node("Relu", ["t"], ["r"]),
        conv("c2", "r", "c2_out"),
        bn("bn2", "c2_out", "y", training_mode=0),
    ]
    updates = [
        conv("c1", "x", "c1_out"),
        helper.make_node("BatchNormalization", ["c1_out", *params], ["y", "m", "v"], training_mode=1, momentum=0.8),
    ]
    return {
        "network": apply_pass(solution, graph_model(net, [("x", [4, 3, 6, 6])], ["y"], inits), seed=25),
        "running statistics are outputs": apply_pass(
            solution, graph_model(updates, [("x", [3, 3, 5, 5])], ["y", "m", "v"], inits), seed=26
        ),
    }


@probe(category="untouched", check="graph_matches", weight=2, hints=["inference-only"])
def training_outputs_in_an_older_opset(solution: Any) -> dict[str, Any]:
    """Opset 12, where a BN with more than one output is in training mode (no attribute says so): it stays."""
    rng = np.random.default_rng(27)
    inits = conv_weights(rng, "c1", 4, 3, 3) + bn_weights(rng, "bn1", 4)
    inits += conv_weights(rng, "c2", 4, 4, 3) + bn_weights(rng, "bn2", 4)
    params = ["bn1.scale", "bn1.bias", "bn1.mean", "bn1.var"]
    nodes = [
        conv("c1", "x", "c1_out"),
        helper.make_node("BatchNormalization", ["c1_out", *params], ["t", "m", "v", "saved_m", "saved_v"], epsilon=1e-3),
        helper.make_node("Relu", ["t"], ["r"]),
        conv("c2", "r", "c2_out"),
        bn("bn2", "c2_out", "y"),
    ]
    return apply_pass(solution, graph_model(nodes, [("x", [3, 3, 6, 6])], ["y"], inits, opset=12), seed=27)


@probe(category="untouched", check="graph_matches", weight=2, hints=["match-producer"])
def same_op_types_in_another_domain(solution: Any) -> dict[str, Any]:
    """A "Conv" and a "BatchNormalization" from a custom domain (model-local functions) are not the ONNX ops."""
    rng = np.random.default_rng(28)
    inits = conv_weights(rng, "c1", 4, 3, 3) + bn_weights(rng, "bn1", 4)
    inits += conv_weights(rng, "c2", 4, 3, 3) + bn_weights(rng, "bn2", 4)
    domain = "probe.ops"
    std = [helper.make_opsetid("", 17)]
    custom_conv = helper.make_function(
        domain,
        "Conv",
        ["X", "W", "B"],
        ["Y"],
        [helper.make_node("Conv", ["X", "W", "B"], ["z"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["z"], ["Y"])],
        opset_imports=std,
    )
    custom_bn = helper.make_function(
        domain,
        "BatchNormalization",
        ["X", "s", "b", "m", "v"],
        ["Y"],
        [helper.make_node("BatchNormalization", ["X", "s", "b", "m", "v"], ["n"]), helper.make_node("Neg", ["n"], ["Y"])],
        opset_imports=std,
    )
    nodes = [
        helper.make_node("Conv", ["x", "c1.W", "c1.B"], ["c1_out"], name="c1", domain=domain),
        bn("bn1", "c1_out", "y1"),
        conv("c2", "x", "c2_out"),
        helper.make_node("BatchNormalization", ["c2_out", "bn2.scale", "bn2.bias", "bn2.mean", "bn2.var"], ["y2"], domain=domain),
    ]
    model = graph_model(nodes, [("x", [2, 3, 6, 6])], ["y1", "y2"], inits, functions=[custom_conv, custom_bn])
    return apply_pass(solution, model, seed=28)


@probe(category="untouched", check="graph_matches", weight=2, hints=["single-consumer"])
def conv_output_read_inside_a_subgraph(solution: Any) -> dict[str, Any]:
    """An If node's branches read the Conv's raw output from the enclosing graph, directly or through a nested If:
    that is a second reader."""
    rng = np.random.default_rng(29)
    inits = conv_weights(rng, "c", 4, 3, 3) + bn_weights(rng, "bn", 4)
    then_branch = helper.make_graph(
        [helper.make_node("Relu", ["c_out"], ["then_out"])], "then", [], [helper.make_tensor_value_info("then_out", TensorProto.FLOAT, None)]
    )
    else_branch = helper.make_graph(
        [helper.make_node("Neg", ["c_out"], ["else_out"])], "else", [], [helper.make_tensor_value_info("else_out", TensorProto.FLOAT, None)]
    )
    nodes = [
        conv("c", "x", "c_out"),
        bn("bn", "c_out", "y"),
        helper.make_node("If", ["flag"], ["z"], then_branch=then_branch, else_branch=else_branch),
    ]
    model = graph_model(nodes, [("x", [2, 3, 5, 5]), ("flag", [])], ["y", "z"], inits, input_types={"flag": TensorProto.BOOL})
    # The read is one If deeper: the outer If's branch holds an If whose branch reads c_out.
    inner = helper.make_node("If", ["flag"], ["inner_out"], then_branch=then_branch, else_branch=else_branch)
    outer_then = helper.make_graph([inner], "outer_then", [], [helper.make_tensor_value_info("inner_out", TensorProto.FLOAT, None)])
    outer_else = helper.make_graph(
        [helper.make_node("Sigmoid", ["x"], ["plain"])], "outer_else", [], [helper.make_tensor_value_info("plain", TensorProto.FLOAT, None)]
    )
    nested_nodes = [*nodes[:2], helper.make_node("If", ["flag"], ["z"], then_branch=outer_then, else_branch=outer_else)]
    nested = graph_model(nested_nodes, [("x", [2, 3, 5, 5]), ("flag", [])], ["y", "z"], inits, input_types={"flag": TensorProto.BOOL})
    flag = {"flag": np.array(True)}
    return {
        "a branch's node reads it": apply_pass(solution, model, seed=29, fixed=flag),
        "a nested If's branch reads it": apply_pass(solution, nested, seed=32, fixed=flag),
    }


# ---------------------------------------------------------------- hygiene


@probe(category="hygiene", check="graph_matches", weight=2, hints=["shared-weights"])
def weight_shared_by_two_convs(solution: Any) -> dict[str, Any]:
    """Two Convs read the same weight initializer; only one is followed by a BN: the other must not change."""
    rng = np.random.default_rng(21)
    inits = conv_weights(rng, "c", 4, 4, 3) + bn_weights(rng, "bn", 4)
    nodes = [
        conv("c", "x", "a"),
        bn("bn", "a", "a_bn"),
        helper.make_node("Conv", ["x", "c.W", "c.B"], ["b"], name="twin", pads=[1, 1, 1, 1]),
        helper.make_node("Concat", ["a_bn", "b"], ["y"], axis=1),
    ]
    return apply_pass(solution, graph_model(nodes, [("x", [2, 4, 6, 6])], ["y"], inits), seed=15)


@probe(category="hygiene", check="graph_matches", weight=2, hints=["copy-the-model"])
def callers_model_is_left_alone(solution: Any) -> dict[str, Any]:
    """The model passed in must come back unchanged, and running the pass on its result changes nothing."""
    model = from_torch(Stem(), (1, 3, 12, 12), seed=22)
    first = apply_pass(solution, model, seed=16, hygiene=True)
    again = solution.fold_batchnorm(solution.fold_batchnorm(model))
    first["second run"] = op_counts(again) if isinstance(again, onnx.ModelProto) else "not a ModelProto"
    return first


@probe(category="hygiene", check="graph_matches", weight=2, hints=["keep-output-name", "shared-weights"])
def subgraph_reads_after_the_fold(solution: Any) -> dict[str, Any]:
    """The pair folds; an If branch reads the BN's output and an initializer of the enclosing graph, which it still
    needs after the fold (an initializer a subgraph reads is in use)."""
    rng = np.random.default_rng(37)
    inits = conv_weights(rng, "c", 4, 3, 3) + bn_weights(rng, "bn", 4)
    inits.append(numpy_helper.from_array(rng.normal(0, 1, size=(1, 4, 1, 1)).astype(np.float32), "offset"))
    then_branch = helper.make_graph(
        [helper.make_node("Add", ["n", "offset"], ["then_out"])], "then", [], [helper.make_tensor_value_info("then_out", TensorProto.FLOAT, None)]
    )
    else_branch = helper.make_graph(
        [helper.make_node("Neg", ["n"], ["else_out"])], "else", [], [helper.make_tensor_value_info("else_out", TensorProto.FLOAT, None)]
    )
    nodes = [
        conv("c", "x", "c_out"),
        bn("bn", "c_out", "n"),
        helper.make_node("If", ["flag"], ["y"], then_branch=then_branch, else_branch=else_branch),
    ]
    model = graph_model(nodes, [("x", [2, 3, 5, 5]), ("flag", [])], ["y"], inits, input_types={"flag": TensorProto.BOOL})
    return apply_pass(solution, model, seed=37, fixed={"flag": np.array(True)})
