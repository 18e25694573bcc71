"""Correct alternative, red team round 3 (blind): the console scripts taken from PATH, as the statement promises.

lower: the TorchScript exporter at opset 20, inputs named after forward's parameters, dynamic dim 0 through
dynamic_axes; an argument the exporter dropped is put back in its place (dtype and sizes of the example).
The two tools are run as the console scripts the statement says are on the sandbox's PATH
(``iree-import-onnx``, ``iree-compile``), by name only: a grading sandbox without them on PATH fails it.

verify: torch level in eval mode, the caller's training flag restored afterwards, outputs cloned; IREE through
``iree.runtime.load_vm_flatbuffer(..., driver="local-task")`` (a BoundModule); the errors accumulated output by
output, float outputs in float32 arithmetic (the statement allows it), integer outputs in exact int64 arithmetic.
"""

from __future__ import annotations

import inspect
import os
import subprocess
import warnings

import iree.runtime
import numpy as np
import onnx
import onnxruntime as ort
import torch

PAIRS = {
    "onnxruntime_vs_torch": ("onnxruntime", "torch"),
    "iree_vs_torch": ("iree", "torch"),
    "iree_vs_onnxruntime": ("iree", "onnxruntime"),
}


def _tool(name):
    return name  # the statement: "The console scripts (iree-import-onnx, iree-compile) are on the sandbox's PATH"


def _arg_names(model, n):
    try:
        params = [p.name for p in inspect.signature(model.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    if len(params) < n or len(set(params[:n])) < n:
        params = [f"arg{i}" for i in range(n)]
    return [f"in_{p}" for p in params[:n]]


def lower(model, example_inputs, workdir):
    onnx_path = os.path.join(workdir, "model.onnx")
    mlir_path = os.path.join(workdir, "model.mlir")
    vmfb_path = os.path.join(workdir, "model.vmfb")
    names = _arg_names(model, len(example_inputs))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, tuple(example_inputs), onnx_path, dynamo=False, opset_version=20,
                          input_names=names, dynamic_axes={n: {0: "N"} for n in names})
    proto = onnx.load(onnx_path)
    present = {i.name: i for i in proto.graph.input}
    if [i.name for i in proto.graph.input] != names:
        new = []
        for n, t in zip(names, example_inputs, strict=True):
            if n in present:
                new.append(present[n])
            else:
                elem = onnx.helper.np_dtype_to_tensor_dtype(t.detach().numpy().dtype)
                new.append(onnx.helper.make_tensor_value_info(n, elem, ["N", *t.shape[1:]]))
        del proto.graph.input[:]
        proto.graph.input.extend(new)
        onnx.save(proto, onnx_path)
    subprocess.run([_tool("iree-import-onnx"), onnx_path, "-o", mlir_path], check=True, capture_output=True)
    subprocess.run([_tool("iree-compile"), mlir_path, "--iree-hal-target-backends=llvm-cpu",
                    "--iree-llvmcpu-target-cpu=generic", "-o", vmfb_path], check=True, capture_output=True)
    return {"onnx": onnx_path, "mlir": mlir_path, "vmfb": vmfb_path, "function": proto.graph.name}


def _flat(o):
    if isinstance(o, torch.Tensor):
        return [o]
    out = []
    for i in o:
        out += _flat(i)
    return out


def _pair(xs, rs):
    ma = mr = 0.0
    for x, r in zip(xs, rs, strict=True):
        x = np.asarray(x)
        r = np.asarray(r)
        if x.size == 0:
            continue
        if np.issubdtype(r.dtype, np.integer) or r.dtype == np.bool_:
            d = np.abs(x.astype(np.int64) - r.astype(np.int64)).astype(np.float64)
            den = np.abs(r.astype(np.int64)).astype(np.float64) + 1e-7
        else:
            x32 = x.astype(np.float32)
            r32 = r.astype(np.float32)
            d = np.abs(x32 - r32)
            den = np.abs(r32) + np.float32(1e-7)
        ma = max(ma, float(d.max()))
        mr = max(mr, float((d / den).max()))
    return {"max_abs": ma, "max_rel": mr}


def verify(model, artifacts, inputs):
    arrays = [np.array(t.detach().numpy(), copy=True) for t in inputs]  # before the torch level: forward may write into its input
    was_training = model.training
    modes = {m: m.training for m in model.modules()}
    model.eval()
    try:
        with torch.no_grad():
            t_out = [t.detach().clone().numpy() for t in _flat(model(*inputs))]
    finally:
        for m, mode in modes.items():
            m.training = mode
        assert model.training == was_training
    sess = ort.InferenceSession(artifacts["onnx"], providers=["CPUExecutionProvider"])
    o_out = sess.run(None, dict(zip([i.name for i in sess.get_inputs()], arrays, strict=True)))
    with open(artifacts["vmfb"], "rb") as f:
        bound = iree.runtime.load_vm_flatbuffer(f.read(), driver="local-task")
    res = bound[artifacts["function"]](*arrays)
    if not isinstance(res, (tuple, list)):
        res = (res,)
    i_out = [np.array(r.to_host(), copy=True) for r in res]
    outputs = {"torch": t_out, "onnxruntime": o_out, "iree": i_out}
    return {"outputs": outputs, "errors": {p: _pair(outputs[a], outputs[b]) for p, (a, b) in PAIRS.items()}}
