"""Folds correctly but cleans nothing up.

Identity nodes stay, nodes nobody reads stay, and every original
initializer stays next to the folded ones, even when only folded nodes used
it: the model is valid and right, and as large and slow as before.

Otherwise as the reference: constant folding, Identity removal and dead-code elimination.

A tensor is constant if it is an initializer that is not also a graph input
(a graph input's initializer is only a default: the caller may feed another
value), the output of a Constant node, or an output of a folded node. An
empty input name is an omitted optional input and blocks nothing. Nodes are
visited in topological order, so one pass folds whole chains; each foldable
node is evaluated with onnx.reference.ReferenceEvaluator. Random ops are
never folded: their output changes from run to run.
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
#: Element types onnxruntime's Python API cannot take or give back as they are: each travels as a wider type that
#: holds its values exactly, with a Cast inside the one-node model (onnxruntime returns float8 as raw uint8 bits).
WIDENED = {
    onnx.TensorProto.BFLOAT16: onnx.TensorProto.FLOAT,
    onnx.TensorProto.FLOAT8E4M3FN: onnx.TensorProto.FLOAT,
    onnx.TensorProto.FLOAT8E4M3FNUZ: onnx.TensorProto.FLOAT,
    onnx.TensorProto.FLOAT8E5M2: onnx.TensorProto.FLOAT,
    onnx.TensorProto.FLOAT8E5M2FNUZ: onnx.TensorProto.FLOAT,
    onnx.TensorProto.INT4: onnx.TensorProto.INT8,
    onnx.TensorProto.UINT4: onnx.TensorProto.UINT8,
}


def _subgraphs(node: onnx.NodeProto) -> list[onnx.GraphProto]:
    graphs: list[onnx.GraphProto] = []
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            graphs.append(a.g)
        elif a.type == onnx.AttributeProto.GRAPHS:
            graphs.extend(a.graphs)
    return graphs


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
        return False  # given a training_mode, it may draw a new mask on every run
    return all(name == "" or name in constants for name in node.input)


def _evaluate(node: onnx.NodeProto, constants: dict[str, np.ndarray], opset: int) -> dict[str, np.ndarray]:
    """Run one node at the model's opset: its non-empty outputs by name.

    The node is wrapped in a one-node function that imports the model's
    opset: ReferenceEvaluator(node) alone would run the newest version of
    the op, whose inputs and attributes can differ from the model's.
    """
    try:
        return _evaluate_onnxruntime(node, constants, opset)
    except Exception:  # noqa: BLE001, S110 - no CPU kernel for this op and type: the evaluator's value
        pass
    inputs = list(dict.fromkeys(name for name in node.input if name))
    outputs = [name for name in node.output if name]
    function = helper.make_function(
        "fold", "node", inputs, outputs, [node], opset_imports=[helper.make_opsetid(node.domain, opset)]
    )
    values = ReferenceEvaluator(function).run(None, {name: constants[name] for name in inputs}, attributes={})
    return dict(zip(outputs, values, strict=True))


def _session(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto], outputs: list[str], opset: int) -> ort.InferenceSession:
    graph = helper.make_graph(nodes, "fold", inputs, [helper.make_value_info(n, onnx.TypeProto()) for n in outputs])
    one = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 4
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(one.SerializeToString(), options, providers=["CPUExecutionProvider"])


def _evaluate_onnxruntime(node: onnx.NodeProto, constants: dict[str, np.ndarray], opset: int) -> dict[str, np.ndarray]:
    """Run one node in a one-node onnxruntime model at the model's opset (its outputs' types left to onnxruntime).

    A value of a WIDENED type goes in as the wider type and is cast to its own inside the model; an output of one
    comes back cast to the wider type and is viewed as its own again (both exact)."""
    inputs = list(dict.fromkeys(name for name in node.input if name))
    outputs = [name for name in node.output if name]
    before, typed, feeds = [], [], {}
    for n in inputs:
        elem = helper.np_dtype_to_tensor_dtype(constants[n].dtype)
        if elem in WIDENED:
            typed.append(helper.make_tensor_value_info(n + "/wide", WIDENED[elem], constants[n].shape))
            feeds[n + "/wide"] = constants[n].astype(helper.tensor_dtype_to_np_dtype(WIDENED[elem]))
            exact = {"saturate": 0} if WIDENED[elem] == onnx.TensorProto.FLOAT and elem != onnx.TensorProto.BFLOAT16 else {}
            before.append(helper.make_node("Cast", [n + "/wide"], [n], to=elem, **exact))  # float8's inf stays inf
        else:
            typed.append(helper.make_tensor_value_info(n, elem, constants[n].shape))
            feeds[n] = constants[n]
    session = _session([*before, node], typed, outputs, opset)
    types = {o.name: o.type for o in session.get_outputs()}
    narrow = {n: t for n in outputs for t in WIDENED if types[n] == f"tensor({helper.tensor_dtype_to_string(t)[len('TensorProto.'):].lower()})"}
    if narrow:
        after = [helper.make_node("Cast", [n], [n + "/wide"], to=WIDENED[t]) for n, t in narrow.items()]
        fetch = [n + "/wide" if n in narrow else n for n in outputs]
        session = _session([*before, node, *after], typed, fetch, opset)
        values = session.run(fetch, feeds)
        values = [v.astype(helper.tensor_dtype_to_np_dtype(narrow[n])) if n in narrow else v for n, v in zip(outputs, values, strict=True)]
    else:
        values = session.run(outputs, feeds)
    return dict(zip(outputs, values, strict=True))


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
            for name, value in _evaluate(node, constants, opset).items():
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
        survivors.append(node)
    for node in survivors:
        node.input[:] = [resolve(i) if i else i for i in node.input]
        node.output[:] = [resolve(o) if o else o for o in node.output]

    # 3. Dead-code elimination: keep only what the graph outputs need.
    needed = set(graph_outputs)
    live: list[onnx.NodeProto] = []
    for node in reversed(survivors):
        live.append(node)
        needed.update(i for i in node.input if i)
    live.reverse()

    del graph.node[:]
    graph.node.extend(live)
    del graph.initializer[:]
    graph.initializer.extend(overridable)
    graph.initializer.extend(numpy_helper.from_array(v, name) for name, v in constants.items())
    existing = needed | {o for n in live for o in n.output}
    kept_info = [vi for vi in graph.value_info if vi.name in existing]
    del graph.value_info[:]
    graph.value_info.extend(kept_info)
    return model
