"""Correct, written differently from the reference.

The report recurses with an explicit stack. The rewrite emits constants as
Constant nodes (not initializers), normalises with Pow(var + eps, -0.5),
bounds HardSwish's gate with Max/Min instead of Clip, and gets ranks from
onnx.shape_inference for every axis, negative ones included (and from the
initializer itself when an op reads one directly).
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import onnx
from onnx import AttributeProto, helper, numpy_helper

SUPPORTED_OPS = frozenset(
    {
        "Abs", "Add", "AveragePool", "Cast", "Clip", "Concat", "Constant", "Conv", "Div", "Equal",
        "Erf", "Exp", "Expand", "Flatten", "Gather", "Gemm", "Identity", "Less", "Log", "MatMul",
        "Max", "MaxPool", "Min", "Mul", "Neg", "Pow", "Reciprocal", "ReduceMax", "ReduceMean",
        "ReduceSum", "Relu", "Reshape", "Shape", "Sigmoid", "Slice", "Sqrt", "Squeeze", "Sub",
        "Tanh", "Transpose", "Unsqueeze", "Where",
    }
)  # fmt: skip


def coverage_report(model: onnx.ModelProto) -> dict[str, int]:
    counts: Counter[str] = Counter()
    stack = [model.graph]
    while stack:
        graph = stack.pop()
        for node in graph.node:
            default = node.domain in ("", "ai.onnx")
            if not (default and node.op_type in SUPPORTED_OPS):
                counts[node.op_type if default else f"{node.domain}::{node.op_type}"] += 1
            for a in node.attribute:
                if a.type == AttributeProto.GRAPH:
                    stack.append(a.g)
                elif a.type == AttributeProto.GRAPHS:
                    stack.extend(a.graphs)
    return dict(counts)


def decompose(model: onnx.ModelProto) -> onnx.ModelProto:
    model = onnx.ModelProto.FromString(model.SerializeToString())
    graph = model.graph
    opset = max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    info = {}
    inferred = onnx.shape_inference.infer_shapes(model).graph
    for v in [*inferred.input, *inferred.value_info, *inferred.output]:
        info[v.name] = (v.type.tensor_type.elem_type, len(v.type.tensor_type.shape.dim))
    for t in graph.initializer:  # shape inference lists no initializer; an op may read one directly
        info[t.name] = (t.data_type, len(t.dims))
    names: set[str] = set()  # every name of every graph, subgraphs included
    stack = [graph]
    while stack:
        g = stack.pop()
        names |= {x for n in g.node for x in [*n.input, *n.output, n.name]} | {i.name for i in g.initializer}
        names |= {v.name for v in [*g.input, *g.output, *g.value_info]} | {s.values.name for s in g.sparse_initializer}
        stack += [a.g for n in g.node for a in n.attribute if a.type == AttributeProto.GRAPH]
    serial = [0]
    out_nodes: list[onnx.NodeProto] = []

    def new(prefix: str) -> str:
        while True:
            serial[0] += 1
            name = f"__dec_{prefix}{serial[0]}"
            if name not in names:
                names.add(name)
                return name

    def emit(op: str, ins: list[str], out: str | None = None, **attrs) -> str:
        out = out or new(op.lower())
        out_nodes.append(helper.make_node(op, ins, [out], name=new("n"), **attrs))
        return out

    def const(value, elem: int) -> str:
        arr = np.array(value, dtype=helper.tensor_dtype_to_np_dtype(elem))
        return emit("Constant", [], value=numpy_helper.from_array(arr))

    def reduce(op: str, x: str, axes: list[int]) -> str:
        if opset >= (13 if op == "ReduceSum" else 18):
            return emit(op, [x, const(axes, onnx.TensorProto.INT64)], keepdims=1)
        return emit(op, [x], axes=axes, keepdims=1)

    def attr(node: onnx.NodeProto, name: str, default):
        for a in node.attribute:
            if a.name == name:
                return helper.get_attribute_value(a)
        return default

    for node in graph.node:
        if node.domain not in ("", "ai.onnx"):
            out_nodes.append(node)
            continue
        op, x, y = node.op_type, node.input[0] if node.input else "", node.output[0] if node.output else ""
        if op == "Gelu":
            et = info[x][0]
            if attr(node, "approximate", b"none") == b"tanh":
                cube = emit("Pow", [x, const(3.0, et)])
                inner = emit("Mul", [emit("Add", [x, emit("Mul", [cube, const(0.044715, et)])]), const(math.sqrt(2 / math.pi), et)])
                gate = emit("Tanh", [inner])
            else:
                gate = emit("Erf", [emit("Div", [x, const(math.sqrt(2.0), et)])])
            emit("Mul", [emit("Mul", [x, const(0.5, et)]), emit("Add", [gate, const(1.0, et)])], y)
        elif op == "LayerNormalization":
            et, rank = info[x]
            axis = attr(node, "axis", -1) % rank
            axes = list(range(axis, rank))
            centred = emit("Sub", [x, reduce("ReduceMean", x, axes)])
            var = reduce("ReduceMean", emit("Mul", [centred, centred]), axes)
            rstd = emit("Pow", [emit("Add", [var, const(attr(node, "epsilon", 1e-5), et)]), const(-0.5, et)])
            scaled = emit("Mul", [emit("Mul", [centred, rstd]), node.input[1]])
            if len(node.input) > 2 and node.input[2]:
                emit("Add", [scaled, node.input[2]], y)
            else:
                emit("Identity", [scaled], y)
        elif op == "Softmax":
            rank = info[x][1]
            if opset < 13:
                axes = list(range(attr(node, "axis", 1) % rank, rank))
            else:
                axes = [attr(node, "axis", -1) % rank]
            e = emit("Exp", [emit("Sub", [x, reduce("ReduceMax", x, axes)])])
            emit("Div", [e, reduce("ReduceSum", e, axes)], y)
        elif op == "HardSwish":
            et = info[x][0]
            ramp = emit("Add", [emit("Div", [x, const(6.0, et)]), const(0.5, et)])
            gate = emit("Min", [emit("Max", [ramp, const(0.0, et)]), const(1.0, et)])
            emit("Mul", [x, gate], y)
        else:
            out_nodes.append(node)
    del graph.node[:]
    graph.node.extend(out_nodes)
    return model
