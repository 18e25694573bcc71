"""What the public and hidden probes of find-the-broken-pass share (imported as ``probe_common``).

The machinery (the programs, their dumps, ``build_case``, ``CompileAndRun``)
is the package's given/pipeline.py, which the candidate reads and imports
too: one copy, so what they try locally is what the probes run. Here is
``observe`` (one call of the candidate's ``find_broken_pass``), and the
platform's compile cache (runner/compile_cache.py) under the two compiles
the probes repeat for fixed inputs: the dumps of each case's programs, and
the vmfb of each dump. Both are filled when the sandbox environment is built
(challenge.toml: ``warm = ["compile"]``); the count of the candidate's
compiles is the same with or without them, only the work is skipped.
"""

from __future__ import annotations

import functools
import os
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


class CachedCompileAndRun(CompileAndRun):
    """CompileAndRun whose compiles (IR text -> vmfb bytes) come from the compile cache when it holds them.

    Only ``_compile`` changes: ``__call__`` still counts every call and
    enforces the budget before anything is compiled or looked up.
    """

    def _compile(self, ir_text: str) -> bytes:
        build = functools.partial(CompileAndRun._compile, self, ir_text)
        return compile_cache.cached("iree-vmfb", [*DEVICE_FLAGS, ir_text], build)


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

    def compile_and_run(ir_text: str, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        return counter(ir_text, inputs)

    def name(index: int | None) -> str | None:
        return None if index is None else case.passes[index][0]

    planted = {"dumps": dumps, "planted": case.broken, "planted_pass": name(case.broken)}
    budget = {"budget": counter.budget} if budgeted else {}
    try:
        answer = solution.find_broken_pass(list(case.passes), [a.copy() for a in case.inputs], [e.copy() for e in case.expected], compile_and_run)
    except CompileBudgetExceeded:
        answer = None
    if counter.over_budget:  # even if the search caught the exception and went on
        return {"over_budget": True, "compiles": counter.calls, **budget, **planted}
    if isinstance(answer, np.integer):
        answer = int(answer)
    if answer is not None and (isinstance(answer, bool) or not isinstance(answer, int)):
        return f"find_broken_pass returned {answer!r:.80}; it must return a pass index (an int) or None"
    if answer is not None and not 0 <= answer < dumps:
        return f"find_broken_pass returned {answer}; the indices of the {dumps} passes run from 0 to {dumps - 1}"
    return {"answer": answer, "answer_pass": name(answer), "compiles": counter.calls, **budget, **planted}
