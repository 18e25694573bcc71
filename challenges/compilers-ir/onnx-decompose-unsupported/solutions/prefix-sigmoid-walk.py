"""Correct alternative: an iterative graph walk for the report, and a rewrite
that picks one fresh name prefix no existing name starts with (then counts),
computes the tanh Gelu as x*sigmoid(2k(x+0.044715x^3)), HardSwish as
x*min(relu(x/6+1/2), 1), Softmax as exp(x-max)/sum over the normalised axes,
and LayerNormalization by two-pass statistics with Div by the std, all in the
input's element type."""

from __future__ import annotations

import math

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, helper, numpy_helper

SUPPORTED_OPS = frozenset(
    {
        "Abs", "Add", "AveragePool", "Cast", "Clip", "Concat", "Constant", "Conv", "Div", "Equal",
        "Erf", "Exp", "Expand", "Flatten", "Gather", "Gemm", "Identity", "Less", "Log", "MatMul",
        "Max", "MaxPool", "Min", "Mul", "Neg", "Pow", "Reciprocal", "ReduceMax", "ReduceMean",
        "ReduceSum", "Relu", "Reshape", "Shape", "Sigmoid", "Slice", "Sqrt", "Squeeze", "Sub",
        "Tanh", "Transpose", "Unsqueeze", "Where",
    }
)  # fmt: skip

_DEFAULT = {"", "ai.onnx"}
_TARGETS = {"Gelu", "LayerNormalization", "Softmax", "HardSwish"}


def _walk_graphs(root: onnx.GraphProto):
    stack = [root]
    while stack:
        g = stack.pop()
        yield g
        for n in g.node:
            for a in n.attribute:
                if a.type == AttributeProto.GRAPH:
                    stack.append(a.g)
                elif a.type == AttributeProto.GRAPHS:
                    stack.extend(a.graphs)


def coverage_report(model: onnx.ModelProto) -> dict[str, int]:
    out: dict[str, int] = {}
    for g in _walk_graphs(model.graph):
        for n in g.node:
            if n.domain in _DEFAULT:
                if n.op_type in SUPPORTED_OPS:
                    continue
                key = n.op_type
            else:
                key = n.domain + "::" + n.op_type
            out[key] = out.get(key, 0) + 1
    return out


def _used_names(model: onnx.ModelProto) -> set[str]:
    used: set[str] = set()
    for g in _walk_graphs(model.graph):
        for n in g.node:
            used.add(n.name)
            used.update(n.input)
            used.update(n.output)
        for coll in (g.input, g.output, g.value_info, g.initializer):
            used.update(x.name for x in coll)
        for s in g.sparse_initializer:
            used.add(s.values.name)
            used.add(s.indices.name)
    used.discard("")
    return used


class _Ctx:
    def __init__(self, model: onnx.ModelProto):
        self.opset = [o.version for o in model.opset_import if o.domain in _DEFAULT][0]
        used = _used_names(model)
        k = 0
        while any(u.startswith(f"dcmp{k}_") for u in used):
            k += 1
        self.prefix = f"dcmp{k}_"
        self.count = 0
        inf = onnx.shape_inference.infer_shapes(model)
        self.info: dict[str, tuple[int, int]] = {}
        for vi in list(inf.graph.input) + list(inf.graph.value_info) + list(inf.graph.output):
            t = vi.type.tensor_type
            if t.elem_type:
                self.info[vi.name] = (t.elem_type, len(t.shape.dim))
        for i in model.graph.initializer:
            self.info[i.name] = (i.data_type, len(i.dims))
        self.new_nodes: list[onnx.NodeProto] = []
        self.new_inits: list[onnx.TensorProto] = []

    def name(self, tag: str) -> str:
        self.count += 1
        return f"{self.prefix}{tag}{self.count}"

    def c(self, value, dtype: int) -> str:
        n = self.name("c")
        self.new_inits.append(numpy_helper.from_array(np.array(value, dtype=helper.tensor_dtype_to_np_dtype(dtype)), n))
        return n

    def node(self, op, ins, out=None, **attrs) -> str:
        out = out or self.name("t")
        self.new_nodes.append(helper.make_node(op, ins, [out], name=self.name("n"), **attrs))
        return out

    def reduce(self, op, x, axes):
        need_input = self.opset >= 13 if op == "ReduceSum" else self.opset >= 18
        if need_input:
            return self.node(op, [x, self.c(np.array(axes, np.int64), TensorProto.INT64)], keepdims=1)
        return self.node(op, [x], axes=axes, keepdims=1)


def _attr(node, name, default):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def _gelu(c: _Ctx, n):
    x, y = n.input[0], n.output[0]
    dt = c.info[x][0]
    approx = _attr(n, "approximate", b"none")
    if isinstance(approx, bytes):
        approx = approx.decode()
    if approx == "tanh":
        x3 = c.node("Mul", [c.node("Mul", [x, x]), x])
        inner = c.node("Add", [x, c.node("Mul", [x3, c.c(0.044715, dt)])])
        z = c.node("Mul", [inner, c.c(2.0 * math.sqrt(2.0 / math.pi), dt)])
        c.node("Mul", [x, c.node("Sigmoid", [z])], out=y)
    else:
        e = c.node("Erf", [c.node("Div", [x, c.c(math.sqrt(2.0), dt)])])
        hx = c.node("Mul", [x, c.c(0.5, dt)])
        c.node("Add", [hx, c.node("Mul", [hx, e])], out=y)


def _hardswish(c: _Ctx, n):
    x, y = n.input[0], n.output[0]
    dt = c.info[x][0]
    lin = c.node("Add", [c.node("Div", [x, c.c(6.0, dt)]), c.c(0.5, dt)])
    gate = c.node("Min", [c.node("Relu", [lin]), c.c(1.0, dt)])
    c.node("Mul", [x, gate], out=y)


def _softmax(c: _Ctx, n):
    x, y = n.input[0], n.output[0]
    rank = c.info[x][1]
    if c.opset >= 13:
        axis = _attr(n, "axis", -1)
        axes = [axis % rank]
    else:
        axis = _attr(n, "axis", 1)
        axes = list(range(axis % rank if rank else 0, rank))
    m = c.reduce("ReduceMax", x, axes)
    e = c.node("Exp", [c.node("Sub", [x, m])])
    c.node("Div", [e, c.reduce("ReduceSum", e, axes)], out=y)


def _layernorm(c: _Ctx, n):
    x, scale, y = n.input[0], n.input[1], n.output[0]
    bias = n.input[2] if len(n.input) >= 3 and n.input[2] != "" else None
    dt, rank = c.info[x]
    axis = _attr(n, "axis", -1)
    eps = _attr(n, "epsilon", 1e-5)
    axes = list(range(axis % rank, rank))
    d = c.node("Sub", [x, c.reduce("ReduceMean", x, axes)])
    var = c.reduce("ReduceMean", c.node("Mul", [d, d]), axes)
    std = c.node("Sqrt", [c.node("Add", [var, c.c(eps, dt)])])
    scaled = c.node("Mul", [c.node("Div", [d, std]), scale])
    if bias is None:
        c.node("Identity", [scaled], out=y)
    else:
        c.node("Add", [scaled, bias], out=y)


_RULES = {"Gelu": _gelu, "HardSwish": _hardswish, "Softmax": _softmax, "LayerNormalization": _layernorm}


def decompose(model: onnx.ModelProto) -> onnx.ModelProto:
    out = onnx.ModelProto()
    out.CopyFrom(model)
    c = _Ctx(out)
    for n in out.graph.node:
        if n.domain in _DEFAULT and n.op_type in _TARGETS:
            _RULES[n.op_type](c, n)
        else:
            c.new_nodes.append(n)
    nodes = [onnx.NodeProto() for _ in c.new_nodes]
    for dst, src in zip(nodes, c.new_nodes):
        dst.CopyFrom(src)
    del out.graph.node[:]
    out.graph.node.extend(nodes)
    out.graph.initializer.extend(c.new_inits)
    return out
