"""Hidden probes for implement-engine-execute: they make the score.

Each probe builds a graph with the framework in the candidate's solution.py
and observes ``.grad`` values, raised exception names and flags. The
expected observations are the reference's; float values are float64 and
compared with rtol=1e-9, atol=1e-12 (different, equally valid orders of
summation stay far inside that).
"""

from __future__ import annotations

import gc
import itertools
import sys
import threading
import weakref
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
from probekit import probe, raises


def _grad(v: Any) -> np.ndarray | None:
    """The values of ``v.grad`` (a copy), or None when no gradient was accumulated."""
    return None if v.grad is None else np.array(v.grad.data, dtype=np.float64)


def _call_node(node: Any, grad: Any) -> Any:
    """Call ``node`` directly with one gradient: the name of what it raised, or the arrays it returned.

    A node that saved Variables raises RuntimeError once released, so this
    tells a released node from a kept one without running any engine.
    """
    try:
        grads = node([grad])
    except Exception as exc:  # noqa: BLE001 - the exception's name is the observation
        return type(exc).__name__
    return [None if g is None else np.array(g.data, dtype=np.float64) for g in grads]


def _random_graph(solution: ModuleType, seed: int, n_ops: int) -> tuple[list[Any], Any]:
    """A random DAG of elementwise ops over three leaves and one constant.

    Operands are drawn mostly from the newest values, so subexpressions are
    shared many times and paths of very different lengths meet. Returns
    (leaves, scalar loss).
    """
    rng = np.random.default_rng(seed)
    V = solution.Variable
    leaves = [V(rng.normal(size=4), requires_grad=True) for _ in range(3)]
    pool = [*leaves, V(rng.normal(size=4))]

    def pick() -> Any:
        back = min(int(rng.geometric(0.35)) - 1, len(pool) - 1)
        return pool[len(pool) - 1 - back]

    for _ in range(n_ops):
        kind = int(rng.integers(7))
        a, b = pick(), pick()
        if kind == 0:
            v = a + b
        elif kind == 1:
            v = a - b * 0.5
        elif kind == 2:
            v = (a * b).tanh()  # tanh keeps repeated products bounded
        elif kind == 3:
            v = a.sin()
        elif kind == 4:
            v = a.cos() * 0.7
        elif kind == 5:
            v = a * b.tanh().exp()
        else:
            v = -a
        pool.append(v)
    # The product of the leaves keeps every leaf (and the loss) in the graph.
    loss = (pool[-1] * pool[-2]).sum() + pool[-3].sum() + (leaves[0] * leaves[1] * leaves[2]).sum() * 0.1
    return leaves, loss


# ---------------------------------------------------------------- correctness


@probe(category="correctness", weight=2, rtol=1e-9, atol=1e-12, hints=["topo-order", "accumulate"])
def diamond_with_unequal_paths(solution: ModuleType) -> dict[str, Any]:
    """Two paths of very different lengths from one node meet again."""
    x = solution.Variable([0.3, -0.8, 1.7], requires_grad=True)
    a = x * 2.0
    long_path = a.sin().cos().tanh().sin().exp()
    f = (a * long_path + a).sum()
    f.backward()
    return {"x.grad": _grad(x)}


@probe(category="correctness", weight=2, rtol=1e-9, atol=1e-12, hints=["topo-order", "accumulate"])
def random_shared_subexpressions(solution: ModuleType) -> dict[str, Any]:
    """Random graphs in which subexpressions are reused many times."""
    out = {}
    for seed in (11, 23, 47):
        leaves, loss = _random_graph(solution, seed, n_ops=60)
        loss.backward()
        out[f"seed {seed}"] = [_grad(leaf) for leaf in leaves]
    return out


@probe(category="correctness", rtol=1e-9, atol=1e-12, hints=["input-buffer", "accumulate"])
def split_with_reused_and_unused_pieces(solution: ModuleType) -> dict[str, Any]:
    """A multi-output node: one output used twice, one never used."""
    x = solution.Variable(np.linspace(-1.0, 1.5, 6).reshape(6, 1) * np.array([[1.0, -2.0]]), requires_grad=True)
    a, _unused, c = x.split([2, 1, 3])
    f = (a * a).sum() + (a.sin() * 3.0).sum() + (c.exp() * c).sum()
    f.backward()
    unused_middle = _grad(x)
    # The same node with every output used, through a matrix product.
    y = solution.Variable([[0.5, -1.0], [2.0, 0.25], [1.5, 1.0], [-0.5, 0.75]], requires_grad=True)
    w = solution.Variable([[1.0, 0.5, -1.0], [0.25, 2.0, 0.0]], requires_grad=True)
    p, q = y.chunk(2)
    g = ((p @ w).tanh() * (q @ w)).sum() + (q * p).sum()
    g.backward()
    return {"x.grad": unused_middle, "y.grad": _grad(y), "w.grad": _grad(w)}


@probe(category="correctness", rtol=1e-9, atol=1e-12, hints=["none-edges", "topo-order"])
def constants_get_no_gradient(solution: ModuleType) -> dict[str, Any]:
    """Inputs that do not require grad get none, and the others are still right."""
    V = solution.Variable
    x = V([0.2, -1.4, 0.6], requires_grad=True)
    c = V([1.5, 2.0, -3.0])
    k = V([0.1, 0.2, 0.3], requires_grad=False)
    unused = V([1.0, 1.0, 1.0], requires_grad=True)
    f = (x * c + k.sin() * x + c * k + x / c).sum()
    f.backward()
    return {
        "x.grad": _grad(x),
        "c.grad is None": c.grad is None,
        "k.grad is None": k.grad is None,
        "unused.grad is None": unused.grad is None,
    }


@probe(category="correctness", weight=2, rtol=1e-9, atol=1e-12, hints=["roots", "topo-order", "accumulate"])
def several_roots_with_grad_outputs(solution: ModuleType) -> dict[str, Any]:
    """Several outputs, one feeding another, a leaf among them and a repeated one."""
    V = solution.Variable
    x = V([0.4, -0.9, 1.3], requires_grad=True)
    w = V([1.1, 0.2, -0.5], requires_grad=True)
    y1 = x.sin() * w
    y2 = (y1 * y1).sum()  # y1 is both a root and on the path from y2
    g1 = V([1.0, -2.0, 0.5])
    g2 = V(3.0)
    g3 = V([0.25, 0.5, 0.75])
    solution.backward([y1, y2, x], [g1, g2, g3])
    first = {"x.grad": _grad(x), "w.grad": _grad(w)}

    z = V([2.0, -0.5], requires_grad=True)
    out = z.exp() * z
    h1 = V([1.0, 1.0])
    h2 = V([0.5, -4.0])
    solution.backward([out, out], [h1, h2])  # the same root twice: gradients add
    untouched = bool(
        np.array_equal(g1.data, [1.0, -2.0, 0.5])
        and np.array_equal(g3.data, [0.25, 0.5, 0.75])
        and np.array_equal(h1.data, [1.0, 1.0])
        and np.array_equal(h2.data, [0.5, -4.0])
    )
    return {"first": first, "z.grad": _grad(z), "grad_outputs left untouched": untouched}


@probe(category="correctness", weight=2, rtol=1e-9, atol=1e-12, hints=["roots", "input-buffer"])
def pieces_of_a_split_as_roots(solution: ModuleType) -> dict[str, Any]:
    """Roots that are outputs 2 and 0 of one multi-output node, and a piece that is both a root and on another root's path."""
    V = solution.Variable
    x = V(np.linspace(-0.5, 2.0, 6), requires_grad=True)
    a, _b, c = x.split([1, 2, 3])
    solution.backward([c, a], [V([1.0, 2.0, 3.0]), V([-1.5])])  # each gradient enters its own slot of one node
    pieces = _grad(x)

    y = V([[0.3, -1.2], [0.8, 0.5], [1.1, -0.4], [-0.7, 2.0]], requires_grad=True)
    p, q = y.chunk(2)
    s = (p.sin() * q).sum()  # reaches q's node, which is also a root
    solution.backward([q, s], [V([[0.5, -1.0], [2.0, 0.25]]), V(1.0)])
    return {"x.grad": pieces, "y.grad": _grad(y)}


@probe(category="correctness", weight=2, rtol=1e-9, atol=1e-12, hints=["roots", "topo-order"])
def roots_in_every_order(solution: ModuleType) -> dict[str, Any]:
    """The same roots in every order: a chain of three roots each reachable from the next, and split pieces beside them.

    Which order the roots come in must not matter. An engine that puts every
    root into its ready queue and skips one that is not ready yet, to queue it
    again once it is, runs a root twice in the orders where it is taken after
    the root that feeds it, whichever end of the queue it takes from.
    """
    V = solution.Variable
    out: dict[str, Any] = {}
    for order in itertools.permutations(range(3)):
        x = V([0.7, -1.1, 0.2], requires_grad=True)
        w = V([0.5, 1.5, -2.0], requires_grad=True)
        r1 = x.exp() * w  # reached from r2 and from r3
        r2 = r1.sin() * x  # reached from r3
        r3 = (r2 * r2).sum() + (r1 * w).sum()
        roots = [r1, r2, r3]
        grads = [V([1.0, -0.5, 2.0]), V([0.25, 3.0, -1.0]), V(1.5)]
        solution.backward([roots[i] for i in order], [grads[i] for i in order])
        out["".join(f"r{i + 1}" for i in order)] = {"x.grad": _grad(x), "w.grad": _grad(w)}
    for label, order in (("pieces a, c, s", (0, 1, 2)), ("pieces s, c, a", (2, 1, 0)), ("pieces c, s, a", (1, 2, 0))):
        y = V(np.linspace(-1.0, 1.5, 6), requires_grad=True)
        a, _b, c = y.split([1, 2, 3])
        s = (c.cos() * a).sum()  # reaches the split node, whose pieces a and c are roots too
        roots = [a, c, s]
        grads = [V([0.5]), V([1.0, -1.0, 2.0]), V(2.0)]
        solution.backward([roots[i] for i in order], [grads[i] for i in order])
        out[label] = _grad(y)
    return out


@probe(category="correctness", weight=2, rtol=1e-9, atol=1e-12, hints=["zero-gradients", "accumulate"])
def zero_and_empty_gradients(solution: ModuleType) -> dict[str, Any]:
    """Gradients that are exactly zero, or empty, are delivered like any other: they reach .grad, carry a graph, and reach released nodes.

    An engine that drops a gradient whose values are all zero ("it adds
    nothing", red team round 2) leaves .grad None where it must be zeros (or
    an empty array for an empty leaf), loses the graph a zero gradient carries
    under create_graph (its derivative need not be zero), and never calls a
    released node that only zeros reach, so a backward that must raise does not.
    """
    V = solution.Variable
    out: dict[str, Any] = {}

    x = V([0.5, -1.5, 2.0], requires_grad=True)
    (x**0).sum().backward()
    out["x ** 0"] = {"x.grad is None": x.grad is None, "x.grad": _grad(x)}

    y = V([1.0, -2.0], requires_grad=True)
    e = y.exp()
    (e * 2.0 - e - e).sum().backward()  # the paths cancel exactly at ExpBackward
    out["paths that cancel"] = {"y.grad is None": y.grad is None, "y.grad": _grad(y)}

    z = V([0.3, 0.6], requires_grad=True)
    z.sin().cos().backward(V([0.0, 0.0]))
    out["a zero gradient handed in"] = {"z.grad is None": z.grad is None, "z.grad": _grad(z)}

    empty = V(np.zeros(0), requires_grad=True)
    (empty.sin() * 2.0).sum().backward()
    out["an empty leaf"] = {"empty.grad is None": empty.grad is None, "empty.grad": _grad(empty)}

    # A zero gradient with a graph: d(sum(a * b))/db = a = 0 here, but it depends on a.
    a = V([0.0, 0.0], requires_grad=True)
    b = V([1.5, -0.5], requires_grad=True)
    (a * b).sum().backward(create_graph=True)
    g = b.grad
    graph = {"b.grad is None": g is None, "b.grad": _grad(b)}
    a.grad = b.grad = None
    if g is not None and g.requires_grad:
        g.sum().backward()
        graph["a.grad of sum(b.grad)"] = _grad(a)
    else:
        graph["a.grad of sum(b.grad)"] = "b.grad carries no graph"
    out["a zero gradient under create_graph"] = graph

    # Only zeros reach a released node: it must still run, and raise.
    u = V([0.4, 1.1], requires_grad=True)
    s = u.sin()
    s.grad_fn.release_variables()
    out["zeros reaching a released node"] = {"backward": raises((s * 0.0).sum().backward), "u.grad is None": u.grad is None}
    return out


@probe(category="correctness", rtol=1e-9, atol=1e-12, hints=["roots"])
def backward_of_no_outputs(solution: ModuleType) -> dict[str, Any]:
    """backward([]) has no roots: as in PyTorch it does nothing, raises nothing and leaves grad mode and .grad alone."""
    V = solution.Variable
    x = V([0.5, -1.0], requires_grad=True)
    (x * x).sum().backward()
    out: dict[str, Any] = {
        "backward([])": raises(solution.backward, []),
        "backward([], [])": raises(solution.backward, [], []),
        "backward((), create_graph=True)": raises(solution.backward, (), create_graph=True),
    }
    with solution.no_grad():
        out["backward([], create_graph=True) under no_grad"] = raises(solution.backward, [], create_graph=True)
        out["grad mode inside no_grad after it"] = bool(solution.is_grad_enabled())
    out["grad mode after"] = bool(solution.is_grad_enabled())
    out["x.grad after them"] = _grad(x)
    x.sin().sum().backward()
    out["x.grad after a backward that follows"] = _grad(x)
    return out


@probe(category="correctness", weight=2, rtol=1e-9, atol=1e-12, hints=["input-buffer", "topo-order"])
def split_pieces_complete_at_different_depths(solution: ModuleType) -> dict[str, Any]:
    """The pieces of a split get their gradients at different depths: the split node waits for all of them.

    A multi-output node is one node with num_inputs slots: it runs once, when
    every edge pointing at it (whichever slot it names) has delivered. An
    engine that counts dependencies per (node, input_nr) slot and runs the
    node as soon as one slot is complete (red team round 2) runs it with zeros
    for the pieces still on their way, and drops them when they arrive; when
    the pieces are roots, as in roots_in_every_order, it may get it right.
    """
    V = solution.Variable
    out: dict[str, Any] = {}

    x = V([0.4, -0.9, 1.3], requires_grad=True)
    p, q = x.split([1, 2])
    (p.sin().sum() + q.exp().cos().tanh().sin().sum()).backward()  # piece 0 one node below the loss, piece 1 five
    out["piece 0 shallow, piece 1 deep"] = _grad(x)

    x = V([0.4, -0.9, 1.3], requires_grad=True)
    p, q = x.split([2, 1])
    ((p.exp().cos().tanh().sin() * 0.5).sum() + (q * 3.0).sum()).backward()
    out["piece 0 deep, piece 1 shallow"] = _grad(x)

    # A split of an intermediate, its node feeding nodes below it; pieces at depths 1, 4 and 2, one used again deeper.
    z = V(np.linspace(-1.0, 1.0, 6), requires_grad=True)
    w = V([0.5, -1.5, 1.0, 2.0, -0.25, 0.75], requires_grad=True)
    a, b, c = (z * w).tanh().split([1, 3, 2])
    deep_b = b.sin().cos().tanh() * a.sum()  # a is used again, three nodes deeper
    loss = (a * 2.0).sum() + deep_b.exp().sum() + (c.tanh() * 0.5).sum()
    loss.backward()
    out["an intermediate split into three"] = {"z.grad": _grad(z), "w.grad": _grad(w)}

    # chunk of a matrix, the pieces going through a matmul at different depths, and a split of a piece.
    m = V([[0.3, -1.2], [0.8, 0.5], [1.1, -0.4], [-0.7, 2.0], [0.2, 0.9], [-1.5, 0.6]], requires_grad=True)
    k = V([[1.0, -0.5], [0.25, 2.0]], requires_grad=True)
    top, mid, bottom = m.chunk(3)
    r0, r1 = bottom.split([1, 1])
    h = ((top @ k).tanh() @ k).sin()
    loss = h.sum() + (mid * 2.0).sum() + (r0.cos().exp() * r1.sin().sin()).sum() + (r1 @ k).sum()
    loss.backward()
    out["chunk of a matrix, a split of a piece"] = {"m.grad": _grad(m), "k.grad": _grad(k)}

    # With create_graph, then the second order.
    x = V([0.7, -0.3, 1.1, 0.2], requires_grad=True)
    p, q = x.chunk(2)
    (p.sin().sum() * (q.cos().tanh() * q).sum()).backward(create_graph=True)
    first = _grad(x)
    g = x.grad
    x.grad = None
    g.sum().backward()
    out["create_graph"] = {"x.grad": first, "x.grad of sum(x.grad)": _grad(x)}
    return out


def _random_graph_with_pieces(solution: ModuleType, seed: int, n_ops: int) -> tuple[list[Any], Any]:
    """A random DAG like _random_graph's, with multi-output nodes: vectors of 6 are split or chunked,
    each piece goes through its own number of ops (or is dropped), and the pieces are concatenated
    again, one of them sometimes used once more at another depth. Returns (leaves, scalar loss).
    """
    rng = np.random.default_rng(seed)
    V = solution.Variable
    leaves = [V(rng.normal(size=6), requires_grad=True) for _ in range(3)]
    pool = [*leaves, V(rng.normal(size=6))]
    sizes_choices = ((3, 3), (1, 5), (2, 4), (1, 2, 3), (4, 1, 1), (2, 2, 2), (5, 1))

    def pick() -> Any:
        back = min(int(rng.geometric(0.35)) - 1, len(pool) - 1)
        return pool[len(pool) - 1 - back]

    def ops(v: Any, depth: int) -> Any:
        for _ in range(depth):
            kind = int(rng.integers(4))
            v = v.sin() if kind == 0 else v.tanh() * 1.2 if kind == 1 else v.cos() * 0.7 if kind == 2 else v.tanh().exp()
        return v

    for _ in range(n_ops):
        kind = int(rng.integers(8))
        a, b = pick(), pick()
        if kind == 0:
            v = a + b
        elif kind == 1:
            v = a - b * 0.5
        elif kind == 2:
            v = (a * b).tanh()
        elif kind == 3:
            v = ops(a, 1 + int(rng.integers(3)))
        elif kind == 4:
            v = a * b.tanh().exp()
        else:
            sizes = sizes_choices[int(rng.integers(len(sizes_choices)))]
            if len(set(sizes)) == 1 and rng.integers(2):
                pieces = a.chunk(len(sizes))
            else:
                pieces = a.split(list(sizes))
            kept = [V(np.zeros(piece.shape)) if rng.integers(5) == 0 else ops(piece, int(rng.integers(6))) for piece in pieces]
            v = solution.cat(kept)
            if rng.integers(2):
                v = v + pieces[int(rng.integers(len(pieces)))].sum() * 0.3
        pool.append(v)
    loss = (pool[-1] * pool[-2]).sum() + pool[-3].sum() + (leaves[0] * leaves[1] * leaves[2]).sum() * 0.1
    return leaves, loss


@probe(category="correctness", weight=2, rtol=1e-9, atol=1e-12, hints=["input-buffer", "topo-order", "accumulate"])
def random_graphs_with_multi_output_nodes(solution: ModuleType) -> dict[str, Any]:
    """Random graphs with shared subexpressions and split/chunk nodes whose pieces go through different numbers of ops."""
    out = {}
    for seed in (5, 31, 77, 103):
        leaves, loss = _random_graph_with_pieces(solution, seed, n_ops=45)
        loss.backward()
        out[f"seed {seed}"] = [_grad(leaf) for leaf in leaves]
    return out


@probe(category="correctness", weight=2, rtol=1e-9, atol=1e-12, hints=["roots", "topo-order"])
def repeated_roots_run_each_node_once(solution: ModuleType) -> dict[str, Any]:
    """A root given twice beside roots that lead to the same nodes, in every order: every node runs once, with its complete gradient.

    The gradients of a repeated root add up in one buffer, and its node runs
    once, like any other. An engine that makes each root's node ready once per
    entry of roots (red team round 3) runs it a second time with no gradient,
    and that run counts as a second delivery to the nodes below it: a node
    still waiting for another root's gradient runs early and that gradient is
    lost (in the orders where the second run comes first), and even where the
    values come out right, as for a leaf given twice, the node runs twice.
    Every call of a node is counted with the profile hook of
    call_stack_stays_shallow (Node.__call__, on any thread a backward starts).
    """
    V = solution.Variable
    node_call = solution.Node.__call__.__code__
    out: dict[str, Any] = {}

    def counted(roots: list[Any], seeds: list[Any]) -> dict[str, Any]:
        seen = _watch_call_stack(lambda: solution.backward(roots, seeds), (node_call,))
        return {"raised": seen["error"], "node runs": seen["calls"][node_call]}

    seed_values = {"y": [2.0, -0.5, 0.75], "z": [1.5, -1.0], "t": [0.5, 3.0]}
    for order in sorted(set(itertools.permutations("yyz"))):
        # y = sum(a) is given twice; z reaches a's node through exp: SinBackward waits for both.
        x = V([0.3, -1.2, 0.8], requires_grad=True)
        a = x.sin()
        made = {"y": a.sum(), "z": a.exp().sum()}
        used = {"y": 0, "z": 0}
        seeds = []
        for name in order:
            seeds.append(V(seed_values[name][used[name]]))
            used[name] += 1
        run = counted([made[name] for name in order], seeds)
        out["y twice, z: " + ", ".join(order)] = {**run, "x.grad": _grad(x)}

    for order in sorted(set(itertools.permutations("xxt"))):
        # A leaf given twice beside a root whose graph reaches it twice more.
        x = V([0.6, -0.4], requires_grad=True)
        made = {"x": x, "t": (x * x.tanh()).sum()}
        seeds_by_name = {"x": [V([1.0, -2.0]), V([0.25, 0.5])], "t": [V(1.5)]}
        used = {"x": 0, "t": 0}
        seeds = []
        for name in order:
            seeds.append(seeds_by_name[name][used[name]])
            used[name] += 1
        run = counted([made[name] for name in order], seeds)
        out["x twice, t: " + ", ".join(order)] = {**run, "x.grad": _grad(x)}

    for order in sorted(set(itertools.permutations("qqs"))):
        # A piece of a split given twice; s reaches the split node through both pieces.
        y = V(np.linspace(-1.0, 1.5, 5), requires_grad=True)
        p, q = y.split([2, 3])
        made = {"q": q, "s": (q.cos().sum() * p).sum()}
        seeds_by_name = {"q": [V([1.0, -1.0, 0.5]), V([2.0, 0.25, -3.0])], "s": [V(0.75)]}
        used = {"q": 0, "s": 0}
        seeds = []
        for name in order:
            seeds.append(seeds_by_name[name][used[name]])
            used[name] += 1
        run = counted([made[name] for name in order], seeds)
        out["q twice, s: " + ", ".join(order)] = {**run, "y.grad": _grad(y)}

    x = V([1.5, -0.5], requires_grad=True)
    out["a leaf twice and nothing else"] = {**counted([x, x], [V([1.0, 2.0]), V([0.5, -3.0])]), "x.grad": _grad(x)}

    # Two pieces of one split as the only roots: two edges, one node, which runs once.
    y = V([0.5, -1.0, 2.0], requires_grad=True)
    p, q = (y * 2.0).split([1, 2])
    out["two pieces of one split, and one of them again"] = {**counted([q, p, q], [V([1.0, -1.0]), V([3.0]), V([0.5, 0.5])]), "y.grad": _grad(y)}

    # The same output three times and nothing else, with create_graph: one run of each node, the seeds summed once.
    w = V([0.2, 0.9], requires_grad=True)
    r = w.exp() * w
    g1, g2, g3 = V([1.0, 0.5], requires_grad=True), V([-2.0, 1.0], requires_grad=True), V([0.5, 0.5], requires_grad=True)
    seen = _watch_call_stack(lambda: solution.backward([r, r, r], [g1, g2, g3], create_graph=True), (node_call,))
    first = _grad(w)
    gw = w.grad
    w.grad = None
    gw.sum().backward()
    out["one output three times, create_graph"] = {
        "raised": seen["error"],
        "node runs": seen["calls"][node_call],
        "w.grad": first,
        "g1.grad of sum(w.grad)": _grad(g1),
        "g3.grad of sum(w.grad)": _grad(g3),
    }
    return out


def _none_for_input_ops(solution: ModuleType) -> tuple[Callable[[Any], Any], Callable[[Any, Any], Any]]:
    """Two custom ops whose nodes (classes of the probe's own, as a user's torch.autograd.Function is) return None for an input that requires grad.

    ``stop(a)`` is a copy of ``a`` whose backward gives ``a`` no gradient;
    ``times_held(a, b)`` is ``a * b`` whose backward gives ``a`` none and ``b`` ``grad * a``.
    """

    class StopBackward(solution.Node):
        def apply(self, grad_inputs: list[Any]) -> list[Any]:
            return [None]

    class TimesHeldBackward(solution.Node):
        def apply(self, grad_inputs: list[Any]) -> list[Any]:
            (g,) = grad_inputs
            (a,) = self.saved_tensors
            return [None, g * a]

    def record(out: Any, node: Any) -> Any:
        out.requires_grad, out.grad_fn, out.output_nr = True, node, 0
        return out

    def stop(a: Any) -> Any:
        return record(solution.Variable(a.data), StopBackward([a.gradient_edge()]))

    def times_held(a: Any, b: Any) -> Any:
        node = TimesHeldBackward([a.gradient_edge(), b.gradient_edge()])
        node.save_for_backward(a)
        return record(solution.Variable(a.data * b.data), node)

    return stop, times_held


@probe(category="correctness", rtol=1e-9, atol=1e-12, hints=["none-gradients", "topo-order"])
def none_gradients_count_as_delivered(solution: ModuleType) -> dict[str, Any]:
    """Custom nodes that return None for an input requiring grad: that edge has still delivered, and the nodes behind it run.

    A node may return None for an edge whose node is not None (a custom op
    that gives one input no gradient, as a torch.autograd.Function's backward
    may). Nothing is added to the buffer, but the delivery counts: the node it
    points at runs once all its edges have delivered, with None in the slots
    nothing reached. An engine that skips such an edge entirely, the count
    included (red team round 3), leaves that node waiting forever, and with it
    every node below it: leaves that also get real gradients along other
    paths keep .grad None.
    """
    V = solution.Variable
    stop, times_held = _none_for_input_ops(solution)
    out: dict[str, Any] = {}

    x = V([0.3, -0.8, 1.4], requires_grad=True)
    (stop(x.sin()).sum() + x.exp().sum()).backward()  # SinBackward gets only None; x also gets exp(x)
    out["None into a node, a real path beside it"] = {"x.grad": _grad(x)}

    x = V([0.5, 1.5], requires_grad=True)
    w = V([2.0, -1.0], requires_grad=True)
    (stop(x.tanh().cos() * w).sum() + (x * 3.0).sum() + w.sum()).backward()  # None reaches a chain of three nodes
    out["None into a chain"] = {"x.grad": _grad(x), "w.grad": _grad(w)}

    u = V([0.4, -0.2], requires_grad=True)
    k = V([1.0, 2.0], requires_grad=True)
    (stop(u).sum() + k.sum()).backward()  # only None reaches u
    out["only None reaches a leaf"] = {"u.grad is None": u.grad is None, "k.grad": _grad(k)}

    y = V(np.linspace(-1.0, 1.0, 5), requires_grad=True)
    p, q = y.split([2, 3])
    (stop(p).sum() + q.sin().sum()).backward()  # the split node gets None for piece 0
    out["None for one piece of a split"] = {"y.grad": _grad(y)}

    y = V(np.linspace(-1.0, 1.0, 4), requires_grad=True)
    p, q = y.chunk(2)
    (times_held(p.exp(), q).sum() + (q * q).sum()).backward()  # ExpBackward gets None; the split node waits for it
    out["None for one input of two"] = {"y.grad": _grad(y)}

    z = V([0.7, -0.3], requires_grad=True)
    (times_held(z.sin(), z).sum() + (z * z).sum()).backward(create_graph=True)  # z.grad = sin z + 2 z
    first = _grad(z)
    gz = z.grad
    z.grad = None
    if gz is not None and gz.requires_grad:
        gz.sum().backward()
        second = _grad(z)
    else:
        second = "z.grad is None or carries no graph"
    out["with create_graph, then the second order"] = {"z.grad": first, "z.grad of sum(z.grad)": second}

    v = V([0.1, 0.9], requires_grad=True)
    root = stop(v.exp())
    failed = raises(solution.backward, [root, v.sin()], [V([1.0, 1.0]), V([2.0, -1.0])])
    out["a root whose node returns None"] = {"backward": failed, "v.grad": _grad(v)}
    return out


#: The kinds of backward pass several probes repeat their graphs with: (label, keyword arguments of backward).
_PASS_KINDS = (
    ("", {}),
    (", retain_graph=True", {"retain_graph": True}),
    (", create_graph=True, retain_graph=False", {"create_graph": True, "retain_graph": False}),
)


def _none_only_graphs(solution: ModuleType) -> list[tuple[str, Callable[..., Any], tuple[Any, ...], dict[str, tuple[Any, int]]]]:
    """Graphs in which some nodes are reached only by None gradients (custom nodes that give an input none).

    Each entry is (label, backward, leaves, nodes): ``backward(**kwargs)``
    runs a backward of the graph, and ``nodes`` names the nodes that only None
    reaches and saved Variables, each with the size of the gradient it takes,
    so that a probe can call them after the pass.
    """
    V = solution.Variable
    stop, _times_held = _none_for_input_ops(solution)
    graphs = []

    x = V([0.3, -0.8, 1.4], requires_grad=True)
    w = V([2.0, 0.5, -1.0], requires_grad=True)
    prod = w * x  # MulBackward gets only None; so does w's AccumulateGrad
    loss = stop(prod).sum() + x.sin().sum()
    graphs.append(("a product, and a leaf behind it", lambda loss=loss, **kw: loss.backward(**kw), (x, w), {"MulBackward w * x": (prod.grad_fn, 3)}))

    u = V([0.4, -0.2], requires_grad=True)
    k = V([1.0, 2.0], requires_grad=True)
    loss = stop(u).sum() + (k * k).sum()  # u's AccumulateGrad gets only None
    graphs.append(("a leaf", lambda loss=loss, **kw: loss.backward(**kw), (u, k), {}))

    z = V([0.5, 1.5], requires_grad=True)
    c = V([2.0, -1.0], requires_grad=True)
    t = z.tanh()
    s = t.cos()
    m = s * c
    loss = stop(m).sum() + (z * 3.0).sum()  # a chain of three nodes gets only None
    nodes = {"TanhBackward": (t.grad_fn, 2), "CosBackward": (s.grad_fn, 2), "MulBackward": (m.grad_fn, 2)}
    graphs.append(("a chain", lambda loss=loss, **kw: loss.backward(**kw), (z, c), nodes))

    y = V(np.linspace(-1.0, 1.0, 5), requires_grad=True)
    e = y.exp()
    p, q = e.split([2, 3])
    loss = stop(p).sum() + stop(q).sum() + (y * 2.0).sum()  # the split node gets None in both slots, ExpBackward behind it
    graphs.append(("both pieces of a split", lambda loss=loss, **kw: loss.backward(**kw), (y,), {"ExpBackward": (e.grad_fn, 5)}))

    r = V([0.7, -0.3], requires_grad=True)
    h = r.sin()
    root = stop(h)
    graphs.append(
        (
            "the roots: one whose node gives None, and its own input",
            lambda root=root, h=h, **kw: solution.backward([root, (h * 0.0).sum() + r.sum()], [V([1.0, 1.0]), V(1.0)], **kw),
            (r,),
            {},
        )
    )
    return graphs


@probe(category="correctness", weight=2, rtol=1e-9, atol=1e-12, hints=["none-gradients", "topo-order"])
def nodes_reached_only_by_none_run(solution: ModuleType) -> dict[str, Any]:
    """Nodes that only None gradients reach are still called, once each: every node of the graph runs, a leaf's AccumulateGrad included.

    A node whose every slot got None returns None for each input without
    computing anything (Node.__call__ does that), but it is still a node the
    backward runs: the engine calls it, like any other, once every edge
    pointing at it has delivered. An engine that skips the call (red team
    round 4: "it would return None anyway"), whether it then releases the
    node or not, runs fewer nodes than the graph has. Every call of a node is
    counted by the profile hook of call_stack_stays_shallow, with and without
    retain_graph and create_graph.
    """
    node_call = solution.Node.__call__.__code__
    out: dict[str, Any] = {}
    for kwargs_label, kwargs in (("", {}), (", retain_graph=True", {"retain_graph": True}), (", create_graph=True", {"create_graph": True})):
        for label, run, leaves, _nodes in _none_only_graphs(solution):
            seen = _watch_call_stack(lambda run=run, kwargs=kwargs: run(**kwargs), (node_call,))
            out[label + kwargs_label] = {
                "raised": seen["error"],
                "node runs": seen["calls"][node_call],
                "grads": [_grad(leaf) for leaf in leaves],
            }
    return out


@probe(category="retain-graph", weight=2, rtol=1e-9, atol=1e-12, hints=["none-gradients", "retain-graph"])
def nodes_reached_only_by_none_are_released(solution: ModuleType) -> dict[str, Any]:
    """Without retain_graph, the nodes that only None gradients reach are released too, like every node the backward ran.

    They ran (nodes_reached_only_by_none_run), so a backward that does not
    retain the graph releases them right after: calling one directly
    afterwards raises the freed-graph RuntimeError. With retain_graph=True
    they keep their saved Variables. An engine that neither calls nor
    releases them (red team round 4) leaves them holding what they saved.
    """
    V = solution.Variable
    out: dict[str, Any] = {}
    for kwargs_label, kwargs in _PASS_KINDS:
        for label, run, leaves, nodes in _none_only_graphs(solution):
            if nodes:
                step: dict[str, Any] = {"backward": raises(run, **kwargs), "grads": [_grad(leaf) for leaf in leaves]}
                step.update({name: _call_node(node, V(np.linspace(1.0, 2.0, size))) for name, (node, size) in nodes.items()})
                out[label + kwargs_label] = step
    return out


@probe(category="correctness", weight=2, rtol=1e-9, atol=1e-12, hints=["accumulate"])
def summed_gradient_passed_on_to_two_nodes(solution: ModuleType) -> dict[str, Any]:
    """A gradient summed from two paths that an addition passes on unchanged to two nodes, each waiting for more.

    s = u + v is used twice, so the gradient reaching AddBackward is a sum the
    engine made; AddBackward hands that very Variable to u's node and to v's,
    and each of them waits for a gradient along a longer path too. An engine
    that adds later gradients in place into buffers it created itself, and
    still counts a buffer as its own after handing it to a node (red team
    round 3), adds u's later gradient into v's buffer as well. The graphs are
    built so that this happens in a LIFO, a FIFO and a sequence_nr order.
    """
    V = solution.Variable
    out: dict[str, Any] = {}
    for label, s_after_paths, s_terms_first, length in (
        ("the sum built after the long paths, its terms last", True, False, 3),
        ("the sum built first, its terms first", False, True, 4),
        ("the sum built first, its terms last", False, False, 3),
    ):
        x = V([0.3, -0.8, 1.4], requires_grad=True)
        u, v = x.sin(), x.cos()
        if not s_after_paths:
            s = u + v
        lu, lv = u, v
        for _ in range(length):
            lu, lv = lu.tanh(), lv.tanh()
        if s_after_paths:
            s = u + v
        if s_terms_first:
            loss = (s * 2.0).sum() + s.exp().sum() + lu.sum() + lv.sum()
        else:
            loss = lu.sum() + lv.sum() + (s * 2.0).sum() + s.exp().sum()
        loss.backward()
        out[label] = _grad(x)

    # The same through two leaves: AddBackward passes the sum to both AccumulateGrad nodes.
    a = V([0.5, -1.0], requires_grad=True)
    b = V([1.5, 0.25], requires_grad=True)
    la, lb = a, b
    for _ in range(3):
        la, lb = la.tanh(), lb.tanh()
    s = a + b
    (la.sum() + lb.sum() + (s * 2.0).sum() + s.exp().sum()).backward()
    out["to two leaves"] = {"a.grad": _grad(a), "b.grad": _grad(b)}
    return out


@probe(category="double-backward", weight=2, rtol=1e-9, atol=1e-12, hints=["create-graph", "roots"])
def seed_gradients_follow_create_graph(solution: ModuleType) -> dict[str, Any]:
    """Gradients handed to backward that require grad: summing them is recorded exactly when create_graph is."""
    V = solution.Variable
    z = V([0.6, -0.3], requires_grad=True)
    out = z.exp() * z
    h = V([1.0, 2.0], requires_grad=True)
    k = V([0.5, -1.0], requires_grad=True)
    with solution.no_grad():
        solution.backward([out, out], [h, k], create_graph=True)  # the seeds meet: h + k must be recorded
    first = _grad(z)
    g = z.grad
    z.grad = None
    g.sum().backward()  # d/dh and d/dk of sum(z.grad) exist only if h + k was recorded

    x = V([1.5, -2.0], requires_grad=True)
    u = V([0.25, 4.0], requires_grad=True)
    v = V([-1.0, 0.5], requires_grad=True)
    solution.backward([x, x], [u, v])  # create_graph=False in grad mode: u + v must not be recorded
    return {
        "z.grad": first,
        "z.grad second order": _grad(z),
        "h.grad": _grad(h),
        "k.grad": _grad(k),
        "x.grad": _grad(x),
        "x.grad requires grad without create_graph": bool(x.grad.requires_grad),
    }


# ---------------------------------------------------------------- accumulation


@probe(category="accumulation", rtol=1e-9, atol=1e-12, hints=["accumulate"])
def grads_accumulate_across_calls(solution: ModuleType) -> dict[str, Any]:
    """.grad of a leaf sums over backward calls until it is reset to None."""
    x = solution.Variable([0.7, -0.2, 2.5], requires_grad=True)
    (x * x).sum().backward()
    after_one = _grad(x)
    (x.sin() * x).sum().backward()
    after_two = _grad(x)
    (x * 3.0).sum().backward()
    after_three = _grad(x)
    x.grad = None
    x.tanh().sum().backward()
    return {"after 1": after_one, "after 2": after_two, "after 3": after_three, "after reset": _grad(x)}


@probe(category="accumulation", weight=2, rtol=1e-9, atol=1e-12, hints=["accumulate"])
def grad_belongs_to_its_leaf(solution: ModuleType) -> dict[str, Any]:
    """Without create_graph, .grad is the leaf's own copy, whatever Variable reached the leaf.

    AddBackward (and sum_to where nothing is broadcast) hands its gradient on
    unchanged, and a leaf can be a root, so the Variable that reaches a leaf
    can be the caller's grad_output itself, or the very Variable another leaf
    gets too. AccumulateGrad stores a detached copy the first time and adds
    into that copy later. An engine that writes .grad itself instead (red
    team round 1) stores the Variable it holds: .grad then requires grad
    although create_graph=False, changes when the caller edits its
    grad_output, and is one buffer with another leaf's .grad, so zeroing one
    in place (as an optimizer's zero_grad does), or adding into it in place
    on a second backward, changes the others and the caller's grad_output.
    """
    V = solution.Variable
    # A grad_output that requires grad reaches a leaf unchanged through an addition.
    x = V([1.0, 2.0], requires_grad=True)
    g = V([1.0, -1.5], requires_grad=True)
    (x + V([5.0, 5.0])).backward(g)
    through_add = {
        "x.grad": _grad(x),
        "requires grad": bool(x.grad.requires_grad),
        "has grad_fn": x.grad.grad_fn is not None,
        "is the grad_output": x.grad is g,
    }
    g.data[...] = 100.0  # the caller reuses its Variable
    through_add["x.grad after the caller edits its grad_output"] = _grad(x)

    # A leaf as a root, its grad_output requiring grad.
    w = V([0.5, -1.0, 2.0], requires_grad=True)
    k = V([2.0, 3.0, -4.0], requires_grad=True)
    solution.backward([w], [k])
    leaf_root = {"w.grad": _grad(w), "requires grad": bool(w.grad.requires_grad), "is the grad_output": w.grad is k}
    k.data[...] = 0.0
    leaf_root["w.grad after the caller edits its grad_output"] = _grad(w)

    # Two leaves reached by one Variable, zeroed in place between passes.
    a = V([1.0, 2.0], requires_grad=True)
    b = V([3.0, 4.0], requires_grad=True)
    h = V([1.0, 0.5])
    z = a + b
    z.backward(h, retain_graph=True)
    a.grad.data[...] = 0.0  # zero_grad, in place
    zeroed = {"b.grad": _grad(b), "h": np.array(h.data)}
    z.backward(h, retain_graph=True)
    zeroed["a.grad after a second pass"] = _grad(a)
    zeroed["b.grad after a second pass"] = _grad(b)
    z.backward(h)
    zeroed["a.grad after a third pass"] = _grad(a)
    zeroed["b.grad after a third pass"] = _grad(b)
    zeroed["h at the end"] = np.array(h.data)

    # Two leaves reached by one Variable, two passes and nothing else.
    c = V([[0.5, -2.0], [1.0, 0.25]], requires_grad=True)
    d = V([[1.5, 1.0], [-1.0, 3.0]], requires_grad=True)
    u = V([[1.0, 2.0], [-0.5, 4.0]])
    y = c + d
    y.backward(u, retain_graph=True)
    y.backward(u)
    twice = {"c.grad": _grad(c), "d.grad": _grad(d), "u": np.array(u.data)}
    return {"through an addition": through_add, "a leaf as a root": leaf_root, "zeroed in place": zeroed, "two passes": twice}


def _accumulate_grad_runs(solution: ModuleType, run: Callable[[], Any]) -> dict[str, Any]:
    """What ``run`` raised and how many times AccumulateGrad.apply ran during it, seen by _watch_call_stack's hook."""
    code = solution.AccumulateGrad.apply.__code__
    seen = _watch_call_stack(run, (code,))
    return {"raised": seen["error"], "AccumulateGrad runs": seen["calls"][code]}


@probe(category="accumulation", weight=2, rtol=1e-9, atol=1e-12, hints=["topo-order", "accumulate"])
def each_leaf_accumulates_once(solution: ModuleType) -> dict[str, Any]:
    """A leaf's AccumulateGrad runs once per backward, with its complete gradient, however many uses the leaf has.

    AccumulateGrad is a node like the others (statement, rule 1). An engine
    that hands each gradient to a leaf as it arrives (red team round 2) gets
    the same sums in a pass that succeeds, but runs the node once per use, and
    when a pass raises partway it has already added part of a gradient into
    a .grad whose other part never comes. The leaf x below is used directly by
    the last node and through the node that raises, so in no valid order does
    its AccumulateGrad run. The number of runs is counted by the profile hook
    of call_stack_stays_shallow, which sees every node run on any thread a
    backward starts.
    """
    V = solution.Variable
    out: dict[str, Any] = {}

    x = V([0.3, -0.8, 1.4], requires_grad=True)
    w = V([1.5, 0.5, -2.0], requires_grad=True)
    f = (x * x + x.sin() + x.exp() * x * w + w * w).sum()
    run = _accumulate_grad_runs(solution, lambda: f.backward(retain_graph=True))
    out["x used five times, w three"] = {**run, "x.grad": _grad(x), "w.grad": _grad(w)}
    x.grad = w.grad = None
    out["the same with create_graph"] = _accumulate_grad_runs(solution, lambda: f.backward(create_graph=True))
    gx = x.grad
    x.grad = w.grad = None
    out["second order"] = {**_accumulate_grad_runs(solution, lambda: (gx * gx).sum().backward()), "x.grad": _grad(x), "w.grad": _grad(w)}

    y = V([0.5, 2.0], requires_grad=True)
    t = y.tanh() * y
    roots = [t, y, y, t.sum() + y.sum()]
    seeds = [V([1.0, -1.0]), V([0.5, 0.5]), V([2.0, 1.0]), V(1.0)]
    run = _accumulate_grad_runs(solution, lambda: solution.backward(roots, seeds))
    out["a leaf among the roots, twice"] = {**run, "y.grad": _grad(y)}

    # A pass that raises partway: x is reached directly from the last node and through the released SinBackward.
    for label, kwargs in (("failed pass", {}), ("failed pass, create_graph=True", {"create_graph": True})):
        x = V([0.5, 1.5], requires_grad=True)
        (x * 2.0).sum().backward()
        before = _grad(x)
        s = x.sin()
        loss = (x * s).sum() + (x * 3.0).sum()
        s.grad_fn.release_variables()
        out[label] = {"backward": raises(loss.backward, **kwargs), "x.grad unchanged": bool(np.array_equal(_grad(x), before))}
        z = V([0.5, 1.5], requires_grad=True)
        s = z.sin()
        loss = (z * s).sum() + z.sum()
        s.grad_fn.release_variables()
        out[label]["z.grad, never set before"] = {"backward": raises(loss.backward, **kwargs), "z.grad is None": z.grad is None}
    return out


# ---------------------------------------------------------------- retain-graph


@probe(category="retain-graph", weight=2, rtol=1e-9, atol=1e-12, hints=["retain-graph"])
def retain_graph_then_release(solution: ModuleType) -> dict[str, Any]:
    """retain_graph=True twice, then a plain backward, then one too many."""
    x = solution.Variable([0.5, 1.0, -1.5], requires_grad=True)
    w = solution.Variable([2.0, -0.5, 1.0], requires_grad=True)
    f = (x.exp() * w + x.sin()).sum()
    f.backward(retain_graph=True)
    one = _grad(x)
    f.backward(retain_graph=True)
    two = _grad(x)
    f.backward()
    three = _grad(x)
    fourth = raises(f.backward)
    return {"x.grad 1": one, "x.grad 2": two, "x.grad 3": three, "w.grad": _grad(w), "fourth backward": fourth}


@probe(category="retain-graph", weight=2, rtol=1e-9, atol=1e-12, hints=["retain-graph", "create-graph"])
def released_nodes_only(solution: ModuleType) -> dict[str, Any]:
    """Only the nodes a backward ran are released; other graphs on the same leaves still work."""
    V = solution.Variable
    x = V([0.1, 0.9, -0.6], requires_grad=True)
    y = V([1.2, -0.3, 0.8], requires_grad=True)
    shared = x.exp()
    z = (shared * 2.0).sum()
    w = (shared * y).sum()  # goes through the node z's backward releases
    other = (x * y).tanh().sum()  # shares only the leaves
    z.backward()
    after_z = _grad(x)
    through_released = raises(w.backward)
    x_after_error = _grad(x)
    grad_mode_after_error = bool(solution.is_grad_enabled())
    x.grad = None
    y.grad = None
    other.backward()
    return {
        "x.grad after z": after_z,
        "backward through a released node": through_released,
        "x.grad after the error": x_after_error,
        "grad mode after the error": grad_mode_after_error,
        "other: x.grad": _grad(x),
        "other: y.grad": _grad(y),
    }


@probe(category="retain-graph", weight=2, rtol=1e-9, atol=1e-12, hints=["retain-graph", "create-graph"])
def create_graph_without_retain_graph(solution: ModuleType) -> dict[str, Any]:
    """create_graph=True with retain_graph=False: the new gradient is differentiable, the graph it came from is freed."""
    x = solution.Variable([0.4, -1.3, 0.9], requires_grad=True)
    # The gradient's graph reaches only the leaf, never f's own intermediates:
    # it is made of nodes this backward recorded, which nothing has released.
    f = (x.sin() * 3.0 + x.cos()).sum()
    f.backward(create_graph=True, retain_graph=False)
    first = _grad(x)
    g = x.grad
    again = raises(f.backward)  # every node of f ran and was released
    x.grad = None
    g.sum().backward()
    return {"x.grad": first, "backward through f again": again, "x.grad of sum(x.grad)": _grad(x)}


@probe(category="retain-graph", weight=2, rtol=1e-9, atol=1e-12, hints=["retain-graph"])
def failed_pass_releases_what_ran(solution: ModuleType) -> dict[str, Any]:
    """A backward without retain_graph that raises partway: the nodes that ran before the raise are released, the others are not.

    Each pass reaches a node whose saved Variables the probe released by
    hand, and raises there. Every node from which that node can be reached
    sends it part of its gradient, so it ran before the raise in any valid
    order and must be released; no node it leads to can have run (each waits
    for a gradient from it), so none of those may be released. Nodes beside
    it, which run before or after depending on the order, are not looked at.
    Whether a node is released is seen by calling it directly. Releasing the
    nodes that ran only once the pass has succeeded, or every reachable node
    in a ``finally`` (red team round 1), gets one side wrong.
    """
    V = solution.Variable
    one2 = V([1.0, -2.0])
    out: dict[str, Any] = {}

    # A chain above the failing node: SumBackward -> MulBackward -> SinBackward (released).
    for label, kwargs in (
        ("chain", {}),
        ("chain, create_graph=True and retain_graph=False", {"create_graph": True, "retain_graph": False}),
        ("chain, retain_graph=True", {"retain_graph": True}),
    ):
        x = V([0.5, 1.5], requires_grad=True)
        y = V([2.0, 3.0], requires_grad=True)
        s = x.sin()
        p = s * y
        m = p.sum()
        s.grad_fn.release_variables()
        out[label] = {
            "backward": raises(m.backward, **kwargs),
            "MulBackward above": _call_node(p.grad_fn, one2),
            "x.grad": _grad(x),  # its AccumulateGrad only follows SinBackward
            "grad mode": bool(solution.is_grad_enabled()),
        }

    # Below the failing node: CosBackward waits for SinBackward (released), so it never runs.
    y = V([0.5, 1.5], requires_grad=True)
    u = y.cos()
    v = u.sin()
    v.grad_fn.release_variables()
    below = {"backward": raises(v.sum().backward), "y.grad": _grad(y), "CosBackward below": _call_node(u.grad_fn, one2)}
    (u * 2.0).sum().backward()  # another graph through the node the failing pass never reached
    below["y.grad from another graph through it"] = _grad(y)
    out["below"] = below

    # ExpBackward (released) under a split whose pieces go through several nodes, a product of two leaves under it.
    x = V([0.3, -0.6, 0.9, 1.2], requires_grad=True)
    w = V([1.5, -0.5, 2.0, 0.25], requires_grad=True)
    h = x * w
    e = h.exp()
    p, q = e.chunk(2)
    a, b, t = p.sin(), q.cos(), p.tanh()
    ab = a * b
    loss = ab.sum() + (t * q).sum()
    e.grad_fn.release_variables()
    out["split above, product below"] = {
        "backward": raises(loss.backward),
        "MulBackward a * b": _call_node(ab.grad_fn, one2),
        "SinBackward": _call_node(a.grad_fn, one2),
        "CosBackward": _call_node(b.grad_fn, one2),
        "TanhBackward": _call_node(t.grad_fn, one2),
        "MulBackward x * w below": _call_node(h.grad_fn, V([1.0, -2.0, 0.5, 3.0])),
        "x.grad": _grad(x),
        "w.grad": _grad(w),
    }

    # Two paths of very different lengths from the failing node meet again above it; a root reachable from another.
    z = V([0.2, -0.7], requires_grad=True)
    below_node = z * 3.0
    e = below_node.exp()
    s1 = e.sin()
    s2 = s1.cos()
    s3 = s2.tanh()
    top = e * s3
    e.grad_fn.release_variables()
    out["unequal paths"] = {
        "backward": raises(solution.backward, [s1, top.sum()], [V([0.5, 2.0]), V(1.0)]),
        "MulBackward top": _call_node(top.grad_fn, one2),
        "SinBackward": _call_node(s1.grad_fn, one2),
        "CosBackward": _call_node(s2.grad_fn, one2),
        "TanhBackward": _call_node(s3.grad_fn, one2),
        "MulBackward below": _call_node(below_node.grad_fn, one2),
        "z.grad": _grad(z),
    }
    return out


@probe(category="retain-graph", weight=2, rtol=1e-9, atol=1e-12, hints=["released-saved-nothing", "retain-graph"])
def released_nodes_that_saved_nothing_run_again(solution: ModuleType) -> dict[str, Any]:
    """Released nodes that saved nothing (additions, sums, splits, a leaf's AccumulateGrad) run again: backwards through them succeed.

    Releasing a node drops its saved Variables and nothing else; as in
    PyTorch, a node that saved nothing runs after it too, so a second plain
    backward through a graph of additions and sums succeeds and accumulates
    again. An engine that "frees the graph" by also clearing a node's
    next_functions, or that raises the freed-graph error itself at any node
    it finds released, or skips such a node (red team round 3), makes these
    backwards raise or lose their gradients. Whether a node still works is
    seen by calling it directly, and its edges by counting its next_functions
    (the first case, so that cutting the graph and refusing released nodes
    fail this probe differently and the diagnosis can tell them apart).
    """
    V = solution.Variable
    out: dict[str, Any] = {}

    # After a plain backward, the nodes that saved nothing keep their edges and still work when called directly.
    x = V([1.0, 2.0], requires_grad=True)
    w = V([0.5, -1.0], requires_grad=True)
    s = x + w
    first, second = s.split([1, 1])
    c = solution.cat([second, first])
    y = c.sum()
    y.backward()
    nodes = {"SumBackward": (y.grad_fn, V(1.0)), "CatBackward": (c.grad_fn, V([1.0, -2.0])), "AddBackward": (s.grad_fn, V([0.5, 3.0]))}
    out["released nodes that saved nothing, called directly"] = {
        "edges": {name: len(node.next_functions) for name, (node, _) in nodes.items()},
        "split edges": len(first.grad_fn.next_functions),
        "called": {name: _call_node(node, grad) for name, (node, grad) in nodes.items()},
    }

    x = V([1.0, 2.0], requires_grad=True)
    w = V([0.5, -1.0], requires_grad=True)
    y = (x + w).sum()
    runs = [raises(y.backward), raises(y.backward), raises(y.backward, create_graph=True)]
    out["the sum of an addition, three plain backwards"] = {"backwards": runs, "x.grad": _grad(x), "w.grad": _grad(w)}

    # Every op that saves nothing: subtraction with broadcasting, negation, transpose, split, cat, sum.
    m = V([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], requires_grad=True)
    b = V([1.0, -2.0, 0.5], requires_grad=True)
    q = (-(m - b)).T  # (3, 2)
    top, rest = q.split([1, 2])
    r = solution.cat([rest, top]) + 1.0
    loss = (r * V([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])).sum()  # MulBackward saves: only in the first pass
    loss.backward()
    runs = [raises(r.backward, V([[1.0, -1.0], [0.5, 2.0], [0.0, 3.0]])), raises(r.backward, V([[2.0, 1.0], [1.0, 1.0], [-1.0, 0.5]]))]
    out["subtraction, negation, transpose, split, cat"] = {"backwards": runs, "m.grad": _grad(m), "b.grad": _grad(b)}

    # One piece of a split at a time: the second backward goes through the released SplitBackward.
    z = V([0.3, -0.6, 1.2], requires_grad=True)
    p, rest2 = z.split([1, 2])
    (p * 2.0).sum().backward()
    second = raises(rest2.sin().sum().backward)
    out["one piece of a split at a time"] = {"second backward": second, "z.grad": _grad(z)}

    # An addition with a constant, released by a first backward, then reached from a new root.
    x = V([0.4, -1.1], requires_grad=True)
    a = x + 1.0
    a.cos().sum().backward()
    second = raises((a * 2.0).sum().backward)
    out["an addition reached again from a new root"] = {
        "second backward": second,
        "x.grad": _grad(x),
        "AddBackward called directly": _call_node(a.grad_fn, V([1.0, -2.0])),
    }

    # A root node released by hand above a node that saved its input: the backward runs both.
    x = V([0.2, 0.9], requires_grad=True)
    w = V([1.5, -0.5], requires_grad=True)
    e = x.exp()
    s = e + w
    s.grad_fn.release_variables()
    first = raises(s.sum().backward)
    out["an addition released by hand, a saving node below it"] = {
        "backward": first,
        "x.grad": _grad(x),
        "w.grad": _grad(w),
        "ExpBackward after it": _call_node(e.grad_fn, V([1.0, 1.0])),
        "backward again": raises(s.sum().backward),
    }

    # A leaf as the root of two plain backwards.
    k = V([0.5, -0.5], requires_grad=True)
    runs = [raises(solution.backward, [k], [V([1.0, 2.0])]), raises(solution.backward, [k], [V([0.5, 0.5])])]
    out["a leaf as the root, twice"] = {"backwards": runs, "k.grad": _grad(k)}
    return out


def _recorded(out: Any, node: Any) -> Any:
    """``out`` as the output of ``node``, an op of the probe's own (as a torch.autograd.Function's output is)."""
    out.requires_grad, out.grad_fn, out.output_nr = True, node, 0
    return out


def _released_by_api_ops(solution: ModuleType) -> tuple[Callable[[Any], Any], Callable[[Any], tuple[Any, Any]]]:
    """Two custom ops whose nodes override release_variables.

    ``square(a)`` is ``a * a``; its node keeps ``a`` in an attribute of its
    own (a Function's ctx), not through save_for_backward, drops it in its
    release_variables, and raises the freed-graph RuntimeError when called
    without it. ``tracked(a)`` is a copy of ``a`` whose node saved nothing
    and notes whether its release_variables was called; it returns (output,
    node).
    """

    class CtxSquareBackward(solution.Node):
        def release_variables(self) -> None:
            self.ctx = None
            super().release_variables()

        def apply(self, grad_inputs: list[Any]) -> list[Any]:
            (g,) = grad_inputs
            if self.ctx is None:
                raise RuntimeError("Trying to backward through the graph a second time")
            return [g * (self.ctx * 2.0)]

    class TrackedBackward(solution.Node):
        released = False

        def release_variables(self) -> None:
            self.released = True
            super().release_variables()

        def apply(self, grad_inputs: list[Any]) -> list[Any]:
            return [grad_inputs[0]]

    def square(a: Any) -> Any:
        node = CtxSquareBackward([a.gradient_edge()])
        node.ctx = a
        return _recorded(solution.Variable(a.data * a.data), node)

    def tracked(a: Any) -> tuple[Any, Any]:
        node = TrackedBackward([a.gradient_edge()])
        return _recorded(solution.Variable(a.data), node), node

    return square, tracked


@probe(category="retain-graph", weight=2, rtol=1e-9, atol=1e-12, hints=["retain-graph"])
def release_through_release_variables(solution: ModuleType) -> dict[str, Any]:
    """Nodes are released by calling their release_variables(): the probe's own nodes that override it, keeping what they saved elsewhere, too.

    ``node.release_variables()`` is how the engine releases a node (rule 4),
    and a custom node may override it, as one keeping its context in an
    attribute of its own does. An engine that clears the framework's storage
    itself (``node._saved = None``, red team round 4) never releases such a
    node: a second backward through it succeeds and adds its gradient again.
    Nodes that saved nothing note whether their release_variables was called:
    each node a backward without retain_graph ran, and no other.
    """
    V = solution.Variable
    square, tracked = _released_by_api_ops(solution)
    out: dict[str, Any] = {}

    x = V([1.0, -2.0, 0.5], requires_grad=True)
    sq = square(x)
    (sq.sum() + x.sin().sum()).backward()
    first = _grad(x)
    out["plain backward, then again through the node"] = {"x.grad": first, "again": raises(sq.sum().backward), "x.grad after": _grad(x)}

    x = V([0.5, 1.5], requires_grad=True)
    sq = square(x.exp())
    loss = (sq * 3.0).sum()
    runs = [raises(loss.backward, retain_graph=True), raises(loss.backward), raises(loss.backward)]
    out["retain_graph=True, then without, then again"] = {"backwards": runs, "x.grad": _grad(x)}

    x = V([0.3, -0.7], requires_grad=True)
    sq = square(x)
    sq.sum().backward(create_graph=True, retain_graph=False)
    gx = x.grad
    x.grad = None
    gx.sum().backward()
    out["create_graph=True, retain_graph=False"] = {"x.grad of sum(x.grad)": _grad(x), "again": raises(sq.sum().backward)}

    for label, kwargs in _PASS_KINDS:
        y = V([0.2, 0.9], requires_grad=True)
        a, first_node = tracked(y.sin())
        b, second_node = tracked(a * 2.0)
        _other, other_node = tracked(y.exp())  # another graph on the same leaf: never run here
        b.sum().backward(**kwargs)
        out[f"nodes that saved nothing{label}"] = {
            "first released": first_node.released,
            "second released": second_node.released,
            "a node of another graph released": other_node.released,
            "y.grad": _grad(y),
        }

    # A pass that raises partway: the node above the failing one ran and is released, the one below is not.
    z = V([0.4, 1.1], requires_grad=True)
    below, below_node = tracked(z * 2.0)
    s = below.sin()
    above, above_node = tracked(s * 3.0)
    s.grad_fn.release_variables()
    failed = raises(above.sum().backward)
    out["a pass that raises partway"] = {
        "backward": failed,
        "above released": above_node.released,
        "below released": below_node.released,
        "z.grad": _grad(z),
    }
    return out


def _picky_op(solution: ModuleType) -> Callable[[Any, Any], tuple[Any, Any]]:
    """``picky(a, c)``: ``a * c`` (c saved with save_for_backward); its backward raises ValueError on a gradient above 100. Returns (output, node)."""

    class PickyBackward(solution.Node):
        def apply(self, grad_inputs: list[Any]) -> list[Any]:
            (g,) = grad_inputs
            (c,) = self.saved_tensors
            if float(np.abs(g.data).max()) > 100.0:
                raise ValueError("gradient out of range")
            return [g * c]

    def picky(a: Any, c: Any) -> tuple[Any, Any]:
        node = PickyBackward([a.gradient_edge()])
        node.save_for_backward(c)
        return _recorded(solution.Variable(a.data * c.data), node), node

    return picky


@probe(category="retain-graph", weight=2, rtol=1e-9, atol=1e-12, hints=["retain-graph", "node-errors"])
def node_that_raised_is_not_released(solution: ModuleType) -> dict[str, Any]:
    """A node whose call raised did not run: it is not released, and a later backward through it works.

    A node of the probe's own raises ValueError for a gradient it refuses. It
    never ran, so a backward without retain_graph must leave its saved
    Variables alone (rule 4: only the nodes that ran are released), as it
    leaves the nodes below it; the nodes above it ran and are released. A
    retry with an acceptable gradient then succeeds. An engine that releases
    each node in a ``finally`` around its call (red team round 4) releases
    the node that raised, and the retry fails.
    """
    V = solution.Variable
    picky = _picky_op(solution)
    one2 = V([1.0, -1.0])
    out: dict[str, Any] = {}

    for label, kwargs in _PASS_KINDS[::2]:  # with retain_graph=True nothing is released anyway
        x = V([1.0, 2.0], requires_grad=True)
        root, node = picky(x, V([3.0, 4.0]))
        refused = raises(solution.backward, [root], [V([1000.0, 1.0])], **kwargs)
        held = _call_node(node, one2)
        retry = raises(solution.backward, [root], [V([1.0, 1.0])], **kwargs)
        after_retry = _grad(x)
        again = raises(solution.backward, [root], [V([1.0, 1.0])])
        out[f"the root's node raises{label}"] = {
            "backward": refused,
            "node called": held,
            "retry": retry,
            "x.grad": after_retry,
            "a third backward": again,
        }

        x = V([0.5, -0.5], requires_grad=True)
        e = x.exp()
        mid, node = picky(e, V([2.0, -1.0]))
        top = mid * 500.0
        refused = raises(top.sum().backward, **kwargs)
        out[f"inside a graph{label}"] = {
            "backward": refused,
            "MulBackward above": _call_node(top.grad_fn, one2),
            "the node that raised": _call_node(node, one2),
            "ExpBackward below": _call_node(e.grad_fn, one2),
            "x.grad": _grad(x),
            "retry through another root": raises((mid * 0.5).sum().backward, **kwargs),
            "x.grad after the retry": _grad(x),
        }
    return out


@probe(category="retain-graph", weight=2, rtol=1e-9, atol=1e-12, hints=["retain-graph"])
def released_right_after_running(solution: ModuleType) -> dict[str, Any]:
    """While a backward runs, the nodes that already ran are released and the others are not: a node of the probe's own looks, when it runs.

    The node (an identity op) calls, while the engine runs it, nodes that
    send it gradients (so they ran before it, in any valid order) and a node
    below it (which cannot have run yet), and notes which raise the
    freed-graph RuntimeError. Without retain_graph each node is released
    right after it runs (rule 4), so those above are released and the one
    below is not. An engine that releases the nodes it ran only at the end of
    the pass, even in a ``finally`` (red team round 4), or one step late,
    leaves them holding their saved Variables meanwhile.
    """
    V = solution.Variable
    out: dict[str, Any] = {}

    class SpyBackward(solution.Node):
        def apply(self, grad_inputs: list[Any]) -> list[Any]:
            for name, (node, size) in self.watched.items():
                try:
                    node([V(np.ones(size))])
                except RuntimeError:
                    self.seen[name] = "released"
                else:
                    self.seen[name] = "kept"
            return [grad_inputs[0]]

    def spy(a: Any) -> tuple[Any, Any]:
        node = SpyBackward([a.gradient_edge()])
        node.watched, node.seen = {}, {}
        return _recorded(V(a.data), node), node

    for label, kwargs in _PASS_KINDS:
        x = V([0.3, -0.6, 1.2], requires_grad=True)
        c = V([1.5, 2.0, -0.5], requires_grad=True)
        e = x.exp()
        s, node = spy(e)
        t = s * c  # sends the spy its gradient: the last node to run before it
        u = t.sin()
        v = u * 2.0
        node.watched = {
            "MulBackward s * c (its producer)": (t.grad_fn, 3),
            "SinBackward": (u.grad_fn, 3),
            "MulBackward u * 2": (v.grad_fn, 3),
            "ExpBackward below": (e.grad_fn, 3),
        }
        failed = raises(v.sum().backward, **kwargs)
        out[f"a chain{label}"] = {"backward": failed, "seen while the spy ran": dict(node.seen), "x.grad": _grad(x), "c.grad": _grad(c)}

        y = V([0.8, -0.2], requires_grad=True)
        w = V([2.0, 0.5], requires_grad=True)
        yw = y * w
        s, node = spy(yw)
        t = s * s
        a1 = t.sin()
        a2 = t.cos()
        m = a2 * 3.0
        d = a1 + m
        node.watched = {
            "MulBackward s * s (its producer)": (t.grad_fn, 2),
            "SinBackward": (a1.grad_fn, 2),
            "CosBackward": (a2.grad_fn, 2),
            "MulBackward cos * 3": (m.grad_fn, 2),
            "MulBackward y * w below": (yw.grad_fn, 2),
        }
        failed = raises(d.sum().backward, **kwargs)
        out[f"a diamond above{label}"] = {"backward": failed, "seen while the spy ran": dict(node.seen), "y.grad": _grad(y), "w.grad": _grad(w)}
    return out


# ---------------------------------------------------------------- double-backward


@probe(category="double-backward", hints=["create-graph"])
def create_graph_controls_recording(solution: ModuleType) -> dict[str, Any]:
    """Gradients carry a graph exactly when create_graph=True, whatever the ambient grad mode."""
    x = solution.Variable([0.3, -1.1], requires_grad=True)
    (x.sin() * x).sum().backward()
    plain = {
        "requires_grad": bool(x.grad.requires_grad),
        "has grad_fn": x.grad.grad_fn is not None,
        "grad mode after": bool(solution.is_grad_enabled()),
    }
    x.grad = None
    f = (x.sin() * x).sum()
    with solution.no_grad():
        f.backward(create_graph=True)
        mode_inside = bool(solution.is_grad_enabled())
    recorded = {
        "requires_grad": bool(x.grad.requires_grad),
        "has grad_fn": x.grad.grad_fn is not None,
        "grad mode after, inside no_grad": mode_inside,
    }
    return {"create_graph=False": plain, "create_graph=True under no_grad": recorded}


@probe(category="double-backward", weight=2, rtol=1e-9, atol=1e-12, hints=["create-graph"])
def double_backward_mixed_partials(solution: ModuleType) -> dict[str, Any]:
    """Second derivatives, mixed partials included, through elementwise ops, broadcasting and matmul."""
    V = solution.Variable
    x = V([0.4, -0.7, 1.2], requires_grad=True)
    y = V([1.5, 0.5, -0.8], requires_grad=True)
    m = V([[0.5, -1.0, 0.25], [1.0, 0.5, -0.5]], requires_grad=True)
    n = V([[0.3, -0.2], [1.0, 0.4], [-0.6, 0.9]], requires_grad=True)
    f = (x.sin() * y * y + (x * y).exp() * 0.1 + x**3 / (y * y + 1.0)).sum()
    f = f + ((m * x) @ n).tanh().sum()  # m * x broadcasts (2, 3) with (3,)
    f.backward(create_graph=True)
    leaves = {"x": x, "y": y, "m": m, "n": n}
    first = {name: _grad(v) for name, v in leaves.items()}
    gx, gy, gm, gn = x.grad, y.grad, m.grad, n.grad
    for v in leaves.values():
        v.grad = None
    h = (gx * V([1.0, -0.5, 2.0])).sum() + (gy * gy).sum() + (gm * gm).sum() + gn.sum()
    h.backward()
    return {"first": first, "second": {name: _grad(v) for name, v in leaves.items()}}


# ---------------------------------------------------------------- scale


@probe(category="scale", weight=2, rtol=1e-9, atol=1e-12, hints=["recursion"], timeout=10)
def chain_of_ten_thousand_nodes(solution: ModuleType) -> dict[str, Any]:
    """A chain of 10,000 nodes, under Python's default recursion limit of 1000."""
    sys.setrecursionlimit(1000)
    x = solution.Variable([0.3, 0.7, 1.1], requires_grad=True)
    y = x
    for i in range(10_000):
        y = y.sin() if i % 2 == 0 else y * 1.0001
    y.sum().backward()
    return {"x.grad": _grad(x), "y": np.array(y.data)}


@probe(category="scale", rtol=1e-9, atol=1e-12, hints=["topo-order"], timeout=10)
def ladder_of_forty_diamonds(solution: ModuleType) -> dict[str, Any]:
    """Forty diamonds stacked: 2**40 paths, but only 160 nodes to run."""
    x = solution.Variable([0.5, -2.0, 3.0], requires_grad=True)
    a = x
    for _ in range(40):
        a = a * 0.5 + a.sin() * 0.5
    a.sum().backward()
    return {"x.grad": _grad(x)}


#: How deep the Python call stack may get during a backward, counted from the
#: call to backward itself: the statement's bound. The reference needs about a
#: dozen frames; an engine that recurses needs at least one per node of the
#: longest path.
_STACK_FRAMES = 200


def _watch_call_stack(run: Callable[[], Any], counted: tuple[Any, ...]) -> dict[str, Any]:
    """Run ``run()`` under a profile hook, with the recursion limit held at 1,000.

    The hook (sys.setprofile, and threading.setprofile for any thread started
    meanwhile) keeps a Python call depth per thread, relative to the frame that
    calls ``run``, and counts the calls of the code objects in ``counted``. It
    also notes what would hide a deep stack from it: a recursion limit other
    than 1,000 seen on any call, or a call of sys.setprofile, sys.settrace or
    the real sys.setrecursionlimit (sys.setrecursionlimit itself is replaced by
    a function that changes nothing while ``run`` runs), and whether it is
    still installed at the end. Returns what ``run`` raised and those findings.
    """
    real_setrecursionlimit = sys.setrecursionlimit
    getrecursionlimit = sys.getrecursionlimit
    get_ident = threading.get_ident
    set_profile, set_trace = sys.setprofile, sys.settrace
    depth: dict[int, int] = {}
    deepest = [0]
    limits_seen: set[int] = set()
    touched: list[str] = []
    calls = dict.fromkeys(counted, 0)
    watching = [True]  # until run() returns: the probe's own sys.setprofile(None) does not count

    def hook(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            tid = get_ident()
            d = depth.get(tid, 0) + 1
            depth[tid] = d
            if d > deepest[0]:
                deepest[0] = d
            code = frame.f_code
            if code in calls:
                calls[code] += 1
            limits_seen.add(getrecursionlimit())
        elif event == "return":
            tid = get_ident()
            depth[tid] = depth.get(tid, 0) - 1
        elif event == "c_call" and (arg is set_profile or arg is set_trace or arg is real_setrecursionlimit) and watching[0]:
            touched.append(arg.__name__)

    def held(limit: int) -> None:
        """sys.setrecursionlimit while the probe runs: the limit stays at 1,000."""

    real_setrecursionlimit(1000)
    sys.setrecursionlimit = held
    threading.setprofile(hook)
    sys.setprofile(hook)
    try:
        error = raises(run)
        watching[0] = False
        still_installed = sys.getprofile() is hook
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
        sys.setrecursionlimit = real_setrecursionlimit
        real_setrecursionlimit(1000)
    return {
        "error": error,
        "deepest": deepest[0],
        "calls": calls,
        "limits seen": limits_seen,
        "touched": touched,
        "still installed": still_installed,
    }


@probe(category="scale", weight=2, rtol=1e-9, atol=1e-12, hints=["recursion"], timeout=10)
def call_stack_stays_shallow(solution: ModuleType) -> dict[str, Any]:
    """A 3,000-node chain with the recursion limit held at 1,000, and the depth of the Python call stack during its backward.

    An engine that recurses and raises sys.setrecursionlimit for the duration
    of execute passes chain_of_ten_thousand_nodes (red team round 1, both in
    the topological sort and in the execution itself). Here the limit cannot
    be raised, and a profile hook measures the deepest Python call stack of
    the backward, from the call to backward: a non-recursive engine stays
    within a few dozen frames however long the chain, helpers, classes and
    generators included; a recursive one needs a frame or more per node. The
    hook also checks that it saw every node of the chain run, stayed
    installed, and that the recursion limit and the profile and trace hooks
    were left alone, so an engine cannot hide a deep stack from it.
    """
    x = solution.Variable([0.3, 0.7, 1.1], requires_grad=True)
    y = x
    for i in range(3_000):
        y = y.sin() if i % 2 == 0 else y * 1.0001
    loss = y.sum()
    sin_code = solution.SinBackward.apply.__code__
    mul_code = solution.MulBackward.apply.__code__
    seen = _watch_call_stack(loss.backward, (sin_code, mul_code))
    return {
        "backward raised": seen["error"],
        "x.grad": _grad(x),
        f"call stack within {_STACK_FRAMES} frames of backward": seen["deepest"] <= _STACK_FRAMES,
        "every node of the chain seen running once": seen["calls"][sin_code] == 1_500 and seen["calls"][mul_code] == 1_500,
        "recursion limit stayed 1000": seen["limits seen"] == {1000},
        "profile and trace hooks left alone": not seen["touched"] and seen["still installed"],
    }


# ---------------------------------------------------------------- state across calls

#: Padding slots of the probe's own node class (below). They give its instances a size that no
#: other object here has (376 bytes on CPython 3.11), so the memory of one that was collected,
#: and with it its id(), goes to the next one created.
_PADDING_SLOTS = 40


def _scale_op(solution: ModuleType) -> Callable[[Any, float], Any]:
    """``scale(a, factor)``: ``a * factor``, recorded by a node class of the probe's own, as a user's custom op is."""

    class ScaleBackward(solution.Node):
        __slots__ = ("factor", *(f"_pad{i}" for i in range(_PADDING_SLOTS)))

        def apply(self, grad_inputs: list[Any]) -> list[Any]:
            (g,) = grad_inputs
            return [g * self.factor]

    def scale(a: Any, factor: float) -> Any:
        out = solution.Variable(a.data * factor)
        node = ScaleBackward([a.gradient_edge()])
        node.factor = factor
        out.requires_grad, out.grad_fn, out.output_nr = True, node, 0
        return out

    return scale


def _model(solution: ModuleType, scale: Callable[[Any, float], Any], seed: int) -> dict[str, Any]:
    """Two parameters, a constant, and a scalar loss whose root is a ``scale`` node; the values are drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    V = solution.Variable
    x = V(rng.uniform(-1.0, 1.0, 3), requires_grad=True)
    w = V(rng.uniform(-1.0, 1.0, 3), requires_grad=True)
    c = V(rng.uniform(0.5, 1.5, 3))
    a = x * w
    body = (a.sin() * x + x.exp() * w).sum() + (x * c).tanh().sum()
    return {"x": x, "w": w, "c": c, "loss": scale(body, float(rng.uniform(0.5, 2.0)))}


def _take_grads(model: dict[str, Any]) -> dict[str, Any]:
    """The parameters' gradients (copies); both are then reset to None for the next pass."""
    out = {f"{name}.grad": _grad(model[name]) for name in ("x", "w")}
    model["x"].grad = model["w"].grad = None
    return out


@probe(category="correctness", weight=2, rtol=1e-9, atol=1e-12, hints=["state"])
def repeated_backwards(solution: ModuleType) -> dict[str, Any]:
    """Many backwards in one process: graphs changed in place between them, new graphs like earlier ones, graphs rebuilt after others were collected.

    Each step's gradients are compared with the reference's, which keeps
    nothing between calls. A retained graph is backwarded again after its
    parameters (an optimizer step), a constant it saved and the gradient
    handed in were changed in place; a new graph with the same ops, node
    types and shapes but other values is backwarded beside it; graphs are
    dropped, collected (gc.collect()) and rebuilt, half of them only
    retained, so that the new root node gets the id() of a collected one
    (the probe's own node class has a size of its own, and the probe checks
    that this happened); a pass that raises partway is followed by another
    through a node it never ran; and gradients the caller took from earlier
    passes must keep their values. A cache kept on the engine between calls
    (dependency counts keyed on the roots' id(), a node's outputs keyed on the
    node and its incoming gradient, a whole pass's leaf gradients replayed on
    a retained graph, input buffers that outlive a pass) gets a step wrong.
    """
    V = solution.Variable
    scale = _scale_op(solution)
    out: dict[str, Any] = {}

    first = _model(solution, scale, 9100)
    first["loss"].backward(retain_graph=True)
    kept = first["x"].grad  # the caller keeps it: later passes must leave it alone
    out["first pass"] = _take_grads(first)

    first["x"].data[...] -= 0.5 * kept.data  # an optimizer step, in place
    first["w"].data[...] *= -1.5
    first["loss"].backward(retain_graph=True)
    out["parameters changed in place"] = _take_grads(first)

    first["c"].data[...] = [2.0, -0.5, 0.25]  # a constant the graph saved
    first["loss"].backward(retain_graph=True)
    out["a saved constant changed in place"] = _take_grads(first)

    # A vector output: the gradient handed in is edited in place, then a new one is handed in.
    y = first["x"].sin() * first["w"] + first["c"]
    h = V([1.0, -2.0, 0.5])
    y.backward(h, retain_graph=True)
    out["vector output"] = _take_grads(first)
    h.data[...] = [0.25, 3.0, -1.0]
    y.backward(h, retain_graph=True)
    out["gradient handed in changed in place"] = _take_grads(first)
    y.backward(V([-1.5, 0.5, 2.0]), retain_graph=True)
    out["a new gradient of the same shape"] = _take_grads(first)

    first["loss"].backward(create_graph=True)
    kept_with_graph = first["w"].grad
    out["create_graph pass"] = _take_grads(first)

    # A look-alike: the same ops, node types and shapes with other values, beside the first graph.
    second = _model(solution, scale, 9200)
    second["loss"].backward(retain_graph=True)
    out["a new graph like the first"] = {**_take_grads(second), "first graph's x.grad": _grad(first["x"])}
    first["loss"].backward()
    out["the first graph again"] = _take_grads(first)
    second["loss"].backward()
    out["the new graph again"] = _take_grads(second)

    # Dropped, collected and rebuilt: each new root node may get the id() of an earlier one.
    collected: list[tuple[int, Any]] = []
    reused = 0
    del second, y, h
    for r in range(4):
        gc.collect()
        model = _model(solution, scale, 9300 + r)
        root = model["loss"].grad_fn
        reused += any(id(root) == old_id and ref() is None for old_id, ref in collected)
        model["loss"].backward(retain_graph=True)
        step = {"retained": _take_grads(model)}
        if r % 2:  # every other graph is released before it is dropped, the others only retained
            model["loss"].backward()
            step["released"] = _take_grads(model)
        out[f"rebuilt graph {r + 1}"] = step
        collected.append((id(root), weakref.ref(root)))
        del model, root
    gc.collect()
    if not reused and all(ref() is None for _, ref in collected):
        # Only the probe's own nodes have their size, so this means the interpreter's allocator
        # changed; an engine that holds on to the roots keeps their ids from being reused.
        raise AssertionError("probe error: no rebuilt root node reused a collected one's id")

    # A pass that raises partway leaves part of a gradient at a node it never ran; another pass runs that node.
    x = V([0.4, -1.2, 0.7], requires_grad=True)
    a = x * 2.0
    s = a.sin()
    loss = (a * s).sum()  # MulBackward sends to a's node and to SinBackward, which a's node waits for
    s.grad_fn.release_variables()
    failed = raises(loss.backward)
    (a * 3.0).sum().backward()
    out["after a failed pass"] = {"backward": failed, "x.grad through a node it never ran": _grad(x)}

    out["gradients taken from earlier passes"] = {
        "x.grad of the first pass": np.array(kept.data),
        "w.grad of the create_graph pass": np.array(kept_with_graph.data),
    }
    return out


# ---------------------------------------------------------------- nodes that raise or run a backward of their own


class _NodeFailure(Exception):
    """An exception class of the probe's own, raised by one of its nodes."""


@probe(category="correctness", weight=2, hints=["node-errors"])
def node_exceptions_pass_through_unchanged(solution: ModuleType) -> dict[str, Any]:
    """What a node raises leaves backward unchanged: the same exception object, of its own type, never wrapped in another.

    Nodes of the probe's own raise ValueError, KeyError, RuntimeError and an
    exception class of the probe's own, as the root's node and below other
    nodes, with and without create_graph. The exception the caller catches
    must be the very object the node raised (PyTorch lets a Function's
    exception through as it is). An engine that wraps it in a RuntimeError
    naming the node (red team round 4), raises a new one of the same type
    with more words, or swallows it and goes on, gets a case wrong. The
    caller's grad mode must be back after each.
    """
    V = solution.Variable

    class RaiseBackward(solution.Node):
        def apply(self, grad_inputs: list[Any]) -> list[Any]:
            raise self.error

    def raising(a: Any, error: BaseException) -> Any:
        node = RaiseBackward([a.gradient_edge()])
        node.error = error
        return _recorded(V(a.data * 2.0), node)

    out: dict[str, Any] = {}
    for error_label, make in (
        ("ValueError", lambda: ValueError("this op has no backward for these values")),
        ("KeyError", lambda: KeyError("missing")),
        ("RuntimeError", lambda: RuntimeError("a node's own RuntimeError")),
        ("the probe's own class", lambda: _NodeFailure("custom failure", 42)),
    ):
        for place in ("the root's node", "below other nodes"):
            for kwargs_label, kwargs in (("", {}), (", create_graph=True", {"create_graph": True})):
                x = V([0.5, -1.5], requires_grad=True)
                error = make()
                r = raising(x.sin(), error)
                loss = r.sum() if place == "the root's node" else (r.exp() * 3.0).sum() + x.sum()
                caught: BaseException | None = None
                try:
                    loss.backward(**kwargs) if place != "the root's node" else solution.backward([r], [V([1.0, 1.0])], **kwargs)
                except Exception as exc:  # noqa: BLE001 - what comes out is the observation
                    caught = exc
                out[f"{error_label}, {place}{kwargs_label}"] = {
                    "raised": None if caught is None else type(caught).__name__,
                    "the node's own exception object": caught is error,
                    "its args": None if caught is None else [str(a) for a in caught.args],
                    "grad mode": bool(solution.is_grad_enabled()),
                }
    return out


def _checkpoint_op(solution: ModuleType) -> Callable[[Callable[[Any], Any], Any], Any]:
    """``checkpoint(fn, a)``: ``fn(a)`` computed without a graph, whose node recomputes it and back-propagates through it with a backward of its own.

    That is torch.utils.checkpoint's reentrant form: the node's backward
    builds ``fn`` again on a detached copy of ``a`` with grad mode on, calls
    ``backward`` on it with the gradient it received, and returns the copy's
    ``.grad``. Leaves ``fn`` uses other than ``a`` (parameters) get their
    gradient from that inner backward directly.
    """

    class CheckpointBackward(solution.Node):
        def apply(self, grad_inputs: list[Any]) -> list[Any]:
            (g,) = grad_inputs
            with solution.enable_grad():
                a = solution.Variable(self.input.data, requires_grad=True)
                result = self.fn(a)
                solution.backward([result], [solution.Variable(g.data)])
            return [a.grad]

    def checkpoint(fn: Callable[[Any], Any], a: Any) -> Any:
        if not (solution.is_grad_enabled() and a.requires_grad):
            return fn(a)  # nothing to record: the forward of a checkpoint inside a checkpoint
        with solution.no_grad():
            value = fn(solution.Variable(a.data))
        node = CheckpointBackward([a.gradient_edge()])
        node.input, node.fn = a, fn
        return _recorded(solution.Variable(value.data), node)

    return checkpoint


@probe(category="correctness", weight=2, rtol=1e-9, atol=1e-12, hints=["reentrant", "state"])
def reentrant_backward_inside_a_node(solution: ModuleType) -> dict[str, Any]:
    """A node that runs a backward of its own while the engine runs it (checkpointing): the inner backward completes, and the outer one goes on.

    A node of the probe's own recomputes its op and calls backward on it, as
    torch.utils.checkpoint does, while the outer backward has nodes still
    waiting and gradients still buffered. Each call of execute must keep its
    pass's state to itself. An engine that keeps the pass's counts, buffers or
    ready queue on the engine object (red team round 4) and resets them at
    the start of each call loses the outer pass when the inner one starts:
    the outer nodes still waiting never run. Checkpoints nest (a checkpointed
    function that checkpoints again), parameters inside them get gradients
    from both passes, a retained graph is run twice, and a backward called
    under no_grad gets its grad mode back off, whatever the inner pass did.
    """
    V = solution.Variable
    checkpoint = _checkpoint_op(solution)
    out: dict[str, Any] = {}

    x = V([0.3, -0.9, 1.2], requires_grad=True)
    w = V([1.5, 0.5, -1.0], requires_grad=True)
    h = x.sin()
    c = checkpoint(lambda a: (a * a).tanh() * a, h * w)
    (c.sum() + (h * 2.0).sum() + w.exp().sum()).backward()  # h's node and both leaves still wait when the checkpoint runs
    out["the outer pass waits on both sides"] = {"x.grad": _grad(x), "w.grad": _grad(w)}

    x = V([0.4, 1.1], requires_grad=True)
    p = V([2.0, -0.5], requires_grad=True)
    c = checkpoint(lambda a: (a * p).sin() * p, x.exp())
    (c.sum() + (p * p * x).sum()).backward()
    out["a parameter inside the checkpoint and outside"] = {"x.grad": _grad(x), "p.grad": _grad(p)}

    x = V([0.2, -0.6, 0.8], requires_grad=True)
    q = V([1.2, 0.7, -0.4], requires_grad=True)
    c = checkpoint(lambda a: checkpoint(lambda b: b.sin() * b, a * q).exp() + a, x * 1.5)
    (c * x).sum().backward()
    out["a checkpoint inside a checkpoint"] = {"x.grad": _grad(x), "q.grad": _grad(q)}

    x = V([0.5, -0.25], requires_grad=True)
    c = checkpoint(lambda a: a.exp() * a, x.cos())
    loss = (c * x).sum() + x.tanh().sum()
    loss.backward(retain_graph=True)
    once = _grad(x)
    loss.backward()
    out["a retained graph run twice"] = {"x.grad 1": once, "x.grad 2": _grad(x), "again": raises(loss.backward)}

    # The caller's grad mode is off: each pass restores its own caller's mode, the outer one off.
    x = V([0.9, -0.4], requires_grad=True)
    c = checkpoint(lambda a: a.sin() * a, x * 2.0)
    loss = (c * c).sum()
    with solution.no_grad():
        failed = raises(loss.backward)
        mode = bool(solution.is_grad_enabled())
    out["called under no_grad"] = {"backward": failed, "grad mode after it": mode, "x.grad": _grad(x)}
    return out
