"""Dynamic axes done right, but the exporter's other defaults left alone.

No model.eval(): the dynamo exporter traces the train-mode model, and its
Dropout nodes keep training_mode=True, so onnxruntime drops random
activations. And external_data is left at its default (True): the weights
go to model.onnx.data, and the .onnx file alone cannot be loaded.
"""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import torch


def export(model, example, path):
    axes = {0: torch.export.Dim.DYNAMIC, 1: torch.export.Dim.DYNAMIC}
    torch.onnx.export(model, tuple(example), path, dynamo=True, dynamic_shapes=tuple(dict(axes) for _ in example))


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
