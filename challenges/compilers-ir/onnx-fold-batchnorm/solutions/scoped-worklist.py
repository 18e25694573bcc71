"""Correct, written differently (owner, red team round 7): scope-aware free variables, one name set for the call.

Reads of a subgraph are its free variables (what its nodes read that it does not define itself, at any depth); a
model-local function's body is never looked into. The names in use are gathered once from the model as given
(main graph, every subgraph, training_info at any depth), so a name a fold frees stays taken. The arithmetic is
float64; the folded Conv goes where the BatchNormalization was, unnamed; orphaned initializers are kept, value_info
is left alone (the stale entry of the Conv's output included).
"""

from __future__ import annotations

import hashlib

import numpy as np
import onnx
from onnx import helper, numpy_helper

_STD = ("", "ai.onnx")


def _graphs(node: onnx.NodeProto) -> list[onnx.GraphProto]:
    out: list[onnx.GraphProto] = []
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            out.append(a.g)
        elif a.type == onnx.AttributeProto.GRAPHS:
            out.extend(a.graphs)
    return out


def _free(graph: onnx.GraphProto) -> set[str]:
    """Names the graph reads from enclosing scopes."""
    defined = {i.name for i in graph.input} | {t.name for t in graph.initializer}
    defined |= {t.values.name for t in graph.sparse_initializer}
    free: set[str] = set()
    for node in graph.node:
        for name in node.input:
            if name and name not in defined:
                free.add(name)
        for sub in _graphs(node):
            free |= {n for n in _free(sub) if n not in defined}
        defined.update(o for o in node.output if o)
    return free


def _every_name(graph: onnx.GraphProto, out: set[str]) -> None:
    out.update(v.name for v in (*graph.input, *graph.output, *graph.value_info))
    out.update(t.name for t in graph.initializer)
    out.update(t.values.name for t in graph.sparse_initializer)
    for node in graph.node:
        out.update(node.input)
        out.update(node.output)
        for sub in _graphs(node):
            _every_name(sub, out)


def _node_names(graph: onnx.GraphProto, out: set[str]) -> None:
    for node in graph.node:
        out.add(node.name)
        for sub in _graphs(node):
            _node_names(sub, out)


def _pick(taken: set[str], seed: str) -> str:
    digest = hashlib.sha256(seed.encode()).hexdigest()[:8]
    k = 0
    while True:
        name = f"bnfold.{digest}.{k}"
        if name not in taken:
            taken.add(name)
            return name
        k += 1


def fold_batchnorm(model: onnx.ModelProto) -> onnx.ModelProto:
    out = onnx.ModelProto()
    out.ParseFromString(model.SerializeToString())
    g = out.graph
    taken: set[str] = set()
    _every_name(g, taken)
    for info in out.training_info:
        for b in (*info.initialization_binding, *info.update_binding):
            taken |= {b.key, b.value}
        _every_name(info.initialization, taken)
        _every_name(info.algorithm, taken)
    _node_names(g, taken)  # the new node is unnamed; harmless to avoid node names for tensors too

    overridable = {i.name for i in g.input}
    outputs = {o.name for o in g.output}
    while True:
        inits = {t.name: t for t in g.initializer}
        readers: dict[str, int] = {}
        producer: dict[str, onnx.NodeProto] = {}
        for node in g.node:
            for name in {*node.input, *(n for sub in _graphs(node) for n in _free(sub))}:
                readers[name] = readers.get(name, 0) + (list(node.input).count(name) or 1)
            for o in node.output:
                producer[o] = node

        def value(name: str, inits: dict = inits) -> np.ndarray | None:
            if name in inits and name not in overridable:
                return numpy_helper.to_array(inits[name]).astype(np.float64)
            return None

        done = False
        for bn in g.node:
            if bn.op_type != "BatchNormalization" or bn.domain not in _STD:
                continue
            attrs = {a.name: helper.get_attribute_value(a) for a in bn.attribute}
            if attrs.get("training_mode", 0) or len([o for o in bn.output if o]) != 1 or len(bn.output) != 1:
                continue
            conv = producer.get(bn.input[0])
            if conv is None or conv.op_type != "Conv" or conv.domain not in _STD:
                continue
            z = conv.output[0]
            if readers.get(z, 0) != 1 or z in outputs:
                continue
            w = value(conv.input[1])
            has_b = len(conv.input) > 2 and conv.input[2] != ""
            b = value(conv.input[2]) if has_b else None
            params = [value(n) for n in bn.input[1:5]]
            if w is None or (has_b and b is None) or any(p is None for p in params):
                continue
            gamma, beta, mean, var = params
            s = gamma / np.sqrt(var + float(attrs.get("epsilon", 1e-5)))
            w_new = (w * s.reshape((-1,) + (1,) * (w.ndim - 1))).astype(np.float32)
            b_new = (((b if b is not None else 0.0) - mean) * s + beta).astype(np.float32)
            wn, bname = _pick(taken, bn.output[0] + ":w"), _pick(taken, bn.output[0] + ":b")
            g.initializer.append(numpy_helper.from_array(w_new, wn))
            g.initializer.append(numpy_helper.from_array(b_new, bname))
            new = onnx.NodeProto(op_type="Conv", input=[conv.input[0], wn, bname], output=[bn.output[0]])
            new.attribute.extend(conv.attribute)
            kept = []
            for node in g.node:
                if node is bn:
                    kept.append(new)
                elif node is not conv:
                    kept.append(node)
            del g.node[:]
            g.node.extend(kept)
            done = True
            break
        if not done:
            return out
