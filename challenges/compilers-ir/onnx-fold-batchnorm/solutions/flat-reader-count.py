"""Counts the Conv output's readers over the top-level nodes' inputs only.

Everything else is right. The mistake is in rule 2: a node with a subgraph
(an If's branches, a Loop's body) can read a tensor of the enclosing graph
without listing it among its inputs. Counting ``node.input`` alone misses
that reader, so the pass folds the pair and the branch is left reading a
tensor nobody produces any more.
"""

from __future__ import annotations

import copy

import numpy as np
import onnx
from onnx import helper, numpy_helper

STANDARD = ("", "ai.onnx")


def _reads(graph: onnx.GraphProto) -> list[str]:
    """Every name the graph's nodes read."""
    return [name for node in graph.node for name in node.input]


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


def _fold_one(g: onnx.GraphProto, counter: list[int]) -> bool:
    inits = {t.name: t for t in g.initializer}
    overridable = {i.name for i in g.input}
    made_by = {o: n for n in g.node for o in n.output}
    readers: dict[str, int] = {}
    for name in _reads(g):
        readers[name] = readers.get(name, 0) + 1
    outputs = {o.name for o in g.output}

    def const(name: str) -> np.ndarray | None:
        if name in inits and name not in overridable:
            return numpy_helper.to_array(inits[name]).astype(np.float64)
        return None

    for pos, b in enumerate(g.node):
        if b.op_type != "BatchNormalization" or b.domain not in STANDARD:
            continue
        if any(a.name == "training_mode" and a.i != 0 for a in b.attribute) or len(b.output) != 1:
            continue
        c = made_by.get(b.input[0])
        if c is None or c.op_type != "Conv" or c.domain not in STANDARD:
            continue
        z = c.output[0]
        if readers.get(z, 0) != 1 or z in outputs:
            continue
        w = const(c.input[1])
        has_bias = len(c.input) > 2 and c.input[2] != ""
        bias = const(c.input[2]) if has_bias else None
        gamma, beta, mean, var = (const(n) for n in b.input[1:5])
        if w is None or (has_bias and bias is None) or any(p is None for p in (gamma, beta, mean, var)):
            continue
        eps = 1e-5
        for a in b.attribute:
            if a.name == "epsilon":
                eps = helper.get_attribute_value(a)
        s = gamma / np.sqrt(var + eps)
        w2 = w * s.reshape((-1,) + (1,) * (w.ndim - 1))
        b2 = ((bias if bias is not None else 0.0) - mean) * s + beta
        counter[0] += 1
        taken = _all_names(g)  # a new name must be free everywhere, subgraphs included
        while {f"folded_W_{counter[0]}", f"folded_B_{counter[0]}", f"{b.output[0]}_folded_{counter[0]}"} & taken:
            counter[0] += 1
        wn, bn = f"folded_W_{counter[0]}", f"folded_B_{counter[0]}"
        dtype = numpy_helper.to_array(inits[c.input[1]]).dtype
        g.initializer.extend([numpy_helper.from_array(w2.astype(dtype), wn), numpy_helper.from_array(b2.astype(dtype), bn)])
        new = helper.make_node("Conv", [c.input[0], wn, bn], [b.output[0]], name=f"{b.output[0]}_folded_{counter[0]}")
        new.attribute.extend(c.attribute)
        nodes = [n for n in g.node]
        nodes[pos] = new
        nodes.remove(c)
        del g.node[:]
        g.node.extend(nodes)
        return True
    return False


def fold_batchnorm(model: onnx.ModelProto) -> onnx.ModelProto:
    out = copy.deepcopy(model)
    counter = [0]
    while _fold_one(out.graph, counter):
        pass
    return out
