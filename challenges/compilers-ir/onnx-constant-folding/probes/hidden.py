"""Hidden probes for onnx-constant-folding: they make the score.

Each probe builds a model in the sandbox, runs the original in onnxruntime,
calls ``fold_constants`` on a copy, and observes the folded model: whether
``check_model(full_check=True)`` accepts it, its node count per op type, its
number of initializers, its interface, and its onnxruntime outputs for the
same feeds. The check ``folded_ok`` compares the structure with the
reference's folded model and the outputs with the *original* model's.

Five more probes fold models drawn by a seeded generator (below), 20 to 40
each, and observe one short record per model (check ``generated_ok``). The
four hand-written probes in the "red team round 2" section come from that
round (body inputs that reuse an outer name, omitted outputs of folded nodes,
Dropout), the next five from round 3 (empty names in optional input
slots and on both sides of liveness, large folded values, string and float8
values), and the last twelve from round 4 (bodies left as they are, the
opsets 11 to 21 with the ops ReferenceEvaluator gets wrong at some of them,
float16 constants, every element type, empty and rank-0 values, the default
domain imported as "ai.onnx", control flow of constants, an Identity of a
graph output). Round 5 added one (nodes of the input that change nothing but
are not Identity stay) and grew six: the opset models hold the ops
ReferenceEvaluator gets wrong or cannot run (a folded value is onnxruntime's),
the string probe numbers and bools cast to strings, the narrow-type probe a
float cast to int4, float8 infinities and narrow values cast to strings, the
dead-code probe a dead random op and a dead If, the graph-output probe an
initializer that is itself a graph output, and the overridable probe the
Shape of an overridable initializer fed at another shape. Every kept body is
compared with the original's, with only the main-graph names it reads masked
(they follow the renames). Round 6 added four: model-local functions compared
byte for byte with the originals (two probes: bodies with Identity, dead and
Constant nodes; names shared with main-graph tensors the rules rename, fold
or remove; functions called by nothing or by dead nodes only), dead If, Loop
and Scan nodes whose bodies read what nothing else reads, and models spelled
alike folded one after another in one process (check ``folded_each_ok``).
"""

from __future__ import annotations

import copy
import hashlib
from collections import Counter
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from probe_common import F32, body_digests, const, fold_case, init, make, randn, run, vi
from probekit import probe

# ---------------------------------------------------------------- generated models
# A seeded generator of valid models over every construct the statement allows: constant subgraphs of many op
# kinds (Constant nodes in each attribute form, shared initializers, omitted optional inputs, intermediates of other
# ranks and dtypes, multi-output nodes with unused outputs, folded nodes with omitted optional outputs before a
# present one, Dropout with and without a training_mode input and with "" in its optional slots, dead nodes of the input
# with an omitted output, values of more than 65536 elements sliced back), Identity chains (into graph outputs, from graph inputs
# and overridable initializers, sources also read before or after the Identity), graph outputs also read, unread
# graph inputs and initializers, value_info, names that look like names a pass would make up, If, Loop and Scan
# bodies reading outer names at depth 1 and 2, body inputs that reuse an outer name (read by the bodies nested in
# that body, and read as the outer tensor by sibling bodies and by the graph holding the node), nodes of other
# domains, random ops, and a random topological order. Each
# case is judged by semantics (check_model, onnxruntime on the original against the result on two feeds, the
# second one feeding the overridable initializers) and by the counts the rules give (the reference's record).

F64, I64, BOOL = TensorProto.DOUBLE, TensorProto.INT64, TensorProto.BOOL
_SUFFIXES = ("_folded", "_const", "_fold", "_init", "_0", "__1", "_out", "_cst")
_SHAPES = ([2, 3], [3, 4], [2, 1, 3], [4], [3, 2, 2])
_UNARY = ("Neg", "Relu", "Abs", "Tanh", "Sigmoid", "Sin", "Softsign")
_BINARY = ("Add", "Sub", "Mul", "Max", "Min")
_RANDOM_LIKE = ("RandomUniformLike", "RandomNormalLike")


class _Gen:
    """One random valid model: a pool of float32 tensors of one shape, grown by constructs."""

    def __init__(self, seed: int, *, ident: float, sub: float, dom: float, rand: float, fold: float) -> None:
        self.rng = np.random.default_rng(seed)
        self.p = {"ident": ident, "sub": sub, "dom": dom, "rand": rand, "fold": fold}
        self.shape = list(_SHAPES[int(self.rng.integers(len(_SHAPES)))])
        if dom:
            self.shape = [2, 3] if self.rng.random() < 0.5 else [3, 4]
        self.opset = int(self.rng.choice([13, 15, 17, 18]))
        self.nodes: list[tuple[onnx.NodeProto, set[str]]] = []  # (node, every name it reads, subgraphs included)
        self.inits: list[onnx.TensorProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self.outputs: list[str] = []
        self.value_info: list[onnx.ValueInfoProto] = []
        self.feeds: list[dict[str, np.ndarray]] = [{}, {}]
        self.const: list[str] = []  # float32 tensors of self.shape by kind
        self.var: list[str] = []
        self.fixed: list[str] = []  # graph inputs and overridable initializers (an Identity of one stays)
        self.renamed: list[str] = []  # Identity outputs, and sources of Identities into graph outputs
        self.taken: set[str] = set()
        self.domains: dict[str, int] = {}
        self.random = False
        self.flag: str | None = None
        self.n = 0
        self.avoid: set[str] = set()  # names a body being built must not read from outside (see no_capture)
        # the nodes the rules leave alone inside bodies (see decorate) are drawn from a stream of their own, so that
        # the rest of each model is what it was before they were added
        self.brng = np.random.default_rng(seed + 100_003)
        self.bn = 0

    # ---- names and values
    def name(self, base: str = "t") -> str:
        while True:
            self.n += 1
            r = self.rng.random()
            if r < 0.25 and self.taken:
                other = sorted(self.taken)[int(self.rng.integers(len(self.taken)))]
                cand = other + _SUFFIXES[int(self.rng.integers(len(_SUFFIXES)))]
            elif r < 0.35:
                cand = f"{base}_{self.n}_Constant_output_0"
            else:
                cand = f"{base}{self.n}"
            if cand not in self.taken:
                self.taken.add(cand)
                return cand

    def value(self, shape=None, dtype=np.float32) -> np.ndarray:
        shape = self.shape if shape is None else shape
        if dtype == np.int64:
            return self.rng.integers(-3, 4, size=shape).astype(np.int64)
        return (self.rng.standard_normal(shape) * 1.5).astype(dtype)

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def pick(self, names: list[str]) -> str:
        return names[int(self.rng.integers(len(names)))]

    def operand(self, want_const: bool | None = None) -> str:
        if want_const is None:
            want_const = self.chance(self.p["fold"])
        pool = self.const if (want_const and self.const) or not self.var else self.var
        return self.pick(pool)

    # ---- building blocks
    def add(self, op: str, inputs: list[str], n_out: int = 1, domain: str = "", extra_reads=(), omit=(), **attrs) -> list[str]:
        outs = ["" if j in omit else self.name(op[:3].lower()) for j in range(n_out)]
        node = helper.make_node(op, inputs, outs, domain=domain, **attrs)
        if self.chance(0.3):
            node.name = self.name("node")
        self.nodes.append((node, {i for i in inputs if i} | set(extra_reads)))
        return outs

    def init(self, value: np.ndarray, base: str = "w") -> str:
        name = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def constant_node(self, value: np.ndarray) -> str:
        v = np.asarray(value)
        r = self.rng.random()
        if v.dtype == np.float32 and v.ndim == 0 and r < 0.5:
            return self.add("Constant", [], value_float=float(v))[0]
        if v.dtype == np.float32 and v.ndim == 1 and r < 0.5:
            return self.add("Constant", [], value_floats=[float(a) for a in v])[0]
        if v.dtype == np.int64 and v.ndim == 1 and r < 0.5:
            return self.add("Constant", [], value_ints=[int(a) for a in v])[0]
        if v.dtype == np.int64 and v.ndim == 0 and r < 0.5:
            return self.add("Constant", [], value_int=int(v))[0]
        return self.add("Constant", [], value=numpy_helper.from_array(v))[0]

    def literal(self, value: np.ndarray, base: str = "k") -> str:
        """A constant as an initializer or a Constant node (sometimes an existing one: shared)."""
        return self.init(value, base) if self.chance(0.5) else self.constant_node(value)

    def broadcast_const(self) -> str:
        """A scalar or a row that broadcasts against the pool's shape."""
        return self.literal(self.value([]) if self.chance(0.5) else self.value([self.shape[-1]]))

    # ---- constructs: each takes float32 tensors of self.shape and makes one
    def construct(self, a: str) -> str:
        r = int(self.rng.integers(19))
        s = self.shape
        if r == 0:
            return self.add(self.pick(list(_UNARY)), [a])[0]
        if r == 1:
            b = self.operand() if self.chance(0.7) else self.broadcast_const()
            return self.add(self.pick(list(_BINARY)), [a, b] if self.chance(0.5) else [b, a])[0]
        if r == 2:  # Reshape to rank 1 and back, shape tensors as Constant or initializer
            flat = self.add("Reshape", [a, self.literal(np.array([-1], np.int64))])[0]
            flat = self.add(self.pick(list(_UNARY)), [flat])[0]
            return self.add("Reshape", [flat, self.literal(np.array(s, np.int64))])[0]
        if r == 3:  # Transpose and back
            perm = list(range(len(s)))[::-1]
            t = self.add("Transpose", [a], perm=perm)[0]
            t = self.add(self.pick(list(_UNARY)), [t])[0]
            return self.add("Transpose", [t], perm=perm)[0]
        if r == 4:  # through float64
            d = self.add("Cast", [a], to=F64)[0]
            d = self.add("Mul", [d, self.literal(np.float64(self.rng.uniform(0.5, 2.0)))])[0]
            return self.add("Cast", [d], to=F32)[0]
        if r == 5:  # an int64 path: exact values, Range, Shape, Size
            k = self.literal(self.value(dtype=np.int64), "ik")
            if self.chance(0.5):
                sz = self.add("Size", [a])[0]
                k = self.add("Add", [k, sz])[0]
            kf = self.add("Cast", [k], to=F32)[0]
            return self.add("Add", [a, kf])[0]
        if r == 6:  # Range, reshaped to the pool's shape
            n = int(np.prod(s))
            rg = self.add("Range", [self.literal(np.int64(0)), self.literal(np.int64(n)), self.literal(np.int64(1))])[0]
            rg = self.add("Reshape", [self.add("Cast", [rg], to=F32)[0], self.literal(np.array(s, np.int64))])[0]
            return self.add("Sub", [a, rg])[0]
        if r == 7:  # Split (multi-output), joined back in another order or one half dead
            ax = len(s) - 1
            if s[ax] < 2:
                return self.add("Neg", [a])[0]
            k = int(self.rng.integers(1, s[ax]))
            p0, p1 = self.add("Split", [a, self.literal(np.array([k, s[ax] - k], np.int64))], n_out=2, axis=ax)
            p1 = self.add(self.pick(list(_UNARY)), [p1])[0]
            return self.add("Concat", [p1, p0] if self.chance(0.5) else [p0, p1], axis=ax)[0]
        if r == 8:  # TopK over the last axis: values or indices
            vals, idx = self.add("TopK", [a, self.literal(np.array([s[-1]], np.int64))], n_out=2, axis=-1)
            if self.chance(0.5):
                return vals
            return self.add("Add", [a, self.add("Cast", [idx], to=F32)[0]])[0]
        if r == 9:  # Unsqueeze (rank + 1), ReduceSum back
            u = self.add("Unsqueeze", [a, self.literal(np.array([0], np.int64))])[0]
            return self.add("ReduceSum", [u, self.literal(np.array([0], np.int64))], keepdims=0)[0]
        if r == 10:  # Shape and ConstantOfShape
            sh = self.add("Shape", [a])[0]
            c = self.add("ConstantOfShape", [sh], value=numpy_helper.from_array(np.array([self.rng.uniform(0.5, 2)], np.float32)))[0]
            return self.add("Mul", [a, c])[0]
        if r == 11:  # Clip with an omitted bound
            lo, hi = self.literal(np.float32(-0.5)), self.literal(np.float32(0.7))
            return self.add("Clip", [a, "", hi] if self.chance(0.5) else [a, lo])[0]
        if r == 12:  # Slice with omitted axes: reverses axis 0
            st, en = self.literal(np.array([-1], np.int64)), self.literal(np.array([-(2**62)], np.int64))
            return self.add("Slice", [a, st, en, "", self.literal(np.array([-1], np.int64))])[0]
        if r == 13:  # Where on a comparison
            cond = self.add("Greater", [a, self.operand()])[0]
            return self.add("Where", [cond, a, self.operand()])[0]
        if r == 14:  # Gather along axis 0 with a permutation
            perm = self.rng.permutation(s[0]).astype(np.int64)
            return self.add("Gather", [a, self.literal(perm)], axis=0)[0]
        if r == 15:  # a reduction that keeps dims, broadcast back
            red = self.add("ReduceSum", [a, self.literal(np.array([len(s) - 1], np.int64))], keepdims=1)[0]
            return self.add("Sub", [a, red])[0]
        if r == 16:
            return self.omitted_outputs(a)
        if r == 17:
            return self.large(a)
        return self.add("Identity", [a])[0]

    def large(self, a: str) -> str:
        """A value of more than 65536 elements (an Expand or a Tile along a new or the first axis), one slice of it
        taken back exactly: folded like any other when ``a`` is constant, whatever its size."""
        s = self.shape
        k = -(-70000 // int(np.prod(s)))
        if self.chance(0.5):
            big = self.add("Expand", [a, self.literal(np.array([k, *s], np.int64))])[0]
            return self.add("Gather", [big, self.literal(np.int64(int(self.rng.integers(k))))], axis=0)[0]
        big = self.add("Tile", [a, self.literal(np.array([k] + [1] * (len(s) - 1), np.int64))])[0]
        j = int(self.rng.integers(k)) * s[0]
        ends = np.array([j + s[0]], np.int64)
        return self.add("Slice", [big, self.literal(np.array([j], np.int64)), self.literal(ends), self.literal(np.array([0], np.int64))])[0]

    def omitted_outputs(self, a: str) -> str:
        """A node with an omitted optional output ("") before a present one, or a Dropout out of training mode.
        (Unique is exact: LayerNormalization's values from the reference evaluator and onnxruntime differ in the last
        bits, which a TopK downstream can turn into different indices; the hand-written probe has one.)"""
        if self.chance(0.5):  # Unique of an int64 constant, a middle output omitted and a later one used
            vals = self.rng.integers(-2, 3, size=int(self.rng.integers(3, 8))).astype(np.int64)
            omit, used = [((1, 2), 3), ((1, 3), 2), ((2,), 3), ((1,), 2)][int(self.rng.integers(4))]
            outs = self.add("Unique", [self.literal(vals, "ik")], n_out=4, omit=omit, sorted=1)
            total = self.add("ReduceSum", [self.add("Cast", [outs[used]], to=F32)[0]], keepdims=0)[0]
            scale = self.add("Mul", [total, self.literal(np.float32(0.125))])[0]
            return self.add(self.pick(["Add", "Sub"]), [a, scale])[0]
        # Dropout: without training_mode (absent or "", ratio too) it folds; given one (here a constant false) it stays
        ratio = self.literal(np.float32(0.5))
        ins = [[a], [a, ratio], [a, "", self.literal(np.array(False))], [a, ratio, ""], [a, "", ""]][int(self.rng.integers(5))]
        out = self.add("Dropout", ins, n_out=2 if self.chance(0.5) else 1, seed=int(self.rng.integers(1, 100)))[0]
        if self.var and self.chance(0.5):  # a dead node of the input with an omitted output ("") that nothing reads
            self.add("Dropout", [self.operand(False)], n_out=2, omit=(1,))
        return out

    def kind_after(self, inputs: list[str]) -> bool:
        return all(i in self.const for i in inputs)

    # ---- the model
    def build(self):
        s = self.shape
        n_in = int(self.rng.integers(1, 3))
        for _ in range(n_in):
            x = self.name("x")
            self.inputs.append(helper.make_tensor_value_info(x, F32, s))
            for f in self.feeds:
                f[x] = self.value()
            self.var.append(x)
            self.fixed.append(x)
        if self.chance(0.3):  # a graph input nobody reads
            u = self.name("unused")
            self.inputs.append(helper.make_tensor_value_info(u, F32, s))
            for f in self.feeds:
                f[u] = self.value()
        if self.chance(0.5 if self.p["ident"] else 0.25):  # overridable initializers, read or not
            for _ in range(int(self.rng.integers(1, 3))):
                o = self.name("default")
                self.inputs.append(helper.make_tensor_value_info(o, F32, s))
                self.inits.append(numpy_helper.from_array(self.value(), o))
                self.feeds[1][o] = self.value()
                if self.chance(0.8):
                    self.var.append(o)
                    self.fixed.append(o)
        for _ in range(int(self.rng.integers(1, 4))):
            self.const.append(self.literal(self.value()))
        if self.chance(0.3):
            self.init(self.value(), "orphan")  # read by nothing
        if self.p["dom"] or self.p["sub"]:
            if self.chance(0.6):
                flag = self.name("flag")
                self.inputs.append(helper.make_tensor_value_info(flag, BOOL, []))
                self.feeds[0][flag], self.feeds[1][flag] = np.array(True), np.array(False)
                self.flag = flag
            else:
                self.flag = None
        steps = int(self.rng.integers(6, 14))
        for _ in range(steps):
            self.step()
        self.finish_outputs()
        return self.model()

    def step(self) -> None:
        r = self.rng.random()
        if self.p["sub"] and r < self.p["sub"]:
            k = self.rng.random()
            out = self.if_node(depth=1) if k < 0.5 else self.loop_node() if k < 0.75 else self.scan_node()
            self.var.append(out)
            return
        if self.p["dom"] and r < self.p["sub"] + self.p["dom"]:
            a = self.operand()
            if self.chance(0.25):  # a model-local function named like an ONNX op: it is not the ONNX op
                self.domains["local"] = 1
                out = self.add("Identity", [a], domain="local")[0]
            elif self.chance(0.5) or len(self.shape) != 2:
                self.domains["com.microsoft"] = 1
                out = self.add("Gelu", [a], domain="com.microsoft")[0]
            else:
                self.domains["ai.onnx.ml"] = 3
                out = self.add("Scaler", [a], domain="ai.onnx.ml", offset=[0.5], scale=[1.5])[0]
            self.var.append(out)
            return
        if self.p["rand"] and r < self.p["sub"] + self.p["dom"] + self.p["rand"]:
            self.random = True
            a = self.operand(True) if self.const else self.operand()
            op = self.pick(list(_RANDOM_LIKE))
            kw = {"low": -0.1, "high": 0.1} if op == "RandomUniformLike" else {"scale": 0.1}
            out = self.add(op, [a], seed=float(self.rng.integers(1, 100)), **kw)[0]
            self.var.append(self.add("Add", [out, self.operand()])[0])
            return
        if self.p["ident"] and self.chance(self.p["ident"]):
            self.identity_step()
            return
        a = self.operand()
        before = len(self.nodes)
        out = self.construct(a)
        reads = set().union(*(r for _, r in self.nodes[before:])) - {o for n, _ in self.nodes[before:] for o in n.output}
        (self.const if reads <= set(self.const) | {i.name for i in self.inits if i.name not in self.fixed} else self.var).append(out)
        if self.chance(0.15):
            self.value_info.append(helper.make_tensor_value_info(out, F32, self.shape))

    def identity_step(self) -> None:
        r = self.rng.random()
        produced = {o for n, _ in self.nodes for o in n.output}
        made = [t for t in self.var if t in produced and t not in self.outputs]
        src = self.pick(self.fixed) if r < 0.15 and self.fixed else self.pick(made) if r < 0.6 and made else self.operand()
        out = src
        folds = src in self.const  # an Identity of a constant is folded, not removed by a rename
        for _ in range(int(self.rng.integers(1, 4))):
            out = self.add("Identity", [out])[0]
            if not folds:
                self.renamed.append(out)
        to_output = self.chance(0.5)
        if to_output:
            self.outputs.append(out)  # an Identity chain that ends in a graph output
            if not folds:
                self.renamed.append(src)
        (self.const if src in self.const else self.var).append(out)
        if self.chance(0.35):  # a second Identity of the same source, read by a node: renames chain through both
            alias = self.add("Identity", [src])[0]
            if not folds:
                self.renamed.append(alias)
            self.var.append(self.add(self.pick(list(_UNARY)), [alias])[0])
        for _ in range(int(self.rng.integers(0, 3)) + to_output):
            # the source is also read elsewhere, before or after the Identity in the node list
            self.var.append(self.add(self.pick(list(_BINARY)), [src, self.operand()])[0])

    # ---- subgraphs
    def body_ops(
        self, reads: list[str], prefix: str, depth: int, shadow: str | None = None, exclude: frozenset[str] = frozenset()
    ) -> tuple[list[onnx.NodeProto], str, set[str], list[onnx.TensorProto]]:
        """Nodes of a body that combine outer names; at depth 1, sometimes a nested If reading main-graph names (and
        ``shadow``, the body's own input that reuses an outer name: in the nested If it still means the body's input)."""
        nodes, outer = [], set()
        cur = reads[0]
        outer.add(cur)
        for extra in reads[1:]:
            out = self.name(prefix)
            nodes.append(helper.make_node(self.pick(list(_BINARY)), [cur, extra], [out]))
            outer.add(extra)
            cur = out
        out = self.name(prefix)
        # a Loop body runs several times: a bounded op keeps values (and float32 rounding) from growing
        unary = ("Tanh", "Sigmoid", "Softsign") if prefix == "lb_" else _UNARY
        nodes.append(helper.make_node(self.pick(list(unary)), [cur], [out]))
        cur = out
        if depth == 1 and self.chance(0.9 if shadow else 0.6):
            inner_then, r1 = self.branch(depth + 1, local=cur)
            inner_else, r2 = self.branch(depth + 1, local=shadow)
            cond = self.cond_name(outer)
            out = self.name("nested")
            nodes.append(helper.make_node("If", [cond], [out], then_branch=inner_then, else_branch=inner_else))
            outer |= (r1 | r2)
            cur = out
        if self.chance(0.3):
            out = self.name(prefix)
            nodes.append(helper.make_node("Identity", [cur], [out]))
            cur = out
        cur, more, inits = self.decorate(nodes, cur, depth, set(exclude) | {shadow})
        return nodes, cur, outer | more, inits

    # ---- what the rules leave alone in a body: dead nodes, Identity and Constant nodes, initializers, depth 3
    def bname(self) -> str:
        while True:
            self.bn += 1
            cand = f"body_{self.bn}"
            if cand not in self.taken:
                self.taken.add(cand)
                return cand

    def body_outer(self, exclude: set[str]) -> str | None:
        """A main-graph name for a decoration to read (not one a body around it defines, nor one it must avoid)."""
        pool = [t for t in self.var + self.const if t not in self.avoid and t not in exclude]
        return pool[int(self.brng.integers(len(pool)))] if pool else None

    def decorate(self, nodes: list[onnx.NodeProto], cur: str, depth: int, exclude: set[str], row: bool = False):
        """Append to a body's nodes what a pass must leave there as it is (the rules apply to the main graph only):
        Constant nodes (two of them combined, as would fold in the main graph), an Identity read inside the body,
        an Identity of an outer name, a body initializer, dead nodes (one reading an outer name, which that keeps
        alive), the body's output through an Identity, and at depth 2 an If nested a third level deep. ``cur`` is
        the body's current result (the row's shape in a Scan body: outer tensors are then reduced to scalars)."""
        b = self.brng
        reads: set[str] = set()
        inits: list[onnx.TensorProto] = []

        def add(op: str, inputs: list[str], **attrs) -> str:
            out = self.bname()
            nodes.append(helper.make_node(op, inputs, [out], **attrs))
            return out

        def outer_value() -> str | None:
            o = self.body_outer(exclude)
            if o is None:
                return None
            reads.add(o)
            return add("ReduceMean", [o], keepdims=0) if row else o

        if b.random() < 0.5:
            form = int(b.integers(3))
            v = float(b.uniform(0.5, 1.0))
            if form == 0:
                k = add("Constant", [], value_float=v)
            elif form == 1:
                k = add("Constant", [], value=numpy_helper.from_array(np.float32(v)))
            else:
                k = add("Mul", [add("Constant", [], value_float=v), add("Constant", [], value_floats=[1.0])])
            cur = add("Mul", [cur, k])
        if b.random() < 0.4:
            cur = add(("Tanh", "Sigmoid", "Softsign")[int(b.integers(3))], [add("Identity", [cur])])
        if b.random() < 0.3:
            w = self.bname()
            inits.append(numpy_helper.from_array(np.float32(b.uniform(-0.5, 0.5)), w))
            cur = add("Add", [cur, w])
        if b.random() < 0.3:
            o = outer_value()
            if o is not None:
                cur = add("Add", [cur, add("Identity", [o])])
        if b.random() < 0.5:
            add("Neg", [cur])
            if b.random() < 0.5:
                o = self.body_outer(exclude)
                if o is not None:
                    reads.add(o)
                    add("Abs", [o])
        if depth == 2 and not row and b.random() < 0.35:
            if self.flag is not None:
                cond = self.flag
                reads.add(cond)
            else:
                cond = add("Constant", [], value=numpy_helper.from_array(np.array(bool(b.random() < 0.5))))
            o = self.body_outer(exclude)
            t3, e3 = self.bname(), self.bname()
            then_nodes = [helper.make_node("Identity", [cur], [t3 + "_id"])]
            if o is not None:
                reads.add(o)
                then_nodes.append(helper.make_node("Mul", [t3 + "_id", o], [t3]))
            else:
                then_nodes.append(helper.make_node("Neg", [t3 + "_id"], [t3]))
            else_nodes = [helper.make_node("Constant", [], [e3 + "_k"], value_float=0.25),
                          helper.make_node("Add", [cur, e3 + "_k"], [e3]), helper.make_node("Neg", [e3], [e3 + "_dead"])]
            self.taken |= {t3 + "_id", e3 + "_k", e3 + "_dead"}
            shape = self.shape
            then_g = helper.make_graph(then_nodes, self.bname(), [], [helper.make_tensor_value_info(t3, F32, shape)])
            else_g = helper.make_graph(else_nodes, self.bname(), [], [helper.make_tensor_value_info(e3, F32, shape)])
            cur = add("If", [cond], then_branch=then_g, else_branch=else_g)
        if b.random() < 0.25:
            cur = add("Identity", [cur])
        return cur, reads, inits

    def cond_name(self, outer: set[str]) -> str:
        if self.flag is not None and self.chance(0.7):
            outer.add(self.flag)
            return self.flag
        c = self.name("cond")
        self.inits.append(numpy_helper.from_array(np.array(self.chance(0.5)), c))
        outer.add(c)
        return c

    def outer_operand(self, depth: int = 1) -> str:
        """A main-graph name for a body to read: often one that Identity removal renames."""
        name = self.pick(self.renamed) if self.renamed and self.chance(0.3 + 0.3 * depth) else self.operand()
        if name in self.avoid:
            pool = [t for t in self.var + self.const if t not in self.avoid]
            name = self.pick(pool) if pool else name
        return name

    def shadow_name(self) -> str:
        """An outer name for a body input to reuse: mostly an Identity's output that Identity removal renames away."""
        away = [t for t in self.renamed if t not in self.outputs]
        return self.pick(away) if away and self.chance(0.8) else self.outer_operand(2)

    def identity_group(self, name: str) -> set[str]:
        """The names joined to ``name`` by Identity nodes so far: the only names a rename can move a read between."""
        group, grew = {name}, True
        while grew:
            grew = False
            for node, _ in self.nodes:
                if node.op_type == "Identity" and node.domain == "" and (set(node.input) | set(node.output)) & group:
                    if not {*node.input, *node.output} <= group:
                        group |= {*node.input, *node.output}
                        grew = True
        return group

    def branch(self, depth: int, local: str | None, also: str | None = None):
        k = int(self.rng.integers(1, 3))
        reads = [self.outer_operand(depth) for _ in range(k)] + ([also] if also else [])
        if local is not None:
            reads.insert(int(self.rng.integers(len(reads) + 1)), local)
        nodes, out, outer, inits = self.body_ops(reads, f"b{depth}_", depth, exclude=frozenset({local, also}))
        outer.discard(local)
        g = helper.make_graph(nodes, self.name("branch"), [], [helper.make_tensor_value_info(out, F32, self.shape)], initializer=inits)
        return g, outer

    def if_node(self, depth: int) -> str:
        outer: set[str] = set()
        if self.chance(0.8):
            cond = self.cond_name(outer)
        else:  # a condition computed from the input
            total = self.add("ReduceSum", [self.operand(False)], keepdims=0)[0]
            cond = self.add("Greater", [total, self.literal(np.float32(0))])[0]
        outer.add(cond)
        if self.chance(0.4):  # one branch holds a Loop or Scan whose body input reuses an outer name the other reads
            shadowed = self.shadow_name()
            g1, r1 = self.shadowing_branch(shadowed)
            g2, r2 = self.branch(depth, None, also=shadowed)
            if self.chance(0.5):
                g1, g2 = g2, g1
        else:
            g1, r1 = self.branch(depth, None)
            g2, r2 = self.branch(depth, None)
        out = self.name("if")
        node = helper.make_node("If", [cond], [out], then_branch=g1, else_branch=g2)
        self.nodes.append((node, outer | r1 | r2))
        return out

    def shadowing_branch(self, shadowed: str):
        """An If branch holding a Loop or a Scan whose body input is named ``shadowed``, an outer name that the branch
        itself reads too, next to the node (there it still means the outer tensor)."""
        holder, res, outer = self.loop_parts(shadowed, depth=2) if self.chance(0.5) else self.scan_parts(shadowed)
        out = self.name("b1_")
        nodes = [holder, helper.make_node(self.pick(list(_BINARY)), [res, shadowed] if self.chance(0.5) else [shadowed, res], [out])]
        g = helper.make_graph(nodes, self.name("branch"), [], [helper.make_tensor_value_info(out, F32, self.shape)])
        return g, outer | {shadowed}

    def loop_parts(self, v_in: str, depth: int) -> tuple[onnx.NodeProto, str, set[str]]:
        """A Loop node whose carried body input is named ``v_in``; the names it reads from outside."""
        trip = self.literal(np.int64(int(self.rng.integers(1, 4))), "trip")
        v0 = self.operand()
        i, c_in = self.name("iter"), self.name("cin")
        self.avoid = self.identity_group(v_in)  # no read of the body may be renamed onto its input (no_capture)
        reads = [v_in] + [self.outer_operand() for _ in range(int(self.rng.integers(1, 3)))]
        nodes, out, outer, inits = self.body_ops(reads, "lb_", depth, shadow=v_in, exclude=frozenset({i, c_in}))
        self.avoid = set()
        outer.discard(v_in)
        c_out = self.name("cout")
        nodes.append(helper.make_node("Identity", [c_in], [c_out]))
        body = helper.make_graph(
            nodes, self.name("body"),
            [helper.make_tensor_value_info(i, I64, []), helper.make_tensor_value_info(c_in, BOOL, []),
             helper.make_tensor_value_info(v_in, F32, self.shape)],
            [helper.make_tensor_value_info(c_out, BOOL, []), helper.make_tensor_value_info(out, F32, self.shape)],
            initializer=inits,
        )
        res = self.name("loop")
        return helper.make_node("Loop", [trip, "", v0], [res], body=body), res, outer | {trip, v0}

    def scan_parts(self, s_in: str) -> tuple[onnx.NodeProto, str, set[str]]:
        """A Scan over axis 0 of a pool tensor whose body input (a row) is named ``s_in``, and the names it reads from
        outside: main-graph names reduced to scalars, and sometimes an If nested in the body that reads the row."""
        xs = self.operand()
        row = [*self.shape[1:]]
        nodes, cur, outer = [], s_in, set()
        self.avoid = self.identity_group(s_in)
        for _ in range(int(self.rng.integers(1, 3))):
            name = self.outer_operand()
            outer.add(name)
            red, out = self.name("sb_"), self.name("sb_")
            nodes.append(helper.make_node("ReduceSum", [name], [red], keepdims=0))
            nodes.append(helper.make_node(self.pick(list(_BINARY)), [cur, red], [out]))
            cur = out
        if self.chance(0.6):  # a nested If whose branches read the row by the body input's name
            cond = self.cond_name(outer)
            t_out, e_out, res = self.name("sb_"), self.name("sb_"), self.name("sb_")
            then_g = helper.make_graph([helper.make_node(self.pick(list(_UNARY)), [s_in], [t_out])], self.name("branch"), [],
                                       [helper.make_tensor_value_info(t_out, F32, row)])  # fmt: skip
            else_g = helper.make_graph([helper.make_node(self.pick(list(_BINARY)), [cur, s_in], [e_out])], self.name("branch"),
                                       [], [helper.make_tensor_value_info(e_out, F32, row)])  # fmt: skip
            nodes.append(helper.make_node("If", [cond], [res], then_branch=then_g, else_branch=else_g))
            cur = res
        cur, more, inits = self.decorate(nodes, cur, 1, {s_in}, row=True)
        outer |= more
        out = self.name("sb_")
        nodes.append(helper.make_node(self.pick(["Tanh", "Sigmoid", "Softsign"]), [cur], [out]))
        body = helper.make_graph(nodes, self.name("scan_body"), [helper.make_tensor_value_info(s_in, F32, row)],
                                 [helper.make_tensor_value_info(out, F32, row)], initializer=inits)  # fmt: skip
        self.avoid = set()
        res = self.name("scan")
        outer.discard(s_in)
        return helper.make_node("Scan", [xs], [res], body=body, num_scan_inputs=1), res, outer | {xs}

    def scan_node(self) -> str:
        s_in = self.shadow_name() if self.chance(0.5) else self.name("row")  # sometimes reuses an outer name
        node, res, reads = self.scan_parts(s_in)
        self.nodes.append((node, reads))
        return res

    def loop_node(self) -> str:
        # the body's carried input sometimes reuses a name of the main graph (often a renamed one): it shadows it there
        # and in the If nested in the body
        v_in = self.shadow_name() if self.chance(0.5) else self.name("vin")
        node, res, reads = self.loop_parts(v_in, depth=1)
        self.nodes.append((node, reads))
        return res

    # ---- outputs, order, model
    def finish_outputs(self) -> None:
        produced = [o for n, _ in self.nodes for o in n.output if o]
        cands = [t for t in self.var + self.const if t in produced and t not in self.outputs]
        read = set().union(*(r for _, r in self.nodes))
        sinks = [t for t in self.var if t in produced and t not in read and t not in self.outputs]
        for t in sinks[-3:]:  # the last results nobody reads become outputs, so that most constructs stay live
            if self.chance(0.7):
                self.outputs.append(t)
        for _ in range(int(self.rng.integers(1, 3))):
            if not cands:
                break
            t = self.pick(cands)
            if self.chance(0.5):
                self.outputs.append(t)
            else:
                self.outputs.append(self.add("Identity", [t])[0])
        if self.p["ident"] and self.chance(0.3) and self.outputs:  # a second output name for one tensor
            self.outputs.append(self.add("Identity", [self.pick(self.outputs)])[0])
        if self.p["ident"] and self.chance(0.3):  # a graph input passed through
            self.outputs.append(self.add("Identity", [self.pick(self.fixed)])[0])
        if not self.outputs:
            self.outputs.append(self.add("Identity", [self.pick(self.var)])[0])
        self.outputs = list(dict.fromkeys(self.outputs))

    def order(self) -> list[onnx.NodeProto]:
        """A random topological order of the nodes (every name read after it is produced)."""
        producer = {o: k for k, (n, _) in enumerate(self.nodes) for o in n.output if o}
        deps = [{producer[r] for r in reads if r in producer} for _, reads in self.nodes]
        done: set[int] = set()
        out = []
        while len(out) < len(self.nodes):
            ready = [k for k in range(len(self.nodes)) if k not in done and deps[k] <= done]
            k = ready[int(self.rng.integers(len(ready)))]
            done.add(k)
            out.append(self.nodes[k][0])
        return out

    def no_capture(self) -> None:
        """Keep the models in the class the statement allows: a rename never lands on a body's own input. Renames
        only move a read along Identity nodes, so a body input that shares an Identity-connected group of names with
        a name the body reads from outside is renamed to a fresh name in that body (rare)."""
        group: dict[str, str] = {}

        def find(a: str) -> str:
            while group.get(a, a) != a:
                a = group[a]
            return a

        for node, _ in self.nodes:
            if node.op_type == "Identity" and node.domain == "":
                group[find(node.input[0])] = find(node.output[0])

        def free(g: onnx.GraphProto) -> set[str]:
            mine = {i.name for i in g.input} | {o for n in g.node for o in n.output}
            names = {i for n in g.node for i in n.input if i} | {o.name for o in g.output}
            for n in g.node:
                for a in n.attribute:
                    if a.type == onnx.AttributeProto.GRAPH:
                        names |= free(a.g)
            return names - mine

        def rename(g: onnx.GraphProto, old: str, new: str) -> None:
            for v in [*g.input, *g.output]:
                if v.name == old:
                    v.name = new
            for n in g.node:
                n.input[:] = [new if i == old else i for i in n.input]
                for a in n.attribute:
                    if a.type == onnx.AttributeProto.GRAPH:
                        rename(a.g, old, new)

        def visit(nodes) -> None:
            for n in nodes:
                for a in n.attribute:
                    if a.type == onnx.AttributeProto.GRAPH:
                        reads = free(a.g)
                        for v in list(a.g.input):
                            if any(r != v.name and find(r) == find(v.name) for r in reads):
                                rename(a.g, v.name, self.name("own"))
                        visit(a.g.node)

        visit([node for node, _ in self.nodes])

    def model(self) -> onnx.ModelProto:
        self.no_capture()
        outs = [helper.make_tensor_value_info(o, F32, self.shape) for o in self.outputs]
        g = helper.make_graph(self.order(), "generated", self.inputs, outs, initializer=self.inits, value_info=self.value_info)
        imports = [helper.make_opsetid("", self.opset)] + [helper.make_opsetid(d, v) for d, v in sorted(self.domains.items())]
        if len(imports) > 1 and self.chance(0.5):  # the default domain is not always listed first
            imports = imports[1:] + imports[:1]
        functions = []
        if "local" in self.domains:
            body = [helper.make_node("Neg", ["a"], ["b"])]
            functions.append(helper.make_function("local", "Identity", ["a"], ["b"], body, [helper.make_opsetid("", self.opset)]))
        return helper.make_model(g, opset_imports=imports, ir_version=10, functions=functions)


def _count_sub(graph: onnx.GraphProto) -> int:
    total = 0
    for node in graph.node:
        for a in node.attribute:
            for sub in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
                total += len(sub.node) + _count_sub(sub)
    return total


def _same(a: list, b: list, rtol: float = 1e-5, atol: float = 1e-6) -> float:
    worst = 0.0
    for ra, rb in zip(a, b, strict=True):
        for da, db in zip(ra, rb, strict=True):
            for k, e in db.items():
                g = da.get(k)
                if g is None or g.shape != e.shape or g.dtype != e.dtype:
                    return float("inf")
                err = np.abs(g.astype(np.float64) - e.astype(np.float64)) / (atol + rtol * np.abs(e.astype(np.float64)))
                worst = max(worst, float(err.max()) if err.size else 0.0)
    return worst


def _case(solution: Any, g: _Gen, untouched: bool = False) -> str:
    """Fold one generated model; a compact record: what went wrong, or the folded model's counts."""
    model = g.build()
    times = 2 if g.random else 1
    feeds = g.feeds
    original = [run(model, f, times) for f in feeds]
    before = model.SerializeToString()
    try:
        new = solution.fold_constants(model if untouched else copy.deepcopy(model))
    except Exception:  # noqa: BLE001
        return "raises"
    if untouched and model.SerializeToString() != before:
        return "changes the caller's model"
    verdict = _judge(model, new, feeds, original, times)
    if not verdict.startswith("ok") or untouched:
        return verdict.split(" ")[0] if untouched else verdict
    try:
        again = solution.fold_constants(copy.deepcopy(new))
    except Exception:  # noqa: BLE001
        return "second fold raises"
    second = _judge(model, again, feeds, original, times)
    return verdict if second == verdict else "not idempotent"


def _judge(model: onnx.ModelProto, new: Any, feeds: list[dict[str, np.ndarray]], original: list, times: int) -> str:
    if not isinstance(new, onnx.ModelProto):
        return "not a model"
    if [i.name for i in new.graph.input] != [i.name for i in model.graph.input] or \
            [o.name for o in new.graph.output] != [o.name for o in model.graph.output]:
        return "interface changed"
    if sorted((o.domain, o.version) for o in new.opset_import) != sorted((o.domain, o.version) for o in model.opset_import):
        return "opset changed"
    try:
        onnx.checker.check_model(new, full_check=True)
    except Exception:  # noqa: BLE001
        return "invalid"
    try:
        outs = [run(new, f, times) for f in feeds]
    except Exception:  # noqa: BLE001
        return "onnxruntime fails"
    if _same(outs, original) > 1:
        return "outputs differ"
    if Counter(body_digests(new)) - Counter(body_digests(model)):
        return "bodies_changed"  # a body kept is the original's but for the outer names it reads (they follow renames)
    ops = ",".join(f"{k}:{v}" for k, v in sorted(Counter(n.op_type for n in new.graph.node).items()))
    return f"ok {ops} sub:{_count_sub(new.graph)} init:{len(new.graph.initializer)}"


# ---------------------------------------------------------------- folding


@probe(category="folding", check="folded_ok", weight=2, hints=["propagate"])
def weight_preprocessing_chain(solution: Any) -> dict[str, Any]:
    """A chain of Constant, Mul, Add, Transpose and Reshape on weights, feeding one MatMul with the input; one Mul
    reads the same constant twice."""
    nodes = [
        const("two", np.float32(2.0)),
        helper.make_node("Mul", ["w", "two"], ["w2"]),
        helper.make_node("Mul", ["b", "b"], ["b_sq"]),
        helper.make_node("Add", ["w2", "b_sq"], ["w3"]),
        helper.make_node("Transpose", ["w3"], ["wt"], perm=[1, 0]),
        const("shape", np.array([6, 4], dtype=np.int64)),
        helper.make_node("Reshape", ["wt", "shape"], ["wr"]),
        helper.make_node("MatMul", ["x", "wr"], ["y"]),
    ]
    m = make(nodes, [vi("x", [3, 6])], [vi("y", [3, 4])], [init("w", randn(1, 4, 6)), init("b", randn(2, 1, 6))])
    return fold_case(solution, m, [{"x": randn(3, 3, 6)}])


@probe(category="folding", check="folded_ok", hints=["empty-input", "propagate"])
def optional_empty_inputs(solution: Any) -> dict[str, Any]:
    """Clip with an omitted min ("") on a constant, and the same Clip on the input."""
    nodes = [
        const("hi", np.float32(0.5)),
        helper.make_node("Clip", ["w", "", "hi"], ["wc"]),
        helper.make_node("Clip", ["x", "", "hi"], ["xc"]),
        helper.make_node("Mul", ["xc", "wc"], ["y"]),
    ]
    m = make(nodes, [vi("x", [2, 5])], [vi("y", [2, 5])], [init("w", randn(4, 5))])
    return fold_case(solution, m, [{"x": randn(5, 2, 5)}])


@probe(category="folding", check="folded_ok", hints=["propagate"])
def multi_output_and_types(solution: Any) -> dict[str, Any]:
    """Split of a constant into three (two used), ConstantOfShape, Cast and Range: every dtype kept."""
    nodes = [
        helper.make_node("Split", ["w"], ["s0", "s1", "s2"], axis=0, num_outputs=3),
        const("shp", np.array([2, 4], dtype=np.int64)),
        helper.make_node("ConstantOfShape", ["shp"], ["ones"], value=numpy_helper.from_array(np.array([1.5], np.float32))),
        helper.make_node("Add", ["s0", "ones"], ["a"]),
        const("start", np.int64(0)),
        const("limit", np.int64(8)),
        const("delta", np.int64(1)),
        helper.make_node("Range", ["start", "limit", "delta"], ["r"]),
        helper.make_node("Cast", ["r"], ["rf"], to=F32),
        const("rshape", np.array([2, 4], dtype=np.int64)),
        helper.make_node("Reshape", ["rf", "rshape"], ["r2"]),
        helper.make_node("Mul", ["x", "a"], ["m1"]),
        helper.make_node("Add", ["m1", "s2"], ["m2"]),
        helper.make_node("Sub", ["m2", "r2"], ["y"]),
    ]
    m = make(nodes, [vi("x", [2, 4])], [vi("y", [2, 4])], [init("w", randn(6, 6, 4))])
    return fold_case(solution, m, [{"x": randn(7, 2, 4)}])


@probe(category="folding", check="folded_ok", hints=["graph-output"])
def constant_graph_output(solution: Any) -> dict[str, Any]:
    """One graph output is computed from constants only; it must become an initializer with the output's name. Another
    is an initializer of the model itself that no node reads: it stays."""
    nodes = [
        helper.make_node("ReduceSum", ["w"], ["wsum"], keepdims=0),
        helper.make_node("Sqrt", ["wsum"], ["norm"]),
        helper.make_node("Div", ["w", "norm"], ["wn"]),
        helper.make_node("Mul", ["x", "wn"], ["y"]),
        helper.make_node("Exp", ["wn"], ["scale"]),
    ]
    w = np.abs(randn(8, 3)) + 0.1
    m = make(nodes, [vi("x", [3])], [vi("y", [3]), vi("scale", [3]), vi("offsets", [2])], [init("w", w), init("offsets", np.float32([0.5, -1.5]))])
    return fold_case(solution, m, [{"x": randn(9, 3)}])


@probe(category="folding", check="folded_ok", weight=2, hints=["propagate", "identity", "dead-code"])
def torchscript_export_unfolded(solution: Any) -> dict[str, Any]:
    """A torch module exported with do_constant_folding=False: weight transforms, a flatten and Identity nodes."""
    import io
    import warnings

    import torch

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(8, 12))
            self.b = torch.nn.Parameter(torch.randn(8))
            self.register_buffer("scale", torch.tensor([0.5, 2.0, 1.0, 4.0]))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            h = x.reshape(x.shape[0], -1) @ (self.w * 2.0).t() + self.b.sum()
            s = torch.cat([self.scale, self.scale * 3.0])
            return torch.relu(h) * s

    torch.manual_seed(0)
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(Net().eval(), (torch.zeros(2, 3, 4),), buf, dynamo=False, opset_version=17,
                          do_constant_folding=False, input_names=["x"], output_names=["y"])  # fmt: skip
    m = onnx.load_from_string(buf.getvalue())
    return fold_case(solution, m, [{"x": randn(10, 2, 3, 4)}])


@probe(category="folding", check="folded_ok", weight=2, hints=["opset"])
def older_opset_model(solution: Any) -> dict[str, Any]:
    """An opset-11 model: Unsqueeze, ReduceSum and Split of weights, whose axes and sizes are attributes at that opset."""
    nodes = [
        helper.make_node("Split", ["w"], ["w_top", "w_bottom"], axis=0, split=[2, 4]),
        helper.make_node("ReduceSum", ["w_top"], ["top_sum"], axes=[0], keepdims=0),
        helper.make_node("Unsqueeze", ["top_sum"], ["row"], axes=[0]),
        helper.make_node("Squeeze", ["lone"], ["lone_sq"], axes=[0, 2]),
        helper.make_node("Mul", ["x", "row"], ["xr"]),
        helper.make_node("MatMul", ["xr", "w_bottom_t"], ["h"]),
        helper.make_node("Transpose", ["w_bottom"], ["w_bottom_t"], perm=[1, 0]),
        helper.make_node("Add", ["h", "lone_sq"], ["y"]),
    ]
    # Topological order: the Transpose must come before the MatMul that reads it.
    nodes[5], nodes[6] = nodes[6], nodes[5]
    m = make(nodes, [vi("x", [2, 5])], [vi("y", [2, 4])],
             [init("w", randn(30, 6, 5)), init("lone", randn(31, 1, 4, 1))], opset=11)  # fmt: skip
    return fold_case(solution, m, [{"x": randn(32, 2, 5)}])


@probe(category="folding", check="folded_ok", weight=2, hints=["propagate"])
def constant_attribute_forms(solution: Any) -> dict[str, Any]:
    """Constant nodes written with value_float, value_floats, value_int and value_ints, not a tensor value."""
    nodes = [
        helper.make_node("Constant", [], ["half"], value_float=0.5),
        helper.make_node("Constant", [], ["gains"], value_floats=[1.0, -2.0, 3.0, 0.25]),
        helper.make_node("Constant", [], ["two"], value_int=2),
        helper.make_node("Constant", [], ["shape"], value_ints=[2, 2]),
        helper.make_node("Mul", ["gains", "half"], ["g"]),
        helper.make_node("Reshape", ["g", "shape"], ["g2"]),
        helper.make_node("Cast", ["two"], ["two_f"], to=F32),
        helper.make_node("Mul", ["x", "g2"], ["xg"]),
        helper.make_node("Add", ["xg", "two_f"], ["y"]),
    ]
    m = make(nodes, [vi("x", [3, 2, 2])], [vi("y", [3, 2, 2])])
    return fold_case(solution, m, [{"x": randn(33, 3, 2, 2)}])


@probe(category="folding", check="folded_ok", hints=["no-merge"])
def equal_constants_stay_apart(solution: Any) -> dict[str, Any]:
    """Two Constant nodes and an initializer with equal values, each read by its own input-dependent node."""
    ones = np.ones(4, dtype=np.float32)
    nodes = [
        const("c1", ones),
        const("c2", ones.copy()),
        helper.make_node("Add", ["x", "c1"], ["a"]),
        helper.make_node("Mul", ["a", "c2"], ["b"]),
        helper.make_node("Sub", ["b", "w"], ["y"]),
    ]
    m = make(nodes, [vi("x", [4])], [vi("y", [4])], [init("w", ones.copy())])
    return fold_case(solution, m, [{"x": randn(34, 4)}])


# ---------------------------------------------------------------- semantics


@probe(category="semantics", check="folded_ok", weight=2, hints=["overridable"])
def overridable_initializer(solution: Any) -> dict[str, Any]:
    """An initializer that is also a graph input is a default value: run with it and with a fed value. An Identity
    exposes it as a graph output too, and must stay (its input is a graph input). Its Shape stays too: the third
    feed gives it another shape than the default's."""
    nodes = [
        helper.make_node("Mul", ["gain", "k"], ["g2"]),
        helper.make_node("Mul", ["bias", "k"], ["b2"]),
        helper.make_node("Mul", ["x", "g2"], ["xg"]),
        helper.make_node("Add", ["xg", "b2"], ["y0"]),
        helper.make_node("Shape", ["gain"], ["gain_dims"]),
        helper.make_node("Cast", ["gain_dims"], ["gain_dims_f"], to=F32),
        helper.make_node("Add", ["y0", "gain_dims_f"], ["y"]),
        helper.make_node("Identity", ["gain"], ["gain_seen"]),
    ]
    m = make(
        nodes,
        [vi("x", [2, 3]), vi("gain", ["n"])],
        [vi("y", [2, 3]), vi("gain_seen", ["n"])],
        [init("gain", np.float32([1.0, 2.0, 3.0])), init("bias", randn(11, 3)), init("k", np.float32(3.0))],
    )
    x = randn(12, 2, 3)
    return fold_case(solution, m, [{"x": x}, {"x": x, "gain": np.float32([-1.0, 0.5, 10.0])}, {"x": x, "gain": np.float32([4.0])}])


@probe(category="semantics", check="folded_ok", hints=["input-dependent"])
def shape_of_input_not_folded(solution: Any) -> dict[str, Any]:
    """Reshape targets built from Shape(x) (input-dependent, kept) and from constants only (folded), one of them
    from Shape(w) of an initializer (constant, so folded)."""
    nodes = [
        helper.make_node("Shape", ["x"], ["xs"]),
        const("zero", np.array([0], dtype=np.int64)),
        helper.make_node("Gather", ["xs", "zero"], ["batch"], axis=0),
        const("minus1", np.array([-1], dtype=np.int64)),
        helper.make_node("Concat", ["batch", "minus1"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["flat"]),
        helper.make_node("Shape", ["w"], ["w_dims"]),
        helper.make_node("ReduceProd", ["w_dims"], ["six"], keepdims=1),
        const("one", np.array([1], dtype=np.int64)),
        helper.make_node("Concat", ["one", "six"], ["wshape"], axis=0),
        helper.make_node("Reshape", ["w", "wshape"], ["wrow"]),
        helper.make_node("Mul", ["flat", "wrow"], ["y"]),
    ]
    m = make(nodes, [vi("x", ["batch", 2, 3])], [vi("y", ["batch", 6])], [init("w", randn(13, 2, 3))])
    return fold_case(solution, m, [{"x": randn(14, 4, 2, 3)}, {"x": randn(15, 1, 2, 3)}])


@probe(category="semantics", check="folded_ok", weight=2, hints=["random"])
def random_ops_not_folded(solution: Any) -> dict[str, Any]:
    """RandomUniform has no inputs but a new value every run: it must stay. The model is run twice."""
    nodes = [
        helper.make_node("RandomUniform", [], ["noise"], shape=[2, 3], seed=7.0, low=-0.1, high=0.1),
        const("c", np.float32(0.0)),
        helper.make_node("Add", ["noise", "c"], ["noise0"]),
        helper.make_node("Add", ["x", "noise0"], ["y"]),
    ]
    m = make(nodes, [vi("x", [2, 3])], [vi("y", [2, 3])])
    return fold_case(solution, m, [{"x": randn(16, 2, 3)}], times=2)


@probe(category="semantics", check="folded_ok", weight=2, hints=["random"])
def other_random_ops_not_folded(solution: Any) -> dict[str, Any]:
    """RandomUniformLike, RandomNormalLike, Bernoulli and Multinomial of constant inputs: they must stay. Run twice."""
    nodes = [
        helper.make_node("RandomUniformLike", ["w"], ["u"], seed=1.0, low=-0.1, high=0.1),
        helper.make_node("RandomNormalLike", ["w"], ["n"], seed=2.0, scale=0.05),
        helper.make_node("Bernoulli", ["p"], ["mask"], seed=3.0),
        helper.make_node("Multinomial", ["logits"], ["pick"], seed=4.0, sample_size=3),
        helper.make_node("Cast", ["pick"], ["pick_f"], to=F32),
        helper.make_node("Add", ["x", "u"], ["xu"]),
        helper.make_node("Add", ["xu", "n"], ["xun"]),
        helper.make_node("Mul", ["xun", "mask"], ["y"]),
        helper.make_node("Mul", ["x", "pick_f"], ["z"]),
    ]
    m = make(
        nodes,
        [vi("x", [2, 3])],
        [vi("y", [2, 3]), vi("z", [2, 3])],
        [init("w", randn(35, 2, 3)), init("p", np.full((2, 3), 0.5, np.float32)), init("logits", randn(36, 2, 4))],
    )
    return fold_case(solution, m, [{"x": randn(37, 2, 3)}], times=2)


@probe(category="semantics", check="folded_ok", weight=2, hints=["overridable", "dead-code"])
def overridable_initializer_nobody_reads(solution: Any) -> dict[str, Any]:
    """A graph input with a default value, read only by a dead branch: run without feeding it, and feeding it."""
    nodes = [
        helper.make_node("Mul", ["x", "temperature"], ["scaled"]),  # dead: no output reads it
        helper.make_node("Tanh", ["x"], ["t"]),
        helper.make_node("Add", ["t", "b"], ["y"]),
    ]
    m = make(
        nodes,
        [vi("x", [3]), vi("temperature", [])],
        [vi("y", [3])],
        [init("temperature", np.float32(1.0)), init("b", randn(38, 3))],
    )
    x = randn(39, 3)
    return fold_case(solution, m, [{"x": x}, {"x": x, "temperature": np.array(4.0, dtype=np.float32)}])


# ---------------------------------------------------------------- cleanup


@probe(category="cleanup", check="folded_ok", hints=["identity"])
def identity_chains(solution: Any) -> dict[str, Any]:
    """Identity before, between and after nodes; one Identity maps a graph input straight to a graph output."""
    nodes = [
        helper.make_node("Identity", ["x"], ["x1"]),
        helper.make_node("Relu", ["x1"], ["r"]),
        helper.make_node("Identity", ["r"], ["r1"]),
        helper.make_node("Identity", ["r1"], ["r2"]),
        helper.make_node("Neg", ["r2"], ["n"]),
        helper.make_node("Identity", ["n"], ["y"]),
        helper.make_node("Identity", ["x"], ["x_copy"]),
        helper.make_node("Identity", ["w"], ["w1"]),
        helper.make_node("Add", ["r1", "w1"], ["z"]),
    ]
    m = make(nodes, [vi("x", [4])], [vi("y", [4]), vi("x_copy", [4]), vi("z", [4])], [init("w", randn(17, 4))])
    return fold_case(solution, m, [{"x": randn(18, 4)}])


def _branch(name: str, outer: str, op: str) -> onnx.GraphProto:
    """An If branch of one node that reads an outer tensor of shape [3]."""
    return helper.make_graph([helper.make_node(op, [outer], [f"{name}_out"])], name, [], [vi(f"{name}_out", [3])])


@probe(category="cleanup", check="folded_ok", hints=["dead-code"])
def dead_nodes_and_initializers(solution: Any) -> dict[str, Any]:
    """Nodes whose results nobody reads (some from the input, a random op and an If among them), and initializers only
    they used."""
    nodes = [
        helper.make_node("Mul", ["x", "unused_w"], ["dead1"]),
        helper.make_node("Relu", ["dead1"], ["dead2"]),
        helper.make_node("Sigmoid", ["x"], ["s"]),
        helper.make_node("Add", ["s", "b"], ["y"]),
        helper.make_node("Exp", ["dead2"], ["dead3"]),
        helper.make_node("Transpose", ["big"], ["bigt"], perm=[1, 0]),
        helper.make_node("RandomNormalLike", ["x"], ["dead_noise"]),  # dead: a random op goes like any other dead node
        helper.make_node("ReduceMax", ["x"], ["x_max"], keepdims=0),
        helper.make_node("Greater", ["x_max", "b0"], ["x_pos"]),
        helper.make_node("If", ["x_pos"], ["dead_branch"], then_branch=_branch("then_dead", "b", "Neg"),
                         else_branch=_branch("else_dead", "b", "Abs")),  # dead: so is a node that holds bodies
    ]
    m = make(
        nodes,
        [vi("x", [3])],
        [vi("y", [3])],
        [init("unused_w", randn(19, 3)), init("b", randn(20, 3)), init("big", randn(21, 16, 16)), init("orphan", randn(22, 5)),
         init("b0", np.float32(0.0))],
    )
    return fold_case(solution, m, [{"x": randn(23, 3)}])


@probe(category="cleanup", check="folded_ok", hints=["dead-code", "identity"])
def identity_to_two_outputs(solution: Any) -> dict[str, Any]:
    """One tensor is exposed under two graph output names through two Identity nodes."""
    nodes = [
        helper.make_node("Tanh", ["x"], ["t"]),
        helper.make_node("Identity", ["t"], ["out_a"]),
        helper.make_node("Identity", ["t"], ["out_b"]),
        helper.make_node("Mul", ["t", "t"], ["sq"]),
        helper.make_node("Identity", ["sq"], ["out_c"]),
    ]
    m = make(nodes, [vi("x", [3])], [vi("out_a", [3]), vi("out_b", [3]), vi("out_c", [3])])
    return fold_case(solution, m, [{"x": randn(24, 3)}])


@probe(category="cleanup", check="folded_ok", weight=2, hints=["dead-code"])
def later_output_of_a_multi_output_node(solution: Any) -> dict[str, Any]:
    """Split and TopK of the input whose first outputs nobody reads: only a later output is used."""
    nodes = [
        helper.make_node("Split", ["x"], ["left", "right"], axis=1, num_outputs=2),
        helper.make_node("Relu", ["right"], ["y"]),
        const("k", np.array([2], dtype=np.int64)),
        helper.make_node("TopK", ["x", "k"], ["top_values", "top_indices"], axis=1),
        helper.make_node("Cast", ["top_indices"], ["z"], to=F32),
    ]
    m = make(nodes, [vi("x", [3, 6])], [vi("y", [3, 3]), vi("z", [3, 2])])
    return fold_case(solution, m, [{"x": randn(40, 3, 6)}])


@probe(category="cleanup", check="folded_ok", hints=["identity"])
def identity_of_a_shared_constant(solution: Any) -> dict[str, Any]:
    """An initializer read directly by one node and through an Identity by another."""
    nodes = [
        helper.make_node("Identity", ["w"], ["w_alias"]),
        helper.make_node("Add", ["x", "w"], ["a"]),
        helper.make_node("Mul", ["a", "w_alias"], ["y"]),
    ]
    m = make(nodes, [vi("x", [4])], [vi("y", [4])], [init("w", randn(41, 4))])
    return fold_case(solution, m, [{"x": randn(42, 4)}])


@probe(category="cleanup", check="folded_ok", weight=2, hints=["identity"])
def identity_output_read_before_it(solution: Any) -> dict[str, Any]:
    """An Identity into a graph output whose source is also read by nodes placed before the Identity, and through a
    second Identity."""
    nodes = [
        helper.make_node("Relu", ["x"], ["s"]),
        helper.make_node("Mul", ["s", "w"], ["z"]),  # reads s before the Identity renames it
        helper.make_node("Tanh", ["x"], ["t"]),
        helper.make_node("Add", ["t", "z"], ["u"]),
        helper.make_node("Identity", ["s"], ["s_alias"]),  # s_alias -> s, then s -> y: its reader must read y
        helper.make_node("Neg", ["s_alias"], ["n"]),
        helper.make_node("Identity", ["s"], ["y"]),
        helper.make_node("Identity", ["t"], ["t1"]),
        helper.make_node("Identity", ["t1"], ["v"]),
    ]
    m = make(nodes, [vi("x", [4])], [vi("y", [4]), vi("u", [4]), vi("v", [4]), vi("n", [4])], [init("w", randn(43, 4))])
    return fold_case(solution, m, [{"x": randn(44, 4)}])


@probe(category="cleanup", check="folded_ok", weight=2, hints=["subgraphs", "identity"])
def renamed_and_folded_names_read_in_bodies(solution: Any) -> dict[str, Any]:
    """If and Loop bodies, one nested in another, read an Identity's output, a source renamed to a graph output and a
    folded constant; the If comes before the Identity that renames its source; a body input reuses an outer name."""
    then_inner = helper.make_graph([helper.make_node("Add", ["s", "t1"], ["o2"])], "then_inner", [], [vi("o2", [3])])
    else_inner = helper.make_graph([helper.make_node("Mul", ["s", "k"], ["o3"])], "else_inner", [], [vi("o3", [3])])
    then_outer = helper.make_graph(
        [helper.make_node("If", ["flag"], ["o1"], then_branch=then_inner, else_branch=else_inner)], "then_outer", [],
        [vi("o1", [3])],
    )
    else_outer = helper.make_graph([helper.make_node("Sub", ["t1", "k"], ["e1"])], "else_outer", [], [vi("e1", [3])])
    # The Loop body's carried input is named t1, like a main-graph tensor that Identity removal renames: inside the
    # body, t1 is the body's own input (it shadows the outer t1), so that read must not follow the rename.
    body = helper.make_graph(
        [helper.make_node("Add", ["t1", "k"], ["v_out"]), helper.make_node("Identity", ["c_in"], ["c_out"])],
        "body",
        [vi("i", [], TensorProto.INT64), vi("c_in", [], TensorProto.BOOL), vi("t1", [3])],
        [vi("c_out", [], TensorProto.BOOL), vi("v_out", [3])],
    )
    nodes = [
        const("two", np.float32(2.0)),
        helper.make_node("Mul", ["w", "two"], ["k"]),  # folded; read only inside bodies
        helper.make_node("Relu", ["x"], ["s"]),
        helper.make_node("Neg", ["x"], ["t"]),
        helper.make_node("Identity", ["t"], ["t1"]),
        helper.make_node("If", ["flag"], ["branch"], then_branch=then_outer, else_branch=else_outer),
        helper.make_node("Identity", ["s"], ["y"]),
        helper.make_node("Loop", ["trips", "", "x"], ["looped"], body=body),
    ]
    m = make(
        nodes,
        [vi("x", [3]), vi("flag", [], TensorProto.BOOL)],
        [vi("y", [3]), vi("branch", [3]), vi("looped", [3])],
        [init("w", randn(45, 3)), init("trips", np.int64(3))],
    )
    x = randn(46, 3)
    return fold_case(solution, m, [{"x": x, "flag": np.array(True)}, {"x": x, "flag": np.array(False)}])


@probe(category="semantics", check="folded_ok", weight=2, hints=["domains"])
def other_domain_nodes_stay(solution: Any) -> dict[str, Any]:
    """An ai.onnx.ml Scaler and a com.microsoft Gelu of constants stay, and so does what reads them."""
    nodes = [
        helper.make_node("Scaler", ["w"], ["ws"], domain="ai.onnx.ml", offset=[0.5], scale=[2.0]),
        helper.make_node("Gelu", ["b"], ["bg"], domain="com.microsoft"),
        helper.make_node("Neg", ["ws"], ["wn"]),
        helper.make_node("Mul", ["x", "wn"], ["xw"]),
        helper.make_node("Add", ["xw", "bg"], ["y"]),
        helper.make_node("Abs", ["b"], ["ba"]),
        helper.make_node("Add", ["y", "ba"], ["z"]),
    ]
    m = make(nodes, [vi("x", [2, 3])], [vi("z", [2, 3])], [init("w", randn(47, 2, 3)), init("b", randn(48, 2, 3))])
    m.opset_import.extend([helper.make_opsetid("ai.onnx.ml", 3), helper.make_opsetid("com.microsoft", 1)])
    return fold_case(solution, m, [{"x": randn(49, 2, 3)}])


@probe(category="cleanup", check="folded_ok", weight=2, hints=["subgraphs", "identity"])
def scan_body_reads_outer_names(solution: Any) -> dict[str, Any]:
    """A Scan body reads an Identity's output, a folded constant and a tensor that nothing else reads."""
    body = helper.make_graph(
        [helper.make_node("Add", ["row", "t1"], ["a"]), helper.make_node("Mul", ["a", "k"], ["b"]),
         helper.make_node("Sub", ["b", "r"], ["row_out"])],
        "scan_body", [vi("row", [3])], [vi("row_out", [3])],
    )  # fmt: skip
    nodes = [
        helper.make_node("Mul", ["w", "w"], ["k"]),  # folded; read only by the Scan body
        helper.make_node("Relu", ["x"], ["r"]),  # read only by the Scan body
        helper.make_node("Tanh", ["x"], ["t"]),
        helper.make_node("Identity", ["t"], ["t1"]),  # removed: the body must read t
        helper.make_node("Scan", ["xs"], ["scanned"], body=body, num_scan_inputs=1),
        helper.make_node("Add", ["scanned", "xs"], ["y"]),
    ]
    m = make(nodes, [vi("x", [3]), vi("xs", [2, 3])], [vi("y", [2, 3])], [init("w", randn(50, 3))])
    return fold_case(solution, m, [{"x": randn(51, 3), "xs": randn(52, 2, 3)}])


@probe(category="semantics", check="folded_ok", weight=2, hints=["domains", "opset"])
def model_local_functions(solution: Any) -> dict[str, Any]:
    """Model-local functions named Identity and Constant (another domain, listed first in opset_import) stay."""
    neg = helper.make_function("local", "Identity", ["a"], ["b"], [helper.make_node("Neg", ["a"], ["b"])],
                               [helper.make_opsetid("", 13)])  # fmt: skip
    nines = helper.make_function("local", "Constant", [], ["o"], [const("o", np.full(3, 9.0, np.float32))],
                                 [helper.make_opsetid("", 13)], attributes=["value"])  # fmt: skip
    nodes = [
        const("shape", np.array([3], dtype=np.int64)),
        helper.make_node("Reshape", ["w", "shape"], ["w_flat"]),  # folded at opset 13
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Identity", ["r"], ["r_neg"], domain="local"),
        helper.make_node("Add", ["r_neg", "w_flat"], ["y"]),
        helper.make_node("Constant", [], ["k"], domain="local", value=numpy_helper.from_array(np.float32([1, 2, 3]))),
        helper.make_node("Mul", ["y", "k"], ["z"]),
    ]
    graph = helper.make_graph(nodes, "g", [vi("x", [3])], [vi("z", [3])], initializer=[init("w", randn(53, 1, 3))])
    imports = [helper.make_opsetid("local", 1), helper.make_opsetid("", 13)]
    m = helper.make_model(graph, opset_imports=imports, ir_version=10, functions=[neg, nines])
    return fold_case(solution, m, [{"x": randn(54, 3)}])


# ---------------------------------------------------------------- generated models: the families

_FOLD = {"ident": 0.0, "sub": 0.0, "dom": 0.0, "rand": 0.0, "fold": 0.6}
_IDENT = {"ident": 0.35, "sub": 0.0, "dom": 0.0, "rand": 0.0, "fold": 0.6}
_SUB = {"ident": 0.2, "sub": 0.25, "dom": 0.0, "rand": 0.0, "fold": 0.6}
_DOM = {"ident": 0.1, "sub": 0.0, "dom": 0.2, "rand": 0.1, "fold": 0.6}
_MIX = {"ident": 0.2, "sub": 0.15, "dom": 0.1, "rand": 0.0, "fold": 0.6}


def _family(solution: Any, params: dict[str, float], seeds: range, untouched: bool = False) -> list[str]:
    return [_case(solution, _Gen(seed, **params), untouched) for seed in seeds]


@probe(category="folding", check="generated_ok", weight=3, timeout=60, hints=["propagate", "empty-input", "empty-output", "dead-code"])
def generated_constant_subgraphs(solution: Any) -> list[str]:
    """Generated models: constant subgraphs of many op kinds, ranks and dtypes mixed with input-dependent nodes."""
    return _family(solution, _FOLD, range(1000, 1040))


@probe(category="cleanup", check="generated_ok", weight=3, timeout=60, hints=["identity", "overridable", "dead-code"])
def generated_identities_and_interface(solution: Any) -> list[str]:
    """Generated models: Identity chains, graph outputs also read, overridable and unread inputs, any node order."""
    return _family(solution, _IDENT, range(2000, 2040))


@probe(category="cleanup", check="generated_ok", weight=3, timeout=60, hints=["subgraphs", "identity", "dead-code"])
def generated_subgraphs(solution: Any) -> list[str]:
    """Generated models: If, Loop and Scan bodies, nested too, that read tensors of the main graph by name; body inputs
    that reuse an outer name, read by the bodies nested in theirs and, as the outer tensor, by sibling bodies."""
    return _family(solution, _SUB, range(3000, 3040))


@probe(category="semantics", check="generated_ok", weight=2, timeout=60, hints=["domains", "random"])
def generated_other_domains_and_random_ops(solution: Any) -> list[str]:
    """Generated models: nodes of other domains and random ops next to constant subgraphs."""
    return _family(solution, _DOM, range(4000, 4030))


@probe(category="semantics", check="generated_ok", timeout=60, hints=["new-model"])
def generated_caller_model_untouched(solution: Any) -> list[str]:
    """Generated models folded as given, not copied: the caller's model must be left as it was."""
    return _family(solution, _MIX, range(5000, 5020), untouched=True)


# ---------------------------------------------------------------- red team round 2


@probe(category="cleanup", check="folded_ok", weight=2, hints=["subgraphs", "identity", "dead-code"])
def body_input_hides_outer_name_in_its_body_only(solution: Any) -> dict[str, Any]:
    """A Loop body (in an If's then branch) and a Scan body have inputs named like main-graph tensors t and u; the
    then branch itself, the sibling else branch and another If's branch read the outer t and u: those reads follow
    t's rename and keep u (read by nothing else) alive."""
    loop_body = helper.make_graph(
        [helper.make_node("Identity", ["cin"], ["cout"]), helper.make_node("Add", ["t", "t"], ["tn"])],
        "loop_body", [vi("i", [], TensorProto.INT64), vi("cin", [], TensorProto.BOOL), vi("t", [3])],
        [vi("cout", [], TensorProto.BOOL), vi("tn", [3])],
    )  # fmt: skip
    then_g = helper.make_graph(
        [const("trips", np.int64(2)), helper.make_node("Loop", ["trips", "", "x"], ["lo"], body=loop_body),
         helper.make_node("Add", ["lo", "t"], ["o1"])],
        "then", [], [vi("o1", [3])],
    )  # fmt: skip
    else_g = helper.make_graph([helper.make_node("Neg", ["t"], ["e1"]), helper.make_node("Mul", ["e1", "u"], ["e2"])],
                               "else", [], [vi("e2", [3])])  # fmt: skip
    scan_body = helper.make_graph([helper.make_node("Mul", ["u", "u"], ["row_out"])], "scan_body", [vi("u", [3])],
                                  [vi("row_out", [3])])  # fmt: skip
    then2 = helper.make_graph([helper.make_node("Sub", ["u", "t"], ["p1"])], "then2", [], [vi("p1", [3])])
    else2 = helper.make_graph([helper.make_node("Abs", ["x"], ["p2"])], "else2", [], [vi("p2", [3])])
    nodes = [
        helper.make_node("Relu", ["x"], ["s"]),
        helper.make_node("Identity", ["s"], ["t"]),  # removed: every outer read of t reads s
        helper.make_node("Tanh", ["x"], ["u"]),  # read only by bodies that do not define u
        helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g),
        helper.make_node("Scan", ["xs"], ["scanned"], body=scan_body, num_scan_inputs=1),
        helper.make_node("If", ["c"], ["z"], then_branch=then2, else_branch=else2),
    ]
    m = make(nodes, [vi("x", [3]), vi("c", [], TensorProto.BOOL), vi("xs", [2, 3])],
             [vi("y", [3]), vi("scanned", [2, 3]), vi("z", [3])])  # fmt: skip
    x, xs = randn(60, 3), randn(61, 2, 3)
    return fold_case(solution, m, [{"x": x, "c": np.array(c), "xs": xs} for c in (True, False)])


@probe(category="cleanup", check="folded_ok", weight=2, hints=["subgraphs", "identity"])
def body_input_hides_outer_name_in_nested_bodies(solution: Any) -> dict[str, Any]:
    """A Loop body's carried input t and a Scan body's row input v reuse the names of Identity outputs that are
    removed; an If nested in each body reads t or v, which there still mean the body's input, not the renamed tensor."""
    then_g = helper.make_graph([helper.make_node("Add", ["t", "t"], ["o1"])], "then", [], [vi("o1", [4])])
    else_g = helper.make_graph([helper.make_node("Neg", ["t"], ["o2"])], "else", [], [vi("o2", [4])])
    loop_body = helper.make_graph(
        [helper.make_node("Identity", ["cin"], ["cout"]),
         helper.make_node("If", ["cin"], ["tn"], then_branch=then_g, else_branch=else_g)],
        "loop_body", [vi("i", [], TensorProto.INT64), vi("cin", [], TensorProto.BOOL), vi("t", [4])],
        [vi("cout", [], TensorProto.BOOL), vi("tn", [4])],
    )  # fmt: skip
    then2 = helper.make_graph([helper.make_node("Mul", ["v", "w"], ["q1"])], "then2", [], [vi("q1", [4])])
    else2 = helper.make_graph([helper.make_node("Sub", ["v", "w"], ["q2"])], "else2", [], [vi("q2", [4])])
    scan_body = helper.make_graph([helper.make_node("If", ["c"], ["row_out"], then_branch=then2, else_branch=else2)],
                                  "scan_body", [vi("v", [4])], [vi("row_out", [4])])  # fmt: skip
    nodes = [
        helper.make_node("Relu", ["x"], ["s"]),
        helper.make_node("Identity", ["s"], ["t"]),
        helper.make_node("Loop", ["trips", "", "t"], ["y"], body=loop_body),
        helper.make_node("Sigmoid", ["x"], ["p"]),
        helper.make_node("Identity", ["p"], ["v"]),
        helper.make_node("Scan", ["xs"], ["scanned"], body=scan_body, num_scan_inputs=1),
        helper.make_node("Add", ["scanned", "v"], ["z"]),
    ]
    m = make(nodes, [vi("x", [4]), vi("c", [], TensorProto.BOOL), vi("xs", [3, 4])], [vi("y", [4]), vi("z", [3, 4])],
             [init("trips", np.int64(3)), init("w", randn(62, 4))])  # fmt: skip
    x, xs = randn(63, 4), randn(64, 3, 4)
    return fold_case(solution, m, [{"x": x, "c": np.array(c), "xs": xs} for c in (True, False)])


@probe(category="folding", check="folded_ok", weight=2, hints=["empty-output", "propagate"])
def omitted_outputs_of_folded_nodes(solution: Any) -> dict[str, Any]:
    """Folded nodes whose optional outputs are omitted ("") before one that is used: Unique -> [u, "", "", counts],
    LayerNormalization -> [y, "", inv_std], LSTM -> ["", Y_h]."""
    hidden = 3
    nodes = [
        const("k", np.array([3, 1, 3, 2, 1, 1], np.int64)),
        helper.make_node("Unique", ["k"], ["u", "", "", "counts"], sorted=1),
        helper.make_node("Cast", ["counts"], ["counts_f0"], to=F32),
        helper.make_node("Clip", ["counts_f0", "", "hi"], ["counts_f"]),  # an omitted input after the omitted outputs
        helper.make_node("LayerNormalization", ["w", "gamma", "beta"], ["ln", "", "inv_std"], axis=-1),
        helper.make_node("LSTM", ["seq", "W", "R"], ["", "h_last"], hidden_size=hidden),
        const("axis0", np.array([0], np.int64)),
        helper.make_node("Squeeze", ["h_last", "axis0"], ["h"]),
        helper.make_node("Mul", ["x", "ln"], ["a"]),
        helper.make_node("Add", ["a", "counts_f"], ["b"]),
        helper.make_node("Mul", ["b", "inv_std"], ["c"]),
        helper.make_node("Add", ["c", "h"], ["y"]),
    ]
    inits = [init("hi", np.float32(2.5)), init("w", randn(65, 2, 3)), init("gamma", randn(66, 3)), init("beta", randn(67, 3)),
             init("seq", randn(68, 4, 2, 5, scale=0.5)), init("W", randn(69, 1, 4 * hidden, 5, scale=0.5)),
             init("R", randn(70, 1, 4 * hidden, hidden, scale=0.5))]  # fmt: skip
    m = make(nodes, [vi("x", [2, 3])], [vi("y", [2, 3])], inits)
    return fold_case(solution, m, [{"x": randn(71, 2, 3)}])


@probe(category="semantics", check="folded_ok", weight=2, hints=["random"])
def dropout_in_training_mode_not_folded(solution: Any) -> dict[str, Any]:
    """Dropout of a constant given a constant training_mode stays, true (a new mask every run) or false; a Dropout
    without it folds. Run twice."""
    nodes = [
        const("ratio", np.float32(0.5)),
        const("on", np.array(True)),
        const("off", np.array(False)),
        helper.make_node("Dropout", ["w", "ratio", "on"], ["dropped"], seed=5),
        helper.make_node("Dropout", ["w", "ratio", "off"], ["kept", "mask"], seed=6),
        helper.make_node("Dropout", ["b"], ["b_out"]),
        helper.make_node("Cast", ["mask"], ["mask_f"], to=F32),
        helper.make_node("Add", ["x", "dropped"], ["a"]),
        helper.make_node("Mul", ["kept", "mask_f"], ["km"]),
        helper.make_node("Add", ["a", "km"], ["ab"]),
        helper.make_node("Add", ["ab", "b_out"], ["y"]),
    ]
    m = make(nodes, [vi("x", [2, 3])], [vi("y", [2, 3])], [init("w", randn(72, 2, 3)), init("b", randn(73, 2, 3))])
    return fold_case(solution, m, [{"x": randn(74, 2, 3)}], times=2)


# ---------------------------------------------------------------- red team round 3


@probe(category="folding", check="folded_ok", weight=2, hints=["empty-input", "random"])
def empty_names_in_optional_input_slots(solution: Any) -> dict[str, Any]:
    """Optional input slots given as the empty name in folded nodes: Dropout(w, r, "") and Dropout(b, "", "") (no
    training_mode: they fold, mask and all), Pad(w, pads, "", axes) and Clip(b, lo, "")."""
    nodes = [
        const("ratio", np.float32(0.25)),
        helper.make_node("Dropout", ["w", "ratio", ""], ["d1"], seed=3),
        helper.make_node("Dropout", ["b", "", ""], ["d2", "mask"], seed=4),
        helper.make_node("Cast", ["mask"], ["mask_f"], to=F32),
        helper.make_node("Pad", ["w", "pads", "", "axes"], ["wp"]),  # zeros around the last axis: [2, 3] -> [2, 5]
        helper.make_node("ReduceSum", ["wp", "last"], ["wp_sum"], keepdims=1),
        helper.make_node("Clip", ["b", "lo", ""], ["bc"]),
        helper.make_node("Mul", ["x", "d1"], ["a"]),
        helper.make_node("Mul", ["d2", "mask_f"], ["dm"]),
        helper.make_node("Add", ["a", "dm"], ["ab"]),
        helper.make_node("Add", ["ab", "wp_sum"], ["abc"]),
        helper.make_node("Sub", ["abc", "bc"], ["y"]),
    ]
    inits = [init("w", randn(80, 2, 3)), init("b", randn(81, 2, 3)), init("pads", np.array([1, 1], np.int64)),
             init("axes", np.array([-1], np.int64)), init("last", np.array([-1], np.int64)), init("lo", np.float32(-0.3))]  # fmt: skip
    m = make(nodes, [vi("x", [2, 3])], [vi("y", [2, 3])], inits)
    return fold_case(solution, m, [{"x": randn(82, 2, 3)}])


@probe(category="cleanup", check="folded_ok", weight=2, hints=["dead-code", "empty-output", "empty-input"])
def dead_omitted_outputs_beside_live_omitted_inputs(solution: Any) -> dict[str, Any]:
    """Dead nodes of the input whose optional outputs are omitted (Dropout -> [d, ""], LayerNormalization ->
    [n, "", inv]) in one graph with live nodes whose optional inputs are omitted (Clip(x, "", hi), Pad(x, pads, ""))."""
    nodes = [
        helper.make_node("Dropout", ["x"], ["dead_d", ""]),
        helper.make_node("Clip", ["x", "", "hi"], ["c"]),
        helper.make_node("LayerNormalization", ["x", "gamma"], ["dead_n", "", "dead_inv"], axis=-1),
        helper.make_node("Pad", ["c", "pads", ""], ["p"]),
        helper.make_node("Relu", ["dead_d"], ["dead_r"]),
        helper.make_node("Neg", ["p"], ["y"]),
    ]
    inits = [init("hi", np.float32(0.5)), init("gamma", randn(83, 4)), init("pads", np.array([0, 1, 0, 1], np.int64))]
    m = make(nodes, [vi("x", [3, 4])], [vi("y", [3, 6])], inits)
    return fold_case(solution, m, [{"x": randn(84, 3, 4)}])


@probe(category="folding", check="folded_ok", weight=2, hints=["propagate"])
def large_constants_fold(solution: Any) -> dict[str, Any]:
    """Folded values of realistic size: a Tile of a 160x256 weight (81920 elements, kept as an initializer the MatMul
    reads), an Expand of a bias row to 300x320 and a ConstantOfShape of 300x256, each reduced to a row."""
    nodes = [
        helper.make_node("Tile", ["w", "reps"], ["w_tiled"]),  # [320, 256]
        helper.make_node("Transpose", ["w_tiled"], ["w_t"], perm=[1, 0]),  # [256, 320]
        helper.make_node("Expand", ["b", "b_shape"], ["b_big"]),  # [300, 320]
        helper.make_node("ReduceMean", ["b_big", "axis0"], ["b_row"], keepdims=0),  # [320]
        helper.make_node("ConstantOfShape", ["c_shape"], ["quarter"], value=numpy_helper.from_array(np.float32([0.25]))),
        helper.make_node("ReduceSum", ["quarter", "axis0"], ["c_row"], keepdims=0),  # [256], 75 each
        helper.make_node("Mul", ["c_row", "scale"], ["shift"]),
        helper.make_node("Add", ["x", "shift"], ["xs"]),
        helper.make_node("MatMul", ["xs", "w_t"], ["h"]),
        helper.make_node("Add", ["h", "b_row"], ["y"]),
    ]
    w = np.round(randn(85, 160, 256) * 16) / 256  # multiples of 1/256: exact sums
    inits = [init("w", w.astype(np.float32)), init("reps", np.array([2, 1], np.int64)),
             init("b", (np.round(randn(86, 1, 320) * 8) / 8).astype(np.float32)), init("b_shape", np.array([300, 320], np.int64)),
             init("axis0", np.array([0], np.int64)), init("c_shape", np.array([300, 256], np.int64)),
             init("scale", np.float32(1 / 75))]  # fmt: skip
    m = make(nodes, [vi("x", [4, 256])], [vi("y", [4, 320])], inits)
    return fold_case(solution, m, [{"x": randn(87, 4, 256, scale=0.1)}])


@probe(category="folding", check="folded_ok", weight=2, hints=["dtypes", "graph-output", "opset"])
def string_constants_fold(solution: Any) -> dict[str, Any]:
    """String tensors: Concat of two string initializers is a graph output; Constant value_strings and value_string
    feed a Concat and a Gather whose folded strings a live Where and Equal read; floats, doubles (NaN and infinities
    among them) and bools cast to strings, which live Where nodes read."""
    nodes = [
        helper.make_node("Concat", ["s1", "s2"], ["joined"], axis=0),  # a graph output: an initializer named joined
        helper.make_node("Constant", [], ["more"], value_strings=["up", "down"]),
        helper.make_node("Constant", [], ["other"], value_string="none"),
        helper.make_node("Concat", ["s1", "more"], ["labels"], axis=0),  # [4]
        helper.make_node("Gather", ["labels", "order"], ["picked"], axis=0),  # [4], read by the live Where
        const("zero", np.float32(0.0)),
        helper.make_node("Greater", ["x", "zero"], ["pos"]),
        helper.make_node("Where", ["pos", "picked", "other"], ["label"]),
        helper.make_node("Equal", ["label", "other"], ["is_none"]),
        helper.make_node("Cast", ["is_none"], ["z"], to=F32),
        # numbers and bools cast to strings as onnxruntime writes them ("1", "NaN", "INF", "1e+10"; ReferenceEvaluator
        # gives "1.0", "nan", "inf", "10000000000.0", "True"), read by a live Where
        helper.make_node("Cast", ["nums"], ["nums_s"], to=TensorProto.STRING),
        helper.make_node("Cast", ["flags"], ["flags_s"], to=TensorProto.STRING),
        helper.make_node("Cast", ["doubles"], ["doubles_s"], to=TensorProto.STRING),
        helper.make_node("Where", ["pos", "nums_s", "flags_s"], ["num_label"]),
        helper.make_node("Where", ["pos", "doubles_s", "picked"], ["dbl_label"]),
    ]
    strings = lambda vals, name: numpy_helper.from_array(np.array([v.encode() for v in vals], dtype=object), name)  # noqa: E731
    inits = [strings(["alpha", "beta"], "s1"), strings(["gamma"], "s2"), init("order", np.array([3, 0, 2, 1], np.int64)),
             init("nums", np.float32([1.0, np.nan, np.inf, -2.5])), init("flags", np.array([True, False, False, True])),
             init("doubles", np.float64([1e10, 1 / 3, -np.inf, 4.0]))]  # fmt: skip
    m = make(nodes, [vi("x", [4])], [vi("joined", [3], TensorProto.STRING), vi("label", [4], TensorProto.STRING), vi("z", [4]),
             vi("num_label", [4], TensorProto.STRING), vi("dbl_label", [4], TensorProto.STRING)], inits, opset=19)  # fmt: skip
    return fold_case(solution, m, [{"x": np.float32([0.5, -1.0, 2.0, -0.25])}, {"x": randn(88, 4)}])


@probe(category="folding", check="folded_ok", weight=2, hints=["dtypes", "opset"])
def narrow_float_types_fold(solution: Any) -> dict[str, Any]:
    """An opset-21 model: Casts of a weight to FLOAT8E4M3FN, FLOAT8E5M2, BFLOAT16 and INT4 and back to float fold; a
    float8 zero point (a folded Cast) stays as an initializer that a live QuantizeLinear/DequantizeLinear pair reads.
    Float8 infinities (a Cast without saturation) are read by a folded node, and the narrow values cast to strings
    (which only onnxruntime computes) are a graph output."""
    casts = [("w", TensorProto.FLOAT8E4M3FN, "f8"), ("w", TensorProto.FLOAT8E5M2, "f8b"), ("w", TensorProto.BFLOAT16, "bf"),
             ("k", TensorProto.INT4, "i4"), ("w", TensorProto.INT4, "i4w")]  # floats to INT4 round as onnxruntime does (to nearest)
    nodes = [helper.make_node("Cast", ["zero"], ["zp"], to=TensorProto.FLOAT8E4M3FN)]
    acc = "x"
    for src, to, tag in casts:
        nodes += [helper.make_node("Cast", [src], [f"w_{tag}"], to=to), helper.make_node("Cast", [f"w_{tag}"], [f"back_{tag}"], to=F32),
                  helper.make_node("Add", [acc, f"back_{tag}"], [f"acc_{tag}"])]  # fmt: skip
        acc = f"acc_{tag}"
    # float8 infinity (a Cast without saturation) read back by a folded node; narrow values cast to strings, which only
    # onnxruntime can do (ReferenceEvaluator raises), a string graph output
    nodes += [helper.make_node("Cast", ["huge"], ["w_e5"], to=TensorProto.FLOAT8E5M2, saturate=0),
              helper.make_node("Cast", ["w_e5"], ["back_e5"], to=F32), helper.make_node("IsInf", ["back_e5"], ["e5_inf"]),
              helper.make_node("Cast", ["e5_inf"], ["e5_one"], to=F32), helper.make_node("Add", [acc, "e5_one"], ["acc_e5"])]
    acc = "acc_e5"
    nodes += [helper.make_node("Cast", [f"w_{tag}"], [f"s_{tag}"], to=TensorProto.STRING) for tag in ("f8", "f8b", "bf", "i4w")]
    nodes.append(helper.make_node("Concat", ["s_f8", "s_f8b", "s_bf", "s_i4w"], ["narrow_text"], axis=1))
    nodes += [helper.make_node("QuantizeLinear", [acc, "qscale", "zp"], ["q"]), helper.make_node("DequantizeLinear", ["q", "qscale", "zp"], ["y"])]
    w = np.float32([[1.0, 0.3333, 3.1, 7.0], [-2.6, 0.09, -5.2, 4.4]])
    m = make(nodes, [vi("x", [2, 4])], [vi("y", [2, 4]), vi("narrow_text", [2, 16], TensorProto.STRING)],
             [init("w", w), init("k", np.int64([[3, -2, 7, -8], [0, 5, -1, 6]])), init("zero", np.float32(0.0)), init("qscale", np.float32(0.5)),
              init("huge", np.float32([[1e9, -1e9, 2.0, 0.5], [3.0, 1e9, -4.0, 0.25]]))],
             opset=21)  # fmt: skip
    return fold_case(solution, m, [{"x": randn(89, 2, 4)}])


# ---------------------------------------------------------------- red team round 4
# Bodies are left as they are (the rules apply to the main graph only): dead nodes, Identity and Constant nodes and
# initializers inside If, Loop and Scan bodies, three levels deep; folded values of every element type, empty and
# rank 0; the opsets 11 to 21, with the ops ReferenceEvaluator gets wrong before some opset (the statement names
# them); float16 constants; the default domain imported under its alias "ai.onnx".


@probe(category="cleanup", check="folded_ok", weight=2, hints=["subgraphs", "dead-code"])
def dead_nodes_in_bodies_stay(solution: Any) -> dict[str, Any]:
    """If branches and a Loop body hold nodes that no body output needs, one of them the only reader of a main-graph
    tensor (which that keeps alive); a Scan body holds a dead Identity. Bodies keep all their nodes."""
    then_g = helper.make_graph(
        [helper.make_node("Relu", ["r"], ["t_live"]), helper.make_node("Exp", ["t_live"], ["t_dead"]),
         helper.make_node("Mul", ["only_in_dead", "t_live"], ["t_dead2"])],
        "then", [], [vi("t_live", [3])],
    )  # fmt: skip
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e_live"]), helper.make_node("Sin", ["x"], ["e_dead"])],
                               "else", [], [vi("e_live", [3])])  # fmt: skip
    loop_body = helper.make_graph(
        [helper.make_node("Identity", ["cin"], ["cout"]), helper.make_node("Tanh", ["v"], ["v_next"]),
         helper.make_node("Cast", ["i"], ["i_dead"], to=F32), helper.make_node("Add", ["v_next", "k"], ["v_dead"])],
        "loop_body", [vi("i", [], TensorProto.INT64), vi("cin", [], TensorProto.BOOL), vi("v", [3])],
        [vi("cout", [], TensorProto.BOOL), vi("v_next", [3])],
    )  # fmt: skip
    scan_body = helper.make_graph([helper.make_node("Sigmoid", ["row"], ["row_out"]), helper.make_node("Identity", ["row"], ["row_dead"])],
                                  "scan_body", [vi("row", [3])], [vi("row_out", [3])])  # fmt: skip
    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Mul", ["w", "w"], ["k"]),  # folded; read only by a dead node of the Loop body
        helper.make_node("Abs", ["x"], ["only_in_dead"]),  # read only by a dead node of the then branch
        helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g),
        helper.make_node("Loop", ["trips", "", "x"], ["looped"], body=loop_body),
        helper.make_node("Scan", ["xs"], ["scanned"], body=scan_body, num_scan_inputs=1),
        helper.make_node("Exp", ["x"], ["dead_main"]),  # dead in the main graph: removed
    ]
    m = make(nodes, [vi("x", [3]), vi("c", [], TensorProto.BOOL), vi("xs", [2, 3])], [vi("y", [3]), vi("looped", [3]), vi("scanned", [2, 3])],
             [init("w", randn(100, 3)), init("trips", np.int64(2))])  # fmt: skip
    x, xs = randn(101, 3), randn(102, 2, 3)
    return fold_case(solution, m, [{"x": x, "c": np.array(c), "xs": xs} for c in (True, False)])


@probe(category="cleanup", check="folded_ok", weight=2, hints=["subgraphs", "identity"])
def identities_in_bodies_stay(solution: Any) -> dict[str, Any]:
    """Identity nodes inside bodies stay: of a body input read by the next body node, of a main-graph tensor (renamed
    by the main graph's Identity removal) read inside the body, a chain into a body output, and a branch whose output
    is an Identity of a graph input."""
    then_g = helper.make_graph(
        [helper.make_node("Identity", ["t"], ["a"]), helper.make_node("Mul", ["a", "k"], ["b"]),
         helper.make_node("Identity", ["b"], ["b1"]), helper.make_node("Identity", ["b1"], ["b2"])],
        "then", [], [vi("b2", [3])],
    )  # fmt: skip
    else_g = helper.make_graph([helper.make_node("Identity", ["x"], ["x_seen"])], "else", [], [vi("x_seen", [3])])
    loop_body = helper.make_graph(
        [helper.make_node("Identity", ["cin"], ["cout"]), helper.make_node("Identity", ["v"], ["v_copy"]),
         helper.make_node("Sigmoid", ["v_copy"], ["v_sig"]), helper.make_node("Identity", ["t"], ["t_in"]),
         helper.make_node("Add", ["v_sig", "t_in"], ["v_next"]), helper.make_node("Identity", ["v_copy"], ["scan_out"])],
        "loop_body", [vi("i", [], TensorProto.INT64), vi("cin", [], TensorProto.BOOL), vi("v", [3])],
        [vi("cout", [], TensorProto.BOOL), vi("v_next", [3]), vi("scan_out", [3])],
    )  # fmt: skip
    nodes = [
        helper.make_node("Relu", ["x"], ["s"]),
        helper.make_node("Identity", ["s"], ["t"]),  # removed: the bodies' reads of t follow the rename to s
        helper.make_node("Mul", ["w", "w"], ["k"]),
        helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g),
        helper.make_node("Loop", ["trips", "", "x"], ["looped", "steps"], body=loop_body),
    ]
    m = make(nodes, [vi("x", [3]), vi("c", [], TensorProto.BOOL)], [vi("y", [3]), vi("looped", [3]), vi("steps", [2, 3])],
             [init("w", randn(103, 3)), init("trips", np.int64(2))])  # fmt: skip
    x = randn(104, 3)
    return fold_case(solution, m, [{"x": x, "c": np.array(c)} for c in (True, False)])


@probe(category="cleanup", check="folded_ok", weight=2, hints=["subgraphs", "propagate"])
def constants_in_bodies_stay(solution: Any) -> dict[str, Any]:
    """Constant nodes inside bodies (each attribute form, two of them multiplied, one that is a body output) and a
    body initializer stay as they are: only the main graph is folded."""
    then_g = helper.make_graph(
        [helper.make_node("Constant", [], ["half"], value_float=0.5), helper.make_node("Constant", [], ["two"], value_floats=[2.0]),
         helper.make_node("Mul", ["half", "two"], ["one"]), helper.make_node("Mul", ["x", "one"], ["xo"]),
         helper.make_node("Add", ["xo", "bias"], ["o1"])],
        "then", [], [vi("o1", [3])], initializer=[init("bias", np.float32([0.5, -1.0, 2.0]))],
    )  # fmt: skip
    else_g = helper.make_graph([const("fixed", np.float32([1.0, 2.0, 3.0]))], "else", [], [vi("fixed", [3])])
    loop_body = helper.make_graph(
        [helper.make_node("Identity", ["cin"], ["cout"]), helper.make_node("Constant", [], ["step"], value_int=1),
         helper.make_node("Add", ["i", "step"], ["i1"]), helper.make_node("Cast", ["i1"], ["i1f"], to=F32),
         const("scale", np.float32(0.25)), helper.make_node("Mul", ["i1f", "scale"], ["d"]),
         helper.make_node("Add", ["v", "d"], ["v_next"])],
        "loop_body", [vi("i", [], TensorProto.INT64), vi("cin", [], TensorProto.BOOL), vi("v", [3])],
        [vi("cout", [], TensorProto.BOOL), vi("v_next", [3])],
    )  # fmt: skip
    nodes = [
        const("k", np.float32(3.0)),  # the main graph's Constant folds
        helper.make_node("Mul", ["x", "k"], ["xk"]),
        helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g),
        helper.make_node("Loop", ["trips", "", "xk"], ["looped"], body=loop_body),
    ]
    m = make(nodes, [vi("x", [3]), vi("c", [], TensorProto.BOOL)], [vi("y", [3]), vi("looped", [3])], [init("trips", np.int64(3))])
    x = randn(105, 3)
    return fold_case(solution, m, [{"x": x, "c": np.array(c)} for c in (True, False)])


@probe(category="cleanup", check="folded_ok", weight=2, hints=["subgraphs", "identity", "dead-code"])
def bodies_three_deep_left_as_they_are(solution: Any) -> dict[str, Any]:
    """A Scan body holds an If whose branch holds an If (three levels): each level has a Constant, an Identity read
    inside it and a dead node; the innermost reads a main-graph tensor that Identity removal renames and a folded one,
    and a dead node there is the only reader of another main-graph tensor."""
    inner_then = helper.make_graph(
        [helper.make_node("Identity", ["t"], ["it_a"]), helper.make_node("Constant", [], ["it_k"], value_float=0.5),
         helper.make_node("Mul", ["it_a", "it_k"], ["it_b"]), helper.make_node("Add", ["it_b", "row"], ["it_c"]),
         helper.make_node("Add", ["it_c", "kf"], ["it_out"]), helper.make_node("Neg", ["deep_only"], ["it_dead"])],
        "inner_then", [], [vi("it_out", [3])],
    )  # fmt: skip
    inner_else = helper.make_graph([helper.make_node("Identity", ["mid_a"], ["ie_out"])], "inner_else", [], [vi("ie_out", [3])])
    mid_then = helper.make_graph(
        [helper.make_node("Identity", ["row"], ["mid_a"]), helper.make_node("If", ["c"], ["mid_b"], then_branch=inner_then, else_branch=inner_else),
         helper.make_node("Constant", [], ["mid_k"], value_floats=[1.0, 2.0, 3.0]), helper.make_node("Mul", ["mid_b", "mid_k"], ["mid_out"]),
         helper.make_node("Exp", ["mid_a"], ["mid_dead"])],
        "mid_then", [], [vi("mid_out", [3])],
    )  # fmt: skip
    mid_else = helper.make_graph([helper.make_node("Tanh", ["row"], ["me_out"])], "mid_else", [], [vi("me_out", [3])])
    scan_body = helper.make_graph(
        [helper.make_node("Identity", ["row_in"], ["row"]), helper.make_node("If", ["c"], ["sc"], then_branch=mid_then, else_branch=mid_else),
         helper.make_node("Constant", [], ["sk"], value=numpy_helper.from_array(np.float32(0.1))), helper.make_node("Mul", ["sc", "sk"], ["row_out"]),
         helper.make_node("Identity", ["row"], ["row_dead"])],
        "scan_body", [vi("row_in", [3])], [vi("row_out", [3])],
    )  # fmt: skip
    nodes = [
        helper.make_node("Sigmoid", ["x"], ["s"]),
        helper.make_node("Identity", ["s"], ["t"]),
        helper.make_node("Add", ["w", "w"], ["kf"]),  # folded, read three levels deep
        helper.make_node("Cos", ["x"], ["deep_only"]),  # read only by a dead node three levels deep: stays
        helper.make_node("Scan", ["xs"], ["scanned"], body=scan_body, num_scan_inputs=1),
        helper.make_node("Identity", ["scanned"], ["y"]),
    ]
    m = make(nodes, [vi("x", [3]), vi("c", [], TensorProto.BOOL), vi("xs", [2, 3])], [vi("y", [2, 3])], [init("w", randn(106, 3))])
    x, xs = randn(107, 3), randn(108, 2, 3)
    return fold_case(solution, m, [{"x": x, "c": np.array(c), "xs": xs} for c in (True, False)])


def _legacy_softmax_model(opset: int) -> onnx.ModelProto:
    """Softmax (default axis), LogSoftmax (axis 0) and Hardmax (axis -2) of rank-3 and rank-4 constants, each read by a
    node of the input; before opset 13 they coerce the input to 2-D at the axis."""
    nodes = [
        helper.make_node("Softmax", ["w3"], ["p"]),  # axis 1 of [2, 3, 4]: over 12 values at a time
        helper.make_node("LogSoftmax", ["w3"], ["lp"], axis=0),  # over all 24
        helper.make_node("Hardmax", ["w4"], ["hm"], axis=-2),  # [2, 2, 3, 2] at axis 2: over the last 6
        helper.make_node("Softmax", ["w3"], ["p_last"], axis=-1),  # the last axis: the same at every opset
        helper.make_node("Reshape", ["hm", "shape3"], ["hm3"]),
        helper.make_node("Add", ["x", "p"], ["a"]),
        helper.make_node("Mul", ["a", "lp"], ["b"]),
        helper.make_node("Add", ["b", "hm3"], ["c"]),
        helper.make_node("Sub", ["c", "p_last"], ["y"]),
    ]
    w4 = np.round(randn(110, 2, 2, 3, 2) * 4) / 4  # ties are rare, and Hardmax takes the first one anyway
    inits = [init("w3", randn(109, 2, 3, 4)), init("w4", w4.astype(np.float32)), init("shape3", np.array([2, 3, 4], np.int64))]
    return make(nodes, [vi("x", [2, 3, 4])], [vi("y", [2, 3, 4])], inits, opset=opset)


@probe(category="folding", check="folded_ok", weight=2, hints=["opset"])
def softmax_family_before_opset_13(solution: Any) -> dict[str, Any]:
    """An opset-11 model: Softmax, LogSoftmax and Hardmax of rank-3 and rank-4 constants at their default axis, axis 0
    and axis -2, where the opset-11 ops coerce the input to 2-D (ReferenceEvaluator knows only the opset-13 meaning)."""
    return fold_case(solution, _legacy_softmax_model(11), [{"x": randn(111, 2, 3, 4)}])


@probe(category="folding", check="folded_ok", weight=2, hints=["opset"])
def dequantize_linear_before_opset_19(solution: Any) -> dict[str, Any]:
    """An opset-13 model with quantized weights: DequantizeLinear of int8 per-axis and uint8 per-tensor constants (which
    ReferenceEvaluator cannot run before opset 19) feeding a MatMul and an Add with the input, and a QuantizeLinear of
    a constant that is a graph output."""
    nodes = [
        helper.make_node("DequantizeLinear", ["wq", "w_scale", "w_zero"], ["w"], axis=1),  # per output column
        helper.make_node("DequantizeLinear", ["bq", "b_scale", "b_zero"], ["b"]),
        helper.make_node("QuantizeLinear", ["v", "v_scale"], ["vq"]),
        helper.make_node("MatMul", ["x", "w"], ["h"]),
        helper.make_node("Add", ["h", "b"], ["y"]),
    ]
    rng = np.random.default_rng(112)
    inits = [init("wq", rng.integers(-100, 100, (5, 4)).astype(np.int8)), init("w_scale", np.float32([0.02, 0.05, 0.01, 0.03])),
             init("w_zero", np.int8([0, 3, -2, 1])), init("bq", rng.integers(0, 255, (4,)).astype(np.uint8)),
             init("b_scale", np.float32(0.01)), init("b_zero", np.uint8(128)), init("v", randn(113, 4)),
             init("v_scale", np.float32(0.05))]  # fmt: skip
    m = make(nodes, [vi("x", [3, 5])], [vi("y", [3, 4]), vi("vq", [4], TensorProto.UINT8)], inits, opset=13)
    return fold_case(solution, m, [{"x": randn(114, 3, 5)}])


@probe(category="folding", check="folded_ok", weight=1, hints=["dtypes"])
def float16_constants_fold(solution: Any) -> dict[str, Any]:
    """A weight cast to float16, then Sqrt, Mul, Add and Exp in float16 and cast back; one float16 result is a graph
    output. onnxruntime runs the original's float16 ops in float32, so outputs are compared to float16 precision."""
    f16 = TensorProto.FLOAT16
    nodes = [
        helper.make_node("Cast", ["w"], ["h"], to=f16),
        helper.make_node("Sqrt", ["h"], ["hs"]),
        helper.make_node("Cast", ["k"], ["kh"], to=f16),
        helper.make_node("Mul", ["hs", "kh"], ["hm"]),
        helper.make_node("Add", ["hm", "hs"], ["ha"]),
        helper.make_node("Exp", ["kh"], ["he"]),  # a float16 graph output
        helper.make_node("Cast", ["ha"], ["back"], to=F32),
        helper.make_node("Mul", ["x", "back"], ["y"]),
    ]
    w = np.float32([0.3, 1.7, 2.9, 5.5, 7.1, 11.3])
    m = make(nodes, [vi("x", [6])], [vi("y", [6]), vi("he", [6], f16)], [init("w", w), init("k", np.float32([0.7, 1.3, 0.4, 2.2, 0.9, 1.1]))])
    return fold_case(solution, m, [{"x": randn(115, 6)}], tolerance=(4e-3, 1e-3))


@probe(category="folding", check="folded_ok", weight=2, hints=["dtypes", "graph-output"])
def every_element_type_folds(solution: Any) -> dict[str, Any]:
    """Folded values of every element type onnxruntime moves around: uint8, int8, uint16, int16, uint32, int32, uint64,
    int64, float16, double and bool, through Cast, Reshape, Transpose, Concat, Gather and Mul (Or for bool); each
    type's result is a graph output (an initializer named like it), and all of them are added to the input."""
    types = [TensorProto.UINT8, TensorProto.INT8, TensorProto.UINT16, TensorProto.INT16, TensorProto.UINT32, TensorProto.INT32,
             TensorProto.UINT64, TensorProto.INT64, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.BOOL]  # fmt: skip
    nodes, outputs, acc = [], [vi("y", [4])], "x"
    for t in types:
        tag = helper.tensor_dtype_to_np_dtype(t).name
        nodes += [
            helper.make_node("Cast", ["w"], [f"c_{tag}"], to=t),
            helper.make_node("Reshape", [f"c_{tag}", "shape22"], [f"r_{tag}"]),
            helper.make_node("Transpose", [f"r_{tag}"], [f"t_{tag}"], perm=[1, 0]),
            helper.make_node("Reshape", [f"t_{tag}", "shape4"], [f"f_{tag}"]),
            helper.make_node("Concat", [f"f_{tag}", f"c_{tag}"], [f"cc_{tag}"], axis=0),
            helper.make_node("Gather", [f"cc_{tag}", "picks"], [f"g_{tag}"], axis=0),
            helper.make_node("Or" if t == TensorProto.BOOL else "Mul", [f"g_{tag}", f"c_{tag}"], [f"out_{tag}"]),
            helper.make_node("Cast", [f"out_{tag}"], [f"back_{tag}"], to=F32),
            helper.make_node("Add", [acc, f"back_{tag}"], [f"acc_{tag}"]),
        ]
        outputs.append(vi(f"out_{tag}", [4], t))
        acc = f"acc_{tag}"
    nodes.append(helper.make_node("Identity", [acc], ["y"]))
    inits = [init("w", np.float32([1.0, 0.0, 3.0, 2.0])), init("shape22", np.array([2, 2], np.int64)), init("shape4", np.array([4], np.int64)),
             init("picks", np.array([7, 0, 5, 2], np.int64))]
    m = make(nodes, [vi("x", [4])], outputs, inits)
    return fold_case(solution, m, [{"x": randn(116, 4)}])


@probe(category="folding", check="folded_ok", weight=2, hints=["dtypes", "graph-output"])
def empty_and_scalar_values_fold(solution: Any) -> dict[str, Any]:
    """Folded values with no elements (an empty Slice, the Shape of a scalar, an empty Range, a [0, 3] initializer
    concatenated) and of rank 0 (ConstantOfShape of an empty shape, Size, a full ReduceSum); an empty one and a
    scalar are graph outputs."""
    nodes = [
        helper.make_node("Slice", ["w", "two", "two"], ["empty"]),  # [0]
        helper.make_node("Shape", ["scalar"], ["no_dims"]),  # an empty int64 [0]
        helper.make_node("ConstantOfShape", ["no_dims"], ["zero"], value=numpy_helper.from_array(np.float32([0.5]))),  # rank 0
        helper.make_node("Size", ["empty"], ["n"]),  # 0, rank 0
        helper.make_node("Range", ["two_s", "two_s", "one_s"], ["none"]),  # [0] int64
        helper.make_node("Concat", ["e03", "row3"], ["one_row"], axis=0),  # [0, 3] + [1, 3]
        helper.make_node("ReduceSum", ["one_row"], ["row_sum"], keepdims=0),  # rank 0
        helper.make_node("Concat", ["empty", "w"], ["w_again"], axis=0),
        helper.make_node("Mul", ["empty", "zero"], ["empty_out"]),  # a graph output with no elements
        helper.make_node("Cast", ["n"], ["n_f"], to=F32),
        helper.make_node("Add", ["x", "w_again"], ["a"]),
        helper.make_node("Add", ["a", "zero"], ["b"]),
        helper.make_node("Add", ["b", "n_f"], ["c"]),
        helper.make_node("Mul", ["c", "row_sum"], ["y"]),
        helper.make_node("Concat", ["none", "one_l"], ["z"], axis=0),  # [1]
    ]
    inits = [init("w", randn(117, 3)), init("two", np.array([2], np.int64)), init("scalar", np.float32(4.0)),
             init("two_s", np.int64(2)), init("one_s", np.int64(1)), init("one_l", np.array([1], np.int64)),
             init("e03", np.zeros((0, 3), np.float32)), init("row3", np.float32([[0.5, 1.0, 1.5]]))]  # fmt: skip
    m = make(nodes, [vi("x", [3])], [vi("y", [3]), vi("empty_out", [0]), vi("row_sum", []), vi("z", [1], TensorProto.INT64)], inits)
    return fold_case(solution, m, [{"x": randn(118, 3)}])


@probe(category="folding", check="folded_ok", weight=2, hints=["opset"])
def default_domain_imported_as_ai_onnx(solution: Any) -> dict[str, Any]:
    """opset_import names the default domain "ai.onnx" (version 11, after com.microsoft): Unsqueeze, ReduceSum and
    Split of constants in their opset-11 forms fold at that opset, and the result keeps the import as it is."""
    nodes = [
        helper.make_node("Split", ["w"], ["w_top", "w_bottom"], axis=0, split=[1, 2]),
        helper.make_node("ReduceSum", ["w_bottom"], ["col"], axes=[0], keepdims=0),
        helper.make_node("Unsqueeze", ["col"], ["row"], axes=[0]),
        helper.make_node("Add", ["w_top", "row"], ["wr"]),
        helper.make_node("Gelu", ["x"], ["g"], domain="com.microsoft"),
        helper.make_node("Mul", ["g", "wr"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "g", [vi("x", [1, 4])], [vi("y", [1, 4])], initializer=[init("w", randn(119, 3, 4))])
    imports = [helper.make_opsetid("com.microsoft", 1), helper.make_opsetid("ai.onnx", 11)]
    m = helper.make_model(graph, opset_imports=imports, ir_version=10)
    return fold_case(solution, m, [{"x": randn(120, 1, 4)}])


def _opset_model(opset: int) -> onnx.ModelProto:
    """One model per opset 11 to 21, with the ops whose form or meaning changed over them written as that opset
    has them: axes of Unsqueeze, Squeeze, ReduceSum (inputs from 13) and ReduceMean/ReduceMax (from 18), Split's
    sizes (an input from 13), Softmax, LogSoftmax and Hardmax (one axis from 13), DequantizeLinear, Dropout (a ratio
    input and a mask from 12), Shape's start (from 15), Resize, Pad, Clip, TopK and ArgMax; all of constants, some
    read by nodes of the input."""
    def axes(op: str, data: str, ax: list[int], out: str, since: int, **attrs) -> onnx.NodeProto:
        if opset < since:
            return helper.make_node(op, [data], [out], axes=ax, **attrs)
        return helper.make_node(op, [data, f"axes_{out}"], [out], **attrs)

    axis_inits = {"u": [0], "rs": [0], "rm": [2], "rx": [1], "sq": [2], "usq": [2], "tk_sum": [2]}
    nodes = [
        axes("Unsqueeze", "w", [0], "u", 13),  # [1, 2, 3, 4]
        axes("ReduceSum", "u", [0], "rs", 13, keepdims=0),  # [2, 3, 4]
        axes("ReduceMean", "w", [2], "rm", 18, keepdims=1),  # [2, 3, 1]
        axes("ReduceMax", "w", [1], "rx", 18, keepdims=1),  # [2, 1, 4]
        helper.make_node("Split", ["w"], ["s0", "s1"], axis=2, split=[1, 3]) if opset < 13
        else helper.make_node("Split", ["w", "sizes"], ["s0", "s1"], axis=2),
        axes("Squeeze", "s0", [2], "sq", 13),  # [2, 3]
        axes("Unsqueeze", "sq", [2], "usq", 13),  # [2, 3, 1]
        helper.make_node("Concat", ["s1", "s0"], ["cat"], axis=2),
        helper.make_node("Add", ["rs", "rm"], ["a1"]),
        helper.make_node("Add", ["a1", "rx"], ["a2"]),
        helper.make_node("Mul", ["a2", "usq"], ["a3"]),
        helper.make_node("Sub", ["a3", "cat"], ["a4"]),
        helper.make_node("Softmax", ["w"], ["sm"]),
        helper.make_node("LogSoftmax", ["w"], ["lsm"], axis=0),
        helper.make_node("Hardmax", ["w"], ["hm"], axis=1),
        helper.make_node("Clip", ["w", "lo", "hi"], ["cl"]),
        helper.make_node("Pad", ["w", "pads"], ["pd"]),  # [2, 3, 6]
        helper.make_node("Slice", ["pd", "one", "five", "two"], ["pds"]),  # back to [2, 3, 4]
        helper.make_node("TopK", ["w", "k2"], ["tk", "tk_i"], axis=-1),
        axes("ReduceSum", "tk", [2], "tk_sum", 13, keepdims=1),  # [2, 3, 1]
        helper.make_node("ArgMax", ["w"], ["am"], axis=2, keepdims=1),
        helper.make_node("Cast", ["am"], ["am_f"], to=F32),
        helper.make_node("DequantizeLinear", ["q", "q_scale", "q_zero"], ["dq"]),
        helper.make_node("Resize", ["w", "roi", "scales"], ["rz"], mode="nearest"),  # [2, 3, 8]
        helper.make_node("Slice", ["rz", "zero", "eight", "two", "two"], ["rzs"]),  # every other: [2, 3, 4]
        helper.make_node("Shape", ["w"], ["dims"], start=2) if opset >= 15 else helper.make_node("Shape", ["w"], ["dims"]),
        helper.make_node("ReduceProd", ["dims"], ["dims_p"], keepdims=1),  # no axes: all of them, at every opset
        helper.make_node("Cast", ["dims_p"], ["dims_f"], to=F32),
    ]
    # ops ReferenceEvaluator (onnx 1.23) gets wrong or cannot run, where a folded value is onnxruntime's: BatchNormalization
    # before 14, Resize (linear, align_corners), ReduceSumSquare of int32 (the evaluator gives int64),
    # ReduceLogSumExp of int32, Gelu (20, 21) and GroupNormalization (21)
    nodes += [
        helper.make_node("BatchNormalization", ["w", "bn_s", "bn_b", "bn_m", "bn_v"], ["bn"], epsilon=1e-3),
        helper.make_node("Resize", ["w", "roi", "scales_lin"], ["rl"], mode="linear", coordinate_transformation_mode="align_corners"),
        helper.make_node("Slice", ["rl", "zero", "four", "two"], ["rls"]),  # [2, 3, 6] -> [2, 3, 4]
        helper.make_node("ReduceSumSquare", ["wi"], ["rss"], keepdims=1),  # int32 [1, 1]
        helper.make_node("ReduceLogSumExp", ["wi"], ["rlse"], keepdims=1),
        helper.make_node("Add", ["rss", "rlse"], ["ri"]),
        helper.make_node("Cast", ["x"], ["xi"], to=TensorProto.INT32),  # of the input: an int32 reader of the folded ri
        helper.make_node("Add", ["xi", "ri"], ["xri"]),
        helper.make_node("Cast", ["xri"], ["xrf"], to=F32),
    ]
    extra = ["bn", "rls", "xrf"]
    if opset >= 20:
        nodes.append(helper.make_node("Gelu", ["w"], ["ge"]))
        extra.append("ge")
    if opset >= 21:
        nodes.append(helper.make_node("GroupNormalization", ["w", "bn_s", "bn_b"], ["gn"], num_groups=3))
        extra.append("gn")
    if opset >= 12:
        nodes += [helper.make_node("Dropout", ["w", "ratio"], ["dr", "dr_mask"]), helper.make_node("Cast", ["dr_mask"], ["dr_m"], to=F32),
                  helper.make_node("Mul", ["dr", "dr_m"], ["drop"])]  # fmt: skip
    else:
        nodes += [helper.make_node("Dropout", ["w"], ["drop"], ratio=0.5)]  # opset 11: no mask (onnxruntime's differs)
    terms = ["a4", "sm", "lsm", "hm", "cl", "pds", "tk_sum", "am_f", "dq", "rzs", "drop", *extra]
    acc = "x"
    for k, t in enumerate(terms):
        nodes.append(helper.make_node("Add" if k % 2 == 0 else "Sub", [acc, t], [f"acc{k}"]))
        acc = f"acc{k}"
    nodes += [helper.make_node("Div", [acc, "dims_f"], ["y0"]), helper.make_node("Softmax", ["x"], ["x_sm"]),  # of the input: stays
              helper.make_node("Add", ["y0", "x_sm"], ["y"])]  # fmt: skip
    rng = np.random.default_rng(130 + opset)
    inits = [init("w", randn(120 + opset, 2, 3, 4)), init("sizes", np.array([1, 3], np.int64)), init("lo", np.float32(-0.5)),
             init("hi", np.float32(0.8)), init("pads", np.array([0, 0, 1, 0, 0, 1], np.int64)), init("one", np.array([1], np.int64)),
             init("five", np.array([5], np.int64)), init("two", np.array([2], np.int64)), init("k2", np.array([2], np.int64)),
             init("q", rng.integers(-50, 50, (2, 3, 4)).astype(np.int8)), init("q_scale", np.float32(0.02)), init("q_zero", np.int8(3)),
             init("roi", np.zeros(0, np.float32)), init("scales", np.float32([1, 1, 2])), init("zero", np.array([0], np.int64)),
             init("eight", np.array([8], np.int64)), init("ratio", np.float32(0.5)), init("bn_s", np.float32([1.0, 2.0, 0.5])),
             init("bn_b", np.float32([0.0, 0.1, -0.2])), init("bn_m", np.float32([0.1, 0.0, 0.3])), init("bn_v", np.float32([1.0, 2.0, 0.5])),
             init("scales_lin", np.float32([1, 1, 1.7])), init("four", np.array([4], np.int64)),
             init("wi", np.array([[1, -2, 3], [4, 5, -6]], np.int32))]  # fmt: skip
    if opset >= 13:
        inits += [init(f"axes_{n}", np.array(a, np.int64)) for n, a in axis_inits.items() if n in ("u", "rs", "sq", "usq", "tk_sum")]
    if opset >= 18:
        inits += [init(f"axes_{n}", np.array(a, np.int64)) for n, a in axis_inits.items() if n in ("rm", "rx")]
    return make(nodes, [vi("x", [2, 3, 4])], [vi("y", [2, 3, 4])], inits, opset=opset)


def _fold_record(solution: Any, model: onnx.ModelProto, feeds: list[dict[str, np.ndarray]]) -> str:
    """One hand-made model judged like a generated one (see _case): what went wrong, or the folded model's counts."""
    onnx.checker.check_model(model, full_check=True)  # the probe's own model must be valid
    original = [run(model, f) for f in feeds]
    try:
        new = solution.fold_constants(copy.deepcopy(model))
    except Exception:  # noqa: BLE001
        return "raises"
    verdict = _judge(model, new, feeds, original, 1)
    if not verdict.startswith("ok"):
        return verdict
    try:
        again = solution.fold_constants(copy.deepcopy(new))
    except Exception:  # noqa: BLE001
        return "second fold raises"
    return verdict if _judge(model, again, feeds, original, 1) == verdict else "not idempotent"


@probe(category="folding", check="generated_ok", weight=2, timeout=60, hints=["opset"])
def opsets_11_to_21(solution: Any) -> list[str]:
    """The same constant subgraph at each opset from 11 to 21, its version-dependent ops written as that opset has
    them (axes and sizes as attributes or inputs, Softmax's 2-D coercion before 13, Dropout's ratio and mask, Shape's
    start), folded at the model's own opset."""
    return [_fold_record(solution, _opset_model(v), [{"x": randn(140 + v, 2, 3, 4)}]) for v in range(11, 22)]


@probe(category="cleanup", check="folded_ok", weight=1, hints=["identity"])
def identity_of_a_graph_output(solution: Any) -> dict[str, Any]:
    """Identity nodes whose input is a graph output and whose output is not: they go, and their readers (a node, and a
    body) read the graph output; one whose output is another graph output stays."""
    then_g = helper.make_graph([helper.make_node("Neg", ["r_seen"], ["o1"])], "then", [], [vi("o1", [3])])
    else_g = helper.make_graph([helper.make_node("Abs", ["x"], ["o2"])], "else", [], [vi("o2", [3])])
    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),  # a graph output
        helper.make_node("Identity", ["r"], ["r_alias"]),  # removed: Neg reads r
        helper.make_node("Neg", ["r_alias"], ["z"]),
        helper.make_node("Identity", ["r"], ["r_seen"]),  # removed: the then branch reads r
        helper.make_node("If", ["c"], ["b"], then_branch=then_g, else_branch=else_g),
        helper.make_node("Identity", ["r"], ["r_too"]),  # a second output name for r: stays
    ]
    m = make(nodes, [vi("x", [3]), vi("c", [], TensorProto.BOOL)], [vi("r", [3]), vi("z", [3]), vi("b", [3]), vi("r_too", [3])])
    x = randn(121, 3)
    return fold_case(solution, m, [{"x": x, "c": np.array(c)} for c in (True, False)])


@probe(category="semantics", check="folded_ok", weight=2, hints=["subgraphs"])
def control_flow_of_constants_stays(solution: Any) -> dict[str, Any]:
    """An If with a constant condition whose branches read only constants, a Loop with a constant trip count carrying a
    constant, and a Scan over a constant: every input they list and every outer name their bodies read is constant,
    but nodes that hold a body are never folded; the constants they read stay as initializers."""
    then_g = helper.make_graph([helper.make_node("Mul", ["k", "w"], ["t1"])], "then", [], [vi("t1", [3])])
    else_g = helper.make_graph([helper.make_node("Sub", ["w", "k"], ["e1"])], "else", [], [vi("e1", [3])])
    loop_body = helper.make_graph(
        [helper.make_node("Identity", ["cin"], ["cout"]), helper.make_node("Add", ["v", "k"], ["v1"]),
         helper.make_node("Tanh", ["v1"], ["v_next"])],
        "loop_body", [vi("i", [], TensorProto.INT64), vi("cin", [], TensorProto.BOOL), vi("v", [3])],
        [vi("cout", [], TensorProto.BOOL), vi("v_next", [3])],
    )  # fmt: skip
    scan_body = helper.make_graph([helper.make_node("Mul", ["row", "w"], ["row_out"])], "scan_body", [vi("row", [3])], [vi("row_out", [3])])
    nodes = [
        helper.make_node("Mul", ["w", "w"], ["k"]),  # folded: read by the bodies
        helper.make_node("Not", ["flag"], ["cond"]),  # folded: the If's condition is constant
        helper.make_node("If", ["cond"], ["picked"], then_branch=then_g, else_branch=else_g),
        helper.make_node("Loop", ["trips", "", "w"], ["looped"], body=loop_body),
        helper.make_node("Scan", ["rows"], ["scanned"], body=scan_body, num_scan_inputs=1),
        helper.make_node("Add", ["x", "picked"], ["a"]),
        helper.make_node("Add", ["a", "looped"], ["y"]),
        helper.make_node("Add", ["x", "scanned"], ["z"]),
    ]
    inits = [init("w", randn(122, 3)), init("flag", np.array(False)), init("trips", np.int64(2)), init("rows", randn(123, 2, 3))]
    m = make(nodes, [vi("x", [3])], [vi("y", [3]), vi("z", [2, 3])], inits)
    return fold_case(solution, m, [{"x": randn(124, 3)}])


# ---------------------------------------------------------------- red team round 5
# No rewrite but folding, Identity removal and dead code: nodes of an input-dependent tensor that an optimizer would
# call no-ops or fuse (onnxoptimizer's eliminate_nop_cast, eliminate_nop_concat, eliminate_nop_pad,
# eliminate_nop_expand, eliminate_nop_reshape, eliminate_nop_transpose, eliminate_nop_dropout, eliminate_nop_flatten,
# eliminate_nop_split, eliminate_consecutive_idempotent_ops, fuse_consecutive_transposes,
# fuse_consecutive_unsqueezes, fuse_matmul_add_bias_into_gemm, a Slice of everything, x*1 and x+0) stay. The ops
# ReferenceEvaluator gets wrong or cannot run are in _opset_model, string_constants_fold and narrow_float_types_fold.


@probe(category="semantics", check="folded_ok", weight=2, hints=["no-rewrite"])
def no_op_looking_nodes_of_the_input_stay(solution: Any) -> dict[str, Any]:
    """Nodes of the input that change nothing, or that an optimizer would fuse, but are not Identity: a Cast to the
    type its input already has (a graph input, an intermediate typed in value_info, one typed by inference only),
    one-input Concat, Sum, Max, Min and Mean, a Pad by zeros, an Expand and a Reshape to the shape the tensor has, a
    Transpose with the identity perm, two Transposes in a row that undo each other, Mul by 1, Add of 0, Dropout
    without training_mode, Squeeze of an Unsqueeze, Relu of a Relu, a Flatten and a one-output Split that keep the
    shape, two Unsqueezes in a row, a Slice of everything, a MatMul and an Add of a bias (a Gemm); all stay."""
    nodes = [
        helper.make_node("Cast", ["x"], ["xc"], to=F32),  # x is declared float
        helper.make_node("Relu", ["xc"], ["r"]),
        helper.make_node("Cast", ["r"], ["rc"], to=F32),  # r is float by inference only
        helper.make_node("Concat", ["rc"], ["cat"], axis=0),
        helper.make_node("Sum", ["cat"], ["sm"]),
        helper.make_node("Max", ["sm"], ["mx"]),
        helper.make_node("Min", ["mx"], ["mn"]),
        helper.make_node("Cast", ["mn"], ["mnc"], to=F32),  # mn is declared float in value_info
        helper.make_node("Mean", ["mnc"], ["me"]),
        helper.make_node("Pad", ["me", "zero_pads"], ["pd"]),
        helper.make_node("Expand", ["pd", "shape23"], ["ex"]),
        helper.make_node("Reshape", ["ex", "shape23"], ["rs"]),
        helper.make_node("Transpose", ["rs"], ["tid"], perm=[0, 1]),
        helper.make_node("Transpose", ["tid"], ["t1"], perm=[1, 0]),
        helper.make_node("Transpose", ["t1"], ["t2"], perm=[1, 0]),
        helper.make_node("Mul", ["t2", "one"], ["m1"]),
        helper.make_node("Add", ["m1", "nil"], ["a0"]),
        helper.make_node("Dropout", ["a0"], ["dr"]),
        helper.make_node("Unsqueeze", ["dr", "axis0"], ["us"]),
        helper.make_node("Squeeze", ["us", "axis0"], ["sq"]),
        helper.make_node("Relu", ["sq"], ["r1"]),
        helper.make_node("Relu", ["r1"], ["r2"]),  # idempotent: Relu(Relu(t)) is Relu(t)
        helper.make_node("Flatten", ["r2"], ["fl"], axis=1),  # [2, 3] stays [2, 3]
        helper.make_node("Split", ["fl"], ["sp"], axis=0, num_outputs=1),
        helper.make_node("Unsqueeze", ["sp", "axis0"], ["u1"]),
        helper.make_node("Unsqueeze", ["u1", "axis0"], ["u2"]),  # two Unsqueezes an optimizer would fuse
        helper.make_node("Squeeze", ["u2", "axes01"], ["sq2"]),
        helper.make_node("Slice", ["sq2", "axis0", "to_end", "axis0"], ["sl"]),  # every row (axis0 is [0], also the start)
        helper.make_node("MatMul", ["sl", "w33"], ["mm"]),
        helper.make_node("Add", ["mm", "bias3"], ["g"]),  # MatMul + Add of a bias: what a Gemm fusion takes
        helper.make_node("Neg", ["g"], ["y"]),
    ]
    inits = [init("zero_pads", np.zeros(4, np.int64)), init("shape23", np.array([2, 3], np.int64)), init("one", np.float32(1.0)),
             init("nil", np.float32(0.0)), init("axis0", np.array([0], np.int64)), init("axes01", np.array([0, 1], np.int64)),
             init("to_end", np.array([2**63 - 1], np.int64)), init("w33", randn(151, 3, 3)), init("bias3", randn(152, 3))]  # fmt: skip
    m = make(nodes, [vi("x", [2, 3])], [vi("y", [2, 3])], inits)
    m.graph.value_info.append(vi("mn", [2, 3]))
    return fold_case(solution, m, [{"x": randn(150, 2, 3)}])


# ---------------------------------------------------------------- red team round 6
# Model-local functions come back exactly as they are (their bodies were compared with nothing: a pass that removed
# their Identity and dead nodes, or folded their Constant products, scored 100); a node that is dead keeps nothing
# alive, whatever its bodies read; and a call depends on the model it is given only, however alike the models folded
# before it in the same process are.


class _Kept:
    """Stands for the solution in fold_case and keeps what ``fold_constants`` returned."""

    def __init__(self, solution: Any) -> None:
        self.solution = solution
        self.result: Any = None

    def fold_constants(self, model: onnx.ModelProto) -> Any:
        self.result = self.solution.fold_constants(model)
        return self.result


def _function_digests(model: Any) -> list[str] | str:
    """One digest per model-local function, in order: its domain, name and body, node for node, byte for byte."""
    if not isinstance(model, onnx.ModelProto):
        return "no model"
    return [f"{f.domain}.{f.name}:" + hashlib.sha256(f.SerializeToString(deterministic=True)).hexdigest()[:16] for f in model.functions]


def _function_edit(before: onnx.FunctionProto, after: onnx.FunctionProto) -> str:
    """How a function body changed, told by which op writes each tensor: "replaced" (a tensor now written by another op,
    or a new one: folded into Constants), "removed" (only fewer nodes), "changed" (anything else), or "same"."""
    was = {o: n.op_type for n in before.node for o in n.output}
    now = {o: n.op_type for n in after.node for o in n.output}
    if any(was.get(o) != op for o, op in now.items()):
        return "replaced"
    if len(now) < len(was):
        return "removed"
    return "same" if after.SerializeToString(deterministic=True) == before.SerializeToString(deterministic=True) else "changed"


def _fold_with_functions(solution: Any, model: onnx.ModelProto, feeds: list[dict[str, np.ndarray]]) -> dict[str, Any]:
    """fold_case, and the folded model's functions: a digest of each, how many are not the original's and how the
    first of those changed (for the diagnosis only: the check compares the digests with the reference's)."""
    kept = _Kept(solution)
    obs = fold_case(kept, model, feeds)
    if "error" not in obs:
        found = _function_digests(kept.result)
        obs["functions"] = found
        obs["functions_not_original"] = sum((Counter(found) - Counter(_function_digests(model))).values()) + \
            max(0, len(model.functions) - len(found))
        if isinstance(kept.result, onnx.ModelProto) and len(kept.result.functions) == len(model.functions):
            edits = [_function_edit(a, b) for a, b in zip(model.functions, kept.result.functions, strict=True)]
            obs["function_edit"] = next((e for e in ("replaced", "removed", "changed") if e in edits), "same")
    return obs


def _local(name: str, inputs: list[str], outputs: list[str], nodes: list[onnx.NodeProto], opset: int, domain: str = "local",
           attributes: tuple[str, ...] = ()) -> onnx.FunctionProto:
    imports = [helper.make_opsetid("", opset), helper.make_opsetid("local", 1), helper.make_opsetid("fns.extra", 1)]
    return helper.make_function(domain, name, inputs, outputs, nodes, imports, attributes=list(attributes))


@probe(category="semantics", check="folded_functions_ok", weight=2, hints=["domains", "functions"])
def model_local_function_bodies_stay(solution: Any) -> dict[str, Any]:
    """Model-local functions whose bodies hold Identity nodes, dead nodes, Constant nodes multiplied together, a call
    of another local function and an attribute reference, one called only by a dead node and one called by nothing:
    every function comes back exactly as it was."""
    op = 18
    tidy = _local("Tidy", ["a"], ["b"], [
        helper.make_node("Identity", ["a"], ["i"]),
        helper.make_node("Neg", ["a"], ["unused"]),  # dead inside the function
        helper.make_node("Relu", ["i"], ["b"]),
    ], op)
    scaled = _local("Scaled", ["a"], ["c"], [
        const("k2", np.float32(2.0)),
        const("k3", np.float32(3.0)),
        helper.make_node("Mul", ["k2", "k3"], ["k6"]),  # a product of constants, never folded here
        const("k7", np.float32(7.0)),  # dead
        helper.make_node("Mul", ["a", "k6"], ["c"]),
    ], op)
    chain = _local("Chain", ["a"], ["d"], [
        helper.make_node("Tidy", ["a"], ["t"], domain="local"),
        helper.make_node("Scaled", ["t"], ["s"], domain="local"),
        helper.make_node("Identity", ["s"], ["d"]),  # an Identity into the function's output
    ], op)
    alpha = helper.make_attribute_ref("value_float", onnx.AttributeProto.FLOAT, ref_attr_name="alpha")
    k_alpha = helper.make_node("Constant", [], ["k"])
    k_alpha.attribute.append(alpha)
    scale_by = _local("ScaleBy", ["a"], ["e"], [k_alpha, helper.make_node("Identity", ["k"], ["k_copy"]),
                                                helper.make_node("Mul", ["a", "k_copy"], ["e"])], op, attributes=("alpha",))
    unused = _local("Unused", ["a"], ["b"], [helper.make_node("Identity", ["a"], ["b"])], op)
    dead_only = _local("DeadOnly", ["a"], ["b"], [const("one", np.float32(1.0)), helper.make_node("Identity", ["one"], ["one_c"]),
                                                  helper.make_node("Add", ["a", "one_c"], ["b"])], op, domain="fns.extra")
    nodes = [
        const("two", np.float32(2.0)),
        helper.make_node("Mul", ["w", "two"], ["w2"]),  # folded
        helper.make_node("Tidy", ["x"], ["t"], domain="local"),
        helper.make_node("Chain", ["t"], ["u"], domain="local"),
        helper.make_node("ScaleBy", ["u"], ["v"], domain="local", alpha=0.5),
        helper.make_node("Identity", ["v"], ["v_id"]),  # removed
        helper.make_node("Add", ["v_id", "w2"], ["y"]),
        helper.make_node("DeadOnly", ["x"], ["gone"], domain="fns.extra"),  # dead
    ]
    graph = helper.make_graph(nodes, "g", [vi("x", [3])], [vi("y", [3])], initializer=[init("w", randn(160, 3))])
    imports = [helper.make_opsetid("", op), helper.make_opsetid("local", 1), helper.make_opsetid("fns.extra", 1)]
    m = helper.make_model(graph, opset_imports=imports, ir_version=10, functions=[tidy, scaled, chain, scale_by, unused, dead_only])
    return _fold_with_functions(solution, m, [{"x": randn(161, 3)}, {"x": -randn(162, 3)}])


@probe(category="cleanup", check="folded_functions_ok", weight=2, hints=["domains", "functions", "identity"])
def function_bodies_named_like_the_main_graph(solution: Any) -> dict[str, Any]:
    """Functions whose tensors are named like main-graph tensors that the rules rename, fold or remove, one holding an
    If whose branches read the function's own names, one called only by dead nodes, at opset 13: each function comes
    back exactly as it was."""
    op = 13
    then_g = helper.make_graph([helper.make_node("Identity", ["r"], ["r_then"])], "then", [], [vi("r_then", [2, 3])])
    else_g = helper.make_graph([helper.make_node("Neg", ["k"], ["r_else"])], "else", [], [vi("r_else", [2, 3])])
    body = _local("Pick", ["a", "c"], ["out"], [
        const("k", np.full((2, 3), 4.0, np.float32)),  # named like a main-graph Constant that folds
        helper.make_node("Relu", ["a"], ["r"]),  # r: renamed to y in the main graph
        helper.make_node("Identity", ["r"], ["y"]),
        helper.make_node("If", ["c"], ["picked"], then_branch=then_g, else_branch=else_g),
        helper.make_node("Add", ["picked", "y"], ["out"]),
        helper.make_node("Mul", ["k", "k"], ["dead"]),  # named like a dead main-graph tensor
    ], op)
    shift = _local("Shift", ["a"], ["b"], [const("kk", np.full((2, 3), 0.25, np.float32)), helper.make_node("Identity", ["kk"], ["w_s"]),
                                          helper.make_node("Sub", ["a", "w_s"], ["b"])], op)
    spare = _local("Spare", ["t"], ["y"], [helper.make_node("Identity", ["t"], ["k"]), helper.make_node("Abs", ["k"], ["y"])], op,
                   domain="fns.extra")  # called only by a dead node
    nodes = [
        const("k", np.full((2, 3), 3.0, np.float32)),
        helper.make_node("Mul", ["w", "k"], ["w_s"]),  # folded
        helper.make_node("Pick", ["x", "c"], ["p"], domain="local"),
        helper.make_node("Shift", ["p"], ["q"], domain="local"),
        helper.make_node("Add", ["q", "w_s"], ["r"]),
        helper.make_node("Identity", ["r"], ["y"]),  # r is renamed to y
        helper.make_node("Mul", ["x", "x"], ["dead"]),
        helper.make_node("Shift", ["dead"], ["dead2"], domain="local"),
        helper.make_node("Spare", ["dead2"], ["dead3"], domain="fns.extra"),
    ]
    graph = helper.make_graph(nodes, "g", [vi("x", [2, 3]), vi("c", [], TensorProto.BOOL)], [vi("y", [2, 3])],
                              initializer=[init("w", randn(163, 2, 3))])
    imports = [helper.make_opsetid("fns.extra", 1), helper.make_opsetid("local", 1), helper.make_opsetid("", op)]
    m = helper.make_model(graph, opset_imports=imports, ir_version=10, functions=[shift, body, spare])
    x = randn(164, 2, 3)
    return _fold_with_functions(solution, m, [{"x": x, "c": np.array(True)}, {"x": x, "c": np.array(False)}])


@probe(category="cleanup", check="folded_ok", weight=2, hints=["dead-code", "subgraphs"])
def dead_control_flow_keeps_nothing_alive(solution: Any) -> dict[str, Any]:
    """Dead If, Loop and Scan nodes (one nested in a dead If's branch, one read only by another dead node) whose bodies
    read input-dependent tensors and initializers nothing else reads: they go, and so does all they read; a live If's
    reads stay."""
    then_g = helper.make_graph([helper.make_node("Add", ["rx", "cw"], ["t_out"])], "then", [], [vi("t_out", [3])])
    else_g = helper.make_graph([helper.make_node("Neg", ["cw"], ["e_out"])], "else", [], [vi("e_out", [3])])
    inner_then = helper.make_graph([helper.make_node("Mul", ["tx", "deep_w"], ["it_out"])], "inner_then", [], [vi("it_out", [3])])
    inner_else = helper.make_graph([helper.make_node("Abs", ["tx"], ["ie_out"])], "inner_else", [], [vi("ie_out", [3])])
    outer_then = helper.make_graph([helper.make_node("If", ["c"], ["nested"], then_branch=inner_then, else_branch=inner_else)],
                                   "outer_then", [], [vi("nested", [3])])
    outer_else = helper.make_graph([helper.make_node("Identity", ["c3"], ["oe_out"])], "outer_else", [], [vi("oe_out", [3])])
    loop_body = helper.make_graph(
        [helper.make_node("Identity", ["cin"], ["cout"]), helper.make_node("Add", ["v", "ex"], ["v1"]),
         helper.make_node("Mul", ["v1", "cw2"], ["v_next"])],
        "loop_body", [vi("i", [], TensorProto.INT64), vi("cin", [], TensorProto.BOOL), vi("v", [3])],
        [vi("cout", [], TensorProto.BOOL), vi("v_next", [3])],
    )  # fmt: skip
    scan_body = helper.make_graph([helper.make_node("Add", ["row", "sx"], ["row_out"])], "scan_body", [vi("row", [3])], [vi("row_out", [3])])
    live_then = helper.make_graph([helper.make_node("Mul", ["lx", "lw"], ["l_out"])], "live_then", [], [vi("l_out", [3])])
    live_else = helper.make_graph([helper.make_node("Neg", ["lx"], ["l_else"])], "live_else", [], [vi("l_else", [3])])
    nodes = [
        helper.make_node("Relu", ["x"], ["rx"]),  # read only by the dead If's then branch
        helper.make_node("Exp", ["x"], ["ex"]),  # read only by the dead Loop's body
        helper.make_node("Sin", ["x"], ["sx"]),  # read only by the dead Scan's body
        helper.make_node("Tanh", ["x"], ["tx"]),  # read only by an If nested in a dead If's branch
        helper.make_node("Cos", ["x"], ["c3"]),  # read only by that dead If's other branch
        helper.make_node("Mul", ["cw", "cw"], ["cw2"]),  # folded, read only by the dead Loop's body
        helper.make_node("Softsign", ["x"], ["lx"]),  # read by a live If's branches: stays
        helper.make_node("If", ["c"], ["dead_if"], then_branch=then_g, else_branch=else_g),
        helper.make_node("Loop", ["trips", "", "x"], ["dead_loop"], body=loop_body),
        helper.make_node("Scan", ["xs"], ["dead_scan"], body=scan_body, num_scan_inputs=1),
        helper.make_node("If", ["c"], ["dead_outer"], then_branch=outer_then, else_branch=outer_else),
        helper.make_node("Neg", ["dead_outer"], ["dead_after"]),  # dead: so the If it reads is dead too
        helper.make_node("If", ["c"], ["live_if"], then_branch=live_then, else_branch=live_else),
        helper.make_node("Sigmoid", ["x"], ["s"]),
        helper.make_node("Add", ["s", "b"], ["sb"]),
        helper.make_node("Add", ["sb", "live_if"], ["y"]),
    ]
    inits = [init("cw", randn(170, 3)), init("deep_w", randn(171, 3)), init("trips", np.int64(2)), init("b", randn(172, 3)),
             init("lw", randn(173, 3))]
    m = make(nodes, [vi("x", [3]), vi("c", [], TensorProto.BOOL), vi("xs", [2, 3])], [vi("y", [3])], inits)
    x, xs = randn(174, 3), randn(175, 2, 3)
    return fold_case(solution, m, [{"x": x, "c": np.array(c), "xs": xs} for c in (True, False)])


class _OneObject:
    """Stands for the solution in fold_case: hands it every model as one and the same ModelProto object, its contents
    replaced in place (the same id(), the same memory) before each call."""

    def __init__(self, solution: Any) -> None:
        self.solution = solution
        self.held = onnx.ModelProto()

    def fold_constants(self, model: onnx.ModelProto) -> Any:
        self.held.CopyFrom(model)
        return self.solution.fold_constants(self.held)


def _spelled_alike(w: np.ndarray, v: np.ndarray, k: float, opset: int = 18) -> onnx.ModelProto:
    """One spelling (names, shapes, dtypes, attributes, node order) for several models: only the values differ."""
    nodes = [
        const("k", np.float32(k)),
        helper.make_node("Mul", ["w", "k"], ["wk"]),
        helper.make_node("Add", ["wk", "v"], ["wv"]),
        helper.make_node("Transpose", ["wv"], ["wt"], perm=[1, 0]),
        helper.make_node("Reshape", ["wt", "shape"], ["wr"]),
        helper.make_node("Identity", ["wr"], ["wr_id"]),
        helper.make_node("Add", ["x", "wr_id"], ["y"]),
    ]
    inits = [init("w", w), init("v", v), init("shape", np.array([4], np.int64))]
    return make(nodes, [vi("x", [4])], [vi("y", [4])], inits, opset=opset)


@probe(category="semantics", check="folded_each_ok", weight=2, hints=["no-state"])
def models_spelled_alike_fold_apart(solution: Any) -> dict[str, Any]:
    """Models spelled alike node for node (names, shapes, dtypes, attributes), folded one after another in one process,
    some handed over as one object changed in place: each is folded from its own values (one initializer permuted with
    its sum and first element kept, the other changed while the first stays, then the first values again)."""
    w1 = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    w2 = np.array([[1.0, 3.0], [2.0, 4.0]], np.float32)  # w1 permuted: the same shape, dtype, sum, first and last element
    v1 = np.array([[0.5, -1.0], [2.0, 0.25]], np.float32)
    v2 = np.array([[0.5, 2.0], [-1.0, 0.25]], np.float32)
    feeds = [{"x": randn(180, 4)}]
    calls = [fold_case(solution, _spelled_alike(w1, v1, 2.0), feeds), fold_case(solution, _spelled_alike(w2, v1, 2.0), feeds)]
    one = _OneObject(solution)
    for w, v, k in ((w1, v2, 2.0), (w2, v2, 2.0), (w1, v1, 2.0), (w1, v1, -2.0)):
        calls.append(fold_case(one, _spelled_alike(w, v, k), feeds))
    calls.append(fold_case(solution, _spelled_alike(w2, v2, 2.0, opset=17), feeds))
    return {"calls": calls}
