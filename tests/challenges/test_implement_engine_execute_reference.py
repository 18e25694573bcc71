"""Cross-check the implement-engine-execute reference against torch.autograd.

The package's probes compare a candidate with the reference, so the
reference must be right. These tests load reference/solution.py in-process
and build the same graphs with it and with torch (float64): gradients,
accumulation across calls, the retain_graph error, create_graph and double
(and triple) backward must agree. Random graphs are generated once as a
program of instructions and interpreted by both frameworks, so the graphs are
identical by construction.

The last test checks that every solution file of the package imports the
framework from given/autograd.py, copies none of it and hands over its engine.
"""

from __future__ import annotations

import ast
import importlib.util
import itertools
import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
import torch

from grader.package_load import load_package_dir

PACKAGE = Path(__file__).resolve().parents[2] / "challenges" / "framework-internals" / "implement-engine-execute"
FREED = "Trying to backward through the graph a second time"
_names = itertools.count()


def _load(path: Path) -> ModuleType:
    """Import a solution file as a fresh module, with a fresh given.autograd (its grad mode, counters and engine are its own).

    The package folder on sys.path makes given/ a namespace package, as the
    statement tells candidates to run it locally; the sandbox imports the
    same files as given.<name> from the job.
    """
    for name in [n for n in sys.modules if n == "given" or n.startswith("given.")]:
        del sys.modules[name]
    sys.path.insert(0, str(PACKAGE))
    try:
        spec = importlib.util.spec_from_file_location(f"engine_solution_{next(_names)}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(PACKAGE))
        for name in [n for n in sys.modules if n == "given" or n.startswith("given.")]:
            del sys.modules[name]  # the module keeps its own copy; the next load gets another
    return module


@pytest.fixture
def ref() -> ModuleType:
    return _load(PACKAGE / "reference" / "solution.py")


# ---------------------------------------------------------------- two frameworks, one interface


class Lib:
    """What differs between the mini framework and torch, behind one interface."""

    def __init__(self, module: ModuleType | None) -> None:
        self.module = module  # None means torch

    def leaf(self, array: np.ndarray, requires_grad: bool = True) -> Any:
        if self.module is None:
            return torch.tensor(array, dtype=torch.float64, requires_grad=requires_grad)
        return self.module.Variable(array, requires_grad=requires_grad)

    def cat(self, pieces: list[Any]) -> Any:
        return torch.cat(pieces) if self.module is None else self.module.cat(pieces)

    def sum_rows(self, t: Any) -> Any:
        """Sum a (rows, n) value down to (n,)."""
        return t.sum(0) if self.module is None else self.module.sum_to(t, t.shape[1:])

    def backward(self, tensors: list[Any], grads: list[Any] | None = None, **kwargs: Any) -> None:
        if self.module is None:
            torch.autograd.backward(tensors, grads, **kwargs)
        else:
            self.module.backward(tensors, grads, **kwargs)


def _values(t: Any) -> np.ndarray | None:
    """The values of a framework Variable or a torch tensor (None stays None)."""
    if t is None:
        return None
    if isinstance(t, torch.Tensor):
        return t.detach().numpy().copy()
    return np.array(t.data)


def _grads(leaves: list[Any]) -> list[np.ndarray | None]:
    return [_values(leaf.grad) for leaf in leaves]


def assert_same(ours: Any, theirs: Any, what: str = "value") -> None:
    """Float64 agreement, tolerant only of a different order of summation."""
    if ours is None or theirs is None:
        assert ours is None and theirs is None, f"{what}: {ours!r} vs {theirs!r}"
        return
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.shape == theirs.shape, f"{what}: shape {ours.shape} vs {theirs.shape}"
    scale = max(1.0, float(np.abs(theirs).max(initial=0.0)))
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12 * scale, err_msg=what)


def assert_all_same(ours: list[Any], theirs: list[Any], what: str) -> None:
    assert len(ours) == len(theirs)
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        assert_same(a, b, f"{what}[{i}]")


# ---------------------------------------------------------------- random graphs


N_KINDS = 16


def _program(seed: int, n_ops: int) -> dict[str, Any]:
    """A random graph as data: leaf values and (kind, operand, operand) instructions."""
    rng = np.random.default_rng(seed)
    data = {
        "x": [rng.normal(size=4) for _ in range(3)],
        "c": rng.normal(size=4),
        "M": rng.normal(size=(3, 4)) * 0.5,
        "N": rng.normal(size=(4, 4)) * 0.5,
        "ops": [],
    }
    size = 4  # x0, x1, x2, c
    for _ in range(n_ops):
        # Operands mostly among the newest values: many shared subexpressions.
        a = size - 1 - min(int(rng.geometric(0.35)) - 1, size - 1)
        b = size - 1 - min(int(rng.geometric(0.35)) - 1, size - 1)
        data["ops"].append((int(rng.integers(N_KINDS)), a, b))
        size += 1
    return data


def _apply(lib: Lib, kind: int, a: Any, b: Any, M: Any, N: Any) -> Any:
    """One instruction; every result has shape (4,) and stays bounded."""
    if kind == 0:
        return a + b
    if kind == 1:
        return a - b * 0.5
    if kind == 2:
        return (a * b).tanh()
    if kind == 3:
        return a.sin()
    if kind == 4:
        return a.cos() * 0.7
    if kind == 5:
        return a * b.tanh().exp()
    if kind == 6:
        return -a
    if kind == 7:
        return a / (b * b + 1.0)
    if kind == 8:
        return (a * a + 1.0).log()
    if kind == 9:
        return a.tanh() ** 3
    if kind == 10:
        p, q = a.chunk(2)
        return lib.cat([q * 2.0, p.sin()])
    if kind == 11:
        p, q, r = a.split([1, 2, 1])  # r is used, q twice, all through one node
        return lib.cat([r, p * q.sum(), q.cos()])
    if kind == 12:
        return lib.sum_rows(((M * a.tanh()) @ N).tanh()) * 0.3  # broadcasting and matmul
    if kind == 13:
        return 1.5 - a / (1.0 + b * b)
    if kind == 14:
        return 2.0 / (a * a + 1.0)
    return (a * 0.5) ** 2 + b.tanh()


def _build(lib: Lib, program: dict[str, Any]) -> tuple[list[Any], Any]:
    """Interpret a program; returns (leaves that require grad, scalar loss)."""
    xs = [lib.leaf(v) for v in program["x"]]
    M, N = lib.leaf(program["M"]), lib.leaf(program["N"])
    pool = [*xs, lib.leaf(program["c"], requires_grad=False)]
    for kind, i, j in program["ops"]:
        pool.append(_apply(lib, kind, pool[i], pool[j], M, N))
    loss = (pool[-1] * pool[-2]).sum() + pool[-3].sum() + (xs[0] * xs[1] * xs[2]).sum() * 0.1 + (M @ N).sum() * 0.01
    return [*xs, M, N], loss


SEEDS = list(range(25))


@pytest.mark.parametrize("seed", SEEDS)
def test_random_graph_gradients_match_torch(ref: ModuleType, seed: int) -> None:
    program = _program(seed, n_ops=50)
    ours_leaves, ours_loss = _build(Lib(ref), program)
    torch_leaves, torch_loss = _build(Lib(None), program)
    assert_same(_values(ours_loss), _values(torch_loss), "loss")
    ours_loss.backward()
    torch_loss.backward()
    assert_all_same(_grads(ours_leaves), _grads(torch_leaves), f"seed {seed} grads")
    assert all(leaf.grad is not None and not leaf.grad.requires_grad for leaf in ours_leaves)


@pytest.mark.parametrize("seed", SEEDS[:12])
def test_random_graph_double_backward_matches_torch(ref: ModuleType, seed: int) -> None:
    program = _program(seed, n_ops=30)
    rng = np.random.default_rng(1000 + seed)

    ours_leaves, ours_loss = _build(Lib(ref), program)
    ours_loss.backward(create_graph=True)
    first = [leaf.grad for leaf in ours_leaves]
    assert all(g.requires_grad for g in first), "create_graph=True must give gradients with a graph"
    weights = [rng.normal(size=leaf.shape) for leaf in ours_leaves]
    for leaf in ours_leaves:
        leaf.grad = None
    h = sum((g * w).sum() for g, w in zip(first, weights, strict=True)) + (first[0] * first[0]).sum()
    h.backward()
    ours_second = [np.zeros(leaf.shape) if leaf.grad is None else _values(leaf.grad) for leaf in ours_leaves]

    torch_leaves, torch_loss = _build(Lib(None), program)
    torch_first = torch.autograd.grad(torch_loss, torch_leaves, create_graph=True)
    th = sum((g * torch.from_numpy(w)).sum() for g, w in zip(torch_first, weights, strict=True)) + (torch_first[0] ** 2).sum()
    torch_second = torch.autograd.grad(th, torch_leaves, allow_unused=True)
    torch_second_values = [np.zeros(tuple(leaf.shape)) if g is None else _values(g) for leaf, g in zip(torch_leaves, torch_second, strict=True)]

    assert_all_same([_values(g) for g in first], [_values(g) for g in torch_first], f"seed {seed} first-order")
    assert_all_same(ours_second, torch_second_values, f"seed {seed} second-order")


def test_third_derivatives_match_torch(ref: ModuleType) -> None:
    """create_graph twice in a row: d3/dx3 of sum(sin(x) * x**4)."""
    data = np.array([0.3, -1.2, 2.1])

    def f(x: Any) -> Any:
        return (x.sin() * x**4).sum()

    x = ref.Variable(data, requires_grad=True)
    f(x).backward(create_graph=True)
    g1 = x.grad
    x.grad = None
    g1.sum().backward(create_graph=True)
    g2 = x.grad
    x.grad = None
    g2.sum().backward()
    ours = [_values(g1), _values(g2), _values(x.grad)]

    t = torch.tensor(data, requires_grad=True)
    (t1,) = torch.autograd.grad(f(t), t, create_graph=True)
    (t2,) = torch.autograd.grad(t1.sum(), t, create_graph=True)
    (t3,) = torch.autograd.grad(t2.sum(), t)
    assert_all_same(ours, [_values(t1), _values(t2), _values(t3)], "derivatives 1..3")


# ---------------------------------------------------------------- roots, accumulation, retain_graph


def test_several_roots_with_grad_outputs_match_torch(ref: ModuleType) -> None:
    """A root on the path of another, a leaf root, and the same root twice."""
    results = []
    for lib in (Lib(ref), Lib(None)):
        x = lib.leaf(np.array([0.4, -0.9, 1.3]))
        w = lib.leaf(np.array([1.1, 0.2, -0.5]))
        y1 = x.sin() * w
        y2 = (y1 * y1).sum()
        g1, g2, g3 = (lib.leaf(np.asarray(v, dtype=float), requires_grad=False) for v in ([1.0, -2.0, 0.5], 3.0, [0.25, 0.5, 0.75]))
        lib.backward([y1, y2, x], [g1, g2, g3])
        z = lib.leaf(np.array([2.0, -0.5]))
        out = z.exp() * z
        h1, h2 = (lib.leaf(np.array(v), requires_grad=False) for v in ([1.0, 1.0], [0.5, -4.0]))
        lib.backward([out, out], [h1, h2])
        results.append([*_grads([x, w, z]), _values(g1), _values(h1)])
    assert_all_same(results[0], results[1], "grads and untouched grad_outputs")


def test_pieces_of_a_split_as_roots_match_torch(ref: ModuleType) -> None:
    """Roots that are outputs 1 and 2 of one split node, one of them also on the path from another root."""
    results = []
    for lib in (Lib(ref), Lib(None)):
        x = lib.leaf(np.linspace(-1.2, 1.6, 6))
        a, b, c = x.chunk(3)
        f = (a * b.sin()).sum()
        grads = [lib.leaf(np.asarray(v, dtype=float), requires_grad=False) for v in ([1.0, -2.0], [0.5, 0.25], 1.5)]
        lib.backward([c, b, f], grads)
        results.append(_grads([x]))
    assert_all_same(results[0], results[1], "x.grad")


def test_create_graph_with_retain_graph_false_releases_like_torch(ref: ModuleType) -> None:
    """retain_graph=False wins over create_graph=True: the forward graph is freed, the gradient's own graph is not."""
    observed = []
    for lib in (Lib(ref), Lib(None)):
        x = lib.leaf(np.array([0.5, 1.0, -1.5]))
        f = (x**3 + x.sin() * 2.0).sum()
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Using backward\\(\\) with create_graph=True", category=UserWarning)
            f.backward(create_graph=True, retain_graph=False)
        g = x.grad
        assert g.requires_grad
        with pytest.raises(RuntimeError, match=FREED):
            f.backward()
        x.grad = None
        g.sum().backward()
        observed.append([_values(g), _values(x.grad)])
    assert_all_same(observed[0], observed[1], "first and second derivatives")


def test_grad_outputs_that_require_grad_are_recorded_like_torch(ref: ModuleType) -> None:
    """Under no_grad, create_graph=True still records the seeds: the vector of a vector-Jacobian product gets a gradient."""
    observed = []
    for module in (ref, None):
        lib = Lib(module)
        x = lib.leaf(np.array([0.4, -0.7, 1.2]))
        v = lib.leaf(np.array([1.5, -0.5, 2.0]))
        y = x.sin() * x
        seeds = [v, v * 0.5]
        context = ref.no_grad if module is not None else _torch_no_grad
        with context(), warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Using backward\\(\\) with create_graph=True", category=UserWarning)
            lib.backward([y, y], seeds, create_graph=True)
        g = x.grad
        x.grad = None
        (g * g).sum().backward()
        observed.append([_values(g), *_grads([v, x])])
    assert_all_same(observed[0], observed[1], "g, v.grad, x.grad")


def test_accumulation_and_retain_graph_match_torch(ref: ModuleType) -> None:
    """Two retained passes, a releasing one, then one too many; then accumulation over graphs."""
    observed = []
    for lib in (Lib(ref), Lib(None)):
        x = lib.leaf(np.array([0.5, 1.0, -1.5]))
        w = lib.leaf(np.array([2.0, -0.5, 1.0]))
        f = (x.exp() * w + x.sin()).sum()
        steps = []
        for retain in (True, True, False):
            f.backward(retain_graph=retain)
            steps += _grads([x, w])
        with pytest.raises(RuntimeError, match=FREED):
            f.backward()
        (x * x).sum().backward()
        (x.tanh() * w).sum().backward()
        steps += _grads([x, w])
        x.grad = None
        (x * 3.0).sum().backward()
        steps += _grads([x])
        observed.append(steps)
    assert_all_same(observed[0], observed[1], "grads after each step")


def test_only_the_nodes_a_backward_ran_are_released(ref: ModuleType) -> None:
    observed = []
    for lib in (Lib(ref), Lib(None)):
        x = lib.leaf(np.array([0.1, 0.9, -0.6]))
        y = lib.leaf(np.array([1.2, -0.3, 0.8]))
        shared = x.exp()
        z = (shared * 2.0).sum()
        w = (shared * y).sum()
        other = (x * y).tanh().sum()
        z.backward()
        first = _values(x.grad)
        with pytest.raises(RuntimeError, match=FREED):
            w.backward()
        x.grad = None
        y.grad = None
        other.backward()
        observed.append([first, *_grads([x, y])])
    assert_all_same(observed[0], observed[1], "released subgraph")
    assert ref.is_grad_enabled(), "grad mode must be restored after a failed backward"


def test_a_node_that_saved_nothing_survives_release_like_torch(ref: ModuleType) -> None:
    """Sum and add save no tensors: PyTorch lets them run again, and so does the framework."""
    for lib in (Lib(ref), Lib(None)):
        x = lib.leaf(np.array([1.0, 2.0]))
        f = (x + 1.0).sum()
        f.backward()
        f.backward()  # no saved tensors were freed, so no error
        assert_same(_values(x.grad), [2.0, 2.0], "x.grad after two passes")


# ---------------------------------------------------------------- grad mode and create_graph


@contextmanager
def _torch_no_grad() -> Iterator[None]:
    with torch.no_grad():
        yield


@pytest.mark.parametrize("ambient", ["enabled", "no_grad"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_create_graph_decides_recording_like_torch(ref: ModuleType, ambient: str, create_graph: bool) -> None:
    """Whatever the caller's grad mode, gradients carry a graph exactly when create_graph is set."""
    flags = []
    for module in (ref, None):
        lib = Lib(module)
        x = lib.leaf(np.array([0.3, -1.1]))
        f = (x.sin() * x).sum()
        context: Callable[[], Any]
        if ambient == "enabled":
            context = _null
        else:
            context = ref.no_grad if module is not None else _torch_no_grad
        with context(), warnings.catch_warnings():
            # torch warns that .grad with a graph makes a reference cycle; that is the point here.
            warnings.filterwarnings("ignore", message="Using backward\\(\\) with create_graph=True", category=UserWarning)
            f.backward(create_graph=create_graph)
            mode_inside = ref.is_grad_enabled() if module is not None else torch.is_grad_enabled()
        flags.append((bool(x.grad.requires_grad), x.grad.grad_fn is not None, mode_inside))
    assert flags[0] == flags[1], f"framework {flags[0]} vs torch {flags[1]}"
    assert flags[0][0] is create_graph


@contextmanager
def _null() -> Iterator[None]:
    yield


# ---------------------------------------------------------------- multi-output nodes and scale


def test_split_with_unused_and_reused_pieces_matches_torch(ref: ModuleType) -> None:
    """Multi-output node, first and second order, including a piece nobody uses."""
    data = np.linspace(-1.0, 1.5, 12).reshape(6, 2)
    observed = []
    for lib in (Lib(ref), Lib(None)):
        x = lib.leaf(data)
        a, _b, c = x.split([2, 1, 3])
        f = (a * a).sum() + (a.sin() * 3.0).sum() + (c.exp() * c).sum()
        if lib.module is None:
            (g,) = torch.autograd.grad(f, x, create_graph=True)
            (gg,) = torch.autograd.grad((g * g).sum(), x)
        else:
            f.backward(create_graph=True)
            g = x.grad
            x.grad = None
            (g * g).sum().backward()
            gg = x.grad
        observed.append([_values(g), _values(gg)])
    assert_all_same(observed[0], observed[1], "split gradients")


def test_ten_thousand_node_chain_under_default_recursion_limit(ref: ModuleType) -> None:
    data = np.array([0.3, 0.7, 1.1])
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        x = ref.Variable(data, requires_grad=True)
        y = x
        for i in range(10_000):
            y = y.sin() if i % 2 == 0 else y * 1.0001
        y.sum().backward()
    finally:
        sys.setrecursionlimit(limit)
    t = torch.tensor(data, requires_grad=True)
    u = t
    for i in range(10_000):
        u = u.sin() if i % 2 == 0 else u * 1.0001
    u.sum().backward()
    assert_same(_values(x.grad), _values(t.grad), "chain gradient")
    assert float(np.abs(_values(x.grad)).min()) > 0


def test_ladder_of_diamonds_runs_each_node_once(ref: ModuleType) -> None:
    """2**40 paths: only an engine that runs each node once finishes, and with torch's values."""
    observed = []
    for lib in (Lib(ref), Lib(None)):
        x = lib.leaf(np.array([0.5, -2.0, 3.0]))
        a = x
        for _ in range(40):
            a = a * 0.5 + a.sin() * 0.5
        a.sum().backward()
        observed.append(_values(x.grad))
    assert_same(observed[0], observed[1], "ladder gradient")


# ---------------------------------------------------------------- package consistency


def _solution_files(folder: Path) -> list[Path]:
    """The starter, the reference and every shipped solution (a .patch materialised into ``folder``)."""
    package = load_package_dir(PACKAGE)
    shipped = []
    for solution in package.solutions:
        path = folder / f"{solution.name}.py"
        path.write_bytes(package.solution_code(solution.name))
        shipped.append(path)
    return [PACKAGE / "starter" / "solution.py", PACKAGE / "reference" / "solution.py", *shipped]


def test_every_solution_file_uses_the_given_framework_and_copies_none_of_it(tmp_path: Path) -> None:
    """The framework is given/autograd.py, once: solution files define only their engine and hand it over."""
    framework_names = set(_given_all())
    paths = _solution_files(tmp_path)
    assert len(paths) >= 7
    for path in paths:
        name = path.relative_to(PACKAGE) if path.is_relative_to(PACKAGE) else path.name
        tree = ast.parse(path.read_text())
        defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
        assert not defined & framework_names, f"{name} redefines {sorted(defined & framework_names)}"
        module = _load(path)
        assert module.Variable.__module__ == "given.autograd", name
        autograd = module.backward.__globals__  # this load's own given.autograd
        assert isinstance(autograd["_engine"], module.Engine), f"{name} does not call set_engine(Engine())"


def _given_all() -> list[str]:
    tree = ast.parse((PACKAGE / "given" / "autograd.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return list(ast.literal_eval(node.value))
    raise AssertionError("given/autograd.py has no __all__")
