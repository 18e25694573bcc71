"""What the public and hidden probes of lower-through-mlir share, imported by both as ``probe_common``."""

from __future__ import annotations

import functools
import inspect
import os
import tempfile
import warnings
from collections.abc import Sequence
from typing import Any

import compile_cache
import iree.compiler
import iree.compiler.ir
import iree.runtime
import numpy as np
import onnx
import onnxruntime as ort
import torch
import torch.nn.functional as F
from torch import nn

# ---------------------------------------------------------------- the pipeline the probes build

OPSET = 17
CPU_FLAGS = ["--iree-llvmcpu-target-cpu=generic"]
# A deployment setting, not a bug in the tools: feed every matmul's operands to
# the CPU in bfloat16 (8 significant bits) while accumulating in float32.
BF16_MATMULS = [
    "--iree-global-opt-demote-contraction-inputs-type=bf16",
    "--iree-global-opt-demote-contraction-inputs-operations=matmul",
]
LEVELS = ("torch", "onnxruntime", "iree")
PAIRS = {
    "onnxruntime_vs_torch": ("onnxruntime", "torch"),
    "iree_vs_torch": ("iree", "torch"),
    "iree_vs_onnxruntime": ("iree", "onnxruntime"),
}
ARTIFACT_FILES = ("onnx", "mlir", "vmfb")


def flatten(out: Any) -> list[torch.Tensor]:
    if isinstance(out, torch.Tensor):
        return [out]
    return [t for item in out for t in flatten(item)]


def eager(model: nn.Module, inputs: tuple[torch.Tensor, ...]) -> list[np.ndarray]:
    with torch.no_grad():
        return [t.numpy().copy() for t in flatten(model(*inputs))]


def numpy_inputs(inputs: tuple[torch.Tensor, ...]) -> list[np.ndarray]:
    return [t.detach().numpy().copy() for t in inputs]


def first_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    text = text.split("; while invoking")[0]  # IREE appends its VM call stack
    return f"{type(exc).__name__}: {text[:300]}"


def import_onnx(onnx_path: str, mlir_path: str) -> None:
    """What the iree-import-onnx console script runs, in this process."""
    from iree.compiler.tools.import_onnx.__main__ import main, parse_arguments

    main(parse_arguments([onnx_path, "-o", mlir_path]))


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _import_mlir(onnx_path: str, mlir_path: str) -> bytes:
    import_onnx(onnx_path, mlir_path)
    return _read(mlir_path)


def _compile_vmfb(mlir_path: str, vmfb_path: str, flags: list[str]) -> bytes:
    iree.compiler.compile_file(mlir_path, output_file=vmfb_path, target_backends=["llvm-cpu"], extra_args=flags)
    return _read(vmfb_path)


def _write(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


def build_artifacts(
    model: nn.Module, example: tuple[torch.Tensor, ...], graph_name: str, iree_flags: Sequence[str] = ()
) -> dict[str, str]:
    """The probe's own lowering: TorchScript export (dynamic batch), iree-import-onnx, iree-compile.

    The graph's inputs are named after ``forward``'s parameters ("x", "ids",
    "mask"), not "input_0": a verify() that feeds onnxruntime by the names its
    own lower() chose, instead of in the order of ``session.get_inputs()``,
    fails on artifacts it did not make.

    The export runs every time (a tenth of a second); the import and the
    compile, the same for the same ONNX bytes and flags, come from the
    platform's compile cache (runner/compile_cache.py, filled when the
    sandbox environment is built: challenge.toml ``warm = ["compile"]``) when
    it holds them, else run here. Either way the three files are written.
    """
    workdir = tempfile.mkdtemp(prefix="probe-lowering-")
    paths = {key: os.path.join(workdir, f"model.{key}") for key in ARTIFACT_FILES}
    names = list(inspect.signature(model.forward).parameters)[: len(example)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TracerWarning of a traced Python branch, among others
        torch.onnx.export(
            model,
            example,
            paths["onnx"],
            dynamo=False,
            opset_version=OPSET,
            input_names=names,
            dynamic_axes={name: {0: "batch"} for name in names},
        )
    proto = onnx.load(paths["onnx"])
    proto.graph.name = graph_name  # iree-import-onnx names the function after the graph
    onnx.save(proto, paths["onnx"])
    # The importer reads the graph through the onnx package: its version is an input too.
    import_key = [onnx.__version__, _read(paths["onnx"])]
    mlir = compile_cache.cached("iree-import-onnx", import_key, functools.partial(_import_mlir, paths["onnx"], paths["mlir"]))
    _write(paths["mlir"], mlir)
    flags = [*CPU_FLAGS, *iree_flags]
    vmfb = compile_cache.cached("iree-compile-llvm-cpu", [*flags, mlir], functools.partial(_compile_vmfb, paths["mlir"], paths["vmfb"], flags))
    _write(paths["vmfb"], vmfb)
    return {**paths, "function": graph_name}


def run_onnxruntime(path: str, arrays: list[np.ndarray]) -> list[np.ndarray]:
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    feed = {arg.name: a for arg, a in zip(session.get_inputs(), arrays, strict=True)}
    return [np.asarray(o) for o in session.run(None, feed)]


def run_iree(vmfb_path: str, function: str, arrays: list[np.ndarray]) -> list[np.ndarray]:
    config = iree.runtime.Config("local-task")
    context = iree.runtime.SystemContext(config=config)
    with open(vmfb_path, "rb") as f:
        module = iree.runtime.VmModule.copy_buffer(context.instance, f.read())
    context.add_vm_module(module)
    result = context.modules[module.name][function](*arrays)
    results = result if isinstance(result, tuple | list) else (result,)
    return [np.asarray(r.to_host()) for r in results]


def run_levels(model: nn.Module, artifacts: dict[str, str], inputs: tuple[torch.Tensor, ...]) -> dict[str, list[np.ndarray]]:
    arrays = numpy_inputs(inputs)
    return {
        "torch": eager(model, inputs),
        "onnxruntime": run_onnxruntime(artifacts["onnx"], arrays),
        "iree": run_iree(artifacts["vmfb"], artifacts["function"], arrays),
    }


# ---------------------------------------------------------------- observing a lowering


def mlir_summary(text: str) -> tuple[list[str], set[str]]:
    """The function names and the torch.operator names in an MLIR module."""
    module = iree.compiler.ir.Module.parse(text, iree.compiler.ir.Context())
    functions: list[str] = []
    operators: set[str] = set()

    def walk(op: Any) -> None:
        for region in op.regions:
            for block in region.blocks:
                for child in block.operations:
                    inner = child.operation
                    if inner.name == "func.func":
                        functions.append(iree.compiler.ir.StringAttr(inner.attributes["sym_name"]).value)
                    elif inner.name == "torch.operator":
                        operators.add(iree.compiler.ir.StringAttr(inner.attributes["name"]).value)
                    walk(inner)

    walk(module.operation)
    return functions, operators


def artifact_problem(artifacts: Any, workdir: str) -> str | None:
    """None if lower() returned the three files and the function name as specified, else what is wrong."""
    if not isinstance(artifacts, dict):
        return f"lower() returned a {type(artifacts).__name__}, not a dict"
    missing = [key for key in (*ARTIFACT_FILES, "function") if key not in artifacts]
    if missing:
        return f"lower() returned no {', '.join(repr(k) for k in missing)}"
    root = os.path.realpath(workdir)
    for key in ARTIFACT_FILES:
        path = artifacts[key]
        if not isinstance(path, str | os.PathLike) or not os.path.isfile(path):
            return f"artifacts[{key!r}] = {path!r} is not a file"
        if os.path.commonpath([root, os.path.realpath(path)]) != root:
            return f"artifacts[{key!r}] = {str(path)!r} is not inside workdir"
    function = artifacts["function"]
    if not isinstance(function, str):
        return f"artifacts['function'] is a {type(function).__name__}, not a str"
    try:
        graph = onnx.load(str(artifacts["onnx"])).graph
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        return f"the .onnx file does not load: {first_line(exc)}"
    try:
        with open(artifacts["mlir"], encoding="utf-8") as f:
            functions, operators = mlir_summary(f.read())
    except Exception as exc:  # noqa: BLE001
        return f"the .mlir file does not parse as MLIR: {first_line(exc)}"
    if function not in functions:
        return f"the .mlir file has no function {function!r}; its functions are {functions}"
    onnx_ops = {node.op_type for node in graph.node}
    imported = {name.removeprefix("onnx.") for name in operators if name.startswith("onnx.")}
    if not onnx_ops <= imported or not imported <= onnx_ops | {"Constant"}:
        return (
            "the .mlir file is not iree-import-onnx's import of the .onnx file: the ONNX graph has the ops "
            f"{sorted(onnx_ops)}, the MLIR has torch.operator 'onnx.*' ops {sorted(imported)}"
        )
    return None


def lowering_case(
    solution: Any, model: nn.Module, example: tuple[torch.Tensor, ...], runs: list[tuple[torch.Tensor, ...]]
) -> dict[str, Any]:
    """Call lower(), then run its .onnx file in onnxruntime and its .vmfb in IREE on other batches."""
    want = [eager(model, inputs) for inputs in runs]  # before lower() can touch the model
    workdir = tempfile.mkdtemp(prefix="lower-")
    artifacts = solution.lower(model, example, workdir)
    problem = artifact_problem(artifacts, workdir)
    if problem is not None:
        return {"artifacts": problem, "runs": []}
    out: dict[str, Any] = {"artifacts": "ok", "runs": []}
    for inputs, torch_out in zip(runs, want, strict=True):
        arrays = numpy_inputs(inputs)
        entry: dict[str, Any] = {"batch": int(arrays[0].shape[0]), "torch": torch_out}
        try:
            entry["onnxruntime"] = run_onnxruntime(str(artifacts["onnx"]), arrays)
        except Exception as exc:  # noqa: BLE001
            entry["onnxruntime"] = first_line(exc)
        try:
            entry["iree"] = run_iree(str(artifacts["vmfb"]), artifacts["function"], arrays)
        except Exception as exc:  # noqa: BLE001
            entry["iree"] = first_line(exc)
        out["runs"].append(entry)
    return out


# ---------------------------------------------------------------- observing a verification


def as_array(value: Any) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    if hasattr(value, "to_host"):  # an iree.runtime DeviceArray
        return np.asarray(value.to_host())
    return np.asarray(value)


def observe_report(report: Any) -> Any:
    """The candidate's report as plain data, or a string saying how it breaks the schema."""
    if not isinstance(report, dict) or "outputs" not in report or "errors" not in report:
        return f"verify() returned a {type(report).__name__}, not a dict with 'outputs' and 'errors'"
    outputs, errors = report["outputs"], report["errors"]
    if not isinstance(outputs, dict) or not isinstance(errors, dict):
        return "report['outputs'] and report['errors'] must both be dicts"
    out: dict[str, Any] = {"outputs": {}, "errors": {}}
    for level in LEVELS:
        arrays = outputs.get(level)
        if not isinstance(arrays, list | tuple):
            return f"report['outputs'][{level!r}] is {type(arrays).__name__}, not a list of arrays"
        try:
            out["outputs"][level] = [as_array(a) for a in arrays]
        except Exception as exc:  # noqa: BLE001
            return f"report['outputs'][{level!r}] holds something that is not an array: {first_line(exc)}"
        if any(a.dtype.hasobject for a in out["outputs"][level]):
            return f"report['outputs'][{level!r}] holds an object array"
    for pair in PAIRS:
        entry = errors.get(pair)
        if not isinstance(entry, dict):
            return f"report['errors'][{pair!r}] is {type(entry).__name__}, not a dict"
        values = {}
        for key in ("max_abs", "max_rel"):
            value = entry.get(key)
            if isinstance(value, np.generic | np.ndarray | torch.Tensor) and np.size(value) == 1:
                value = float(value)
            if isinstance(value, bool) or not isinstance(value, int | float):
                return f"report['errors'][{pair!r}][{key!r}] is {value!r}, not a number"
            values[key] = float(value)
        out["errors"][pair] = values
    return out


def verification_case(
    solution: Any,
    model: nn.Module,
    example: tuple[torch.Tensor, ...],
    inputs: tuple[torch.Tensor, ...],
    graph_name: str,
    iree_flags: Sequence[str] = (),
) -> dict[str, Any]:
    """Build the artifacts here, run every level here, then call verify() on the same inputs."""
    artifacts = build_artifacts(model, example, graph_name, iree_flags)
    truth = run_levels(model, artifacts, inputs)
    report = solution.verify(model, dict(artifacts), inputs)
    return {"truth": truth, "report": observe_report(report)}


# ---------------------------------------------------------------- models and inputs

D = 16
SEQ = 8


class MLPBlock(nn.Module):
    """Pre-LayerNorm MLP with GELU and a residual connection."""

    def __init__(self) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(D)
        self.fc1 = nn.Linear(D, 4 * D)
        self.fc2 = nn.Linear(4 * D, D)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.fc2(F.gelu(self.fc1(self.ln(x))))


class TwoHeads(nn.Module):
    """A residual MLP block and a ReLU head on top of it: two outputs."""

    def __init__(self) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(D)
        self.fc1 = nn.Linear(D, 4 * D)
        self.fc2 = nn.Linear(4 * D, D)
        self.head = nn.Linear(D, 4)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = x + self.fc2(F.gelu(self.fc1(self.ln(x))))
        return h, F.relu(self.head(h))
