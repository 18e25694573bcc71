"""Fold BatchNormalization into the Conv that feeds it: a graph pass over ONNX.

Write ``fold_batchnorm(model: onnx.ModelProto) -> onnx.ModelProto``. See the
statement for the exact rules: which pairs fold, which must not, and what
the returned model must look like.

The draft below finds the pattern and does the arithmetic. It has not met
many graphs yet.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import numpy_helper


def fold_batchnorm(model: onnx.ModelProto) -> onnx.ModelProto:
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}
    for bn in list(graph.node):
        if bn.op_type != "BatchNormalization":
            continue
        conv = producer.get(bn.input[0])
        if conv is None or "Conv" not in conv.op_type:
            continue
        w = numpy_helper.to_array(inits[conv.input[1]])
        b = numpy_helper.to_array(inits[conv.input[2]])
        gamma, beta, mean, var = (numpy_helper.to_array(inits[n]) for n in bn.input[1:5])
        scale = gamma / np.sqrt(var + 1e-5)
        inits[conv.input[1]].CopyFrom(numpy_helper.from_array(w * scale[:, None, None, None], conv.input[1]))
        inits[conv.input[2]].CopyFrom(numpy_helper.from_array((b - mean) * scale + beta, conv.input[2]))
        conv.output[0] = bn.output[0]
        graph.node.remove(bn)
    return model
