"""Constant folding for ONNX models.

Write ``fold_constants(model)``: evaluate every node whose inputs are all
constant and replace it by initializers, remove Identity nodes and dead
nodes, and return a valid model that computes the same outputs for every
feed. The version below is a first attempt: it folds some nodes, but not all
it should, and not only those it may.
"""

from __future__ import annotations

import onnx
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator


def fold_constants(model: onnx.ModelProto) -> onnx.ModelProto:
    model = onnx.ModelProto.FromString(model.SerializeToString())
    graph = model.graph
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    initializers = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    kept = []
    for node in graph.node:
        if node.input and all(name in initializers for name in node.input):
            feeds = {name: initializers[name] for name in node.input}
            # One-node function at the model's opset (a bare NodeProto would run at the newest opset).
            fn = helper.make_function("fold", "node", list(feeds), list(node.output), [node],
                                      opset_imports=[helper.make_opsetid("", opset)])  # fmt: skip
            outputs = ReferenceEvaluator(fn).run(None, feeds, attributes={})
            for name, value in zip(node.output, outputs):
                graph.initializer.append(numpy_helper.from_array(value, name))
        else:
            kept.append(node)
    del graph.node[:]
    graph.node.extend(kept)
    return model
