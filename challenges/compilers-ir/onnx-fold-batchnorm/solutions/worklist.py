"""Right (alternative): a worklist pass, not the reference's restart-from-scratch loop.

Approach, differing from the reference in each design choice:
- the copy is made with ``copy.deepcopy``;
- one scan of the main graph collects, for every tensor name, how many times it is
  read (node inputs, plus every name used anywhere inside a node's subgraphs, at
  any depth, plus graph outputs), and which node produces it;
- the nodes are walked once in order; when a BatchNormalization folds, the new
  Conv takes the *Conv's* place in the list (not the BN's), the producer map is
  updated, so a BN further down that reads the new Conv is folded in the same walk
  (chains of any length);
- the arithmetic is done in float32 with ``np.einsum``;
- the new node reuses the BatchNormalization's node name (free once the BN is
  gone) when that name is not empty and used by no other node at any depth;
  otherwise it stays unnamed;
- W' and b' are named ``bnfold/<k>/W`` and ``bnfold/<k>/B`` with k counting up
  from 0 until both are free, checked against every name of the model, subgraphs
  and node names included (training_info's too, since the red team round 5 fix);
- orphaned initializers are kept (the statement allows keeping them).
"""

from __future__ import annotations

import copy
from collections import Counter

import numpy as np
import onnx
from onnx import helper, numpy_helper

_DEFAULT_DOMAINS = ("", "ai.onnx")


def _subgraphs(node: onnx.NodeProto):
    for attr in node.attribute:
        if attr.type == onnx.AttributeProto.GRAPH:
            yield attr.g
        elif attr.type == onnx.AttributeProto.GRAPHS:
            yield from attr.graphs


def _names_used_inside(graph: onnx.GraphProto, acc: set[str]) -> set[str]:
    for node in graph.node:
        acc.update(node.input)
        for sub in _subgraphs(node):
            _names_used_inside(sub, acc)
    acc.update(o.name for o in graph.output)
    return acc


def _every_name(graph: onnx.GraphProto, acc: set[str], node_names: Counter) -> None:
    for field in (graph.input, graph.output, graph.value_info):
        acc.update(v.name for v in field)
    acc.update(t.name for t in graph.initializer)
    for sp in graph.sparse_initializer:
        acc.add(sp.values.name)
        acc.add(sp.indices.name)
    for node in graph.node:
        acc.update(node.input)
        acc.update(node.output)
        node_names[node.name] += 1
        for sub in _subgraphs(node):
            _every_name(sub, acc, node_names)


def fold_batchnorm(model: onnx.ModelProto) -> onnx.ModelProto:
    out = copy.deepcopy(model)
    g = out.graph

    tensor_names: set[str] = set()
    node_names: Counter = Counter()
    _every_name(g, tensor_names, node_names)
    for f in model.functions:  # be generous: avoid names of model-local functions too
        tensor_names.update(f.input)
        tensor_names.update(f.output)
        for n in f.node:
            tensor_names.update(n.input)
            tensor_names.update(n.output)
    for info in model.training_info:  # joined to the main graph for training: its names are taken too
        _every_name(info.initialization, tensor_names, Counter())
        _every_name(info.algorithm, tensor_names, Counter())
        tensor_names.update(n for b in (*info.initialization_binding, *info.update_binding) for n in (b.key, b.value))
    taken = tensor_names | set(node_names)

    overridable = {i.name for i in g.input}
    constants = {t.name: t for t in g.initializer if t.name not in overridable}
    reads: dict[str, int] = {}
    for node in g.node:
        names = list(node.input)
        for sub in _subgraphs(node):
            names.extend(_names_used_inside(sub, set()))
        for n in names:
            reads[n] = reads.get(n, 0) + 1
    for o in g.output:
        reads[o.name] = reads.get(o.name, 0) + 1

    nodes = list(g.node)
    producer = {o: i for i, n in enumerate(nodes) for o in n.output if o}
    counter = 0
    changed = False

    i = 0
    while i < len(nodes):
        bn = nodes[i]
        i += 1
        if bn is None or bn.op_type != "BatchNormalization" or bn.domain not in _DEFAULT_DOMAINS:
            continue
        mode = next((a.i for a in bn.attribute if a.name == "training_mode"), 0)
        if mode != 0 or sum(1 for o in bn.output if o) != 1:
            continue
        j = producer.get(bn.input[0])
        if j is None or nodes[j] is None:
            continue
        conv = nodes[j]
        if conv.op_type != "Conv" or conv.domain not in _DEFAULT_DOMAINS:
            continue
        if reads.get(conv.output[0], 0) != 1:  # the BN's read, and nothing else (graph outputs counted)
            continue
        has_bias = len(conv.input) > 2 and conv.input[2] != ""
        needed = [conv.input[1], *([conv.input[2]] if has_bias else []), *bn.input[1:5]]
        if any(n not in constants for n in needed):
            continue

        w = numpy_helper.to_array(constants[conv.input[1]]).astype(np.float32)
        b = numpy_helper.to_array(constants[conv.input[2]]).astype(np.float32) if has_bias else np.zeros(w.shape[0], np.float32)
        gamma, beta, mean, var = (numpy_helper.to_array(constants[n]).astype(np.float32) for n in bn.input[1:5])
        eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
        s = (gamma / np.sqrt(var + np.float32(eps))).astype(np.float32)
        w2 = np.einsum("k...,k->k...", w, s).astype(np.float32)
        b2 = ((b - mean) * s + beta).astype(np.float32)

        while f"bnfold/{counter}/W" in taken or f"bnfold/{counter}/B" in taken:
            counter += 1
        w_name, b_name = f"bnfold/{counter}/W", f"bnfold/{counter}/B"
        taken.update((w_name, b_name))
        w_init = numpy_helper.from_array(w2, w_name)
        b_init = numpy_helper.from_array(b2, b_name)
        g.initializer.extend([w_init, b_init])
        constants[w_name], constants[b_name] = w_init, b_init

        node_name = ""
        if bn.name and node_names[bn.name] == 1:  # no other node, at any depth, has it
            node_name = bn.name
        new = helper.make_node("Conv", [conv.input[0], w_name, b_name], [bn.output[0]], name=node_name)
        new.attribute.extend(conv.attribute)

        nodes[j] = new  # in the Conv's place: its input X is ready there
        nodes[i - 1] = None
        producer[bn.output[0]] = j
        producer.pop(conv.output[0], None)
        # the new Conv reads X once, as the old Conv did; the BN's read of the Conv output is gone
        reads[conv.output[0]] = 0
        stale = [v for v in g.value_info if v.name == conv.output[0]]
        for v in stale:
            g.value_info.remove(v)
        changed = True
        # a BN that follows the BN we just removed may now fold: it comes later in the list

    if changed:
        del g.node[:]
        g.node.extend(n for n in nodes if n is not None)
    return out
