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
- ``untouched``: whether everything the fold does not own is byte for byte
  the original's (probes/common.py, ``untouched``): every other node, in its
  order and with its subgraphs, the graph's and the model's own fields, the
  initializers still there, the value_info entries of remaining tensors;
- ``new model``: the result is not the object passed in, and editing it
  leaves the caller's model as it was (every model, those where nothing folds
  included, and the second run's result);
- ``names``: every tensor name defined once across all scopes, the new
  initializers' names used nowhere in the original, no node name taken twice
  (a new node's name is none of the remaining original nodes', at any depth);
- ``attributes``: each folded Conv carries its Conv's attributes, byte for
  byte as a multiset (none dropped, added or rewritten);
- for the hygiene probes, whether the model passed in was left unchanged.

Categories: ``folding`` (patterns that must fold), ``untouched`` (patterns
that must not, because folding would change what the graph computes: another
reader of the Conv's output, in a subgraph too; a training-mode
BatchNormalization, by attribute or, before opset 14, by its outputs; ops of
the same names from another domain; parameters that are not constants),
``hygiene`` (shared weights, the caller's model, a second run, a subgraph that
still reads the BN's output and an initializer after the fold, everything the
fold does not own). Pairs inside subgraphs (If, Loop and Scan bodies) stay:
``pairs_inside_subgraphs_stay``. The folding
category also covers the forms other exporters write: ``auto_pad``,
``float_data`` initializers, two and three folds of one shared weight, and a
model that already uses the names a fold would choose. Three more (red team
round 6, at the end of this file) cover the rarer forms the statement allows:
subgraphs in a GRAPHS list and under a graph attribute of any name, a
subgraph's value_info entry for an outer tensor (neither a read nor a
definition), an IR-3 model, a Conv attribute with a doc_string, the default
domain imported as "ai.onnx", and the pass's own names (a removed node's name
included) planted where no generated model puts them.

Four more probes grade models drawn by a seeded generator (the end of this
file; ``_seeded(family, case)`` fixes every draw): ``generated_pairs_that_fold``
(every pair folds, in every form the statement allows), ``generated_pairs_that_stay``
(pairs that must stay, each for one reason, among pairs that fold),
``generated_names_in_use`` (the names a pass may pick, and the names the
candidate's own pass picks on the model, already used by tensors of every kind,
sparse initializers and a subgraph's own inputs, initializers, value_info and
outputs among them; every call starts from a fresh import of the solution, so
names from a module-level counter are learned as the graded call makes them)
and ``generated_models_hygiene`` (the caller's model and a second run). Every
generated model is also dressed (``_dressed``, a generator of its own) with what
the fold must leave alone: model and graph fields, doc strings, metadata, a pair
inside a subgraph, value_info from shape inference.
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
    const,
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


@probe(category="folding", check="graph_matches", weight=2, hints=["keep-attributes"])
def folded_conv_keeps_its_attributes(solution: Any) -> dict[str, Any]:
    """The folded Conv carries C's attributes exactly, compared byte for byte as a multiset: a Conv that spells out
    kernel_shape and every attribute at its default value (pads 0, strides and dilations 1, group 1, auto_pad NOTSET)
    and a Conv with no attribute at all (nothing may be added), each in a Conv-BN-activation block, and a grouped, dilated Conv1d with its attributes in an
    unusual order followed by two BNs (the attributes survive two folds). Each folds numerically right whatever
    happens to those attributes."""
    rng = np.random.default_rng(60)
    params = ["scale", "bias", "mean", "var"]
    defaults = dict(kernel_shape=[3, 3], pads=[0, 0, 0, 0], strides=[1, 1], dilations=[1, 1], group=1, auto_pad="NOTSET")
    inits = conv_weights(rng, "c", 6, 3, 3) + bn_weights(rng, "bn", 6)
    spelled_out = [
        helper.make_node("Conv", ["x", "c.W", "c.B"], ["c_out"], name="c", **defaults),
        bn("bn", "c_out", "n"),
        helper.make_node("Relu", ["n"], ["y"]),
    ]
    bare_inits = conv_weights(rng, "d", 5, 3, 1, bias=False) + bn_weights(rng, "bn", 5)
    bare = [helper.make_node("Conv", ["x", "d.W"], ["d_out"], name="d"), bn("bn", "d_out", "n"), helper.make_node("Sigmoid", ["n"], ["y"])]
    w1 = const("e.W", rng.normal(0, 0.4, size=(8, 2, 3)))
    inits1 = [w1, const("e.B", rng.normal(0, 0.2, size=8))] + bn_weights(rng, "p", 8) + bn_weights(rng, "q", 8)
    conv1d = helper.make_node("Conv", ["x", "e.W", "e.B"], ["e_out"], name="e")
    # An order no exporter writes: the attributes compare as a multiset, so keeping this order is not required.
    for key, value in (("group", 2), ("strides", [2]), ("kernel_shape", [3]), ("pads", [2, 1]), ("dilations", [2])):
        conv1d.attribute.append(helper.make_attribute(key, value))
    chain = [
        conv1d,
        helper.make_node("BatchNormalization", ["e_out", *[f"p.{p}" for p in params]], ["p_out"], epsilon=1e-3),
        helper.make_node("BatchNormalization", ["p_out", *[f"q.{p}" for p in params]], ["y"], name="q"),
    ]
    return {
        "every attribute spelled out": apply_pass(solution, graph_model(spelled_out, [("x", [1, 3, 7, 7])], ["y"], inits), seed=60),
        "no attribute at all": apply_pass(solution, graph_model(bare, [("x", [2, 3, 5, 5])], ["y"], bare_inits), seed=61),
        "grouped dilated Conv1d, two BNs": apply_pass(solution, graph_model(chain, [("x", [1, 4, 15])], ["y"], inits1), seed=62),
    }


# A pass whose search for a free name never moves on to the next candidate loops forever the
# first time two candidates in a row are taken: the short limit makes that a quick failure.
@probe(category="folding", check="graph_matches", weight=2, hints=["keep-attributes", "shared-weights"], timeout=10)
def names_already_in_use(solution: Any) -> dict[str, Any]:
    """New names must skip every name in use, however many candidates are taken: three unnamed Convs that share one
    weight, each followed by its own BN (every fold after the first finds the names it would derive from the weight and
    from the Conv taken, the third finds two of them taken), a model whose other tensors and nodes already carry the
    names a pass would derive from the Conv, its weight and the BN's output, and one where a sparse initializer, a Loop
    body's unread iteration-count input, initializers, a sparse initializer, a value_info entry and an output of a Loop
    body or an If branch, and a node inside a branch carry them; one where a SequenceMap body and the graph attribute of
    another domain's node carry them, and one where training_info's algorithm does."""
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
    # The same names, defined where no node of the main graph mentions them: a sparse initializer, and inside a Loop
    # body and an If branch their own iteration-count input, initializers, sparse initializer, value_info, an output
    # and a node's name, none of them read there.
    vi = helper.make_tensor_value_info
    sparse = helper.make_sparse_tensor(
        helper.make_tensor("c.W_bn_folded", TensorProto.FLOAT, [2], [0.5, -1.0]), helper.make_tensor("", TensorProto.INT64, [2], [1, 6]), [8]
    )
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]), helper.make_node("Relu", ["x"], ["step"])],
        "body",
        [vi("c.W_bn_folded_1", TensorProto.INT64, []), vi("cond_in", TensorProto.BOOL, [])],
        [vi("cond_out", TensorProto.BOOL, []), vi("step", TensorProto.FLOAT, [1, 3, 5, 5]), vi("c.W_folded", TensorProto.FLOAT, [2])],
        [numpy_helper.from_array(np.array([1.0, 2.0], np.float32), "c.W_folded")],
        value_info=[vi("y_bias_bn_folded_1", TensorProto.FLOAT, [4])],
    )
    body.sparse_initializer.append(
        helper.make_sparse_tensor(helper.make_tensor("y_bias", TensorProto.FLOAT, [1], [2.0]), helper.make_tensor("", TensorProto.INT64, [1], [0]), [4])
    )
    then_g = helper.make_graph(
        [helper.make_node("Sigmoid", ["x"], ["then_out"], name="c_bn_folded")], "then", [], [vi("then_out", TensorProto.FLOAT, [1, 3, 5, 5])],
        [numpy_helper.from_array(np.zeros(4, np.float32), "y_bias_bn_folded")],
    )
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["else_out"])], "else", [], [vi("else_out", TensorProto.FLOAT, [1, 3, 5, 5])])
    hidden_inits = conv_weights(rng, "c", 4, 3, 3) + bn_weights(rng, "bn", 4)
    hidden_inits.append(numpy_helper.from_array(np.array(2, np.int64), "trips"))
    hidden = graph_model(
        [
            conv("c", "x", "c_out"),
            bn("bn", "c_out", "y"),
            helper.make_node("Loop", ["trips", ""], ["steps", "rows"], body=body),
            helper.make_node("If", ["flag"], ["branch"], then_branch=then_g, else_branch=else_g),
        ],
        [("x", [1, 3, 5, 5]), ("flag", [])], ["y", "steps", "rows", "branch"], hidden_inits, input_types={"flag": TensorProto.BOOL},
    )
    hidden.graph.sparse_initializer.append(sparse)
    # The same names inside a SequenceMap body (a node's output and an initializer, unread), inside the graph attribute
    # of another domain's node (a model-local function that runs it as an If branch), and in training_info.
    pick_branch = onnx.AttributeProto(name="then_branch", ref_attr_name="branch", type=onnx.AttributeProto.GRAPH)
    zeros = helper.make_node("Constant", [], ["E"], value=numpy_helper.from_array(np.zeros(2, np.float32)))
    pick_else = helper.make_graph([zeros], "else", [], [vi("E", TensorProto.FLOAT, [2])])
    pick_if = helper.make_node("If", ["cond"], ["Y"], else_branch=pick_else)
    pick_if.attribute.append(pick_branch)
    pick = helper.make_function("probe.local", "Pick", ["cond"], ["Y"], [pick_if], opset_imports=[helper.make_opsetid("", 17)], attributes=["branch"])
    branch = helper.make_graph(
        [helper.make_node("Identity", ["y_bias_bn_folded"], ["picked"], name="c_bn_folded")], "branch", [], [vi("picked", TensorProto.FLOAT, [2])],
        [numpy_helper.from_array(np.array([1.0, -1.0], np.float32), "y_bias_bn_folded")],
    )
    mapped_names = graph_model(
        [
            conv("c", "x", "c_out"),
            bn("bn", "c_out", "y"),
            *_sequence_map(["x"], [], "m", body_nodes=[helper.make_node("Neg", ["m_elem"], ["c.W_bn_folded"], name="Conv_bn_folded")],
                           body_inits=[numpy_helper.from_array(np.zeros(3, np.float32), "c.W_bn_folded_1")]),
            helper.make_node("Pick", ["flag"], ["picked_out"], domain="probe.local", branch=branch),
        ],
        [("x", [1, 3, 5, 5]), ("flag", [])], ["y", "m", "picked_out"], [*hidden_inits[:-1], _ZERO], functions=[pick],
        input_types={"flag": TensorProto.BOOL},
    )
    in_training = graph_model([conv("c", "x", "c_out"), bn("bn", "c_out", "y")], [("x", [1, 3, 5, 5])], ["y"], hidden_inits[:-1])
    algorithm = helper.make_graph(  # it reads nothing of the main graph: only the names count here
        [helper.make_node("Mul", ["lr", "lr"], ["c.W_bn_folded"]), helper.make_node("Neg", ["c.W_bn_folded"], ["c.W_bn_folded_1"])],
        "algorithm", [], [vi("c.W_bn_folded_1", TensorProto.FLOAT, [])],
        [numpy_helper.from_array(np.array(0.01, np.float32), "lr"), numpy_helper.from_array(np.zeros(4, np.float32), "y_bias_bn_folded")],
    )
    in_training.training_info.add().algorithm.CopyFrom(algorithm)
    return {
        "three folds of one shared weight": apply_pass(solution, graph_model(three, [("x", [1, 3, 5, 5])], ["y"], inits), seed=40),
        "the names a fold would choose are taken": apply_pass(
            solution, graph_model(taken, [("x", [1, 3, 5, 5])], ["y", "y_bias"], taken_inits), seed=41
        ),
        "taken by a sparse initializer and by a subgraph's own definitions": apply_pass(
            solution, hidden, seed=48, fixed={"flag": np.array(True)}
        ),
        "taken inside a SequenceMap body and another domain's node's graph": apply_pass(
            solution, mapped_names, seed=55, fixed={"flag": np.array(True)}
        ),
        "taken in training_info": apply_pass(solution, in_training, seed=56),
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
    """The Conv's raw output also feeds an Add (the BN and the Add named or not) or a Relu placed before the BN, or is
    itself a graph output: the Conv must stay as it is."""
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
    # The other reader comes first in node order, between the Conv and the BN.
    first = [
        conv("c", "x", "c_out"),
        helper.make_node("Relu", ["c_out"], ["r"], name="first"),
        bn("bn", "c_out", "n"),
        helper.make_node("Add", ["n", "r"], ["y"]),
    ]
    return {
        "another reader before the BN": apply_pass(solution, graph_model(first, [("x", [1, 4, 5, 5])], ["y"], inits), seed=51),
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
    """An If node's branches read the Conv's raw output from the enclosing graph, directly or through a nested If, or a
    Scan body reads it: that is a second reader."""
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
    # A Scan body reads it: each step adds the sum of the Conv's whole output to the sum of its own sample.
    scan_body = helper.make_graph(
        [
            helper.make_node("ReduceSum", ["sample"], ["sample_sum"], keepdims=0),
            helper.make_node("ReduceSum", ["c_out"], ["c_sum"], keepdims=0),
            helper.make_node("Add", ["sample_sum", "c_sum"], ["step"]),
        ],
        "scan_body",
        [helper.make_tensor_value_info("sample", TensorProto.FLOAT, [3, 5, 5])],
        [helper.make_tensor_value_info("step", TensorProto.FLOAT, [])],
    )
    scanned = graph_model(
        [*nodes[:2], helper.make_node("Scan", ["x"], ["z"], body=scan_body, num_scan_inputs=1)],
        [("x", [2, 3, 5, 5])], ["y", "z"], inits,
    )
    # A SequenceMap body (opset 17) reads it, at the top level and inside an If branch: any node with a graph attribute
    # holds a subgraph, whatever its op type.
    mapped = graph_model(
        [*nodes[:2], *_sequence_map(["x"], ["c_out"], "z")], [("x", [2, 3, 5, 5])], ["y", "z"], [*inits, _ZERO],
    )
    map_then = helper.make_graph(
        _sequence_map(["x"], ["c_out"], "mapped"), "map_then", [], [helper.make_tensor_value_info("mapped", TensorProto.FLOAT, [])]
    )
    map_else = helper.make_graph(
        [helper.make_node("ReduceSum", ["x"], ["plain"], keepdims=0)], "map_else", [], [helper.make_tensor_value_info("plain", TensorProto.FLOAT, [])]
    )
    mapped_in_if = graph_model(
        [*nodes[:2], helper.make_node("If", ["flag"], ["z"], then_branch=map_then, else_branch=map_else)],
        [("x", [2, 3, 5, 5]), ("flag", [])], ["y", "z"], [*inits, _ZERO], input_types={"flag": TensorProto.BOOL},
    )
    flag = {"flag": np.array(True)}
    return {
        "a branch's node reads it": apply_pass(solution, model, seed=29, fixed=flag),
        "a nested If's branch reads it": apply_pass(solution, nested, seed=32, fixed=flag),
        "a Scan body reads it": apply_pass(solution, scanned, seed=47),
        "a SequenceMap body reads it": apply_pass(solution, mapped, seed=49),
        "a SequenceMap body inside an If branch reads it": apply_pass(solution, mapped_in_if, seed=50, fixed=flag),
    }


_ZERO = numpy_helper.from_array(np.array(0, np.int64), "seq_zero")


def _sequence_map(elements: list[str], reads: list[str], out: str, *, body_inits: list[TensorProto] | None = None,
                  body_nodes: list[onnx.NodeProto] | None = None) -> list[onnx.NodeProto]:
    """Nodes that map a SequenceMap body over the sequence of ``elements`` and write the sum of the first result to
    ``out`` (a scalar; needs the ``_ZERO`` initializer). The body sums its element and every tensor of ``reads``,
    tensors of the enclosing graph it reads without listing them as inputs; ``body_nodes`` and ``body_inits`` are added
    to the body as they are."""
    parts = [f"{out}_elem_sum"]
    nodes = [helper.make_node("ReduceSum", [f"{out}_elem"], [parts[0]], keepdims=0)]
    for i, name in enumerate(reads):
        parts.append(f"{out}_read{i}")
        nodes.append(helper.make_node("ReduceSum", [name], [parts[-1]], keepdims=0))
    nodes.append(helper.make_node("Sum", parts, [f"{out}_step"]))
    body = helper.make_graph(
        [*nodes, *(body_nodes or [])], f"{out}_body", [helper.make_tensor_value_info(f"{out}_elem", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info(f"{out}_step", TensorProto.FLOAT, [])], body_inits or [],
    )
    return [
        helper.make_node("SequenceConstruct", elements, [f"{out}_seq"]),
        helper.make_node("SequenceMap", [f"{out}_seq"], [f"{out}_mapped"], body=body),
        helper.make_node("SequenceAt", [f"{out}_mapped", _ZERO.name], [out]),
    ]


@probe(category="untouched", check="graph_matches", weight=2, hints=["leave-the-rest"])
def pairs_inside_subgraphs_stay(solution: Any) -> dict[str, Any]:
    """Conv -> BN pairs inside an If branch, a Loop body and a Scan body, one or two levels down, with the subgraph's own
    parameters or the enclosing graph's, are left as they are: only the main graph's pairs fold (and its own pair does)."""
    rng = np.random.default_rng(42)
    x_shape = [2, 3, 5, 5]

    def out(name: str, shape: list[int] | None) -> onnx.ValueInfoProto:
        return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)

    def pair_nodes(prefix: str, src: str, dst: str, *, bias: bool = True) -> list[onnx.NodeProto]:
        return [conv(prefix, src, f"{prefix}_z", bias=bias), bn(f"{prefix}bn", f"{prefix}_z", dst)]

    def pair_inits(prefix: str, *, bias: bool = True) -> list[TensorProto]:
        return conv_weights(rng, prefix, 4, 3, 3, bias=bias) + bn_weights(rng, f"{prefix}bn", 4)

    main = pair_nodes("c", "x", "y")
    outer = pair_inits("c") + pair_inits("e", bias=False)  # the else branch's pair reads the enclosing graph's parameters
    then_g = helper.make_graph(pair_nodes("t", "x", "t_out"), "then", [], [out("t_out", [2, 4, 5, 5])], pair_inits("t"))
    else_g = helper.make_graph(pair_nodes("e", "x", "e_out", bias=False), "else", [], [out("e_out", [2, 4, 5, 5])])
    branches = graph_model(
        [*main, helper.make_node("If", ["flag"], ["z"], then_branch=then_g, else_branch=else_g)],
        [("x", x_shape), ("flag", [])], ["y", "z"], outer, input_types={"flag": TensorProto.BOOL},
    )

    # A Loop body with a pair; a Scan body with a pair on each sample; a Loop body holding an If whose branches hold pairs.
    bodies_inits = pair_inits("c") + pair_inits("s") + pair_inits("d")
    bodies_inits.append(numpy_helper.from_array(np.array(2, np.int64), "trips"))
    loop_body = helper.make_graph(
        [helper.make_node("Identity", ["l_cond_in"], ["l_cond_out"]), *pair_nodes("l", "x", "l_out")],
        "loop_body",
        [helper.make_tensor_value_info("l_iter", TensorProto.INT64, []), helper.make_tensor_value_info("l_cond_in", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("l_cond_out", TensorProto.BOOL, []), out("l_out", [2, 4, 5, 5])],
        pair_inits("l"),
    )
    scan_body = helper.make_graph(
        [helper.make_node("Unsqueeze", ["sample", "axes"], ["batched"]), *pair_nodes("s", "batched", "s_out")],
        "scan_body",
        [helper.make_tensor_value_info("sample", TensorProto.FLOAT, x_shape[1:])],
        [out("s_out", [1, 4, 5, 5])],
        [numpy_helper.from_array(np.array([0], np.int64), "axes")],
    )
    inner_then = helper.make_graph(pair_nodes("d", "x", "d_out"), "inner_then", [], [out("d_out", [2, 4, 5, 5])])
    inner_else = helper.make_graph(pair_nodes("f", "x", "f_out"), "inner_else", [], [out("f_out", [2, 4, 5, 5])], pair_inits("f"))
    deep_body = helper.make_graph(
        [
            helper.make_node("Identity", ["n_cond_in"], ["n_cond_out"]),
            helper.make_node("If", ["flag"], ["n_out"], then_branch=inner_then, else_branch=inner_else),
        ],
        "deep_body",
        [helper.make_tensor_value_info("n_iter", TensorProto.INT64, []), helper.make_tensor_value_info("n_cond_in", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("n_cond_out", TensorProto.BOOL, []), out("n_out", [2, 4, 5, 5])],
    )
    bodies = graph_model(
        [
            *main,
            helper.make_node("Loop", ["trips", ""], ["loop_out"], body=loop_body),
            helper.make_node("Scan", ["x"], ["scan_out"], body=scan_body, num_scan_inputs=1),
            helper.make_node("Loop", ["trips", ""], ["deep_out"], body=deep_body),
        ],
        [("x", x_shape), ("flag", [])], ["y", "loop_out", "scan_out", "deep_out"], bodies_inits, input_types={"flag": TensorProto.BOOL},
    )
    return {
        "If branches": apply_pass(solution, branches, seed=42, fixed={"flag": np.array(True)}),
        "else branch taken": apply_pass(solution, branches, seed=43, fixed={"flag": np.array(False)}),
        "Loop and Scan bodies": apply_pass(solution, bodies, seed=44, fixed={"flag": np.array(False)}),
    }


# ---------------------------------------------------------------- hygiene


@probe(category="hygiene", check="graph_matches", weight=2, hints=["shared-weights"])
def weight_shared_by_two_convs(solution: Any) -> dict[str, Any]:
    """Two Convs read the same weight initializer; only one is followed by a BN: the other must not change. And two BNs
    read the same parameter initializers (one all-ones scale, one mean): both fold, or one folds and the other, after a
    Relu, stays and still reads them."""
    rng = np.random.default_rng(21)
    inits = conv_weights(rng, "c", 4, 4, 3) + bn_weights(rng, "bn", 4)
    nodes = [
        conv("c", "x", "a"),
        bn("bn", "a", "a_bn"),
        helper.make_node("Conv", ["x", "c.W", "c.B"], ["b"], name="twin", pads=[1, 1, 1, 1]),
        helper.make_node("Concat", ["a_bn", "b"], ["y"], axis=1),
    ]
    shared_inits = conv_weights(rng, "d", 4, 4, 3) + bn_weights(rng, "bn2", 4)
    shared_inits += [const("ones", np.ones(4)), const("mean", rng.normal(0, 0.5, size=4))]

    def shared_bn(x: str, out: str, prefix: str) -> onnx.NodeProto:
        return helper.make_node("BatchNormalization", [x, "ones", f"{prefix}.bias", "mean", f"{prefix}.var"], [out], name=f"{prefix}_n")

    both = [conv("c", "x", "a"), shared_bn("a", "a_bn", "bn"), conv("d", "a_bn", "b"), shared_bn("b", "y", "bn2")]
    one_stays = [conv("c", "x", "a"), shared_bn("a", "a_bn", "bn"), helper.make_node("Relu", ["a_bn"], ["r"]), shared_bn("r", "y", "bn2")]
    return {
        "a weight shared by two Convs": apply_pass(solution, graph_model(nodes, [("x", [2, 4, 6, 6])], ["y"], inits), seed=15),
        "BN parameters shared by two BNs that fold": apply_pass(
            solution, graph_model(both, [("x", [2, 4, 6, 6])], ["y"], inits + shared_inits), seed=52
        ),
        "BN parameters shared with a BN that stays": apply_pass(
            solution, graph_model(one_stays, [("x", [2, 4, 6, 6])], ["y"], inits + shared_inits), seed=53
        ),
    }


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
    needs after the fold (an initializer a subgraph reads is in use), or a SequenceMap body reads the BN's output and
    the pair's own initializers."""
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
    # A SequenceMap body reads the BN's output, the Conv's weight and a BN parameter, which nothing else reads after the
    # fold: a node with a graph attribute reads what its subgraph reads, whatever its op type.
    mapped = graph_model(
        [*nodes[:2], *_sequence_map(["x"], ["n", "c.W", "bn.mean"], "y")], [("x", [2, 3, 5, 5])], ["y"], [*inits, _ZERO],
    )
    return {
        "an If branch reads them": apply_pass(solution, model, seed=37, fixed={"flag": np.array(True)}),
        "a SequenceMap body reads them": apply_pass(solution, mapped, seed=54),
    }


@probe(category="hygiene", check="graph_matches", weight=2, hints=["leave-the-rest", "copy-the-model"])
def everything_else_left_as_it_was(solution: Any) -> dict[str, Any]:
    """What the fold does not own comes back as it was, byte for byte: an exported model's producer, doc strings,
    metadata_props and the value_info of its remaining tensors; unnamed nodes, a node's doc_string and metadata, a Conv
    with an empty bias name that stays, the order of the nodes (a side node first, which a re-sort moves); a model-local
    function, training_info, value_info for some tensors only (none may be added); initializers that training_info binds
    or reads, though no node reads them after the fold. And a second run changes nothing."""
    exported = from_torch(Stem(), (2, 3, 16, 16), seed=45)
    exported.doc_string = "a ResNet stem"
    exported.model_version = 3
    helper.set_model_props(exported, {"author": "probe", "license": "none"})
    exported.graph.doc_string = "stem"
    exported = onnx.shape_inference.infer_shapes(exported)

    rng = np.random.default_rng(46)
    inits = conv_weights(rng, "c", 4, 3, 3) + bn_weights(rng, "bn", 4) + conv_weights(rng, "d", 4, 4, 3, bias=False) + bn_weights(rng, "dbn", 4)
    params = ["bn.scale", "bn.bias", "bn.mean", "bn.var"]
    swish = helper.make_function(
        "probe.local", "Swish", ["X"], ["Y"],
        [helper.make_node("Sigmoid", ["X"], ["s"]), helper.make_node("Mul", ["X", "s"], ["Y"])],
        opset_imports=[helper.make_opsetid("", 17)],
    )
    nodes = [
        helper.make_node("Neg", ["x"], ["side"]),  # first, though only a graph output after y reads it
        helper.make_node("Conv", ["x", "c.W", "c.B"], ["c_out"], pads=[1, 1, 1, 1]),  # unnamed, folds
        helper.make_node("BatchNormalization", ["c_out", *params], ["y1"]),
        helper.make_node("Relu", ["y1"], ["r"], doc_string="the block's activation"),  # unnamed
        helper.make_node("Conv", ["r", "d.W", ""], ["d_out"], name="d", pads=[1, 1, 1, 1]),  # stays: the Add reads d_out
        bn("dbn", "d_out", "n"),
        helper.make_node("Add", ["n", "d_out"], ["s"]),
        helper.make_node("Swish", ["s"], ["y"], domain="probe.local"),
    ]
    nodes[6].metadata_props.add(key="source", value="block.py:7")
    plain = graph_model(nodes, [("x", [1, 3, 6, 6])], ["y", "side"], inits, functions=[swish])
    plain.producer_name, plain.producer_version, plain.domain = "onnx.helper", "1.23", "ai.example.models"
    plain.training_info.add().algorithm.CopyFrom(helper.make_graph([], "algorithm", [], []))
    plain.graph.metadata_props.add(key="origin", value="hand-built")
    plain = onnx.shape_inference.infer_shapes(plain)
    kept = [v for v in plain.graph.value_info if v.name not in ("r", "s")]  # shapes for some tensors only, as exporters write
    del plain.graph.value_info[:]
    plain.graph.value_info.extend(kept)
    # training_info binds the folded pair's weight and a BN parameter and reads its bias: they stay, as they were.
    bound_inits = conv_weights(rng, "c", 4, 3, 3) + bn_weights(rng, "bn", 4)
    bound_nodes = [conv("c", "x", "c_out"), bn("bn", "c_out", "n"), helper.make_node("Relu", ["n"], ["y"])]
    bound = graph_model(bound_nodes, [("x", [1, 3, 6, 6])], ["y"], bound_inits)
    info = bound.training_info.add()
    info.initialization.CopyFrom(helper.make_graph(
        [helper.make_node("Constant", [], ["scale0"], value=numpy_helper.from_array(np.ones(4, np.float32)))], "initialization", [],
        [helper.make_tensor_value_info("scale0", TensorProto.FLOAT, [4])],
    ))
    info.algorithm.CopyFrom(helper.make_graph(
        [helper.make_node("Mul", ["c.W", "decay"], ["W_next"]), helper.make_node("Mul", ["c.B", "decay"], ["B_next"])], "algorithm", [],
        [helper.make_tensor_value_info("W_next", TensorProto.FLOAT, [4, 3, 3, 3]), helper.make_tensor_value_info("B_next", TensorProto.FLOAT, [4])],
        [numpy_helper.from_array(np.array(0.999, np.float32), "decay")],
    ))
    info.initialization_binding.add(key="bn.scale", value="scale0")
    info.update_binding.add(key="c.W", value="W_next")
    return {
        "an exported model's fields and shapes": apply_pass(solution, exported, seed=45, hygiene=True, again=True),
        "the other nodes, functions, training_info": apply_pass(solution, plain, seed=46, hygiene=True, again=True),
        "training_info binds and reads the pair's initializers": apply_pass(solution, bound, seed=57, hygiene=True, again=True),
    }


# ---------------------------------------------------------------- generated models
#
# A seeded generator of valid models over the constructs the statement allows, and four probe
# families built on it. Every model is checked the way the hand-written ones are (apply_pass: node
# counts per op type against the reference's, check_model with full_check, onnxruntime on the
# original against the result, the graph's inputs), and the hygiene family also checks the caller's
# model and a second run of the pass on its own result.

import itertools
import linecache
import sys
import types

# Models per family: about 1 s of a warm reference run each on an idle 2-core machine (the names family runs
# the pass three times per model).
GEN_CASES = {"fold": 60, "stay": 100, "names": 40, "hygiene": 50}

_ONNX_OPSETS = (13, 15, 17)
_PARAMS = ("scale", "bias", "mean", "var")
_CUSTOM = "gen.custom"


def _tensor_names(graph: onnx.GraphProto) -> set[str]:
    """Every tensor name of a graph and of its subgraphs at any depth."""
    names = {v.name for v in (*graph.input, *graph.output, *graph.value_info)}
    names |= {t.name for t in graph.initializer} | {t.values.name for t in graph.sparse_initializer}
    for node in graph.node:
        names.update(node.input)
        names.update(node.output)
        for attr in node.attribute:
            for sub in (*([attr.g] if attr.HasField("g") else []), *attr.graphs):
                names |= _tensor_names(sub)
    names.discard("")
    return names


def _custom_functions() -> list[onnx.FunctionProto]:
    """Ops named like the ONNX ones, in a domain of their own (model-local functions), and a neutral one."""
    std = [helper.make_opsetid("", 17)]
    conv_fn = helper.make_function(
        _CUSTOM, "Conv", ["X", "W", "B"], ["Y"],
        [helper.make_node("Conv", ["X", "W", "B"], ["z"], auto_pad="SAME_UPPER"), helper.make_node("Relu", ["z"], ["Y"])],
        opset_imports=std,
    )
    bn_fn = helper.make_function(
        _CUSTOM, "BatchNormalization", ["X", "s", "b", "m", "v"], ["Y"],
        [helper.make_node("BatchNormalization", ["X", "s", "b", "m", "v"], ["n"]), helper.make_node("Neg", ["n"], ["Y"])],
        opset_imports=std,
    )
    swish = helper.make_function(
        _CUSTOM, "Swish", ["X"], ["Y"],
        [helper.make_node("Sigmoid", ["X"], ["s"]), helper.make_node("Mul", ["X", "s"], ["Y"])],
        opset_imports=std,
    )
    return [conv_fn, bn_fn, swish]


class _Act:
    """An activation: its name, channels and spatial sizes (batch size is the model's)."""

    def __init__(self, name: str, c: int, spatial: tuple[int, ...]) -> None:
        self.name, self.c, self.spatial = name, c, spatial


class _Gen:
    """One random model under construction: a chain of blocks on one activation, plus side nodes."""

    def __init__(self, rng: np.random.Generator, *, dims: int | None = None) -> None:
        self.rng = rng
        self.opset = int(rng.choice(_ONNX_OPSETS))
        self.dims = int(dims or rng.choice([1, 2, 2, 3]))
        self.n = int(rng.integers(1, 3))
        size = (4, 6) if self.dims == 3 else (5, 9)
        spatial = tuple(int(rng.integers(*size)) for _ in range(self.dims))
        self.ids = itertools.count()
        self.nodes: list[onnx.NodeProto] = []
        self.inits: dict[str, TensorProto] = {}
        self.inputs: list[tuple[str, list[int], int]] = []
        self.outputs: list[str] = []
        self.init_outputs: list[str] = []  # initializers that are graph outputs too
        self.fixed: dict[str, np.ndarray] = {}
        self.functions = False
        self.flag: str | None = None
        self.folds = 0  # pairs that must fold, by construction (checked against the reference)
        self.convs: list[tuple[str, str | None, tuple[int, ...]]] = []  # weights and biases, for sharing
        self.bns: dict[int, list[str]] = {}  # channels -> a BN's parameter names, for sharing
        x = self.name("x")
        self.inputs.append((x, [self.n, int(rng.integers(2, 5)), *spatial], TensorProto.FLOAT))
        self.cur = _Act(x, self.inputs[0][1][1], spatial)

    # ------------------------------------------------------------ small parts

    def name(self, stem: str) -> str:
        return f"{stem}{next(self.ids)}"

    def coin(self, p: float = 0.5) -> bool:
        return bool(self.rng.random() < p)

    def pick(self, options: list[Any]) -> Any:
        return options[int(self.rng.integers(len(options)))]

    def init(self, stem: str, array: np.ndarray, *, float_data: bool = False) -> str:
        name = self.name(stem)
        array = np.asarray(array, dtype=array.dtype if array.dtype != np.float64 else np.float32)
        if float_data and array.dtype == np.float32:
            self.inits[name] = helper.make_tensor(name, TensorProto.FLOAT, list(array.shape), array.ravel().tolist())
        else:
            self.inits[name] = numpy_helper.from_array(array, name)
        return name

    def shape(self, act: _Act) -> list[int]:
        return [self.n, act.c, *act.spatial]

    def flag_input(self) -> str:
        if self.flag is None:
            self.flag = self.name("flag")
            self.inputs.append((self.flag, [], TensorProto.BOOL))
            self.fixed[self.flag] = np.array(self.coin())
        return self.flag

    # ------------------------------------------------------------ the Conv and the BatchNormalization

    def conv(
        self,
        *,
        bias: str | None = None,
        transpose: bool = False,
        domain: str = "",
        share: bool = True,
        plain: bool = False,
    ) -> tuple[onnx.NodeProto, _Act]:
        """A Conv on the current activation, not yet appended; bias: "init", "none" or "empty"."""
        rng, cin, d = self.rng, self.cur.c, self.dims
        bias = bias or self.pick(["init", "init", "none", "empty"])
        groups = 1
        if not plain and not transpose and domain == "":
            choices = [1, 1, cin] + ([2] if cin % 2 == 0 else [])
            groups = self.pick(choices)
        cout = groups * int(rng.integers(1, 3)) if groups > 1 else int(rng.integers(1, 7))  # one channel too
        kernel = tuple(int(rng.integers(1, 4)) for _ in range(d)) if not plain else (3,) * d
        attrs: dict[str, Any] = {}
        if transpose:
            w_shape = (cin, cout, *kernel)
            out = tuple(s + k - 1 for s, k in zip(self.cur.spatial, kernel))
            attrs["kernel_shape"] = list(kernel)
        elif domain:
            kernel = (3,) * d
            w_shape = (cout, cin, *kernel)
            out = self.cur.spatial
        else:
            w_shape = (cout, cin // groups, *kernel)
            strides = [int(rng.integers(1, 3)) if not plain and s >= 4 else 1 for s in self.cur.spatial]
            dil = [1] * d
            mode = "pads" if plain else self.pick(["pads", "pads", "SAME_UPPER", "SAME_LOWER", "VALID", "none"])
            if mode in ("pads", "VALID", "none") and not plain and self.coin(0.3):
                dil = [int(rng.integers(1, 3)) for _ in range(d)]
            pads = [int(rng.integers(0, k)) for k in kernel] + [int(rng.integers(0, k)) for k in kernel]
            if plain:
                pads = [1] * (2 * d)
            out_l = []
            for i, s in enumerate(self.cur.spatial):
                eff = dil[i] * (kernel[i] - 1) + 1
                if mode in ("SAME_UPPER", "SAME_LOWER"):
                    o = -(-s // strides[i])
                elif mode == "pads":
                    o = (s + pads[i] + pads[i + d] - eff) // strides[i] + 1
                else:
                    o = (s - eff) // strides[i] + 1
                out_l.append(o)
            if min(out_l) < 2:  # too small a map for the next block: pad to keep the size
                mode, strides, dil, kernel = "SAME_UPPER", [1] * d, [1] * d, (3,) * d
                w_shape = (cout, cin // groups, *kernel)
                out_l = list(self.cur.spatial)
            out = tuple(out_l)
            if mode == "pads":
                attrs["pads"] = pads
            elif mode != "none":
                attrs["auto_pad"] = mode
            if strides != [1] * d or self.coin(0.3):
                attrs["strides"] = strides
            if dil != [1] * d or self.coin(0.2):
                attrs["dilations"] = dil
            if groups > 1 or self.coin(0.2):
                attrs["group"] = groups
            if self.coin(0.5):
                attrs["kernel_shape"] = list(kernel)
        fan_in = int(np.prod(w_shape[1:]))
        w_name = None
        if share and not plain and self.coin(0.3):
            same = [w for w, _, s in self.convs if s == w_shape]
            if same:
                w_name = self.pick(same)
        if w_name is None:
            w_name = self.init("W", rng.normal(0, 1.2 / np.sqrt(fan_in), size=w_shape), float_data=self.coin(0.15))
        b_channels = w_shape[1] * groups if transpose else w_shape[0]
        inputs = [self.cur.name, w_name]
        b_name = None
        if bias == "init":
            b_name = self.init("B", rng.normal(0, 0.3, size=b_channels), float_data=self.coin(0.15))
            inputs.append(b_name)
        elif bias == "empty":
            inputs.append("")
        self.convs.append((w_name, b_name, w_shape))
        op = "ConvTranspose" if transpose else "Conv"
        node = helper.make_node(op, inputs, [self.name("z")], name=self.name("conv") if self.coin(0.6) else "", domain=domain, **attrs)
        return node, _Act(node.output[0], cout, out)

    def bn_params(self, c: int, *, share: bool = True) -> list[str]:
        if share and c in self.bns and self.coin(0.3):
            return self.bns[c]
        rng, fd = self.rng, self.coin(0.15)
        names = [
            self.init("scale", rng.uniform(0.5, 1.5, size=c), float_data=fd),
            self.init("shift", rng.normal(0, 0.3, size=c), float_data=fd),
            self.init("mean", rng.normal(0, 0.5, size=c), float_data=fd),
            self.init("var", rng.uniform(0.05, 1.5, size=c), float_data=fd),
        ]
        self.bns[c] = names
        return names

    def bn(self, x: _Act, *, params: list[str] | None = None, training: bool = False, domain: str = "") -> tuple[onnx.NodeProto, _Act]:
        params = params or self.bn_params(x.c)
        attrs: dict[str, Any] = {}
        if self.coin(0.6):
            attrs["epsilon"] = float(self.pick([1e-5, 1e-4, 1e-3, 1e-2]))
        if self.coin(0.2):
            attrs["momentum"] = 0.9
        out = self.name("n")
        outputs = [out]
        if training:
            if self.opset >= 14:
                attrs["training_mode"] = 1
                outputs += [self.name("rmean"), self.name("rvar")]
            else:
                outputs += [self.name("rmean"), self.name("rvar"), self.name("smean"), self.name("svar")]
        elif self.opset >= 14 and self.coin(0.3):
            attrs["training_mode"] = 0
        node = helper.make_node("BatchNormalization", [x.name, *params], outputs, name=self.name("bn") if self.coin(0.6) else "", domain=domain, **attrs)
        return node, _Act(out, x.c, x.spatial)

    # ------------------------------------------------------------ between the pairs

    def neutral(self) -> None:
        """A node that is not part of any pair: an activation, an empty optional input, another domain's op."""
        kind = self.pick(["Relu", "Clip", "Swish", "Add", "none", "none"])
        x = self.cur
        if kind == "none":
            return
        out = self.name("h")
        if kind == "Relu":
            self.nodes.append(helper.make_node("Relu", [x.name], [out]))
        elif kind == "Clip":  # min left empty: an optional input given as ""
            self.nodes.append(helper.make_node("Clip", [x.name, "", self.init("max", np.array(2.0, np.float32))], [out]))
        elif kind == "Swish":
            self.functions = True
            self.nodes.append(helper.make_node("Swish", [x.name], [out], domain=_CUSTOM))
        else:
            self.nodes.append(helper.make_node("Add", [x.name, self.init("offset", self.rng.normal(0, 0.3, size=(x.c,) + (1,) * self.dims))], [out]))
        self.cur = _Act(out, x.c, x.spatial)

    def subgraph_reader(self, names: list[str], depth: int) -> None:
        """An If or a Loop whose subgraph reads the given outer names, ``depth`` subgraphs down; its output is a graph
        output. Every subgraph returns a scalar (a sum of what it read), so both branches of an If agree in shape."""

        def scalar_graph(nodes: list[onnx.NodeProto], parts: list[str]) -> onnx.GraphProto:
            total = parts[0]
            if len(parts) > 1:
                total = self.name("total")
                nodes.append(helper.make_node("Sum", parts, [total]))
            return helper.make_graph(nodes, self.name("g"), [], [helper.make_tensor_value_info(total, TensorProto.FLOAT, [])])

        def summed(nodes: list[onnx.NodeProto], tensor: str, op: str | None = None) -> str:
            if op is not None:
                t = self.name("t")
                nodes.append(helper.make_node(op, [tensor], [t]))
                tensor = t
            s = self.name("s")
            nodes.append(helper.make_node("ReduceSum", [tensor], [s], keepdims=0))
            return s

        def leaf() -> onnx.GraphProto:
            nodes: list[onnx.NodeProto] = []
            parts = [summed(nodes, n, self.pick(["Relu", "Neg", "Identity"])) for n in names]
            return scalar_graph(nodes, parts)

        last_map = [False]  # whether the last wrap was a SequenceMap: onnxruntime 1.32 cannot inline one nested in another

        def wrap(inner: onnx.GraphProto) -> tuple[list[onnx.NodeProto], str]:
            """Nodes holding ``inner`` (an If with a plain other branch, a Loop of two trips, or at opset 17 a
            SequenceMap over a sequence of one tensor) and their scalar."""
            out = self.name("sub")
            was_mapped, last_map[0] = last_map[0], False
            if self.opset >= 17 and not was_mapped and self.coin(0.5):  # any op with a graph attribute holds a subgraph
                last_map[0] = True
                elem, seq, mapped = self.name("elem"), self.name("seq"), self.name("mapped")
                body = helper.make_graph(
                    list(inner.node), self.name("body"), [helper.make_tensor_value_info(elem, TensorProto.FLOAT, None)], list(inner.output)
                )
                zero = self.init("zero", np.array(0, np.int64))
                return [
                    helper.make_node("SequenceConstruct", [self.inputs[0][0]], [seq]),
                    helper.make_node("SequenceMap", [seq], [mapped], body=body),
                    helper.make_node("SequenceAt", [mapped, zero], [out]),
                ], out
            if self.coin():
                nodes: list[onnx.NodeProto] = []
                other = scalar_graph(nodes, [summed(nodes, self.inputs[0][0], "Sigmoid")])
                branches = (inner, other) if self.coin() else (other, inner)
                return [helper.make_node("If", [self.flag_input()], [out], then_branch=branches[0], else_branch=branches[1])], out
            it, cond_in, cond_out = self.name("iter"), self.name("cond"), self.name("cond")
            body = helper.make_graph(
                [*inner.node, helper.make_node("Identity", [cond_in], [cond_out])],
                self.name("body"),
                [helper.make_tensor_value_info(it, TensorProto.INT64, []), helper.make_tensor_value_info(cond_in, TensorProto.BOOL, [])],
                [helper.make_tensor_value_info(cond_out, TensorProto.BOOL, []), inner.output[0]],
            )
            trips = self.init("trips", np.array(2, np.int64))
            loop = helper.make_node("Loop", [trips, ""], [out], body=body)  # the condition left empty
            total = self.name("s")
            return [loop, helper.make_node("ReduceSum", [out], [total], keepdims=0)], total

        nodes, out = wrap(leaf())
        for _ in range(depth - 1):
            holder = helper.make_graph(nodes, self.name("g"), [], [helper.make_tensor_value_info(out, TensorProto.FLOAT, [])])
            nodes, out = wrap(holder)
        self.nodes += nodes
        self.outputs.append(out)

    # ------------------------------------------------------------ the model

    def model(self) -> onnx.ModelProto:
        if self.cur.name not in self.outputs:
            self.outputs.append(self.cur.name)
        ins = [(n, s) for n, s, _ in self.inputs]
        types = {n: t for n, _, t in self.inputs}
        model = graph_model(
            self.nodes, ins, list(dict.fromkeys(self.outputs)), list(self.inits.values()), opset=self.opset,
            functions=_custom_functions() if self.functions else None, input_types=types,
        )
        for name in dict.fromkeys(self.init_outputs):  # typed here: shape inference leaves them untyped
            if name not in {o.name for o in model.graph.output}:
                t = self.inits[name]
                model.graph.output.append(helper.make_tensor_value_info(name, t.data_type, list(t.dims)))
        return model


# ---------------------------------------------------------------- the four families of models


def _folding_model(rng: np.random.Generator) -> _Gen:
    """Only pairs that fold, in every form the statement allows, with the company they keep."""
    g = _Gen(rng)
    for _ in range(int(rng.integers(1, 4))):
        g.neutral()
        before = g.cur
        conv_node, z = g.conv()
        bn_node, y = g.bn(z)
        g.nodes += [conv_node, bn_node]
        g.folds += 1
        g.cur = y
        if g.coin(0.25):  # a second BN: it follows a Conv once the first pair is folded
            bn2, y2 = g.bn(y)
            g.nodes.append(bn2)
            g.folds += 1
            g.cur = y2
        if g.coin(0.15):  # another Conv reads the same weight (and bias) and stays as it is
            twin = onnx.NodeProto()
            twin.CopyFrom(conv_node)
            twin.input[0] = before.name
            twin.output[0] = g.name("twin")
            twin.name = ""
            g.nodes.append(twin)
            g.outputs.append(twin.output[0])
        if g.coin(0.25):  # the BN's output is a graph output, and the next block reads it too
            g.outputs.append(g.cur.name)
        if g.coin(0.1):  # a parameter of the pair is also a graph output: it stays an initializer
            g.init_outputs.append(g.pick([*conv_node.input[1:], *bn_node.input[1:]]) or conv_node.input[1])
        if g.coin(0.25):  # a subgraph reads the BN's output and initializers the fold replaces
            reads = [g.cur.name] if g.coin(0.7) else []
            reads += [conv_node.input[1]] if g.coin(0.5) else []
            reads += [bn_node.input[int(rng.integers(1, 5))]] if g.coin(0.4) or not reads else []
            g.subgraph_reader(reads, int(rng.integers(1, 3)))
    g.neutral()
    if g.coin(0.25):  # an optional graph input whose default is an initializer that no node reads
        default = g.init("default", rng.normal(size=3))
        g.inputs.append((default, [3], TensorProto.FLOAT))
    return g


_BLOCKS = (  # the reasons a pair must stay, weighted by how many forms each has
    *["reader"] * 3, "second-bn", "graph-output", *["subgraph"] * 2, *["training"] * 2, *["param-input"] * 2,
    *["param-overridable"] * 2, *["param-constant"] * 2, "domain-conv", "domain-bn", "transpose", "not-conv",
)


def _blocked_pair(g: _Gen, reason: str) -> None:
    """A Conv -> BN pair (or what looks like one) that must not fold, for the given reason."""
    rng = g.rng
    if reason == "not-conv":
        op = g.pick(["Relu", "MaxPool", "Add", "input"])
        x = g.cur
        if op == "input" and len(g.nodes) == 0:
            bn_node, y = g.bn(x)
        else:
            op = "Relu" if op == "input" else op
            h = g.name("h")
            if op == "MaxPool":
                g.nodes.append(helper.make_node("MaxPool", [x.name], [h], kernel_shape=[1] * g.dims))
            elif op == "Add":  # a Conv, then an Add: the BN does not read the Conv
                conv_node, z = g.conv(plain=True, share=False)
                offset = g.init("offset", rng.normal(0, 0.3, size=(z.c,) + (1,) * g.dims))
                g.nodes += [conv_node, helper.make_node("Add", [z.name, offset], [h])]
                x = z
            else:
                g.nodes.append(helper.make_node("Relu", [x.name], [h]))
            bn_node, y = g.bn(_Act(h, x.c, x.spatial))
        g.nodes.append(bn_node)
        g.cur = y
        return
    domain = _CUSTOM if reason == "domain-conv" else ""
    if domain:
        g.functions = True
    conv_node, z = g.conv(transpose=reason == "transpose", domain=domain, bias="init" if domain else None, share=False)
    params = g.bn_params(z.c, share=False)
    if reason == "training":
        # onnxruntime 1.32 writes a training-mode BN's unused running statistics over the parameters it may share
        # with another BN (measured: that BN's output off by 1.85, exact once the statistics are graph outputs):
        # no other BN shares a training-mode BN's parameters here.
        g.bns = {c: names for c, names in g.bns.items() if names is not params}
    bn_node, y = g.bn(z, params=params, training=reason == "training", domain=_CUSTOM if reason == "domain-bn" else "")
    if reason == "domain-bn":
        g.functions = True
    g.nodes += [conv_node, bn_node]
    g.cur = y
    if reason == "reader":
        op = g.pick(["Add", "Shape", "Identity", "Mul", "Swish", "Swish"])
        r = g.name("r")
        if op == "Add":  # a skip connection from the raw convolution
            g.nodes.append(helper.make_node("Add", [y.name, z.name], [r]))
            g.cur = _Act(r, y.c, y.spatial)
        elif op == "Mul":
            g.nodes.append(helper.make_node("Mul", [z.name, y.name], [r]))
            g.cur = _Act(r, y.c, y.spatial)
        else:  # an int64 intermediate, a plain copy, another domain's op, that is a graph output
            reader = helper.make_node(op, [z.name], [r], domain=_CUSTOM if op == "Swish" else "")
            if g.coin():  # placed between the Conv and the BN
                g.nodes.insert(len(g.nodes) - 1, reader)
            else:
                g.nodes.append(reader)
            g.functions = g.functions or op == "Swish"
            g.outputs.append(r)
    elif reason == "second-bn":
        bn2, y2 = g.bn(z, params=g.bn_params(z.c, share=False))
        r = g.name("r")
        g.nodes += [bn2, helper.make_node("Add", [y.name, y2.name], [r])]
        g.cur = _Act(r, y.c, y.spatial)
    elif reason == "graph-output":
        g.outputs.append(z.name)
    elif reason == "subgraph":
        g.subgraph_reader([z.name], int(rng.integers(1, 3)))
    elif reason.startswith("param-"):
        conv_slots = [conv_node.input[1]] + ([conv_node.input[2]] if len(conv_node.input) > 2 and conv_node.input[2] else [])
        p = g.pick(conv_slots if g.coin() else params)  # the Conv's parameters as often as the BN's
        g.convs = [c for c in g.convs if p not in c[:2]]  # no later pair may share it
        g.bns = {c: names for c, names in g.bns.items() if p not in names}
        value = numpy_helper.to_array(g.inits[p])
        if reason == "param-overridable":  # an initializer that is also a graph input: a default
            g.inputs.append((p, list(value.shape), TensorProto.FLOAT))
        elif reason == "param-input":
            del g.inits[p]
            g.inputs.append((p, list(value.shape), TensorProto.FLOAT))
            g.fixed[p] = value
        else:
            del g.inits[p]
            g.nodes.insert(0, helper.make_node("Constant", [], [p], value=numpy_helper.from_array(value, p)))


def _untouched_model(rng: np.random.Generator) -> _Gen:
    """Pairs that must stay (at least one, each for one reason) among plain pairs that fold."""
    g = _Gen(rng)
    count = int(rng.integers(1, 4))
    blocked = {int(rng.integers(count))} | {i for i in range(count) if g.coin(0.6)}
    for i in range(count):
        if g.coin(0.4):
            h = g.name("h")
            g.nodes.append(helper.make_node("Relu", [g.cur.name], [h]))
            g.cur = _Act(h, g.cur.c, g.cur.spatial)
        if i in blocked:
            _blocked_pair(g, g.pick(list(_BLOCKS)))
        else:
            conv_node, z = g.conv(plain=True, bias="init", share=False)
            bn_node, y = g.bn(z, params=g.bn_params(z.c, share=False))
            g.nodes += [conv_node, bn_node]
            g.folds += 1
            g.cur = y
    return g


def _plausible_names(conv_node: onnx.NodeProto, bn_node: onnx.NodeProto) -> list[str]:
    """Names a pass might give what a fold creates, derived the ways passes derive them."""
    w, o, z = conv_node.input[1], bn_node.output[0], conv_node.output[0]
    b = conv_node.input[2] if len(conv_node.input) > 2 and conv_node.input[2] else "bias"
    cn, bnn = conv_node.name or "Conv", bn_node.name or "BatchNormalization"
    out = [f"{w}{s}" for s in ("_bn_folded", "_folded", "_fused", "_bnfold", "_bn", "_new", "_scaled", "_1", "_0")]
    out += [f"{b}{s}" for s in ("_bn_folded", "_folded", "_fused", "_bnfold")]
    out += [f"{o}{s}" for s in ("_bias", "_bias_bn_folded", "_W", "_B", "_weight", "_folded")]
    out += [f"{z}_folded", f"{cn}_bn_folded", f"{cn}_folded", f"{cn}_fused", f"{bnn}_folded", "W_bnfold", "B_bnfold", "folded_W", "folded_B"]
    return out


def _names_model(rng: np.random.Generator) -> tuple[onnx.ModelProto, dict[str, np.ndarray], list[str]]:
    """Pairs that fold, and names a pass might pick for what it creates, already in use by tensors of every kind."""
    g = _Gen(rng)
    taken: list[str] = []
    for _ in range(int(rng.integers(1, 4))):
        conv_node, z = g.conv(plain=True, bias=g.pick(["init", "none"]))
        bn_node, y = g.bn(z, params=g.bn_params(z.c, share=False))
        g.nodes += [conv_node, bn_node]
        g.folds += 1
        g.cur = y
        options = _plausible_names(conv_node, bn_node)
        taken += [options[int(i)] for i in rng.choice(len(options), size=int(rng.integers(2, 7)), replace=False)]
    model = g.model()
    return model, g.fixed, list(dict.fromkeys(taken))


_OCCUPANTS = (  # every place a tensor name can live: at the top level, and inside a subgraph one or two levels down
    "node output", "graph output", "unread graph input", "graph input and output", "value_info", "initializer",
    "sparse initializer", "subgraph node output", "subgraph input", "subgraph initializer", "subgraph sparse initializer",
    "subgraph value_info", "subgraph output", "training_info node output", "training_info initializer",
)
_NODE_OCCUPANTS = ("node name", "subgraph node name")


def _occupy(model: onnx.ModelProto, names: list[str], node_names: list[str], rng: np.random.Generator,
            fixed: dict[str, np.ndarray], added: dict[str, int]) -> onnx.ModelProto:
    """A copy of model in which each of ``names`` is used by a tensor in one of the places a name can live
    (``_OCCUPANTS``: a node's output, a graph input or output, a value_info entry, an initializer, a sparse
    initializer, and inside an If branch or a Loop body one or two levels down, unread there: a node's output, the
    body's own input (a Loop's iteration count), an initializer, a sparse initializer, a value_info entry, an output),
    and each of ``node_names`` by a node, at the top level or inside a subgraph. The places go round in an order drawn
    per call, so the first names of a call land in different places. ``added`` counts the top-level nodes added, per
    op type."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    graph = out.graph
    used = _tensor_names(graph) | {n.name for n in graph.node}
    ids = itertools.count()

    def fresh() -> str:
        while True:
            name = f"occ{next(ids)}"
            if name not in used:
                used.add(name)
                return name

    before = len(graph.node)
    opset = next((o.version for o in out.opset_import if o.domain in ("", "ai.onnx")), 0)
    x = graph.input[0].name
    x_shape = [d.dim_value for d in graph.input[0].type.tensor_type.shape.dim]
    flag = None
    trips = None
    zero = None

    def flag_name() -> str:
        nonlocal flag
        if flag is None:
            flag = fresh()
            graph.input.append(helper.make_tensor_value_info(flag, TensorProto.BOOL, []))
            fixed[flag] = np.array(bool(rng.integers(2)))
        return flag

    def trips_name() -> str:
        nonlocal trips
        if trips is None:
            trips = fresh()
            graph.initializer.append(numpy_helper.from_array(np.array(2, np.int64), trips))
        return trips

    def zero_name() -> str:
        nonlocal zero
        if zero is None:
            zero = fresh()
            graph.initializer.append(numpy_helper.from_array(np.array(0, np.int64), zero))
        return zero

    def algorithm() -> onnx.GraphProto:
        """The training algorithm of the model's (first) training_info, added empty if the model has none."""
        if not out.training_info:
            out.training_info.add().algorithm.CopyFrom(helper.make_graph([], fresh(), [], []))
        return out.training_info[0].algorithm

    def like_x(name: str) -> onnx.ValueInfoProto:
        return helper.make_tensor_value_info(name, TensorProto.FLOAT, x_shape)

    def if_node(then_g: onnx.GraphProto, out_name: str) -> onnx.NodeProto:
        other = fresh()
        else_g = helper.make_graph([helper.make_node("Sigmoid", [x], [other])], fresh(), [], [like_x(other)])
        return helper.make_node("If", [flag_name()], [out_name], then_branch=then_g, else_branch=else_g)

    def sparse(name: str) -> onnx.SparseTensorProto:
        values = helper.make_tensor(name, TensorProto.FLOAT, [2], rng.normal(size=2).astype(np.float32).tolist())
        return helper.make_sparse_tensor(values, helper.make_tensor("", TensorProto.INT64, [2], [0, 3]), [4])

    def host(fill: Any, kind: str) -> tuple[list[onnx.NodeProto], str, list[int]]:
        """An If (its then branch), a Loop or a SequenceMap (its body) whose subgraph ``fill`` adds to; fill returns
        how many outputs it added to a body. The nodes, their tensor output and its shape."""
        o = fresh()
        if kind == "If":
            p = fresh()
            then_g = helper.make_graph([helper.make_node("Relu", [x], [p])], fresh(), [], [like_x(p)])
            fill(then_g)
            return [if_node(then_g, o)], o, x_shape
        if kind == "SequenceMap":  # mapped over the sequence [x]; its first result is the tensor output
            elem, s, seq, mapped = fresh(), fresh(), fresh(), fresh()
            body = helper.make_graph([helper.make_node("Relu", [x], [s])], fresh(), [like_x(elem)], [like_x(s)])
            extra = fill(body)
            extra = extra if type(extra) is int else 0
            return [
                helper.make_node("SequenceConstruct", [x], [seq]),
                helper.make_node("SequenceMap", [seq], [mapped, *[fresh() for _ in range(extra)]], body=body),
                helper.make_node("SequenceAt", [mapped, zero_name()], [o]),
            ], o, x_shape
        cond_in, cond_out, s = fresh(), fresh(), fresh()
        body = helper.make_graph(
            [helper.make_node("Identity", [cond_in], [cond_out]), helper.make_node("Relu", [x], [s])],
            fresh(),
            [helper.make_tensor_value_info(fresh(), TensorProto.INT64, []), helper.make_tensor_value_info(cond_in, TensorProto.BOOL, [])],
            [helper.make_tensor_value_info(cond_out, TensorProto.BOOL, []), like_x(s)],
        )
        extra = fill(body)
        extra = extra if type(extra) is int else 0  # only the fills that add outputs return a count
        return [helper.make_node("Loop", [trips_name(), ""], [o, *[fresh() for _ in range(extra)]], body=body)], o, [2, *x_shape]

    def in_subgraph(fill: Any, loop_only: bool) -> None:
        """``fill`` applied to a subgraph one or two levels down; the node holding it is added to the graph."""
        kind = "Loop" if loop_only or rng.integers(2) else "If"
        if opset >= 17 and rng.integers(3) == 0:  # any op with a graph attribute holds a subgraph
            kind = "SequenceMap"
        nodes, o, shape = host(fill, kind)
        if rng.integers(2):  # one level deeper: inside an If branch (the other branch alike) or a Loop body
            outer = fresh()
            if rng.integers(2):
                other, other_out, _ = host(lambda g: 0, kind)
                then_g = helper.make_graph(nodes, fresh(), [], [helper.make_tensor_value_info(o, TensorProto.FLOAT, shape)])
                else_g = helper.make_graph(other, fresh(), [], [helper.make_tensor_value_info(other_out, TensorProto.FLOAT, shape)])
                nodes = [helper.make_node("If", [flag_name()], [outer], then_branch=then_g, else_branch=else_g)]
            else:
                cond_in, cond_out = fresh(), fresh()
                body = helper.make_graph(
                    [helper.make_node("Identity", [cond_in], [cond_out]), *nodes],
                    fresh(),
                    [helper.make_tensor_value_info(fresh(), TensorProto.INT64, []), helper.make_tensor_value_info(cond_in, TensorProto.BOOL, [])],
                    [helper.make_tensor_value_info(cond_out, TensorProto.BOOL, []), helper.make_tensor_value_info(o, TensorProto.FLOAT, shape)],
                )
                nodes = [helper.make_node("Loop", [trips_name(), ""], [outer], body=body)]
                shape = [2, *shape]
            o = outer
        graph.node.extend(nodes)
        new_outputs.append(helper.make_tensor_value_info(o, TensorProto.FLOAT, shape))

    def as_input(g: onnx.GraphProto, name: str) -> int:
        g.input[0].name = name  # the Loop's iteration count, which nothing reads
        return 0

    def as_output(g: onnx.GraphProto, name: str) -> int:
        g.initializer.append(numpy_helper.from_array(rng.normal(size=2).astype(np.float32), name))
        g.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, [2]))  # a scan output of the Loop
        return 1

    fills = {
        "subgraph node output": (lambda g, n: g.node.append(helper.make_node("Neg", [x], [n])), False),
        "subgraph input": (as_input, True),
        "subgraph initializer": (lambda g, n: g.initializer.append(numpy_helper.from_array(rng.normal(size=2).astype(np.float32), n)), False),
        "subgraph sparse initializer": (lambda g, n: g.sparse_initializer.append(sparse(n)), False),
        "subgraph value_info": (lambda g, n: g.value_info.append(helper.make_tensor_value_info(n, TensorProto.FLOAT, [3])), False),
        "subgraph output": (as_output, True),
        "subgraph node name": (lambda g, n: g.node.append(helper.make_node("Neg", [x], [fresh()], name=n)), False),
    }

    new_outputs: list[onnx.ValueInfoProto] = []
    order = [_OCCUPANTS[int(i)] for i in rng.permutation(len(_OCCUPANTS))]
    node_order = [_NODE_OCCUPANTS[int(i)] for i in rng.permutation(len(_NODE_OCCUPANTS))]
    placed = [(name, order[i % len(order)]) for i, name in enumerate(names)]
    placed += [(name, node_order[i % len(node_order)]) for i, name in enumerate(node_names)]
    for name, kind in placed:
        if kind in fills:
            fill, loop_only = fills[kind]
            in_subgraph(lambda g, fill=fill, name=name: fill(g, name), loop_only)
        elif kind in ("node output", "graph output"):
            graph.node.append(helper.make_node("Relu", [x], [name]))
            if kind == "graph output":
                new_outputs.append(like_x(name))
        elif kind in ("unread graph input", "graph input and output"):
            graph.input.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, [2]))
            fixed[name] = rng.normal(size=2).astype(np.float32)
            if kind == "graph input and output":
                new_outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, [2]))
        elif kind == "value_info":
            graph.value_info.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, [3]))
        elif kind == "initializer":
            graph.initializer.append(numpy_helper.from_array(rng.normal(size=2).astype(np.float32), name))
        elif kind == "sparse initializer":
            graph.sparse_initializer.append(sparse(name))
        elif kind == "training_info node output":  # ONNX joins the training algorithm to the main graph
            algorithm().node.append(helper.make_node("Constant", [], [name], value=numpy_helper.from_array(rng.normal(size=2).astype(np.float32))))
        elif kind == "training_info initializer":
            algorithm().initializer.append(numpy_helper.from_array(rng.normal(size=2).astype(np.float32), name))
        else:  # a node's name
            graph.node.append(helper.make_node("Relu", [x], [fresh()], name=name))
    graph.output.extend(new_outputs)
    for node in graph.node[before:]:
        added[node.op_type] = added.get(node.op_type, 0) + 1
    return out


def fresh_solution(solution: Any) -> types.ModuleType:
    """The solution imported again from its source: a new module whose module-level state is as at import.

    A pass may take its names from process-wide state (a module-level counter): learning its names in one call and
    planting them for the next would then never meet the names that next call makes. Every call of the names family
    starts from a fresh import, so each makes the names a first call makes."""
    path = solution.__file__
    source = "".join(linecache.getlines(path))
    if not source:
        with open(path, encoding="utf-8") as fh:
            source = fh.read()
    module = types.ModuleType(solution.__name__)
    module.__file__ = path
    sys.modules[module.__name__] = module
    exec(compile(source, path, "exec", dont_inherit=True), module.__dict__)  # noqa: S102 - the sandbox runs it as the runner does
    return module


def _new_names(solution: Any, model: onnx.ModelProto, calls: int = 1) -> tuple[list[str], list[str]]:
    """The tensor and node names the candidate's pass creates on ``model`` (a copy of it), at most 16 of each: over
    ``calls`` successive calls of one fresh import of the solution."""
    module = fresh_solution(solution)
    tensors: set[str] = set()
    nodes: set[str] = set()
    for _ in range(calls):
        given = onnx.ModelProto()
        given.CopyFrom(model)
        try:
            result = module.fold_batchnorm(given)
        except Exception:  # noqa: BLE001 - apply_pass observes the failure
            break
        if not isinstance(result, onnx.ModelProto):
            break
        tensors |= _tensor_names(result.graph) - _tensor_names(model.graph)
        nodes |= {n.name for n in result.graph.node} - {n.name for n in model.graph.node} - {""}
    return sorted(tensors)[:16], sorted(nodes)[:16]


def _hygiene_model(rng: np.random.Generator) -> _Gen:
    """Plain 2-D pairs that fold, pairs that share their weight and bias, a Conv that shares a folded Conv's weight
    and stays, a BN after a Relu: what a pass that edits the caller's model, or its weights in place, gets wrong."""
    g = _Gen(rng, dims=2)

    def pair(conv_node: onnx.NodeProto | None = None) -> tuple[onnx.NodeProto, _Act]:
        if conv_node is None:
            conv_node, z = g.conv(plain=True, bias="init", share=False)
        else:
            z = _Act(g.name("z"), g.cur.c, g.cur.spatial)
            conv_node = helper.make_node("Conv", [*conv_node.input], [z.name], pads=[1, 1, 1, 1])
            z.c = int(g.inits[conv_node.input[1]].dims[0])
        bn_node, y = g.bn(z, params=g.bn_params(z.c, share=False))
        g.nodes += [conv_node, bn_node]
        g.folds += 1
        return conv_node, y

    for _ in range(int(rng.integers(2, 4))):
        kind = g.pick(["pair", "shared", "twin", "relu"])
        if kind == "relu":
            _blocked_pair(g, "not-conv")
            continue
        conv_node, y = pair()
        if kind == "shared":  # a second pair on the same input reads the same weight and bias: both fold
            _, y2 = pair(conv_node)
            r = g.name("r")
            g.nodes.append(helper.make_node("Add", [y.name, y2.name], [r]))
            y = _Act(r, y.c, y.spatial)
        elif kind == "twin":  # a Conv that reads the same weight and bias and stays as it is
            twin = g.name("twin")
            g.nodes.append(helper.make_node("Conv", [*conv_node.input], [twin], pads=[1, 1, 1, 1]))
            g.outputs.append(twin)
        g.cur = y
    return g


def _seeded(family: int, case: int) -> np.random.Generator:
    return np.random.default_rng([27, family, case])


def _dressed(model: onnx.ModelProto, rng: np.random.Generator) -> onnx.ModelProto:
    """A copy of model carrying what a pass must leave as it was, as exported models do: model- and graph-level
    fields (producer, doc strings, metadata_props, training_info), doc strings and metadata on nodes, a Conv ->
    BatchNormalization pair inside a subgraph (an If branch, a Loop or Scan body, one or two levels down, its
    parameters the subgraph's own initializers or the enclosing graph's), and value_info from shape inference.
    ``rng`` is the model's own second generator: the model's structure is the one drawn without these."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    graph = out.graph
    used = _tensor_names(graph) | {n.name for n in graph.node}
    ids = itertools.count()

    def fresh(stem: str) -> str:
        while True:
            name = f"{stem}_{next(ids)}"
            if name not in used:
                used.add(name)
                return name

    def coin(p: float = 0.5) -> bool:
        return bool(rng.random() < p)

    def pick(options: list[Any]) -> Any:
        return options[int(rng.integers(len(options)))]

    if coin():
        out.producer_name = pick(["pytorch", "tf2onnx", "onnx.helper"])
        out.producer_version = pick(["2.13.0", "1.16.2", "0.1"])
        out.domain = pick(["", "ai.example.models"])
        out.model_version = int(rng.integers(0, 20))
        out.doc_string = pick(["", "a generated model", "exported for inference"])
        helper.set_model_props(out, {f"key{i}": f"value{int(rng.integers(100))}" for i in range(int(rng.integers(0, 3)))})
        graph.doc_string = pick(["", "the main graph"])
        graph.name = pick([graph.name, "main", "torch_jit"])
        if coin(0.3):
            graph.metadata_props.add(key="origin", value="generated")
        if coin(0.25):  # a training algorithm that does nothing: carried along, never run at inference
            info = out.training_info.add()
            info.algorithm.CopyFrom(helper.make_graph([], fresh("algorithm"), [], []))
    for node in graph.node:
        if coin(0.15):
            node.doc_string = pick(["from layer 3", "fused later", "a node's note"])
        if coin(0.05):
            node.metadata_props.add(key="source", value=pick(["model.py:12", "layer4"]))

    if coin(0.4):  # a pair inside a subgraph, which stays
        x = graph.input[0]
        shape = [d.dim_value for d in x.type.tensor_type.shape.dim]
        channels, dims = shape[1], len(shape) - 2
        opset = next((o.version for o in out.opset_import if o.domain in ("", "ai.onnx")), 0)

        def leaf(src: str, body_inits: list[TensorProto]) -> tuple[list[onnx.NodeProto], str]:
            """Conv -> BN on src, summed to a scalar; the parameters in body_inits (the subgraph's) or the graph's."""
            own = coin()
            cout = int(rng.integers(1, 5))

            def param(stem: str, array: np.ndarray) -> str:
                name = fresh(stem)
                (body_inits if own else graph.initializer).append(numpy_helper.from_array(np.asarray(array, np.float32), name))
                return name

            w = param("sub_W", rng.normal(0, 0.3, size=(cout, channels, *[3] * dims)))
            bias = pick(["init", "none", "empty"])
            inputs = [src, w] + ([param("sub_B", rng.normal(0, 0.3, size=cout))] if bias == "init" else [""] if bias == "empty" else [])
            z, n, total = fresh("sub_z"), fresh("sub_n"), fresh("sub_total")
            bn_params = [
                param("sub_scale", rng.uniform(0.5, 1.5, size=cout)),
                param("sub_shift", rng.normal(0, 0.3, size=cout)),
                param("sub_mean", rng.normal(0, 0.5, size=cout)),
                param("sub_var", rng.uniform(0.05, 1.5, size=cout)),
            ]
            return [
                helper.make_node("Conv", inputs, [z], pads=[1] * (2 * dims), name=fresh("sub_conv") if coin() else ""),
                helper.make_node("BatchNormalization", [z, *bn_params], [n], **({"epsilon": 1e-3} if coin() else {})),
                helper.make_node("ReduceSum", [n], [total], keepdims=0),
            ], total

        def scalar_graph(nodes: list[onnx.NodeProto], total: str, inits: list[TensorProto], inputs: list[onnx.ValueInfoProto] | None = None,
                         extra_outputs: list[onnx.ValueInfoProto] | None = None) -> onnx.GraphProto:
            outputs = [*(extra_outputs or []), helper.make_tensor_value_info(total, TensorProto.FLOAT, [])]
            return helper.make_graph(nodes, fresh("sub_graph"), inputs or [], outputs, inits)

        def holder(depth: int, mapped_in: bool = False) -> tuple[list[onnx.NodeProto], str]:
            """Nodes holding a pair ``depth`` subgraphs down, and the scalar they compute."""
            kind = pick(["If", "Loop", "Scan"] if depth == 1 else ["If", "Loop"])
            if opset >= 17 and not mapped_in and coin(0.5):  # any op with a graph attribute holds a subgraph
                kind = "SequenceMap"  # (not directly in another: onnxruntime 1.32 cannot inline a SequenceMap nested so)
            result, total = fresh("sub_out"), fresh("sub_sum")
            if kind == "SequenceMap":  # the body gets x as the one element of a sequence
                body_inits = []
                elem, seq, mapped, zero = fresh("sub_elem"), fresh("sub_seq"), fresh("sub_mapped"), fresh("sub_zero")
                graph.initializer.append(numpy_helper.from_array(np.array(0, np.int64), zero))
                nodes, inner = leaf(elem, body_inits) if depth == 1 else holder(depth - 1, mapped_in=True)
                body = scalar_graph(nodes, inner, body_inits, inputs=[helper.make_tensor_value_info(elem, TensorProto.FLOAT, shape)])
                return [
                    helper.make_node("SequenceConstruct", [x.name], [seq]),
                    helper.make_node("SequenceMap", [seq], [mapped], body=body),
                    helper.make_node("SequenceAt", [mapped, zero], [total]),
                ], total
            if kind == "Scan":  # the body gets one sample of x at a time
                body_inits: list[TensorProto] = []
                sample, batched, axes = fresh("sub_sample"), fresh("sub_batched"), fresh("sub_axes")
                body_inits.append(numpy_helper.from_array(np.array([0], np.int64), axes))
                nodes, inner = leaf(batched, body_inits)
                body = scalar_graph([helper.make_node("Unsqueeze", [sample, axes], [batched]), *nodes], inner, body_inits,
                                    inputs=[helper.make_tensor_value_info(sample, TensorProto.FLOAT, shape[1:])])
                node = helper.make_node("Scan", [x.name], [result], body=body, num_scan_inputs=1)
            else:
                inner_inits: list[TensorProto] = []
                if depth == 1:
                    nodes, inner = leaf(x.name, inner_inits)
                else:
                    nodes, inner = holder(depth - 1)
                inner_graph = scalar_graph(nodes, inner, inner_inits)
                if kind == "If":
                    cond = fresh("sub_cond")
                    graph.initializer.append(numpy_helper.from_array(np.array(coin()), cond))
                    other_inits: list[TensorProto] = []
                    other_nodes, other = leaf(x.name, other_inits)
                    other_graph = scalar_graph(other_nodes, other, other_inits)
                    branches = (inner_graph, other_graph) if coin() else (other_graph, inner_graph)
                    return [helper.make_node("If", [cond], [total], then_branch=branches[0], else_branch=branches[1])], total
                trips, cond_in, cond_out = fresh("sub_trips"), fresh("sub_cond"), fresh("sub_cond")
                graph.initializer.append(numpy_helper.from_array(np.array(int(rng.integers(1, 3)), np.int64), trips))
                body = scalar_graph(
                    [*inner_graph.node, helper.make_node("Identity", [cond_in], [cond_out])], inner, list(inner_graph.initializer),
                    inputs=[helper.make_tensor_value_info(fresh("sub_iter"), TensorProto.INT64, []), helper.make_tensor_value_info(cond_in, TensorProto.BOOL, [])],
                    extra_outputs=[helper.make_tensor_value_info(cond_out, TensorProto.BOOL, [])],
                )
                node = helper.make_node("Loop", [trips, ""], [result], body=body)
            return [node, helper.make_node("ReduceSum", [result], [total], keepdims=0)], total

        nodes, total = holder(int(rng.integers(1, 3)))
        graph.node.extend(nodes)
        graph.output.append(helper.make_tensor_value_info(total, TensorProto.FLOAT, []))

    if coin():  # shapes of the intermediate tensors, as shape inference (and many exporters) write them
        out = onnx.shape_inference.infer_shapes(out)
    return out


def _run_family(solution: Any, family: int, build: Any, cases: int, **kwargs: Any) -> dict[str, Any]:
    out = {}
    for case in range(cases):
        g = build(_seeded(family, case))
        model = _dressed(g.model(), _seeded(10 + family, case))
        out[f"case {case}"] = apply_pass(solution, model, seed=case, fixed=g.fixed, **kwargs)
    return out


@probe(category="folding", check="graph_matches", weight=2, hints=["fold-math", "conv-no-bias", "weight-layout", "keep-attributes", "fold-until-fixpoint"])
def generated_pairs_that_fold(solution: Any) -> dict[str, Any]:
    """Generated models in which every pair folds: Conv1d/2d/3d, grouped, strided, dilated, padded by pads or auto_pad,
    with a bias, without one, or with an empty bias name; epsilon set or not; BNs in a row; shared weights and
    parameters; BN outputs that are graph outputs or read in subgraphs; other domains' ops between the pairs."""
    return _run_family(solution, 1, _folding_model, GEN_CASES["fold"])


@probe(category="untouched", check="graph_matches", weight=2, hints=["single-consumer", "constants-only", "inference-only", "match-producer"])
def generated_pairs_that_stay(solution: Any) -> dict[str, Any]:
    """Generated models with pairs that must not fold, each for one reason (another reader of the Conv's output, in a
    node, a graph output or a subgraph at depth 1 or 2; a training-mode BN; a parameter that is not a constant; another
    domain's op; a ConvTranspose; a BN after another op), among pairs that fold."""
    return _run_family(solution, 2, _untouched_model, GEN_CASES["stay"])


@probe(category="folding", check="graph_matches", weight=2, hints=["keep-attributes", "shared-weights"], timeout=20)
def generated_names_in_use(solution: Any) -> dict[str, Any]:
    """Generated models in which the names a pass may give what it creates are already used by a tensor in every place
    a name can live (a node's output, a graph input or output, a value_info entry, an initializer, a sparse initializer,
    and inside an If branch or a Loop body one or two levels down a node's output, the body's own unread input, an
    initializer, a sparse initializer, a value_info entry, an output) or by a node (top level or in a subgraph),
    including the names this pass itself picks (learned from a fresh import of the solution, over two successive
    calls, and graded on another fresh import, so a module-level counter gives the graded call the names it planted);
    every probe also checks that each name is defined once."""
    out = {}
    for case in range(GEN_CASES["names"]):
        rng = _seeded(3, case)
        model, fixed, plausible = _names_model(rng)
        model = _dressed(model, _seeded(13, case))
        added: dict[str, int] = {}
        model = _occupy(model, plausible, [], rng, fixed, added)
        for calls in (2, 1):  # the names the pass picks (first and second call), then the ones it picks once those are taken
            tensors, nodes = _new_names(solution, model, calls)
            model = _occupy(model, tensors, nodes, rng, fixed, added)
        obs = apply_pass(fresh_solution(solution), model, seed=case, fixed=fixed)  # from a fresh import, as it learned
        if isinstance(obs.get("ops"), dict):  # the nodes that hold the names this pass picked do not count
            ops = {op: n - added.get(op, 0) for op, n in obs["ops"].items()}
            obs["ops"] = {op: n for op, n in ops.items() if n}
        out[f"case {case}"] = obs
    return out


@probe(category="hygiene", check="graph_matches", weight=2, hints=["copy-the-model", "shared-weights"])
def generated_models_hygiene(solution: Any) -> dict[str, Any]:
    """Generated models mixing pairs that fold and pairs that stay: the caller's model is left unchanged, and the pass
    run again on its own result gives a valid model with the same nodes that computes the same outputs."""
    return _run_family(solution, 4, _hygiene_model, GEN_CASES["hygiene"], hygiene=True, again=True)


# ---------------------------------------------------------------- every subgraph form, rarer model forms
#
# Red team round 6 (blind): a subgraph under a GRAPHS attribute (a list of graphs) or under a graph attribute of any
# name, a subgraph's value_info entry for an outer tensor (neither a read nor a definition), the learned names of the
# pass planted where no other probe plants them (a node's name inside a branch, training_info's initialization graph,
# those two subgraph forms), a Conv attribute with a doc_string, the default domain imported as "ai.onnx", and IR 3.

from probe_common import _added_and_kept  # noqa: E402


def _holder_function(op: str, attr: str) -> onnx.FunctionProto:
    """A model-local function whose call carries a subgraph under ``attr`` (a graph or a list of graphs) that its body
    does not run: the node still holds the subgraph, and what the subgraph reads is read (statement, rule 2)."""
    std = [helper.make_opsetid("", 17)]
    return helper.make_function("probe.holder", op, ["A"], ["Y"], [helper.make_node("Identity", ["A"], ["Y"])], opset_imports=std,
                                attributes=[attr])


def _scalar_of(reads: str, out: str, *, planted: tuple[list[str], list[str]] = ([], []),
               value_info: list[onnx.ValueInfoProto] | None = None) -> onnx.GraphProto:
    """A graph that sums ``reads`` (an outer tensor) to the scalar ``out``; ``planted`` tensor names are its own unread
    initializers and planted node names name its own nodes."""
    tensors, node_names = planted
    nodes = [helper.make_node("ReduceSum", [reads], [out], keepdims=0)]
    for i, name in enumerate(node_names):
        nodes.append(helper.make_node("Neg", [reads], [f"{out}_named{i}"], name=name))
    inits = [numpy_helper.from_array(np.full(2, i, np.float32), name) for i, name in enumerate(tensors)]
    return helper.make_graph(nodes, f"{out}_graph", [], [helper.make_tensor_value_info(out, TensorProto.FLOAT, [])], inits,
                             value_info=value_info or [])


def _with_holders(reads: str, *, planted: tuple[list[str], list[str]] = ([], []), which: tuple[str, ...] = ("GRAPHS", "branch")
                  ) -> tuple[list[onnx.NodeProto], list[str], list[onnx.FunctionProto]]:
    """A Conv -> BN pair on x (x: [2, 3, 5, 5], flag: bool), and nodes whose subgraphs read ``reads``: a call whose
    GRAPHS attribute lists two graphs (the second reads it) and a call with a graph attribute named "branch".
    The nodes, the graph outputs and the functions."""
    nodes = [conv("c", "x", "c_out"), bn("bn", "c_out", "y")]
    outputs, functions = ["y"], []
    if "GRAPHS" in which:
        keep = helper.make_node("Keep", ["x"], ["kept"], domain="probe.holder")
        keep.attribute.append(helper.make_attribute("bodies", [_scalar_of("x", "first"), _scalar_of(reads, "second", planted=planted)]))
        nodes.append(keep)
        outputs.append("kept")
        functions.append(_holder_function("Keep", "bodies"))
    if "branch" in which:
        nodes.append(helper.make_node("Hold", ["x"], ["held"], domain="probe.holder", branch=_scalar_of(reads, "branch_sum", planted=planted)))
        outputs.append("held")
        functions.append(_holder_function("Hold", "branch"))
    return nodes, outputs, functions


def _holder_model(nodes: list[onnx.NodeProto], outputs: list[str], functions: list[onnx.FunctionProto],
                  inits: list[TensorProto]) -> onnx.ModelProto:
    return graph_model(nodes, [("x", [2, 3, 5, 5]), ("flag", [])], outputs, inits, functions=functions, input_types={"flag": TensorProto.BOOL})


@probe(category="untouched", check="graph_matches", weight=2, hints=["single-consumer", "constants-only"])
def readers_in_every_subgraph_form(solution: Any) -> dict[str, Any]:
    """The Conv's output is read inside a graph of a GRAPHS attribute (a list of graphs: the second one reads it), inside
    a graph attribute named neither then_branch, else_branch nor body (both on model-local function calls), and inside an
    If branch that also has a value_info entry for it (an annotation, not a definition): each is a second reader. And an
    IR-3 model, where every initializer is also a graph input: nothing is a constant, nothing folds."""
    rng = np.random.default_rng(70)
    inits = conv_weights(rng, "c", 4, 3, 3) + bn_weights(rng, "bn", 4)
    flag = {"flag": np.array(True)}
    graphs_nodes, graphs_out, graphs_fn = _with_holders("c_out", which=("GRAPHS",))
    branch_nodes, branch_out, branch_fn = _with_holders("c_out", which=("branch",))
    annotated = helper.make_tensor_value_info("c_out", TensorProto.FLOAT, [2, 4, 5, 5])
    then_g = _scalar_of("c_out", "then_sum", value_info=[annotated])
    else_g = _scalar_of("x", "else_sum")
    if_nodes = [conv("c", "x", "c_out"), bn("bn", "c_out", "y"), helper.make_node("If", ["flag"], ["z"], then_branch=then_g, else_branch=else_g)]
    # IR 3 (opset 9): an initializer had to be a graph input too, so each is a default a caller may override.
    old_inits = conv_weights(rng, "c", 4, 3, 3) + bn_weights(rng, "bn", 4)
    old = helper.make_graph(
        [conv("c", "x", "c_out"), bn("bn", "c_out", "n"), helper.make_node("Relu", ["n"], ["y"])], "old",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 5, 5]),
         *[helper.make_tensor_value_info(t.name, TensorProto.FLOAT, list(t.dims)) for t in old_inits]],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4, 5, 5])], old_inits,
    )
    ir3 = helper.make_model(old, opset_imports=[helper.make_opsetid("", 9)], producer_name="old-exporter")
    ir3.ir_version = 3
    return {
        "a GRAPHS attribute's graph reads it": apply_pass(solution, _holder_model(graphs_nodes, graphs_out, graphs_fn, inits), seed=70, fixed=flag),
        "a graph attribute named branch reads it": apply_pass(
            solution, _holder_model(branch_nodes, branch_out, branch_fn, inits), seed=71, fixed=flag
        ),
        "a branch reads it and annotates it in value_info": apply_pass(solution, _holder_model(if_nodes, ["y", "z"], [], inits), seed=72, fixed=flag),
        "ir_version 3: every initializer is a graph input": apply_pass(solution, ir3, seed=73),
    }


@probe(category="folding", check="graph_matches", weight=2, hints=["single-consumer", "keep-attributes", "inference-only"])
def folds_in_rarer_model_forms(solution: Any) -> dict[str, Any]:
    """Pairs that fold in forms exporters rarely write: an If branch annotates the Conv's output in its value_info but
    reads only x (an annotation is not a read), a Conv attribute carrying its own doc_string (copied as it is), and a
    model that imports the default domain under its alias "ai.onnx", at opset 17 and, beside a training-form
    BatchNormalization that stays, at opset 13."""
    rng = np.random.default_rng(74)
    flag = {"flag": np.array(True)}
    inits = conv_weights(rng, "c", 4, 3, 3) + bn_weights(rng, "bn", 4)
    annotated = helper.make_tensor_value_info("c_out", TensorProto.FLOAT, [2, 4, 5, 5])
    if_nodes = [
        conv("c", "x", "c_out"), bn("bn", "c_out", "y"),
        helper.make_node(
            "If", ["flag"], ["z"], then_branch=_scalar_of("x", "then_sum", value_info=[annotated]), else_branch=_scalar_of("x", "else_sum")
        ),
    ]
    documented = helper.make_node("Conv", ["x", "c.W", "c.B"], ["c_out"], name="c", kernel_shape=[3, 3])
    pads = helper.make_attribute("pads", [1, 1, 1, 1])
    pads.doc_string = "same padding"
    strides = helper.make_attribute("strides", [1, 1])
    strides.doc_string = "kept at 1"
    documented.attribute.extend([pads, strides])
    doc_nodes = [documented, bn("bn", "c_out", "n"), helper.make_node("Relu", ["n"], ["y"])]

    def aliased(model: onnx.ModelProto) -> onnx.ModelProto:
        for opset in model.opset_import:
            if opset.domain == "":
                opset.domain = "ai.onnx"
        return model

    more = conv_weights(rng, "d", 4, 4, 3) + bn_weights(rng, "dbn", 4)
    old_nodes = [
        conv("c", "x", "c_out"), bn("bn", "c_out", "n"),
        conv("d", "n", "d_out"),
        helper.make_node("BatchNormalization", ["d_out", "dbn.scale", "dbn.bias", "dbn.mean", "dbn.var"], ["y", "rm", "rv", "sm", "sv"], name="dbn"),
    ]
    return {
        "a branch annotates the Conv's output without reading it": apply_pass(
            solution, _holder_model(if_nodes, ["y", "z"], [], inits), seed=74, fixed=flag
        ),
        "a Conv attribute with a doc_string": apply_pass(solution, graph_model(doc_nodes, [("x", [2, 3, 5, 5])], ["y"], inits), seed=75),
        "the default domain imported as ai.onnx": apply_pass(
            solution, aliased(graph_model([conv("c", "x", "c_out"), *doc_nodes[1:]], [("x", [2, 3, 5, 5])], ["y"], inits)), seed=76
        ),
        "ai.onnx at opset 13 with a training-form BN": apply_pass(
            solution, aliased(graph_model(old_nodes, [("x", [2, 3, 5, 5])], ["y"], inits + more, opset=13)), seed=77
        ),
    }


def _learned(solution: Any, model: onnx.ModelProto) -> tuple[list[str], list[str]]:
    """The tensor names the pass creates on ``model`` and the names of the nodes it adds (a name of a node it removed
    included), from a fresh import of the solution: at most 8 of each."""
    module = fresh_solution(solution)
    given = onnx.ModelProto()
    given.CopyFrom(model)
    try:
        result = module.fold_batchnorm(given)
    except Exception:  # noqa: BLE001 - apply_pass observes the failure
        return [], []
    if not isinstance(result, onnx.ModelProto):
        return [], []
    added, _ = _added_and_kept(model, result)
    tensors = sorted(_tensor_names(result.graph) - _tensor_names(model.graph))
    return tensors[:8], sorted({n.name for n in added if n.name})[:8]


@probe(category="folding", check="graph_matches", weight=2, hints=["keep-attributes", "shared-weights"], timeout=10)
def learned_names_taken_in_every_subgraph_form(solution: Any) -> dict[str, Any]:
    """The names the pass gives what it creates (learned on the same model from a fresh import: the new initializers'
    names and the new node's name, that of a node it removes included) are already taken where no other probe puts
    them: by initializers and node names inside a graph of a GRAPHS attribute, and inside a graph attribute named
    branch, by initializers of training_info's initialization graph, and by a node's name inside an If branch."""
    rng = np.random.default_rng(78)
    inits = conv_weights(rng, "c", 4, 3, 3) + bn_weights(rng, "bn", 4)
    flag = {"flag": np.array(True)}

    def holders(planted: tuple[list[str], list[str]], which: str) -> onnx.ModelProto:
        return _holder_model(*_with_holders("x", planted=planted, which=(which,)), inits)

    def in_training(planted: list[str]) -> onnx.ModelProto:
        model = graph_model([conv("c", "x", "c_out"), bn("bn", "c_out", "y")], [("x", [2, 3, 5, 5])], ["y"], inits)
        init_g = helper.make_graph(
            [helper.make_node("Constant", [], ["start"], value=numpy_helper.from_array(np.ones(4, np.float32)))], "initialization", [],
            [helper.make_tensor_value_info("start", TensorProto.FLOAT, [4])],
            [numpy_helper.from_array(np.full(2, i, np.float32), name) for i, name in enumerate(planted)],
        )
        model.training_info.add().initialization.CopyFrom(init_g)
        return model

    def in_branch(node_names: list[str]) -> onnx.ModelProto:
        then_g = _scalar_of("x", "then_sum", planted=([], node_names))
        nodes = [conv("c", "x", "c_out"), bn("bn", "c_out", "y"),
                 helper.make_node("If", ["flag"], ["z"], then_branch=then_g, else_branch=_scalar_of("x", "else_sum"))]
        return _holder_model(nodes, ["y", "z"], [], inits)

    learned = {which: _learned(solution, holders(([], []), which)) for which in ("GRAPHS", "branch")}
    train_tensors, _ = _learned(solution, in_training([]))
    _, branch_nodes = _learned(solution, in_branch([]))
    return {
        "in a GRAPHS attribute's graph": apply_pass(fresh_solution(solution), holders(learned["GRAPHS"], "GRAPHS"), seed=78, fixed=flag),
        "in a graph attribute named branch": apply_pass(fresh_solution(solution), holders(learned["branch"], "branch"), seed=81, fixed=flag),
        "in training_info's initialization graph": apply_pass(fresh_solution(solution), in_training(train_tensors), seed=79),
        "a node's name inside an If branch": apply_pass(fresh_solution(solution), in_branch(branch_nodes), seed=80, fixed=flag),
    }


# ---------------------------------------------------------------- scopes and sharing (red team round 7)
#
# Red team round 7 (blind): initializers read only inside a subgraph of a training_info graph (the clean-up must see the
# read at any depth), names defined there (W' and b' must avoid them), value_info entries of parameters that stay after
# a fold (a shared BN parameter, a shared weight), parameters produced by Identity, Cast or Reshape of an initializer
# (not initializers: rule 3), names of tensors an earlier fold removed (still the original's names: a later fold must
# not reuse them), and model-local functions whose bodies use names of the main graph (a body is a scope of its own: a
# call reads its own inputs only). One hand-built probe for each, and a generated family drawing them all together.


def _training_pair(rng: np.random.Generator, *, bias: bool = True) -> tuple[list[onnx.NodeProto], list[TensorProto]]:
    """Conv -> BN -> Relu on x ([1, 3, 6, 6]) into y: its nodes and initializers (c.W, c.B, bn.scale, ...)."""
    inits = conv_weights(rng, "c", 4, 3, 3, bias=bias) + bn_weights(rng, "bn", 4)
    return [conv("c", "x", "c_out", bias=bias), bn("bn", "c_out", "n"), helper.make_node("Relu", ["n"], ["y"])], inits


def _flag_node(out: str, value: bool = True) -> onnx.NodeProto:
    return helper.make_node("Constant", [], [out], value=numpy_helper.from_array(np.array(value), out))


def _summing_branch(reads: list[str], out: str, *, tensors: list[str] | None = None, extra: list[onnx.NodeProto] | None = None
                    ) -> onnx.GraphProto:
    """A graph that sums every tensor of ``reads`` (outer names) into the scalar ``out``; ``tensors`` are names it defines
    itself (node outputs, unread), ``extra`` more nodes added as they are."""
    parts = [f"{out}_part{i}" for i in range(len(reads))]
    nodes = [helper.make_node("ReduceSum", [r], [p], keepdims=0) for r, p in zip(reads, parts, strict=True)]
    nodes.append(helper.make_node("Sum", parts, [out]) if len(parts) > 1 else helper.make_node("Identity", parts, [out]))
    for i, name in enumerate(tensors or []):
        nodes.append(helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.full(2, i, np.float32))))
    nodes += extra or []
    return helper.make_graph(nodes, f"{out}_graph", [], [helper.make_tensor_value_info(out, TensorProto.FLOAT, [])])


def _nested_reader(reads: list[str], out: str, depth: int, *, then_tensors: list[str] | None = None,
                   loop: bool = False) -> list[onnx.NodeProto]:
    """Nodes (for a training_info graph) computing the scalar ``out`` through an If (or a Loop, ``loop``) ``depth``
    subgraphs down, whose innermost then branch reads ``reads`` and defines ``then_tensors``; the other branches read
    nothing outer. The If's condition is a Constant of the graph that holds it."""
    inner = _summing_branch(reads, f"{out}_d{depth}", tensors=then_tensors)
    for level in range(depth, 0, -1):
        cond = f"{out}_cond{level}"
        result = out if level == 1 else f"{out}_d{level - 1}"
        if loop and level == depth:
            cond_in, cond_out = f"{out}_cin{level}", f"{out}_cout{level}"
            body = helper.make_graph(
                [helper.make_node("Identity", [cond_in], [cond_out]), *inner.node], f"{out}_body{level}",
                [helper.make_tensor_value_info(f"{out}_it{level}", TensorProto.INT64, []),
                 helper.make_tensor_value_info(cond_in, TensorProto.BOOL, [])],
                [helper.make_tensor_value_info(cond_out, TensorProto.BOOL, []), inner.output[0]],
            )
            trips = f"{out}_trips{level}"
            nodes = [
                helper.make_node("Constant", [], [trips], value=numpy_helper.from_array(np.array(1, np.int64), trips)),
                helper.make_node("Loop", [trips, ""], [f"{result}_all"], body=body),
                helper.make_node("ReduceSum", [f"{result}_all"], [result], keepdims=0),
            ]
        else:
            other = helper.make_graph(
                [helper.make_node("Constant", [], [f"{out}_zero{level}"], value=numpy_helper.from_array(np.array(0.0, np.float32)))],
                f"{out}_else{level}", [], [helper.make_tensor_value_info(f"{out}_zero{level}", TensorProto.FLOAT, [])],
            )
            nodes = [_flag_node(cond), helper.make_node("If", [cond], [result], then_branch=inner, else_branch=other)]
        inner = helper.make_graph(nodes, f"{out}_level{level}", [], [helper.make_tensor_value_info(result, TensorProto.FLOAT, [])])
    return list(inner.node)


def _with_training(model: onnx.ModelProto, algorithm: list[onnx.NodeProto], algorithm_out: str,
                   initialization: list[onnx.NodeProto] | None = None, initialization_out: str | None = None) -> onnx.ModelProto:
    info = model.training_info.add()
    info.algorithm.CopyFrom(helper.make_graph(algorithm, "algorithm", [], [helper.make_tensor_value_info(algorithm_out, TensorProto.FLOAT, [])]))
    if initialization:
        info.initialization.CopyFrom(helper.make_graph(
            initialization, "initialization", [], [helper.make_tensor_value_info(initialization_out, TensorProto.FLOAT, [])]
        ))
    return model


@probe(category="hygiene", check="graph_matches", weight=2, hints=["leave-the-rest", "shared-weights"])
def training_info_reads_at_depth(solution: Any) -> dict[str, Any]:
    """training_info reads initializers of the folded pair only from inside subgraphs of its graphs: an If in the
    algorithm graph (one and two levels down), a Loop body in it, an If in the initialization graph. Those initializers
    are in use: they stay, as they were, though no node of the main graph reads them after the fold."""
    cases = {
        "an If in the algorithm reads the BN's scale and the weight": ([("bn.scale", "c.W")], 1, False, "algorithm"),
        "an If two levels down in the algorithm reads the BN's mean": ([("bn.mean",)], 2, False, "algorithm"),
        "a Loop body in the algorithm reads the bias and the variance": ([("c.B", "bn.var")], 1, True, "algorithm"),
        "an If in the initialization graph reads the BN's bias": ([("bn.bias",)], 2, False, "initialization"),
    }
    out = {}
    for i, (label, (reads, depth, loop, where)) in enumerate(cases.items()):
        nodes, inits = _training_pair(np.random.default_rng(90 + i))
        model = graph_model(nodes, [("x", [1, 3, 6, 6])], ["y"], inits)
        deep = _nested_reader(list(reads[0]), "t_out", depth, loop=loop)
        plain = [helper.make_node("Constant", [], ["t_plain"], value=numpy_helper.from_array(np.array(1.0, np.float32)))]
        if where == "algorithm":
            model = _with_training(model, deep, "t_out")
        else:
            model = _with_training(model, plain, "t_plain", deep, "t_out")
        out[label] = apply_pass(solution, model, seed=90 + i, hygiene=True)
    return out


@probe(category="folding", check="graph_matches", weight=2, hints=["keep-attributes", "shared-weights"], timeout=10)
def learned_names_taken_inside_training_info(solution: Any) -> dict[str, Any]:
    """The names the pass gives what it creates (learned on the same model from a fresh import) are already defined
    inside subgraphs of training_info's graphs, where ONNX joins them to the main graph when the model trains: by nodes
    in an If branch of the algorithm graph (one and two levels down), in a Loop body of it, and in an If branch of the
    initialization graph."""
    cases = {
        "an If branch of the algorithm": (1, False, "algorithm"),
        "an If two levels down in the algorithm": (2, False, "algorithm"),
        "a Loop body of the algorithm": (1, True, "algorithm"),
        "an If branch of the initialization graph": (1, False, "initialization"),
    }

    def build(i: int, depth: int, loop: bool, where: str, planted: list[str]) -> onnx.ModelProto:
        rng = np.random.default_rng(95 + i)
        nodes, inits = _training_pair(rng, bias=i % 2 == 0)
        more = conv_weights(rng, "d", 4, 4, 3) + bn_weights(rng, "dbn", 4)  # a second pair: more names to learn
        nodes += [conv("d", "y", "d_out"), bn("dbn", "d_out", "z")]
        model = graph_model(nodes, [("x", [1, 3, 6, 6])], ["z"], inits + more)
        deep = _nested_reader(["c.W"], "t_out", depth, then_tensors=planted, loop=loop)
        plain = [helper.make_node("Constant", [], ["t_plain"], value=numpy_helper.from_array(np.array(1.0, np.float32)))]
        if where == "algorithm":
            return _with_training(model, deep, "t_out")
        return _with_training(model, plain, "t_plain", deep, "t_out")

    out = {}
    for i, (label, (depth, loop, where)) in enumerate(cases.items()):
        tensors, _ = _new_names(solution, build(i, depth, loop, where, []), 1)
        out[label] = apply_pass(fresh_solution(solution), build(i, depth, loop, where, tensors), seed=95 + i)
    return out


@probe(category="hygiene", check="graph_matches", weight=2, hints=["leave-the-rest", "shared-weights"])
def value_info_of_parameters_that_stay(solution: Any) -> dict[str, Any]:
    """The graph's value_info annotates every initializer, as some exporters write it. After a fold, the entries of
    the parameters that stay (BN parameters shared with a BN that stays, a weight and bias shared with a Conv that stays,
    a parameter a subgraph or a graph output reads) are still there, as they were."""
    rng = np.random.default_rng(100)
    inits = conv_weights(rng, "c", 4, 4, 3) + bn_weights(rng, "bn", 4) + bn_weights(rng, "bn2", 4)
    inits += [const("ones", np.ones(4)), const("mean", rng.normal(0, 0.5, size=4))]

    def shared_bn(x: str, out: str, prefix: str) -> onnx.NodeProto:
        return helper.make_node("BatchNormalization", [x, "ones", f"{prefix}.bias", "mean", f"{prefix}.var"], [out], name=f"{prefix}_n")

    def annotated(model: onnx.ModelProto, every: bool) -> onnx.ModelProto:
        """The initializers annotated in value_info, and with ``every`` the other tensors too (from shape inference)."""
        if every:
            model = onnx.shape_inference.infer_shapes(model)
        names = {v.name for v in model.graph.value_info} | {o.name for o in model.graph.output}
        model.graph.value_info.extend(
            helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in model.graph.initializer if t.name not in names
        )
        return model

    x = [("x", [2, 4, 6, 6])]
    one_stays = [conv("c", "x", "a"), shared_bn("a", "a_bn", "bn"), helper.make_node("Relu", ["a_bn"], ["r"]), shared_bn("r", "y", "bn2")]
    twin = [
        conv("c", "x", "a"), bn("bn", "a", "a_bn"),
        helper.make_node("Conv", ["x", "c.W", "c.B"], ["b"], name="twin", pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["a_bn", "b"], ["y"]),
    ]
    then_g = _summing_branch(["bn.var", "c.B"], "then_sum")
    else_g = _summing_branch(["x"], "else_sum")
    read = [conv("c", "x", "a"), bn("bn", "a", "y"), helper.make_node("If", ["flag"], ["z"], then_branch=then_g, else_branch=else_g)]
    read_model = graph_model(read, [*x, ("flag", [])], ["y", "z"], inits, input_types={"flag": TensorProto.BOOL})
    read_model.graph.output.append(helper.make_tensor_value_info("bn.scale", TensorProto.FLOAT, [4]))  # typed: inference leaves it untyped
    flag = {"flag": np.array(True)}
    out = {}
    for every, form in ((False, "initializers annotated"), (True, "every tensor annotated")):
        out[f"BN parameters shared with a BN that stays, {form}"] = apply_pass(
            solution, annotated(graph_model(one_stays, x, ["y"], inits), every), seed=100
        )
        out[f"a weight and bias shared with a Conv that stays, {form}"] = apply_pass(
            solution, annotated(graph_model(twin, x, ["y"], inits), every), seed=101
        )
        read_copy = onnx.ModelProto()
        read_copy.CopyFrom(read_model)
        out[f"parameters a branch reads and a graph output, {form}"] = apply_pass(solution, annotated(read_copy, every), seed=102, fixed=flag)
    return out


@probe(category="untouched", check="graph_matches", weight=2, hints=["constants-only"])
def parameters_behind_identity(solution: Any) -> dict[str, Any]:
    """A parameter produced by a node from an initializer (an Identity, two Identities, a Cast to float, a Reshape) is a
    node's output, not an initializer: the pair stays, though its value is known (rule 3). Beside it, a pair whose
    parameters are initializers folds."""
    cases = {
        "the BN's scale through an Identity": ("bn.scale", ["Identity"]),
        "the Conv's weight through an Identity": ("c.W", ["Identity"]),
        "the Conv's bias through two Identities": ("c.B", ["Identity", "Identity"]),
        "the BN's variance through a Cast": ("bn.var", ["Cast"]),
        "the BN's mean through a Reshape": ("bn.mean", ["Reshape"]),
    }
    out = {}
    for i, (label, (param, ops)) in enumerate(cases.items()):
        rng = np.random.default_rng(105 + i)
        inits = conv_weights(rng, "c", 4, 3, 3) + bn_weights(rng, "bn", 4) + conv_weights(rng, "d", 4, 4, 3) + bn_weights(rng, "dbn", 4)
        inits.append(numpy_helper.from_array(np.array([4], np.int64), "shape4"))
        feeds, src = [], param
        for k, op in enumerate(ops):
            dst = f"{param}_via{k}"
            if op == "Cast":
                feeds.append(helper.make_node("Cast", [src], [dst], to=TensorProto.FLOAT))
            elif op == "Reshape":
                feeds.append(helper.make_node("Reshape", [src, "shape4"], [dst]))
            else:
                feeds.append(helper.make_node("Identity", [src], [dst]))
            src = dst
        pair = [conv("c", "x", "c_out"), bn("bn", "c_out", "n")]
        for node in pair:
            for j, name in enumerate(node.input):
                if name == param:
                    node.input[j] = src
        nodes = [*feeds, *pair, helper.make_node("Relu", ["n"], ["r"]), conv("d", "r", "d_out"), bn("dbn", "d_out", "y")]
        out[label] = apply_pass(solution, graph_model(nodes, [("x", [2, 3, 5, 5])], ["y"], inits), seed=105 + i)
    return out


def _renamed(model: onnx.ModelProto, names: dict[str, str]) -> onnx.ModelProto:
    """A copy of model with the top-level tensors in ``names`` renamed (node inputs and outputs, value_info)."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    for node in out.graph.node:
        for field in (node.input, node.output):
            for j, name in enumerate(field):
                if name in names:
                    field[j] = names[name]
    for v in out.graph.value_info:
        if v.name in names:
            v.name = names[v.name]
    return out


@probe(category="folding", check="graph_matches", weight=2, hints=["shared-weights", "fold-until-fixpoint"], timeout=10)
def names_freed_by_earlier_folds(solution: Any) -> dict[str, Any]:
    """The names the pass gives what it creates (learned from a fresh import, over two calls) are carried by tensors the
    folds remove: the outputs of Convs of pairs that fold and of BNs followed by another BN, each learned name on each
    of them in turn. An earlier fold frees such a name, but it is still one of the original's names: no later fold may
    give it to W' or b'."""
    rng = np.random.default_rng(110)
    inits = conv_weights(rng, "c", 4, 4, 3) + conv_weights(rng, "e", 4, 4, 3, bias=False)
    for k in range(6):
        inits += bn_weights(rng, f"bn{k}", 4)
    nodes = [
        conv("c1", "x", "z1"), bn("bn0", "z1", "y1"),
        conv("c2", "y1", "z2"), bn("bn1", "z2", "y2"),
        conv("c3", "y2", "z3"), bn("bn2", "z3", "t3"), bn("bn3", "t3", "y3"),
        conv("e1", "y3", "z4", bias=False), bn("bn4", "z4", "t4"), bn("bn5", "t4", "y"),
    ]
    for node in nodes:  # c1, c2, c3 share c.W and c.B; e1 reads e.W
        if node.op_type == "Conv":
            node.input[1] = "e.W" if node.name == "e1" else "c.W"
            if len(node.input) > 2:
                node.input[2] = "c.B"
    plain = graph_model(nodes, [("x", [1, 4, 6, 6])], ["y"], inits)
    shaped = onnx.shape_inference.infer_shapes(plain)  # value_info for the removed tensors too (a pass may keep it)
    removed = ["z1", "z2", "z3", "t3", "z4", "t4"]  # in the order the folds remove them, front to back
    out = {}
    for form, model in (("", plain), ("with value_info, ", shaped)):
        tensors = [name for name in _new_names(solution, model, 2)[0] if name not in removed]
        for case in range(max(1, len(tensors))):  # the learned names in turn on the removed tensors: each name on each one
            taken = (tensors[case:] + tensors[:case])[: len(removed)]
            renamed = _renamed(model, dict(zip(removed, taken, strict=False)))
            out[f"{form}assignment {case}"] = apply_pass(fresh_solution(solution), renamed, seed=110 + case)
    return out


def _local_function(name: str, formal_in: str, locals_: list[str]) -> onnx.FunctionProto:
    """A model-local function (domain probe.scope) whose formal input is ``formal_in`` and whose body defines and reads
    the tensors ``locals_`` in a chain: names that may equal tensors of the main graph, in a scope of their own."""
    nodes, src = [], formal_in
    for local in locals_:
        nodes.append(helper.make_node("Neg", [src], [local]))
        src = local
    nodes.append(helper.make_node("Relu", [src], ["Y"]))
    return helper.make_function("probe.scope", name, [formal_in], ["Y"], nodes, opset_imports=[helper.make_opsetid("", 17)])


@probe(category="folding", check="graph_matches", weight=2, hints=["single-consumer"])
def function_bodies_are_their_own_scope(solution: Any) -> dict[str, Any]:
    """Model-local functions whose bodies use the names of the main graph's tensors (the Conv's output as the formal
    input, or as a tensor the body defines and reads; the pair's weight, the BN's output): a call reads only its own
    inputs, so the Conv's only reader is still the BN and the pair folds. A function body holding a Conv -> BN pair of
    the same names stays as it is."""
    rng = np.random.default_rng(115)
    inits = conv_weights(rng, "c", 4, 3, 3) + bn_weights(rng, "bn", 4)
    x = [("x", [2, 3, 5, 5])]
    formal = _local_function("Twice", "c_out", ["bn.scale"])
    after = [conv("c", "x", "c_out"), bn("bn", "c_out", "n"), helper.make_node("Twice", ["n"], ["y"], domain="probe.scope")]
    inner = _local_function("Side", "X", ["c_out", "c.W", "n"])
    before = [helper.make_node("Side", ["x"], ["side"], domain="probe.scope"), conv("c", "x", "c_out"), bn("bn", "c_out", "y")]
    w = helper.make_node("Constant", [], ["c.W"], value=const("c.W", rng.normal(0, 0.4, size=(4, 3, 3, 3))))
    b_params = [
        helper.make_node("Constant", [], [f"bn.{p}"], value=const(f"bn.{p}", v))
        for p, v in (("scale", np.ones(4)), ("bias", np.zeros(4)), ("mean", np.zeros(4)), ("var", np.ones(4)))
    ]
    body_pair = helper.make_function(
        "probe.scope", "Block", ["x"], ["n"],
        [w, *b_params, helper.make_node("Conv", ["x", "c.W"], ["c_out"], pads=[1, 1, 1, 1]),
         helper.make_node("BatchNormalization", ["c_out", "bn.scale", "bn.bias", "bn.mean", "bn.var"], ["n"])],
        opset_imports=[helper.make_opsetid("", 17)],
    )
    block = [conv("c", "x", "c_out"), bn("bn", "c_out", "y"), helper.make_node("Block", ["x"], ["blocked"], domain="probe.scope")]
    return {
        "the formal input has the Conv output's name": apply_pass(solution, graph_model(after, x, ["y"], inits, functions=[formal]), seed=115),
        "the body defines and reads the Conv output's name": apply_pass(
            solution, graph_model(before, x, ["y", "side"], inits, functions=[inner]), seed=116
        ),
        "the body holds a pair of the same names": apply_pass(
            solution, graph_model(block, x, ["y", "blocked"], inits, functions=[body_pair]), seed=117
        ),
    }


SCOPE_CASES = 40


def _scopes_model(rng: np.random.Generator) -> tuple[_Gen, list[str], list[str]]:
    """Blocks drawn from: pairs that fold (some followed by a second BN, so a BN's output is removed too), a pair whose
    BN parameters a later BN (after a Relu) shares and keeps, a pair with a weight another Conv shares and keeps, a pair
    with a parameter produced by an Identity or a Cast of an initializer (it stays). The generator, the tensors the folds
    remove (front to back) and the initializers of pairs that fold (which a training algorithm may read)."""
    g = _Gen(rng)
    removed: list[str] = []
    folded_params: list[str] = []
    for _ in range(int(rng.integers(2, 5))):
        g.neutral()
        kind = g.pick(["pair", "pair", "chain", "shared-bn", "twin", "behind-node"])
        before = g.cur
        conv_node, z = g.conv(share=kind != "behind-node")
        params = g.bn_params(z.c, share=kind not in ("behind-node", "shared-bn"))
        if kind == "behind-node":  # one parameter is an Identity's or a Cast's output: not an initializer, the pair stays
            slots = [conv_node.input[1]] + ([conv_node.input[2]] if len(conv_node.input) > 2 and conv_node.input[2] else []) + params
            p = g.pick(slots)
            via = g.name("via")
            op = g.pick(["Identity", "Identity", "Cast"])
            g.nodes.append(helper.make_node(op, [p], [via], **({"to": TensorProto.FLOAT} if op == "Cast" else {})))
            params = [via if q == p else q for q in params]
            for j, name in enumerate(conv_node.input):
                if j > 0 and name == p:
                    conv_node.input[j] = via
        bn_node, y = g.bn(z, params=params)
        g.nodes += [conv_node, bn_node]
        g.cur = y
        if kind == "behind-node":
            continue
        g.folds += 1
        removed.append(z.name)
        folded_params += [*[n for n in conv_node.input[1:] if n], *params]
        if kind == "chain":  # a second BN: the first BN's output is removed by the second fold
            bn2, y2 = g.bn(y, params=g.bn_params(y.c, share=False))
            g.nodes.append(bn2)
            g.folds += 1
            removed.append(y.name)
            g.cur = y2
        elif kind == "shared-bn":  # a BN after a Relu reads the same parameters and stays
            h = g.name("h")
            g.nodes.append(helper.make_node("Relu", [y.name], [h]))
            bn2, y2 = g.bn(_Act(h, y.c, y.spatial), params=params)
            g.nodes.append(bn2)
            g.cur = y2
        elif kind == "twin":  # another Conv reads the same weight (and bias) and stays
            twin = onnx.NodeProto()
            twin.CopyFrom(conv_node)
            twin.input[0] = before.name
            twin.output[0] = g.name("twin")
            twin.name = ""
            g.nodes.append(twin)
            g.outputs.append(twin.output[0])
    g.neutral()
    return g, removed, list(dict.fromkeys(folded_params))


def _scope_function(formal_in: str, locals_: list[str]) -> onnx.FunctionProto:
    nodes, src = [], formal_in
    for local in locals_:
        nodes.append(helper.make_node("Neg", [src], [local]))
        src = local
    nodes.append(helper.make_node("Sigmoid", [src], ["Y"]))
    return helper.make_function("gen.scope", "Echo", [formal_in], ["Y"], nodes, opset_imports=[helper.make_opsetid("", 17)])


@probe(category="hygiene", check="graph_matches", weight=2, hints=["leave-the-rest", "shared-weights", "constants-only"], timeout=20)
def generated_scopes_and_sharing(solution: Any) -> dict[str, Any]:
    """Generated models mixing pairs that fold with: BN parameters and weights shared with nodes that stay, every
    initializer annotated in value_info; parameters produced by an Identity or a Cast of an initializer; training_info
    whose algorithm (and initialization) graph reads the folded pairs' initializers from inside an If or a Loop one or
    two levels down; an unread sparse initializer; a model-local function whose body uses the names of main-graph tensors (the Conv's output as its
    formal input); and the names the pass picks (learned from a fresh import) planted on the tensors the folds remove
    and inside training_info's subgraphs."""
    out = {}
    for case in range(SCOPE_CASES):
        rng = _seeded(7, case)
        g, removed, folded_params = _scopes_model(rng)
        model = g.model()
        if g.coin(0.6):  # value_info for the intermediate tensors and for every initializer
            model = onnx.shape_inference.infer_shapes(model)
            have = {v.name for v in model.graph.value_info} | {o.name for o in model.graph.output}
            model.graph.value_info.extend(
                helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in model.graph.initializer if t.name not in have
            )
        if g.coin(0.3):  # a sparse initializer nothing reads: it stays as it is
            name = g.name("sparse")
            values = helper.make_tensor(name, TensorProto.FLOAT, [2], rng.normal(size=2).astype(np.float32).tolist())
            model.graph.sparse_initializer.append(helper.make_sparse_tensor(values, helper.make_tensor("", TensorProto.INT64, [2], [1, 4]), [6]))
        echo = g.name("echo")
        outer = [n for n in (*folded_params, *removed[1:]) if n]
        body = [outer[int(i)] for i in rng.choice(len(outer), size=min(2, len(outer)), replace=False)] if outer else []
        called = bool(removed) and g.coin(0.6)

        def calling(m: onnx.ModelProto, renames: dict[str, str], called: bool = called, body: list[str] = body,
                    echo: str = echo, removed: list[str] = removed, g: _Gen = g) -> onnx.ModelProto:
            """m with a call of a function whose formal input has the name of the first tensor a fold removes (and
            whose body defines names of the main graph's tensors), on the last activation, as a graph output."""
            m = _renamed(m, renames)
            if not called:
                return m
            m.functions.append(_scope_function(renames.get(removed[0], removed[0]), [renames.get(n, n) for n in body]))
            m.opset_import.append(helper.make_opsetid("gen.scope", 1))
            m.graph.node.append(helper.make_node("Echo", [g.cur.name], [echo], domain="gen.scope"))
            m.graph.output.append(helper.make_tensor_value_info(echo, TensorProto.FLOAT, g.shape(g.cur)))
            return m
        reads = [folded_params[int(i)] for i in rng.choice(len(folded_params), size=min(2, len(folded_params)), replace=False)]
        depth, loop = int(rng.integers(1, 3)), g.coin(0.3)
        where = g.pick(["none", "algorithm", "algorithm", "initialization"]) if reads else "none"

        def trained(m: onnx.ModelProto, planted: list[str], where: str = where, reads: list[str] = reads,
                    depth: int = depth, loop: bool = loop) -> onnx.ModelProto:
            if where == "none":
                return m
            copy = onnx.ModelProto()
            copy.CopyFrom(m)
            deep = _nested_reader(reads, "train_out", depth, then_tensors=planted, loop=loop)
            if where == "algorithm":
                return _with_training(copy, deep, "train_out")
            plain = [helper.make_node("Constant", [], ["train_plain"], value=numpy_helper.from_array(np.array(1.0, np.float32)))]
            return _with_training(copy, plain, "train_plain", deep, "train_out")

        tensors, _ = _new_names(solution, trained(calling(model, {}), []), 1)
        order = [tensors[int(i)] for i in rng.permutation(len(tensors))]
        on_removed = [n for n in order if n not in removed][: len(removed)]
        graded = trained(calling(model, dict(zip(removed, on_removed, strict=False))), [n for n in order if n not in on_removed])
        out[f"case {case}"] = apply_pass(fresh_solution(solution), graded, seed=case, fixed=g.fixed)
    return out
