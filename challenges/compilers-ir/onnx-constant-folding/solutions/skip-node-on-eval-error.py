"""Candidate: when ReferenceEvaluator cannot run a node, the node is silently left in the graph (try/except),
though the rules fold it and onnxruntime can evaluate it.

Constant folding, Identity removal and dead-code elimination.

A tensor is constant if it is an initializer that is not also a graph input
(a graph input's initializer is only a default: the caller may feed another
value), the output of a Constant node, or an output of a folded node. An
empty input name is an omitted optional input and blocks nothing. Nodes are
visited in topological order, so one pass folds whole chains; each foldable
node is evaluated with onnx.reference.ReferenceEvaluator (its values go under
its non-empty output names: an omitted optional output is no tensor). Random
ops, a Dropout given a training_mode input, nodes of other domains and nodes that hold
subgraphs are never folded.

Names are read in three places: node inputs, graph outputs, and the bodies
of If/Loop/Scan subgraphs (at any depth), which read tensors of the graphs
around them by name. Renames reach every reader, wherever it sits in the
node list, and liveness counts every reader. A body's own names hide the
outer ones in that body and the bodies nested in it, never in its siblings.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

NONDETERMINISTIC = frozenset(
    {"RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike", "Multinomial", "Bernoulli"}
)
DEFAULT_DOMAINS = ("", "ai.onnx")
#: Ops that ReferenceEvaluator gets wrong below an opset, where onnxruntime evaluates them: before opset 13
#: Softmax, LogSoftmax and Hardmax coerce their input to 2-D at `axis` (the evaluator knows only the opset-13
#: meaning, one axis), and the evaluator has no DequantizeLinear before opset 19.
ONNXRUNTIME_BELOW = {"Softmax": 13, "LogSoftmax": 13, "Hardmax": 13, "DequantizeLinear": 19}


def _subgraphs(node: onnx.NodeProto) -> list[onnx.GraphProto]:
    """The bodies a node holds (If, Loop and Scan keep theirs in GRAPH attributes; no ONNX op uses GRAPHS)."""
    return [a.g for a in node.attribute if a.type == onnx.AttributeProto.GRAPH]


def _defined(graph: onnx.GraphProto) -> set[str]:
    names = {i.name for i in graph.input} | {t.name for t in graph.initializer}
    return names | {o for n in graph.node for o in n.output if o}


def _outer_reads(graph: onnx.GraphProto) -> set[str]:
    """The names a subgraph reads from the graphs around it, at any depth."""
    reads = {o.name for o in graph.output}
    for node in graph.node:
        reads.update(i for i in node.input if i)
        for sub in _subgraphs(node):
            reads |= _outer_reads(sub)
    return reads - _defined(graph)


def _reads(node: onnx.NodeProto) -> set[str]:
    reads = {i for i in node.input if i}
    for sub in _subgraphs(node):
        reads |= _outer_reads(sub)
    return reads


def _rename_outer_reads(graph: onnx.GraphProto, resolve, shadowed: frozenset[str] = frozenset()) -> None:
    """Apply the renames to the names a subgraph reads from outside (a name it defines itself shadows them)."""
    shadowed = shadowed | _defined(graph)
    for node in graph.node:
        node.input[:] = [i if not i or i in shadowed else resolve(i) for i in node.input]
        for sub in _subgraphs(node):
            _rename_outer_reads(sub, resolve, shadowed)


def _foldable(node: onnx.NodeProto, constants: dict[str, np.ndarray]) -> bool:
    if node.domain not in DEFAULT_DOMAINS or node.op_type in NONDETERMINISTIC:
        return False
    if _subgraphs(node):
        return False
    if node.op_type == "Dropout" and len(node.input) > 2 and node.input[2]:
        return False  # given a training_mode, it may draw a new mask on every run: random, like the ops above
    return all(name == "" or name in constants for name in node.input)


def _evaluate(node: onnx.NodeProto, constants: dict[str, np.ndarray], opset: int) -> dict[str, np.ndarray]:
    """Run one node at the model's opset: its non-empty outputs by name.

    The node is wrapped in a one-node function that imports the model's
    opset: ReferenceEvaluator(node) alone would run the newest version of
    the op, whose inputs and attributes can differ from the model's. Where
    the evaluator is wrong at that opset, onnxruntime runs the node.
    """
    if opset < ONNXRUNTIME_BELOW.get(node.op_type, 0):
        return _evaluate_onnxruntime(node, constants, opset)
    inputs = list(dict.fromkeys(name for name in node.input if name))
    outputs = [name for name in node.output if name]
    function = helper.make_function(
        "fold", "node", inputs, outputs, [node], opset_imports=[helper.make_opsetid(node.domain, opset)]
    )
    values = ReferenceEvaluator(function).run(None, {name: constants[name] for name in inputs}, attributes={})
    return dict(zip(outputs, values, strict=True))


def _evaluate_onnxruntime(node: onnx.NodeProto, constants: dict[str, np.ndarray], opset: int) -> dict[str, np.ndarray]:
    """Run one node in a one-node onnxruntime model at the model's opset (its outputs' types left to onnxruntime)."""
    inputs = list(dict.fromkeys(name for name in node.input if name))
    outputs = [name for name in node.output if name]
    typed = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(constants[n].dtype), constants[n].shape) for n in inputs]
    graph = helper.make_graph([node], "fold", typed, [helper.make_value_info(n, onnx.TypeProto()) for n in outputs])
    one = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(one.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return dict(zip(outputs, session.run(outputs, {n: constants[n] for n in inputs}), strict=True))


def fold_constants(model: onnx.ModelProto) -> onnx.ModelProto:
    model = onnx.ModelProto.FromString(model.SerializeToString())
    graph = model.graph
    opset = next(o.version for o in model.opset_import if o.domain in DEFAULT_DOMAINS)
    graph_inputs = {i.name for i in graph.input}
    graph_outputs = {o.name for o in graph.output}
    overridable = [t for t in graph.initializer if t.name in graph_inputs]
    constants = {t.name: numpy_helper.to_array(t) for t in graph.initializer if t.name not in graph_inputs}

    # 1. Fold, in topological order.
    kept: list[onnx.NodeProto] = []
    for node in graph.node:
        if _foldable(node, constants):
            try:
                values = _evaluate(node, constants, opset)
            except Exception:  # noqa: BLE001 - the evaluator cannot run it: leave the node as it is
                kept.append(node)
                continue
            for name, value in values.items():
                constants[name] = np.asarray(value)
        else:
            kept.append(node)

    # 2. Remove Identity nodes, unless the graph's interface needs them.
    produced = {o for n in kept for o in n.output if o}
    rename: dict[str, str] = {}

    def resolve(name: str) -> str:
        while name in rename:
            name = rename[name]
        return name

    survivors: list[onnx.NodeProto] = []
    for node in kept:
        if node.op_type == "Identity" and node.domain in DEFAULT_DOMAINS:
            src, dst = resolve(node.input[0]), node.output[0]
            if dst not in graph_outputs:
                rename[dst] = src  # consumers of dst read src
                continue
            if src in produced and src not in graph_outputs and src not in graph_inputs:
                rename[src] = dst  # the producer writes the graph output directly
                continue
        survivors.append(node)
    for node in survivors:
        node.input[:] = [resolve(i) if i else i for i in node.input]
        node.output[:] = [resolve(o) if o else o for o in node.output]
        for sub in _subgraphs(node):
            _rename_outer_reads(sub, resolve)

    # 3. Dead-code elimination: keep only what the graph outputs need.
    needed = set(graph_outputs)
    live: list[onnx.NodeProto] = []
    for node in reversed(survivors):
        if any(o in needed for o in node.output):
            live.append(node)
            needed |= _reads(node)
    live.reverse()

    del graph.node[:]
    graph.node.extend(live)
    del graph.initializer[:]
    graph.initializer.extend(overridable)
    graph.initializer.extend(numpy_helper.from_array(v, name) for name, v in constants.items() if name in needed)
    existing = needed | {o for n in live for o in n.output}
    kept_info = [vi for vi in graph.value_info if vi.name in existing]
    del graph.value_info[:]
    graph.value_info.extend(kept_info)
    return model
