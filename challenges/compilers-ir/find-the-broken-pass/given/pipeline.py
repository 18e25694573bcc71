"""The probes' machinery for find-the-broken-pass: the programs, their pass dumps, a case, the compile counter.

This is the code the probes run, read-only: every probe builds its case with
``build_case`` and hands your ``find_broken_pass`` a ``CompileAndRun``
(through a wrapper that only counts). Import it to build cases, plant bugs
and count your compiles locally:

    from given.pipeline import CompileAndRun, build_case

- ``pass_dumps(sources, phase)``: compile MLIR sources with iree-compile up
  to ``phase``, printing the IR after every pass; the dumps that do not
  compile standalone (inside a fixed-point iteration) are dropped.
- ``build_case(program, n, bug=..., at=..., phase=..., seed=...)``: one of
  the programs in ``PROGRAMS``, its float32 inputs, its float64 expected
  outputs, and its dumps with ``bug`` planted at pass ``at`` and carried into
  every later dump. ``case.broken`` is where it was planted.
- ``CompileAndRun(budget=None)``: ``compile_and_run(ir_text, inputs)``;
  ``.calls`` counts every call. With a budget (the bisect probes give
  ``compile_budget(n)``), the call after the last one allowed compiles
  nothing and raises ``CompileBudgetExceeded``.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

# ---------------------------------------------------------------- IREE: dumps, compiling, running

# One target for every compile: IREE's CPU backend for a generic x86-64 CPU, so
# results do not depend on the machine (and IREE prints no "generic CPU" warning).
DEVICE_FLAGS = (
    "--iree-hal-target-device=local",
    "--iree-hal-local-target-device-backends=llvm-cpu",
    "--iree-llvmcpu-target-cpu=generic",
)
# With module scope every dump is a whole module (a function pass would
# otherwise print only its function), so each dump can be compiled on its own.
DUMP_FLAGS = (
    "--mlir-print-ir-after-all",
    "--mlir-print-ir-module-scope",
    "--mlir-disable-threading",
)
# "// -----// IR Dump After ElementwiseOpFusionPass: iree-dispatch-creation-elementwise-op-fusion{...} ('util.func' operation: @main) //----- //"
DUMP_HEADER = re.compile(r"^// -----// IR Dump After \S+: ([^\s{]+)(?:\{.*\})? \((.*)\) //----- //$", re.M)
# Inside a fixed-point iteration IREE marks the module with this attribute; such
# a dump does not compile standalone ("nested fixed point pipelines not supported").
FIXED_POINT_MARK = "iree.fixedpoint.iteration"


def iree_compile_binary() -> str:
    from iree.compiler.tools.binaries import find_tool

    return find_tool("iree-compile")


def split_dumps(log: str) -> list[tuple[str, str]]:
    """(pass name, module text) for every dump in an --mlir-print-ir-after-all log."""
    heads = list(DUMP_HEADER.finditer(log))
    dumps = []
    for head, nxt in zip(heads, [*heads[1:], None], strict=True):
        flag, scope = head.groups()
        # "cse @main" for a pass that ran on function @main, "iree-util-ipo" for a module pass.
        where = scope.rsplit("operation: ", 1)[1] if "operation: " in scope else ""
        body = log[head.end() : nxt.start() if nxt else len(log)].strip() + "\n"
        dumps.append((f"{flag} {where}".strip(), body))
    return dumps


def pass_dumps(sources: list[str], phase: str) -> list[list[tuple[str, str]]]:
    """Compile each source up to ``phase`` with iree-compile, printing the IR after every pass.

    The sources compile in parallel (two processes). Dumps printed inside a
    fixed-point iteration are dropped: they do not compile standalone.
    """
    cmd = [iree_compile_binary(), "-", *DEVICE_FLAGS, f"--compile-to={phase}", "-o", os.devnull, *DUMP_FLAGS]
    procs = [subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for _ in sources]
    result = []
    for proc, source in zip(procs, sources, strict=True):
        _, log = proc.communicate(source)
        if proc.returncode != 0:
            raise RuntimeError(f"iree-compile failed:\n{log[-3000:]}")
        result.append([d for d in split_dumps(log) if FIXED_POINT_MARK not in d[1]])
    return result


def compile_budget(dumps: int) -> int:
    """The compiles a bisect probe allows for ``dumps`` dumps: ceil(log2(n)) + 2, a bisection with two to spare."""
    return math.ceil(math.log2(dumps)) + 2


class CompileBudgetExceeded(RuntimeError):
    """Raised by a ``CompileAndRun`` with a budget at the call after the last one allowed: the search has already failed."""


class CompileAndRun:
    """``compile_and_run(ir_text, inputs)``: compile an IR text with IREE and run its @main.

    It compiles in this process with IREE's compiler API (llvm-cpu), loads the
    module into IREE's runtime and calls ``main`` on ``inputs``; it returns the
    outputs as a list of float32 arrays. Every call counts as one compile,
    repeats included (a repeat reuses the module it compiled before, so it is
    fast, but it is counted). With a ``budget``, the call after the last one
    allowed compiles nothing and raises ``CompileBudgetExceeded``, and so does
    every call after it: a search past its budget ends at once instead of
    running on to a result that no longer counts.
    """

    def __init__(self, budget: int | None = None) -> None:
        self.calls = 0
        self.budget = budget
        self.over_budget = False
        self._session: Any = None
        self._modules: dict[str, bytes] = {}

    def _compile(self, ir_text: str) -> bytes:
        from iree.compiler.api import Output, Session, Source

        if self._session is None:
            self._session = Session()
            self._session.set_flags(*DEVICE_FLAGS)
        invocation = self._session.invocation()
        try:
            invocation.enable_console_diagnostics()
            invocation.parse_source(Source.wrap_buffer(self._session, ir_text.encode()))
            if not invocation.execute():
                raise RuntimeError("IREE could not compile this IR (its diagnostics are printed above)")
            output = Output.open_membuffer()
            invocation.output_vm_bytecode(output)
            return bytes(output.map_memory())
        finally:
            invocation.close()

    def __call__(self, ir_text: str, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        import iree.runtime as rt

        if not isinstance(ir_text, str):
            raise TypeError(f"compile_and_run takes the IR text (a str), not {type(ir_text).__name__}")
        self.calls += 1
        if self.budget is not None and self.calls > self.budget:
            self.over_budget = True
            raise CompileBudgetExceeded(f"compile {self.calls} is over this case's budget of {self.budget}: the search stops here")
        if ir_text not in self._modules:
            self._modules[ir_text] = self._compile(ir_text)
        context = rt.SystemContext(config=rt.Config("local-sync"))
        context.add_vm_module(rt.VmModule.copy_buffer(context.instance, self._modules[ir_text]))
        results = context.modules.module["main"](*[np.ascontiguousarray(a, dtype=np.float32) for a in inputs])
        if not isinstance(results, tuple | list):
            results = (results,)
        return [np.asarray(r).copy() for r in results]


# ---------------------------------------------------------------- the programs

# Each program is small linalg-on-tensors MLIR with a reference meaning in
# NumPy (float64). ``bug`` plants one of three miscompilations in the source:
#   "swap"   - the operands of a non-commutative op exchanged,
#   "const"  - a scalar constant rounded through bfloat16 (a 0.1-0.4% change),
#   "reduce" - a reduction over the wrong dimension (the tensors are square).


def f32_text(value: float) -> str:
    return f"{value:.9e}"


def bf16_rounded(value: float) -> float:
    """``value`` rounded to bfloat16's 8 significant bits: what a folder that went through bf16 would leave."""
    mantissa, exponent = math.frexp(value)
    return math.ldexp(round(mantissa * 256) / 256, exponent)


def constant(value: float, bug: str | None) -> str:
    return f32_text(bf16_rounded(value) if bug == "const" else value)


ID2 = "affine_map<(i, j) -> (i, j)>"
ROW = "affine_map<(i, j) -> (i)>"
COL = "affine_map<(i, j) -> (j)>"


def generic(result: str, maps: list[str], ins: list[tuple[str, str]], out: tuple[str, str], reduction: bool = False) -> str:
    """The first lines of ``result = linalg.generic ...`` up to its region's opening brace (2-d iteration space)."""
    iterators = '["parallel", "reduction"]' if reduction else '["parallel", "parallel"]'
    names = ", ".join(name for name, _ in ins)
    types = ", ".join(ty for _, ty in ins)
    return (
        f"  {result} = linalg.generic {{indexing_maps = [{', '.join(maps)}], iterator_types = {iterators}}}\n"
        f"      ins({names} : {types}) outs({out[0]} : {out[1]}) {{"
    )


def reduce_add(name: str, source: str, init: str, dim: int, t: str, v: str) -> str:
    return f"""  {name} = linalg.reduce ins({source} : {t}) outs({init} : {v}) dimensions = [{dim}]
    (%elem: f32, %partial: f32) {{
      %more = arith.addf %elem, %partial : f32
      linalg.yield %more : f32
    }}"""


Program = tuple[str, list[tuple[int, ...]], Callable[..., list[np.ndarray]]]


def dense_relu_rowsum(n: int, bug: str | None) -> Program:
    """out[i] = sum_j relu(x @ w + b)[i, j] / 7"""
    t, v = f"tensor<{n}x{n}xf32>", f"tensor<{n}xf32>"
    operands = "%w, %x" if bug == "swap" else "%x, %w"
    src = f"""func.func @main(%x: {t}, %w: {t}, %b: {v}) -> {v} {{
  %zero = arith.constant 0.0 : f32
  %c = arith.constant {constant(1 / 7, bug)} : f32
  %e = tensor.empty() : {t}
  %acc = linalg.fill ins(%zero : f32) outs(%e : {t}) -> {t}
  %mm = linalg.matmul ins({operands} : {t}, {t}) outs(%acc : {t}) -> {t}
{generic("%h", [ID2, COL, ID2], [("%mm", t), ("%b", v)], ("%e", t))}
  ^bb0(%m: f32, %bias: f32, %o: f32):
    %s = arith.addf %m, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    %y = arith.mulf %r, %c : f32
    linalg.yield %y : f32
  }} -> {t}
  %ev = tensor.empty() : {v}
  %init = linalg.fill ins(%zero : f32) outs(%ev : {v}) -> {v}
{reduce_add("%out", "%h", "%init", 0 if bug == "reduce" else 1, t, v)}
  return %out : {v}
}}
"""

    def meaning(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> list[np.ndarray]:
        return [(np.maximum(x @ w + b, 0.0) / 7).sum(1)]

    return src, [(n, n), (n, n), (n,)], meaning


def softmax_rows(n: int, bug: str | None) -> Program:
    """p = softmax(x / sqrt(12)) along rows, with the max subtracted."""
    t, v = f"tensor<{n}x{n}xf32>", f"tensor<{n}xf32>"
    scale = 1 / math.sqrt(12)
    diff = "%m, %sv" if bug == "swap" else "%sv, %m"
    src = f"""func.func @main(%x: {t}) -> {t} {{
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant {constant(scale, bug)} : f32
  %e = tensor.empty() : {t}
  %ev = tensor.empty() : {v}
{generic("%s", [ID2, ID2], [("%x", t)], ("%e", t))}
  ^bb0(%a: f32, %o: f32):
    %y = arith.mulf %a, %scale : f32
    linalg.yield %y : f32
  }} -> {t}
  %minit = linalg.fill ins(%ninf : f32) outs(%ev : {v}) -> {v}
  %mx = linalg.reduce ins(%s : {t}) outs(%minit : {v}) dimensions = [1]
    (%elem: f32, %partial: f32) {{
      %big = arith.maximumf %elem, %partial : f32
      linalg.yield %big : f32
    }}
{generic("%ex", [ID2, ROW, ID2], [("%s", t), ("%mx", v)], ("%e", t))}
  ^bb0(%sv: f32, %m: f32, %o: f32):
    %d = arith.subf {diff} : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  }} -> {t}
  %zinit = linalg.fill ins(%zero : f32) outs(%ev : {v}) -> {v}
{reduce_add("%z", "%ex", "%zinit", 0 if bug == "reduce" else 1, t, v)}
{generic("%p", [ID2, ROW, ID2], [("%ex", t), ("%z", v)], ("%e", t))}
  ^bb0(%a: f32, %total: f32, %o: f32):
    %y = arith.divf %a, %total : f32
    linalg.yield %y : f32
  }} -> {t}
  return %p : {t}
}}
"""

    def meaning(x: np.ndarray) -> list[np.ndarray]:
        s = x * scale
        ex = np.exp(s - s.max(1, keepdims=True))
        return [ex / ex.sum(1, keepdims=True)]

    return src, [(n, n)], meaning


def layernorm_rows(n: int, bug: str | None) -> Program:
    """y = (x - mean) / sqrt(var + 1e-5) * gamma + beta along rows (the means as sums times 1/n)."""
    t, v = f"tensor<{n}x{n}xf32>", f"tensor<{n}xf32>"
    centre = "%mu, %a" if bug == "swap" else "%a, %mu"
    src = f"""func.func @main(%x: {t}, %gamma: {v}, %beta: {v}) -> {t} {{
  %zero = arith.constant 0.0 : f32
  %inv_n = arith.constant {constant(1 / n, bug)} : f32
  %eps = arith.constant 1.000000e-05 : f32
  %e = tensor.empty() : {t}
  %ev = tensor.empty() : {v}
  %sinit = linalg.fill ins(%zero : f32) outs(%ev : {v}) -> {v}
{reduce_add("%sum", "%x", "%sinit", 0 if bug == "reduce" else 1, t, v)}
{generic("%d", [ID2, ROW, ID2], [("%x", t), ("%sum", v)], ("%e", t))}
  ^bb0(%a: f32, %s: f32, %o: f32):
    %mu = arith.mulf %s, %inv_n : f32
    %c = arith.subf {centre} : f32
    linalg.yield %c : f32
  }} -> {t}
{generic("%sq", [ID2, ROW], [("%d", t)], ("%sinit", v), reduction=True)}
  ^bb0(%a: f32, %acc: f32):
    %p = arith.mulf %a, %a : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  }} -> {v}
{generic("%y", [ID2, ROW, COL, COL, ID2], [("%d", t), ("%sq", v), ("%gamma", v), ("%beta", v)], ("%e", t))}
  ^bb0(%c: f32, %q: f32, %g: f32, %b: f32, %o: f32):
    %var = arith.mulf %q, %inv_n : f32
    %ve = arith.addf %var, %eps : f32
    %r = math.rsqrt %ve : f32
    %n1 = arith.mulf %c, %r : f32
    %n2 = arith.mulf %n1, %g : f32
    %n3 = arith.addf %n2, %b : f32
    linalg.yield %n3 : f32
  }} -> {t}
  return %y : {t}
}}
"""

    def meaning(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> list[np.ndarray]:
        d = x - x.mean(1, keepdims=True)
        return [d / np.sqrt((d * d).mean(1, keepdims=True) + 1e-5) * gamma + beta]

    return src, [(n, n), (n,), (n,)], meaning


def gelu_colmean(n: int, bug: str | None) -> Program:
    """out[j] = mean_i gelu_tanh(x @ w)[i, j]"""
    t, v = f"tensor<{n}x{n}xf32>", f"tensor<{n}xf32>"
    operands = "%w, %x" if bug == "swap" else "%x, %w"
    k, a = math.sqrt(2 / math.pi), 0.044715
    src = f"""func.func @main(%x: {t}, %w: {t}) -> {v} {{
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %k = arith.constant {constant(k, bug)} : f32
  %a = arith.constant {f32_text(a)} : f32
  %inv_n = arith.constant {f32_text(1 / n)} : f32
  %e = tensor.empty() : {t}
  %acc = linalg.fill ins(%zero : f32) outs(%e : {t}) -> {t}
  %h = linalg.matmul ins({operands} : {t}, {t}) outs(%acc : {t}) -> {t}
{generic("%g", [ID2, ID2], [("%h", t)], ("%e", t))}
  ^bb0(%u: f32, %o: f32):
    %u2 = arith.mulf %u, %u : f32
    %u3 = arith.mulf %u2, %u : f32
    %au3 = arith.mulf %a, %u3 : f32
    %in = arith.addf %u, %au3 : f32
    %arg = arith.mulf %k, %in : f32
    %th = math.tanh %arg : f32
    %op = arith.addf %one, %th : f32
    %hu = arith.mulf %half, %u : f32
    %y = arith.mulf %hu, %op : f32
    %ym = arith.mulf %y, %inv_n : f32
    linalg.yield %ym : f32
  }} -> {t}
  %ev = tensor.empty() : {v}
  %init = linalg.fill ins(%zero : f32) outs(%ev : {v}) -> {v}
{reduce_add("%out", "%g", "%init", 1 if bug == "reduce" else 0, t, v)}
  return %out : {v}
}}
"""

    def meaning(x: np.ndarray, w: np.ndarray) -> list[np.ndarray]:
        h = x @ w
        return [(0.5 * h * (1 + np.tanh(k * (h + a * h**3)))).mean(0)]

    return src, [(n, n), (n, n)], meaning


def diff_and_energy(n: int, bug: str | None) -> Program:
    """Two outputs: d = (x - y) / 3, and e[i] = sum_j (x - y)[i, j]^2."""
    t, v = f"tensor<{n}x{n}xf32>", f"tensor<{n}xf32>"
    diff = "%b, %a" if bug == "swap" else "%a, %b"
    src = f"""func.func @main(%x: {t}, %y: {t}) -> ({t}, {v}) {{
  %zero = arith.constant 0.0 : f32
  %third = arith.constant {constant(1 / 3, bug)} : f32
  %e = tensor.empty() : {t}
{generic("%d", [ID2, ID2, ID2], [("%x", t), ("%y", t)], ("%e", t))}
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf {diff} : f32
    linalg.yield %s : f32
  }} -> {t}
{generic("%scaled", [ID2, ID2], [("%d", t)], ("%e", t))}
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %third : f32
    linalg.yield %s : f32
  }} -> {t}
{generic("%sq", [ID2, ID2], [("%d", t)], ("%e", t))}
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  }} -> {t}
  %ev = tensor.empty() : {v}
  %init = linalg.fill ins(%zero : f32) outs(%ev : {v}) -> {v}
{reduce_add("%energy", "%sq", "%init", 0 if bug == "reduce" else 1, t, v)}
  return %scaled, %energy : {t}, {v}
}}
"""

    def meaning(x: np.ndarray, y: np.ndarray) -> list[np.ndarray]:
        d = x - y
        return [d / 3, (d * d).sum(1)]

    return src, [(n, n), (n, n)], meaning


PROGRAMS: dict[str, Callable[[int, str | None], Program]] = {
    "dense_relu_rowsum": dense_relu_rowsum,
    "softmax_rows": softmax_rows,
    "layernorm_rows": layernorm_rows,
    "gelu_colmean": gelu_colmean,
    "diff_and_energy": diff_and_energy,
}


# ---------------------------------------------------------------- a case


class Case(NamedTuple):
    passes: list[tuple[str, str]]  # (pass name, IR after that pass), in pipeline order
    inputs: list[np.ndarray]  # float32 arguments of @main
    expected: list[np.ndarray]  # float64: what @main must return
    broken: int | None  # the planted pass (None: nothing planted)


def build_case(
    program: str,
    n: int,
    bug: str | None = None,
    at: str | tuple[str, int] | None = None,
    phase: str = "dispatch-creation",
    seed: int = 0,
) -> Case:
    """Compile ``program`` up to ``phase`` with every pass's IR dumped, and plant ``bug`` at pass ``at``.

    ``at`` is ``(pass name, occurrence)`` (the occurrence-th dump of that pass),
    ``"first"`` or ``"last"``. The bug is carried into every later dump the way
    a real miscompile is: the dumps from ``at`` on come from compiling the
    program with the bug in it, so each later pass transforms the broken IR.
    """
    source, shapes, meaning = PROGRAMS[program](n, None)
    rng = np.random.default_rng(seed)
    inputs = [rng.standard_normal(shape).astype(np.float32) for shape in shapes]
    expected = [np.asarray(e, np.float64) for e in meaning(*[a.astype(np.float64) for a in inputs])]
    if bug is None:
        (good,) = pass_dumps([source], phase)
        return Case(good, inputs, expected, None)
    good, bad = pass_dumps([source, PROGRAMS[program](n, bug)[0]], phase)
    if [name for name, _ in good] != [name for name, _ in bad]:
        raise RuntimeError("the pass pipelines of the program and of its broken copy differ")
    if at == "first":
        k = 0
    elif at == "last":
        k = len(good) - 1
    else:
        name, occurrence = at
        k = [i for i, (p, _) in enumerate(good) if p == name][occurrence]
    return Case(good[:k] + bad[k:], inputs, expected, k)
