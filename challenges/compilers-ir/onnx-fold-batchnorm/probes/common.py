"""What the public and hidden probes of onnx-fold-batchnorm share, imported by both as ``probe_common``."""

from __future__ import annotations

import io
import warnings
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import torch
from onnx import TensorProto, helper, numpy_helper
from torch import nn

ATOL = 1e-4
RTOL = 1e-4
DEBUG = False

# ---------------------------------------------------------------- building models


def randomize_batchnorms(model: nn.Module, seed: int) -> nn.Module:
    """Give every BatchNorm trained-looking statistics and affine parameters."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.modules.batchnorm._BatchNorm):
                c = m.num_features
                m.running_mean.copy_(torch.randn(c, generator=gen) * 0.5)
                m.running_var.copy_(torch.rand(c, generator=gen) * 1.5 + 0.05)
                m.weight.copy_(torch.rand(c, generator=gen) + 0.5)
                m.bias.copy_(torch.randn(c, generator=gen) * 0.3)
    return model.eval()


def from_torch(model: nn.Module, example_shape: tuple[int, ...], seed: int) -> onnx.ModelProto:
    """TorchScript export with constant folding off: BatchNormalization stays a separate node."""
    torch.manual_seed(seed)
    randomize_batchnorms(model, seed)
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model,
            (torch.randn(*example_shape),),
            buf,
            dynamo=False,
            do_constant_folding=False,
            opset_version=17,
            input_names=["x"],
        )
    return onnx.load_from_string(buf.getvalue())


def const(name: str, array: np.ndarray) -> TensorProto:
    return numpy_helper.from_array(np.asarray(array, dtype=np.float32), name)


def conv_weights(rng: np.random.Generator, prefix: str, cout: int, cin: int, k: int, *, bias: bool = True) -> list[TensorProto]:
    out = [const(f"{prefix}.W", rng.normal(0, 0.4, size=(cout, cin, k, k)))]
    if bias:
        out.append(const(f"{prefix}.B", rng.normal(0, 0.2, size=cout)))
    return out


def bn_weights(rng: np.random.Generator, prefix: str, c: int, var_scale: float = 1.0) -> list[TensorProto]:
    return [
        const(f"{prefix}.scale", rng.uniform(0.5, 1.5, size=c)),
        const(f"{prefix}.bias", rng.normal(0, 0.3, size=c)),
        const(f"{prefix}.mean", rng.normal(0, 0.5, size=c)),
        const(f"{prefix}.var", rng.uniform(0.05, 1.5, size=c) * var_scale),
    ]


def conv(prefix: str, x: str, out: str, *, bias: bool = True, pads: int = 1, **attrs: Any) -> onnx.NodeProto:
    inputs = [x, f"{prefix}.W"] + ([f"{prefix}.B"] if bias else [])
    return helper.make_node("Conv", inputs, [out], name=prefix, pads=[pads] * 4, **attrs)


def bn(prefix: str, x: str, out: str, **attrs: Any) -> onnx.NodeProto:
    names = [f"{prefix}.{p}" for p in ("scale", "bias", "mean", "var")]
    return helper.make_node("BatchNormalization", [x, *names], [out], name=prefix, **attrs)


def graph_model(
    nodes: list[onnx.NodeProto],
    inputs: list[tuple[str, list[int]]],
    outputs: list[str],
    initializers: list[TensorProto],
    *,
    opset: int = 17,
    functions: list[onnx.FunctionProto] | None = None,
    input_types: dict[str, int] | None = None,
) -> onnx.ModelProto:
    """A model of the given nodes; ``functions`` are model-local functions, each in a domain of its own."""
    types = input_types or {}
    graph = helper.make_graph(
        nodes,
        "probe",
        [helper.make_tensor_value_info(n, types.get(n, TensorProto.FLOAT), s) for n, s in inputs],
        [helper.make_tensor_value_info(n, TensorProto.UNDEFINED, None) for n in outputs],  # typed below
        initializers,
    )
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(f.domain, 1) for f in functions or []]
    model = helper.make_model(graph, opset_imports=list({o.domain: o for o in opsets}.values()), functions=functions or [])
    model.ir_version = 9 if opset >= 15 else 7
    # Declare the outputs' types and shapes, as an exporter would: from shape inference.
    inferred = onnx.shape_inference.infer_shapes(model).graph.output
    del model.graph.output[:]
    model.graph.output.extend(inferred)
    return model


# ---------------------------------------------------------------- running the pass


def first_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"


def run(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 3  # errors only: no notes about unused initializers
    # One thread: the probes' models are tiny, and a thread pool per session (spinning while it waits)
    # costs more than the whole run, most of all in a sandbox with a CPU quota.
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    quiet = ort.RunOptions()
    quiet.log_severity_level = 4  # a kernel's error is the exception's text, not a line on stderr
    return session.run(None, feeds, quiet)


def feeds_for(model: onnx.ModelProto, seed: int, fixed: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
    """Inputs for every graph input that is not an initializer: random, or the given fixed values."""
    rng = np.random.default_rng(seed)
    inits = {t.name for t in model.graph.initializer}
    out = dict(fixed or {})
    for value in model.graph.input:
        if value.name in inits or value.name in out:
            continue
        shape = tuple(d.dim_value for d in value.type.tensor_type.shape.dim)
        out[value.name] = rng.normal(0, 1.5, size=shape).astype(np.float32)
    return out


def op_counts(model: onnx.ModelProto) -> dict[str, int]:
    counts: dict[str, int] = {}
    for node in model.graph.node:
        counts[node.op_type] = counts.get(node.op_type, 0) + 1
    return dict(sorted(counts.items()))


def _compare(result: onnx.ModelProto, feeds: dict[str, np.ndarray], want: list[np.ndarray], want_names: list[str]) -> dict[str, Any]:
    """The returned model's numerics against the original's outputs.

    "numerics" is a sentence for the public probes' observations; "numerics failure"
    (names, shape, values, runtime) and "error ratio" (worst error / tolerance) are
    what the check composes its message from, so it never echoes a string the
    candidate's model controls (node and tensor names, onnxruntime's error text).
    """
    obs: dict[str, Any] = {}
    names = [o.name for o in result.graph.output]
    if names != want_names:
        obs["numerics"] = f"the graph outputs are {names}, they were {want_names}"
        obs["numerics failure"] = "names"
        return obs
    try:
        got = run(result, feeds)
    except Exception as exc:  # noqa: BLE001
        obs["numerics"] = "onnxruntime cannot run the result: " + first_line(exc)
        obs["numerics failure"] = "runtime"
        return obs
    problems = []
    worst = 0.0
    for name, g, w in zip(names, got, want, strict=True):
        if g.shape != w.shape or g.dtype != w.dtype:
            problems.append(f"output {name!r} has shape {list(g.shape)} {g.dtype}, was {list(w.shape)} {w.dtype}")
            obs["numerics failure"] = "shape"
            continue
        if not np.issubdtype(w.dtype, np.floating):
            if not np.array_equal(g, w):
                problems.append(f"output {name!r} differs from the original's")
                obs.setdefault("numerics failure", "values")
            continue
        err = np.abs(g.astype(np.float64) - w.astype(np.float64))
        ratio = err / (ATOL + RTOL * np.abs(w.astype(np.float64)))
        worst = max(worst, float(np.nanmax(ratio)) if ratio.size and not np.isnan(ratio).all() else 0.0)
        if not np.all(err <= ATOL + RTOL * np.abs(w)):
            problems.append(f"output {name!r} differs from the original's by up to {float(np.nanmax(err)):.3g}")
            obs.setdefault("numerics failure", "values")
    obs["numerics"] = "; ".join(problems) if problems else "ok"
    if problems:
        obs["error ratio"] = worst
    if DEBUG:
        print(f"worst error / tolerance: {worst:.3g}")
    return obs


def validity(model: onnx.ModelProto) -> str:
    """"ok", or the checker's complaint (full_check: shape inference too, strict)."""
    try:
        onnx.checker.check_model(model, full_check=True)
        return "ok"
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        return "onnx.checker: " + first_line(exc)


_DEFAULT_DOMAINS = ("", "ai.onnx")


def _subgraphs(node: onnx.NodeProto) -> list[onnx.GraphProto]:
    return [g for a in node.attribute for g in ([a.g] if a.HasField("g") else []) + list(a.graphs)]


def _names_inside(graph: onnx.GraphProto) -> set[str]:
    """Every name a subgraph mentions (what its nodes read and write, its outputs), at any depth."""
    names = {o.name for o in graph.output}
    for node in graph.node:
        names.update(node.input)
        names.update(node.output)
        for sub in _subgraphs(node):
            names |= _names_inside(sub)
    return names


def untouched(original: onnx.ModelProto, result: onnx.ModelProto) -> Any:
    """"ok", or the parts of ``result`` outside what the fold owns that differ from ``original``.

    The fold owns the Conv and BatchNormalization nodes it removes (default domain), the Convs it
    adds (each writes the output of a removed BatchNormalization), the initializers it orphans or
    creates, and the value_info entries of tensors that are gone. Everything else is compared with
    the original byte for byte (SerializeToString): every other node, in its original order (a node
    with a subgraph is compared whole, so a change at any depth counts), the graph's fields other
    than its nodes, initializers and value_info (name, doc_string, inputs, outputs, ...), the model's
    fields other than its graph (ir_version, opset_import, producer, doc_string, metadata_props,
    functions, training_info, ...), every original initializer the result still has (and those that
    something other than a folded pair reads must still be there, training_info's bindings and graphs
    included), and the value_info entry of every
    tensor that still exists (no entry added; one of a tensor that is gone may go or stay). The parts
    are named from a fixed list: nothing of the candidate's.
    """
    problems: list[str] = []

    def model_rest(m: onnx.ModelProto) -> bytes:
        copy = onnx.ModelProto()
        copy.CopyFrom(m)
        copy.ClearField("graph")
        return copy.SerializeToString(deterministic=True)

    def graph_rest(g: onnx.GraphProto) -> bytes:
        copy = onnx.GraphProto()
        copy.CopyFrom(g)
        for field in ("node", "initializer", "value_info"):
            copy.ClearField(field)
        return copy.SerializeToString(deterministic=True)

    if model_rest(original) != model_rest(result):
        problems.append("model fields")
    og, rg = original.graph, result.graph
    if graph_rest(og) != graph_rest(rg):
        problems.append("graph fields")

    # Nodes: a node of the result that is byte-identical to one of the original's is that node, kept.
    position = {node.SerializeToString(deterministic=True): i for i, node in enumerate(og.node)}
    kept: list[int] = []
    added: list[onnx.NodeProto] = []
    for node in rg.node:
        i = position.get(node.SerializeToString(deterministic=True))
        if i is None:
            added.append(node)
        else:
            kept.append(i)
    stayed = set(kept)
    removed = [node for i, node in enumerate(og.node) if i not in stayed]
    folded = {n.output[0] for n in removed if n.op_type == "BatchNormalization" and n.domain in _DEFAULT_DOMAINS and n.output}
    owned = all(n.op_type in ("Conv", "BatchNormalization") and n.domain in _DEFAULT_DOMAINS for n in removed) and all(
        n.op_type == "Conv" and n.domain in _DEFAULT_DOMAINS and len(n.output) == 1 and n.output[0] in folded for n in added
    )
    if not owned or len(kept) != len(stayed):
        problems.append("nodes")
    elif kept != sorted(kept):
        problems.append("node order")

    # Initializers: the original's that the result still has are unchanged; those that anything but a folded
    # pair reads (a node that stays, at any depth of its subgraphs, a graph input or output) are still there.
    read = {o.name for o in og.output} | {i.name for i in og.input} | _training_uses(original)[0]
    for i in stayed:
        read.update(og.node[i].input)
        for sub in _subgraphs(og.node[i]):
            read |= _names_inside(sub)
    have = {t.name: t.SerializeToString(deterministic=True) for t in rg.initializer}
    for t in og.initializer:
        changed = have[t.name] != t.SerializeToString(deterministic=True) if t.name in have else t.name in read
        if changed:
            problems.append("initializers")
            break

    # value_info: the entry of every tensor still in the graph stays as it was, and no entry is added.
    exists = {o for node in rg.node for o in node.output} | {i.name for i in rg.input} | set(have)
    entries = {v.SerializeToString(deterministic=True) for v in rg.value_info}
    before = {v.SerializeToString(deterministic=True) for v in og.value_info}
    if not entries <= before or any(v.name in exists and v.SerializeToString(deterministic=True) not in entries for v in og.value_info):
        problems.append("value_info")
    return problems or "ok"


def _defined(graph: onnx.GraphProto) -> list[str]:
    """Every definition of a tensor name, in the graph and in its subgraphs at any depth, one entry per definition:
    initializers, sparse initializers, graph inputs (an input with an initializer of its name is that initializer, with
    a default), node outputs."""
    inits = [t.name for t in graph.initializer] + [t.values.name for t in graph.sparse_initializer]
    out = inits + [i.name for i in graph.input if i.name not in set(inits)]
    for node in graph.node:
        out += [o for o in node.output if o]
        for sub in _subgraphs(node):
            out += _defined(sub)
    return out


def _mentioned(graph: onnx.GraphProto) -> set[str]:
    """Every tensor name the graph uses anywhere, at any depth: inputs, outputs, value_info, initializers (dense and
    sparse), what nodes read and write."""
    names = {v.name for v in (*graph.input, *graph.output, *graph.value_info)}
    names |= {t.name for t in graph.initializer} | {t.values.name for t in graph.sparse_initializer}
    for node in graph.node:
        names.update(node.input)
        names.update(node.output)
        for sub in _subgraphs(node):
            names |= _mentioned(sub)
    names.discard("")
    return names


def _training_uses(model: onnx.ModelProto) -> tuple[set[str], set[str]]:
    """What the model's training_info uses: the initializers its bindings name (as keys) or its graphs read, at any
    depth, and every tensor name it mentions (ONNX joins its algorithm to the main graph when the model trains, so
    those names share the main graph's)."""
    reads: set[str] = set()
    mentioned: set[str] = set()
    for info in model.training_info:
        for binding in (*info.initialization_binding, *info.update_binding):
            reads.add(binding.key)
            mentioned |= {binding.key, binding.value}
        for sub in (info.initialization, info.algorithm):
            reads |= _names_inside(sub)
            mentioned |= _mentioned(sub)
    mentioned.discard("")
    return reads, mentioned


def _node_names(graph: onnx.GraphProto) -> list[str]:
    """The non-empty names of the nodes, at any depth."""
    out = [n.name for n in graph.node if n.name]
    for node in graph.node:
        for sub in _subgraphs(node):
            out += _node_names(sub)
    return out


def _added_and_kept(original: onnx.ModelProto, result: onnx.ModelProto) -> tuple[list[onnx.NodeProto], list[onnx.NodeProto]]:
    """The result's top-level nodes that are none of the original's (byte for byte), and the original's that it kept."""
    before = {node.SerializeToString(deterministic=True) for node in original.graph.node}
    after = {node.SerializeToString(deterministic=True) for node in result.graph.node}
    added = [node for node in result.graph.node if node.SerializeToString(deterministic=True) not in before]
    kept = [node for node in original.graph.node if node.SerializeToString(deterministic=True) in after]
    return added, kept


def conv_attributes(original: onnx.ModelProto, result: onnx.ModelProto) -> Any:
    """"ok", or ["conv attributes"] when a Conv the fold added does not carry its source Conv's attributes.

    An added Conv writes the output of a BatchNormalization of the original; following that BN's input back through
    the BatchNormalizations the fold removed (two BNs in a row fold into one Conv) reaches the Conv ``C`` of the pair.
    The added Conv's attributes must be C's as a multiset, byte for byte (SerializeToString): none dropped (a
    kernel_shape onnxruntime could infer, an attribute equal to its default), none added, none rewritten.
    """
    og = original.graph
    producer = {out: node for node in og.node for out in node.output if out}
    added, _ = _added_and_kept(original, result)

    def multiset(node: onnx.NodeProto) -> list[bytes]:
        return sorted(a.SerializeToString(deterministic=True) for a in node.attribute)

    for node in added:
        if node.op_type != "Conv" or len(node.output) != 1:
            continue
        source = producer.get(node.output[0])
        seen = 0
        while source is not None and source.op_type == "BatchNormalization" and source.input and seen < len(og.node):
            source = producer.get(source.input[0])
            seen += 1
        if source is None or source.op_type != "Conv" or seen == 0:
            continue  # not the fold of a pair: the node counts and "untouched" judge it
        if multiset(node) != multiset(source):
            return ["conv attributes"]
    return "ok"


def names_once(original: onnx.ModelProto, result: onnx.ModelProto) -> Any:
    """"ok", or what is wrong with the names of ``result`` (from a fixed list, nothing of the candidate's).

    Every tensor name is defined once across all scopes (more often only where the original already did so), a name
    the result defines and the original did not (W' and b') is one the original's graph uses nowhere, in no field and
    at no depth (value_info and graph outputs included), nor its training_info (bindings and graphs; a model-local
    function's body is a scope of its own and does not count), and a node name is no other node's at any depth (more often only
    where the original already had it so). check_model and onnxruntime accept some of these collisions (a subgraph's
    unread input of the same name), the statement does not.
    """
    problems: list[str] = []
    before, after = _counts(_defined(original.graph)), _counts(_defined(result.graph))
    if any(n > max(1, before.get(name, 0)) for name, n in after.items()):
        problems.append("defined twice")
    # The result's new initializers (dense or sparse, under a name the original gave no initializer) are W' and b':
    # their names must be ones the original uses nowhere, whatever else the result defines or drops.
    def init_names(g: onnx.GraphProto) -> set[str]:
        return {t.name for t in g.initializer} | {t.values.name for t in g.sparse_initializer}

    new_inits = init_names(result.graph) - init_names(original.graph)
    if ((set(after) - set(before)) | new_inits) & (_mentioned(original.graph) | _training_uses(original)[1]):
        problems.append("name in use")
    nodes_before, nodes_after = _counts(_node_names(original.graph)), _counts(_node_names(result.graph))
    # A node the result adds must not take the name of a node of the original that is still there, at any depth (the
    # names of the nodes the fold removed are free again).
    added, kept = _added_and_kept(original, result)
    taken = set(_node_names(helper.make_graph(kept, "kept", [], [])))
    if any(n > max(1, nodes_before.get(name, 0)) for name, n in nodes_after.items()) or any(
        node.name and node.name in taken for node in added
    ):
        problems.append("node name")
    return problems or "ok"


def _counts(names: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for name in names:
        out[name] = out.get(name, 0) + 1
    return out


def _separate(model: onnx.ModelProto, result: onnx.ModelProto) -> bool:
    """Whether ``result`` is a model of its own: not the object passed in, and editing it leaves ``model``'s bytes as
    they were. Edits ``result``: call it last."""
    if result is model:
        return False
    snapshot = model.SerializeToString(deterministic=True)
    result.doc_string += " (edited by the probe)"
    result.graph.name += "_edited"
    result.graph.node.add(op_type="Edited", name="edited_by_the_probe")
    result.graph.ClearField("initializer")
    return model.SerializeToString(deterministic=True) == snapshot


def apply_pass(
    solution: Any,
    model: onnx.ModelProto,
    seed: int,
    *,
    fixed: dict[str, np.ndarray] | None = None,
    hygiene: bool = False,
    again: bool = False,
) -> dict[str, Any]:
    """Run the candidate's pass on model and describe the result (see the module docstring).

    Every description also says whether the result is a new model (not the object passed in, and editing it
    leaves the caller's model as it was: "new model") and whether its names are each used once ("names",
    ``names_once``). ``hygiene`` also records whether the model passed in is unchanged; ``again`` runs the pass
    a second time, on its own result, and describes that second result too (a new model again).
    """
    feeds = feeds_for(model, seed, fixed)
    want = run(model, feeds)
    want_names = [o.name for o in model.graph.output]
    before = model.SerializeToString(deterministic=True)
    original = onnx.ModelProto()
    original.CopyFrom(model)  # what the result is compared with, whatever the pass does to model
    result = solution.fold_batchnorm(model)
    if not isinstance(result, onnx.ModelProto):
        return {"returned": f"fold_batchnorm returned a {type(result).__name__}, not an onnx.ModelProto"}
    obs: dict[str, Any] = {"returned": "ModelProto", "ops": op_counts(result)}
    obs["valid"] = validity(result)
    obs["graph inputs kept"] = [i.name for i in result.graph.input] == [i.name for i in model.graph.input]
    obs["untouched"] = untouched(original, result)
    obs["names"] = names_once(original, result)
    obs["attributes"] = conv_attributes(original, result)
    obs.update(_compare(result, feeds, want, want_names))
    if hygiene:
        obs["input unchanged"] = model.SerializeToString(deterministic=True) == before
    if again:
        first = onnx.ModelProto()
        first.CopyFrom(result)
        second = solution.fold_batchnorm(result)
        if not isinstance(second, onnx.ModelProto):
            obs["second run"] = "not a ModelProto"
        else:
            obs["second run"] = op_counts(second)
            obs["second run valid"] = validity(second)
            obs["second run untouched"] = untouched(first, second)
            again_obs = _compare(second, feeds, want, want_names)
            obs["second run numerics"] = "ok" if again_obs["numerics"] == "ok" else again_obs.get("numerics failure", "values")
            obs["second run new model"] = _separate(result, second)
    # Last, as it edits the result: a new model, also when nothing folds, and one that shares nothing with the caller's.
    obs["new model"] = _separate(model, result)
    return obs
