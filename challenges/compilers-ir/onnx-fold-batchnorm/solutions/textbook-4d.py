"""The textbook fold for one ResNet: any "Conv*" node, 4-D filters, epsilon 1e-5.

It matches ConvTranspose as well (whose weight is laid out (C_in, C_out/g,
...), so scaling axis 0 scales the wrong channels), reshapes the scale to
(-1, 1, 1, 1) (wrong for Conv1d and Conv3d filters), and ignores the
BatchNormalization's epsilon attribute. Copies, readers and constants are
handled properly.
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
        readers: dict[str, int] = {}
        for n in g.node:
            for name in n.input:
                readers[name] = readers.get(name, 0) + 1
        graph_outputs = {o.name for o in g.output}
        for i, b in enumerate(g.node):
            if b.op_type != "BatchNormalization":
                continue
            c = made_by.get(b.input[0])
            if c is None or not c.op_type.startswith("Conv"):
                continue
            if readers[c.output[0]] != 1 or c.output[0] in graph_outputs:
                continue
            names = [c.input[1], *[n for n in c.input[2:3] if n], *list(b.input[1:5])]
            if any(n not in inits or n in runtime for n in names):
                continue
            w = numpy_helper.to_array(inits[c.input[1]])
            bias = numpy_helper.to_array(inits[c.input[2]]) if len(c.input) > 2 and c.input[2] else 0.0
            gamma, beta, mean, var = (numpy_helper.to_array(inits[n]) for n in b.input[1:5])
            s = gamma / np.sqrt(var + 1e-5)
            wn, bn = b.output[0] + "_W", b.output[0] + "_B"
            try:
                w2 = w * s.reshape(-1, 1, 1, 1)
            except ValueError:
                continue
            g.initializer.extend(
                [
                    numpy_helper.from_array(w2.astype(np.float32), wn),
                    numpy_helper.from_array(((bias - mean) * s + beta).astype(np.float32), bn),
                ]
            )
            new = helper.make_node(c.op_type, [c.input[0], wn, bn], [b.output[0]])
            new.attribute.extend(c.attribute)
            g.node[i].CopyFrom(new)
            g.node.remove(c)
            changed = True
            break
    return out
