"""RIGHT (alternative): a rebuild-the-graph rewrite with Constant nodes.

Approach, different from the reference in most choices:
- the report is an explicit stack-based walk (no generators);
- the rewrite builds a brand-new GraphProto node list, constants are
  ``Constant`` nodes (not initializers) cached per (value, type);
- LayerNormalization needs no rank: Flatten at ``axis`` to 2-D, normalize
  along axis 1 with Div by the standard deviation, Reshape back to
  ``Shape(x)`` with ``allowzero=1`` (LayerNormalization exists only from
  opset 17, so Reshape-14's allowzero is always there), then Scale and B;
- Softmax uses ReduceMax/ReduceSum with the opset's axes form, the trailing
  axes before opset 13 (rank from shape inference);
- HardSwish is x * (Min(Relu(x + 3), 6) / 6), Gelu's tanh form is
  x * Sigmoid(2 z), its erf form 0.5 x (1 + erf(x / sqrt 2)) with x halved
  first;
- fresh names are ``_dcmp<k>`` tried against every name in every graph.
"""

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


def _subgraphs(node):
    out = []
    for a in node.attribute:
        if a.type == AttributeProto.GRAPH:
            out.append(a.g)
        elif a.type == AttributeProto.GRAPHS:
            out.extend(a.graphs)
    return out


def _every_graph(root):
    stack, out = [root], []
    while stack:
        g = stack.pop()
        out.append(g)
        for n in g.node:
            stack.extend(_subgraphs(n))
    return out


def coverage_report(model: onnx.ModelProto) -> dict[str, int]:
    counts: dict[str, int] = {}
    for g in _every_graph(model.graph):
        for n in g.node:
            default = n.domain in _DEFAULT
            if default and n.op_type in SUPPORTED_OPS:
                continue
            key = n.op_type if default else n.domain + "::" + n.op_type
            counts[key] = counts.get(key, 0) + 1
    return counts


class _Pass:
    def __init__(self, model: onnx.ModelProto):
        self.m = model
        self.version = [o.version for o in model.opset_import if o.domain in _DEFAULT][0]
        used = set()
        for g in _every_graph(model.graph):
            for n in g.node:
                used.add(n.name)
                used.update(n.input)
                used.update(n.output)
            for coll in (g.input, g.output, g.value_info, g.initializer):
                used.update(v.name for v in coll)
            for s in g.sparse_initializer:
                used.add(s.values.name)
                used.add(s.indices.name)
        self.used = used
        self.k = 0
        info = {}
        inferred = onnx.shape_inference.infer_shapes(model)
        for coll in (inferred.graph.value_info, inferred.graph.input, inferred.graph.output):
            for v in coll:
                tt = v.type.tensor_type
                info[v.name] = (tt.elem_type, len(tt.shape.dim) if tt.HasField("shape") else None)
        for t in model.graph.initializer:
            info[t.name] = (t.data_type, len(t.dims))
        for s in model.graph.sparse_initializer:
            info[s.values.name] = (s.values.data_type, len(s.dims))
        self.info = info
        self.out: list[onnx.NodeProto] = []
        self.consts: dict = {}

    def name(self) -> str:
        while True:
            cand = f"_dcmp{self.k}"
            self.k += 1
            if cand not in self.used:
                self.used.add(cand)
                return cand

    def emit(self, op, inputs, output=None, **attrs):
        output = output or self.name()
        self.out.append(helper.make_node(op, inputs, [output], name=self.name(), **attrs))
        return output

    def const(self, value, elem):
        key = (repr(value), elem)
        if key not in self.consts:
            arr = np.array(value, dtype=helper.tensor_dtype_to_np_dtype(elem))
            self.consts[key] = self.emit("Constant", [], value=numpy_helper.from_array(arr, self.name()))
        return self.consts[key]

    def reduce(self, op, x, axes):
        if self.version >= (13 if op == "ReduceSum" else 18):
            return self.emit(op, [x, self.const(list(axes), TensorProto.INT64)], keepdims=1)
        return self.emit(op, [x], axes=list(axes), keepdims=1)

    @staticmethod
    def attr(node, name, default):
        for a in node.attribute:
            if a.name == name:
                return helper.get_attribute_value(a)
        return default

    def rewrite(self, n):
        x, y = n.input[0], n.output[0]
        t = self.info[x][0]
        if n.op_type == "HardSwish":
            r = self.emit("Relu", [self.emit("Add", [x, self.const(3.0, t)])])
            gate = self.emit("Div", [self.emit("Min", [r, self.const(6.0, t)]), self.const(6.0, t)])
            self.emit("Mul", [x, gate], y)
        elif n.op_type == "Gelu":
            approx = self.attr(n, "approximate", b"none")
            approx = approx.decode() if isinstance(approx, bytes) else approx
            if approx == "tanh":
                cube = self.emit("Mul", [self.emit("Mul", [x, x]), x])
                inner = self.emit("Add", [x, self.emit("Mul", [cube, self.const(0.044715, t)])])
                z2 = self.emit("Mul", [inner, self.const(2.0 * math.sqrt(2.0 / math.pi), t)])
                self.emit("Mul", [x, self.emit("Sigmoid", [z2])], y)
            else:
                e = self.emit("Erf", [self.emit("Div", [x, self.const(math.sqrt(2.0), t)])])
                half = self.emit("Div", [x, self.const(2.0, t)])
                self.emit("Mul", [half, self.emit("Add", [e, self.const(1.0, t)])], y)
        elif n.op_type == "Softmax":
            legacy = self.version < 13
            axis = self.attr(n, "axis", 1 if legacy else -1)
            if legacy:
                rank = self.info[x][1]
                a = axis % rank
                axes = list(range(a, rank))
            else:
                axes = [axis]
            d = self.emit("Sub", [x, self.reduce("ReduceMax", x, axes)])
            e = self.emit("Exp", [d])
            self.emit("Div", [e, self.reduce("ReduceSum", e, axes)], y)
        else:  # LayerNormalization, opset >= 17
            axis = self.attr(n, "axis", -1)
            eps = self.attr(n, "epsilon", 1e-5)
            scale = n.input[1]
            bias = n.input[2] if len(n.input) > 2 and n.input[2] != "" else None
            flat = self.emit("Flatten", [x], axis=axis)
            mu = self.reduce("ReduceMean", flat, [1])
            d = self.emit("Sub", [flat, mu])
            var = self.reduce("ReduceMean", self.emit("Mul", [d, d]), [1])
            sd = self.emit("Sqrt", [self.emit("Add", [var, self.const(float(eps), t)])])
            normed2d = self.emit("Div", [d, sd])
            normed = self.emit("Reshape", [normed2d, self.emit("Shape", [x])], allowzero=1)
            if bias is None:
                self.emit("Mul", [normed, scale], y)
            else:
                self.emit("Add", [self.emit("Mul", [normed, scale]), bias], y)

    def run(self) -> onnx.ModelProto:
        for n in self.m.graph.node:
            if n.domain in _DEFAULT and n.op_type in _TARGETS:
                self.rewrite(n)
            else:
                self.out.append(n)
        new_nodes = [onnx.NodeProto() for _ in self.out]
        for dst, src in zip(new_nodes, self.out):
            dst.CopyFrom(src)
        del self.m.graph.node[:]
        self.m.graph.node.extend(new_nodes)
        return self.m


def decompose(model: onnx.ModelProto) -> onnx.ModelProto:
    copy = onnx.ModelProto.FromString(model.SerializeToString())
    return _Pass(copy).run()
