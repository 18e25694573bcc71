"""RIGHT (alternative), red team round 6 (blind): W' and b' go at the front of the initializer list, the new
Conv is unnamed, the Conv output's value_info entry is dropped, and after a fold every initializer nothing uses any
more is removed (scope-aware: graph outputs and inputs, subgraph reads at any depth and training_info count as uses).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import onnx
from onnx import numpy_helper

_DEFAULT_DOMAINS = ("", "ai.onnx")
_EPS_DEFAULT = 1e-5


def _subgraphs(node: onnx.NodeProto):
    for a in node.attribute:
        if a.HasField("g"):
            yield a.g
        yield from a.graphs


def _free_reads(g: onnx.GraphProto) -> set[str]:
    """Names that graph g reads from enclosing scopes (at any depth)."""
    defined = {i.name for i in g.input} | {t.name for t in g.initializer}
    defined |= {s.values.name for s in g.sparse_initializer}
    for n in g.node:
        defined.update(o for o in n.output if o)
    reads: set[str] = set()
    for n in g.node:
        reads.update(x for x in n.input if x and x not in defined)
        for sg in _subgraphs(n):
            reads |= _free_reads(sg) - defined
    reads.update(o.name for o in g.output if o.name not in defined)
    return reads


def _node_reads(n: onnx.NodeProto) -> set[str]:
    r = {x for x in n.input if x}
    for sg in _subgraphs(n):
        r |= _free_reads(sg)
    return r


def _tensor_names(g: onnx.GraphProto, out: set[str]) -> None:
    out.update(v.name for v in (*g.input, *g.output, *g.value_info))
    out.update(t.name for t in g.initializer)
    for s in g.sparse_initializer:
        out.add(s.values.name)
        out.add(s.indices.name)
    for n in g.node:
        out.update(n.input)
        out.update(n.output)
        for sg in _subgraphs(n):
            _tensor_names(sg, out)


def _node_names(g: onnx.GraphProto, out: Counter) -> None:
    for n in g.node:
        if n.name:
            out[n.name] += 1
        for sg in _subgraphs(n):
            _node_names(sg, out)


def _all_tensor_names(model: onnx.ModelProto) -> set[str]:
    names: set[str] = set()
    _tensor_names(model.graph, names)
    for info in model.training_info:
        for b in (*info.initialization_binding, *info.update_binding):
            names.add(b.key)
            names.add(b.value)
        _tensor_names(info.initialization, names)
        _tensor_names(info.algorithm, names)
    for f in model.functions:  # harmless to avoid
        names.update(f.input)
        names.update(f.output)
        for n in f.node:
            names.update(n.input)
            names.update(n.output)
    names.discard("")
    return names


def _fresh(taken: set[str], base: str) -> str:
    name, k = base, 0
    while name in taken:
        k += 1
        name = f"{base}.{k}"
    taken.add(name)
    return name


def _attr(node: onnx.NodeProto, name: str):
    for a in node.attribute:
        if a.name == name:
            return a
    return None


def _is_inference_bn(bn: onnx.NodeProto) -> bool:
    tm = _attr(bn, "training_mode")
    if tm is not None and tm.i != 0:
        return False
    return len([o for o in bn.output if o]) == 1


def _try_fold(model: onnx.ModelProto, taken: set[str], node_names: Counter) -> bool:
    g = model.graph
    consts = {t.name: t for t in g.initializer}
    for i in g.input:
        consts.pop(i.name, None)
    producer = {}
    for idx, n in enumerate(g.node):
        for o in n.output:
            if o:
                producer[o] = idx
    readers: dict[str, list[int]] = {}
    for idx, n in enumerate(g.node):
        for name in _node_reads(n):
            readers.setdefault(name, []).append(idx)
    outputs = {o.name for o in g.output}

    for bi, bn in enumerate(g.node):
        if bn.op_type != "BatchNormalization" or bn.domain not in _DEFAULT_DOMAINS:
            continue
        if not _is_inference_bn(bn) or len(bn.input) < 5:
            continue
        ci = producer.get(bn.input[0])
        if ci is None:
            continue
        conv = g.node[ci]
        if conv.op_type != "Conv" or conv.domain not in _DEFAULT_DOMAINS:
            continue
        cout = conv.output[0]
        if readers.get(cout) != [bi] or cout in outputs:
            continue
        has_bias = len(conv.input) > 2 and conv.input[2] != ""
        needed = [conv.input[1], *([conv.input[2]] if has_bias else []), *bn.input[1:5]]
        if not all(n in consts for n in needed):
            continue

        w = numpy_helper.to_array(consts[conv.input[1]]).astype(np.float32)
        m = w.shape[0]
        b = numpy_helper.to_array(consts[conv.input[2]]).astype(np.float32).reshape(-1) if has_bias else np.zeros(m, np.float32)
        gamma, beta, mean, var = (
            np.broadcast_to(numpy_helper.to_array(consts[n]).astype(np.float32).reshape(-1), (m,)) for n in bn.input[1:5]
        )
        ea = _attr(bn, "epsilon")
        eps = np.float32(ea.f if ea is not None else _EPS_DEFAULT)
        s = (gamma / np.sqrt(var + eps)).astype(np.float32)
        w2 = (w * s.reshape((m,) + (1,) * (w.ndim - 1))).astype(np.float32)
        b2 = ((b - mean) * s + beta).astype(np.float32).reshape(m)

        wn = _fresh(taken, f"{bn.output[0]}__folded_W")
        bname = _fresh(taken, f"{bn.output[0]}__folded_B")
        new_inits = [numpy_helper.from_array(w2, wn), numpy_helper.from_array(b2, bname)]
        kept_inits = list(g.initializer)
        del g.initializer[:]
        g.initializer.extend(new_inits + kept_inits)

        # the two removed nodes free their names
        for old in (conv.name, bn.name):
            if old:
                node_names[old] -= 1
        new = onnx.NodeProto()
        new.op_type = "Conv"
        new.input.extend([conv.input[0], wn, bname])
        new.output.append(bn.output[0])
        new.attribute.extend(conv.attribute)

        nodes = list(g.node)
        nodes[ci] = new
        del nodes[bi]
        del g.node[:]
        g.node.extend(nodes)
        vi = [v for v in g.value_info if v.name != cout]
        del g.value_info[:]
        g.value_info.extend(vi)
        return True
    return False


def fold_batchnorm(model: onnx.ModelProto) -> onnx.ModelProto:
    out = onnx.ModelProto()
    out.CopyFrom(model)
    taken = _all_tensor_names(out)
    node_names: Counter = Counter()
    _node_names(out.graph, node_names)
    folded = False
    while _try_fold(out, taken, node_names):
        folded = True
    if folded:
        _clean(out)
    return out


def _clean(model: onnx.ModelProto) -> None:
    g = model.graph
    used = {o.name for o in g.output} | {i.name for i in g.input}
    for n in g.node:
        used |= _node_reads(n)
    for info in model.training_info:
        used |= {b.key for b in (*info.initialization_binding, *info.update_binding)}
        for sg in (info.initialization, info.algorithm):
            used |= _free_reads(sg)
            used |= _all_reads(sg)
    kept = [t for t in g.initializer if t.name in used]
    del g.initializer[:]
    g.initializer.extend(kept)


def _all_reads(g: onnx.GraphProto) -> set[str]:
    r = {o.name for o in g.output}
    for n in g.node:
        r.update(n.input)
        for sg in _subgraphs(n):
            r |= _all_reads(sg)
    return r
