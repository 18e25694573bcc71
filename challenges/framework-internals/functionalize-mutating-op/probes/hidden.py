"""Hidden probes for functionalize-mutating-op: they make the score.

Three categories:

- ``eager``: the two operators and ``RunningMean`` called directly, values
  compared with the reference's.
- ``compile``: the same under ``torch.compile(fullgraph=True,
  backend="aot_eager")``, where an undeclared mutation is silently dropped,
  plus opcheck's ``test_faketensor`` and ``test_aot_dispatch_dynamic``.
- ``aliasing``: who shares memory with whom: the in-place result seen through
  views, ``RunningMean``'s buffer (still the same tensor in the same memory
  after training, seen through references taken before), the functional
  result's fresh storage, ``ema_trajectory``'s states (values and storages),
  the schemas (arguments and alias annotations) and opcheck's ``test_schema``.

Every probe calls the operators through the dispatcher
(``torch.ops.interview...``). A probe whose target is missing or raises
returns the exception's class name, so the candidate sees a mismatch rather
than a crash.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from probekit import probe


def randn(*shape: int, dtype: torch.dtype = torch.float32, seed: int = 0) -> torch.Tensor:
    """Seeded normal samples, independent of the global generator."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=gen, dtype=torch.float64).to(dtype)


def ema_(avg: torch.Tensor, value: torch.Tensor, decay: float) -> Any:
    return torch.ops.interview.ema_update_(avg, value, decay)


def ema(avg: torch.Tensor, value: torch.Tensor, decay: float) -> torch.Tensor:
    return torch.ops.interview.ema_update(avg, value, decay)


def root_error(exc: BaseException) -> str:
    """The innermost exception's class name (torch.compile wraps the real one)."""
    while exc.__cause__ is not None or exc.__context__ is not None:
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return type(exc).__name__


def guarded(fn: Callable[[], dict[str, Any]], keys: tuple[str, ...]) -> dict[str, Any]:
    """fn()'s observation with an "error": None entry, or the error with every key None."""
    try:
        return {"error": None, **fn()}
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        return {"error": root_error(exc), **dict.fromkeys(keys)}


def error_name(fn: Callable[[], Any]) -> str:
    """Run fn; "ok" if it returned, else the class name of what it raised."""
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the failure is the observation
        return type(exc).__name__
    return "ok"


def opcheck_table(op_name: str, samples: dict[str, tuple[Any, ...]], tests: tuple[str, ...]) -> dict[str, dict[str, str]]:
    """opcheck each sample with each test, one at a time, so one failure hides no other."""

    def run(args: tuple[Any, ...], test: str) -> None:
        op = getattr(torch.ops.interview, op_name).default
        torch.library.opcheck(op, args, test_utils=test)

    return {
        name: {test: error_name(lambda args=args, test=test: run(args, test)) for test in tests}
        for name, args in samples.items()
    }


def compiled(fn: Callable[..., Any], **opts: Any) -> Callable[..., Any]:
    return torch.compile(fn, fullgraph=True, backend="aot_eager", **opts)


def shares_memory(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


BUFFER_KEYS = (
    "same tensor object",
    "same memory",
    "a reference taken before",
    "a state_dict taken before",
    "a view taken before",
    "still the registered buffer",
)


def buffer_facts(module: Any, fn: Callable[[torch.Tensor], torch.Tensor], seed: int) -> dict[str, Any]:
    """Train through fn for three steps, then ask whether module.running is still the buffer it was.

    Whoever holds the buffer (an optimizer, an EMA helper, DDP's buffer sync, a
    checkpoint's state_dict) holds the tensor object or its memory. An update
    that rebinds the attribute or swaps the storage leaves them with old values.
    """
    before = module.running
    address = before.data_ptr()
    saved = module.state_dict()["running"]  # shares the buffer's memory
    view = before[1:]
    for i in range(3):
        fn(randn(6, before.shape[0], seed=seed + i))
    after = module.running
    return {
        "same tensor object": after is before,
        "same memory": after.data_ptr() == address,
        "a reference taken before": before.clone(),
        "a state_dict taken before": saved.clone(),
        "a view taken before": view.clone(),
        "still the registered buffer": dict(module.named_buffers()).get("running") is after,
    }


# ---------------------------------------------------------------- eager


@probe(category="eager", rtol=1e-12, atol=1e-12)
def eager_inplace_float64(solution: Any) -> dict[str, Any]:
    """Eager ema_update_ on a float64 (3, 4) tensor: returns None, avg updated twice; and decays above 1 and below 0.

    ``decay`` is any float: the formula holds as written outside [0, 1] too.
    """
    avg = randn(3, 4, dtype=torch.float64, seed=1)
    returned = ema_(avg, randn(3, 4, dtype=torch.float64, seed=2), 0.75)
    ema_(avg, randn(3, 4, dtype=torch.float64, seed=3), 0.5)

    def outside() -> dict[str, Any]:
        other = randn(5, dtype=torch.float64, seed=4)
        ema_(other, randn(5, dtype=torch.float64, seed=5), 1.25)
        ema_(other, randn(5, dtype=torch.float64, seed=6), -0.5)
        return {"avg": other}

    return {"returned": returned, "avg": avg, "decays outside [0, 1]": guarded(outside, ("avg",))}


FUNCTIONAL_VALUE_CASES = (
    # (key, avg, value, decay): avg and value built from seeds, shapes and dtypes below
    (str(torch.float32), lambda: randn(2, 3, 5, seed=10), lambda: randn(2, 3, 5, seed=20), 0.9),
    (str(torch.float64), lambda: randn(7, dtype=torch.float64, seed=11), lambda: randn(7, dtype=torch.float64, seed=21), 0.9),
    # 0-d tensors: a scalar tensor, and one element of a larger tensor (a 0-d view)
    ("0-d float32", lambda: randn(1, seed=12)[0].clone(), lambda: randn(1, seed=22)[0].clone(), 0.6),
    ("0-d element view, float64", lambda: randn(3, 4, dtype=torch.float64, seed=13)[1, 2], lambda: randn(1, dtype=torch.float64, seed=23)[0], 0.8),
    # decay is any float: the formula holds as written outside [0, 1]
    ("decay above 1, float32", lambda: randn(4, 3, seed=14), lambda: randn(4, 3, seed=24), 1.5),
    ("decay below 0, float64", lambda: randn(6, dtype=torch.float64, seed=15), lambda: randn(6, dtype=torch.float64, seed=25), -0.25),
)


@probe(category="eager", rtol=1e-6, atol=1e-6, hints=["functional-op"])
def eager_functional_values(solution: Any) -> dict[str, Any]:
    """Eager ema_update: values (shape and dtype included), inputs unchanged.

    float32 (2, 3, 5) and float64 (7,); 0-d tensors (a scalar tensor and a 0-d
    element view of a larger tensor, whose result is 0-d too); decays above 1
    and below 0, where the formula holds as written.
    """

    def one(make_avg: Callable[[], torch.Tensor], make_value: Callable[[], torch.Tensor], decay: float) -> dict[str, Any]:
        avg, value = make_avg(), make_value()
        avg0, value0 = avg.clone(), value.clone()
        y = ema(avg, value, decay)
        return {
            "y": y,
            "avg unchanged": bool(torch.equal(avg, avg0)),
            "value unchanged": bool(torch.equal(value, value0)),
        }

    def run() -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, make_avg, make_value, decay in FUNCTIONAL_VALUE_CASES[:2]:
            out[key] = one(make_avg, make_value, decay)
        return out

    # the cases the first two do not cover answer one by one, so one error hides no other
    extra = {
        key: guarded(lambda a=make_avg, v=make_value, d=decay: one(a, v, d), ("y", "avg unchanged", "value unchanged"))
        for key, make_avg, make_value, decay in FUNCTIONAL_VALUE_CASES[2:]
    }
    return {**guarded(run, (str(torch.float32), str(torch.float64))), **extra}


@probe(category="eager", rtol=1e-6, atol=1e-6)
def eager_running_mean(solution: Any) -> dict[str, Any]:
    """RunningMean: three training steps then one eval step, outputs and buffer; two steps with the default decay;
    and two training steps with backward on inputs that require grad.

    The default module is built without ``decay``, so a default other than
    the given 0.9 changes its buffer.
    """
    torch.manual_seed(0)
    module = solution.RunningMean(5, decay=0.8)
    outputs = [module(randn(4, 5, seed=40 + i)) for i in range(3)]
    module.eval()
    outputs.append(module(randn(4, 5, seed=43)))
    default = solution.RunningMean(3)
    default_outputs = [default(randn(4, 3, seed=44 + i)) for i in range(2)]

    def with_grad() -> dict[str, Any]:
        # a layer's input in training normally requires grad: x - running backpropagates
        # to x, and the buffer update stays out of the graph
        layer = solution.RunningMean(3, decay=0.5)
        outs, grads = [], []
        for i in range(2):
            x = randn(5, 3, seed=46 + i).requires_grad_()
            y = layer(x)
            (y * randn(5, 3, seed=48 + i)).sum().backward()
            outs.append(y.detach().clone())
            grads.append(x.grad)
        return {
            "outputs": outs,
            "x.grad": grads,
            "running": layer.running.detach().clone(),
            "running requires grad": bool(layer.running.requires_grad),
        }

    return {
        "outputs": outputs,
        "running": module.running.clone(),
        "default decay: outputs": default_outputs,
        "default decay: running": default.running.clone(),
        "input requiring grad": guarded(with_grad, ("outputs", "x.grad", "running", "running requires grad")),
    }


@probe(category="eager", rtol=1e-12, atol=1e-12, hints=["functional-op"])
def eager_functional_float64_decays(solution: Any) -> dict[str, Any]:
    """Eager ema_update in float64 with decays float32 cannot hold (0.9, 0.3), at float64 tolerance.

    A decay rounded to float32 on the way (``torch.tensor(decay)``) is off by
    about 1e-8 relative, far beyond 1e-12.
    """

    def run() -> dict[str, Any]:
        out: dict[str, Any] = {}
        for i, decay in enumerate((0.9, 0.3)):
            avg = randn(7, dtype=torch.float64, seed=160 + i) * 10.0
            value = randn(7, dtype=torch.float64, seed=170 + i) * 10.0
            out[f"decay {decay}"] = ema(avg, value, decay)
        return out

    return guarded(run, ("decay 0.9", "decay 0.3"))


@probe(category="eager", rtol=1e-6, atol=1e-6, hints=["functional-op"])
def eager_functional_nonfinite(solution: Any) -> dict[str, Any]:
    """Eager ema_update with inf and NaN in avg or value at decay 1, 0 and 0.5: 0 * inf is NaN, as in the formula.

    Also a decay too small for float32 (it rounds to 0 there, not in float64)
    with infinities in avg: in float32 arithmetic the formula multiplies inf by
    0 and gives NaN; in float64 it stays inf. Computing a float32 input in
    float64 and rounding at the end is another formula.
    """
    inf, nan = float("inf"), float("nan")
    cases = {
        "decay 1, inf/nan in value": (torch.tensor([1.0, 2.0, 3.0]), torch.tensor([inf, nan, 4.0]), 1.0),
        "decay 0, inf/nan in avg": (torch.tensor([inf, nan, 3.0]), torch.tensor([1.0, 2.0, 4.0]), 0.0),
        "decay 1, inf/nan in avg (float64)": (
            torch.tensor([-inf, nan, 3.0], dtype=torch.float64),
            torch.tensor([1.0, 2.0, 4.0], dtype=torch.float64),
            1.0,
        ),
        "decay 0, inf/nan in value (float64)": (
            torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64),
            torch.tensor([-inf, nan, 4.0], dtype=torch.float64),
            0.0,
        ),
        "decay 0.5, inf in both": (torch.tensor([inf, inf, 1.0]), torch.tensor([inf, -inf, 2.0]), 0.5),
        "float32, a decay that rounds to 0 in float32, inf in avg": (
            torch.tensor([inf, -inf, 3.0]),
            torch.tensor([1.0, 2.0, 4.0]),
            1e-50,
        ),
        "float64, the same decay, inf in avg": (
            torch.tensor([inf, -inf, 3.0], dtype=torch.float64),
            torch.tensor([1.0, 2.0, 4.0], dtype=torch.float64),
            1e-50,
        ),
    }

    def run() -> dict[str, Any]:
        return {name: ema(avg, value, decay) for name, (avg, value, decay) in cases.items()}

    return guarded(run, tuple(cases))


@probe(category="eager", rtol=1e-6, atol=1e-6, hints=["functional-op"])
def eager_functional_near_limits(solution: Any) -> dict[str, Any]:
    """Eager ema_update on values near the dtype's largest finite value, with opposite signs.

    The formula stays finite; the ``avg + w * (value - avg)`` form overflows
    in ``value - avg``.
    """

    def run() -> dict[str, Any]:
        out: dict[str, Any] = {}
        for dtype in (torch.float32, torch.float64):
            big = torch.finfo(dtype).max
            avg = torch.tensor([0.9, -0.8, 0.6, 0.95], dtype=dtype) * big
            value = torch.tensor([-0.9, 0.7, -0.99, -0.95], dtype=dtype) * big
            # scaled by 1/max so that the tolerances above are relative ones
            out[str(dtype)] = {
                "decay 0.8 (over max)": ema(avg, value, 0.8) / big,
                "decay 0.3 (over max)": ema(avg, value, 0.3) / big,
            }
        return out

    return guarded(run, (str(torch.float32), str(torch.float64)))


def functional_cases(cases: dict[str, tuple[list[float], list[float], torch.dtype, float]]) -> dict[str, Any]:
    """ema_update on each case, one by one, so that one error hides no other."""

    def one(avg: list[float], value: list[float], dtype: torch.dtype, decay: float) -> dict[str, Any]:
        return {"y": ema(torch.tensor(avg, dtype=dtype), torch.tensor(value, dtype=dtype), decay)}

    return {name: guarded(lambda c=case: one(*c), ("y",)) for name, case in cases.items()}


@probe(category="eager", rtol=1e-6, atol=1e-6, hints=["functional-op"])
def eager_functional_coefficients(solution: Any) -> dict[str, Any]:
    """Eager ema_update with decays float32 rounds to exactly 1 (1 - 1e-8, 1 + 1e-9) and decays beyond its range (+-1e39).

    The coefficients ``decay`` and ``1 - decay`` are each computed as a Python
    float and then rounded to avg's dtype, as the given kernel does: in float32
    ``1 - 1e-8`` becomes 1 while ``1 - decay`` stays 1e-8, so value's term
    survives (1 + 1e-8 * 1e4 is 1.0001, and inf in value stays inf); a
    ``1 - d`` formed from decay already rounded to float32 is 0 and loses it
    (or gives 0 * inf = NaN). A decay of 1e39 is inf in float32, and so is
    ``-(1 - decay)``: the formula gives inf or NaN there, and finite values in
    float64.
    """
    inf = float("inf")
    f32, f64 = torch.float32, torch.float64
    below, above = 1.0 - 1e-8, 1.0 + 1e-9
    cases = {
        "float32, decay 1 - 1e-8, large values": ([1.0, -2.0, 1.0, 0.5], [1e4, -1e6, 3e38, -3e38], f32, below),
        "float32, decay 1 - 1e-8, inf in value": ([1.0, 2.0, 3.0], [inf, -inf, 4.0], f32, below),
        "float32, decay 1 + 1e-9, inf and large values": ([1.0, 2.0, 3.0, 1.0], [inf, -inf, 1e4, 3e38], f32, above),
        "float64, decay 1 - 1e-8, large values": ([1.0, -2.0, 1.0, 0.5], [1e4, -1e6, 3e38, -3e38], f64, below),
        "float32, decay 1e39": ([0.0, 1.0, -1.0, 1.0], [1.0, 1.0, 2.0, -1.0], f32, 1e39),
        "float32, decay -1e39": ([1.0, 0.0, 2.0, -1.0], [1.0, 1.0, -1.0, 2.0], f32, -1e39),
        "float64, decay 1e39": ([0.0, 1.0, -1.0, 1.0], [1.0, 1.0, 2.0, -1.0], f64, 1e39),
    }
    return functional_cases(cases)


@probe(category="eager", rtol=1e-6, atol=1e-6, hints=["functional-op"])
def eager_functional_products_overflow(solution: Any) -> dict[str, Any]:
    """Eager ema_update near the dtype's largest finite value with decays outside [0, 1] (-1, 2, -0.5), results over max.

    Each product is rounded to avg's dtype on its own before the sum, as the
    given kernel does: with decay -1 and avg = value = 0.9 * max,
    ``(1 - decay) * value`` is inf, so the result is inf though the exact one
    is finite. A fused multiply-add (``add_(value, alpha=1 - decay)`` on CPU)
    never rounds that product and stays finite. Where no product overflows
    the result stays finite.
    """
    cases = {}
    for dtype in (torch.float32, torch.float64):
        cases[f"{dtype}, decay -1"] = ([0.9, -0.9, 0.6, 0.4], [0.9, 0.9, 0.4, 0.6], dtype, -1.0)
        cases[f"{dtype}, decay 2"] = ([0.9, 0.9, 0.6, 0.4], [0.9, -0.9, 0.4, 0.7], dtype, 2.0)
        cases[f"{dtype}, decay -0.5"] = ([0.7, 0.3, -0.6, 0.9], [0.6, 0.1, 0.5, -0.9], dtype, -0.5)

    def one(avg: list[float], value: list[float], dtype: torch.dtype, decay: float) -> dict[str, Any]:
        big = torch.finfo(dtype).max
        y = ema(torch.tensor(avg, dtype=dtype) * big, torch.tensor(value, dtype=dtype) * big, decay)
        return {"y (over max)": y / big}  # scaled by 1/max so that the tolerances above are relative ones

    return {name: guarded(lambda c=case: one(*c), ("y (over max)",)) for name, case in cases.items()}


@probe(category="eager", rtol=1e-6, atol=1e-6, hints=["trajectory"])
def trajectory_no_values(solution: Any) -> dict[str, Any]:
    """ema_trajectory with an empty list of values returns the empty list, and leaves avg alone."""
    avg = randn(3, seed=180)

    def run() -> dict[str, Any]:
        states = solution.ema_trajectory(avg, [], 0.9)
        return {"states": [s.clone() for s in states], "avg after": avg.clone()}

    return guarded(run, ("states", "avg after"))


# ---------------------------------------------------------------- compile


@probe(category="compile", weight=2, rtol=1e-6, atol=1e-6, hints=["declare-mutation"])
def compile_mutates_graph_input(solution: Any) -> dict[str, Any]:
    """Compiled fns update their input (called twice) and a buffer made inside the graph."""

    def f(avg: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
        ema_(avg, value, 0.5)
        return avg * 2.0 + 1.0

    def g(value: torch.Tensor) -> torch.Tensor:
        buf = torch.zeros_like(value)
        ema_(buf, value, 0.5)
        ema_(buf, value * 2.0, 0.5)
        return buf

    avg = randn(4, 3, seed=50)
    keys = ("first", "avg after first", "second", "avg after second", "buffer made inside")

    def run() -> dict[str, Any]:
        fc = compiled(f)
        first = fc(avg, randn(4, 3, seed=51))
        avg_after_first = avg.clone()
        second = fc(avg, randn(4, 3, seed=52))
        buf = compiled(g)(randn(8, seed=70))
        return dict(zip(keys, (first, avg_after_first, second, avg.clone(), buf), strict=True))

    return guarded(run, keys)


@probe(category="compile", weight=2, rtol=1e-6, atol=1e-6, hints=["declare-mutation", "views"])
def compile_mutates_views(solution: Any) -> dict[str, Any]:
    """Compiled fn updates a row and a column of its input, and a view passed as the input."""

    def f(base: torch.Tensor, row: torch.Tensor, col: torch.Tensor) -> torch.Tensor:
        ema_(base[1], row, 0.5)
        ema_(base.t()[2], col, 0.25)
        return base.sum(dim=0)

    def g(avg: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
        ema_(avg, value, 0.5)
        return avg + 0.0

    def run() -> dict[str, Any]:
        base = randn(4, 5, seed=60)
        sums = compiled(f)(base, randn(5, seed=61), randn(4, seed=62))
        big = randn(6, 3, seed=63)
        column = compiled(g)(big[:, 1], randn(6, seed=64))
        return {"sums": sums, "base after": base, "column": column, "big after": big}

    return guarded(run, ("sums", "base after", "column", "big after"))


@probe(category="compile", weight=2, rtol=1e-6, atol=1e-6, hints=["declare-mutation"])
def compile_running_mean(solution: Any) -> dict[str, Any]:
    """Compiled RunningMean: three training steps, the outputs and the buffer after each."""

    def run() -> dict[str, Any]:
        torch.manual_seed(0)
        module = solution.RunningMean(5, decay=0.8)
        fc = compiled(module)
        outputs, buffers = [], []
        for i in range(3):
            outputs.append(fc(randn(4, 5, seed=80 + i)))
            buffers.append(module.running.clone())
        return {"outputs": outputs, "running": buffers}

    return guarded(run, ("outputs", "running"))


@probe(category="compile", weight=2, rtol=1e-6, atol=1e-6, hints=["buffer-in-place", "declare-mutation"])
def compile_running_mean_buffer_in_place(solution: Any) -> dict[str, Any]:
    """Compiled RunningMean: after three training steps the buffer is the same tensor, in the same memory."""

    def run() -> dict[str, Any]:
        torch.manual_seed(0)
        module = solution.RunningMean(4, decay=0.7)
        return buffer_facts(module, compiled(module), seed=150)

    return guarded(run, BUFFER_KEYS)


@probe(category="compile", weight=2, rtol=1e-6, atol=1e-6, hints=["functional-op", "functional-fake"])
def compile_functional_dynamic(solution: Any) -> dict[str, Any]:
    """Compiled (dynamic=True) fn around ema_update, two shapes: outputs, inputs unchanged."""

    def f(avg: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
        return torch.tanh(ema(avg * 2.0, value, 0.7)) + avg

    def run() -> dict[str, Any]:
        fc = compiled(f, dynamic=True)
        out: dict[str, Any] = {}
        for i, shape in enumerate(((3, 4), (5, 2))):
            avg, value = randn(*shape, seed=90 + i), randn(*shape, seed=95 + i)
            avg0 = avg.clone()
            out[str(list(shape))] = {"y": fc(avg, value), "avg unchanged": bool(torch.equal(avg, avg0))}
        return out

    return guarded(run, ("[3, 4]", "[5, 2]"))


@probe(category="compile", weight=2, rtol=1e-6, atol=1e-6, hints=["trajectory", "functional-op"])
def compile_trajectory(solution: Any) -> dict[str, Any]:
    """Compiled ema_trajectory over three values: states, caller's avg unchanged."""
    avg = randn(2, 3, seed=100)
    values = [randn(2, 3, seed=101 + i) for i in range(3)]

    def run() -> dict[str, Any]:
        states = compiled(solution.ema_trajectory)(avg, values, 0.5)
        return {"states": [s.clone() for s in states], "avg after": avg.clone()}

    return guarded(run, ("states", "avg after"))


@probe(category="compile", weight=2, hints=["functional-fake", "declare-mutation"])
def opcheck_fake_and_aot(solution: Any) -> dict[str, Any]:
    """opcheck's test_faketensor and test_aot_dispatch_dynamic on both operators."""
    tests = ("test_faketensor", "test_aot_dispatch_dynamic")
    samples = {
        "float32 (4, 3)": (randn(4, 3, seed=110), randn(4, 3, seed=111), 0.5),
        "float64 transposed": (randn(5, 2, dtype=torch.float64, seed=112).t(), randn(2, 5, dtype=torch.float64, seed=113), 0.9),
    }
    return {
        "ema_update_": opcheck_table("ema_update_", samples, tests),
        "ema_update": opcheck_table("ema_update", samples, tests),
    }


@probe(category="compile", weight=2, hints=["functional-fake", "views"])
def opcheck_fake_non_dense_views(solution: Any) -> dict[str, Any]:
    """opcheck's test_faketensor on both operators with non-dense views as avg: a column, every other row, every other column, one element (0-d).

    On such views ``clone()`` and ``empty_like()`` do not keep avg's strides,
    so a fake kernel must describe the real kernel's output, not avg.
    """
    base_a, base_v = randn(4, 6, seed=190), randn(4, 6, seed=191)
    base_a64, base_v64 = randn(6, 4, dtype=torch.float64, seed=192), randn(6, 4, dtype=torch.float64, seed=193)
    samples = {
        "column base[:, 1]": (base_a[:, 1], base_v[:, 1], 0.9),
        "rows base[::2]": (base_a[::2], base_v[::2], 0.7),
        "columns base[:, ::2]": (base_a[:, ::2], base_v[:, ::2], 0.3),
        "float64 column of a transpose": (base_a64.t()[:, ::2], base_v64.t()[:, ::2], 0.9),
        "0-d element base[1, 2]": (base_a[1, 2], base_v[1, 2], 0.6),
    }
    return {
        "ema_update": opcheck_table("ema_update", samples, ("test_faketensor",)),
        "ema_update_": opcheck_table("ema_update_", samples, ("test_faketensor",)),
    }


# ---------------------------------------------------------------- aliasing


@probe(category="aliasing", weight=2, hints=["declare-mutation", "functional-op"])
def opcheck_schema_both_ops(solution: Any) -> dict[str, Any]:
    """opcheck's test_schema on both operators: the schema must tell the truth about writes."""
    samples = {
        "float32 (6,)": (randn(6, seed=120), randn(6, seed=121), 0.3),
        "float64 (2, 3, 4)": (randn(2, 3, 4, dtype=torch.float64, seed=122), randn(2, 3, 4, dtype=torch.float64, seed=123), 0.8),
        "float32 transposed": (randn(4, 3, seed=124).t(), randn(3, 4, seed=125), 0.5),
    }
    return {
        "ema_update_": opcheck_table("ema_update_", samples, ("test_schema",)),
        "ema_update": opcheck_table("ema_update", samples, ("test_schema",)),
    }


@probe(category="aliasing", weight=2, hints=["declare-mutation"])
def schema_alias_annotations(solution: Any) -> dict[str, Any]:
    """The schemas: each operator's arguments, which of them it declares as written, and what it returns."""

    def describe(op_name: str) -> dict[str, Any]:
        def run() -> dict[str, Any]:
            schema = getattr(torch.ops.interview, op_name).default._schema
            arguments = [f"{arg.type} {arg.name}" for arg in schema.arguments]
            written = [arg.name for arg in schema.arguments if arg.alias_info is not None and arg.alias_info.is_write]
            returns = [
                {"type": str(ret.type), "aliases": ret.alias_info is not None} for ret in schema.returns
            ]
            return {"arguments": arguments, "written": written, "returns": returns}

        return guarded(run, ("arguments", "written", "returns"))

    return {"ema_update_": describe("ema_update_"), "ema_update": describe("ema_update")}


@probe(category="aliasing", weight=2, rtol=1e-12, atol=1e-12, hints=["views"])
def inplace_through_views(solution: Any) -> dict[str, Any]:
    """Eager ema_update_ on a base seen through a view, and on views seen through the base."""
    base = randn(3, 4, dtype=torch.float64, seed=130)
    row_view = base[2]
    ema_(base, randn(3, 4, dtype=torch.float64, seed=131), 0.5)
    seen_through_view = row_view.clone()
    ema_(base.t()[1], randn(3, dtype=torch.float64, seed=132), 0.25)  # a strided column
    ema_(base[0, ::2], randn(2, dtype=torch.float64, seed=133), 0.5)  # every other element of a row
    return {"row view after first": seen_through_view, "base after": base, "row view after": row_view.clone()}


@probe(category="aliasing", weight=2, rtol=1e-6, atol=1e-6, hints=["buffer-in-place"])
def running_mean_buffer_in_place(solution: Any) -> dict[str, Any]:
    """Eager RunningMean: after three training steps the buffer is the same tensor, in the same memory."""

    def run() -> dict[str, Any]:
        torch.manual_seed(0)
        module = solution.RunningMean(5, decay=0.6)
        return buffer_facts(module, module, seed=160)

    return guarded(run, BUFFER_KEYS)


@probe(category="aliasing", weight=2, hints=["functional-op"])
def functional_output_is_fresh(solution: Any) -> dict[str, Any]:
    """ema_update's output shares no memory with its inputs, eagerly and compiled."""

    def f(avg: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
        return ema(avg, value, 0.5)

    def facts(fn: Callable[..., torch.Tensor]) -> dict[str, Any]:
        avg, value = randn(3, 3, seed=140), randn(3, 3, seed=141)
        avg0 = avg.clone()
        y = fn(avg, value)
        shares = shares_memory(y, avg) or shares_memory(y, value)
        y.fill_(0.0)  # writing the result must not reach the inputs
        return {"shares memory": shares, "avg unchanged after writing y": bool(torch.equal(avg, avg0))}

    return {
        "eager": guarded(lambda: facts(f), ("shares memory", "avg unchanged after writing y")),
        "compiled": guarded(lambda: facts(compiled(f)), ("shares memory", "avg unchanged after writing y")),
    }


@probe(category="aliasing", weight=2, rtol=1e-6, atol=1e-6, hints=["trajectory"])
def trajectory_states_independent(solution: Any) -> dict[str, Any]:
    """Eager ema_trajectory over four values: the states, avg afterwards, and who shares memory."""
    avg = randn(6, seed=30)
    values = [randn(6, seed=31 + i) for i in range(4)]
    keys = ("states", "avg after", "shares with an input", "distinct storages")

    def run() -> dict[str, Any]:
        states = solution.ema_trajectory(avg, values, 0.6)
        inputs = [avg, *values]
        return {
            "states": [s.clone() for s in states],
            "avg after": avg.clone(),
            "shares with an input": [any(shares_memory(s, t) for t in inputs) for s in states],
            "distinct storages": len({s.untyped_storage().data_ptr() for s in states}),
        }

    return guarded(run, keys)
