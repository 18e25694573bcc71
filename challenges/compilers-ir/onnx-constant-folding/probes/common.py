"""What the public and hidden probes of onnx-constant-folding share, imported by both as ``probe_common``."""

from __future__ import annotations

import copy
import hashlib
from collections import Counter
from collections.abc import Iterable
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

F32 = TensorProto.FLOAT


def vi(name: str, shape: list[Any], elem: int = F32) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def init(name: str, value: Any) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value), name)


def const(out: str, value: Any) -> onnx.NodeProto:
    return helper.make_node("Constant", [], [out], value=numpy_helper.from_array(np.asarray(value)))


def make(
    nodes: Iterable[onnx.NodeProto],
    inputs: Iterable[onnx.ValueInfoProto],
    outputs: Iterable[onnx.ValueInfoProto],
    inits: Iterable[onnx.TensorProto] = (),
    opset: int = 18,
) -> onnx.ModelProto:
    graph = helper.make_graph(list(nodes), "g", list(inputs), list(outputs), initializer=list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


def randn(seed: int, *shape: int, scale: float = 1.0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def run(model: onnx.ModelProto, feeds: dict[str, np.ndarray], times: int = 1) -> list[dict[str, np.ndarray]]:
    """Run one session ``times`` times on the same feeds (random ops draw anew each run)."""
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    # node by node, as the model says: onnxruntime's optimizer would fuse a DequantizeLinear into the MatMul that
    # reads it (another rounding) or drop a Quantize-Dequantize pair, and the original would compute something else
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return [dict(zip(names, map(_plain, sess.run(None, feeds)), strict=True)) for _ in range(times)]


def _plain(value: Any) -> Any:
    """A string output (onnxruntime gives an object array of str) as UTF-8 bytes: object arrays are no observations."""
    if isinstance(value, np.ndarray) and value.dtype == object:
        return np.char.encode(value.astype(str), "utf-8")
    return value


_OUTER = "<a name of the main graph>"


def _mask_outer_reads(graph: onnx.GraphProto, scope: frozenset[str]) -> None:
    """Rewrite, in place, every read of a name that neither this body nor a body around it defines (a tensor of the
    main graph, whose name the rules may rename) to one placeholder."""
    scope = scope | {i.name for i in graph.input} | {t.name for t in graph.initializer}
    scope |= {o for n in graph.node for o in n.output if o}
    for node in graph.node:
        node.input[:] = [i if not i or i in scope else _OUTER for i in node.input]
        for a in node.attribute:
            for sub in [a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs):
                _mask_outer_reads(sub, scope)


def body_digests(model: onnx.ModelProto) -> list[str]:
    """One digest per body of a main-graph node (nested bodies inside it), sorted: the body as it is, node for node,
    attribute for attribute, with only the main-graph names it reads masked (those follow the renames)."""
    found = []
    for node in model.graph.node:
        for a in node.attribute:
            for sub in [a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs):
                masked = onnx.GraphProto()
                masked.CopyFrom(sub)
                _mask_outer_reads(masked, frozenset())
                found.append(f"{node.op_type}.{a.name}:" + hashlib.sha256(masked.SerializeToString(deterministic=True)).hexdigest()[:16])
    return sorted(found)


def body_nodes(graph: onnx.GraphProto) -> int:
    """The number of nodes inside the bodies of a graph's nodes, at every depth."""
    total = 0
    for node in graph.node:
        for a in node.attribute:
            for sub in [a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs):
                total += len(sub.node) + body_nodes(sub)
    return total


def _short(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc).strip()[:400]}"


def fold_case(
    solution: Any, model: onnx.ModelProto, feeds: list[dict[str, np.ndarray]], times: int = 1,
    tolerance: tuple[float, float] | None = None,
) -> dict[str, Any]:
    """``tolerance`` (rtol, atol): for a model whose constants pass through float16, which onnxruntime's CPU kernels
    run in float32 in the original (the folded values keep float16's rounding)."""
    onnx.checker.check_model(model, full_check=True)  # the probe's own model must be valid
    obs: dict[str, Any] = {
        "interface": {"inputs": [i.name for i in model.graph.input], "outputs": [o.name for o in model.graph.output]},
        "original": [run(model, f, times) for f in feeds],
        "original_nodes": len(model.graph.node),
        "original_opset": sorted([o.domain, o.version] for o in model.opset_import),
    }
    if tolerance is not None:
        obs["tolerance"] = list(tolerance)
    original_bodies = body_digests(model)
    try:
        new = solution.fold_constants(copy.deepcopy(model))
    except Exception as exc:  # noqa: BLE001 - reported by the check
        obs["error"] = "fold_constants raised " + _short(exc)
        return obs
    if not isinstance(new, onnx.ModelProto):
        obs["error"] = f"fold_constants returned a {type(new).__name__}, not an onnx.ModelProto"
        return obs
    obs["folded_interface"] = {"inputs": [i.name for i in new.graph.input], "outputs": [o.name for o in new.graph.output]}
    obs["opset"] = sorted([o.domain, o.version] for o in new.opset_import)
    obs["op_counts"] = dict(sorted(Counter(n.op_type for n in new.graph.node).items()))
    obs["initializers"] = len(new.graph.initializer)
    obs["body_nodes"] = body_nodes(new.graph)
    obs["bodies"] = body_digests(new)
    obs["bodies_not_original"] = sum((Counter(obs["bodies"]) - Counter(original_bodies)).values())
    try:
        onnx.checker.check_model(new, full_check=True)
        obs["check_model"] = "ok"
    except Exception as exc:  # noqa: BLE001
        obs["check_model"] = _short(exc)
    try:
        obs["outputs"] = [run(new, f, times) for f in feeds]
    except Exception as exc:  # noqa: BLE001
        obs["outputs"] = "onnxruntime failed on the folded model: " + _short(exc)
    return obs

