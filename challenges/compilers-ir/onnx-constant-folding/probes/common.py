"""What the public and hidden probes of onnx-constant-folding share, imported by both as ``probe_common``."""

from __future__ import annotations

import copy
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
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return [dict(zip(names, map(_plain, sess.run(None, feeds)), strict=True)) for _ in range(times)]


def _plain(value: Any) -> Any:
    """A string output (onnxruntime gives an object array of str) as UTF-8 bytes: object arrays are no observations."""
    if isinstance(value, np.ndarray) and value.dtype == object:
        return np.char.encode(value.astype(str), "utf-8")
    return value


def _short(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc).strip()[:400]}"


def fold_case(solution: Any, model: onnx.ModelProto, feeds: list[dict[str, np.ndarray]], times: int = 1) -> dict[str, Any]:
    onnx.checker.check_model(model, full_check=True)  # the probe's own model must be valid
    obs: dict[str, Any] = {
        "interface": {"inputs": [i.name for i in model.graph.input], "outputs": [o.name for o in model.graph.output]},
        "original": [run(model, f, times) for f in feeds],
        "original_nodes": len(model.graph.node),
        "original_opset": sorted([o.domain, o.version] for o in model.opset_import),
    }
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

