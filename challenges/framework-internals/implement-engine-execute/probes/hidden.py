"""Hidden probes for implement-engine-execute: they make the score.

Each probe builds a graph with the framework in the candidate's solution.py
and observes ``.grad`` values, raised exception names and flags. The
expected observations are the reference's; float values are float64 and
compared with rtol=1e-9, atol=1e-12 (different, equally valid orders of
summation stay far inside that).
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

import numpy as np
from probekit import probe, raises


def _grad(v: Any) -> np.ndarray | None:
    """The values of ``v.grad`` (a copy), or None when no gradient was accumulated."""
    return None if v.grad is None else np.array(v.grad.data, dtype=np.float64)


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
