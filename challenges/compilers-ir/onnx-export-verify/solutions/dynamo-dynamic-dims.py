"""Correct, with the dynamo exporter: Dim.DYNAMIC on both axes of every input.

Dim.DYNAMIC (unlike a named Dim) does not let torch.export silently
specialize an axis whose example size is 1. external_data=False keeps the
weights inside the file. The verification computes in torch, float64.
"""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import torch


def export(model, example, path):
    model.eval()
    axes = {0: torch.export.Dim.DYNAMIC, 1: torch.export.Dim.DYNAMIC}
    torch.onnx.export(model, tuple(example), path, dynamo=True, external_data=False, dynamic_shapes=tuple(dict(axes) for _ in example))


def verify(model, path, inputs):
    model.eval()
    with torch.no_grad():
        out = model(*inputs)
    want = list(out) if isinstance(out, (tuple, list)) else [out]
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    got = sess.run(None, {a.name: np.asarray(t) for a, t in zip(sess.get_inputs(), inputs, strict=False)})
    diffs = [(torch.from_numpy(o).double() - r.double()).abs() for o, r in zip(got, want, strict=True)]
    rels = [d / (r.double().abs() + 1e-7) for d, r in zip(diffs, want, strict=False)]
    return {
        "max_abs": max(d.max().item() for d in diffs),
        "max_rel": max(r.max().item() for r in rels),
    }
