"""Folds every Conv -> BatchNormalization pair, without asking who else reads the Conv.

When the Conv's raw output also feeds a skip connection or is a graph
output, the fold removes the tensor those readers need (or hands them the
normalized values instead). Everything else is right.
"""

from __future__ import annotations

import copy

import numpy as np
import onnx
from onnx import helper, numpy_helper


def fold_batchnorm(model: onnx.ModelProto) -> onnx.ModelProto:
    out = copy.deepcopy(model)
    g = out.graph
    changed = True
    while changed:
        changed = False
        inits = {t.name: t for t in g.initializer}
        runtime = {i.name for i in g.input}
        made_by = {o: n for n in g.node for o in n.output}
        for i, b in enumerate(g.node):
            if b.op_type != "BatchNormalization":
                continue
            c = made_by.get(b.input[0])
            if c is None or c.op_type != "Conv":
                continue
            names = [c.input[1], *[n for n in c.input[2:3] if n], *list(b.input[1:5])]
            if any(n not in inits or n in runtime for n in names):
                continue
            w = numpy_helper.to_array(inits[c.input[1]]).astype(np.float64)
            bias = numpy_helper.to_array(inits[c.input[2]]) if len(c.input) > 2 and c.input[2] else 0.0
            attrs = {a.name: helper.get_attribute_value(a) for a in b.attribute}
            gamma, beta, mean, var = (numpy_helper.to_array(inits[n]).astype(np.float64) for n in b.input[1:5])
            s = gamma / np.sqrt(var + attrs.get("epsilon", 1e-5))
            wn, bn = b.output[0] + "_W", b.output[0] + "_B"
            g.initializer.extend(
                [
                    numpy_helper.from_array((w * s.reshape([-1] + [1] * (w.ndim - 1))).astype(np.float32), wn),
                    numpy_helper.from_array(((bias - mean) * s + beta).astype(np.float32), bn),
                ]
            )
            new = helper.make_node("Conv", [c.input[0], wn, bn], [b.output[0]])
            new.attribute.extend(c.attribute)
            g.node[i].CopyFrom(new)
            g.node.remove(c)
            changed = True
            break
    return out
