"""Reference: an accelerator coverage report and a decomposition pass.

The report walks every graph, subgraphs of If/Loop/Scan included, and keys a
node by its op type, prefixed by its domain when that domain is not the
default ONNX one: a contrib or custom-domain node is never supported, even
when an ONNX op of the same name is.

The rewrite replaces each Gelu, LayerNormalization, Softmax and HardSwish by
supported ops, reading the model's opset for the details that changed across
versions (Reduce* take ``axes`` as an input from opset 13 for ReduceSum and
from opset 18 for ReduceMean/ReduceMax; Softmax before opset 13 works on the
input flattened to 2-D at ``axis``), creating constants in the input's
element type, and naming every new tensor and node freshly.
"""

from __future__ import annotations

import itertools
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
DEFAULT_DOMAINS = ("", "ai.onnx")


def op_key(node: onnx.NodeProto) -> str:
    return node.op_type if node.domain in DEFAULT_DOMAINS else f"{node.domain}::{node.op_type}"


def is_supported(node: onnx.NodeProto) -> bool:
    return node.domain in DEFAULT_DOMAINS and node.op_type in SUPPORTED_OPS


def _all_nodes(graph: onnx.GraphProto):
    for node in graph.node:
        yield node
        for attr in node.attribute:
            if attr.type == AttributeProto.GRAPH:
                yield from _all_nodes(attr.g)
            elif attr.type == AttributeProto.GRAPHS:
                for sub in attr.graphs:
                    yield from _all_nodes(sub)


def _all_graphs(graph: onnx.GraphProto):
    yield graph
    for node in _all_nodes(graph):
        for attr in node.attribute:
            if attr.type == AttributeProto.GRAPH:
                yield attr.g
            elif attr.type == AttributeProto.GRAPHS:
                yield from attr.graphs


def coverage_report(model: onnx.ModelProto) -> dict[str, int]:
    counts = Counter(op_key(n) for n in _all_nodes(model.graph) if not is_supported(n))
    return dict(sorted(counts.items()))


# ---------------------------------------------------------------- the rewrite


class _Rewriter:
    def __init__(self, model: onnx.ModelProto) -> None:
        self.model = model
        self.opset = next(o.version for o in model.opset_import if o.domain in DEFAULT_DOMAINS)
        inferred = onnx.shape_inference.infer_shapes(model)
        self.types: dict[str, tuple[int, int | None]] = {}
        g = inferred.graph
        for vi in itertools.chain(g.input, g.value_info, g.output):
            tt = vi.type.tensor_type
            self.types[vi.name] = (tt.elem_type, len(tt.shape.dim) if tt.HasField("shape") else None)
        for init in model.graph.initializer:
            self.types[init.name] = (init.data_type, len(init.dims))
        # Every name the model uses, in every graph (subgraphs' inputs, initializers
        # and value_info included): a made-up name must be none of them.
        self.taken: set[str] = set()
        for node in _all_nodes(model.graph):
            self.taken.update(node.input)
            self.taken.update(node.output)
            self.taken.add(node.name)
        for graph in _all_graphs(model.graph):
            for vi in itertools.chain(graph.input, graph.output, graph.value_info):
                self.taken.add(vi.name)
            self.taken.update(i.name for i in graph.initializer)
            self.taken.update(s.values.name for s in graph.sparse_initializer)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []

    def fresh(self, hint: str) -> str:
        for i in itertools.count():
            name = f"{hint}_{i}"
            if name not in self.taken:
                self.taken.add(name)
                return name
        raise AssertionError

    def elem(self, name: str) -> int:
        return self.types[name][0]

    def rank(self, name: str) -> int:
        rank = self.types.get(name, (0, None))[1]
        if rank is None:
            raise ValueError(f"the rank of {name!r} is unknown")
        return rank

    def const(self, value, elem_type: int, hint: str) -> str:
        arr = np.asarray(value, dtype=helper.tensor_dtype_to_np_dtype(elem_type))
        name = self.fresh(hint)
        self.inits.append(numpy_helper.from_array(arr, name))
        return name

    def op(self, op_type: str, inputs: list[str], hint: str, out: str | None = None, **attrs) -> str:
        out = out or self.fresh(hint)
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=self.fresh(f"{hint}_{op_type}"), **attrs))
        return out

    def reduce(self, op_type: str, x: str, axes: list[int], hint: str) -> str:
        axes_input = self.opset >= (13 if op_type == "ReduceSum" else 18)
        if axes_input:
            return self.op(op_type, [x, self.const(axes, onnx.TensorProto.INT64, f"{hint}_axes")], hint, keepdims=1)
        return self.op(op_type, [x], hint, axes=axes, keepdims=1)

    def trailing_axes(self, x: str, axis: int) -> list[int]:
        """Axes from ``axis`` to the last one; negative axes need no rank."""
        if axis < 0:
            return list(range(axis, 0))
        return list(range(axis, self.rank(x)))

    # -- one method per unsupported op --------------------------------------

    def Gelu(self, node: onnx.NodeProto, h: str) -> None:
        x, y = node.input[0], node.output[0]
        t = self.elem(x)
        approximate = "none"
        for a in node.attribute:
            if a.name == "approximate":
                approximate = a.s.decode()
        if approximate == "tanh":
            x3 = self.op("Mul", [self.op("Mul", [x, x], h), x], h)
            inner = self.op("Add", [x, self.op("Mul", [x3, self.const(0.044715, t, f"{h}_c")], h)], h)
            th = self.op("Tanh", [self.op("Mul", [inner, self.const(np.sqrt(2.0 / np.pi), t, f"{h}_k")], h)], h)
        else:
            th = self.op("Erf", [self.op("Mul", [x, self.const(1.0 / np.sqrt(2.0), t, f"{h}_k")], h)], h)
        one_plus = self.op("Add", [th, self.const(1.0, t, f"{h}_one")], h)
        half_x = self.op("Mul", [x, self.const(0.5, t, f"{h}_half")], h)
        self.op("Mul", [half_x, one_plus], h, out=y)

    def LayerNormalization(self, node: onnx.NodeProto, h: str) -> None:
        x, scale = node.input[0], node.input[1]
        # An optional input or output may be missing or written "": B is absent
        # then. Mean and InvStdDev, named or not, are read by nobody: not computed.
        bias = node.input[2] if len(node.input) > 2 and node.input[2] else None
        axis, eps = -1, 1e-5
        for a in node.attribute:
            if a.name == "axis":
                axis = a.i
            elif a.name == "epsilon":
                eps = a.f
        t = self.elem(x)
        axes = self.trailing_axes(x, axis)
        mean = self.reduce("ReduceMean", x, axes, h)
        d = self.op("Sub", [x, mean], h)
        var = self.reduce("ReduceMean", self.op("Mul", [d, d], h), axes, h)
        std = self.op("Sqrt", [self.op("Add", [var, self.const(eps, t, f"{h}_eps")], h)], h)
        normed = self.op("Mul", [d, self.op("Reciprocal", [std], h)], h)
        if bias is None:
            self.op("Mul", [normed, scale], h, out=node.output[0])
        else:
            self.op("Add", [self.op("Mul", [normed, scale], h), bias], h, out=node.output[0])

    def Softmax(self, node: onnx.NodeProto, h: str) -> None:
        x = node.input[0]
        legacy = self.opset < 13
        axis = 1 if legacy else -1
        for a in node.attribute:
            if a.name == "axis":
                axis = a.i
        axes = self.trailing_axes(x, axis) if legacy else [axis]
        shifted = self.op("Sub", [x, self.reduce("ReduceMax", x, axes, h)], h)
        e = self.op("Exp", [shifted], h)
        self.op("Div", [e, self.reduce("ReduceSum", e, axes, h)], h, out=node.output[0])

    def HardSwish(self, node: onnx.NodeProto, h: str) -> None:
        x = node.input[0]
        t = self.elem(x)
        lin = self.op("Add", [self.op("Mul", [x, self.const(1.0 / 6.0, t, f"{h}_sixth")], h), self.const(0.5, t, f"{h}_half")], h)
        gate = self.op("Clip", [lin, self.const(0.0, t, f"{h}_lo"), self.const(1.0, t, f"{h}_hi")], h)
        self.op("Mul", [x, gate], h, out=node.output[0])

    def run(self) -> onnx.ModelProto:
        for node in self.model.graph.node:
            rule = getattr(self, node.op_type, None) if node.domain in DEFAULT_DOMAINS else None
            if rule is None or node.op_type not in ("Gelu", "LayerNormalization", "Softmax", "HardSwish"):
                self.nodes.append(node)
                continue
            rule(node, node.op_type.lower())
        graph = self.model.graph
        del graph.node[:]
        graph.node.extend(self.nodes)
        graph.initializer.extend(self.inits)
        return self.model


def decompose(model: onnx.ModelProto) -> onnx.ModelProto:
    out = onnx.ModelProto()
    out.CopyFrom(model)
    return _Rewriter(out).run()
