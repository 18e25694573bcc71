"""Hidden probes for compile-bisect-layer: they make the score.

Each probe hands the candidate's ``first_failing_layer`` one function that
breaks (or not) at a known layer of torch.compile's stack, for a real
reason, and observes the layer it names. Four categories:

- ``errors``: a layer raises (graph capture, joint tracing, a generated
  size/stride assertion);
- ``wrong-results``: a layer runs but silently diverges from eager (a dtype
  from a wrong fake kernel, a dropped mutation, bfloat16 rounding);
- ``run-hygiene``: the answer is right only if every run starts from the
  same state (fresh inputs that keep requires_grad, the same RNG seed, a
  reset Dynamo cache);
- ``passing``: every layer works; a correct tool must say so (None).

Inductor is the expensive layer (a C++ compile per new kernel); fifteen
probes reach it. Inductor is set up for
speed here: one compile thread, no vectorisation (which skips its ISA probe
compiles) and no precompiled header (a 150 MB file per probe folder would not
fit the sandbox's /tmp).
"""

from __future__ import annotations

import gc
import math
import weakref
from typing import Any

import torch
import torch._inductor.config as inductor_config
from probekit import probe

inductor_config.compile_threads = 1
inductor_config.cpp.vec_isa_ok = False
inductor_config.cpp_cache_precompile_headers = False


def randn(*shape: int, dtype: torch.dtype = torch.float32, seed: int = 0) -> torch.Tensor:
    """Seeded normal samples, independent of the global generator."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=gen, dtype=torch.float64).to(dtype)


# ---------------------------------------------------------------- custom ops with real bugs


@torch.library.custom_op("bisect_hidden::triple", mutates_args=())
def triple(x: torch.Tensor) -> torch.Tensor:
    """An op registered without a fake kernel."""
    return x * 3


@torch.library.custom_op("bisect_hidden::scaled", mutates_args=())
def scaled(x: torch.Tensor) -> torch.Tensor:
    """Returns x.dtype; its fake kernel claims float64."""
    # The values are x.dtype, but they sit at the front of a storage big enough for the float64 tensor the fake
    # kernel promises: a compiled graph that trusts the fake reads (or writes) that many bytes, and must not run off
    # the end of the real allocation (a heap overrun would crash the probe process instead of showing the mismatch).
    out = torch.empty(2 * x.numel(), dtype=x.dtype, device=x.device)[: x.numel()].view(x.shape)
    return out.copy_(x * 0.5)


@scaled.register_fake
def _(x: torch.Tensor) -> torch.Tensor:
    # Bug: copied from a float64-accumulating variant of the op.
    return torch.empty(x.shape, dtype=torch.float64, device=x.device)


@torch.library.custom_op("bisect_hidden::softsign", mutates_args=())
def softsign(x: torch.Tensor) -> torch.Tensor:
    """A correct fake kernel, but no autograd formula."""
    return x / (1 + x.abs())


@softsign.register_fake
def _(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x)


@torch.library.custom_op("bisect_hidden::ema_update_", mutates_args=())
def ema_update_(running: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Updates a running average in place and returns its norm. Bug: it declares mutates_args=()."""
    running.mul_(0.9).add_(x, alpha=0.1)
    return running.norm()


@ema_update_.register_fake
def _(running: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    return running.new_empty(())


@torch.library.custom_op("bisect_hidden::to_channels_last", mutates_args=())
def to_channels_last(x: torch.Tensor) -> torch.Tensor:
    """Returns (N, C, L) values in a (N, L, C) memory layout; its fake kernel claims contiguous."""
    return (x + 1).transpose(1, 2).contiguous().transpose(1, 2)


@to_channels_last.register_fake
def _(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x, memory_format=torch.contiguous_format)


@torch.library.custom_op("bisect_hidden::double_keep_layout", mutates_args=())
def double_keep_layout(x: torch.Tensor) -> torch.Tensor:
    """Doubles x in x's own memory layout; its fake kernel claims contiguous, and it has no autograd formula."""
    return x * 2


@double_keep_layout.register_fake
def _(x: torch.Tensor) -> torch.Tensor:
    # Bug: right only when x is contiguous (torch.empty_like would keep the layout).
    return torch.empty(x.shape, dtype=x.dtype, device=x.device)


class CubeWithBadBackward(torch.autograd.Function):
    """x**3 whose backward reduces over the batch by mistake (a wrong gradient shape)."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        (x,) = ctx.saved_tensors
        return (3 * x**2 * grad).sum(0)


# ---------------------------------------------------------------- errors


@probe(category="errors", hints=["fullgraph", "try-order"])
def tolist_under_fullgraph(solution: Any) -> dict[str, Any]:
    """fullgraph=True; the function sorts row sums through Python lists."""

    def fn(x: torch.Tensor) -> torch.Tensor:
        sums = sorted(x.sum(-1).tolist())
        return torch.tensor(sums) * x.shape[-1]

    return {"layer": solution.first_failing_layer(fn, (randn(5, 3, seed=1),), fullgraph=True)}


@probe(category="errors", hints=["fullgraph", "try-order"])
def print_under_fullgraph(solution: Any) -> dict[str, Any]:
    """fullgraph=True; two matmuls with a debug print between them."""

    def fn(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        h = a @ b
        print("hidden:", tuple(h.shape))
        return h @ b.t()

    args = (randn(4, 6, seed=2), randn(6, 3, seed=3))
    return {"layer": solution.first_failing_layer(fn, args, fullgraph=True)}


@probe(category="errors", weight=2, hints=["try-order", "catch-errors"])
def custom_op_without_fake_kernel(solution: Any) -> dict[str, Any]:
    """fullgraph=False; a custom op with an eager kernel and no fake kernel."""

    def fn(x: torch.Tensor) -> torch.Tensor:
        return triple(x).relu() + 1

    return {"layer": solution.first_failing_layer(fn, (randn(3, 4, seed=4),))}


@probe(category="errors", weight=2, hints=["requires-grad", "catch-errors"])
def autograd_function_bad_backward(solution: Any) -> dict[str, Any]:
    """An autograd.Function with a wrong backward, on an input that requires grad."""

    def fn(x: torch.Tensor) -> torch.Tensor:
        return CubeWithBadBackward.apply(x).mean(-1)

    x = randn(4, 5, seed=5).requires_grad_()
    return {"layer": solution.first_failing_layer(fn, (x,), fullgraph=True)}


@probe(category="errors", weight=2, hints=["catch-errors"])
def custom_op_fake_strides(solution: Any) -> dict[str, Any]:
    """A custom op whose fake kernel gets the output's strides wrong, 3-D input."""

    def fn(x: torch.Tensor) -> torch.Tensor:
        return to_channels_last(x)

    return {"layer": solution.first_failing_layer(fn, (randn(2, 3, 5, seed=6),), fullgraph=True)}


@probe(category="errors", weight=2, hints=["fresh-inputs", "catch-errors"])
def strided_argument_custom_op(solution: Any) -> dict[str, Any]:
    """A custom op whose fake kernel is right only for contiguous inputs, on a permuted (non-contiguous) argument."""

    def fn(x: torch.Tensor) -> torch.Tensor:
        return double_keep_layout(x) - 1

    # Inductor asserts the strides the fake kernel promised; copies that
    # come out contiguous meet the promise and hide the bug.
    x = randn(2, 5, 3, seed=24).permute(0, 2, 1)
    return {"layer": solution.first_failing_layer(fn, (x,), fullgraph=True)}


# ---------------------------------------------------------------- wrong results


@probe(category="wrong-results", weight=2, hints=["compare-results", "compare-dtype"])
def fake_kernel_wrong_dtype(solution: Any) -> dict[str, Any]:
    """A custom op whose fake kernel reports the wrong dtype, followed by a cast."""

    def fn(x: torch.Tensor) -> torch.Tensor:
        return scaled(x).to(torch.float64) + 1

    return {"layer": solution.first_failing_layer(fn, (randn(3, 4, seed=7),), fullgraph=True)}


@probe(category="wrong-results", weight=2, hints=["compare-results", "fresh-inputs"])
def undeclared_mutation_output(solution: Any) -> dict[str, Any]:
    """A custom op updates a running average in place without declaring it; the output reads the average."""

    def fn(running: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        ema_update_(running, x)
        return running * 10

    args = (randn(3, 4, seed=8), randn(3, 4, seed=18))
    return {"layer": solution.first_failing_layer(fn, args, fullgraph=True)}


@probe(category="wrong-results", weight=2, hints=["compare-results"])
def bfloat16_offset(solution: Any) -> dict[str, Any]:
    """bfloat16: add a large offset, then subtract it again."""

    def fn(x: torch.Tensor) -> torch.Tensor:
        return (x + 256) - 256

    # Odd integers: 256 + x is not a bfloat16 (its spacing is 2 above 256),
    # so eager's rounding shows, while 256 - x would be exact: a run on
    # copies with other values than the given ones (negated, say) can pass.
    x = torch.arange(1, 32, 2, dtype=torch.float32).to(torch.bfloat16)
    return {"layer": solution.first_failing_layer(fn, (x,), fullgraph=True)}


@probe(category="wrong-results", weight=2, hints=["compare-results", "tolerance"])
def approximate_path_when_compiling(solution: Any) -> dict[str, Any]:
    """fullgraph=True; the function takes a faster, approximate GELU when torch.compiler.is_compiling()."""

    def fn(x: torch.Tensor) -> torch.Tensor:
        if torch.compiler.is_compiling():
            return torch.nn.functional.gelu(x, approximate="tanh")
        return torch.nn.functional.gelu(x)

    return {"layer": solution.first_failing_layer(fn, (randn(6, 8, seed=21) * 2,), fullgraph=True)}


@probe(category="wrong-results", weight=2, hints=["mutated-args", "compare-results"])
def undeclared_mutation_of_a_clone(solution: Any) -> dict[str, Any]:
    """The undeclared in-place custom op, given a clone of an argument so that eager leaves the argument alone."""

    def fn(running: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        # Eager updates the clone. The op claims to be functional, so
        # Inductor drops the clone as a no-op and the op writes into
        # `running` itself: only the arguments after the call show it.
        return ema_update_(running.clone(), x)

    args = (randn(3, 4, seed=25), randn(3, 4, seed=26))
    return {"layer": solution.first_failing_layer(fn, args, fullgraph=True)}


@probe(category="wrong-results", weight=2, hints=["compare-results", "tolerance"])
def float64_computed_in_float32_when_compiling(solution: Any) -> dict[str, Any]:
    """float64; under torch.compiler.is_compiling() the function computes in float32 and casts back."""

    def fn(x: torch.Tensor) -> torch.Tensor:
        if torch.compiler.is_compiling():
            return torch.sin(x.float()).double()
        return torch.sin(x)

    # float32 rounding of inputs between 16 and 32 moves sin by up to about
    # 1e-6: 8 times float64's tolerance (rtol=atol=1e-7), a tenth of float32's.
    x = torch.linspace(16.5, 31.5, 64, dtype=torch.float64)
    return {"layer": solution.first_failing_layer(fn, (x,), fullgraph=True)}


# ---------------------------------------------------------------- run hygiene


@probe(category="run-hygiene", weight=2, hints=["mutated-args", "fresh-inputs"])
def undeclared_mutation_args_only(solution: Any) -> dict[str, Any]:
    """The same undeclared in-place update, but the output does not read the updated tensor."""

    def fn(running: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        ema_update_(running, x)
        return x.relu()

    args = (randn(3, 4, seed=9), randn(3, 4, seed=10))
    return {"layer": solution.first_failing_layer(fn, args, fullgraph=True)}


@probe(category="run-hygiene", weight=2, hints=["requires-grad", "fresh-inputs"])
def custom_op_without_autograd(solution: Any) -> dict[str, Any]:
    """A custom op without an autograd formula; only the second input requires grad."""

    def fn(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return x @ softsign(w)

    args = (randn(2, 3, seed=11), randn(3, 4, seed=12).requires_grad_())
    return {"layer": solution.first_failing_layer(fn, args, fullgraph=True)}


@probe(category="run-hygiene", weight=2, hints=["reseed"])
def dropout_rng(solution: Any) -> dict[str, Any]:
    """Dropout in training mode, with a seed other than the default."""

    def fn(x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.dropout(x, p=0.5, training=True) * 2

    return {"layer": solution.first_failing_layer(fn, (randn(32, seed=13),), fullgraph=True, seed=3)}


@probe(category="run-hygiene", weight=2, hints=["reset"])
def same_function_twice(solution: Any) -> dict[str, Any]:
    """One function bisected twice: first with fullgraph=False, then with fullgraph=True."""

    def fn(x: torch.Tensor) -> torch.Tensor:
        y = softsign(x)
        if y.sum() > 0:
            return y * 2
        return y - 1

    x = randn(3, 4, seed=14).requires_grad_()
    first = solution.first_failing_layer(fn, (x,), fullgraph=False)
    second = solution.first_failing_layer(fn, (x,), fullgraph=True)
    return {"fullgraph=False": first, "fullgraph=True": second}



@probe(category="run-hygiene", weight=2, hints=["reseed"])
def random_branch_default_seed(solution: Any) -> dict[str, Any]:
    """bfloat16; one random draw picks between x and an expression that rounds; called without a seed."""

    def fn(x: torch.Tensor) -> torch.Tensor:
        # Only the rounded branch tells Inductor (no bfloat16 rounding inside
        # a kernel) from eager, so the answer depends on the draw, and the
        # draw on the seed: the default, 0, must be the seed of every run.
        u = torch.rand(())
        return torch.where(u < 0.6, x, (x + 256) - 256)

    x = torch.linspace(0, 1, 16, dtype=torch.float32).to(torch.bfloat16)
    return {"layer": solution.first_failing_layer(fn, (x,), fullgraph=True)}


@probe(category="run-hygiene", weight=2, hints=["requires-grad", "fresh-inputs"])
def non_leaf_argument_training_step(solution: Any) -> dict[str, Any]:
    """fullgraph=True; an argument that requires grad but is not a leaf; the function backpropagates and returns a gradient."""

    # Dynamo cannot capture .backward() in one graph, so the answer is
    # "dynamo" without compiling C++; copies that stay non-leaf have no
    # .grad, and deepcopy refuses non-leaf tensors: both raise in eager.

    def fn(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        loss = (x * y).sin().sum()
        loss.backward()
        return x.grad * 2

    w = randn(4, 8, seed=27).requires_grad_()
    args = (w * 2, randn(4, 8, seed=28))
    return {"layer": solution.first_failing_layer(fn, args, fullgraph=True)}


@probe(category="run-hygiene", weight=2, hints=["reset"])
def compiled_by_the_caller_first(solution: Any) -> dict[str, Any]:
    """fullgraph=True, after the caller compiled the same function itself with other settings."""

    def fn(x: torch.Tensor) -> torch.Tensor:
        if x.sum() > 0:
            return x * 2
        return x - 1

    x = randn(3, 5, seed=29)
    torch._dynamo.reset()
    torch.compile(fn, backend="eager")(x)
    return {"layer": solution.first_failing_layer(fn, (x,), fullgraph=True)}


@probe(category="run-hygiene", weight=2, hints=["requires-grad", "fresh-inputs", "reset"])
def same_function_new_grad_and_layout(solution: Any) -> dict[str, Any]:
    """One function bisected three times on arguments of one shape and dtype that differ in requires_grad or strides."""

    def fn(x: torch.Tensor) -> torch.Tensor:
        return double_keep_layout(x) + 1

    x = randn(4, 6, seed=30)
    return {
        "plain": solution.first_failing_layer(fn, (x,), fullgraph=True),
        "requires grad": solution.first_failing_layer(fn, (x.clone().requires_grad_(),), fullgraph=True),
        "transposed": solution.first_failing_layer(fn, (randn(6, 4, seed=30).t(),), fullgraph=True),
    }


@probe(category="run-hygiene", weight=2, hints=["compare-results"])
def same_function_new_values(solution: Any) -> dict[str, Any]:
    """One bfloat16 function bisected twice on arguments that differ only in their values."""

    def fn(x: torch.Tensor) -> torch.Tensor:
        return (x + 256) - 256

    # Even integers survive the detour through 256 exactly, odd ones do not.
    even = torch.arange(2, 34, 2, dtype=torch.float32).to(torch.bfloat16)
    odd = torch.arange(1, 33, 2, dtype=torch.float32).to(torch.bfloat16)
    return {
        "first": solution.first_failing_layer(fn, (even,), fullgraph=True),
        "second": solution.first_failing_layer(fn, (odd,), fullgraph=True),
    }


def _approximate_when_compiling(scale: torch.Tensor) -> Any:
    """A function of x and w that scales x by a tensor it captures and takes a fast approximate GELU under compile."""

    def fn(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        z = x * scale
        if torch.compiler.is_compiling():
            y = z * torch.sigmoid(1.702 * z)
        else:
            y = torch.nn.functional.gelu(z)
        return y + scaled(w).to(torch.float64)

    return fn


def _saturated(seed: int) -> torch.Tensor:
    """Entries of 0, 12 and -30, where the exact and the sigmoid GELU agree to far below any tolerance."""
    gen = torch.Generator().manual_seed(seed)
    return torch.tensor([0.0, 12.0, -30.0])[torch.randint(0, 3, (4, 6), generator=gen)]


def _rebuilt_at_freed_id(build: Any, freed_id: int) -> Any:
    """A new object from ``build()`` that is, as a rule, at the id of a freed one.

    ``build`` makes one object of the freed one's size (a clone of a tensor
    made beforehand, a closure over a tensor made beforehand), so that
    nothing else it allocates takes the slot first. Objects that land
    elsewhere are kept alive until the one wanted comes up, so each try takes
    the next free slot of the allocator; after 4096 tries the last one is
    used.
    """
    spare: list[Any] = []
    for _ in range(4096):
        fresh = build()
        if id(fresh) == freed_id:
            return fresh
        spare.append(fresh)
    return spare.pop()


@probe(category="run-hygiene", weight=2, hints=["fresh-inputs"])
def repeated_calls_on_changed_state(solution: Any) -> dict[str, Any]:
    """One function bisected many times in a process, its arguments or a captured tensor changed, replaced, rebuilt between calls: each answer right.

    The function scales x by a captured tensor, takes a sigmoid GELU only
    under compile (a dynamo failure unless every scaled entry is 0 or
    saturated) and adds a custom op on w whose fake kernel reports the wrong
    dtype (an aot_autograd failure). So x's values and the captured scale
    decide between "dynamo" and "aot_autograd", and no call reaches
    Inductor. The steps: x written in place, twice; the captured scale set
    to zero in place (a parameter update); new look-alike arguments; x freed
    and rebuilt at its id; the function freed and rebuilt with another
    scale (same code, same name; at its id when the allocator allows); new
    tensor objects over one buffer rewritten between calls. A memo of
    answers (or of the eager result) keyed on id(), data_ptr(), shapes and
    dtypes, the tensor or function object, or the function's code with the
    arguments' values, returns an earlier call's answer at one of the steps.
    """
    answers: dict[str, Any] = {}

    def bisect(step: str, fn: Any, x: torch.Tensor, w: torch.Tensor) -> None:
        answers[step] = solution.first_failing_layer(fn, (x, w), fullgraph=True)

    scale = torch.ones(())
    fn = _approximate_when_compiling(scale)
    x = randn(4, 6, seed=40)
    w = randn(6, seed=41)
    bisect("first call", fn, x, w)
    x.copy_(_saturated(42))  # new values in the same tensor
    bisect("argument changed in place", fn, x, w)
    x.copy_(randn(4, 6, seed=43))
    bisect("argument changed in place again", fn, x, w)
    scale.zero_()  # a parameter update of the captured tensor
    bisect("captured tensor changed in place", fn, x, w)
    scale.fill_(1.0)
    x, w = _saturated(44), randn(6, seed=45)
    bisect("new look-alike arguments", fn, x, w)
    values = randn(4, 6, seed=46)
    freed, alive = id(x), weakref.ref(x)
    del x
    gc.collect()
    x = _rebuilt_at_freed_id(values.clone, freed)
    # The step tests id reuse only if it happens: when the rebuilt argument
    # did not take the freed id, the probe raises, so the reference's run
    # (and validation) fails. An argument the solution still holds is not
    # freed, and no new one can be mistaken for it.
    if id(x) != freed and alive() is None:
        raise RuntimeError("probe setup: the rebuilt argument did not take the freed id")
    bisect("argument freed and rebuilt", fn, x, w)
    zero = torch.zeros(())
    freed, alive = id(fn), weakref.ref(fn)
    del fn
    gc.collect()
    fn = _rebuilt_at_freed_id(lambda: _approximate_when_compiling(zero), freed)
    # Another closure of the same code: it takes the freed function's id
    # only some of the time (the function is freed by a collection, which
    # frees much else), so this step is not required to reuse it.
    bisect("function freed and rebuilt", fn, x, w)
    fn = _approximate_when_compiling(scale)
    buffer = torch.empty(24)
    for k, values in enumerate((_saturated(47), randn(4, 6, seed=48), _saturated(49))):
        buffer.copy_(values.flatten())  # a loader writing each batch into one buffer
        bisect(f"new tensor over the same memory, call {k + 1}", fn, buffer.view(4, 6), w)
    return answers


# ---------------------------------------------------------------- passing


@probe(category="passing", weight=2, hints=["fullgraph"])
def print_without_fullgraph(solution: Any) -> dict[str, Any]:
    """fullgraph=False; two matmuls with a debug print between them."""

    def fn(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        h = a @ b
        print("hidden:", tuple(h.shape))
        return h @ b.t()

    args = (randn(4, 6, seed=15), randn(6, 3, seed=16))
    return {"layer": solution.first_failing_layer(fn, args)}


@probe(category="passing", weight=2, hints=["tolerance"])
def logsumexp_rows(solution: Any) -> dict[str, Any]:
    """fullgraph=True; logsumexp over long float32 rows."""

    def fn(x: torch.Tensor) -> torch.Tensor:
        return torch.logsumexp(x, dim=-1)

    return {"layer": solution.first_failing_layer(fn, (randn(8, 1000, seed=17),), fullgraph=True)}


@probe(category="passing", weight=2, hints=["nan-equal"])
def nan_where_eager_has_nan(solution: Any) -> dict[str, Any]:
    """fullgraph=True; the log of values some of which are negative or zero."""

    def fn(x: torch.Tensor) -> torch.Tensor:
        return torch.log(x) * 2 + 1

    x = randn(4, 6, seed=22)
    x[0, 0] = 0.0
    return {"layer": solution.first_failing_layer(fn, (x,), fullgraph=True)}


@probe(category="passing", weight=2, hints=["outputs-and-args"])
def tuple_output_and_python_arguments(solution: Any) -> dict[str, Any]:
    """fullgraph=True; plain Python values among the arguments, a tuple of tensors returned."""

    def fn(x: torch.Tensor, scale: float, dim: int, bias: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
        probs = torch.softmax(x, dim) * scale
        return (probs if bias is None else probs + bias), x.amax(dim)

    return {"layer": solution.first_failing_layer(fn, (randn(5, 7, seed=23), 0.25, 0, None), fullgraph=True)}


@probe(category="passing", weight=2, hints=["tolerance"])
def bfloat16_rounding_within_tolerance(solution: Any) -> dict[str, Any]:
    """fullgraph=True; a short bfloat16 chain of multiplies and adds."""

    def fn(x: torch.Tensor) -> torch.Tensor:
        return (x * 1.7 + 0.3) * 0.9

    x = torch.linspace(1, 2, 64, dtype=torch.float32).to(torch.bfloat16)
    return {"layer": solution.first_failing_layer(fn, (x,), fullgraph=True)}



@probe(category="passing", weight=2, hints=["tolerance"])
def bfloat16_cancellation_within_tolerance(solution: Any) -> dict[str, Any]:
    """fullgraph=True; a bfloat16 expression whose result is much smaller than its inputs."""
    # Eager rounds after every op, Inductor once: the results differ by one
    # rounding step, just within the tolerance assert_close(actual, expected)
    # computes from eager's (the expected) value, and just outside the one it
    # would compute from Inductor's.

    def fn(x: torch.Tensor) -> torch.Tensor:
        return (x * 0.3 - 0.7) * 0.9

    x = torch.tensor([2.5, 2.78125], dtype=torch.bfloat16)
    return {"layer": solution.first_failing_layer(fn, (x,), fullgraph=True)}


@probe(category="passing", weight=2, hints=["tolerance"])
def float16_rounding_within_tolerance(solution: Any) -> dict[str, Any]:
    """fullgraph=True; a float16 multiply-add, where compiled code rounds once and eager twice."""

    def fn(x: torch.Tensor) -> torch.Tensor:
        return x * 1.7 + 0.3

    # Results differ from eager's by at most one float16 step (about 1e-3
    # between 1.5 and 2): within float16's rtol=1e-3 with half to spare,
    # far outside float32's tolerance.
    x = torch.linspace(0.72, 0.98, 64, dtype=torch.float32).to(torch.float16)
    return {"layer": solution.first_failing_layer(fn, (x,), fullgraph=True)}


# ---------------------------------------------------------------- red team round 2


@torch.library.custom_op("bisect_hidden::grad_mode_checked", mutates_args=())
def grad_mode_checked(x: torch.Tensor) -> torch.Tensor:
    """A kernel that validates its calling context with a plain ValueError.

    Bug: it insists on grad mode, and AOTAutograd runs its compiled forward
    with grad mode off, so only the aot_autograd and inductor layers raise,
    and with an exception that no layer wraps in its own class.
    """
    if not torch.is_grad_enabled():
        raise ValueError("grad_mode_checked: expected grad mode to be enabled")
    return x.sin()


@grad_mode_checked.register_fake
def _grad_mode_checked_fake(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x)


@probe(category="errors", weight=2, hints=["catch-errors"])
def custom_op_raises_plain_value_error(solution: Any) -> dict[str, Any]:
    """A custom op whose kernel raises a plain ValueError, not a RuntimeError, when AOTAutograd runs it."""

    def fn(x: torch.Tensor) -> torch.Tensor:
        return grad_mode_checked(x) * 2

    return {"layer": solution.first_failing_layer(fn, (randn(5, seed=60),), fullgraph=True)}


@probe(category="run-hygiene", weight=2, hints=["reseed"])
def random_branch_given_seeds(solution: Any) -> dict[str, Any]:
    """fullgraph=False; one random draw picks between two broken branches; bisected with two seeds from one caller state."""

    # The draw decides the branch: an op without a fake kernel (a dynamo
    # failure) or the op that raises under AOTAutograd (an aot_autograd
    # failure), so no call reaches Inductor. Only the value of `seed`
    # tells the two calls apart: the caller's own random state is the same
    # before both.
    def fn(x: torch.Tensor) -> torch.Tensor:
        if torch.rand(()) < 0.5:
            return triple(x) + 1
        return grad_mode_checked(x) + 1

    answers: dict[str, Any] = {}
    for seed in (3, 5):
        torch.manual_seed(1234)  # whatever the caller drew from before
        answers[f"seed={seed}"] = solution.first_failing_layer(fn, (randn(4, seed=61),), seed=seed)
    return answers


@probe(category="passing", weight=2, hints=["fresh-inputs", "compare-results"])
def expanded_empty_and_size_one_arguments(solution: Any) -> dict[str, Any]:
    """fullgraph=True; an expanded (stride 0) argument, an argument with no elements and a transposed one with a size-1 dimension."""

    # Copies as clone() makes them (an expanded view becomes contiguous) and
    # assert_close's comparison (values, not strides: Inductor lays out the
    # third output differently from eager) both answer None.
    def fn(x: torch.Tensor, e: torch.Tensor, s: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return x * 2 + 1, e * 2 + 1, s * 2 + 1

    args = (randn(4, 1, seed=62).expand(4, 8), torch.empty(0, 4), randn(1, 8, seed=63).t())
    return {"layer": solution.first_failing_layer(fn, args, fullgraph=True)}


@probe(category="passing", weight=2, hints=["tolerance", "mutated-args"])
def in_place_update_within_tolerance(solution: Any) -> dict[str, Any]:
    """fullgraph=True; an argument updated in place by exp, and a second output that does not depend on the argument that requires grad."""

    # Inductor's exp is one float32 step off eager's on some of these
    # values, in the updated argument too: within the tolerance. Inductor's
    # second output claims requires_grad where eager's does not; assert_close
    # does not compare requires_grad.
    def fn(x: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x.exp_()
        return x.sum(), torch.zeros_like(w) + w.detach()

    args = (randn(64, seed=64), randn(4, seed=65).requires_grad_())
    return {"layer": solution.first_failing_layer(fn, args, fullgraph=True)}


# ---------------------------------------------------------------- red team round 3


@torch.library.custom_op("bisect_hidden::double_same_strides", mutates_args=())
def double_same_strides(x: torch.Tensor) -> torch.Tensor:
    """Doubles x into a new tensor with x's very strides, gaps included; its fake kernel claims contiguous."""
    out = torch.empty_strided(x.size(), x.stride(), dtype=x.dtype, device=x.device)
    return out.copy_(x * 2)


@double_same_strides.register_fake
def _double_same_strides_fake(x: torch.Tensor) -> torch.Tensor:
    # Bug: right only for dense row-major inputs.
    return torch.empty(x.shape, dtype=x.dtype, device=x.device)


def _flattened_then_aot_error(x: torch.Tensor) -> torch.Tensor:
    """Views x flat (only a dense row-major x can be) and calls the op that raises under AOTAutograd."""
    return grad_mode_checked(x.view(-1)) + 1


def _layout_checked_then_aot_error(x: torch.Tensor) -> torch.Tensor:
    """Branches on the layout of an op's result (its fake kernel says contiguous), then calls the op that raises under AOTAutograd."""
    y = double_same_strides(x)
    z = y + 1 if y.is_contiguous() else y - 1
    return z + grad_mode_checked(x)


@probe(category="run-hygiene", weight=2, hints=["fresh-inputs"])
def gapped_slice_arguments(solution: Any) -> dict[str, Any]:
    """fullgraph=True; slices with gaps between their rows as arguments, where the function relies on a dense layout."""

    # clone() closes the gaps: the copy is contiguous, so x.view(-1) works
    # and the op's result is contiguous as its fake kernel says; every call
    # then fails at aot_autograd only (grad_mode_checked raises there),
    # without compiling C++. A copy that keeps the gaps cannot be viewed flat
    # (eager raises), or makes eager take the other branch than the graph
    # Dynamo traced from the fake kernel.
    return {
        "columns sliced, viewed flat": solution.first_failing_layer(
            _flattened_then_aot_error, (randn(4, 8, seed=70)[:, :4],), fullgraph=True
        ),
        "last dim sliced, 3-D, viewed flat": solution.first_failing_layer(
            _flattened_then_aot_error, (randn(2, 3, 8, seed=71)[..., 1:6],), fullgraph=True
        ),
        "every other row, layout checked": solution.first_failing_layer(
            _layout_checked_then_aot_error, (randn(10, 3, seed=72)[::2],), fullgraph=True
        ),
    }


def _one_way_eager_another_compiled(eager: Any, compiled: Any) -> Any:
    """A function that returns eager(x) when run eagerly and compiled(x) under torch.compile."""

    def fn(x: torch.Tensor) -> Any:
        if torch.compiler.is_compiling():
            return compiled(x)
        return eager(x)

    return fn


@probe(category="wrong-results", weight=2, hints=["compare-results", "outputs-and-args"])
def result_shape_changes_under_compile(solution: Any) -> dict[str, Any]:
    """fullgraph=True; under compile the function returns the same values in another shape (one that broadcasts against eager's, or flattened)."""

    cases = {
        "size-1 dim added": (lambda x: x * 2, lambda x: (x * 2).unsqueeze(0)),
        "flattened": (lambda x: x * 2, lambda x: (x * 2).reshape(-1)),
        "keepdim": (lambda x: x.sum(0), lambda x: x.sum(0, keepdim=True)),
        "0-dim against one element": (lambda x: x.sum(), lambda x: x.sum().reshape(1)),
        "second output of a tuple": (lambda x: (x * 2, x.amax(0)), lambda x: (x * 2, x.amax(0, keepdim=True))),
    }
    x = randn(3, 4, seed=73)
    return {
        name: solution.first_failing_layer(_one_way_eager_another_compiled(eager, compiled), (x,), fullgraph=True)
        for name, (eager, compiled) in cases.items()
    }


@probe(category="wrong-results", weight=2, hints=["compare-results", "outputs-and-args"])
def later_outputs_and_output_count(solution: Any) -> dict[str, Any]:
    """fullgraph=True; under compile a later output of a tuple or list differs, or there are fewer or more outputs, or they are nested otherwise."""

    cases = {
        "second of a tuple differs": (lambda x: (x * 2, x + 1), lambda x: (x * 2, x + 2)),
        "last of a list differs": (lambda x: [x * 2, x - 1, x.sum()], lambda x: [x * 2, x - 1, x.sum() + 1]),
        "one output fewer": (lambda x: (x * 2, x + 1), lambda x: (x * 2,)),
        "one output more": (lambda x: [x * 2, x + 1], lambda x: [x * 2, x + 1, x - 1]),
        "nested otherwise": (lambda x: ((x * 2, x + 1), x - 1), lambda x: (x * 2, x + 1, x - 1)),
        "a tuple of one for a tensor": (lambda x: x * 2, lambda x: (x * 2,)),
    }
    x = randn(3, 4, seed=74)
    answers = {
        name: solution.first_failing_layer(_one_way_eager_another_compiled(eager, compiled), (x,), fullgraph=True)
        for name, (eager, compiled) in cases.items()
    }

    # The same structure in every layer; a later output's op raises at aot_autograd.
    def same_structure(x: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        return x * 2, [x + 1, grad_mode_checked(x)]

    answers["same structure, later output of a nested list raises"] = solution.first_failing_layer(
        same_structure, (x,), fullgraph=True
    )
    return answers


@probe(category="wrong-results", weight=2, hints=["compare-results", "outputs-and-args"])
def dict_outputs(solution: Any) -> dict[str, Any]:
    """fullgraph=True; the function returns nested dicts; under compile a value, a key or the number of keys differs."""

    cases = {
        "nested value differs": (
            lambda x: {"a": x * 2, "b": {"c": x + 1}},
            lambda x: {"a": x * 2, "b": {"c": x + 2}},
        ),
        "key missing": (lambda x: {"a": x * 2, "b": {"c": x + 1}}, lambda x: {"a": x * 2}),
        "key added": (lambda x: {"a": x * 2}, lambda x: {"a": x * 2, "b": x + 1}),
        "key renamed": (lambda x: {"a": x * 2, "b": x + 1}, lambda x: {"a": x * 2, "c": x + 1}),
    }
    x = randn(3, 4, seed=75)
    answers = {
        name: solution.first_failing_layer(_one_way_eager_another_compiled(eager, compiled), (x,), fullgraph=True)
        for name, (eager, compiled) in cases.items()
    }

    # Same keys in every layer; the nested value's op raises at aot_autograd.
    def same_keys(x: torch.Tensor) -> dict[str, Any]:
        return {"a": x * 2, "b": [x + 1, {"c": grad_mode_checked(x)}]}

    answers["same keys, nested value raises"] = solution.first_failing_layer(same_keys, (x,), fullgraph=True)
    return answers


@probe(category="wrong-results", weight=2, hints=["mutated-args", "requires-grad"])
def requires_grad_argument_updated_under_no_grad(solution: Any) -> dict[str, Any]:
    """fullgraph=True; the function updates an argument that requires grad under torch.no_grad() (an optimizer step), and a layer loses the update."""

    # ema_update_ hides its in-place update (mutates_args=()), and nothing
    # reads its result: AOTAutograd drops the call, so only the argument that
    # requires grad shows the difference. The output never reads it.
    def hidden_update(w: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            ema_update_(w, g)
        return g * 2

    def step_skipped_under_compile(w: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
        if not torch.compiler.is_compiling():
            with torch.no_grad():
                w.sub_(0.1 * g)
        return g * 2

    g = randn(3, 4, seed=76)
    leaf = randn(3, 4, seed=77).requires_grad_()
    return {
        "leaf, update hidden in a custom op": solution.first_failing_layer(hidden_update, (leaf, g), fullgraph=True),
        "non-leaf, update hidden in a custom op": solution.first_failing_layer(
            hidden_update, (leaf * 1.5, g), fullgraph=True
        ),
        "leaf, step skipped under compile": solution.first_failing_layer(
            step_skipped_under_compile, (leaf, g), fullgraph=True
        ),
    }


def _gelu_then_aot_error(z: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """The sigmoid GELU under compile (a dynamo failure unless z is 0 or saturated), plus the op that raises under AOTAutograd."""
    if torch.compiler.is_compiling():
        y = z * torch.sigmoid(1.702 * z)
    else:
        y = torch.nn.functional.gelu(z)
    return y + grad_mode_checked(w)


# Module globals the functions below read; the probe sets them (a tensor made
# at import would be a new call there, which the mutation record's carry-over
# refuses).
GLOBAL_SCALE: torch.Tensor | None = None
GLOBAL_FACTOR = 1.0


def _reads_global_tensor(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return _gelu_then_aot_error(x * GLOBAL_SCALE, w)


def _reads_global_number(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return _gelu_then_aot_error(x * GLOBAL_FACTOR, w)


class _Scaler(torch.nn.Module):
    """A module holding a scale buffer that the caller may update."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("scale", torch.ones(()))


@probe(category="run-hygiene", weight=2, hints=["fresh-inputs"])
def state_read_outside_arguments_changes(solution: Any) -> dict[str, Any]:
    """One function bisected again after the caller changed what it reads besides its arguments (a global, a captured dict, a buffer)."""

    # The same fn and the same argument objects, values and metadata in every
    # call; only the scale the function reads elsewhere changes, between 1
    # ("dynamo": the sigmoid GELU differs) and 0 ("aot_autograd": the GELUs
    # agree, grad_mode_checked raises). No call reaches Inductor, and none
    # that tries every layer runs a kernel whose fake dtype is wrong there
    # (Inductor would read a float32 buffer as float64).
    global GLOBAL_SCALE, GLOBAL_FACTOR
    GLOBAL_SCALE, GLOBAL_FACTOR = torch.ones(()), 1.0
    x, w = randn(4, 6, seed=78), randn(6, seed=79)
    answers: dict[str, Any] = {}

    def bisect(step: str, fn: Any) -> None:
        answers[step] = solution.first_failing_layer(fn, (x, w), fullgraph=True)

    bisect("global tensor", _reads_global_tensor)
    GLOBAL_SCALE.zero_()
    bisect("global tensor changed in place", _reads_global_tensor)
    GLOBAL_SCALE = torch.ones(())
    bisect("global tensor rebound", _reads_global_tensor)
    bisect("global number", _reads_global_number)
    GLOBAL_FACTOR = 0.0
    bisect("global number rebound", _reads_global_number)
    GLOBAL_FACTOR = 1.0

    settings = {"scale": torch.zeros(())}

    def reads_captured_dict(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return _gelu_then_aot_error(x * settings["scale"], w)

    bisect("captured dict", reads_captured_dict)
    settings["scale"] = torch.ones(())
    bisect("captured dict's entry replaced", reads_captured_dict)

    scaler = _Scaler()

    def reads_module_buffer(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return _gelu_then_aot_error(x * scaler.scale, w)

    bisect("module buffer", reads_module_buffer)
    scaler.scale.zero_()
    bisect("module buffer changed in place", reads_module_buffer)

    default_scale = torch.zeros(())

    def reads_default_argument(x: torch.Tensor, w: torch.Tensor, scale: torch.Tensor = default_scale) -> torch.Tensor:
        return _gelu_then_aot_error(x * scale, w)

    bisect("default argument", reads_default_argument)
    default_scale.fill_(1.0)
    bisect("default argument changed in place", reads_default_argument)
    return answers


# ---------------------------------------------------------------- red team round 4


@probe(category="wrong-results", weight=2, hints=["try-order", "compare-results"])
def lower_precision_path_only_inductor_undoes(solution: Any) -> dict[str, Any]:
    """fullgraph=True; under compile the function takes a bfloat16 shortcut that eager computes in float32, as Inductor's code does again."""

    # Layers are not monotone: Dynamo's graph and AOTAutograd's, run op by
    # op, round 256 + x to bfloat16 (odd x comes back off by one), while
    # Inductor keeps the sum in float32 inside its kernel and returns x, as
    # eager does. The first failing layer is "dynamo"; a tool that tries
    # Inductor first and stops there when it agrees answers None.
    def fn(x: torch.Tensor) -> torch.Tensor:
        if torch.compiler.is_compiling():
            return (x + 256) - 256
        return ((x.float() + 256) - 256).to(x.dtype)

    x = torch.arange(1, 32, 2, dtype=torch.float32).to(torch.bfloat16)
    return {"layer": solution.first_failing_layer(fn, (x,), fullgraph=True)}


@probe(category="wrong-results", weight=2, hints=["try-order", "mutated-args"])
def call_only_dynamo_keeps(solution: Any) -> dict[str, Any]:
    """fullgraph=True; under compile the function also calls an in-place custom op that declares no mutation, and ignores its result."""

    # Dynamo's graph makes the call, so its argument copy is updated where
    # eager's is not: "dynamo". AOTAutograd trusts mutates_args=() and drops
    # the unread call as dead code, so aot_eager and Inductor agree with
    # eager again: neither a later layer nor the middle one tells.
    def fn(running: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        if torch.compiler.is_compiling():
            ema_update_(running, x)
        return x * 2

    args = (randn(3, 4, seed=80), randn(3, 4, seed=81))
    return {"layer": solution.first_failing_layer(fn, args, fullgraph=True)}


@probe(category="passing", weight=2, hints=["fullgraph"])
def python_math_on_sizes_and_ints(solution: Any) -> dict[str, Any]:
    """fullgraph=True; plain Python math (math.factorial, math.comb) on a tensor's size and on an int argument."""

    # torch.compile(fn, backend=..., fullgraph=fullgraph) specialises sizes
    # and ints on the first compile, so the math runs in Python while Dynamo
    # traces: every layer works. dynamic=True makes them symbolic, which
    # math.factorial and math.comb cannot take: an error under fullgraph.
    def on_size(x: torch.Tensor) -> torch.Tensor:
        return x * math.factorial(x.shape[0])

    def on_int(x: torch.Tensor, n: int) -> torch.Tensor:
        return x * math.comb(n, 2)

    return {
        "size": solution.first_failing_layer(on_size, (randn(5, seed=82),), fullgraph=True),
        "int argument": solution.first_failing_layer(on_int, (randn(6, seed=83), 7), fullgraph=True),
    }


@probe(category="wrong-results", weight=2, hints=["compare-results", "tolerance"])
def inductor_decomposition_rounds_otherwise(solution: Any) -> dict[str, Any]:
    """bfloat16 batch norm in training mode and log_softmax: Inductor decomposes each into other arithmetic that rounds otherwise."""

    # aot_eager runs the same ATen kernels as eager and agrees exactly;
    # Inductor's decompositions (which the aot_eager_decomp_partition
    # backend also applies) land far outside bfloat16's tolerance for batch
    # norm, and up to about twice it on a few log-probabilities near 0.
    def batch_norm(x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.batch_norm(x, None, None, training=True)

    def log_softmax(x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.log_softmax(x, -1)

    return {
        "batch norm": solution.first_failing_layer(
            batch_norm, ((randn(8, 4, 64, seed=84) * 3 + 5).to(torch.bfloat16),), fullgraph=True
        ),
        "log_softmax": solution.first_failing_layer(
            log_softmax, ((randn(64, 256, seed=4) * 3).to(torch.bfloat16),), fullgraph=True
        ),
    }


@probe(category="wrong-results", weight=2, hints=["compare-results", "outputs-and-args"])
def tuple_and_list_are_alike(solution: Any) -> dict[str, Any]:
    """fullgraph=True; under compile the function returns a list where eager returns a tuple, or the other way round, with the same items."""

    # assert_close compares a tuple and a list item by item, as sequences:
    # the dynamo layer works, and every case fails at aot_autograd only
    # (grad_mode_checked raises there), without compiling C++.
    cases = {
        "list for a tuple": (
            lambda x: (x * 2, grad_mode_checked(x)),
            lambda x: [x * 2, grad_mode_checked(x)],
        ),
        "tuple for a list": (
            lambda x: [x + 1, grad_mode_checked(x)],
            lambda x: (x + 1, grad_mode_checked(x)),
        ),
        "nested in a dict": (
            lambda x: {"a": (x * 2, [x - 1]), "b": grad_mode_checked(x)},
            lambda x: {"a": [x * 2, (x - 1,)], "b": grad_mode_checked(x)},
        ),
    }
    x = randn(3, 4, seed=85)
    return {
        name: solution.first_failing_layer(_one_way_eager_another_compiled(eager, compiled), (x,), fullgraph=True)
        for name, (eager, compiled) in cases.items()
    }
