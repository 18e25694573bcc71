"""Decides "is the Identity's input a graph input?" with the inputs that have no initializer.

Everything else is right. The mistake is a common idiom in ONNX tools,
``real_inputs = inputs - initializers``, used for the Identity rule: an
initializer that is also listed in ``graph.input`` is a graph input (the
caller may feed it), so an Identity that exposes it as a graph output must
stay. This pass renames the overridable tensor to the output's name instead:
its readers then read a name that nothing produces, and the graph input keeps
its old name.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

NONDETERMINISTIC = frozenset(
    {"RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike", "Multinomial", "Bernoulli"}
)
DEFAULT_DOMAINS = ("", "ai.onnx")


def _foldable(node: onnx.NodeProto, constants: dict[str, np.ndarray]) -> bool:
    if node.domain not in DEFAULT_DOMAINS or node.op_type in NONDETERMINISTIC:
        return False
    if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute):
        return False
    return all(name == "" or name in constants for name in node.input)


def _evaluate(node: onnx.NodeProto, constants: dict[str, np.ndarray], opset: int) -> dict[str, np.ndarray]:
    """Run one node at the model's opset: its non-empty outputs by name.

    The node is wrapped in a one-node function that imports the model's
    opset: ReferenceEvaluator(node) alone would run the newest version of
    the op, whose inputs and attributes can differ from the model's.
    """
    inputs = list(dict.fromkeys(name for name in node.input if name))
    outputs = [name for name in node.output if name]
    function = helper.make_function(
        "fold", "node", inputs, outputs, [node], opset_imports=[helper.make_opsetid(node.domain, opset)]
    )
    values = ReferenceEvaluator(function).run(None, {name: constants[name] for name in inputs}, attributes={})
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
    real_inputs = graph_inputs - {t.name for t in overridable}
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
            if src not in graph_outputs and src not in real_inputs:
                rename[src] = dst  # the producer writes the graph output directly
                continue
        survivors.append(node)
    for node in survivors:
        node.input[:] = [resolve(i) if i else i for i in node.input]
        node.output[:] = [resolve(o) if o else o for o in node.output]

    # 3. Dead-code elimination: keep only what the graph outputs need.
    needed = set(graph_outputs)
    live: list[onnx.NodeProto] = []
    for node in reversed(survivors):
        if any(o in needed for o in node.output):
            live.append(node)
            needed.update(i for i in node.input if i)
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
