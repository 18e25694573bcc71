"""Custom checks for find-the-broken-pass, run in the trusted worker.

A probe's observation is ``{"answer": index or None, "answer_pass": name,
"compiles": calls of compile_and_run, "dumps": n, "planted": index or None,
"planted_pass": name}``, or a string saying what was wrong with the answer.
The expected observation is the reference's on the same case. The right
answer and the number of dumps come from it, never from the candidate's
sandbox. ("planted" is where the probe planted the bug; the reference must
have found exactly that.)

- ``same_pass``: the answer must be the reference's.
- ``same_pass_within_budget``: the same, and at most ceil(log2(n)) + 2
  compiles for n dumps. The budget is the one the probe gave its
  ``CompileAndRun`` (``compile_budget`` in given/pipeline.py), read from the
  reference's observation; a search that went past it was stopped there and
  its observation says ``over_budget``.
"""

from __future__ import annotations

from typing import Any

WITHIN = " (within rtol=1e-4, atol=1e-5)"


def _describe(index: Any, name: Any) -> str:
    return "None (no broken pass)" if index is None else f"#{index} '{name}'"


def same_pass(actual: Any, expected: Any) -> tuple[bool, str]:
    if isinstance(actual, str):
        return False, actual
    if expected.get("answer") != expected.get("planted"):  # a package bug, never the candidate's fault
        return False, "the reference did not find the planted pass; report this challenge to its authors"
    want, got = expected["answer"], actual.get("answer")
    n, compiles = expected["dumps"], actual.get("compiles")
    used = f"{compiles} compile(s) for {n} dumps"
    if got == want:
        return True, f"found {_describe(want, expected['answer_pass'])} with {used}"
    mine = _describe(got, actual.get("answer_pass"))
    if want is None:
        return False, f"no pass is broken in this pipeline: every dump computes the expected outputs{WITHIN}. You returned {mine} ({used})."
    right = _describe(want, expected["answer_pass"])
    if got is None:
        return False, f"the first broken pass is {right}; you returned None ({used})"
    if got < want:
        last_good = " It is the last good pass, not the first broken one." if got == want - 1 else ""
        return False, (
            f"the first broken pass is {right}; you returned {mine}, which is earlier: "
            f"its dump still computes the expected outputs{WITHIN}.{last_good} ({used})"
        )
    return False, f"the first broken pass is {right}; you returned {mine}, which is later: the dumps from #{want} on are already broken ({used})"


def same_pass_within_budget(actual: Any, expected: Any) -> tuple[bool, str]:
    n, allowed = expected["dumps"], expected["budget"]
    if isinstance(actual, dict) and actual.get("over_budget"):
        return False, (
            f"the search was stopped at compile {allowed + 1}, over the budget: for {n} dumps it is "
            f"ceil(log2({n})) + 2 = {allowed}"
        )
    ok, message = same_pass(actual, expected)
    if not ok:
        return ok, message
    compiles = actual.get("compiles")
    if not isinstance(compiles, int) or compiles > allowed:
        return False, (
            f"right answer, {_describe(expected['answer'], expected['answer_pass'])}, but with {compiles} compiles: "
            f"for {n} dumps the budget is ceil(log2({n})) + 2 = {allowed}"
        )
    return True, f"{message} (budget {allowed})"
