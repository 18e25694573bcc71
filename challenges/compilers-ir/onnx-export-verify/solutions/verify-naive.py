"""A correct export; a verification that checks less than it reports.

verify() compares only the first output, runs the PyTorch model in whatever
mode it arrives in (train mode: dropout on), and divides by |r| (inf, or nan
for 0/0, where the reference is exactly 0).
"""

from __future__ import annotations

import warnings

import numpy as np
import onnxruntime as ort
import torch


def export(model, example, path):
    names = [f"in{i}" for i in range(len(example))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model,
            tuple(example),
            path,
            dynamo=False,
            input_names=names,
            dynamic_axes={n: {0: "batch", 1: "sequence"} for n in names},
        )


def verify(model, path, inputs):
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    got = sess.run(None, {a.name: t.numpy() for a, t in zip(sess.get_inputs(), inputs, strict=False)})[0]
    with torch.no_grad():
        out = model(*inputs)
    want = (out[0] if isinstance(out, tuple) else out).numpy()
    d = np.abs(got.astype(np.float64) - want)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = d / np.abs(want)
    return {"max_abs": float(d.max()), "max_rel": float(rel.max())}
