"""What the public and hidden probes of find-the-broken-pass share (imported as ``probe_common``).

The machinery (the programs, their dumps, ``build_case``, ``CompileAndRun``)
is the package's given/pipeline.py, which the candidate reads and imports
too: one copy, so what they try locally is what the probes run. Here is
only ``observe``: one call of the candidate's ``find_broken_pass``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from given.pipeline import CompileAndRun, CompileBudgetExceeded, build_case, compile_budget


def observe(solution: Any, program: str, n: int, *, budgeted: bool = False, **plant: Any) -> Any:
    """Build the case, call the candidate once, and return its answer and compile count (or what is wrong).

    ``budgeted`` (the bisect probes): compile_and_run stops the search at the
    call after ``compile_budget(n)``; the observation then says so, with no answer.
    """
    case = build_case(program, n, **plant)
    dumps = len(case.passes)
    counter = CompileAndRun(budget=compile_budget(dumps) if budgeted else None)

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
