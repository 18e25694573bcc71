"""RIGHT (alternative): reader counts from the free variables of subgraphs, fold in float32,
place the new Conv where the Conv was, keep every initializer.

Differs from the reference: a subgraph's reads are its free variables (names read by its nodes or
listed as its outputs that it does not define itself, at any depth); the folded Conv takes the old
Conv's slot (valid: X, W', b' are all available there); the arithmetic is float32; no initializer is
removed (the statement leaves that ungraded); fresh names avoid every name anywhere in the model
(sparse initializers too: their names were missing until the red team round 3 fix, whose probes rejected that;
training_info's since the round 5 fix, as ONNX joins it to the main graph for training).
Confirmed with oracle/run_cases.py: all hand-built cases (subgraphs at depth, names already in use
by every kind of tensor, shared weights, opsets) match onnxruntime on the original and pass
check_model(full_check=True).
"""
from __future__ import annotations

import itertools

import numpy as np
import onnx
from onnx import helper, numpy_helper

STD = ("", "ai.onnx")


def _subgraphs(node):
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            yield a.g
        elif a.type == onnx.AttributeProto.GRAPHS:
            yield from a.graphs


def _free_vars(g: onnx.GraphProto) -> set[str]:
    defined = {i.name for i in g.input} | {t.name for t in g.initializer}
    free: set[str] = set()
    for n in g.node:
        free |= {i for i in n.input if i and i not in defined}
        for sub in _subgraphs(n):
            free |= _free_vars(sub) - defined
        defined |= set(n.output)
    free |= {o.name for o in g.output if o.name not in defined}
    return free


def _every_name(g: onnx.GraphProto, acc: set[str]) -> set[str]:
    acc |= {v.name for v in itertools.chain(g.input, g.output, g.value_info)}
    acc |= {t.name for t in g.initializer} | {t.values.name for t in g.sparse_initializer}
    for n in g.node:
        acc |= {n.name, *n.input, *n.output}
        for sub in _subgraphs(n):
            _every_name(sub, acc)
    return acc


class _Names:
    def __init__(self, used):
        self.used = used

    def new(self, base):
        for k in itertools.count():
            cand = base if k == 0 else f"{base}__{k}"
            if cand not in self.used:
                self.used.add(cand)
                return cand


def _try_fold(g: onnx.GraphProto, names: _Names) -> bool:
    consts = {t.name: t for t in g.initializer}
    for i in g.input:
        consts.pop(i.name, None)
    reads: dict[str, int] = {}
    for n in g.node:
        for x in n.input:
            reads[x] = reads.get(x, 0) + 1
        for sub in _subgraphs(n):
            for x in _free_vars(sub):
                reads[x] = reads.get(x, 0) + 1
    outs = {o.name for o in g.output}
    made_by = {}
    for pos, n in enumerate(g.node):
        for o in n.output:
            made_by[o] = pos
    for bn in g.node:
        if bn.op_type != "BatchNormalization" or bn.domain not in STD:
            continue
        if [o for o in bn.output if o] != [bn.output[0]] or not bn.output[0]:
            continue
        at = {a.name: helper.get_attribute_value(a) for a in bn.attribute}
        if at.get("training_mode", 0):
            continue
        if bn.input[0] not in made_by:
            continue
        cpos = made_by[bn.input[0]]
        conv = g.node[cpos]
        if conv.op_type != "Conv" or conv.domain not in STD or conv.output[0] != bn.input[0]:
            continue
        if reads.get(bn.input[0]) != 1 or bn.input[0] in outs:
            continue
        cin = list(conv.input) + [""] * (3 - len(conv.input))
        if cin[1] not in consts or (cin[2] and cin[2] not in consts):
            continue
        if any(p not in consts for p in bn.input[1:5]):
            continue
        w = numpy_helper.to_array(consts[cin[1]]).astype(np.float32)
        gamma, beta, mean, var = (numpy_helper.to_array(consts[p]).astype(np.float32) for p in bn.input[1:5])
        b = numpy_helper.to_array(consts[cin[2]]).astype(np.float32) if cin[2] else np.zeros_like(mean)
        if any(p.shape != (w.shape[0],) for p in (gamma, beta, mean, var)):
            continue  # opset 7/8 spatial=0: statistics per activation, not per channel
        s = gamma / np.sqrt(var + np.float32(at.get("epsilon", 1e-5)))
        w2 = w * s.reshape([-1] + [1] * (w.ndim - 1))
        b2 = (b - mean) * s + beta
        wn, bname = names.new("folded_W"), names.new("folded_b")
        g.initializer.append(numpy_helper.from_array(w2.astype(np.float32), wn))
        g.initializer.append(numpy_helper.from_array(b2.astype(np.float32), bname))
        new = onnx.NodeProto()
        new.CopyFrom(conv)
        del new.input[:]
        new.input.extend([cin[0], wn, bname])
        del new.output[:]
        new.output.append(bn.output[0])
        new.name = names.new(conv.name or "folded_conv") if conv.name else ""
        nodes = [x for x in g.node if x is not bn]
        nodes[cpos] = new
        del g.node[:]
        g.node.extend(nodes)
        keep = [v for v in g.value_info if v.name != bn.input[0]]
        del g.value_info[:]
        g.value_info.extend(keep)
        return True
    return False


def fold_batchnorm(model: onnx.ModelProto) -> onnx.ModelProto:
    m = onnx.ModelProto()
    m.CopyFrom(model)
    used = _every_name(m.graph, set())
    for info in m.training_info:  # joined to the main graph for training: its names are taken too
        _every_name(info.initialization, used)
        _every_name(info.algorithm, used)
        used |= {n for b in (*info.initialization_binding, *info.update_binding) for n in (b.key, b.value)}
    names = _Names(used)
    while _try_fold(m.graph, names):
        pass
    return m
