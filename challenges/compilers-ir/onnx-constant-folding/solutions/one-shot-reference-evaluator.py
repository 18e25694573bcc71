"""RIGHT (alternative): decide the whole constant set first (one topological sweep, no evaluation),
then evaluate every folded node in ONE ReferenceEvaluator run of a model made of just those nodes
(at the model's opset), then remove Identities, then drop dead nodes by a fixpoint over liveness.

Confirmed with oracle/run_cases.py: all hand-built cases pass (numerics vs onnxruntime on the
original over several feeds, overridden defaults included; check_model(full_check=True); counts from
the statement's rules; idempotence), except sequence_fold, where the rules themselves give an
invalid model (see REPORT.md).

Round 4: where ReferenceEvaluator is wrong at the model's opset (Softmax, LogSoftmax and Hardmax before 13
coerce the input to 2-D at axis; no DequantizeLinear before 19), the run is given implementations of those
ops' old meaning as new_ops.
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from onnx.reference.op_run import OpRun

NOPE = {"RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike", "Multinomial", "Bernoulli"}


def _rows(x, axis):
    """The input coerced to 2-D at axis, as Softmax, LogSoftmax and Hardmax did before opset 13."""
    axis = axis + x.ndim if axis < 0 else axis
    return x.reshape(int(np.prod(x.shape[:axis], dtype=np.int64)), -1)


class _Coerced(OpRun):
    op_domain = ""

    def _run(self, x, axis=None):
        # the evaluator fills a missing attribute with the newest schema's default (-1): the old default is 1
        given = {a.name: a.i for a in self.onnx_node.attribute}
        rows = _rows(x, given.get("axis", 1))
        return (self._rows(rows).reshape(x.shape).astype(x.dtype),)


class Softmax(_Coerced):
    @staticmethod
    def _rows(r):
        e = np.exp(r - r.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)


class LogSoftmax(_Coerced):
    @staticmethod
    def _rows(r):
        s = r - r.max(axis=1, keepdims=True)
        return s - np.log(np.exp(s).sum(axis=1, keepdims=True))


class Hardmax(_Coerced):
    @staticmethod
    def _rows(r):
        out = np.zeros_like(r)
        out[np.arange(r.shape[0]), r.argmax(axis=1)] = 1
        return out


class DequantizeLinear(OpRun):
    op_domain = ""

    def _run(self, x, scale, zero=None, **_newer):
        given = {a.name: a.i for a in self.onnx_node.attribute}
        shape = [1] * x.ndim
        if scale.ndim == 1 and x.ndim:
            shape[given.get("axis", 1)] = -1
        zp = np.zeros((), np.float32) if zero is None else zero.astype(np.float32).reshape(shape)
        return (((x.astype(np.float32) - zp) * scale.reshape(shape)).astype(scale.dtype),)


def _old_meanings(opset):
    return ([Softmax, LogSoftmax, Hardmax] if opset < 13 else []) + ([DequantizeLinear] if opset < 19 else [])


def _graphs_of(n):
    return [a.g for a in n.attribute if a.type == onnx.AttributeProto.GRAPH] + \
        [x for a in n.attribute if a.type == onnx.AttributeProto.GRAPHS for x in a.graphs]


def _outer(g, bound=frozenset()):
    bound = set(bound) | {i.name for i in g.input} | {t.name for t in g.initializer}
    bound |= {o for n in g.node for o in n.output}
    res = {o.name for o in g.output} - bound
    for n in g.node:
        res |= {i for i in n.input if i and i not in bound}
        for s in _graphs_of(n):
            res |= _outer(s, bound)
    return res


def _reads(n):
    r = {i for i in n.input if i}
    for s in _graphs_of(n):
        r |= _outer(s)
    return r


def _apply(g, f, bound=frozenset()):
    bound = set(bound) | {i.name for i in g.input} | {t.name for t in g.initializer}
    bound |= {o for n in g.node for o in n.output}
    for n in g.node:
        n.input[:] = [f(i) if i and i not in bound else i for i in n.input]
        for s in _graphs_of(n):
            _apply(s, f, bound)


def fold_constants(model: onnx.ModelProto) -> onnx.ModelProto:
    m = onnx.ModelProto.FromString(model.SerializeToString())
    g = m.graph
    opset = [o.version for o in m.opset_import if o.domain in ("", "ai.onnx")][0]
    gi = [i.name for i in g.input]
    go = [o.name for o in g.output]
    base = {t.name: t for t in g.initializer if t.name not in gi}
    const = set(base)
    fold, other = [], []
    for n in g.node:
        if (n.domain in ("", "ai.onnx") and n.op_type not in NOPE and not _graphs_of(n)
                and not (n.op_type == "Dropout" and len(n.input) > 2 and n.input[2])
                and all(not i or i in const for i in n.input)):
            fold.append(n)
            const |= {o for o in n.output if o}
        else:
            other.append(n)
    values = {k: numpy_helper.to_array(t) for k, t in base.items()}
    if fold:
        outs = [o for n in fold for o in n.output if o]
        used = sorted({i for n in fold for i in n.input if i} - set(outs))
        # An omitted output ("") gets a name of its own: in one graph, the evaluator would store its value under ""
        # and hand it to the next node's omitted input.
        named = []
        for k, n in enumerate(fold):
            c = onnx.NodeProto()
            c.CopyFrom(n)
            c.output[:] = [o or f"__omitted_{k}_{j}" for j, o in enumerate(n.output)]
            named.append(c)
        fn = helper.make_function("x", "all", used, outs, named, [helper.make_opsetid("", opset)])
        res = ReferenceEvaluator(fn, new_ops=_old_meanings(opset)).run(None, {k: values[k] for k in used}, attributes={})
        values.update({k: np.asarray(v) for k, v in zip(outs, res)})

    alias: dict[str, str] = {}
    look = lambda x: look(alias[x]) if x in alias else x
    produced = {o for n in other for o in n.output if o}
    nodes = []
    for n in other:
        if n.op_type == "Identity" and n.domain in ("", "ai.onnx"):
            a, b = look(n.input[0]), n.output[0]
            if b not in go:
                alias[b] = a
                continue
            if a in produced and a not in go and a not in gi:
                alias[a] = b
                continue
        nodes.append(n)
    for n in nodes:
        n.input[:] = [look(i) if i else i for i in n.input]
        n.output[:] = [look(o) if o else o for o in n.output]
        for s in _graphs_of(n):
            _apply(s, look)

    alive = [False] * len(nodes)
    want = set(go)
    changed = True
    while changed:
        changed = False
        for k, n in enumerate(nodes):
            if not alive[k] and any(o in want for o in n.output if o):
                alive[k] = True
                want |= _reads(n)
                changed = True
    nodes = [n for k, n in enumerate(nodes) if alive[k]]
    inits = [t for t in g.initializer if t.name in gi]
    inits += [numpy_helper.from_array(v, k) for k, v in values.items() if k in want]
    del g.node[:]
    g.node.extend(nodes)
    del g.initializer[:]
    g.initializer.extend(inits)
    have = want | {o for n in nodes for o in n.output}
    vis = [v for v in g.value_info if v.name in have]
    del g.value_info[:]
    g.value_info.extend(vis)
    return m
