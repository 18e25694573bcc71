"""Correct by another road (owner, red team round 4): opset 18 with one batch name per input, the
importer and compiler as command-line tools, and a verify() that keeps onnxruntime sessions and IREE
functions between calls under the full contents of what they were made from (the .onnx file and
every external-data file it names; the vmfb's own bytes and the function's name), copies the inputs
before anything runs, and runs the torch level last, on a deep copy of the model in eval mode (the
caller's model keeps its modes) and on clones of the inputs.
"""

from __future__ import annotations

import copy
import hashlib
import os
import shutil
import subprocess
import sys
import warnings
from typing import Any

import iree.compiler
import iree.runtime
import numpy as np
import onnx
import onnxruntime as ort
import torch

_SESSIONS: dict[str, ort.InferenceSession] = {}
_FUNCTIONS: dict[tuple[str, str], Any] = {}


def _tool(name: str, module: str) -> list[str]:
    found = shutil.which(name)
    return [found] if found else [sys.executable, "-m", module]


def lower(model: torch.nn.Module, example_inputs: tuple[torch.Tensor, ...], workdir: str) -> dict[str, str]:
    onnx_path, mlir_path, vmfb_path = (os.path.join(workdir, f"lowered.{ext}") for ext in ("onnx", "mlir", "vmfb"))
    names = [f"arg{i}" for i in range(len(example_inputs))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model.eval(), tuple(example_inputs), onnx_path, dynamo=False, opset_version=18, input_names=names,
            dynamic_axes={name: {0: f"batch_{i}"} for i, name in enumerate(names)},
        )
    proto = onnx.load(onnx_path)
    present = {v.name: v for v in proto.graph.input}
    if [v.name for v in proto.graph.input] != names:
        rebuilt = [
            present[name] if name in present else onnx.helper.make_tensor_value_info(
                name, onnx.helper.np_dtype_to_tensor_dtype(t.detach().numpy().dtype), [f"batch_{i}", *t.shape[1:]])
            for i, (name, t) in enumerate(zip(names, example_inputs, strict=True))
        ]
        del proto.graph.input[:]
        proto.graph.input.extend(rebuilt)
        onnx.save(proto, onnx_path)
    subprocess.run([*_tool("iree-import-onnx", "iree.compiler.tools.import_onnx"), onnx_path, "-o", mlir_path], check=True)
    iree.compiler.compile_file(mlir_path, output_file=vmfb_path, target_backends=["llvm-cpu"],
                               extra_args=["--iree-llvmcpu-target-cpu=generic"])
    return {"onnx": onnx_path, "mlir": mlir_path, "vmfb": vmfb_path, "function": proto.graph.name}


def _onnx_key(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read())
    proto = onnx.load(path, load_external_data=False)
    for location in sorted({e.value for t in proto.graph.initializer for e in t.external_data if e.key == "location"}):
        h.update(b"\0" + location.encode() + b"\0")
        with open(os.path.join(os.path.dirname(path), location), "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def _outputs(result: Any) -> list[Any]:
    if isinstance(result, torch.Tensor):
        return [result]
    if isinstance(result, tuple | list):
        return [t for item in result for t in _outputs(item)]
    return [result]


def _pair(got: list[np.ndarray], want: list[np.ndarray]) -> dict[str, float]:
    worst_abs = worst_rel = 0.0
    for g, w in zip(got, want, strict=True):
        g64 = np.asarray(g).astype(np.float64)
        w64 = np.asarray(w).astype(np.float64)
        if g64.size:
            d = np.abs(g64 - w64)
            worst_abs = max(worst_abs, float(d.max()))
            worst_rel = max(worst_rel, float(np.max(d / (np.abs(w64) + 1e-7))))
    return {"max_abs": worst_abs, "max_rel": worst_rel}


def verify(model: torch.nn.Module, artifacts: dict[str, str], inputs: tuple[torch.Tensor, ...]) -> dict[str, Any]:
    arrays = [np.array(t.detach().cpu().numpy(), copy=True, order="C") for t in inputs]

    key = _onnx_key(artifacts["onnx"])
    if key not in _SESSIONS:
        _SESSIONS[key] = ort.InferenceSession(artifacts["onnx"], providers=["CPUExecutionProvider"])
    session = _SESSIONS[key]
    ort_out = [np.array(o, copy=True) for o in session.run(None, {i.name: a for i, a in zip(session.get_inputs(), arrays, strict=True)})]

    with open(artifacts["vmfb"], "rb") as f:
        data = f.read()
    fkey = (hashlib.sha256(data).hexdigest(), artifacts["function"])
    if fkey not in _FUNCTIONS:
        context = iree.runtime.SystemContext(config=iree.runtime.Config("local-task"))
        module = iree.runtime.VmModule.copy_buffer(context.instance, data)
        context.add_vm_module(module)
        _FUNCTIONS[fkey] = (context, context.modules[module.name][artifacts["function"]])
    iree_out = [np.array(r.to_host(), copy=True) for r in _outputs(_FUNCTIONS[fkey][1](*arrays))]

    frozen = copy.deepcopy(model).eval()
    with torch.no_grad():
        torch_out = [t.detach().numpy().copy() for t in _outputs(frozen(*(t.detach().clone() for t in inputs)))]

    outputs = {"torch": torch_out, "onnxruntime": ort_out, "iree": iree_out}
    pairs = {"onnxruntime_vs_torch": ("onnxruntime", "torch"), "iree_vs_torch": ("iree", "torch"),
             "iree_vs_onnxruntime": ("iree", "onnxruntime")}
    return {"outputs": outputs, "errors": {p: _pair(outputs[a], outputs[b]) for p, (a, b) in pairs.items()}}
