"""Named Dims on both axes, the example as given: silently specialized when the example has one token.

torch.export specializes a dimension whose example size is 1 (it broadcasts,
so the trace cannot prove the graph general). With a named Dim the dynamo
exporter in torch 2.13 returns a graph whose sequence axis is fixed at 1,
without raising. Everything else is right.
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
    axes = {0: torch.export.Dim("batch"), 1: torch.export.Dim("sequence")}
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
