"""What the public and hidden probes of onnx-export-verify share, imported by both as ``probe_common``."""

from __future__ import annotations

import copy
import math
import os
import shutil
import tempfile
import warnings
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import torch
import torch.nn.functional as F
from torch import nn

ATOL = 1e-4
RTOL = 1e-4
REL_EPS = 1e-7

# ---------------------------------------------------------------- models


class MLPBlock(nn.Module):
    """Pre-LayerNorm MLP with GELU and a residual connection."""

    def __init__(self, d: int = 32, hidden: int = 64, p: float = 0.0) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, hidden)
        self.fc2 = nn.Linear(hidden, d)
        self.drop = nn.Dropout(p)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.drop(self.fc2(F.gelu(self.fc1(self.ln(x)))))


def build(cls: type[nn.Module], seed: int, **kwargs: Any) -> nn.Module:
    """A model with seeded weights, left in train mode (as a fresh module is)."""
    torch.manual_seed(seed)
    model = cls(**kwargs)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.LayerNorm):
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.2, 0.2)
    return model


def randn(*shape: int, seed: int, scale: float = 1.0) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(*shape, generator=gen, dtype=torch.float64) * scale).to(torch.float32)


def tokens(b: int, s: int, seed: int, d: int = 32) -> tuple[torch.Tensor, ...]:
    return (randn(b, s, d, seed=seed, scale=2.0),)


def flatten(out: Any) -> list[torch.Tensor]:
    if isinstance(out, torch.Tensor):
        return [out]
    return [t for item in out for t in flatten(item)]


def eager(model: nn.Module, inputs: tuple[torch.Tensor, ...]) -> list[np.ndarray]:
    model.eval()
    with torch.no_grad():
        return [t.numpy() for t in flatten(model(*inputs))]


def first_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:220]}"


# ---------------------------------------------------------------- export


def export_and_run(
    solution: Any,
    model: nn.Module,
    make: Any,
    example: tuple[int, int],
    sizes: list[tuple[int, int]],
    *,
    alone: bool = False,
    interface: bool = False,
) -> dict[str, str]:
    """Export with the candidate's export, then run the file at each (batch, sequence) size.

    With ``interface``, the file's graph inputs, opset and declared shapes at
    each size are read too (``interface_of``), from the same export.
    """
    folder = tempfile.mkdtemp()
    path = os.path.join(folder, "model.onnx")
    solution.export(model, make(*example, seed=1), path)
    if alone:  # ship the .onnx file alone, as a deployment would
        other = tempfile.mkdtemp()
        shutil.copy(path, os.path.join(other, "model.onnx"))
        path = os.path.join(other, "model.onnx")
    # No graph optimizations: the file must be right as written. (onnxruntime's
    # optimizer deletes most Dropout nodes, even training-mode ones; other
    # runtimes do not.)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    try:
        session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        return {"load": "onnxruntime cannot load the file: " + first_line(exc)}
    out: dict[str, str] = {"load": "ok"}
    for i, (b, s) in enumerate(sizes):
        inputs = make(b, s, seed=100 + i)
        want = eager(model, inputs)
        key = f"batch={b}, sequence={s}"
        try:
            feed = {arg.name: t.numpy() for arg, t in zip(session.get_inputs(), inputs, strict=True)}
            got = session.run(None, feed)
        except Exception as exc:  # noqa: BLE001
            fixed = [f"{a.name!r} {a.shape}" for a in session.get_inputs() if any(isinstance(d, int) for d in a.shape[:2])]
            why = f"the file's input shapes are fixed: {', '.join(fixed)}" if fixed else first_line(exc)
            out[key] = "onnxruntime failed: " + why
            continue
        if len(got) != len(want):
            out[key] = f"the graph has {len(got)} outputs, the model returns {len(want)}"
            continue
        problems = []
        for j, (g, w) in enumerate(zip(got, want, strict=True)):
            if g.shape != w.shape:
                problems.append(f"output {j} has shape {list(g.shape)}, the model's is {list(w.shape)}")
                continue
            err = np.abs(g.astype(np.float64) - w)
            bound = ATOL + RTOL * np.abs(w)
            if not np.all(err <= bound):
                problems.append(f"output {j} is off by up to {float(np.nanmax(err)):.3g} (tolerance 1e-4 + 1e-4*|y|)")
        out[key] = "; ".join(problems) if problems else "ok"
    if interface:
        try:
            proto = onnx.load(path)
        except Exception as exc:  # noqa: BLE001
            out["interface"] = "onnx cannot load the file: " + first_line(exc)
        else:
            out.update(interface_of(proto, model, make, example, sizes))
    return out


# ---------------------------------------------------------------- the file's interface

OPSETS = (17, 20)


def graph_inputs_problem(proto: onnx.ModelProto, arguments: int) -> str:
    """ "ok" when graph.input lists exactly one tensor per forward argument (no weights), else what is wrong."""
    weights = {t.name for t in proto.graph.initializer}
    listed = [i.name for i in proto.graph.input]
    extra = [name for name in listed if name in weights]
    if extra:
        return f"graph.input lists {len(listed)} tensors for {arguments} forward argument(s), weights among them ({', '.join(extra[:3])}...)"
    if len(listed) != arguments:
        return f"graph.input lists {len(listed)} tensors for {arguments} forward argument(s)"
    return "ok"


def opset_problem(proto: onnx.ModelProto) -> str:
    versions = [o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")]
    if len(versions) != 1:
        return f"the file imports the default ONNX domain {len(versions)} times"
    if not OPSETS[0] <= versions[0] <= OPSETS[1]:
        return f"the file's opset is {versions[0]}, outside {OPSETS[0]} to {OPSETS[1]}"
    return "ok"


def declared_shape_problems(proto: onnx.ModelProto, inputs: list[tuple[int, ...]], outputs: list[tuple[int, ...]]) -> list[str]:
    """Where the file's declared input and output shapes are false for tensors of these actual shapes.

    Inputs: dims 0 and 1 must be declared by name, every other dim by its
    fixed size. Inputs and outputs: a declared number must be the size, and
    a name must stand for the same size everywhere it is used. An output dim
    declared without a size claims nothing.
    """
    bound: dict[str, tuple[int, str]] = {}
    problems: list[str] = []
    declared = [(f"input {i}", vi, shape, True) for i, (vi, shape) in enumerate(zip(proto.graph.input, inputs, strict=False))]
    declared += [(f"output {i}", vi, shape, False) for i, (vi, shape) in enumerate(zip(proto.graph.output, outputs, strict=False))]
    for where, vi, shape, is_input in declared:
        kind = vi.type.WhichOneof("value")
        if kind != "tensor_type":
            problems.append(f"{where} is not declared as a tensor")
            continue
        if not vi.type.tensor_type.HasField("shape"):
            if is_input:
                problems.append(f"{where} declares no shape")
            continue
        dims = list(vi.type.tensor_type.shape.dim)
        if len(dims) != len(shape):
            problems.append(f"{where} is declared with rank {len(dims)}, the tensor has rank {len(shape)}")
            continue
        for axis, (dim, size) in enumerate(zip(dims, shape, strict=True)):
            what = f"{where} dim {axis}"
            if dim.HasField("dim_value"):
                if is_input and axis < 2:
                    problems.append(f"{what} is declared fixed at {dim.dim_value}; it must be dynamic")
                elif dim.dim_value != size:
                    problems.append(f"{what} is declared {dim.dim_value}, the tensor has {size}")
            elif is_input and axis >= 2:
                problems.append(f"{what} is declared dynamic ({dim.dim_param or 'no size'}); it is fixed at {size}")
            elif is_input and not dim.dim_param:
                problems.append(f"{what} is declared without a name")
            elif dim.dim_param:
                name = dim.dim_param
                if name in bound and bound[name][0] != size:
                    problems.append(f"{what} is declared {name!r}, which is {bound[name][0]} in {bound[name][1]}, but the tensor has {size}")
                bound.setdefault(name, (size, what))
    return problems


def interface_of(proto: onnx.ModelProto, model: nn.Module, make: Any, example: tuple[int, int], sizes: list[tuple[int, int]]) -> dict[str, str]:
    """The file's interface: its graph inputs, its opset, its declared shapes at each (batch, sequence) size."""
    arguments = len(make(*example, seed=1))
    out = {"graph inputs": graph_inputs_problem(proto, arguments), "opset": opset_problem(proto)}
    for i, (b, s) in enumerate(sizes):
        inputs = make(b, s, seed=200 + i)
        outputs = eager(model, inputs)
        problems = declared_shape_problems(proto, [tuple(t.shape) for t in inputs], [tuple(o.shape) for o in outputs])
        out[f"declared shapes at batch={b}, sequence={s}"] = "; ".join(problems[:3]) if problems else "ok"
    return out


def export_interface(solution: Any, model: nn.Module, make: Any, example: tuple[int, int], sizes: list[tuple[int, int]]) -> dict[str, str]:
    """Export with the candidate's export, then read the file's interface (interface_of)."""
    path = os.path.join(tempfile.mkdtemp(), "model.onnx")
    solution.export(model, make(*example, seed=1), path)
    try:
        proto = onnx.load(path)
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        return {"load": "onnx cannot load the file: " + first_line(exc)}
    return {"load": "ok", **interface_of(proto, model, make, example, sizes)}


# ---------------------------------------------------------------- verification


def reference_file(model: nn.Module, example: tuple[torch.Tensor, ...], edit: dict[str, tuple[str, Any]] | None = None) -> str:
    """Export model (eval mode, dynamic axes) to a file; optionally change one attribute of nodes of a type.

    ``edit`` maps an op type to (attribute name, new value), for every node
    of that type, or ``"OpType#k"`` to the same for the k-th node of that
    type only (graph order): a planted numerical drift, as an exporter bug or
    a wrong lowering would make it.
    """
    path = os.path.join(tempfile.mkdtemp(), "model.onnx")
    names = [f"in_{i}" for i in range(len(example))]
    model.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model,
            example,
            path,
            dynamo=False,
            opset_version=20,
            input_names=names,
            dynamic_axes={n: {0: "batch", 1: "sequence"} for n in names},
        )
    if edit:
        proto = onnx.load(path)
        seen: dict[str, int] = {}
        changed = 0
        for node in proto.graph.node:
            index = seen.get(node.op_type, 0)
            seen[node.op_type] = index + 1
            for key in (node.op_type, f"{node.op_type}#{index}"):
                if key in edit:
                    attr_name, value = edit[key]
                    kept = [a for a in node.attribute if a.name != attr_name]
                    del node.attribute[:]
                    node.attribute.extend([*kept, onnx.helper.make_attribute(attr_name, value)])
                    changed += 1
        assert changed, f"no node of type {sorted(edit)} to edit"
        onnx.save(proto, path)
    return path


def worst(errors: np.ndarray) -> float:
    """The largest element of ``errors``; a NaN error (a NaN on either side) counts as infinitely large."""
    if errors.size and np.isnan(errors).any():
        return math.inf
    return float(errors.max(initial=0.0))


def measure(model: nn.Module, path: str, inputs: tuple[torch.Tensor, ...]) -> dict[str, float]:
    """The probe's own measurement, the statement's definition: every output, float64, rel = |o - r| / (|r| + 1e-7)."""
    want = eager(model, inputs)
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    got = session.run(None, {a.name: t.numpy() for a, t in zip(session.get_inputs(), inputs, strict=True)})
    max_abs = max_rel = 0.0
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape, "the probe's file must match the model's outputs"
        err = np.abs(g.astype(np.float64) - w.astype(np.float64))
        max_abs = max(max_abs, worst(err))
        max_rel = max(max_rel, worst(err / (np.abs(w.astype(np.float64)) + REL_EPS)))
    return {"max_abs": max_abs, "max_rel": max_rel}


def report_of(solution: Any, model: nn.Module, path: str, inputs: tuple[torch.Tensor, ...]) -> Any:
    return read_report(solution.verify(model, path, inputs))


def read_report(report: Any) -> Any:
    """What a value ``verify`` returned says: {"max_abs", "max_rel"} as floats, or what is wrong with it.

    The statement asks for Python floats: an ``int`` (even 0), a tensor or a
    NumPy scalar that is not a ``float`` subclass is refused, whatever its value.
    """
    if not isinstance(report, dict):
        return f"verify() returned a {type(report).__name__}, not a dict"
    out: dict[str, Any] = {}
    for key in ("max_abs", "max_rel"):
        value = report.get(key)
        if not isinstance(value, float):
            return f"verify()[{key!r}] is of type {type(value).__name__}, not a Python float"
        out[key] = float(value)
    return out


def verify_case(
    solution: Any,
    model: nn.Module,
    make: Any,
    example: tuple[int, int],
    size: tuple[int, int],
    edit: dict[str, tuple[str, Any]] | None = None,
    *,
    file_model: nn.Module | None = None,
    after_export: Any = None,
    constant_token: tuple[int, int, float] | None = None,
) -> dict[str, Any]:
    """One verification: the probe writes the file, measures it, then asks the candidate's ``verify``.

    ``file_model`` is exported instead of ``model`` (a file of other weights);
    ``after_export(model)`` changes the model once the file is written (the
    PyTorch side then computes something else); ``constant_token`` (batch,
    position, value) makes one token of the first input constant, whose
    variance is then exactly 0 (a LayerNorm without epsilon divides 0 by 0 there).
    """
    path = reference_file(model if file_model is None else file_model, make(*example, seed=1), edit)
    if after_export is not None:
        after_export(model)
    inputs = make(*size, seed=7)
    if constant_token is not None:
        b, s, value = constant_token
        inputs[0][b, s, :] = value
    truth = measure(model, path, inputs)  # before verify runs: nothing it does can change this
    model.train()  # verify gets the model the way the caller holds it: in train mode
    return {"report": report_of(solution, model, path, inputs), "truth": truth}


def refusal_of(solution: Any, model: nn.Module, path: str, inputs: tuple[torch.Tensor, ...]) -> Any:
    """What ``verify`` does with a file whose outputs differ from the model's in number or shape: "raised" or its report."""
    model.train()
    try:
        return {"returned": report_of(solution, model, path, inputs)}
    except Exception:  # noqa: BLE001 - raising is what the statement asks for
        return "raised"


def copy_of(model: nn.Module) -> nn.Module:
    return copy.deepcopy(model)
