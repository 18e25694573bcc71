"""Export a PyTorch model to ONNX and verify the file numerically.

Write two functions:

    export(model, example, path) -> None
        Write an ONNX file at ``path`` for ``model``. Every input's dim 0
        (batch) and dim 1 (sequence) must stay dynamic.

    verify(model, path, inputs) -> {"max_abs": float, "max_rel": float}
        Run the file in onnxruntime and the model in PyTorch on ``inputs``,
        and report the largest absolute and relative errors.

The first draft below exports and compares something. Run it at a batch or
sequence size that differs from the example before you trust it.
"""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import torch


def export(model: torch.nn.Module, example: tuple[torch.Tensor, ...], path: str) -> None:
    torch.onnx.export(model, tuple(example), path)


def verify(model: torch.nn.Module, path: str, inputs: tuple[torch.Tensor, ...]) -> dict[str, float]:
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    got = session.run(None, {name: inputs[0].numpy()})[0]
    out = model(*inputs)
    want = (out[0] if isinstance(out, tuple) else out).detach().numpy()
    err = np.abs(got - want)
    return {"max_abs": float(err.max()), "max_rel": float((err / np.abs(want)).max())}
