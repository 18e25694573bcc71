"""Lower a PyTorch model to CPU code through ONNX and MLIR, and verify every level.

Write two functions (the statement defines them exactly):

- ``lower(model, example_inputs, workdir)``: PyTorch -> ONNX (torch.onnx)
  -> MLIR (iree-import-onnx) -> a compiled IREE module (iree-compile,
  llvm-cpu). Return the paths of the three files and the name of the
  function to call.
- ``verify(model, artifacts, inputs)``: run PyTorch, onnxruntime and IREE
  on the same inputs and report every level's outputs and the errors
  between them.

The tools are installed as Python packages, and their console scripts
(``iree-import-onnx``, ``iree-compile``) are on the sandbox's PATH. From
Python:

    torch.onnx.export(...)
    from iree.compiler.tools.import_onnx.__main__ import main, parse_arguments
    main(parse_arguments(["model.onnx", "-o", "model.mlir"]))    # = iree-import-onnx
    iree.compiler.compile_file("model.mlir", output_file="model.vmfb",
                               target_backends=["llvm-cpu"],
                               extra_args=["--iree-llvmcpu-target-cpu=generic"])
    iree.runtime.Config("local-task"), iree.runtime.SystemContext(config=...),
    iree.runtime.VmModule.copy_buffer(context.instance, data), context.add_vm_module(...)
"""

from __future__ import annotations

import os
from typing import Any

import iree.compiler
import iree.runtime  # noqa: F401 - for verify
import numpy as np
import onnx  # noqa: F401 - onnx.load(path).graph.name
import onnxruntime as ort  # noqa: F401 - for verify
import torch

LEVELS = ("torch", "onnxruntime", "iree")
PAIRS = {
    "onnxruntime_vs_torch": ("onnxruntime", "torch"),
    "iree_vs_torch": ("iree", "torch"),
    "iree_vs_onnxruntime": ("iree", "onnxruntime"),
}


def lower(model: torch.nn.Module, example_inputs: tuple[torch.Tensor, ...], workdir: str) -> dict[str, str]:
    onnx_path = os.path.join(workdir, "model.onnx")
    mlir_path = os.path.join(workdir, "model.mlir")
    vmfb_path = os.path.join(workdir, "model.vmfb")
    # 1. torch.onnx.export(...) to onnx_path: the batch (dim 0 of every input) must stay dynamic.
    # 2. iree-import-onnx: onnx_path -> mlir_path.
    # 3. iree-compile for llvm-cpu: mlir_path -> vmfb_path.
    raise NotImplementedError("lower: export, import and compile")
    return {"onnx": onnx_path, "mlir": mlir_path, "vmfb": vmfb_path, "function": "..."}


def verify(model: torch.nn.Module, artifacts: dict[str, str], inputs: tuple[torch.Tensor, ...]) -> dict[str, Any]:
    outputs: dict[str, list[np.ndarray]] = {}
    # outputs["torch"]: the model, eval mode, no_grad.
    # outputs["onnxruntime"]: ort.InferenceSession(artifacts["onnx"], providers=["CPUExecutionProvider"]).
    # outputs["iree"]: the function artifacts["function"] of the module in artifacts["vmfb"].
    raise NotImplementedError("verify: run the three levels and measure the three pairs")
    errors = {pair: {"max_abs": 0.0, "max_rel": 0.0} for pair in PAIRS}
    return {"outputs": outputs, "errors": errors}
