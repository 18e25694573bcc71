"""Hidden probes for lower-through-mlir: they make the score.

Two categories:

- ``lowering``: the probe calls the candidate's ``lower(model, example,
  workdir)``, checks the artifacts (three files in workdir; the .mlir is the
  torch-dialect import of the .onnx file and holds the named function), runs
  the .onnx file in onnxruntime and the .vmfb in IREE itself, on batches of
  other sizes, and returns their outputs next to PyTorch's
  (``levels_match_torch``). Models: an MLP block, an attention block with two
  outputs, a conv net exported from a single image, a token classifier with
  int64 ids in and an int64 argmax out, and a 1-d signal model (Conv1d, max
  pooling, nearest Resize, CumSum, TopK) for operator coverage.
- ``verification``: the probe lowers the model itself (``build_artifacts``,
  with a function name other than "main_graph"), runs every level itself,
  then calls the candidate's ``verify`` (``report_is_consistent``). Two of
  the lowerings really drift, each at one level:

  - the ONNX level: ``ClippedMLP`` rescales its activations in a Python
    ``if`` on a tensor value; tracing records the branch the example took
    (not rescaled), the verification inputs take the other one. onnxruntime
    and IREE agree with each other and both differ from PyTorch;
  - the IREE level: iree-compile with bf16 matmul operands
    (``--iree-global-opt-demote-contraction-inputs-type=bf16``): onnxruntime
    matches PyTorch, IREE drifts by about 1e-3.
"""

from __future__ import annotations

import math
import os
import tempfile
import warnings
from collections.abc import Sequence
from typing import Any

import iree.compiler
import iree.compiler.ir
import iree.runtime
import numpy as np
import onnx
import onnxruntime as ort
import torch
import torch.nn.functional as F
from probekit import probe
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


def build_artifacts(
    model: nn.Module, example: tuple[torch.Tensor, ...], graph_name: str, iree_flags: Sequence[str] = ()
) -> dict[str, str]:
    """The probe's own lowering: TorchScript export (dynamic batch), iree-import-onnx, iree-compile."""
    workdir = tempfile.mkdtemp(prefix="probe-lowering-")
    paths = {key: os.path.join(workdir, f"model.{key}") for key in ARTIFACT_FILES}
    names = [f"input_{i}" for i in range(len(example))]
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
    import_onnx(paths["onnx"], paths["mlir"])
    iree.compiler.compile_file(
        paths["mlir"],
        output_file=paths["vmfb"],
        target_backends=["llvm-cpu"],
        extra_args=[*CPU_FLAGS, *iree_flags],
    )
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


class AttentionBlock(nn.Module):
    """Pre-LayerNorm self-attention with 2 heads; returns (y, attention probabilities)."""

    def __init__(self, heads: int = 2) -> None:
        super().__init__()
        self.heads = heads
        self.ln = nn.LayerNorm(D)
        self.qkv = nn.Linear(D, 3 * D)
        self.out = nn.Linear(D, D)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln(x)).chunk(3, dim=-1)
        q, k, v = (t.reshape(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        probs = (q @ k.transpose(-1, -2) / math.sqrt(d // self.heads)).softmax(dim=-1)
        y = (probs @ v).transpose(1, 2).reshape(b, s, d)
        return x + self.out(y), probs


class ConvNet(nn.Module):
    """Two convolutions (BatchNorm in eval mode, ReLU), global average pooling, log-softmax over 10 classes."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.relu(self.bn(self.conv1(x)))
        h = F.relu(self.conv2(h))
        return self.fc(h.mean(dim=(2, 3))).log_softmax(dim=-1)


class TokenClassifier(nn.Module):
    """int64 token ids and a float padding mask in; class probabilities and the int64 argmax out."""

    def __init__(self, vocab: int = 50, classes: int = 6) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, D)
        self.ln = nn.LayerNorm(D)
        self.fc = nn.Linear(D, classes)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.embed(ids) * mask.unsqueeze(-1)
        pooled = h.sum(dim=1) / mask.sum(dim=1, keepdim=True).clamp(min=1.0)
        probs = self.fc(self.ln(pooled)).softmax(dim=-1)
        return probs, probs.argmax(dim=-1)


class SignalNet(nn.Module):
    """1-d signal ops: Conv1d, max pooling, nearest upsampling, a cumulative sum and a top-k."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv1d(4, 8, 3, padding=1)
        self.conv2 = nn.Conv1d(8, 4, 3, padding=1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = F.max_pool1d(F.relu(self.conv1(x)), 2)
        h = F.interpolate(h, scale_factor=2, mode="nearest")
        return self.conv2(h).cumsum(dim=-1), torch.topk(h.mean(dim=1), 3, dim=-1).values


class ClippedMLP(nn.Module):
    """An MLP that rescales its hidden activations when their largest row norm passes a limit.

    The limit is a Python `if` on a tensor value: tracing (the TorchScript
    exporter) records only the branch the example took.
    """

    def __init__(self, limit: float = 6.0) -> None:
        super().__init__()
        self.limit = limit
        self.ln = nn.LayerNorm(D)
        self.fc1 = nn.Linear(D, 4 * D)
        self.fc2 = nn.Linear(4 * D, D)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.gelu(self.fc1(x))
        norms = h.norm(dim=-1, keepdim=True)
        if norms.max() > self.limit:
            h = h * (self.limit / norms).clamp(max=1.0)
        return self.fc2(h)


def build(cls: type[nn.Module], seed: int) -> nn.Module:
    """A model with seeded weights, in eval mode, with non-trivial normalization parameters."""
    torch.manual_seed(seed)
    model = cls()
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.LayerNorm | nn.BatchNorm2d):
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.2, 0.2)
            if isinstance(module, nn.BatchNorm2d):
                module.running_mean.uniform_(-0.5, 0.5)
                module.running_var.uniform_(0.5, 2.0)
    return model.eval()


def randn(*shape: int, seed: int, scale: float = 1.0) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(*shape, generator=gen, dtype=torch.float64) * scale).to(torch.float32)


def tokens(batch: int, seed: int, scale: float = 1.0) -> tuple[torch.Tensor, ...]:
    return (randn(batch, SEQ, D, seed=seed, scale=scale),)


def images(batch: int, seed: int) -> tuple[torch.Tensor, ...]:
    return (randn(batch, 3, 12, 12, seed=seed),)


def signals(batch: int, seed: int) -> tuple[torch.Tensor, ...]:
    return (randn(batch, 4, 16, seed=seed),)


def ids_and_mask(batch: int, seed: int, vocab: int = 50) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, vocab, (batch, SEQ), generator=gen, dtype=torch.int64)
    lengths = torch.arange(batch) % SEQ + 1  # row i keeps its first (i % SEQ) + 1 tokens
    mask = (torch.arange(SEQ)[None, :] < lengths[:, None]).to(torch.float32)
    return ids, mask


# ---------------------------------------------------------------- lowering


@probe(category="lowering", check="levels_match_torch", hints=["dynamic-batch", "mlir-import"])
def lower_mlp_other_batches(solution: Any) -> dict[str, Any]:
    """MLP block lowered from a batch-2 example, run at batch 1 and batch 5."""
    model = build(MLPBlock, seed=10)
    return lowering_case(solution, model, tokens(2, seed=1000), [tokens(1, seed=1001), tokens(5, seed=1002)])


@probe(category="lowering", check="levels_match_torch", hints=["dynamic-batch", "function-name"])
def lower_attention_two_outputs(solution: Any) -> dict[str, Any]:
    """Attention block returning (y, probabilities): both outputs at both levels."""
    model = build(AttentionBlock, seed=11)
    return lowering_case(solution, model, tokens(2, seed=1100), [tokens(3, seed=1101)])


@probe(category="lowering", check="levels_match_torch", hints=["dynamic-batch", "mlir-import"])
def lower_convnet_single_image_example(solution: Any) -> dict[str, Any]:
    """Conv net lowered from a single-image example (batch 1), run at batch 4."""
    model = build(ConvNet, seed=12)
    return lowering_case(solution, model, images(1, seed=1200), [images(4, seed=1201)])


@probe(category="lowering", check="levels_match_torch", hints=["dynamic-batch", "input-dtypes"])
def lower_token_classifier_int64(solution: Any) -> dict[str, Any]:
    """int64 token ids and a float mask in, float probabilities and an int64 argmax out, at batch 6."""
    model = build(TokenClassifier, seed=13)
    return lowering_case(solution, model, ids_and_mask(2, seed=1300), [ids_and_mask(6, seed=1301)])


@probe(category="lowering", check="levels_match_torch", hints=["dynamic-batch", "mlir-import"])
def lower_signal_ops(solution: Any) -> dict[str, Any]:
    """Conv1d, max pooling, nearest upsampling, a cumulative sum and a top-k, at batch 3."""
    model = build(SignalNet, seed=14)
    return lowering_case(solution, model, signals(2, seed=1400), [signals(3, seed=1401)])


# ---------------------------------------------------------------- verification


@probe(category="verification", check="report_is_consistent", hints=["report-definition", "which-pair", "function-name"])
def verify_faithful_mlp(solution: Any) -> dict[str, Any]:
    """A faithful lowering of an MLP block, verified at batch 5: every error is float32 rounding."""
    model = build(MLPBlock, seed=20)
    return verification_case(solution, model, tokens(2, seed=2000), tokens(5, seed=2001), "mlp_block")


@probe(category="verification", check="report_is_consistent", hints=["every-output", "report-definition"])
def verify_attention_two_outputs(solution: Any) -> dict[str, Any]:
    """A faithful lowering of an attention block with two outputs: every output, every level."""
    model = build(AttentionBlock, seed=21)
    return verification_case(solution, model, tokens(2, seed=2100), tokens(3, seed=2101), "attention_block")


@probe(category="verification", check="report_is_consistent", hints=["which-pair", "report-definition"])
def verify_traced_branch_drift(solution: Any) -> dict[str, Any]:
    """The export froze a data-dependent branch: onnxruntime and IREE agree, and both drift from PyTorch."""
    model = build(ClippedMLP, seed=22)
    example = tokens(2, seed=2200, scale=0.1)  # small activations: the rescaling branch is not taken
    inputs = tokens(4, seed=2201, scale=4.0)  # large ones: PyTorch takes it, the exported graph cannot
    return verification_case(solution, model, example, inputs, "clipped_mlp")


@probe(category="verification", check="report_is_consistent", hints=["which-pair", "every-output", "report-definition"])
def verify_bf16_matmuls_iree_drift(solution: Any) -> dict[str, Any]:
    """Compiled with bf16 matmul operands: the IREE level drifts from both PyTorch and onnxruntime."""
    model = build(TwoHeads, seed=23)
    return verification_case(solution, model, tokens(2, seed=2300), tokens(5, seed=2301), "two_heads", BF16_MATMULS)


@probe(category="verification", check="report_is_consistent", hints=["input-dtypes", "every-output", "report-definition"])
def verify_token_classifier_int64(solution: Any) -> dict[str, Any]:
    """int64 ids and a float mask in, probabilities and an int64 argmax out: inputs keep their dtypes."""
    model = build(TokenClassifier, seed=24)
    return verification_case(solution, model, ids_and_mask(2, seed=2400), ids_and_mask(7, seed=2401), "token_classifier")
