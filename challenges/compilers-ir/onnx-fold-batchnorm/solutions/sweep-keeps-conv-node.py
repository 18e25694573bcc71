"""Wrong since red team round 6 (accepted in round 5, blind): the folded Conv keeps the Conv's node name
without checking it against the other nodes at every depth. When a node inside a subgraph already carries that
name, two nodes of the result share it. Otherwise a correct alternative method.

Differs from a copy-fold-cleanup pass in the following ways:
  * the model is copied by a serialize/parse round trip;
  * outer-scope reads of subgraphs are computed exactly (free variables: names a
    subgraph reads or returns that it does not define itself), for any op with a
    graph attribute;
  * one forward sweep per round with a worklist; the folded Conv is a copy of the
    original Conv node (name, doc_string, attributes) put in the Conv's slot;
  * weights are computed in float32;
  * nothing is ever removed except the two nodes of a pair: orphaned initializers
    and the stale value_info entry of the Conv's output are kept (both allowed);
  * fresh names are hash-derived, checked against every name anywhere in the model.
"""

from __future__ import annotations

import hashlib

import numpy as np
import onnx
from onnx import numpy_helper

_DEFAULT_DOMAINS = ("", "ai.onnx")


def _graphs_of(node: onnx.NodeProto):
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            yield a.g
        elif a.type == onnx.AttributeProto.GRAPHS:
            yield from a.graphs


def _free_vars(graph: onnx.GraphProto) -> set[str]:
    """Names `graph` takes from enclosing scopes."""
    defined = {i.name for i in graph.input} | {t.name for t in graph.initializer}
    defined |= {s.values.name for s in graph.sparse_initializer}
    free: set[str] = set()
    for node in graph.node:
        for name in node.input:
            if name and name not in defined:
                free.add(name)
        for sub in _graphs_of(node):
            free |= {n for n in _free_vars(sub) if n not in defined}
        defined.update(o for o in node.output if o)
    free |= {o.name for o in graph.output if o.name not in defined}
    return free


def _every_name(graph: onnx.GraphProto, acc: set[str]) -> None:
    for seq in (graph.input, graph.output, graph.value_info):
        acc.update(v.name for v in seq)
    acc.update(t.name for t in graph.initializer)
    for s in graph.sparse_initializer:
        acc.add(s.values.name)
        acc.add(s.indices.name)
    for node in graph.node:
        acc.add(node.name)
        acc.update(node.input)
        acc.update(node.output)
        for sub in _graphs_of(node):
            _every_name(sub, acc)


def _model_names(model: onnx.ModelProto) -> set[str]:
    acc: set[str] = set()
    _every_name(model.graph, acc)
    for f in model.functions:
        acc.update(f.input)
        acc.update(f.output)
        for node in f.node:
            acc.add(node.name)
            acc.update(node.input)
            acc.update(node.output)
            for sub in _graphs_of(node):
                _every_name(sub, acc)
    for ti in model.training_info:
        _every_name(ti.algorithm, acc)
        _every_name(ti.initialization, acc)
    return acc


def _new_name(used: set[str], seed: str, tag: str) -> str:
    digest = hashlib.sha1(seed.encode()).hexdigest()  # noqa: S324 - names, not security
    k = 8
    while True:
        cand = f"{tag}_{digest[:k]}"
        if cand not in used:
            used.add(cand)
            return cand
        k += 1
        if k > len(digest):
            digest = hashlib.sha1(digest.encode()).hexdigest()  # noqa: S324
            k = 8


def _sweep(graph: onnx.GraphProto, used: set[str]) -> bool:
    overridable = {i.name for i in graph.input}
    consts = {t.name: t for t in graph.initializer if t.name not in overridable}
    outs = {o.name for o in graph.output}
    readers: dict[str, int] = {}
    for node in graph.node:
        names = [n for n in node.input if n]
        for sub in _graphs_of(node):
            names.extend(_free_vars(sub))
        for n in names:
            readers[n] = readers.get(n, 0) + 1
    nodes = list(graph.node)
    where = {o: i for i, n in enumerate(nodes) for o in n.output if o}

    changed = False
    for j in range(len(nodes)):
        bn = nodes[j]
        if bn is None or bn.op_type != "BatchNormalization" or bn.domain not in _DEFAULT_DOMAINS:
            continue
        mode = next((a.i for a in bn.attribute if a.name == "training_mode"), 0)
        if mode != 0 or sum(1 for o in bn.output if o) != 1 or not bn.input[0]:
            continue
        i = where.get(bn.input[0])
        if i is None or nodes[i] is None:
            continue
        conv = nodes[i]
        if conv.op_type != "Conv" or conv.domain not in _DEFAULT_DOMAINS:
            continue
        if readers.get(bn.input[0], 0) != 1 or bn.input[0] in outs:
            continue
        has_bias = len(conv.input) >= 3 and conv.input[2] != ""
        needed = [conv.input[1]] + ([conv.input[2]] if has_bias else []) + list(bn.input[1:5])
        if any(n not in consts for n in needed):
            continue
        arr = {n: numpy_helper.to_array(consts[n]).astype(np.float32) for n in needed}
        w = arr[conv.input[1]]
        b = arr[conv.input[2]] if has_bias else np.zeros(w.shape[0], np.float32)
        gamma, beta, mean, var = (arr[n] for n in bn.input[1:5])
        eps = next((a.f for a in bn.attribute if a.name == "epsilon"), 1e-5)
        s = (gamma / np.sqrt(var + np.float32(eps))).astype(np.float32)
        w2 = (w * s.reshape((w.shape[0],) + (1,) * (w.ndim - 1))).astype(np.float32)
        b2 = ((b - mean) * s + beta).astype(np.float32)

        wn = _new_name(used, "W|" + bn.output[0] + "|" + conv.input[1], "fold_w")
        bnm = _new_name(used, "B|" + bn.output[0], "fold_b")
        graph.initializer.append(numpy_helper.from_array(w2, wn))
        graph.initializer.append(numpy_helper.from_array(b2, bnm))

        fused = onnx.NodeProto()
        fused.CopyFrom(conv)
        del fused.input[:]
        fused.input.extend([conv.input[0], wn, bnm])
        del fused.output[:]
        fused.output.append(bn.output[0])
        nodes[i] = fused
        nodes[j] = None
        where[bn.output[0]] = i
        changed = True
    if changed:
        keep = [n for n in nodes if n is not None]
        del graph.node[:]
        graph.node.extend(keep)
    return changed


def fold_batchnorm(model: onnx.ModelProto) -> onnx.ModelProto:
    result = onnx.ModelProto.FromString(model.SerializeToString())
    used = _model_names(result)
    while _sweep(result.graph, used):
        pass
    return result
