"""What the public and hidden probes of find-the-broken-pass share (imported as ``probe_common``).

The machinery (the programs, their dumps, ``build_case``, ``CompileAndRun``)
is the package's given/pipeline.py, which the candidate reads and imports
too: one copy, so what they try locally is what the probes run. Here is
``observe`` (one call of the candidate's ``find_broken_pass``),
``observe_plantings`` (the generated probes: one pipeline, its bug planted in
turn at many passes, one call per planting, and the truth found by checking
every dump), and the platform's compile cache (runner/compile_cache.py)
under the two compiles the probes repeat for fixed inputs: the dumps of each
case's programs, and the vmfb of each dump. Both are filled when the sandbox
environment is built (challenge.toml: ``warm = ["compile"]``); the count of
the candidate's compiles is the same with or without them, only the work is
skipped. Within one probe's process a dump is compiled once (``_COMPILED``),
however many plantings and counters send it.
"""

from __future__ import annotations

import functools
import os
import random
import subprocess
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import compile_cache
import numpy as np
from given import pipeline
from given.pipeline import (
    DEVICE_FLAGS,
    DUMP_FLAGS,
    FIXED_POINT_MARK,
    CompileAndRun,
    CompileBudgetExceeded,
    build_case,
    compile_budget,
    iree_compile_binary,
    split_dumps,
)


@functools.cache  # a generated probe builds the correct pipeline twice: once beside the broken one, once alone
def _dump_log(source: str, phase: str) -> str:
    """iree-compile's log of ``source`` up to ``phase`` with every pass's IR: from the cache, else compiled."""
    flags = (*DEVICE_FLAGS, f"--compile-to={phase}", "-o", os.devnull, *DUMP_FLAGS)

    def build() -> bytes:
        command = [iree_compile_binary(), "-", *flags]
        done = subprocess.run(command, input=source.encode(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"iree-compile failed:\n{done.stderr[-3000:].decode('utf-8', 'replace')}")
        return done.stderr

    # The raw log, not the split dumps: the entry is iree-compile's output
    # alone, so a change to how given/pipeline.py splits it cannot be masked.
    return compile_cache.cached("iree-pass-dumps", [*flags, source], build).decode("utf-8")


def cached_pass_dumps(sources: list[str], phase: str) -> list[list[tuple[str, str]]]:
    """given.pipeline.pass_dumps, with each source's log from the compile cache; misses compile in parallel, as there."""
    with ThreadPoolExecutor(max_workers=max(1, len(sources))) as pool:
        logs = list(pool.map(functools.partial(_dump_log, phase=phase), sources))
    return [[d for d in split_dumps(log) if FIXED_POINT_MARK not in d[1]] for log in logs]


# build_case (given/pipeline.py) finds pass_dumps among its module's names.
# The given module is also the candidate's local copy, which must run without
# the platform, so the probes swap the cached version in here, in every
# probe's process (each imports the given modules and this file afresh).
pipeline.pass_dumps = cached_pass_dumps


# The vmfb of every text compiled in this probe's process (each probe runs in
# a fresh one): the generated probes hand the same dumps to many counters.
_COMPILED: dict[str, bytes] = {}


class CachedCompileAndRun(CompileAndRun):
    """CompileAndRun whose compiles (IR text -> vmfb bytes) come from the compile cache when it holds them.

    Only ``_compile`` changes: ``__call__`` still counts every call and
    enforces the budget before anything is compiled or looked up.
    """

    def _compile(self, ir_text: str) -> bytes:
        if ir_text not in _COMPILED:
            build = functools.partial(CompileAndRun._compile, self, ir_text)
            _COMPILED[ir_text] = compile_cache.cached("iree-vmfb", [*DEVICE_FLAGS, ir_text], build)
        return _COMPILED[ir_text]


def fill_compiles(passes: Sequence[tuple[str, str]]) -> None:
    """While the warm build fills the cache: compile every distinct dump of a case, not only those the reference asks for.

    A candidate whose search differs from the reference's (a plain bisection
    over every dump, a linear scan) then finds each of its compiles cached
    too. A dump IREE cannot compile stores nothing; a candidate who sends it
    gets IREE's error, compiled for real.
    """
    compiler = CachedCompileAndRun()
    for text in dict.fromkeys(ir for _, ir in passes):
        try:
            compiler._compile(text)
        except RuntimeError:
            continue


def _call(solution: Any, case: Any, counter: CompileAndRun) -> Any:
    """One call of the candidate's ``find_broken_pass`` on ``case``: its answer (an index or None), or what is wrong with it.

    A search stopped by ``counter``'s budget gives ``CompileBudgetExceeded``,
    whose answer is None; the caller reads ``counter.over_budget``.
    """

    def compile_and_run(ir_text: str, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        return counter(ir_text, inputs)

    dumps = len(case.passes)
    try:
        answer = solution.find_broken_pass(list(case.passes), [a.copy() for a in case.inputs], [e.copy() for e in case.expected], compile_and_run)
    except CompileBudgetExceeded:
        answer = None
    if isinstance(answer, np.integer):
        answer = int(answer)
    if counter.over_budget:
        return None
    if answer is not None and (isinstance(answer, bool) or not isinstance(answer, int)):
        return f"find_broken_pass returned {answer!r:.80}; it must return a pass index (an int) or None"
    if answer is not None and not 0 <= answer < dumps:
        return f"find_broken_pass returned {answer}; the indices of the {dumps} passes run from 0 to {dumps - 1}"
    return answer


def observe(solution: Any, program: str, n: int, *, budgeted: bool = False, **plant: Any) -> Any:
    """Build the case, call the candidate once, and return its answer and compile count (or what is wrong).

    ``budgeted`` (the bisect probes): compile_and_run stops the search at the
    call after ``compile_budget(n)``; the observation then says so, with no answer.
    """
    case = build_case(program, n, **plant)
    dumps = len(case.passes)
    if compile_cache.fill_dir() is not None:
        fill_compiles(case.passes)
    counter = CachedCompileAndRun(budget=compile_budget(dumps) if budgeted else None)

    def name(index: int | None) -> str | None:
        return None if index is None else case.passes[index][0]

    planted = {"dumps": dumps, "planted": case.broken, "planted_pass": name(case.broken)}
    budget = {"budget": counter.budget} if budgeted else {}
    answer = _call(solution, case, counter)
    if counter.over_budget:  # even if the search caught the exception and went on
        return {"over_budget": True, "compiles": counter.calls, **budget, **planted}
    if isinstance(answer, str):
        return answer
    return {"answer": answer, "answer_pass": name(answer), "compiles": counter.calls, **budget, **planted}


# ---------------------------------------------------------------- the generated probes: one pipeline, many plantings

RTOL, ATOL = 1e-4, 1e-5
# Pass names that run many times (the flag before " @function").
REPEATED = ("canonicalize", "cse", "iree-flow-canonicalize")
# How many of the other passes that change nothing on the correct program each generated probe plants at.
OTHER_NO_OPS = 6


def error_over_bound(outputs: Sequence[np.ndarray], expected: Sequence[np.ndarray]) -> float:
    """The worst element's |y - e| / (atol + rtol * |e|) over every output (inf for a missing output or a NaN): at most 1 is good."""
    if len(outputs) != len(expected):
        return float("inf")
    worst = 0.0
    for y, e in zip(outputs, expected, strict=True):
        y = np.asarray(y, dtype=np.float64)
        if y.shape != e.shape:
            return float("inf")
        ratio = np.abs(y - e) / (ATOL + RTOL * np.abs(e))
        worst = max(worst, float(np.nan_to_num(ratio, nan=np.inf).max(initial=0.0)))
    return worst


def planting_sites(passes: Sequence[tuple[str, str]], seed: int) -> list[int]:
    """Where the generated probes plant the bug, in turn: dumps of the correct pipeline ``passes``.

    The first and the last pass; every run of canonicalize and CSE (mostly
    passes that change nothing, and a repeated name: its later runs too);
    every symbol-dce; and ``OTHER_NO_OPS`` of the other passes whose dump is
    the same text as the one before it, drawn from ``seed``. At a pass that
    changes nothing on the correct program, the bug is the only change in
    its dump.
    """
    n = len(passes)
    flags = [name.split()[0] for name, _ in passes]
    runs = [i for i, flag in enumerate(flags) if flag in REPEATED or flag == "symbol-dce"]
    others = [i for i in range(1, n) if passes[i][1] == passes[i - 1][1] and i not in runs]
    drawn = random.Random(seed).sample(others, min(OTHER_NO_OPS, len(others)))
    return sorted({0, n - 1, *runs, *drawn})


def observe_plantings(solution: Any, program: str, n: int, *, bug: str, phase: str, seed: int) -> Any:
    """A generated probe: one pipeline, ``bug`` planted in turn at every site of ``planting_sites``, one call each.

    Every distinct dump of the correct and the broken pipeline is compiled
    and judged by the statement's test first, so the truth of each planting
    is found by checking every one of its dumps (the first broken one), not
    assumed from where the bug went in. Each call gets a fresh
    ``compile_and_run`` with the bisect probes' budget. The observation
    holds, for each planting, the answer and the compiles (or "over_budget",
    or what is wrong with the answer), and the truth with its margins: the
    worst good dump's error over the bound and the least broken one's.
    """
    broken = build_case(program, n, bug=bug, at="first", phase=phase, seed=seed)  # every dump broken
    correct = build_case(program, n, phase=phase, seed=seed)  # nothing broken (its dumps from the line above)
    judge = CachedCompileAndRun()
    texts = dict.fromkeys(text for _, text in [*correct.passes, *broken.passes])
    ratio = {text: error_over_bound(judge(text, correct.inputs), correct.expected) for text in texts}
    good, bad = correct.passes, broken.passes
    dumps = len(good)
    budget = compile_budget(dumps)
    sites = planting_sites(good, seed)
    truth, cases = [], []
    for k in sites:
        passes = good[:k] + bad[k:]  # what build_case(program, n, bug=bug, at=k's pass, ...) returns
        truth.append(next((i for i, (_, text) in enumerate(passes) if ratio[text] > 1), None))
        counter = CachedCompileAndRun(budget=budget)
        answer = _call(solution, correct._replace(passes=passes, broken=k), counter)
        if counter.over_budget:
            cases.append({"over_budget": True, "compiles": counter.calls})
        elif isinstance(answer, str):
            cases.append(answer)
        else:
            cases.append({"answer": answer, "compiles": counter.calls})
    return {
        "program": program, "n": n, "bug": bug, "phase": phase, "dumps": dumps, "budget": budget,
        "passes": [name for name, _ in good], "changes": [i == 0 or good[i][1] != good[i - 1][1] for i in range(dumps)],
        "planted": sites, "truth": truth, "cases": cases,
        "worst_good": max(ratio[text] for _, text in good), "least_bad": min(ratio[text] for _, text in bad),
    }  # fmt: skip


# ---------------------------------------------------------------- many calls in one process

def observe_calls(solution: Any, program: str, n: int, steps: Sequence[dict[str, Any]]) -> Any:
    """Many calls of ``find_broken_pass`` in this one process, each judged against its own truth.

    Every step is one call: a pipeline of ``program`` (``bug`` planted ``at`` a
    pass, or nothing planted) run on its own inputs. ``inputs`` is a seed
    (new arrays, which after ``gc.collect()`` often land where the last
    call's were), ``"same"`` (the previous step's arrays, their values
    overwritten in place with those of ``seed``) or ``"equal"`` (every
    argument of ``@main`` the same values, so a bug that only trades or
    scales a difference changes nothing: the same IR texts as another step,
    good on these inputs). The truth of each step is its first dump that
    fails the statement's test on *its* inputs, found by checking every dump;
    an answer kept from an earlier call (outputs, verdicts or answers keyed
    on the IR texts, on the arrays' ids or on the list objects) misses it.
    """
    import gc

    judge = CachedCompileAndRun()
    cases, truth, worst_good, least_bad = [], [], 0.0, float("inf")
    arrays: list[np.ndarray] = []
    seen_ids: set[int] = set()
    reused = 0
    for step in steps:
        plant = {k: step[k] for k in ("bug", "at", "phase") if k in step}
        case = build_case(program, n, seed=step["seed"], **plant)
        if compile_cache.fill_dir() is not None:
            fill_compiles(case.passes)
        how = step.get("inputs", "new")
        if how == "same":
            for mine, values in zip(arrays, case.inputs, strict=True):
                mine[...] = values  # the caller's own arrays, changed in place since the last call
        else:
            arrays = []
            gc.collect()  # what the last call was given is freed: new arrays may get its ids
            base = case.inputs[0]
            arrays = [(base if how == "equal" else a).copy() for a in case.inputs]
        if how == "equal":
            expected = [np.asarray(e, np.float64) for e in pipeline.PROGRAMS[program](n, None)[2](*[a.astype(np.float64) for a in arrays])]
        else:
            expected = [e.copy() for e in case.expected]
        ratio = {text: error_over_bound(judge(text, arrays), expected) for text in dict.fromkeys(t for _, t in case.passes)}
        for r in ratio.values():
            if r <= 1:
                worst_good = max(worst_good, r)
            else:
                least_bad = min(least_bad, r)
        truth.append(next((i for i, (_, text) in enumerate(case.passes) if ratio[text] > 1), None))
        if how != "same":  # new arrays at an id an earlier call's arrays had: what an id-keyed cache trips on
            reused += id(arrays[0]) in seen_ids
        seen_ids.add(id(arrays[0]))
        counter = CachedCompileAndRun()

        def compile_and_run(ir_text: str, inputs: Sequence[np.ndarray], counter: CompileAndRun = counter) -> list[np.ndarray]:
            return counter(ir_text, inputs)

        answer = solution.find_broken_pass(list(case.passes), arrays, [e.copy() for e in expected], compile_and_run)
        if isinstance(answer, np.integer):
            answer = int(answer)
        if answer is not None and (isinstance(answer, bool) or not isinstance(answer, int) or not 0 <= answer < len(case.passes)):
            cases.append(f"find_broken_pass returned {answer!r:.80}; it must return a pass index (an int) of this pipeline or None")
        else:
            cases.append({"answer": answer, "compiles": counter.calls})
    return {"program": program, "n": n, "dumps": len(case.passes), "truth": truth, "cases": cases,
            "worst_good": worst_good, "least_bad": least_bad, "ids_reused": reused}  # fmt: skip
