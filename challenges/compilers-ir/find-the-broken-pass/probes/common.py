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

from given.pipeline import CompileAndRun, build_case


def observe(solution: Any, program: str, n: int, **plant: Any) -> Any:
    """Build the case, call the candidate once, and return its answer and compile count (or what is wrong)."""
    case = build_case(program, n, **plant)
    counter = CompileAndRun()

    def compile_and_run(ir_text: str, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        return counter(ir_text, inputs)

    answer = solution.find_broken_pass(list(case.passes), [a.copy() for a in case.inputs], [e.copy() for e in case.expected], compile_and_run)
    if isinstance(answer, np.integer):
        answer = int(answer)
    if answer is not None and (isinstance(answer, bool) or not isinstance(answer, int)):
        return f"find_broken_pass returned {answer!r:.80}; it must return a pass index (an int) or None"
    if answer is not None and not 0 <= answer < len(case.passes):
        return f"find_broken_pass returned {answer}; the indices of the {len(case.passes)} passes run from 0 to {len(case.passes) - 1}"

    def name(index: int | None) -> str | None:
        return None if index is None else case.passes[index][0]

    return {
        "answer": answer,
        "answer_pass": name(answer),
        "compiles": counter.calls,
        "dumps": len(case.passes),
        "planted": case.broken,
        "planted_pass": name(case.broken),
    }
