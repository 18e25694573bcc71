"""Reference: lower PyTorch -> ONNX -> MLIR -> CPU code, and verify every level.

lower:
- ONNX: the TorchScript exporter (``dynamo=False``, opset 17; fast, one
  self-contained file, exports in eval mode), with ``dynamic_axes`` making
  dim 0 of every input a named dimension. Without it the batch is frozen at
  the example's size in the ONNX file, in the MLIR types and in the vmfb.
  The TorchScript exporter leaves out of the graph an argument that
  ``forward`` never reads (an optional attention mask, say); it is put back,
  in its place, so that the graph's inputs are exactly forward's arguments.
- MLIR: iree-import-onnx, run in this process through the console script's
  own entry point (the same tool as the ``iree-import-onnx`` console script
  on the sandbox's PATH, without a child process). It writes the
  model in the torch dialect, one ``torch.operator "onnx.X"`` per ONNX node,
  in a ``func.func`` named after the ONNX graph.
- CPU code: ``iree.compiler.compile_file`` (it runs the iree-compile binary
  bundled with the package) for the llvm-cpu backend and a generic x86-64
  CPU, written to a .vmfb file.

verify: PyTorch eager (eval, no_grad), onnxruntime (default options, CPU
provider, inputs fed in the graph's order) and IREE (driver local-task, the
function named in the artifacts) on the same inputs, every output in order;
errors of each pair in float64, each maximum over every element of every
output. The torch level's arrays are copies: an output of ``forward`` can be
a view of an input or a weight, which the caller may change in place later.
"""

from __future__ import annotations

import os
import warnings
from typing import Any

import iree.compiler
import iree.runtime
import numpy as np
import onnx
import onnxruntime as ort
import torch

OPSET = 17
REL_EPS = 1e-7
LEVELS = ("torch", "onnxruntime", "iree")
PAIRS = {
    "onnxruntime_vs_torch": ("onnxruntime", "torch"),
    "iree_vs_torch": ("iree", "torch"),
    "iree_vs_onnxruntime": ("iree", "onnxruntime"),
}


# ---------------------------------------------------------------- lower


def lower(model: torch.nn.Module, example_inputs: tuple[torch.Tensor, ...], workdir: str) -> dict[str, str]:
    model.eval()
    onnx_path = os.path.join(workdir, "model.onnx")
    mlir_path = os.path.join(workdir, "model.mlir")
    vmfb_path = os.path.join(workdir, "model.vmfb")

    names = [f"input_{i}" for i in range(len(example_inputs))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation warning
        torch.onnx.export(
            model,
            tuple(example_inputs),
            onnx_path,
            dynamo=False,
            opset_version=OPSET,
            input_names=names,
            dynamic_axes={name: {0: "batch"} for name in names},
        )
    keep_every_argument(onnx_path, names, example_inputs)

    # iree-import-onnx model.onnx -o model.mlir, in-process.
    from iree.compiler.tools.import_onnx.__main__ import main, parse_arguments

    main(parse_arguments([onnx_path, "-o", mlir_path]))

    iree.compiler.compile_file(
        mlir_path,
        output_file=vmfb_path,
        target_backends=["llvm-cpu"],
        extra_args=["--iree-llvmcpu-target-cpu=generic"],
    )
    # The importer names the function after the ONNX graph ("main_graph" for torch.onnx).
    function = onnx.load(onnx_path, load_external_data=False).graph.name
    return {"onnx": onnx_path, "mlir": mlir_path, "vmfb": vmfb_path, "function": function}


def keep_every_argument(onnx_path: str, names: list[str], example_inputs: tuple[torch.Tensor, ...]) -> None:
    """Give the graph one input per forward argument, in order: put back the ones the exporter dropped as unused."""
    proto = onnx.load(onnx_path)
    inputs = {arg.name: arg for arg in proto.graph.input}
    if [arg.name for arg in proto.graph.input] == names:
        return
    kept = []
    for name, example in zip(names, example_inputs, strict=True):
        if name in inputs:
            kept.append(inputs[name])
        else:  # never read by the model: an input all the same, dynamic batch, the example's other sizes and dtype
            dtype = onnx.helper.np_dtype_to_tensor_dtype(example.detach().numpy().dtype)
            kept.append(onnx.helper.make_tensor_value_info(name, dtype, ["batch", *example.shape[1:]]))
    del proto.graph.input[:]
    proto.graph.input.extend(kept)
    onnx.save(proto, onnx_path)


# ---------------------------------------------------------------- verify


def _flatten(out: Any) -> list[torch.Tensor]:
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, list | tuple):
        return [t for item in out for t in _flatten(item)]
    raise TypeError(f"unsupported output type {type(out).__name__}")


def run_torch(model: torch.nn.Module, inputs: tuple[torch.Tensor, ...]) -> list[np.ndarray]:
    model.eval()
    with torch.no_grad():
        # Copies: an output can be a view of an input or a weight (x[:, 0], a CLS token expanded).
        return [t.numpy().copy() for t in _flatten(model(*inputs))]


def run_onnxruntime(path: str, arrays: list[np.ndarray]) -> list[np.ndarray]:
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    feed = {arg.name: a for arg, a in zip(session.get_inputs(), arrays, strict=True)}
    return session.run(None, feed)


def run_iree(vmfb_path: str, function: str, arrays: list[np.ndarray]) -> list[np.ndarray]:
    context = iree.runtime.SystemContext(config=iree.runtime.Config("local-task"))
    with open(vmfb_path, "rb") as f:
        module = iree.runtime.VmModule.copy_buffer(context.instance, f.read())
    context.add_vm_module(module)
    result = context.modules[module.name][function](*arrays)
    # One output comes back as a DeviceArray, several as a tuple of them.
    results = result if isinstance(result, tuple | list) else (result,)
    return [np.asarray(r.to_host()) for r in results]


def measure(got: list[np.ndarray], want: list[np.ndarray]) -> dict[str, float]:
    if len(got) != len(want):
        raise ValueError(f"{len(got)} outputs against {len(want)}")
    max_abs = max_rel = 0.0
    for g, w in zip(got, want, strict=True):
        if g.shape != w.shape:
            raise ValueError(f"output shape {g.shape} against {w.shape}")
        g64, w64 = g.astype(np.float64), w.astype(np.float64)
        diff = np.abs(g64 - w64)
        max_abs = max(max_abs, float(diff.max(initial=0.0)))
        max_rel = max(max_rel, float((diff / (np.abs(w64) + REL_EPS)).max(initial=0.0)))
    return {"max_abs": max_abs, "max_rel": max_rel}


def verify(model: torch.nn.Module, artifacts: dict[str, str], inputs: tuple[torch.Tensor, ...]) -> dict[str, Any]:
    # Keep every input's dtype: IREE checks element types (int64 ids stay int64). Copies, taken before any
    # level runs: a forward that writes into its input (x.add_(...)) would change arrays that share its memory.
    arrays = [t.detach().cpu().numpy().copy() for t in inputs]
    outputs = {
        "torch": run_torch(model, inputs),
        "onnxruntime": run_onnxruntime(artifacts["onnx"], arrays),
        "iree": run_iree(artifacts["vmfb"], artifacts["function"], arrays),
    }
    errors = {pair: measure(outputs[a], outputs[b]) for pair, (a, b) in PAIRS.items()}
    return {"outputs": outputs, "errors": errors}
