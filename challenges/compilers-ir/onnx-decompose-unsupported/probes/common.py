"""What the public and hidden probes of onnx-decompose-unsupported share, imported by both as ``probe_common``."""

from __future__ import annotations

import copy
import itertools
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
from onnx import AttributeProto, TensorProto, helper, numpy_helper

SUPPORTED_OPS = frozenset(
    {
        "Abs", "Add", "AveragePool", "Cast", "Clip", "Concat", "Constant", "Conv", "Div", "Equal",
        "Erf", "Exp", "Expand", "Flatten", "Gather", "Gemm", "Identity", "Less", "Log", "MatMul",
        "Max", "MaxPool", "Min", "Mul", "Neg", "Pow", "Reciprocal", "ReduceMax", "ReduceMean",
        "ReduceSum", "Relu", "Reshape", "Shape", "Sigmoid", "Slice", "Sqrt", "Squeeze", "Sub",
        "Tanh", "Transpose", "Unsqueeze", "Where",
    }
)  # fmt: skip
F32, F64 = TensorProto.FLOAT, TensorProto.DOUBLE
DEFAULT_DOMAINS = ("", "ai.onnx")
TARGETS = ("Gelu", "LayerNormalization", "Softmax", "HardSwish")


# ---------------------------------------------------------------- building models


def vi(name: str, shape: list[Any], elem: int = F32) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def init(name: str, value: np.ndarray) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value), name)


def make(
    nodes: Iterable[onnx.NodeProto],
    inputs: Iterable[onnx.ValueInfoProto],
    outputs: Iterable[onnx.ValueInfoProto],
    opset: int,
    inits: Iterable[onnx.TensorProto] = (),
    extra_opsets: Iterable[tuple[str, int]] = (),
) -> onnx.ModelProto:
    graph = helper.make_graph(list(nodes), "g", list(inputs), list(outputs), initializer=list(inits))
    opsets = [helper.make_opsetid("", opset), *(helper.make_opsetid(d, v) for d, v in extra_opsets)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=10)


def randn(seed: int, *shape: int, scale: float = 1.0, dtype: Any = np.float32) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(dtype)


def run(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3  # no warnings about unread initializers: the models may have them
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(None, feeds), strict=True))


def _walk(graph: onnx.GraphProto) -> Iterator[onnx.NodeProto]:
    for node in graph.node:
        yield node
        for attr in node.attribute:
            if attr.type == AttributeProto.GRAPH:
                yield from _walk(attr.g)
            elif attr.type == AttributeProto.GRAPHS:
                for sub in attr.graphs:
                    yield from _walk(sub)


def _graphs(graph: onnx.GraphProto) -> Iterator[onnx.GraphProto]:
    """The graph and every subgraph in it, at any depth."""
    yield graph
    for node in _walk(graph):
        for attr in node.attribute:
            if attr.type == AttributeProto.GRAPH:
                yield attr.g
            elif attr.type == AttributeProto.GRAPHS:
                yield from attr.graphs


def _is_target(node: onnx.NodeProto) -> bool:
    return node.domain in DEFAULT_DOMAINS and node.op_type in TARGETS


def _walk_ours(graph: onnx.GraphProto) -> Iterator[onnx.NodeProto]:
    """Like _walk, but not into the graphs a node of another domain holds: those are part of that node, left as they are."""
    for node in graph.node:
        yield node
        if node.domain not in DEFAULT_DOMAINS:
            continue
        for attr in node.attribute:
            if attr.type == AttributeProto.GRAPH:
                yield from _walk_ours(attr.g)
            elif attr.type == AttributeProto.GRAPHS:
                for sub in attr.graphs:
                    yield from _walk_ours(sub)


def _as_is(graph: onnx.GraphProto) -> Counter[tuple[Any, ...]]:
    """The nodes decompose leaves as they are, each as (domain, op type, inputs, outputs, attributes).

    Nodes of other domains than the default one, and default-domain nodes the
    accelerator does not support that are not decompose's to rewrite (the
    control flow a model may hold: If, Loop, Scan).
    """
    return Counter(
        (n.domain, n.op_type, tuple(n.input), tuple(n.output), tuple(a.SerializeToString() for a in n.attribute))
        for n in _walk(graph)
        if n.domain not in DEFAULT_DOMAINS or (n.op_type not in SUPPORTED_OPS and n.op_type not in TARGETS)
    )


def ort_twin(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model as onnxruntime is given it: a LayerNormalization's B written "" left out instead.

    The two mean the same (an optional input named "" is absent), but
    onnxruntime 1.32 crashes (SIGSEGV) on a float32 LayerNormalization whose
    B is "", so the original's outputs come from this twin.
    """
    if not any(_is_target(n) and n.op_type == "LayerNormalization" and "" in n.input[2:] for n in model.graph.node):
        return model
    twin = copy.deepcopy(model)
    for n in twin.graph.node:
        if _is_target(n) and n.op_type == "LayerNormalization":
            while len(n.input) > 2 and not n.input[-1]:
                del n.input[-1]
    return twin


def names_in_use(model: onnx.ModelProto) -> set[str]:
    """Every name the model uses, tensors and nodes, in every graph."""
    used: set[str] = set()
    for g in _graphs(model.graph):
        for v in itertools.chain(g.input, g.output, g.value_info, g.initializer):
            used.add(v.name)
        used.update(s.values.name for s in g.sparse_initializer)
        for n in g.node:
            used.add(n.name)
            used.update(n.input)
            used.update(n.output)
    used.discard("")
    return used


def _new_parts(model: onnx.ModelProto, new: onnx.ModelProto) -> tuple[list[onnx.NodeProto], list[str]]:
    """The top-level nodes and initializer names ``new`` has and ``model`` had not.

    A node of ``model`` other than the four to rewrite counts as kept when
    ``new`` has a node of the same domain, op type and outputs: a rewrite
    may rewire what a kept node reads.
    """
    kept = Counter((n.domain, n.op_type, tuple(n.output)) for n in model.graph.node if not _is_target(n))
    added = []
    for n in new.graph.node:
        key = (n.domain, n.op_type, tuple(n.output))
        if kept[key] > 0:
            kept[key] -= 1
        else:
            added.append(n)
    had = {t.name for t in model.graph.initializer}
    return added, [t.name for t in new.graph.initializer if t.name not in had]


def made_up_names(model: onnx.ModelProto, new: onnx.ModelProto) -> list[str]:
    """The names ``new`` made up: its new nodes' outputs and names, its new initializers, sorted."""
    nodes, inits = _new_parts(model, new)
    names = {v for n in nodes for v in (n.name, *n.output)} | set(inits)
    return sorted(names - names_in_use(model) - {""})


def name_problems(model: onnx.ModelProto, new: onnx.ModelProto) -> list[str]:
    """Where ``new`` breaks the rule on names: a made-up name the model already used, or a name defined twice.

    The outputs and names of the nodes to rewrite are the rewrite's to reuse
    (a clash they cause is a name defined twice); every other name a new
    node or initializer has must be one the model did not use anywhere
    (subgraphs included).
    """
    used = names_in_use(model)
    targets = [n for n in model.graph.node if _is_target(n)]
    used -= {v for n in targets for v in (n.name, *n.output)}
    nodes, inits = _new_parts(model, new)
    problems: list[str] = []
    for n in nodes:
        problems += [f"made-up tensor {v!r} is a name the model used" for v in n.output if v in used]
        if n.name in used:
            problems.append(f"made-up node name {n.name!r} is a name the model used")
    problems += [f"made-up initializer {v!r} is a name the model used" for v in inits if v in used]

    def twice(g: onnx.GraphProto) -> Counter[str]:
        """How many times each tensor is defined: by a node, as a graph input or initializer (an initializer may be an input too)."""
        defs: Counter[str] = Counter(v for n in g.node for v in n.output if v)
        defs.update({i.name for i in g.input} | {t.name for t in g.initializer})
        for name, k in Counter(t.name for t in g.initializer).items():
            defs[name] += k - 1
        return defs

    before, after = twice(model.graph), twice(new.graph)
    problems += [f"tensor {v!r} is defined {k} times" for v, k in sorted(after.items()) if k > max(1, before[v])]
    names_before = Counter(n.name for n in model.graph.node if n.name)
    names_after = Counter(n.name for n in new.graph.node if n.name)
    problems += [f"node name {v!r} is given {k} times" for v, k in sorted(names_after.items()) if k > max(1, names_before[v])]
    return problems


def _bytes(proto: Any) -> bytes:
    return proto.SerializeToString(deterministic=True)


def _holds_target(node: onnx.NodeProto) -> bool:
    """Whether one of the node's subgraphs, at any depth, holds a node to rewrite (never one a node of another domain holds)."""
    return node.domain in DEFAULT_DOMAINS and any(
        _is_target(n)
        for a in node.attribute
        for sub in ([a.g] if a.type == AttributeProto.GRAPH else list(a.graphs) if a.type == AttributeProto.GRAPHS else [])
        for n in _walk_ours(sub)
    )


def _same_node(old: onnx.NodeProto, new: onnx.NodeProto, where: str, problems: list[str]) -> bool:
    """``new`` is ``old`` byte for byte; a subgraph that holds a node to rewrite is compared part by part instead."""
    if not _holds_target(old):
        return _bytes(old) == _bytes(new)
    bare_old, bare_new = onnx.NodeProto(), onnx.NodeProto()
    bare_old.CopyFrom(old)
    bare_new.CopyFrom(new)
    for bare in (bare_old, bare_new):
        for a in bare.attribute:
            a.ClearField("g")
            del a.graphs[:]
    if _bytes(bare_old) != _bytes(bare_new):
        return False
    graphs_new = {a.name: a for a in new.attribute}
    for a in old.attribute:
        b = graphs_new.get(a.name)
        olds = [a.g] if a.type == AttributeProto.GRAPH else list(a.graphs)
        news = [b.g] if b is not None and b.type == AttributeProto.GRAPH else list(b.graphs) if b is not None else []
        for i, (g_old, g_new) in enumerate(zip(olds, news, strict=False)):
            problems += _graph_untouched(g_old, g_new, f"{where}, the subgraph {a.name!r}" + (f"[{i}]" if len(olds) > 1 else ""))
    return True


def _graph_untouched(old: onnx.GraphProto, new: onnx.GraphProto, where: str) -> list[str]:
    """What ``new`` changed of what a rewrite must leave alone in ``old``.

    Every node of ``old`` that is not one to rewrite must be in ``new``,
    serialized byte for byte (its subgraphs too, unless one holds a node to
    rewrite: then that subgraph is compared the same way) and in the same
    order, new nodes anywhere between them. The graph's inputs and outputs
    are the same, in order; every initializer, sparse initializer and
    value_info entry is still there, by name, with the same content (new
    ones may be added).
    """
    problems: list[str] = []

    def label(n: onnx.NodeProto) -> str:
        return f"{n.op_type} node {n.name!r}" if n.name else f"unnamed {n.op_type} node writing {list(n.output)}"

    j = 0
    nodes = list(new.node)
    for n in old.node:
        if _is_target(n):
            continue
        k = j
        while k < len(nodes) and not _same_node(n, nodes[k], where, []):
            k += 1
        if k < len(nodes):
            _same_node(n, nodes[k], where, problems)
            j = k + 1
            continue
        if any(_same_node(n, m, where, []) for m in nodes):
            problems.append(f"{where}: the {label(n)} is not in its original order among the nodes kept")
        elif any(m.op_type == n.op_type and m.domain == n.domain and list(m.output) == list(n.output) for m in nodes):
            problems.append(f"{where}: the {label(n)} was changed (it must stay byte for byte as it was)")
        else:
            problems.append(f"{where}: the {label(n)} was removed")
    for kind, olds, news in (("graph inputs", old.input, new.input), ("graph outputs", old.output, new.output)):
        if [_bytes(v) for v in olds] != [_bytes(v) for v in news]:
            problems.append(f"{where}: the {kind} were changed (names, types or order)")
    for kind, olds, news, key in (
        ("initializer", old.initializer, new.initializer, lambda t: t.name),
        ("sparse initializer", old.sparse_initializer, new.sparse_initializer, lambda t: t.values.name),
        ("value_info entry", old.value_info, new.value_info, lambda v: v.name),
    ):
        have: dict[str, set[bytes]] = {}
        for v in news:
            have.setdefault(key(v), set()).add(_bytes(v))
        for v in olds:
            if key(v) not in have:
                problems.append(f"{where}: the {kind} {key(v)!r} was removed")
            elif _bytes(v) not in have[key(v)]:
                problems.append(f"{where}: the {kind} {key(v)!r} was changed")
    return problems


GRAPH_PARTS = ("node", "initializer", "sparse_initializer", "input", "output", "value_info")


def _model_fields(model: onnx.ModelProto) -> dict[str, bytes]:
    """Every field of the model but its graph's parts, each serialized: ir_version, opset_import as written
    (order and spelling), producer, doc strings, metadata_props, functions, the graph's own name and doc_string."""
    fields: dict[str, bytes] = {}
    for desc, value in model.ListFields():
        if desc.name == "graph":
            bare = onnx.GraphProto()
            bare.CopyFrom(value)
            for part in GRAPH_PARTS:
                bare.ClearField(part)
            for gdesc, gvalue in bare.ListFields():
                if gvalue not in ("", 0, b""):  # a field set to its default is no change
                    fields[f"graph.{gdesc.name}"] = _field_bytes(gdesc, gvalue)
        elif value not in ("", 0, b""):
            fields[desc.name] = _field_bytes(desc, value)
    return fields


def _field_bytes(desc: Any, value: Any) -> bytes:
    repeated = desc.is_repeated if hasattr(desc, "is_repeated") else desc.label == desc.LABEL_REPEATED
    if repeated:
        return b"|".join(_field_bytes_one(desc, v) for v in value)
    return _field_bytes_one(desc, value)


def _field_bytes_one(desc: Any, value: Any) -> bytes:
    return _bytes(value) if desc.type == desc.TYPE_MESSAGE else repr(value).encode()


def untouched_problems(model: onnx.ModelProto, new: onnx.ModelProto) -> list[str]:
    """What ``new`` changed of what decompose must leave as it was (see _graph_untouched), the model's own fields too."""
    problems = []
    old_fields, new_fields = _model_fields(model), _model_fields(new)
    for name in sorted(set(old_fields) | set(new_fields)):
        if old_fields.get(name) != new_fields.get(name):
            problems.append(f"the model's field {name} was changed")
    return problems + _graph_untouched(model.graph, new.graph, "the main graph")


def _short(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc).strip()[:400]}"


def run_all(model: onnx.ModelProto, feeds: dict[str, np.ndarray], more_feeds: Iterable[dict[str, np.ndarray]] = ()) -> dict[str, np.ndarray]:
    """``run`` on ``feeds``, then on each of ``more_feeds`` (feeds of other shapes), whose outputs are keyed ``<name>@<k>``, k from 1."""
    outputs = run(model, feeds)
    for k, more in enumerate(more_feeds, start=1):
        outputs.update({f"{name}@{k}": a for name, a in run(model, more).items()})
    return outputs


def decompose_case(
    solution: Any,
    model: onnx.ModelProto,
    feeds: dict[str, np.ndarray],
    original: bool = True,
    more_feeds: Iterable[dict[str, np.ndarray]] = (),
    runs: bool = True,
    as_is: bool = False,
    returned: list[Any] | None = None,
) -> dict[str, Any]:
    """The observation the check reads: what is left, validity, and the outputs.

    ``more_feeds``: feeds of other concrete shapes (a model whose dims are
    symbolic), each run on the original and on the rewrite too. ``runs``
    False: a model onnxruntime cannot run (a node of another domain that
    holds a graph); it is judged on what is left, the names and the checker,
    with no outputs to compare. ``as_is``: decompose gets ``model`` itself,
    not a copy of it. ``returned``: a list the model decompose returned is
    appended to.
    """
    more_feeds = list(more_feeds)
    obs: dict[str, Any] = {
        "interface": {"inputs": [i.name for i in model.graph.input], "outputs": [o.name for o in model.graph.output]},
    }
    if original:
        obs["original"] = run_all(ort_twin(model), feeds, more_feeds) if runs else {}
    try:
        new = solution.decompose(model if as_is else copy.deepcopy(model))
    except Exception as exc:  # noqa: BLE001 - reported by the check
        obs["error"] = "decompose raised " + _short(exc)
        return obs
    if not isinstance(new, onnx.ModelProto):
        obs["error"] = f"decompose returned a {type(new).__name__}, not an onnx.ModelProto"
        return obs
    if returned is not None:
        returned.append(new)
    # Nodes of other domains and the control flow are not decompose's to
    # rewrite: the ones the model had must still be there, unchanged, and are
    # not counted as left.
    given, kept = _as_is(model.graph), _as_is(new.graph)
    left = {n.op_type for n in _walk_ours(new.graph) if _is_target(n)}
    left.update(key[1] if key[0] in DEFAULT_DOMAINS else f"{key[0]}::{key[1]}" for key in kept - given)
    obs["unsupported_left"] = sorted(left)
    obs["foreign_nodes_changed"] = sum((given - kept).values())
    obs["names"] = name_problems(model, new)[:5]
    obs["untouched"] = untouched_problems(model, new)[:5]
    obs["rewritten_interface"] = {
        "inputs": [i.name for i in new.graph.input],
        "outputs": [o.name for o in new.graph.output],
    }
    try:
        onnx.checker.check_model(new, full_check=True)
        obs["check_model"] = "ok"
    except Exception as exc:  # noqa: BLE001
        obs["check_model"] = _short(exc)
    if left or obs["check_model"] != "ok":
        # The check fails it already; and onnxruntime may crash on what is left (a LayerNormalization with B "").
        obs["outputs"] = "not run: the rewritten model is not valid or still unsupported"
        return obs
    if not runs:
        obs["outputs"] = {}
        return obs
    try:
        obs["outputs"] = run_all(new, feeds, more_feeds)
    except Exception as exc:  # noqa: BLE001
        obs["outputs"] = "onnxruntime failed: " + _short(exc)
    return obs


def report_of(solution: Any, model: onnx.ModelProto) -> Any:
    got = solution.coverage_report(copy.deepcopy(model))
    if not isinstance(got, dict):
        return f"coverage_report returned a {type(got).__name__}, not a dict"
    return {str(k): int(v) for k, v in sorted(got.items(), key=lambda kv: str(kv[0]))}

