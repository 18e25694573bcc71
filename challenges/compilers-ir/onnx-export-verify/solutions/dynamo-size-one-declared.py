"""Dim.DYNAMIC on both axes, the example as given: outputs declared at the example's size 1.

The input axes stay dynamic, and the file computes the right values at
every size, but torch.export traces the outputs' shapes at a one-token
example, so causal attention's probabilities are declared (batch, heads,
1, 1). The shipped accepted version of this file, before red team round 1
added the declared-shape probes.
"""

from __future__ import annotations

import math

import numpy as np
import onnxruntime as ort
import torch


def _stretched(example):
    b, s = max(example[0].shape[0], 2), max(example[0].shape[1], 2)
    if b == s:
        s += 1
    return tuple(t.index_select(0, torch.arange(b) % t.shape[0]).index_select(1, torch.arange(s) % t.shape[1]) for t in example)


def export(model, example, path):
    model.eval()
    axes = {0: torch.export.Dim.DYNAMIC, 1: torch.export.Dim.DYNAMIC}
    torch.onnx.export(model, example, path, dynamo=True, external_data=False, dynamic_shapes=tuple(dict(axes) for _ in example))


def verify(model, path, inputs):
    model.eval()
    with torch.no_grad():
        out = model(*inputs)
    want = list(out) if isinstance(out, (tuple, list)) else [out]
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    got = sess.run(None, {a.name: np.asarray(t) for a, t in zip(sess.get_inputs(), inputs, strict=True)})
    if len(got) != len(want):
        raise ValueError(f"{len(got)} outputs in the file, {len(want)} from the model")
    diffs, rels = [], []
    for o, r in zip(got, want, strict=True):
        if tuple(o.shape) != tuple(r.shape):
            raise ValueError(f"output of shape {tuple(o.shape)}, the model's is {tuple(r.shape)}")
        d = (torch.from_numpy(o).double() - r.double()).abs()
        diffs.append(d.flatten())
        rels.append((d / (r.double().abs() + 1e-7)).flatten())

    def worst(parts):
        every = torch.cat(parts)
        if every.isnan().any():
            return math.inf
        return every.max().item() if every.numel() else 0.0

    return {"max_abs": worst(diffs), "max_rel": worst(rels)}
