"""Named Dims on both axes: silently specialized when the example has one token.

torch.export specializes a dimension whose example size is 1 (it broadcasts,
so the trace cannot prove the graph general). With a named Dim the dynamo
exporter in torch 2.13 returns a graph whose sequence axis is fixed at 1,
without raising. Everything else is right.
"""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import torch


def export(model, example, path):
    model.eval()
    batch, seq = torch.export.Dim("batch"), torch.export.Dim("sequence")
    torch.onnx.export(model, tuple(example), path, dynamo=True, external_data=False, dynamic_shapes=tuple({0: batch, 1: seq} for _ in example))


def verify(model, path, inputs):
    model.eval()
    with torch.no_grad():
        out = model(*inputs)
    want = [t.numpy().astype(np.float64) for t in (out if isinstance(out, tuple) else (out,))]
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    got = sess.run(None, {a.name: t.numpy() for a, t in zip(sess.get_inputs(), inputs, strict=False)})
    max_abs = max_rel = 0.0
    for o, r in zip(got, want, strict=False):
        d = np.abs(o.astype(np.float64) - r)
        max_abs = max(max_abs, float(d.max()))
        max_rel = max(max_rel, float((d / (np.abs(r) + 1e-7)).max()))
    return {"max_abs": max_abs, "max_rel": max_rel}
