"""Reference: fold inference-mode BatchNormalization into the Conv before it.

For y = BN(Conv(x, W, b)) with per-channel scale s = gamma / sqrt(var + eps):

    W' = W * s[:, None, None, ...]      (scale each output channel's filter)
    b' = (b - mean) * s + beta          (b = 0 when the Conv has no bias)

The pass works on a copy, folds one pair at a time until none is left (a
fold can create a new Conv -> BN pair), counts a node whose subgraph (an If
branch, a Loop body) reads the Conv's output as one of its readers, writes
W' and b' as new initializers (a weight may be shared with another Conv),
gives the new Conv the
BatchNormalization's output name, and keeps the nodes in topological order
by putting it where the BatchNormalization was.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

DEFAULT_EPSILON = 1e-5


def _fresh_name(taken: set[str], base: str) -> str:
    name, i = base, 0
    while name in taken:
        i += 1
        name = f"{base}_{i}"
    taken.add(name)
    return name


def _fold_one(graph: onnx.GraphProto, taken: set[str]) -> bool:
    """Fold the first foldable Conv -> BatchNormalization pair; return whether one was found."""
    inits = {t.name: t for t in graph.initializer}
    runtime_inputs = {i.name for i in graph.input}  # an initializer listed as an input can be overridden
    graph_outputs = {o.name for o in graph.output}
    producer = {out: node for node in graph.node for out in node.output}
    consumers: dict[str, int] = {}
    for node in graph.node:
        # A node with a subgraph (If, Loop, Scan) reads whatever its body reads from this scope.
        for name in (*node.input, *_subgraph_reads(node)):
            consumers[name] = consumers.get(name, 0) + 1

    def const(name: str) -> np.ndarray | None:
        if name in inits and name not in runtime_inputs:
            return numpy_helper.to_array(inits[name])
        return None

    for index, bn in enumerate(graph.node):
        if bn.op_type != "BatchNormalization" or bn.domain not in ("", "ai.onnx"):
            continue
        attrs = {a.name: helper.get_attribute_value(a) for a in bn.attribute}
        if attrs.get("training_mode", 0) != 0 or len([o for o in bn.output if o]) != 1:
            continue
        conv = producer.get(bn.input[0])
        if conv is None or conv.op_type != "Conv" or conv.domain not in ("", "ai.onnx"):
            continue
        conv_out = conv.output[0]
        if consumers.get(conv_out, 0) != 1 or conv_out in graph_outputs:
            continue
        w = const(conv.input[1])
        b = const(conv.input[2]) if len(conv.input) > 2 and conv.input[2] else None
        if w is None or (len(conv.input) > 2 and conv.input[2] and b is None):
            continue
        params = [const(name) for name in bn.input[1:5]]
        if any(p is None for p in params):
            continue
        gamma, beta, mean, var = (p.astype(np.float64) for p in params)  # type: ignore[union-attr]
        eps = float(attrs.get("epsilon", DEFAULT_EPSILON))
        scale = gamma / np.sqrt(var + eps)
        w_new = w.astype(np.float64) * scale.reshape((-1,) + (1,) * (w.ndim - 1))
        b_old = np.zeros_like(mean) if b is None else b.astype(np.float64)
        b_new = (b_old - mean) * scale + beta

        w_name = _fresh_name(taken, f"{conv.input[1]}_bn_folded")
        b_name = _fresh_name(taken, f"{bn.output[0]}_bias_bn_folded")
        graph.initializer.extend(
            [
                numpy_helper.from_array(w_new.astype(w.dtype), w_name),
                numpy_helper.from_array(b_new.astype(w.dtype), b_name),
            ]
        )
        folded = helper.make_node(
            "Conv",
            [conv.input[0], w_name, b_name],
            [bn.output[0]],
            name=_fresh_name(taken, (conv.name or "Conv") + "_bn_folded"),
        )
        folded.attribute.extend(conv.attribute)
        nodes = list(graph.node)
        nodes[index] = folded
        nodes.remove(conv)
        del graph.node[:]
        graph.node.extend(nodes)
        stale = [v for v in graph.value_info if v.name == conv_out]  # the tensor between them is gone
        for v in stale:
            graph.value_info.remove(v)
        return True
    return False


def _subgraph_reads(node: onnx.NodeProto) -> set[str]:
    """Names the node's subgraphs (If branches, Loop and Scan bodies) read, their outputs included.

    An over-approximation: names the subgraph defines itself are in it too, but SSA
    forbids a subgraph to reuse an outer name, so they never match the Conv's output.
    """
    names: set[str] = set()
    for attr in node.attribute:
        for sub in (*([attr.g] if attr.HasField("g") else []), *attr.graphs):
            names |= _used_names(sub) | {o.name for o in sub.output}
    return names


def _used_names(graph: onnx.GraphProto) -> set[str]:
    """Every tensor name a node reads, subgraphs (If/Loop bodies) included."""
    used: set[str] = set()
    for node in graph.node:
        used.update(node.input)
        for attr in node.attribute:
            for sub in (*([attr.g] if attr.HasField("g") else []), *attr.graphs):
                used |= _used_names(sub)
    return used


def _all_names(graph: onnx.GraphProto) -> set[str]:
    """Every name in use: tensors of every kind (graph inputs and outputs, value_info,
    initializers, node inputs and outputs) and nodes, in the graph and in its subgraphs."""
    names = {v.name for v in (*graph.input, *graph.output, *graph.value_info)}
    names |= {t.name for t in graph.initializer} | {t.values.name for t in graph.sparse_initializer}
    for node in graph.node:
        names |= {node.name, *node.input, *node.output}
        for attr in node.attribute:
            for sub in (*([attr.g] if attr.HasField("g") else []), *attr.graphs):
                names |= _all_names(sub)
    return names


def _drop_unused_initializers(graph: onnx.GraphProto) -> None:
    """Drop the initializers the folds orphaned; keep any that is used or is also a graph input."""
    used = _used_names(graph) | {o.name for o in graph.output} | {i.name for i in graph.input}
    kept = [t for t in graph.initializer if t.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)


def fold_batchnorm(model: onnx.ModelProto) -> onnx.ModelProto:
    out = onnx.ModelProto()
    out.CopyFrom(model)
    graph = out.graph
    taken = _all_names(graph)  # a new name must be free everywhere, subgraphs included
    folded = False
    while _fold_one(graph, taken):
        folded = True
    if folded:
        _drop_unused_initializers(graph)
    return out


# ---------------------------------------------------------------- training_info
#
# ONNX joins a model's training algorithm to its main graph when the model trains (TrainingInfoProto): the names of
# training_info's graphs share the main graph's, and an initializer that a binding of it names, or that its graphs
# read, is still in use though no node of the main graph reads it. The graph pass above sees the main graph only; this
# wrapper shows it training_info's names (as value_info entries it removes again, which nothing above reads) and puts
# back the initializers training_info uses that the clean-up dropped.

_fold_main_graph = fold_batchnorm


def _training_info_uses(model: onnx.ModelProto) -> tuple[set[str], set[str]]:
    """The initializers training_info uses (binding keys, what its graphs read) and every name it mentions."""
    reads: set[str] = set()
    names: set[str] = set()
    for info in model.training_info:
        for binding in (*info.initialization_binding, *info.update_binding):
            reads.add(binding.key)
            names |= {binding.key, binding.value}
        for sub in (info.initialization, info.algorithm):
            reads |= _used_names(sub)
            names |= _all_names(sub)
    return reads, names - {""}


def fold_batchnorm(model: onnx.ModelProto) -> onnx.ModelProto:
    """The pass above (``_fold_main_graph``), with training_info taken into account."""
    reads, names = _training_info_uses(model)
    if not reads and not names:
        return _fold_main_graph(model)
    shown = onnx.ModelProto()
    shown.CopyFrom(model)
    marks = [onnx.ValueInfoProto(name=name) for name in sorted(names)]
    shown.graph.value_info.extend(marks)
    out = _fold_main_graph(shown)
    marked = {m.SerializeToString() for m in marks}
    kept = [v for v in out.graph.value_info if v.SerializeToString() not in marked]
    del out.graph.value_info[:]
    out.graph.value_info.extend(kept)
    have = {t.name for t in out.graph.initializer}
    out.graph.initializer.extend(t for t in model.graph.initializer if t.name in reads and t.name not in have)
    return out
