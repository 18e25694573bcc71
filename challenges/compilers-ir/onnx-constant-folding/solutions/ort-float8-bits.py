"""WRONG (one mistake): folded nodes are evaluated with onnxruntime (one-node model at the
model's opset; ReferenceEvaluator only when onnxruntime refuses the node), and whatever
numpy array onnxruntime hands back is stored. For float8 outputs onnxruntime's Python API
returns the raw bit patterns as uint8 arrays, so a folded Cast to FLOAT8E4M3FN becomes a
UINT8 constant, and the next folded node reads bit patterns as numbers. The statement:
store folded values "with the values' own dtypes"; same outputs for every feed.
Everything else (alias-map Identity removal, worklist liveness) is solutions/ort-worklist.py.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

_RANDOM = {"RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike", "Multinomial", "Bernoulli"}
_ONNX = {"", "ai.onnx"}


def _bodies(node):
    out = []
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            out.append(a.g)
        elif a.type == onnx.AttributeProto.GRAPHS:
            out.extend(a.graphs)
    return out


def _own_names(g):
    s = {v.name for v in g.input} | {t.name for t in g.initializer}
    for n in g.node:
        s.update(o for o in n.output if o)
    return s


def _free_names(g, hidden=frozenset()):
    """Names that a body (at any depth) takes from the graphs around it."""
    hidden = hidden | _own_names(g)
    free = {v.name for v in g.output if v.name not in hidden}
    for n in g.node:
        free.update(i for i in n.input if i and i not in hidden)
        for b in _bodies(n):
            free |= _free_names(b, hidden)
    return free


def _node_reads(node):
    r = {i for i in node.input if i}
    for b in _bodies(node):
        r |= _free_names(b)
    return r


def _rewrite_body(g, alias, hidden=frozenset()):
    hidden = hidden | _own_names(g)
    for n in g.node:
        for k, i in enumerate(n.input):
            if i and i not in hidden:
                n.input[k] = alias(i)
        for b in _bodies(n):
            _rewrite_body(b, alias, hidden)


def _run_ort(node, feeds, outputs, opset, ir_version):
    ins = [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape) for k, v in feeds.items()]
    outs = [helper.make_empty_tensor_value_info(o) for o in outputs]
    g = helper.make_graph([node], "one", ins, outs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=min(ir_version, 10))
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 4
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return sess.run(outputs, feeds)


def _run_ref(node, feeds, outputs, opset):
    fn = helper.make_function("f", "one", list(feeds), outputs, [node], opset_imports=[helper.make_opsetid("", opset)])
    return ReferenceEvaluator(fn).run(None, feeds, attributes={})


def _compute(node, constants, opset, ir_version):
    names = []
    for i in node.input:
        if i and i not in names:
            names.append(i)
    feeds = {k: np.asarray(constants[k]) for k in names}
    outputs = [o for o in node.output if o]
    plain = all(v.dtype.kind in "biuf" for v in feeds.values())
    values = None
    if plain:
        try:
            values = _run_ort(node, feeds, outputs, opset, ir_version)
        except Exception:
            values = None
    if values is None:
        values = _run_ref(node, feeds, outputs, opset)
    return {o: np.asarray(v) for o, v in zip(outputs, values)}


def _may_fold(node, constants):
    if node.domain not in _ONNX or node.op_type in _RANDOM or _bodies(node):
        return False
    if node.op_type == "Dropout" and len(node.input) >= 3 and node.input[2] != "":
        return False
    return all(i == "" or i in constants for i in node.input)


def fold_constants(model: onnx.ModelProto) -> onnx.ModelProto:
    out = onnx.ModelProto()
    out.CopyFrom(model)
    g = out.graph
    opset = [o.version for o in out.opset_import if o.domain in _ONNX][0]
    in_names = [v.name for v in g.input]
    out_names = [v.name for v in g.output]
    inputs, outputs = set(in_names), set(out_names)
    defaults = [t for t in g.initializer if t.name in inputs]
    constants = {t.name: numpy_helper.to_array(t) for t in g.initializer if t.name not in inputs}

    remaining = []
    for node in g.node:
        if _may_fold(node, constants):
            constants.update(_compute(node, constants, opset, out.ir_version))
        else:
            remaining.append(node)

    # Identity removal: alias[name] = the name it stands for from now on.
    alias: dict[str, str] = {}

    def find(n):
        seen = []
        while n in alias:
            seen.append(n)
            n = alias[n]
        for s in seen:  # path compression
            alias[s] = n
        return n

    made_here = {o for n in remaining for o in n.output if o}
    nodes = []
    for node in remaining:
        if node.domain in _ONNX and node.op_type == "Identity":
            src, dst = find(node.input[0]), node.output[0]
            if dst not in outputs:
                alias[dst] = src
                continue
            if src in made_here and src not in inputs and src not in outputs:
                alias[src] = dst
                continue
        nodes.append(node)
    for node in nodes:
        node.input[:] = [find(i) if i else i for i in node.input]
        node.output[:] = [find(o) if o else o for o in node.output]
        for b in _bodies(node):
            _rewrite_body(b, find)

    # Liveness: worklist from the graph outputs through producers.
    producer = {}
    for idx, node in enumerate(nodes):
        for o in node.output:
            if o:
                producer[o] = idx
    live_nodes, live_names = set(), set()
    work = list(out_names)
    while work:
        name = work.pop()
        if name in live_names:
            continue
        live_names.add(name)
        idx = producer.get(name)
        if idx is not None and idx not in live_nodes:
            live_nodes.add(idx)
            work.extend(_node_reads(nodes[idx]))

    g.ClearField("node")
    g.node.extend(n for k, n in enumerate(nodes) if k in live_nodes)
    g.ClearField("initializer")
    g.initializer.extend(defaults)
    for name, value in constants.items():
        if name in live_names:
            g.initializer.append(numpy_helper.from_array(value, name))
    known = live_names | {o for n in g.node for o in n.output}
    vis = [vi for vi in g.value_info if vi.name in known]
    g.ClearField("value_info")
    g.value_info.extend(vis)
    return out
