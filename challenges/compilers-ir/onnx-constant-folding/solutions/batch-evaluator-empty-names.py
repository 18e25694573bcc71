"""WRONG (red team round 2's "right" file, with the Dropout rule added): decide the foldable
set first, evaluate it in ONE batch, then rewrite Identities one at a time until none can
go, then mark-and-sweep liveness. The mistake: the batch is one graph run by
ReferenceEvaluator, which stores an omitted output's value under the name "" and feeds it
to a later node's omitted input (Unique -> [u, "", "", counts] before Clip(w, "", hi)).

* Foldable set: one topological sweep with the statement's rule (default domain,
  no random op, no subgraph, every non-empty input constant).
* Evaluation: a single throw-away model holding the constant initializers and all
  foldable nodes (in their order), with every non-empty output of those nodes as a
  graph output and the model's own default-domain opset, run once by
  onnx.reference.ReferenceEvaluator.
* Identity removal: a worklist; each removable Identity is applied immediately by a
  scoped rename over the whole main graph and all bodies (a body's inputs,
  initializers and node outputs shadow outer names for it and its nested bodies),
  so chains and any node order resolve without a rename map.
* Dead code: a backwards mark from the graph outputs through a producer map, where
  a node's reads include what its bodies read from outside.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

_RANDOM = {"RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike", "Multinomial", "Bernoulli"}


def _is_onnx(node: onnx.NodeProto) -> bool:
    return node.domain in ("", "ai.onnx")


def _bodies(node: onnx.NodeProto):
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            yield a.g
        elif a.type == onnx.AttributeProto.GRAPHS:
            yield from a.graphs


def _locals(g: onnx.GraphProto) -> set[str]:
    s = {v.name for v in g.input} | {t.name for t in g.initializer}
    for n in g.node:
        s.update(o for o in n.output if o)
    return s


def _free_names(g: onnx.GraphProto) -> set[str]:
    """Names a body takes from enclosing scopes."""
    mine = _locals(g)
    free = set()
    for n in g.node:
        for i in n.input:
            if i and i not in mine:
                free.add(i)
        for b in _bodies(n):
            free |= _free_names(b) - mine
    free |= {o.name for o in g.output if o.name not in mine}
    return free


def _node_reads(n: onnx.NodeProto) -> set[str]:
    r = {i for i in n.input if i}
    for b in _bodies(n):
        r |= _free_names(b)
    return r


def _rename_in_body(g: onnx.GraphProto, old: str, new: str) -> None:
    if old in _locals(g):
        return  # shadowed here and below
    for n in g.node:
        for k, i in enumerate(n.input):
            if i == old:
                n.input[k] = new
        for b in _bodies(n):
            _rename_in_body(b, old, new)


def _rename_reads(nodes, old: str, new: str) -> None:
    for n in nodes:
        for k, i in enumerate(n.input):
            if i == old:
                n.input[k] = new
        for b in _bodies(n):
            _rename_in_body(b, old, new)


def fold_constants(model: onnx.ModelProto) -> onnx.ModelProto:
    out = onnx.ModelProto()
    out.CopyFrom(model)
    g = out.graph
    ins = [v.name for v in g.input]
    outs = [v.name for v in g.output]
    in_set, out_set = set(ins), set(outs)
    version = [o.version for o in out.opset_import if o.domain in ("", "ai.onnx")][0]

    const_inits = [t for t in g.initializer if t.name not in in_set]
    defaults = [t for t in g.initializer if t.name in in_set]
    known = {t.name for t in const_inits}

    # 1. which nodes fold
    folded, rest = [], []
    for n in g.node:
        ok = (_is_onnx(n) and n.op_type not in _RANDOM and not any(True for _ in _bodies(n))
              and not (n.op_type == "Dropout" and len(n.input) > 2 and n.input[2])
              and all((not i) or i in known for i in n.input))
        if ok:
            folded.append(n)
            known.update(o for o in n.output if o)
        else:
            rest.append(n)

    values: dict[str, np.ndarray] = {t.name: numpy_helper.to_array(t) for t in const_inits}
    if folded:
        names = [o for n in folded for o in n.output if o]
        tmp_graph = helper.make_graph(
            list(folded), "consts", [], [helper.make_empty_tensor_value_info(x) for x in names],
            initializer=list(const_inits))
        tmp = helper.make_model(tmp_graph, opset_imports=[helper.make_opsetid("", version)])
        for name, v in zip(names, ReferenceEvaluator(tmp).run(None, {})):
            values[name] = np.asarray(v)

    # 2. Identity removal, one at a time until nothing changes
    nodes = list(rest)
    changed = True
    while changed:
        changed = False
        producers = {o for n in nodes for o in n.output if o}
        for idx, n in enumerate(nodes):
            if n.op_type != "Identity" or not _is_onnx(n):
                continue
            src, dst = n.input[0], n.output[0]
            others = nodes[:idx] + nodes[idx + 1:]
            if dst not in out_set:
                _rename_reads(others, dst, src)
            elif src in producers and src not in out_set and src not in in_set:
                for m in others:
                    for k, o in enumerate(m.output):
                        if o == src:
                            m.output[k] = dst
                _rename_reads(others, src, dst)
            else:
                continue
            nodes = others
            changed = True
            break

    # 3. liveness
    producer = {}
    for n in nodes:
        for o in n.output:
            if o:
                producer[o] = n
    alive_ids, needed = set(), set()
    stack = list(outs)
    while stack:
        name = stack.pop()
        if name in needed:
            continue
        needed.add(name)
        p = producer.get(name)
        if p is not None and id(p) not in alive_ids:
            alive_ids.add(id(p))
            stack.extend(_node_reads(p))
    live = [n for n in nodes if id(n) in alive_ids]

    g.ClearField("node")
    g.node.extend(live)
    g.ClearField("initializer")
    g.initializer.extend(defaults)
    for name, v in values.items():
        if name in needed:
            g.initializer.append(numpy_helper.from_array(v, name))
    present = needed | {o for n in live for o in n.output}
    vis = [v for v in g.value_info if v.name in present]
    g.ClearField("value_info")
    g.value_info.extend(vis)
    return out
