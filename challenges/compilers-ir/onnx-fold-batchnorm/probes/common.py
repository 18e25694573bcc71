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
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in outputs],  # typed below
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
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


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


def apply_pass(
    solution: Any,
    model: onnx.ModelProto,
    seed: int,
    *,
    fixed: dict[str, np.ndarray] | None = None,
    hygiene: bool = False,
) -> dict[str, Any]:
    """Run the candidate's pass on model and describe the result (see the module docstring)."""
    feeds = feeds_for(model, seed, fixed)
    want = run(model, feeds)
    want_names = [o.name for o in model.graph.output]
    before = model.SerializeToString(deterministic=True)
    result = solution.fold_batchnorm(model)
    if not isinstance(result, onnx.ModelProto):
        return {"returned": f"fold_batchnorm returned a {type(result).__name__}, not an onnx.ModelProto"}
    obs: dict[str, Any] = {"returned": "ModelProto", "ops": op_counts(result)}
    try:
        onnx.checker.check_model(result)
        obs["valid"] = "ok"
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        obs["valid"] = "onnx.checker: " + first_line(exc)
    obs["graph inputs kept"] = [i.name for i in result.graph.input] == [i.name for i in model.graph.input]
    names = [o.name for o in result.graph.output]
    # "numerics" is a sentence for the public probes' observations; "numerics failure"
    # (names, shape, values, runtime) and "error ratio" (worst error / tolerance) are
    # what the check composes its message from, so it never echoes a string the
    # candidate's model controls (node and tensor names, onnxruntime's error text).
    if names != want_names:
        obs["numerics"] = f"the graph outputs are {names}, they were {want_names}"
        obs["numerics failure"] = "names"
    else:
        try:
            got = run(result, feeds)
            problems = []
            worst = 0.0
            for name, g, w in zip(names, got, want, strict=True):
                if g.shape != w.shape:
                    problems.append(f"output {name!r} has shape {list(g.shape)}, was {list(w.shape)}")
                    obs["numerics failure"] = "shape"
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
        except Exception as exc:  # noqa: BLE001
            obs["numerics"] = "onnxruntime cannot run the result: " + first_line(exc)
            obs["numerics failure"] = "runtime"
    if hygiene:
        obs["input unchanged"] = model.SerializeToString(deterministic=True) == before
    return obs
