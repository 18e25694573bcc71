"""Correct alternative: log-sum-exp Softmax, sigmoid-form tanh Gelu, Max/Min HardSwish,
Constant nodes instead of initializers, value_info for every new tensor's element type,
LayerNorm's named Mean/InvStdDev computed too (cast to stash_type)."""
from __future__ import annotations

import copy
import math
from collections import Counter

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
_DEFAULT = ("", "ai.onnx")
_TARGETS = ("Gelu", "LayerNormalization", "Softmax", "HardSwish")


def _subgraphs(node):
    for a in node.attribute:
        if a.type == AttributeProto.GRAPH:
            yield a.g
        elif a.type == AttributeProto.GRAPHS:
            yield from a.graphs


def _walk_graphs(graph):
    stack = [graph]
    while stack:
        g = stack.pop()
        yield g
        for n in g.node:
            stack.extend(_subgraphs(n))


def coverage_report(model: onnx.ModelProto) -> dict[str, int]:
    c = Counter()
    for g in _walk_graphs(model.graph):
        for n in g.node:
            if n.domain in _DEFAULT:
                if n.op_type not in SUPPORTED_OPS:
                    c[n.op_type] += 1
            else:
                c[f"{n.domain}::{n.op_type}"] += 1
    return dict(c)


def _used_names(model):
    used = set()
    for g in _walk_graphs(model.graph):
        for n in g.node:
            used.update(n.input)
            used.update(n.output)
            used.add(n.name)
        for vi in list(g.input) + list(g.output) + list(g.value_info):
            used.add(vi.name)
        used.update(t.name for t in g.initializer)
        for s in g.sparse_initializer:
            used.add(s.values.name)
            used.add(s.indices.name)
    return used


class _Pass:
    def __init__(self, model):
        self.m = model
        self.opset = [o.version for o in model.opset_import if o.domain in _DEFAULT][0]
        self.used = _used_names(model)
        self.k = 0
        self.info = {}
        g = model.graph
        for vi in list(g.input) + list(g.output) + list(g.value_info):
            self._note(vi)
        try:
            inferred = onnx.shape_inference.infer_shapes(model)
            for vi in list(inferred.graph.value_info) + list(inferred.graph.output):
                if vi.name not in self.info or self.info[vi.name][1] is None:
                    self._note(vi)
        except Exception:
            pass
        for t in g.initializer:
            self.info[t.name] = (t.data_type, len(t.dims))
        self.new_nodes = []
        self.new_vi = []

    def _note(self, vi):
        tt = vi.type.tensor_type
        if not tt.elem_type:
            return
        self.info[vi.name] = (tt.elem_type, len(tt.shape.dim) if tt.HasField("shape") else None)

    def name(self, tag):
        while True:
            self.k += 1
            n = f"dcmp{self.k}_{tag}"
            if n not in self.used:
                self.used.add(n)
                return n

    def etype(self, x):
        return self.info[x][0]

    def rank(self, x):
        r = self.info[x][1]
        if r is None:
            raise ValueError(f"unknown rank for {x}")
        return r

    def const(self, value, et):
        arr = np.array(value, dtype=helper.tensor_dtype_to_np_dtype(et))
        out = self.name("c")
        self.new_nodes.append(helper.make_node("Constant", [], [out], name=self.name("n"), value=numpy_helper.from_array(arr, out)))
        self.new_vi.append(helper.make_tensor_value_info(out, et, list(arr.shape)))
        return out

    def node(self, op, ins, et, out=None, **attrs):
        fresh = out is None
        out = out or self.name(op.lower())
        self.new_nodes.append(helper.make_node(op, ins, [out], name=self.name("n"), **attrs))
        if fresh and et is not None:
            self.new_vi.append(helper.make_tensor_value_info(out, et, None))
        return out

    def reduce(self, op, x, axes, et):
        newstyle = self.opset >= (13 if op == "ReduceSum" else 18)
        if newstyle:
            return self.node(op, [x, self.const(np.array(axes, np.int64), TensorProto.INT64)], et, keepdims=1)
        return self.node(op, [x], et, axes=axes, keepdims=1)

    # --- rewrites
    def gelu(self, n):
        x, y = n.input[0], n.output[0]
        et = self.etype(x)
        approx = "none"
        for a in n.attribute:
            if a.name == "approximate":
                approx = a.s.decode()
        if approx == "tanh":
            xx = self.node("Mul", [x, x], et)
            poly = self.node("Add", [self.const(1.0, et), self.node("Mul", [xx, self.const(0.044715, et)], et)], et)
            z = self.node("Mul", [self.node("Mul", [x, self.const(2.0 * math.sqrt(2.0 / math.pi), et)], et), poly], et)
            self.node("Mul", [x, self.node("Sigmoid", [z], et)], et, out=y)
        else:
            e = self.node("Erf", [self.node("Div", [x, self.const(math.sqrt(2.0), et)], et)], et)
            gate = self.node("Add", [self.const(0.5, et), self.node("Mul", [e, self.const(0.5, et)], et)], et)
            self.node("Mul", [x, gate], et, out=y)

    def hardswish(self, n):
        x, y = n.input[0], n.output[0]
        et = self.etype(x)
        lin = self.node("Add", [self.node("Div", [x, self.const(6.0, et)], et), self.const(0.5, et)], et)
        gate = self.node("Min", [self.node("Max", [lin, self.const(0.0, et)], et), self.const(1.0, et)], et)
        self.node("Mul", [x, gate], et, out=y)

    def softmax(self, n):
        x, y = n.input[0], n.output[0]
        et = self.etype(x)
        legacy = self.opset < 13
        axis = 1 if legacy else -1
        for a in n.attribute:
            if a.name == "axis":
                axis = a.i
        if legacy:
            r = self.rank(x)
            a0 = axis + r if axis < 0 else axis
            axes = list(range(a0, r))
        else:
            axes = [axis]
        m = self.reduce("ReduceMax", x, axes, et)
        sh = self.node("Sub", [x, m], et)
        lse = self.node("Log", [self.reduce("ReduceSum", self.node("Exp", [sh], et), axes, et)], et)
        self.node("Exp", [self.node("Sub", [sh, lse], et)], et, out=y)

    def layernorm(self, n):
        x, scale = n.input[0], n.input[1]
        bias = n.input[2] if len(n.input) > 2 and n.input[2] else None
        axis, eps, stash = -1, 1e-5, 1
        for a in n.attribute:
            if a.name == "axis":
                axis = a.i
            elif a.name == "epsilon":
                eps = a.f
            elif a.name == "stash_type":
                stash = a.i
        et = self.etype(x)
        r = self.rank(x)
        a0 = axis + r if axis < 0 else axis
        axes = list(range(a0, r))
        mean = self.reduce("ReduceMean", x, axes, et)
        d = self.node("Sub", [x, mean], et)
        var = self.reduce("ReduceMean", self.node("Pow", [d, self.const(2.0, et)], et), axes, et)
        std = self.node("Sqrt", [self.node("Add", [var, self.const(eps, et)], et)], et)
        nrm = self.node("Div", [d, std], et)
        if bias is None:
            self.node("Mul", [nrm, scale], et, out=n.output[0])
        else:
            self.node("Add", [self.node("Mul", [nrm, scale], et), bias], et, out=n.output[0])
        if len(n.output) > 1 and n.output[1]:
            self.node("Cast", [mean], None, out=n.output[1], to=stash)
        if len(n.output) > 2 and n.output[2]:
            self.node("Cast", [self.node("Reciprocal", [std], et)], None, out=n.output[2], to=stash)

    def run(self):
        g = self.m.graph
        old = list(g.node)
        out_nodes = []
        for n in old:
            if n.domain == "" and n.op_type in _TARGETS:
                self.new_nodes = []
                {"Gelu": self.gelu, "HardSwish": self.hardswish, "Softmax": self.softmax,
                 "LayerNormalization": self.layernorm}[n.op_type](n)
                out_nodes.extend(self.new_nodes)
            else:
                out_nodes.append(n)
        del g.node[:]
        g.node.extend(out_nodes)
        g.value_info.extend(self.new_vi)
        return self.m


def decompose(model: onnx.ModelProto) -> onnx.ModelProto:
    return _Pass(copy.deepcopy(model)).run()
