"""What the public and hidden probes of onnx-export-verify share, imported by both as ``probe_common``."""

from __future__ import annotations

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
    solution: Any, model: nn.Module, make: Any, example: tuple[int, int], sizes: list[tuple[int, int]], *, alone: bool = False
) -> dict[str, str]:
    """Export with the candidate's export, then run the file at each (batch, sequence) size."""
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
    return out


# ---------------------------------------------------------------- verification


def reference_file(model: nn.Module, example: tuple[torch.Tensor, ...], edit: dict[str, tuple[str, Any]] | None = None) -> str:
    """Export model (eval mode, dynamic axes) to a file; optionally change one attribute of every node of a type.

    ``edit`` maps an op type to (attribute name, new value): a planted
    numerical drift, as an exporter bug or a wrong lowering would make it.
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
        changed = 0
        for node in proto.graph.node:
            if node.op_type in edit:
                attr_name, value = edit[node.op_type]
                kept = [a for a in node.attribute if a.name != attr_name]
                del node.attribute[:]
                node.attribute.extend([*kept, onnx.helper.make_attribute(attr_name, value)])
                changed += 1
        assert changed, f"no node of type {sorted(edit)} to edit"
        onnx.save(proto, path)
    return path


def measure(model: nn.Module, path: str, inputs: tuple[torch.Tensor, ...]) -> dict[str, float]:
    """The probe's own measurement: every output, float64, rel = |o - r| / (|r| + 1e-7)."""
    want = eager(model, inputs)
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    got = session.run(None, {a.name: t.numpy() for a, t in zip(session.get_inputs(), inputs, strict=True)})
    max_abs = max_rel = 0.0
    for g, w in zip(got, want, strict=True):
        err = np.abs(g.astype(np.float64) - w.astype(np.float64))
        max_abs = max(max_abs, float(err.max()))
        max_rel = max(max_rel, float((err / (np.abs(w.astype(np.float64)) + REL_EPS)).max()))
    return {"max_abs": max_abs, "max_rel": max_rel}


def report_of(solution: Any, model: nn.Module, path: str, inputs: tuple[torch.Tensor, ...]) -> Any:
    report = solution.verify(model, path, inputs)
    if not isinstance(report, dict):
        return f"verify() returned a {type(report).__name__}, not a dict"
    out: dict[str, Any] = {}
    for key in ("max_abs", "max_rel"):
        value = report.get(key)
        if isinstance(value, torch.Tensor | np.ndarray | np.generic) and np.size(value) == 1:
            value = float(value)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"verify()[{key!r}] is {value!r}, not a number"
        out[key] = float(value)
    return out


def verify_case(
    solution: Any,
    model: nn.Module,
    make: Any,
    example: tuple[int, int],
    size: tuple[int, int],
    edit: dict[str, tuple[str, Any]] | None = None,
) -> dict[str, Any]:
    path = reference_file(model, make(*example, seed=1), edit)
    inputs = make(*size, seed=7)
    truth = measure(model, path, inputs)  # before verify runs: nothing it does can change this
    model.train()  # verify gets the model the way the caller holds it: in train mode
    return {"report": report_of(solution, model, path, inputs), "truth": truth}
