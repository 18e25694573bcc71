"""Hidden probes for onnx-export-verify: they make the score.

Three categories:

- ``dynamic-shapes``: the candidate's ``export`` writes a file from one
  example; the probe runs that file in onnxruntime at other batch and
  sequence sizes (including 1) and compares it with the model in eval mode.
  The observation is one "ok" or one failure text per size.
- ``export-hygiene``: the same, for the parts of an export that are not the
  shapes: inference mode (a model handed over in train mode, with dropout)
  and a self-contained file (the .onnx file alone, copied elsewhere).
- ``verification``: the probe writes an ONNX file itself (sometimes with a
  planted numerical drift, made by editing a real node's attribute), measures
  the error between onnxruntime and PyTorch, then calls the candidate's
  ``verify``. The check (``reported_error_matches``) compares what verify
  reported with what the reference run's probe measured.
"""

from __future__ import annotations

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
from probekit import probe
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


class AttentionBlock(nn.Module):
    """Pre-LayerNorm multi-head self-attention; returns (y, attention probabilities)."""

    def __init__(self, d: int = 32, heads: int = 4, causal: bool = False, p: float = 0.0) -> None:
        super().__init__()
        self.heads = heads
        self.causal = causal
        self.ln = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.drop = nn.Dropout(p)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln(x)).chunk(3, dim=-1)
        q, k, v = (t.reshape(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-1, -2) / math.sqrt(d // self.heads)
        if self.causal:
            future = torch.ones(s, s, dtype=torch.bool, device=x.device).triu(1)
            scores = scores.masked_fill(future, float("-inf"))
        probs = scores.softmax(dim=-1)
        y = (self.drop(probs) @ v).transpose(1, 2).reshape(b, s, d)
        return x + self.out(y), probs


class MaskedEncoder(nn.Module):
    """Tokens and a 0/1 padding mask: per-token features and a masked mean over the sequence."""

    def __init__(self, d: int = 32) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc = nn.Linear(d, d)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = F.gelu(self.fc(self.ln(x))) * mask.unsqueeze(-1)
        pooled = h.sum(dim=1) / mask.sum(dim=1, keepdim=True).clamp(min=1.0)
        return h, pooled


class TwoHeads(nn.Module):
    """Two outputs from one input: a linear head and a GELU head."""

    def __init__(self, d: int = 32) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, d)
        self.aux = nn.Linear(d, 8)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.ln(x)
        return self.head(h), F.gelu(3.0 * self.aux(h))


class ReluHead(nn.Module):
    """LayerNorm, GELU MLP, then ReLU: about half of the outputs are exactly 0."""

    def __init__(self, d: int = 32) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 64)
        self.fc2 = nn.Linear(64, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.fc2(F.gelu(self.fc1(self.ln(x)))))


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


def tokens_and_mask(b: int, s: int, seed: int, d: int = 32) -> tuple[torch.Tensor, ...]:
    x = randn(b, s, d, seed=seed, scale=2.0)
    lengths = torch.arange(b) % s + 1  # row i keeps its first (i % s) + 1 tokens
    mask = (torch.arange(s)[None, :] < lengths[:, None]).to(torch.float32)
    return x, mask


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


# ---------------------------------------------------------------- export probes


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


@probe(category="dynamic-shapes", check="every_size_ok", weight=2, hints=["dynamic-axes"])
def mlp_other_batch_and_sequence(solution: Any) -> dict[str, str]:
    """MLP block exported from a (3, 6) example, run at four other (batch, sequence) sizes, 1 included."""
    model = build(MLPBlock, seed=10)
    return export_and_run(solution, model, tokens, (3, 6), [(1, 1), (5, 13), (8, 2), (2, 40)])


@probe(category="dynamic-shapes", check="every_size_ok", weight=2, hints=["dynamic-axes", "multiple-outputs"])
def attention_other_sizes(solution: Any) -> dict[str, str]:
    """Attention block returning (y, probabilities), exported from (2, 7), run at other sizes."""
    model = build(AttentionBlock, seed=11)
    return export_and_run(solution, model, tokens, (2, 7), [(1, 3), (4, 12), (3, 1)])


@probe(category="dynamic-shapes", check="every_size_ok", weight=2, hints=["size-one-example", "dynamic-axes"])
def causal_attention_single_token_example(solution: Any) -> dict[str, str]:
    """Causal attention exported from a single-token (2, 1) example, run at longer sequences."""
    model = build(AttentionBlock, seed=12, causal=True)
    return export_and_run(solution, model, tokens, (2, 1), [(2, 5), (1, 16), (3, 1)])


@probe(category="dynamic-shapes", check="every_size_ok", weight=2, hints=["size-one-example", "dynamic-axes"])
def mlp_batch_one_example(solution: Any) -> dict[str, str]:
    """MLP block exported from a (1, 4) example: one sequence, run at larger batches."""
    model = build(MLPBlock, seed=13)
    return export_and_run(solution, model, tokens, (1, 4), [(6, 4), (3, 9)])


@probe(category="dynamic-shapes", check="every_size_ok", weight=2, hints=["every-input", "dynamic-axes"])
def two_inputs_share_the_axes(solution: Any) -> dict[str, str]:
    """Tokens plus a (batch, sequence) padding mask: both inputs' axes must be dynamic."""
    model = build(MaskedEncoder, seed=14)
    return export_and_run(solution, model, tokens_and_mask, (3, 5), [(1, 2), (4, 9), (2, 1)])


@probe(category="export-hygiene", check="every_size_ok", weight=2, hints=["eval-mode"])
def dropout_model_in_train_mode(solution: Any) -> dict[str, str]:
    """A freshly built model (train mode) with dropout 0.3: the export must compute the eval-mode model."""
    model = build(AttentionBlock, seed=15, p=0.3)
    return export_and_run(solution, model, tokens, (2, 6), [(2, 6), (3, 4)])


@probe(category="export-hygiene", check="every_size_ok", weight=2, hints=["single-file"])
def onnx_file_alone(solution: Any) -> dict[str, str]:
    """Only the .onnx file is copied to another folder and loaded there: it must be self-contained."""
    model = build(MLPBlock, seed=16)
    return export_and_run(solution, model, tokens, (2, 5), [(3, 7)], alone=True)


# ---------------------------------------------------------------- verification probes


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


@probe(category="verification", check="reported_error_matches", hints=["verify-definition"])
def verify_faithful_export(solution: Any) -> dict[str, Any]:
    """A faithful export of the MLP block, verified at (4, 9): the error is float32 rounding."""
    return verify_case(solution, build(MLPBlock, seed=20), tokens, (2, 5), (4, 9))


@probe(category="verification", weight=2, check="reported_error_matches", hints=["verify-definition"])
def verify_tanh_gelu_drift(solution: Any) -> dict[str, Any]:
    """The file's Gelu was switched to the tanh approximation: verify must report the drift it causes."""
    edit = {"Gelu": ("approximate", "tanh")}
    return verify_case(solution, build(MLPBlock, seed=21), tokens, (2, 5), (3, 11), edit)


@probe(category="verification", weight=2, check="reported_error_matches", hints=["multiple-outputs"])
def verify_drift_in_second_output(solution: Any) -> dict[str, Any]:
    """Two outputs; only the second (the GELU head) drifts: the maximum covers every output."""
    edit = {"Gelu": ("approximate", "tanh")}
    return verify_case(solution, build(TwoHeads, seed=22), tokens, (2, 5), (3, 6), edit)


@probe(category="verification", weight=2, check="reported_error_matches", hints=["eval-mode"])
def verify_model_with_dropout(solution: Any) -> dict[str, Any]:
    """A faithful export of an attention block with dropout 0.3; verify receives the model in train mode."""
    return verify_case(solution, build(AttentionBlock, seed=23, p=0.3), tokens, (2, 6), (2, 8))


@probe(category="verification", weight=2, check="reported_error_matches", hints=["input-order"])
def verify_two_inputs_epsilon_drift(solution: Any) -> dict[str, Any]:
    """Tokens and a mask; the file's LayerNorm epsilon became 0.1: inputs fed in the graph's order."""
    edit = {"LayerNormalization": ("epsilon", 0.1)}
    return verify_case(solution, build(MaskedEncoder, seed=24), tokens_and_mask, (3, 5), (4, 7), edit)


@probe(category="verification", weight=2, check="reported_error_matches", hints=["relative-error"])
def verify_relative_error_at_zeros(solution: Any) -> dict[str, Any]:
    """ReLU outputs (many exactly 0) with a drifted Gelu: max_rel must stay finite, by the definition."""
    edit = {"Gelu": ("approximate", "tanh")}
    return verify_case(solution, build(ReluHead, seed=25), tokens, (2, 5), (3, 10), edit)
