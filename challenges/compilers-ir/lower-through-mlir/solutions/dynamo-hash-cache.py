"""Correct alternative: dynamo exporter + subprocess tools + content-hash caches.

lower:
- ONNX: ``torch.onnx.export(dynamo=True)`` at opset 18 with ``dynamic_shapes`` giving dim 0
  of every input a shared ``Dim("batch")``; every other dim stays static. torch.export
  specializes a size-1 example dim, so a batch-1 example is doubled (cat with itself) before
  exporting: the batch then really is symbolic.
- MLIR: ``python -m iree.compiler.tools.import_onnx`` in a subprocess.
- vmfb: the bundled ``iree-compile`` binary (found through iree.compiler.tools.binaries) in a
  subprocess, llvm-cpu, generic CPU, no numerics flags.
- The function name is read from the MLIR text (the importer's ``func.func @name``).

verify:
- torch: a deep copy of the model put in eval mode (the caller's model is left untouched),
  under ``torch.inference_mode()``.
- onnxruntime / IREE: sessions and modules cached by the SHA-256 of the files' bytes (for the
  .onnx file, its external-data files too: the dynamo exporter writes model.onnx.data), so a
  file rewritten at the same path is always re-read; IREE through ``load_vm_flatbuffer``'s
  BoundModule, indexed by the function name.
- errors: every output flattened and concatenated in float64 (int64 straight to float64).

Red team round 2 (a correct alternative).
"""

from __future__ import annotations

import copy
import hashlib
import os
import re
import subprocess
import sys
from typing import Any

import iree.runtime
import numpy as np
import onnx
import onnx.external_data_helper
import onnxruntime as ort
import torch


def lower(model: torch.nn.Module, example_inputs: tuple[torch.Tensor, ...], workdir: str) -> dict[str, str]:
    paths = {k: os.path.join(workdir, f"model.{k}") for k in ("onnx", "mlir", "vmfb")}
    model.eval()
    example = tuple(example_inputs)
    if example and example[0].shape[0] == 1:  # torch.export would specialize a size-1 batch
        example = tuple(torch.cat([t, t], dim=0) for t in example)
    batch = torch.export.Dim("batch")
    dynamic_shapes = tuple({0: batch} for _ in example)
    program = torch.onnx.export(model, example, dynamo=True, opset_version=18,
                                dynamic_shapes=dynamic_shapes, verbose=False)
    program.save(paths["onnx"])

    subprocess.run([sys.executable, "-m", "iree.compiler.tools.import_onnx", paths["onnx"], "-o", paths["mlir"]],
                   check=True, capture_output=True)
    from iree.compiler.tools.binaries import find_tool

    subprocess.run([find_tool("iree-compile"), paths["mlir"], "--iree-hal-target-backends=llvm-cpu",
                    "--iree-llvmcpu-target-cpu=generic", "-o", paths["vmfb"]], check=True, capture_output=True)
    with open(paths["mlir"]) as f:
        function = re.search(r"func\.func @([\w$.-]+)\(", f.read()).group(1)
    return {**paths, "function": function}


_SESSIONS: dict[str, Any] = {}
_MODULES: dict[str, Any] = {}


def _digest(path: str) -> tuple[str, bytes]:
    with open(path, "rb") as f:
        data = f.read()
    return hashlib.sha256(data).hexdigest(), data


def _onnx_digest(path: str) -> str:
    """Hash of the .onnx file and of every external-data file it refers to."""
    h = hashlib.sha256(_digest(path)[0].encode())
    model = onnx.load(path, load_external_data=False)
    locations = sorted({e.value for t in onnx.external_data_helper._get_all_tensors(model)
                        for e in t.external_data if e.key == "location"})
    for loc in locations:
        h.update(loc.encode() + _digest(os.path.join(os.path.dirname(path), loc))[0].encode())
    return h.hexdigest()


def _as_list(out: Any) -> list[torch.Tensor]:
    if isinstance(out, torch.Tensor):
        return [out]
    flat: list[torch.Tensor] = []
    for item in out:
        flat.extend(_as_list(item))
    return flat


def _errors(got: list[np.ndarray], want: list[np.ndarray]) -> dict[str, float]:
    assert len(got) == len(want)
    x = np.concatenate([np.asarray(g, dtype=np.float64).ravel() for g in got] + [np.zeros(0)])
    r = np.concatenate([np.asarray(w, dtype=np.float64).ravel() for w in want] + [np.zeros(0)])
    if x.size == 0:
        return {"max_abs": 0.0, "max_rel": 0.0}
    d = np.abs(x - r)
    return {"max_abs": float(d.max()), "max_rel": float((d / (np.abs(r) + 1e-7)).max())}


def verify(model: torch.nn.Module, artifacts: dict[str, str], inputs: tuple[torch.Tensor, ...]) -> dict[str, Any]:
    arrays = [t.detach().cpu().numpy().copy() for t in inputs]  # before the torch level: forward may write into its input
    frozen = copy.deepcopy(model).eval()
    with torch.inference_mode():
        torch_out = [t.detach().cpu().numpy().copy() for t in _as_list(frozen(*inputs))]

    key = _onnx_digest(artifacts["onnx"])
    if key not in _SESSIONS:
        _SESSIONS[key] = ort.InferenceSession(artifacts["onnx"], providers=["CPUExecutionProvider"])
    session = _SESSIONS[key]
    ort_out = session.run(None, {i.name: a for i, a in zip(session.get_inputs(), arrays, strict=True)})

    key, data = _digest(artifacts["vmfb"])
    if key not in _MODULES:
        _MODULES[key] = iree.runtime.load_vm_flatbuffer(data, driver="local-task")
    result = _MODULES[key][artifacts["function"]](*arrays)
    if not isinstance(result, (tuple, list)):
        result = [result]
    iree_out = [np.asarray(r.to_host()) if hasattr(r, "to_host") else np.asarray(r) for r in result]

    outputs = {"torch": torch_out, "onnxruntime": list(ort_out), "iree": iree_out}
    errors = {
        "onnxruntime_vs_torch": _errors(outputs["onnxruntime"], outputs["torch"]),
        "iree_vs_torch": _errors(outputs["iree"], outputs["torch"]),
        "iree_vs_onnxruntime": _errors(outputs["iree"], outputs["onnxruntime"]),
    }
    return {"outputs": outputs, "errors": errors}
