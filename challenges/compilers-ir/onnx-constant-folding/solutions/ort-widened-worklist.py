"""Correct alternative (2): onnxruntime-first evaluation, exotic types widened exactly around the node, alias map + mark-and-sweep liveness.

Differs from the reference in method:
- each foldable node is evaluated by onnxruntime (the statement's ground truth: "as onnxruntime
  computes it"); ReferenceEvaluator is only a fallback for what onnxruntime's Python API cannot
  run or represent (bfloat16/float8/int4 values, ops without a CPU kernel);
- folding is a worklist over readers (not one topological sweep);
- Identity aliases are a dict resolved to a fixpoint; liveness is a mark phase from the graph
  outputs through a producer map (not a reverse sweep).
"""

from __future__ import annotations

from collections import deque

import ml_dtypes
import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

RANDOM = {"RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike", "Multinomial", "Bernoulli"}
ONNX_DOMAINS = {"", "ai.onnx"}
# element types onnxruntime's numpy API cannot take or give back faithfully
_EXOTIC = {
    onnx.TensorProto.BFLOAT16, onnx.TensorProto.FLOAT8E4M3FN, onnx.TensorProto.FLOAT8E4M3FNUZ,
    onnx.TensorProto.FLOAT8E5M2, onnx.TensorProto.FLOAT8E5M2FNUZ, onnx.TensorProto.INT4, onnx.TensorProto.UINT4,
}
_ORT_TYPE = {
    "tensor(float8e4m3fn)": ml_dtypes.float8_e4m3fn, "tensor(float8e4m3fnuz)": ml_dtypes.float8_e4m3fnuz,
    "tensor(float8e5m2)": ml_dtypes.float8_e5m2, "tensor(float8e5m2fnuz)": ml_dtypes.float8_e5m2fnuz,
    "tensor(bfloat16)": ml_dtypes.bfloat16,
}


def _bodies(node):
    return [a.g for a in node.attribute if a.type == onnx.AttributeProto.GRAPH]


def _own(g):
    s = {i.name for i in g.input} | {t.name for t in g.initializer}
    for n in g.node:
        s.update(o for o in n.output if o)
    return s


def _free(g):
    """Outer names a body reads (at any depth)."""
    own = _own(g)
    out = set()
    for o in g.output:
        if o.name not in own:
            out.add(o.name)
    for n in g.node:
        for i in n.input:
            if i and i not in own:
                out.add(i)
        for b in _bodies(n):
            out |= _free(b) - own
    return out


def _node_reads(n):
    r = {i for i in n.input if i}
    for b in _bodies(n):
        r |= _free(b)
    return r


def _rewrite_body(g, alias, hidden):
    hidden = hidden | _own(g)
    for n in g.node:
        for k, i in enumerate(n.input):
            if i and i not in hidden and i in alias:
                n.input[k] = alias[i]
        for b in _bodies(n):
            _rewrite_body(b, alias, hidden)


def _tensor_type(arr):
    return helper.np_dtype_to_tensor_dtype(arr.dtype)


_WIDE = {  # exotic element type -> (wide type onnxruntime's numpy API handles exactly, numpy dtype of the exotic type)
    onnx.TensorProto.BFLOAT16: (onnx.TensorProto.FLOAT, ml_dtypes.bfloat16),
    onnx.TensorProto.FLOAT8E4M3FN: (onnx.TensorProto.FLOAT, ml_dtypes.float8_e4m3fn),
    onnx.TensorProto.FLOAT8E4M3FNUZ: (onnx.TensorProto.FLOAT, ml_dtypes.float8_e4m3fnuz),
    onnx.TensorProto.FLOAT8E5M2: (onnx.TensorProto.FLOAT, ml_dtypes.float8_e5m2),
    onnx.TensorProto.FLOAT8E5M2FNUZ: (onnx.TensorProto.FLOAT, ml_dtypes.float8_e5m2fnuz),
    onnx.TensorProto.INT4: (onnx.TensorProto.INT8, ml_dtypes.int4),
    onnx.TensorProto.UINT4: (onnx.TensorProto.UINT8, ml_dtypes.uint4),
}
_ORT_NAME = {
    "tensor(bfloat16)": onnx.TensorProto.BFLOAT16, "tensor(float8e4m3fn)": onnx.TensorProto.FLOAT8E4M3FN,
    "tensor(float8e4m3fnuz)": onnx.TensorProto.FLOAT8E4M3FNUZ, "tensor(float8e5m2)": onnx.TensorProto.FLOAT8E5M2,
    "tensor(float8e5m2fnuz)": onnx.TensorProto.FLOAT8E5M2FNUZ, "tensor(int4)": onnx.TensorProto.INT4, "tensor(uint4)": onnx.TensorProto.UINT4,
}


def _session(nodes, ins, outs, opset):
    g = helper.make_graph(nodes, "one", ins, outs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    so.log_severity_level = 4
    return ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])


def _eval_ort(node, vals, opset):
    """One node in onnxruntime. Exotic element types travel widened (exactly) and are cast inside the model."""
    names = list(dict.fromkeys(i for i in node.input if i))
    outs = [o for o in node.output if o]
    pre, ins, feeds = [], [], {}
    for n in names:
        t = _tensor_type(vals[n])
        if t in _WIDE:
            wide, _ = _WIDE[t]
            ins.append(helper.make_tensor_value_info(n + "__wide", wide, vals[n].shape))
            feeds[n + "__wide"] = vals[n].astype(helper.tensor_dtype_to_np_dtype(wide))
            exact = {"saturate": 0} if t not in (onnx.TensorProto.BFLOAT16, onnx.TensorProto.INT4, onnx.TensorProto.UINT4) else {}
            pre.append(helper.make_node("Cast", [n + "__wide"], [n], to=t, **exact))  # values are exact: no saturation
        else:
            ins.append(helper.make_tensor_value_info(n, t, vals[n].shape))
            feeds[n] = vals[n]
    # first learn the output types
    probe = _session([*pre, node], ins, [helper.make_value_info(o, onnx.TypeProto()) for o in outs], opset)
    types = {o.name: o.type for o in probe.get_outputs()}
    post, fetch, back = [], [], {}
    for o in outs:
        t = _ORT_NAME.get(types[o])
        if t is not None:
            wide, npdt = _WIDE[t]
            post.append(helper.make_node("Cast", [o], [o + "__wide"], to=wide))
            fetch.append(o + "__wide")
            back[o] = npdt
        else:
            fetch.append(o)
    s = _session([*pre, node, *post], ins, [helper.make_value_info(f, onnx.TypeProto()) for f in fetch], opset) if post else probe
    res = s.run(fetch, feeds)
    out = {}
    for o, v in zip(outs, res, strict=True):
        v = np.asarray(v)
        out[o] = v.astype(back[o]) if o in back else v
    return out


def _eval_ref(node, vals, opset):
    names = list(dict.fromkeys(i for i in node.input if i))
    outs = [o for o in node.output if o]
    fn = helper.make_function("f", "n", names, outs, [node], opset_imports=[helper.make_opsetid("", opset)])
    res = ReferenceEvaluator(fn).run(None, {n: vals[n] for n in names}, attributes={})
    return {o: np.asarray(v) for o, v in zip(outs, res, strict=True)}


def _evaluate(node, vals, opset):
    try:
        return _eval_ort(node, vals, opset)
    except Exception:  # noqa: BLE001 - no onnxruntime kernel for this op and type
        return _eval_ref(node, vals, opset)


def _can_fold(node, vals):
    if node.domain not in ONNX_DOMAINS or node.op_type in RANDOM or _bodies(node):
        return False
    if node.op_type == "Dropout" and len(node.input) >= 3 and node.input[2] != "":
        return False
    return all(i == "" or i in vals for i in node.input)


def fold_constants(model: onnx.ModelProto) -> onnx.ModelProto:
    model = onnx.ModelProto.FromString(model.SerializeToString())
    g = model.graph
    opset = next(o.version for o in model.opset_import if o.domain in ONNX_DOMAINS)
    g_in = {i.name for i in g.input}
    g_out = [o.name for o in g.output]
    g_out_set = set(g_out)
    vals = {t.name: numpy_helper.to_array(t) for t in g.initializer if t.name not in g_in}
    nodes = list(g.node)

    # 1. worklist folding
    readers = {}
    for idx, n in enumerate(nodes):
        for i in set(n.input):
            if i:
                readers.setdefault(i, []).append(idx)
    folded = set()
    queue = deque(range(len(nodes)))
    while queue:
        idx = queue.popleft()
        n = nodes[idx]
        if idx in folded or not _can_fold(n, vals):
            continue
        for name, v in _evaluate(n, vals, opset).items():
            vals[name] = v
            queue.extend(readers.get(name, []))
        folded.add(idx)
    rest = [n for k, n in enumerate(nodes) if k not in folded]

    # 2. Identity aliases
    producer_outs = {o for n in rest for o in n.output if o}
    alias = {}

    def res(x):
        seen = set()
        while x in alias and x not in seen:
            seen.add(x)
            x = alias[x]
        return x

    idents = [n for n in rest if n.op_type == "Identity" and n.domain in ONNX_DOMAINS]
    dropped = set()
    # first the internal ones (readers read the input), then the ones that expose a graph output
    for n in idents:
        if n.output[0] not in g_out_set:
            alias[n.output[0]] = n.input[0]
            dropped.add(id(n))
    for n in idents:
        if id(n) in dropped:
            continue
        src = res(n.input[0])
        if src in producer_outs and src not in g_out_set and src not in g_in:
            alias[src] = n.output[0]
            dropped.add(id(n))
    full = {k: res(k) for k in list(alias)}
    rest = [n for n in rest if id(n) not in dropped]
    for n in rest:
        for k, i in enumerate(n.input):
            if i in full:
                n.input[k] = full[i]
        for k, o in enumerate(n.output):
            if o in full:
                n.output[k] = full[o]
        for b in _bodies(n):
            _rewrite_body(b, full, frozenset())

    # 3. mark from the graph outputs
    producer = {}
    for k, n in enumerate(rest):
        for o in n.output:
            if o:
                producer[o] = k
    live_nodes, live_names = set(), set()
    stack = list(g_out)
    while stack:
        name = stack.pop()
        if name in live_names:
            continue
        live_names.add(name)
        k = producer.get(name)
        if k is not None and k not in live_nodes:
            live_nodes.add(k)
            stack.extend(_node_reads(rest[k]))
    kept = [n for k, n in enumerate(rest) if k in live_nodes]

    overridable = [t for t in g.initializer if t.name in g_in]
    new_inits = [numpy_helper.from_array(v, name) for name, v in vals.items() if name in live_names]
    del g.node[:]
    g.node.extend(kept)
    del g.initializer[:]
    g.initializer.extend(overridable + new_inits)
    exist = live_names | {o for n in kept for o in n.output}
    vi = [v for v in g.value_info if v.name in exist]
    del g.value_info[:]
    g.value_info.extend(vi)
    return model
