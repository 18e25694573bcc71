"""What the public and hidden probes of lower-through-mlir share, imported by both as ``probe_common``."""

from __future__ import annotations

import functools
import inspect
import os
import re
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


def _export(model: nn.Module, example: tuple[torch.Tensor, ...], path: str, graph_name: str | None) -> None:
    """TorchScript export with a dynamic batch, inputs named after forward's parameters; graph renamed if asked."""
    names = list(inspect.signature(model.forward).parameters)[: len(example)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TracerWarning of a traced Python branch, among others
        torch.onnx.export(
            model,
            example,
            path,
            dynamo=False,
            opset_version=OPSET,
            input_names=names,
            dynamic_axes={name: {0: "batch"} for name in names},
        )
    if graph_name is not None:
        proto = onnx.load(path)
        proto.graph.name = graph_name  # iree-import-onnx names the function after the graph
        onnx.save(proto, path)


EXTERNAL_DATA = "model.onnx.data"  # where the dynamo exporter puts the weights it keeps outside the .onnx file


def _save_with_external_data(path: str, location: str = EXTERNAL_DATA) -> None:
    """Rewrite the .onnx file at ``path`` with every weight in ``location`` beside it (``model.onnx.data``: as the dynamo exporter does).

    The .onnx file names the file (each initializer's ``location``): any
    name is valid ONNX, and onnxruntime reads whichever the file names.

    The initializers are sorted by name first (the TorchScript exporter's
    order varies from model to model), so two models of one architecture get
    byte-identical .onnx files: only their external-data files differ.
    """
    proto = onnx.load(path)
    initializers = sorted(proto.graph.initializer, key=lambda t: t.name)
    del proto.graph.initializer[:]
    proto.graph.initializer.extend(initializers)
    data_path = os.path.join(os.path.dirname(path), location)
    if os.path.exists(data_path):  # onnx appends to an existing data file: an earlier lowering's is replaced
        os.remove(data_path)
    onnx.save_model(proto, path, save_as_external_data=True, all_tensors_to_one_file=True, location=location, size_threshold=0)


def _onnx_parts(onnx_path: str) -> list[bytes]:
    """The bytes of the .onnx file and of every external-data file it refers to: what its import reads."""
    proto = onnx.load(onnx_path, load_external_data=False)
    locations = sorted(
        {entry.value for t in proto.graph.initializer for entry in t.external_data if entry.key == "location"}
    )
    folder = os.path.dirname(onnx_path)
    return [_read(onnx_path), *(part for name in locations for part in (name.encode(), _read(os.path.join(folder, name))))]


def _cached_import(onnx_path: str, mlir_path: str) -> bytes:
    """iree-import-onnx of ``onnx_path`` (from the compile cache when it has it); ``mlir_path`` is written either way."""
    # The importer reads the graph through the onnx package: its version is an input too. The
    # weights are part of the import (dense resources in the .mlir file), external ones included.
    import_key = [onnx.__version__, *_onnx_parts(onnx_path)]
    mlir = compile_cache.cached("iree-import-onnx", import_key, functools.partial(_import_mlir, onnx_path, mlir_path))
    _write(mlir_path, mlir)
    return mlir


def _cached_compile(mlir_path: str, vmfb_path: str, mlir: bytes, iree_flags: Sequence[str]) -> None:
    """iree-compile of ``mlir_path`` (whose bytes are ``mlir``) for llvm-cpu, from the compile cache when it has it."""
    flags = [*CPU_FLAGS, *iree_flags]
    vmfb = compile_cache.cached("iree-compile-llvm-cpu", [*flags, mlir], functools.partial(_compile_vmfb, mlir_path, vmfb_path, flags))
    _write(vmfb_path, vmfb)


def build_artifacts(
    model: nn.Module,
    example: tuple[torch.Tensor, ...],
    graph_name: str,
    iree_flags: Sequence[str] = (),
    workdir: str | None = None,
    external_data: bool = False,
    data_location: str = EXTERNAL_DATA,
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
    it holds them, else run here. Either way the three files are written:
    into a new folder, or over the files already in ``workdir`` if given
    (the same paths as an earlier lowering).

    With ``external_data`` the .onnx file keeps only the graph, and the
    weights sit in ``model.onnx.data`` beside it (the dynamo exporter's
    default; ``data_location`` names another file): onnxruntime finds them
    from the file's path, and a session built from the .onnx file's bytes
    alone cannot.
    """
    workdir = tempfile.mkdtemp(prefix="probe-lowering-") if workdir is None else workdir
    paths = {key: os.path.join(workdir, f"model.{key}") for key in ARTIFACT_FILES}
    _export(model, example, paths["onnx"], graph_name)
    if external_data:
        _save_with_external_data(paths["onnx"], data_location)
    mlir = _cached_import(paths["onnx"], paths["mlir"])
    _cached_compile(paths["mlir"], paths["vmfb"], mlir, iree_flags)
    return {**paths, "function": graph_name}


def build_two_function_artifacts(
    model: nn.Module, example: tuple[torch.Tensor, ...], function: str, helper: nn.Module, helper_name: str
) -> dict[str, str]:
    """Artifacts whose vmfb exports two functions: ``helper_name`` first, then ``function``, the model.

    The .onnx file is the model's export as torch.onnx names it (graph
    "main_graph"), so the function to call is neither the ONNX graph's name
    nor the module's first export: only ``artifacts["function"]`` says which
    it is. The .mlir file is the import of the helper (same input type)
    followed by the import of the model under the name ``function``, in one
    module; the vmfb is its compile. Imports and compile go through the
    compile cache like ``build_artifacts``'s. The helper's own export is
    left in the folder as ``<helper_name>.onnx`` (``helper_onnx_path``).
    """
    workdir = tempfile.mkdtemp(prefix="probe-lowering-")
    paths = {key: os.path.join(workdir, f"model.{key}") for key in ARTIFACT_FILES}
    _export(model, example, paths["onnx"], None)  # graph "main_graph", the torch.onnx default
    parts = {}
    for name, module in ((helper_name, helper), (function, model)):
        onnx_path, mlir_path = (os.path.join(workdir, f"{name}.{ext}") for ext in ("onnx", "mlir"))
        _export(module, example, onnx_path, name)
        parts[name] = _cached_import(onnx_path, mlir_path).decode()
    context = iree.compiler.ir.Context()
    merged = iree.compiler.ir.Module.parse(parts[function], context)
    helper_module = iree.compiler.ir.Module.parse(parts[helper_name], context)
    first = merged.body.operations[0]
    for op in list(helper_module.body.operations):
        op.move_before(first)
    mlir = str(merged).encode()
    _write(paths["mlir"], mlir)
    _cached_compile(paths["mlir"], paths["vmfb"], mlir, ())
    return {**paths, "function": function}


def helper_onnx_path(artifacts: dict[str, str], helper_name: str) -> str:
    """The .onnx export of the helper function of ``build_two_function_artifacts``'s artifacts (graph ``helper_name``)."""
    return os.path.join(os.path.dirname(artifacts["onnx"]), f"{helper_name}.onnx")


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


DYNAMIC = "?"  # a dimension without a fixed size, in the observations below
_VTENSOR_DIMS = re.compile(r"^!torch\.vtensor<\[([^\]]*)\]")


def onnx_input_dims(graph: onnx.GraphProto) -> list[list[int | str]]:
    """The dims of each entry of an ONNX graph's ``graph.input``: the size if fixed, else DYNAMIC.

    Every entry counts, an initializer listed as an input too
    (``keep_initializers_as_inputs=True``): the graph's inputs must be
    exactly ``forward``'s arguments. onnxruntime's ``get_inputs()`` hides
    such overridable weights, so the list is read from the graph itself.
    """
    return [[d.dim_value if d.HasField("dim_value") else DYNAMIC for d in arg.type.tensor_type.shape.dim] for arg in graph.input]


def _type_dims(type_: Any) -> list[int | str] | str:
    """The dims of an MLIR tensor type (torch dialect or builtin) with DYNAMIC for '?', or the type's text."""
    text = str(type_)
    found = _VTENSOR_DIMS.match(text)
    if found:
        return [DYNAMIC if d.strip() == "?" else int(d) for d in found.group(1).split(",") if d.strip()]
    try:
        shaped = iree.compiler.ir.RankedTensorType(type_)
    except Exception:  # noqa: BLE001 - not a ranked tensor: its text is the observation
        return text
    return [DYNAMIC if shaped.is_dynamic_dim(i) else shaped.get_dim_size(i) for i in range(shaped.rank)]


def mlir_input_dims(text: str, function: str) -> list[list[int | str] | str]:
    """The dims of each argument of ``func.func @function`` in an MLIR module (the entry signature)."""
    module = iree.compiler.ir.Module.parse(text, iree.compiler.ir.Context())
    for op in module.body.operations:
        inner = op.operation
        if inner.name == "func.func" and iree.compiler.ir.StringAttr(inner.attributes["sym_name"]).value == function:
            signature = iree.compiler.ir.FunctionType(iree.compiler.ir.TypeAttr(inner.attributes["function_type"]).value)
            return [_type_dims(t) for t in signature.inputs]
    return []


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
    """Call lower(), read the dims of its inputs, then run its .onnx file in onnxruntime and its .vmfb in IREE on other batches.

    ``input_dims`` holds each graph input's dims in the .onnx file and each
    argument's in the .mlir function's signature, with "?" for a dynamic one:
    the check wants dim 0 dynamic and the others at the example's sizes.
    """
    want = [eager(model, inputs) for inputs in runs]  # before lower() can touch the model
    workdir = tempfile.mkdtemp(prefix="lower-")
    artifacts = solution.lower(model, example, workdir)
    problem = artifact_problem(artifacts, workdir)
    if problem is not None:
        return {"artifacts": problem, "runs": []}
    # Dim 0 of every input dynamic, the others the example's: in the ONNX graph and in the MLIR signature.
    with open(artifacts["mlir"], encoding="utf-8") as f:
        mlir_dims = mlir_input_dims(f.read(), artifacts["function"])
    dims = {"onnx": onnx_input_dims(onnx.load(str(artifacts["onnx"])).graph), "mlir": mlir_dims}
    out: dict[str, Any] = {"artifacts": "ok", "input_dims": dims, "runs": []}
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


# 1980-01-01 00:00:00 UTC, the timestamp zip archives and many reproducible builds give every file.
FIXED_MTIME_NS = 315_532_800 * 10**9


def repeated_verification_case(
    solution: Any,
    calls: list[tuple[nn.Module, tuple[torch.Tensor, ...], tuple[torch.Tensor, ...]]],
    graph_name: str,
    *,
    external_data: bool = False,
    data_location: str = EXTERNAL_DATA,
    fixed_mtime: bool = False,
) -> dict[str, Any]:
    """Several verify() calls in this one process, each on new artifacts written over the same three paths.

    Each call lowers its model into the same folder (so the .onnx, .mlir and
    .vmfb paths and the function name repeat), runs every level itself, then
    calls verify(). A verify() that keeps an onnxruntime session or an IREE
    module from an earlier call, keyed by the file's path, reports the
    earlier model's outputs. With ``external_data`` the weights sit in
    ``data_location`` (``build_artifacts``), and for models of one
    architecture the .onnx file itself is byte for byte the same each time.
    With ``fixed_mtime`` every file of the folder gets the same modification
    time after each lowering (:data:`FIXED_MTIME_NS`, as a copy that keeps
    timestamps or a reproducible build leaves them), so models of one
    architecture leave the same paths, sizes and mtimes behind.
    """
    workdir = tempfile.mkdtemp(prefix="probe-lowering-")
    observations = []
    for model, example, inputs in calls:
        artifacts = build_artifacts(
            model, example, graph_name, workdir=workdir, external_data=external_data, data_location=data_location
        )
        if fixed_mtime:
            for name in os.listdir(workdir):
                os.utime(os.path.join(workdir, name), ns=(FIXED_MTIME_NS, FIXED_MTIME_NS))
        truth = run_levels(model, artifacts, inputs)
        report = solution.verify(model, dict(artifacts), inputs)
        observations.append({"truth": truth, "report": observe_report(report)})
    return {"calls": observations}


# ---------------------------------------------------------------- calls that keep nothing


def snapshot(observed: Any) -> Any:
    """A deep copy of an observation, its arrays copied: what a report held the moment it was returned."""
    if isinstance(observed, np.ndarray):
        return observed.copy()
    if isinstance(observed, dict):
        return {key: snapshot(value) for key, value in observed.items()}
    if isinstance(observed, list | tuple):
        return [snapshot(value) for value in observed]
    return observed


def into_freed_id(make: Any, freed_id: int) -> Any:
    """A new object from ``make()`` that is, as a rule, at the id of a freed one.

    Objects that land elsewhere are kept alive until the one wanted comes
    up, so each try takes the next free slot of the allocator; after 4096
    tries the last one is used (the caller records whether the id was
    taken). ``make`` should allocate little besides the object itself: an
    empty module from ``cls.__new__(cls)``, initialized once it has the id,
    or a tensor over existing memory. Adapted from
    register-autograd-for-custom-op's ``_clone_into_freed_id``.
    """
    spare: list[Any] = []
    for _ in range(4096):
        fresh = make()
        if id(fresh) == freed_id:
            return fresh
        spare.append(fresh)
    return spare.pop()


def run_lowering(artifacts: dict[str, str], inputs: tuple[torch.Tensor, ...], torch_out: list[np.ndarray]) -> dict[str, Any]:
    """One run of a lowering's .onnx file and .vmfb at a batch, next to PyTorch's outputs (as in ``lowering_case``)."""
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
    return entry


def lowering_artifacts(solution: Any, model: nn.Module, example: tuple[torch.Tensor, ...]) -> tuple[dict[str, Any], Any]:
    """Call lower() into a new workdir: the observation of ``lowering_case`` without its runs, and the artifacts."""
    workdir = tempfile.mkdtemp(prefix="lower-")
    artifacts = solution.lower(model, example, workdir)
    problem = artifact_problem(artifacts, workdir)
    if problem is not None:
        return {"artifacts": problem, "runs": []}, None
    with open(artifacts["mlir"], encoding="utf-8") as f:
        mlir_dims = mlir_input_dims(f.read(), artifacts["function"])
    dims = {"onnx": onnx_input_dims(onnx.load(str(artifacts["onnx"])).graph), "mlir": mlir_dims}
    return {"artifacts": "ok", "input_dims": dims, "runs": []}, dict(artifacts)


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
