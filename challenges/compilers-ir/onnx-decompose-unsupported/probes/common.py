"""What the public and hidden probes of onnx-decompose-unsupported share, imported by both as ``probe_common``."""

from __future__ import annotations

import copy
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


def _foreign(graph: onnx.GraphProto) -> Counter[tuple[Any, ...]]:
    """The graph's nodes of other domains than the default one, each as (domain, op type, inputs, outputs, attributes)."""
    return Counter(
        (n.domain, n.op_type, tuple(n.input), tuple(n.output), tuple(a.SerializeToString() for a in n.attribute))
        for n in _walk(graph)
        if n.domain not in DEFAULT_DOMAINS
    )


def _short(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc).strip()[:400]}"


def decompose_case(solution: Any, model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> dict[str, Any]:
    """The observation the check reads: what is left, validity, and the outputs."""
    obs: dict[str, Any] = {
        "original": run(model, feeds),
        "interface": {"inputs": [i.name for i in model.graph.input], "outputs": [o.name for o in model.graph.output]},
    }
    try:
        new = solution.decompose(copy.deepcopy(model))
    except Exception as exc:  # noqa: BLE001 - reported by the check
        obs["error"] = "decompose raised " + _short(exc)
        return obs
    if not isinstance(new, onnx.ModelProto):
        obs["error"] = f"decompose returned a {type(new).__name__}, not an onnx.ModelProto"
        return obs
    # Nodes of other domains are not decompose's to rewrite: the ones the
    # model had must still be there, unchanged, and are not counted as left.
    given, kept = _foreign(model.graph), _foreign(new.graph)
    left = {n.op_type for n in _walk(new.graph) if n.domain in DEFAULT_DOMAINS and n.op_type not in SUPPORTED_OPS}
    left.update(f"{key[0]}::{key[1]}" for key in kept - given)
    obs["unsupported_left"] = sorted(left)
    obs["foreign_nodes_changed"] = sum((given - kept).values())
    obs["rewritten_interface"] = {
        "inputs": [i.name for i in new.graph.input],
        "outputs": [o.name for o in new.graph.output],
    }
    try:
        onnx.checker.check_model(new, full_check=True)
        obs["check_model"] = "ok"
    except Exception as exc:  # noqa: BLE001
        obs["check_model"] = _short(exc)
    try:
        obs["outputs"] = run(new, feeds)
    except Exception as exc:  # noqa: BLE001
        obs["outputs"] = "onnxruntime failed: " + _short(exc)
    return obs


def report_of(solution: Any, model: onnx.ModelProto) -> Any:
    got = solution.coverage_report(copy.deepcopy(model))
    if not isinstance(got, dict):
        return f"coverage_report returned a {type(got).__name__}, not a dict"
    return {str(k): int(v) for k, v in sorted(got.items(), key=lambda kv: str(kv[0]))}

