"""Correct, written differently: one onnxruntime run evaluates every constant tensor at once.

First mark the foldable nodes (all inputs constant, no random op), then cut
them out as a model of their own whose outputs are the constant tensors the
rest of the graph (or the graph's outputs) reads, and run it once in
onnxruntime. Identity nodes are removed through an alias table, and dead
code by a backwards sweep over the graph. If/Loop bodies are walked as
nested scopes: a name a body reads but does not define is a read of the
node that holds the body. (Round 3: float8 values, which onnxruntime returns
as raw uint8 bits, are stored as float8, and "" keeps nothing alive.)
"""

from __future__ import annotations

import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper

RANDOM = {"RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike", "Multinomial", "Bernoulli"}


def _bodies(node: onnx.NodeProto):
    for attr in node.attribute:
        yield from ([attr.g] if attr.HasField("g") else []) + list(attr.graphs)


def _free_names(graph: onnx.GraphProto, bound: frozenset = frozenset()):
    """(node, list of its input positions) for every name read from outside ``graph``'s own scope."""
    local = bound | {i.name for i in graph.input} | {t.name for t in graph.initializer}
    local |= {o for n in graph.node for o in n.output}
    for node in graph.node:
        yield node, [k for k, name in enumerate(node.input) if name and name not in local]
        for body in _bodies(node):
            yield from _free_names(body, local)


def _outer_names(node: onnx.NodeProto) -> set:
    return {n.input[k] for body in _bodies(node) for n, ks in _free_names(body) for k in ks}


def _evaluate(model: onnx.ModelProto, nodes: list[onnx.NodeProto], inits: list[onnx.TensorProto], wanted: list[str]) -> dict:
    if not wanted:
        return {}
    outputs = [helper.make_empty_tensor_value_info(name) for name in wanted]
    graph = helper.make_graph(nodes, "constants", [], outputs, initializer=inits)
    sub = helper.make_model(graph, opset_imports=list(model.opset_import), ir_version=model.ir_version)
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.log_severity_level = 3
    sess = ort.InferenceSession(sub.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    types = {o.name: o.type for o in sess.get_outputs()}
    return {name: _tensor(name, value, types[name]) for name, value in zip(wanted, sess.run(wanted, {}), strict=True)}


def _tensor(name: str, value, ort_type: str) -> onnx.TensorProto:
    """onnxruntime's Python API hands float8 values back as their uint8 bit patterns: store the bits as float8."""
    if ort_type == "tensor(float8e4m3fn)":
        return helper.make_tensor(name, onnx.TensorProto.FLOAT8E4M3FN, value.shape, value.tobytes(), raw=True)
    return numpy_helper.from_array(value, name)


def fold_constants(model: onnx.ModelProto) -> onnx.ModelProto:
    model = onnx.ModelProto.FromString(model.SerializeToString())
    g = model.graph
    inputs = {i.name for i in g.input}
    outputs = [o.name for o in g.output]
    const_inits = [t for t in g.initializer if t.name not in inputs]
    constant = {t.name for t in const_inits} | {""}
    folded, rest = [], []
    for node in g.node:
        has_body = any(True for _ in _bodies(node))
        training = node.op_type == "Dropout" and len(node.input) > 2 and node.input[2]  # random in training mode
        if node.domain in ("", "ai.onnx") and node.op_type not in RANDOM and not has_body and not training and all(i in constant for i in node.input):
            folded.append(node)
            constant.update(node.output)
        else:
            rest.append(node)

    # Identity removal through aliases: alias[name] is what a reader of name reads instead.
    alias: dict[str, str] = {}
    final = lambda n: final(alias[n]) if n in alias else n  # noqa: E731
    producer_of = {o for n in rest for o in n.output}
    body = []
    for node in rest:
        if node.op_type == "Identity" and node.domain in ("", "ai.onnx"):
            src = final(node.input[0])
            if node.output[0] not in outputs:
                alias[node.output[0]] = src
                continue
            if src in producer_of and src not in outputs and src not in inputs:
                alias[src] = node.output[0]
                continue
        body.append(node)
    for node in body:
        for field in (node.input, node.output):
            for k, name in enumerate(field):
                if name:
                    field[k] = final(name)
        for sub in _bodies(node):
            for inner, ks in _free_names(sub):
                for k in ks:
                    inner.input[k] = final(inner.input[k])

    # Backwards sweep: what the outputs need.
    need = set(outputs)
    alive = []
    for node in reversed(body):
        if need.intersection(node.output):
            alive.insert(0, node)
            need.update(i for i in node.input if i)  # "" is an omitted input, no tensor: it keeps nothing alive
            need |= _outer_names(node)
    wanted = sorted(n for n in need if n in constant and n and not any(t.name == n for t in const_inits))
    values = _evaluate(model, folded, const_inits, wanted)

    new_inits = [t for t in g.initializer if t.name in inputs]
    new_inits += [t for t in const_inits if t.name in need]
    new_inits += [values[n] for n in wanted]
    del g.node[:]
    g.node.extend(alive)
    del g.initializer[:]
    g.initializer.extend(new_inits)
    del g.value_info[:]
    return model
