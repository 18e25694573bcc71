"""WRONG: LayerNormalization normalizes over the last `Scale.ndim` axes ("Scale has the normalized shape"),
which avoids needing the input's rank; it ignores `axis`. Right for torch exports (weight shape =
normalized_shape) and every Scale of exactly the normalized shape, wrong for a Scale with leading
size-1 dims, which onnxruntime accepts.

Oracle (oracle/oracle.py, onnxruntime on the original vs the result, check_model(full_check=True),
hand-computed reports on models of oracle/models.py): decompose ln17_axis_m1_scale_shape_1x1x4: x[2,3,4], Scale[1,1,4], axis=-1 -> normalizes over 3 axes, max abs err ~2.
"""
from __future__ import annotations

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

TARGETS = ("Gelu", "LayerNormalization", "Softmax", "HardSwish")


def _is_default(domain: str) -> bool:
    return domain in ("", "ai.onnx")  #@DEFAULT_DOMAIN


def _walk(graph):
    for node in graph.node:
        yield node
        for attr in node.attribute:  #@WALK
            if attr.type == AttributeProto.GRAPH:
                yield from _walk(attr.g)


def coverage_report(model: onnx.ModelProto) -> dict[str, int]:
    out: dict[str, int] = {}
    for node in _walk(model.graph):
        if _is_default(node.domain) and node.op_type in SUPPORTED_OPS:  #@SUPPORTED
            continue
        key = node.op_type if _is_default(node.domain) else f"{node.domain}::{node.op_type}"
        out[key] = out.get(key, 0) + 1
    return out


class _Ctx:
    def __init__(self, model):
        self.model = model
        self.opset = None
        for o in model.opset_import:
            if _is_default(o.domain):  #@OPSET
                self.opset = o.version
        g = model.graph
        self.used = set()
        for n in _walk(g):
            self.used.update(n.input)
            self.used.update(n.output)
            self.used.add(n.name)
        for sub in [g, *(a.g for n in _walk(g) for a in n.attribute if a.type == AttributeProto.GRAPH)]:
            for coll in (sub.input, sub.output, sub.value_info, sub.initializer, sub.sparse_initializer):  #@USED
                for v in coll:
                    self.used.add(v.values.name if isinstance(v, onnx.SparseTensorProto) else v.name)
        self.info = {}
        inf = onnx.shape_inference.infer_shapes(model)  #@INFER
        for v in list(inf.graph.input) + list(inf.graph.value_info) + list(inf.graph.output):
            tt = v.type.tensor_type
            self.info[v.name] = (tt.elem_type, len(tt.shape.dim) if tt.HasField("shape") else None)
        for t in g.initializer:
            self.info[t.name] = (t.data_type, len(t.dims))
        self.new_nodes = []
        self.new_inits = []

    def name(self, base):
        k = 0
        while f"{base}__{k}" in self.used:
            k += 1
        nm = f"{base}__{k}"
        self.used.add(nm)
        return nm

    def dtype(self, t):
        return self.info[t][0]

    def rank(self, t):
        r = self.info.get(t, (None, None))[1]
        if r is None:
            raise ValueError(f"unknown rank for {t}")
        return r

    def const(self, value, dtype, base):
        nm = self.name(base)
        self.new_inits.append(numpy_helper.from_array(np.array(value, dtype=helper.tensor_dtype_to_np_dtype(dtype)), nm))
        return nm

    def node(self, op, ins, base, out=None, **kw):
        out = out if out is not None else self.name(base)
        self.new_nodes.append(helper.make_node(op, ins, [out], name=self.name(base + "_" + op), **kw))
        return out

    def reduce(self, op, x, axes, base):
        as_input = self.opset >= (13 if op == "ReduceSum" else 18)  #@REDUCE
        if as_input:
            return self.node(op, [x, self.const(axes, TensorProto.INT64, base + "_axes")], base, keepdims=1)
        return self.node(op, [x], base, axes=axes, keepdims=1)


def _attr(node, name, default):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def _gelu(c, node, b):
    x, y = node.input[0], node.output[0]
    t = c.dtype(x)
    mode = _attr(node, "approximate", b"none")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    if mode == "tanh":
        x3 = c.node("Mul", [c.node("Mul", [x, x], b), x], b)
        z = c.node("Add", [x, c.node("Mul", [x3, c.const(0.044715, t, b + "_a")], b)], b)
        g = c.node("Tanh", [c.node("Mul", [z, c.const(np.sqrt(2 / np.pi), t, b + "_k")], b)], b)
    else:
        g = c.node("Erf", [c.node("Mul", [x, c.const(1 / np.sqrt(2), t, b + "_k")], b)], b)
    g1 = c.node("Add", [g, c.const(1.0, t, b + "_one")], b)
    c.node("Mul", [c.node("Mul", [x, g1], b), c.const(0.5, t, b + "_half")], b, out=y)


def _axes_from(c, x, axis):
    if axis < 0:  #@AXES
        return list(range(axis, 0))
    return list(range(axis, c.rank(x)))


def _layernorm(c, node, b):
    x, scale = node.input[0], node.input[1]
    bias = node.input[2] if len(node.input) > 2 and node.input[2] else None
    axis = _attr(node, "axis", -1)
    eps = _attr(node, "epsilon", 1e-5)
    t = c.dtype(x)
    axes = list(range(-c.rank(scale), 0))
    mu = c.reduce("ReduceMean", x, axes, b)
    d = c.node("Sub", [x, mu], b)
    var = c.reduce("ReduceMean", c.node("Mul", [d, d], b), axes, b)
    den = c.node("Sqrt", [c.node("Add", [var, c.const(eps, t, b + "_eps")], b)], b)
    yn = c.node("Mul", [c.node("Div", [d, den], b), scale], b)
    if bias is None:
        c.node("Identity", [yn], b, out=node.output[0])
    else:
        c.node("Add", [yn, bias], b, out=node.output[0])


def _softmax(c, node, b):
    x = node.input[0]
    if c.opset < 13:  #@SMLEGACY
        axes = _axes_from(c, x, _attr(node, "axis", 1))
    else:
        axes = [_attr(node, "axis", -1)]
    m = c.reduce("ReduceMax", x, axes, b)
    e = c.node("Exp", [c.node("Sub", [x, m], b)], b)
    c.node("Div", [e, c.reduce("ReduceSum", e, axes, b)], b, out=node.output[0])


def _hardswish(c, node, b):
    x = node.input[0]
    t = c.dtype(x)
    h = c.node("Add", [c.node("Mul", [x, c.const(1 / 6, t, b + "_s")], b), c.const(0.5, t, b + "_h")], b)
    gate = c.node("Clip", [h, c.const(0.0, t, b + "_lo"), c.const(1.0, t, b + "_hi")], b)
    c.node("Mul", [x, gate], b, out=node.output[0])


RULES = {"Gelu": _gelu, "LayerNormalization": _layernorm, "Softmax": _softmax, "HardSwish": _hardswish}


def decompose(model: onnx.ModelProto) -> onnx.ModelProto:
    out = onnx.ModelProto()
    out.CopyFrom(model)
    c = _Ctx(out)
    for node in out.graph.node:
        if _is_default(node.domain) and node.op_type in RULES:  #@MATCH
            RULES[node.op_type](c, node, "dec_" + node.op_type.lower())
        else:
            c.new_nodes.append(node)
    del out.graph.node[:]
    out.graph.node.extend(c.new_nodes)
    out.graph.initializer.extend(c.new_inits)
    return out
