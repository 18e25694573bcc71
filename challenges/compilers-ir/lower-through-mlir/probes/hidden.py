"""Hidden probes for lower-through-mlir: they make the score.

Two categories:

- ``lowering``: the probe calls the candidate's ``lower(model, example,
  workdir)``, checks the artifacts (three files in workdir; the .mlir is the
  torch-dialect import of the .onnx file and holds the named function),
  reads the dims of every input in the ONNX graph and in the MLIR
  function's signature (dim 0 dynamic, the others the example's: a
  sequence length or channel count made dynamic fails every lowering
  probe), runs the .onnx file in onnxruntime and the .vmfb in IREE itself,
  on batches of other sizes, and returns their outputs next to PyTorch's
  (``levels_match_torch``). Models: an MLP block, an attention block with two
  outputs, a conv net exported from a single image, a token classifier with
  int64 ids in and an int64 argmax out, a 1-d signal model (Conv1d, max
  pooling, nearest Resize, CumSum, TopK) for operator coverage, and a head
  whose ``forward(x, attention_mask, context, head_mask)`` never reads its
  int64 attention mask nor its float head mask
  (``lower_unused_forward_argument``: each must be put back in its place,
  with its own dtype). The ONNX input list is
  ``graph.input`` itself, so it must hold exactly ``forward``'s arguments:
  weights listed as inputs (``keep_initializers_as_inputs=True``) fail every
  lowering probe, and an unused argument the TorchScript exporter dropped
  fails the last one.
- ``verification``: the probe lowers the model itself (``build_artifacts``,
  with a function name other than "main_graph"), runs every level itself,
  then calls the candidate's ``verify`` (``report_is_consistent``: the
  outputs are each level's, the errors those of the reported outputs, and
  the ``*_vs_torch`` errors those against the probe's own float32 PyTorch
  run, which a float64 torch level misses by 5-50% on a faithful lowering).
  Four of the lowerings really drift, each at one level:

  - the ONNX level: ``ClippedMLP`` rescales its activations in a Python
    ``if`` on a tensor value; tracing records the branch the example took
    (not rescaled), the verification inputs take the other one. onnxruntime
    and IREE agree with each other and both differ from PyTorch.
    ``TokenKeys`` does the same to int64 keys above 2**24: they differ by
    exactly 1, which a comparison through float32 cannot see;
  - the IREE level: iree-compile with bf16 matmul operands
    (``--iree-global-opt-demote-contraction-inputs-type=bf16``): onnxruntime
    matches PyTorch, IREE drifts by about 1e-3. In the token classifier
    that drift flips one row's int64 argmax, so the integer output carries
    the largest error.

  The others hand ``verify`` what a verify() written against its own
  lower() does not expect: a model left in training mode
  (``verify_model_left_in_training_mode``: the torch level runs in eval
  mode whatever mode the model comes in, wholly or in part: a BatchNorm
  left in training mode under a top module in eval mode); a vmfb exporting
  two functions, the model second and under a name that is not the ONNX
  graph's, verified on each function in turn
  (``verify_function_among_several``); two calls in one process on
  artifacts written to the same paths (``verify_twice_same_paths``,
  ``reports_are_consistent``); and a model whose float32 rounding is part
  of what it computes (``verify_float32_rounding_in_the_model``), which a
  torch level run in float64 gets wrong by far more than the tolerance.

  And inputs a verify() tried only on its own lower()'s files and on
  batches like the example's does not expect: an empty batch
  (``verify_empty_batch``: every error is a maximum over nothing, 0); an
  input that requires grad (``verify_inputs_require_grad``); an .onnx file
  whose weights are in ``model.onnx.data`` beside it
  (``verify_external_data``: a session built from the file's bytes cannot
  find them); and two more pairs of calls on the same paths, one where only
  the external data changes while the .onnx file stays byte for byte the
  same (``verify_twice_external_data``, weights in ``weights.bin``: a cache
  keyed on the .onnx file's content, or on it and ``<path>.data``), one
  where every file keeps its size and gets the same fixed
  modification time (``verify_twice_timestamps_kept``: a cache keyed on
  path, mtime and size).

And both functions called again and again in one process
(``repeated_calls_changed_lookalike_rebuilt``, check
``repeated_calls_consistent``): lower() twice on one model object whose
weights are replaced in place in between, then verify() five times on the
same input tensor refilled in place, the same model with new weights, a
new input of the same shape, and a model and an input rebuilt at the ids
(and memory) of freed ones; then twice on a model whose outputs are views
of its input and of a weight, which are changed in place after the calls.
A cache keyed on id(), data_ptr(), the class, the shapes or the object
itself fails one of the steps, and an output buffer reused by a later call,
or a torch level returned as views (``t.numpy()``), changes a report
already returned.

Red team round 4 (blind) added six, each for a class of mistake that
passed every probe above:

- ``verify_twice_vmfb_rebuilt_alone``: the same .onnx and .mlir files, the
  .vmfb compiled again with bf16 matmul operands between two calls (a
  cache of IREE functions keyed on the ONNX model's content, or the
  .mlir's, runs the old module); its second call also has IREE's ReLU
  head non-zero where PyTorch's is exactly 0.
- ``verify_traced_branch_zeros``: PyTorch's outputs exactly 0 (and its
  argmax at class 0) where the exported graph's are not, so max_rel is
  ``|x| / 1e-7`` there (a max_rel that skips ``r == 0`` misses it).
- ``verify_training_mode_every_layer_kind``: training mode in an
  ``nn.Dropout2d`` and in a custom stochastic-depth module, whole and each
  alone (eval() applied by layer type misses both).
- ``verify_outputs_contiguous_views``: outputs that are contiguous views
  of the input and of a weight (``x.flatten(1)``; ``x[:, 0]`` and
  ``cls.expand`` at batch 1), read again after the caller changed both
  (``t.contiguous().numpy()`` returns them as views).
- ``repeated_calls_same_weights_other_computation``: lower() and verify()
  on ReLU and GELU stacks with the same weights, then on one head at two
  temperatures (a plain attribute): memos keyed on the class or repr and
  the weights hand the second model the first one's files or torch level.
- ``verify_forward_writes_into_input``: a forward that adds its positions
  into its input in place; runtimes fed views of the inputs taken before a
  torch level that runs first see the positions added twice (the
  reference's own mistake until this round).
"""

from __future__ import annotations

import gc
import math
from typing import Any

import torch
import torch.nn.functional as F
from probe_common import (
    BF16_MATMULS,
    SEQ,
    D,
    MLPBlock,
    TwoHeads,
    _cached_compile,
    build_artifacts,
    build_two_function_artifacts,
    eager,
    helper_onnx_path,
    into_freed_id,
    lowering_artifacts,
    lowering_case,
    observe_report,
    repeated_verification_case,
    run_levels,
    run_lowering,
    snapshot,
    verification_case,
)
from probekit import probe
from torch import nn


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


class LinearHead(nn.Module):
    """One Linear layer over the last dim: the quickest model to lower, for the repeated lower() calls."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(D, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x)


class Center(nn.Module):
    """Its input minus the mean over the last dim: the other function of a two-function module."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x - x.mean(dim=-1, keepdim=True)


class TokenKeys(nn.Module):
    """int64 token ids in; their mean embedding and an int64 key per token out, ``id * 2**26 + position``.

    The keys are above 2**24, where float32 holds only even integers (and
    from 2**26 only multiples of 8). Positions count from 1 when every row
    starts with the BOS token: a Python `if` on a tensor value, which tracing
    records as the branch the example took. An export from an example
    without a leading BOS then gives keys one less than PyTorch's for inputs
    with one.
    """

    BOS = 1

    def __init__(self, vocab: int = 50) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, D)

    def forward(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        positions = torch.arange(ids.shape[1])
        if bool((ids[:, 0] == self.BOS).all()):
            positions = positions + 1
        return self.embed(ids).mean(dim=1), ids * 2**26 + positions


class RoundedInputMLP(nn.Module):
    """Snaps its input to a grid of 1/8 with the float32 rounding trick, then a GELU MLP.

    ``(v + 1.5 * 2**23) - 1.5 * 2**23`` rounds v to an integer in float32
    (the sum has no bits below 1); in float64 it gives v back. Every step is
    one correctly rounded float32 operation on exact values, so PyTorch,
    onnxruntime and IREE snap to the same grid point, bit for bit: the
    rounding is part of what the model computes.
    """

    MAGIC = 1.5 * 2**23

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(D, 4 * D)
        self.fc2 = nn.Linear(4 * D, D)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        snapped = ((x * 8.0 + self.MAGIC) - self.MAGIC) * 0.125
        return self.fc2(F.gelu(self.fc1(snapped)))


class OptionalMaskHead(nn.Module):
    """Pools normalized tokens and adds a projected context vector: inputs (x, attention_mask, context, head_mask).

    The attention mask (int64 0/1, as a tokenizer gives it) and the head mask
    (float32) are used only when ``use_masks`` is set, which it is not here:
    in this configuration forward never reads its second and fourth
    arguments, as a model whose masks are optional often does. The graph
    must take them all the same, each with its own dtype: the TorchScript
    exporter leaves an unused argument out of the graph, so its graph takes
    (x, context) and no longer follows forward's arguments. An argument put
    back with another dtype (float32 for the int64 mask, or int64 for the
    float head mask) or at the end instead of in its place cannot be fed.
    """

    def __init__(self, classes: int = 4, context: int = 3) -> None:
        super().__init__()
        self.use_masks = False
        self.ln = nn.LayerNorm(D)
        self.fc = nn.Linear(D, classes)
        self.ctx = nn.Linear(context, classes)

    def forward(
        self, x: torch.Tensor, attention_mask: torch.Tensor, context: torch.Tensor, head_mask: torch.Tensor
    ) -> torch.Tensor:
        h = self.ln(x)
        if self.use_masks:
            h = h * attention_mask.unsqueeze(-1).to(h.dtype) * head_mask.mean(dim=-1)[:, None, None]
        return self.fc(h.mean(dim=1)) + self.ctx(context)


class ViewsHead(nn.Module):
    """A projection, the first token of its input and a learned CLS vector broadcast over the batch: two outputs are views.

    In PyTorch, ``x[:, 0]`` is a view of the input and ``cls.expand(...)`` a
    view of the parameter, so a torch level returned as ``t.numpy()`` shares
    their memory: an input refilled in place, or weights replaced in place,
    after the call change the report already returned.
    """

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(D, 4)
        self.cls = nn.Parameter(torch.randn(1, D))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return self.fc(x), x[:, 0], self.cls.expand(x.shape[0], D)


# The external-data file of verify_twice_external_data: not the dynamo exporter's model.onnx.data.
WEIGHTS_FILE = "weights.bin"


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


def tokens_mask_context(batch: int, seed: int) -> tuple[torch.Tensor, ...]:
    """(x, attention_mask, context, head_mask) for ``OptionalMaskHead``: the int64 mask marks the first (i % SEQ) + 1 tokens of row i."""
    (x,) = tokens(batch, seed=seed)
    lengths = torch.arange(batch) % SEQ + 1
    mask = (torch.arange(SEQ)[None, :] < lengths[:, None]).to(torch.int64)
    return x, mask, randn(batch, 3, seed=seed + 1), randn(batch, 2, seed=seed + 2).sigmoid()


def token_ids(batch: int, seed: int, bos: bool, vocab: int = 50) -> tuple[torch.Tensor, ...]:
    """Ids from 2 up (no padding id 0, no BOS 1), with the BOS token in front of every row if ``bos``."""
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(2, vocab, (batch, SEQ), generator=gen, dtype=torch.int64)
    if bos:
        ids[:, 0] = TokenKeys.BOS
    return (ids,)


# ---------------------------------------------------------------- lowering


@probe(category="lowering", check="levels_match_torch", hints=["dynamic-batch", "mlir-import", "graph-inputs"])
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


@probe(category="lowering", check="levels_match_torch", hints=["graph-inputs", "dynamic-batch"])
def lower_unused_forward_argument(solution: Any) -> dict[str, Any]:
    """forward(x, attention_mask, context, head_mask) that never reads either mask: all four are inputs, each with its dtype, at batch 3."""
    model = build(OptionalMaskHead, seed=15)
    return lowering_case(solution, model, tokens_mask_context(2, seed=1500), [tokens_mask_context(3, seed=1501)])


# ---------------------------------------------------------------- verification


@probe(category="verification", check="report_is_consistent", hints=["report-definition", "which-pair", "function-name", "float32-torch"])
def verify_faithful_mlp(solution: Any) -> dict[str, Any]:
    """A faithful lowering of an MLP block, verified at batch 5: every error is float32 rounding."""
    model = build(MLPBlock, seed=20)
    return verification_case(solution, model, tokens(2, seed=2000), tokens(5, seed=2001), "mlp_block")


@probe(category="verification", check="report_is_consistent", hints=["every-output", "report-definition", "float32-torch"])
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
    """int64 ids and a float mask in, probabilities and an int64 argmax out, bf16 matmuls: one argmax flips.

    Compiled with bf16 matmul operands. Row 11 of these inputs (seed 2426
    was picked for it) has its two best classes 7.6e-5 apart in PyTorch and
    onnxruntime; IREE's probabilities drift by about 7e-4, and its argmax
    picks the other class. The integer output then carries the largest error
    of the IREE pairs, so a report that leaves integer outputs out of its
    errors fails here.
    """
    model = build(TokenClassifier, seed=24)
    return verification_case(solution, model, ids_and_mask(2, seed=2400), ids_and_mask(12, seed=2426), "token_classifier", BF16_MATMULS)


@probe(category="verification", check="reports_are_consistent", hints=["eval-mode", "report-definition"])
def verify_model_left_in_training_mode(solution: Any) -> dict[str, Any]:
    """A faithful lowering of the conv net, whose model reaches verify() in training mode: whole, then in part.

    The probe lowers the model and runs every level in eval mode, then calls
    ``verify`` twice on the same artifacts and inputs: first after
    ``model.train()``, as a model fresh from a training loop would come;
    then after ``model.eval()`` and ``model.bn.train()``, a submodule left in
    training mode under a top module in eval mode (as Monte Carlo dropout
    leaves its dropout layers). The statement's torch level is eval mode,
    every submodule included: a verify() that runs the model in the mode it
    came in, sets only the top module's flag, or calls ``model.eval()`` only
    when the top module's flag is set normalizes with the batch's own
    statistics (BatchNorm) in one of the calls, so its torch outputs are not
    the eval-mode outputs the other levels were exported from.
    """
    model = build(ConvNet, seed=25)
    artifacts = build_artifacts(model, images(2, seed=2500), "conv_net")
    inputs = images(3, seed=2501)
    truth = run_levels(model, artifacts, inputs)
    calls = []
    for step in ("whole", "in part"):
        if step == "whole":
            model.train()
        else:
            model.eval()
            model.bn.train()
        report = solution.verify(model, dict(artifacts), inputs)
        calls.append({"truth": truth, "report": observe_report(report)})
    return {"calls": calls}


@probe(category="verification", check="reports_are_consistent", hints=["function-name", "fresh-each-call"])
def verify_function_among_several(solution: Any) -> dict[str, Any]:
    """The vmfb exports two functions, the model second, and the .onnx graph has another name; verify() is called on each.

    The module holds ``center`` (its input minus its mean, same input type,
    same output shape), then ``mlp_block``, the model; the model's .onnx
    file keeps torch.onnx's graph name "main_graph". verify() is called
    twice in this process on the same vmfb: first on ``center`` (the
    ``Center`` module, its own .onnx file), then on ``mlp_block``. Only
    ``artifacts["function"]`` names the function: a verify() that takes the
    ONNX graph's name, the first function of the .mlir file or the first
    export of the module calls another function or none, and one that keeps
    a loaded function by the vmfb's bytes or path alone, without its name,
    calls ``center`` again the second time.
    """
    model = build(MLPBlock, seed=28)
    artifacts = build_two_function_artifacts(model, tokens(2, seed=2800), "mlp_block", Center(), "center")
    helper_artifacts = {**artifacts, "onnx": helper_onnx_path(artifacts, "center"), "function": "center"}
    inputs = tokens(3, seed=2801)
    calls = []
    for module, arts in ((Center(), helper_artifacts), (model, artifacts)):
        truth = run_levels(module, arts, inputs)
        report = solution.verify(module, dict(arts), inputs)
        calls.append({"truth": truth, "report": observe_report(report)})
    return {"calls": calls}


@probe(category="verification", check="reports_are_consistent", hints=["fresh-each-call", "report-definition"])
def verify_twice_same_paths(solution: Any) -> dict[str, Any]:
    """Two verify() calls in one process: two MLP blocks lowered one after the other into the same files.

    The second lowering writes its .onnx, .mlir and .vmfb over the first's,
    at the same paths and with the same function name, and the inputs are
    the same values. A verify() that keeps an onnxruntime session or an
    IREE module by path reports the first model's outputs for the second.
    """
    first, second = build(MLPBlock, seed=26), build(MLPBlock, seed=27)
    calls = [(first, tokens(2, seed=2600), tokens(4, seed=2601)), (second, tokens(2, seed=2700), tokens(4, seed=2601))]
    return repeated_verification_case(solution, calls, "mlp_block")


@probe(category="verification", check="report_is_consistent", hints=["float32-torch", "report-definition"])
def verify_float32_rounding_in_the_model(solution: Any) -> dict[str, Any]:
    """A model whose float32 rounding is part of what it computes: the torch level is model(*inputs) as given.

    ``RoundedInputMLP`` snaps its input to a 1/8 grid with the float32
    rounding trick; the three levels agree on the grid, and the lowering is
    faithful (errors of float32 rounding). A torch level run in float64 (a
    "more exact" copy of the model) skips the snapping and is off by up to
    0.06 before the MLP.
    """
    model = build(RoundedInputMLP, seed=29)
    return verification_case(solution, model, tokens(2, seed=2900), tokens(5, seed=2901), "rounded_mlp")


@probe(category="verification", check="report_is_consistent", hints=["large-int64", "which-pair", "report-definition"])
def verify_int64_keys_above_2_24(solution: Any) -> dict[str, Any]:
    """int64 keys above 2**24 that differ by exactly 1 between PyTorch and the exported graph.

    ``TokenKeys`` is exported from ids without a leading BOS token and
    verified on ids with one: PyTorch's keys are ``id * 2**26 + position +
    1``, onnxruntime's and IREE's one less. The true ``*_vs_torch`` max_abs
    is 1 (the float output's drift is about 1e-8). Through float32 the keys
    lose their low bits: both sides round to the same multiple of 8 (an
    error of 0), or one side does (errors of 7 or 8), never 1.
    """
    model = build(TokenKeys, seed=30)
    return verification_case(solution, model, token_ids(2, seed=3000, bos=False), token_ids(6, seed=3001, bos=True), "token_keys")


@probe(category="verification", check="report_is_consistent", hints=["any-batch", "report-definition"])
def verify_empty_batch(solution: Any) -> dict[str, Any]:
    """A faithful lowering of an MLP block, verified on a batch of size 0.

    Every level runs it and returns outputs with a batch of 0, so every
    error is a maximum over no element at all: 0. A verify() whose maxima
    cannot start from an empty set (``ndarray.max()`` with no ``initial``)
    raises instead of reporting.
    """
    model = build(MLPBlock, seed=31)
    return verification_case(solution, model, tokens(2, seed=3100), tokens(0, seed=3101), "mlp_block")


@probe(category="verification", check="report_is_consistent", hints=["any-batch", "input-dtypes"])
def verify_inputs_require_grad(solution: Any) -> dict[str, Any]:
    """A faithful lowering of the two-output block, verified on an input that requires grad.

    The input comes as it would from a training loop or an attribution
    run (``requires_grad=True``). The torch level runs it under no_grad; the
    runtimes need plain arrays, which ``t.numpy()`` refuses to give for a
    tensor that requires grad (``t.detach().numpy()`` does).
    """
    model = build(TwoHeads, seed=32)
    (x,) = tokens(3, seed=3201)
    return verification_case(solution, model, tokens(2, seed=3200), (x.requires_grad_(True),), "two_heads")


@probe(category="verification", check="report_is_consistent", hints=["external-data", "report-definition"])
def verify_external_data(solution: Any) -> dict[str, Any]:
    """An MLP block whose .onnx file keeps its weights in model.onnx.data beside it, as the dynamo exporter writes it.

    onnxruntime finds the weights through the .onnx file's path; a session
    built from the file's bytes (``InferenceSession(f.read())``) has no
    folder to look in and refuses the model.
    """
    model = build(MLPBlock, seed=33)
    artifacts = build_artifacts(model, tokens(2, seed=3300), "mlp_block", external_data=True)
    inputs = tokens(4, seed=3301)
    truth = run_levels(model, artifacts, inputs)
    report = solution.verify(model, dict(artifacts), inputs)
    return {"truth": truth, "report": observe_report(report)}


@probe(category="verification", check="reports_are_consistent", hints=["fresh-each-call", "external-data"])
def verify_twice_external_data(solution: Any) -> dict[str, Any]:
    """Two verify() calls on two MLP blocks lowered into the same folder, weights in an external-data file named weights.bin.

    The two models share their architecture, so the second .onnx file is
    byte for byte the first: only weights.bin (and the .mlir and .vmfb
    files) change. The .onnx file names its external-data file, and the
    name need not be ``model.onnx.data``. A verify() that keys its sessions
    on the .onnx file's content alone, or on it and ``<path>.data``, reports
    the first model's onnxruntime outputs for the second.
    """
    first, second = build(MLPBlock, seed=34), build(MLPBlock, seed=35)
    calls = [(first, tokens(2, seed=3400), tokens(3, seed=3401)), (second, tokens(2, seed=3500), tokens(3, seed=3401))]
    return repeated_verification_case(solution, calls, "mlp_block", external_data=True, data_location=WEIGHTS_FILE)


@probe(category="verification", check="reports_are_consistent", hints=["fresh-each-call", "report-definition"])
def verify_twice_timestamps_kept(solution: Any) -> dict[str, Any]:
    """Two verify() calls on two MLP blocks rewritten at the same paths with the same sizes and modification times.

    After each lowering every file gets the same fixed mtime, as a copy
    that keeps timestamps (``shutil.copy2``, ``rsync -t``) or a
    reproducible build leaves it; the models share their architecture, so
    the sizes repeat too. A verify() that keys its cache on (path, mtime,
    size) reports the first model's outputs for the second.
    """
    first, second = build(MLPBlock, seed=36), build(MLPBlock, seed=37)
    calls = [(first, tokens(2, seed=3600), tokens(5, seed=3601)), (second, tokens(2, seed=3700), tokens(5, seed=3601))]
    return repeated_verification_case(solution, calls, "mlp_block", fixed_mtime=True)


# ---------------------------------------------------------------- both functions, called again and again


@probe(category="verification", check="repeated_calls_consistent", timeout=150, hints=["state-across-calls", "fresh-each-call"])
def repeated_calls_changed_lookalike_rebuilt(solution: Any) -> dict[str, Any]:
    """lower() and verify() called again and again on objects changed in place, look-alikes and rebuilt ones: every result right, also later.

    lower() twice on one model object (a single Linear layer, the quickest
    to compile) whose weights are replaced in place in between (``load_state_dict`` copies into the same parameters), each
    into a new workdir; the first call's files are run again after the
    second call. Then verify() five times, each on artifacts the probe
    lowered itself: a first call; the same input tensor refilled in place;
    the same model with its weights replaced in place and lowered again (new
    files); a new input tensor of the same shape; the model and the input
    deleted, ``gc.collect()``, and a new model and input built at their ids
    (the input over the same memory, as a rule), with their own new
    lowering; then, on a model whose outputs include views of its input and
    of its CLS parameter (``ViewsHead``), a call, its input refilled in
    place and a call again, and its weights replaced in place after that.
    A cache of lowered files, eval copies, sessions, modules or
    whole reports keyed on an object's id, a ``data_ptr()``, the model's
    class, the shapes, or the object itself returns an earlier call's
    values at one of the steps. The observation holds each report as
    returned (a copy taken right after the call) and as it reads once every
    call has run (an output buffer reused by a later call, or a torch
    level returned as ``t.numpy()`` views of an input or a weight the
    caller then changes in place, changes it).

    The verification lowerings are those of verify_faithful_mlp,
    verify_twice_same_paths and verify_empty_batch (same models, examples
    and function name), so the platform's compile cache holds them. The
    reference's run records that the rebuilt model and input took the freed
    ids; the check refuses an expected observation where they did not.
    """
    # lower(): one model object, its weights replaced in place between the calls.
    model = build(LinearHead, seed=40)
    example, runs = tokens(2, seed=4000), tokens(3, seed=4001)
    lowerings = []
    first_want = eager(model, runs)  # before lower() can touch the model
    first, first_artifacts = lowering_artifacts(solution, model, example)
    if first_artifacts is not None:
        first["runs"].append(run_lowering(first_artifacts, runs, first_want))
    lowerings.append(first)
    model.load_state_dict(build(LinearHead, seed=41).state_dict())
    second_want = eager(model, runs)
    second, second_artifacts = lowering_artifacts(solution, model, example)
    if second_artifacts is not None:
        second["runs"].append(run_lowering(second_artifacts, runs, second_want))
    lowerings.append(second)
    if first_artifacts is not None:  # the first call's files, after the second call
        first["runs"].append(run_lowering(first_artifacts, runs, first_want))
    del model

    # verify(): the probe's own lowerings, the same objects changed in place, look-alikes, rebuilt objects.
    calls: list[dict[str, Any]] = []
    returned: list[Any] = []

    def call(step: str, model: nn.Module, artifacts: dict[str, str], inputs: tuple[torch.Tensor, ...]) -> None:
        truth = run_levels(model, artifacts, inputs)
        report = solution.verify(model, dict(artifacts), inputs)
        returned.append(report)
        calls.append({"step": step, "truth": truth, "at call": snapshot(observe_report(report))})

    model = build(MLPBlock, seed=20)
    artifacts = build_artifacts(model, tokens(2, seed=2000), "mlp_block")
    memory = tokens(4, seed=4100)[0].numpy().copy()  # a loader's buffer: every batch is written into it
    x = torch.from_numpy(memory)
    call("first call", model, artifacts, (x,))
    x.copy_(tokens(4, seed=4101)[0])  # the next batch, in the same tensor
    call("the same input tensor refilled in place", model, artifacts, (x,))
    model.load_state_dict(build(MLPBlock, seed=26).state_dict())  # in place: same module, same parameter tensors
    artifacts = build_artifacts(model, tokens(2, seed=2600), "mlp_block")  # a new folder
    call("the same model, its weights replaced in place and lowered again", model, artifacts, (x,))
    (other,) = tokens(4, seed=4102)
    call("a new input tensor of the same shape", model, artifacts, (other,))

    weights = build(MLPBlock, seed=31).state_dict()  # made before the frees, so that they take no freed slot
    values = tokens(4, seed=4103)[0].numpy()
    freed = (id(model), id(x), x.data_ptr())
    del model, x, artifacts
    gc.collect()
    memory[...] = values  # the next batch, through NumPy: a new tensor over the same memory
    x = into_freed_id(lambda: torch.from_numpy(memory), freed[1])
    model = into_freed_id(lambda: MLPBlock.__new__(MLPBlock), freed[0])
    MLPBlock.__init__(model)
    model.load_state_dict(weights)
    model.eval()
    taken = {"model": id(model) == freed[0], "input": id(x) == freed[1], "input memory": x.data_ptr() == freed[2]}
    call("a model and an input freed and rebuilt at their ids", model, build_artifacts(model, tokens(2, seed=3100), "mlp_block"), (x,))

    # Outputs that are views of the input and of a weight: the input refilled in place, then the weights replaced in place.
    views = build(ViewsHead, seed=42)
    (y,) = tokens(4, seed=4200)
    views_artifacts = build_artifacts(views, tokens(2, seed=4201), "views_head")
    call("a model whose outputs are views of its input and of a weight", views, views_artifacts, (y,))
    y.copy_(tokens(4, seed=4202)[0])
    call("the same input tensor refilled in place, outputs views of it", views, views_artifacts, (y,))
    views.load_state_dict(build(ViewsHead, seed=43).state_dict())  # after the last call: its reports must not change

    for entry, report in zip(calls, returned, strict=True):
        entry["after all calls"] = observe_report(report)
    return {"lowerings": lowerings, "calls": calls, "freed ids taken": taken}


# ---------------------------------------------------------------- red team round 4


class RectifiedHead(nn.Module):
    """Pooled tokens through an MLP to 5 class scores and their int64 argmax, the scores made sparse past a margin.

    When any score passes the margin, every score is shifted down by it and
    its negatives set to 0.

    The test is a Python ``if`` on a tensor value: tracing records the
    branch the example took (scores left as they are). Where PyTorch makes
    them sparse, its scores are exactly 0 and the exported graph's are not,
    and a row whose scores all stay below the margin has PyTorch's argmax at
    class 0 (the first of equal maxima) and the graph's elsewhere:
    |x - r| / (|r| + 1e-7) with r = 0, in the float output and in the
    integer one.
    """

    def __init__(self, classes: int = 5, margin: float = 0.5) -> None:
        super().__init__()
        self.margin = margin
        self.fc1 = nn.Linear(D, 2 * D)
        self.fc2 = nn.Linear(2 * D, classes)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        scores = self.fc2(F.gelu(self.fc1(x.mean(dim=1))))
        if scores.max() > self.margin:
            scores = F.relu(scores - self.margin)
        return scores, scores.argmax(dim=-1)


class DropPath(nn.Module):
    """Stochastic depth: in training mode, drops its residual branch for a random half of the samples (a custom module reading ``self.training``)."""

    def __init__(self, branch: nn.Module, p: float = 0.5) -> None:
        super().__init__()
        self.branch = branch
        self.p = p

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.branch(x)
        if self.training:
            keep = (torch.rand(x.shape[0], *([1] * (x.dim() - 1))) >= self.p).to(x.dtype)
            h = h * keep / (1 - self.p)
        return x + h


class DropConvNet(nn.Module):
    """A conv net with channel dropout (``nn.Dropout2d``, not an ``nn.Dropout``) and a stochastic-depth residual block (``DropPath``)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.drop2d = nn.Dropout2d(0.5)
        self.block = DropPath(nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.ReLU()))
        self.fc = nn.Linear(8, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.block(self.drop2d(F.relu(self.conv1(x))))
        return self.fc(h.mean(dim=(2, 3)))


class TemperatureHead(nn.Module):
    """A Linear layer and a softmax at a temperature: a plain float attribute, in no state_dict and no repr."""

    def __init__(self, temperature: float = 1.0) -> None:
        super().__init__()
        self.temperature = temperature
        self.fc = nn.Linear(D, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (self.fc(x) / self.temperature).softmax(dim=-1)


class FlatViewsHead(nn.Module):
    """A projection, the flattened input, the first token and a learned CLS vector broadcast over the batch.

    ``x.flatten(1)`` is a view of the input that is contiguous at every
    batch, and at batch 1 ``x[:, 0]`` and ``cls.expand(1, D)`` are contiguous
    views too (a size-1 dim has no stride that matters): ``.contiguous()``
    returns such a tensor itself, so ``t.contiguous().numpy()`` shares the
    input's or the weight's memory.
    """

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(D, 4)
        self.cls = nn.Parameter(torch.randn(1, D))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return self.fc(x), x.flatten(1), x[:, 0], self.cls.expand(x.shape[0], D)


class InPlacePositions(nn.Module):
    """Adds learned positions to its input in place (``x.add_(pos)``, to spare a copy), then an MLP: forward writes into its argument."""

    def __init__(self) -> None:
        super().__init__()
        self.pos = nn.Parameter(torch.randn(SEQ, D))
        self.fc1 = nn.Linear(D, 4 * D)
        self.fc2 = nn.Linear(4 * D, D)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x.add_(self.pos)
        return x + self.fc2(F.gelu(self.fc1(x)))


def sequential(activation: type[nn.Module], seed: int) -> nn.Module:
    """Linear, ``activation``, Linear, with seeded weights: a ReLU and a GELU stack from one seed share every weight."""
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(D, 4 * D), activation(), nn.Linear(4 * D, D)).eval()


def temperature_head(temperature: float, seed: int) -> nn.Module:
    model = build(TemperatureHead, seed=seed)
    model.temperature = temperature
    return model


def clone(inputs: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
    return tuple(t.clone() for t in inputs)


@probe(category="verification", check="reports_are_consistent", hints=["fresh-each-call", "report-definition"])
def verify_twice_vmfb_rebuilt_alone(solution: Any) -> dict[str, Any]:
    """Two verify() calls on the same .onnx and .mlir files, the .vmfb compiled again in between with bf16 matmul operands.

    The first call verifies a faithful lowering of the two-output block.
    Then the same .mlir file is compiled again into the same .vmfb path with
    the statement's bf16 flags (``--iree-global-opt-demote-contraction-inputs-type=bf16``),
    the .onnx and .mlir files untouched, and verify() is called again on
    the same inputs: IREE now drifts by about 1e-3, and its ReLU head is
    non-zero at places where PyTorch's is exactly 0. The vmfb is not a
    function of the ONNX model (nor of the .mlir file): a verify() that keeps
    its loaded IREE function under the .onnx file's content (or the .mlir
    file's), and the function name, runs the faithful module again.
    """
    model = build(TwoHeads, seed=44)
    artifacts = build_artifacts(model, tokens(2, seed=4400), "two_heads")
    inputs = tokens(16, seed=4407)  # two places where IREE's ReLU head is non-zero and PyTorch's exactly 0
    calls = []
    for flags in ((), BF16_MATMULS):
        if flags:
            with open(artifacts["mlir"], "rb") as f:
                _cached_compile(artifacts["mlir"], artifacts["vmfb"], f.read(), flags)
        truth = run_levels(model, artifacts, inputs)
        report = solution.verify(model, dict(artifacts), inputs)
        calls.append({"truth": truth, "report": observe_report(report)})
    return {"calls": calls}


@probe(category="verification", check="report_is_consistent", hints=["report-definition", "which-pair"])
def verify_traced_branch_zeros(solution: Any) -> dict[str, Any]:
    """The export froze a rectifying branch: PyTorch's outputs are exactly 0 where the graph's are not.

    Its argmax is then class 0 where the graph's is another class.

    ``RectifiedHead`` is exported from small inputs (the branch is not
    taken) and verified on large ones (PyTorch takes it). PyTorch's scores
    are 0 wherever the graph's are negative, and rows whose scores are all
    negative have PyTorch's argmax at class 0. There the ``*_vs_torch``
    max_rel is |x| / 1e-7, millions: a max_rel that leaves out the
    positions where the reference value ``r`` is 0 misses it.
    """
    model = build(RectifiedHead, seed=45)
    example = tokens(2, seed=4500, scale=0.05)
    return verification_case(solution, model, example, tokens(12, seed=4501, scale=3.0), "rectified_head")


@probe(category="verification", check="reports_are_consistent", hints=["eval-mode", "report-definition"])
def verify_training_mode_every_layer_kind(solution: Any) -> dict[str, Any]:
    """A conv net with channel dropout and stochastic depth, verified in training mode: whole, then each layer alone.

    ``DropConvNet`` holds an ``nn.Dropout2d`` (a ``_DropoutNd``, not an
    ``nn.Dropout``) and ``DropPath``, a custom module that reads
    ``self.training``. verify() is called three times on the same artifacts
    and inputs: after ``model.train()``, then with the top module in eval
    mode and only the Dropout2d training, then only the DropPath. A verify()
    that switches to eval mode only the layer types it knows (``nn.Dropout``,
    BatchNorm) runs the others in training mode: channels or whole residual
    branches dropped at random, and the torch level is not the eval-mode
    model the artifacts were exported from.
    """
    model = build(DropConvNet, seed=46)
    artifacts = build_artifacts(model, images(2, seed=4600), "drop_conv_net")
    inputs = images(4, seed=4601)
    truth = run_levels(model, artifacts, inputs)
    calls = []
    for step in ("whole", "drop2d", "block"):
        if step == "whole":
            model.train()
        else:
            model.eval()
            getattr(model, step).train()
        report = solution.verify(model, dict(artifacts), inputs)
        calls.append({"truth": truth, "report": observe_report(report)})
    return {"calls": calls}


@probe(category="verification", check="verify_calls_consistent", hints=["state-across-calls"])
def verify_outputs_contiguous_views(solution: Any) -> dict[str, Any]:
    """Outputs that are contiguous views of the input and of a weight, at batch 4 and 1; the input refilled and the weights replaced afterwards.

    ``FlatViewsHead`` returns ``x.flatten(1)`` (a contiguous view of the
    input at any batch), ``x[:, 0]`` and ``cls.expand(B, D)`` (contiguous
    views at batch 1). verify() is called at batch 4, then at batch 1; then
    both input tensors are refilled in place and the model's weights
    replaced in place, and every report is read again. A torch level made
    with ``t.contiguous().numpy()`` (which copies only a non-contiguous
    view), ``np.asarray(t)`` or ``t.numpy()`` shares the caller's memory and
    changes with it: the returned report must own its arrays.
    """
    model = build(FlatViewsHead, seed=47)
    artifacts = build_artifacts(model, tokens(2, seed=4700), "flat_views_head")
    calls: list[dict[str, Any]] = []
    returned: list[Any] = []
    held = []
    for batch, seed in ((4, 4701), (1, 4702)):
        inputs = tokens(batch, seed=seed)
        truth = run_levels(model, artifacts, inputs)
        report = solution.verify(model, dict(artifacts), inputs)
        returned.append(report)
        held.append(inputs)
        calls.append({"step": f"batch {batch}", "truth": truth, "at call": snapshot(observe_report(report))})
    for number, inputs in enumerate(held):
        for t in inputs:
            t.copy_(randn(*t.shape, seed=4710 + number))
    model.load_state_dict(build(FlatViewsHead, seed=48).state_dict())
    for entry, report in zip(calls, returned, strict=True):
        entry["after all calls"] = observe_report(report)
    return {"lowerings": [], "calls": calls}


@probe(category="verification", check="verify_calls_consistent", timeout=240, hints=["state-across-calls", "fresh-each-call"])
def repeated_calls_same_weights_other_computation(solution: Any) -> dict[str, Any]:
    """lower() and verify() on models of one class with the same weights that compute different things: each result is its own model's.

    Two ``nn.Sequential(Linear, activation, Linear)`` built from one seed,
    a ReLU in one and a GELU in the other: same class, same state_dict, same
    shapes. Then two ``TemperatureHead`` of the same weights at temperatures
    1 and 4: a plain attribute, not in the state_dict nor in the module's
    repr. Each model is lowered by lower() (its files run at another batch)
    and verified on the probe's own lowering with the same input tensor
    values. A memo of lowered files or of the torch level keyed on the
    class (or the repr) and the weights, with the example's or the inputs'
    shapes or bytes, hands the second model of a pair the first one's
    results.
    """
    models = [
        ("relu stack", sequential(nn.ReLU, seed=49)),
        ("gelu stack, the same weights", sequential(nn.GELU, seed=49)),
        ("temperature 1", temperature_head(1.0, seed=50)),
        ("temperature 4, the same weights", temperature_head(4.0, seed=50)),
    ]
    lowerings, calls = [], []
    for step, model in models:
        example, runs = tokens(2, seed=4900), tokens(3, seed=4901)
        want = eager(model, runs)
        lowering, artifacts = lowering_artifacts(solution, model, example)
        if artifacts is not None:
            lowering["runs"].append(run_lowering(artifacts, runs, want))
        lowerings.append(lowering)
        artifacts = build_artifacts(model, example, "stack" if "stack" in step else "temperature_head")
        inputs = tokens(5, seed=4902)
        truth = run_levels(model, artifacts, inputs)
        report = solution.verify(model, dict(artifacts), inputs)
        calls.append({"step": step, "truth": truth, "at call": observe_report(report)})
    return {"lowerings": lowerings, "calls": calls}


@probe(category="verification", check="report_is_consistent", hints=["report-definition", "state-across-calls"])
def verify_forward_writes_into_input(solution: Any) -> dict[str, Any]:
    """A model whose forward adds its positions into its input in place: every level runs on the inputs as they were when verify() was called.

    ``InPlacePositions`` does ``x.add_(pos)`` on its argument. Its lowering
    is faithful (the graph adds the positions too), so every error is float32
    rounding. A verify() that takes the runtimes' arrays as ``t.numpy()``
    views and runs the torch level first hands onnxruntime and IREE an
    input that already holds the positions: they add them a second time,
    and the report shows an export drift of about 2 that is not there. The
    arrays must be copies taken before any level runs (or the torch level run
    on a copy, or last).
    """
    model = build(InPlacePositions, seed=51)
    artifacts = build_artifacts(model, tokens(2, seed=5100), "in_place_positions")
    inputs = tokens(3, seed=5101)
    truth = run_levels(model, artifacts, clone(inputs))
    report = solution.verify(model, dict(artifacts), inputs)
    return {"truth": truth, "report": observe_report(report)}
