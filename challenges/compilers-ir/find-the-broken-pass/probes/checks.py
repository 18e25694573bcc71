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
- ``every_planting_within_budget`` (the generated probes): one pipeline with
  its bug planted in turn at many passes; ``same_pass_within_budget`` on
  every planting, against the truth the probe found by checking every dump
  (``observe_plantings`` in probes/common.py). The reference's answers must
  be that truth, which must be where the bug went in, and the pipeline must
  keep the statement's promises (correct dumps within 1% of the bound, broken
  ones at least 3 times over it on some element); otherwise the package is
  at fault, never the candidate.
"""

from __future__ import annotations

from typing import Any

from grader.checks import CheckResult

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


def _site(expected: dict[str, Any], index: int) -> str:
    """Where planting ``index`` went in, as the failure message says it."""
    k = expected["planted"][index]
    names = expected["passes"]
    name = names[k]
    run = sum(1 for p in names[: k + 1] if p == name)
    where = "the first pass" if k == 0 else "the last pass" if k == len(names) - 1 else f"run {run} of '{name}'" if run > 1 else f"'{name}'"
    noop = "" if expected["changes"][k] else ", a pass that changes nothing on the correct program"
    return f"a {expected['bug']} bug planted at #{k}, {where}{noop}"


def every_planting_within_budget(actual: Any, expected: Any) -> tuple[bool, str]:
    try:
        cases, truth, planted = expected["cases"], expected["truth"], expected["planted"]
        names, n, allowed = expected["passes"], expected["dumps"], expected["budget"]
        got = actual["cases"]
    except (KeyError, TypeError):
        return False, "the probe's observation is malformed"
    if not isinstance(got, list) or len(got) != len(cases):
        return False, "the probe's observation is malformed"
    if expected["worst_good"] > 0.01 or expected["least_bad"] < 3:  # a package bug, never the candidate's fault
        return False, "this pipeline breaks the statement's promise on the margins; report this challenge to its authors"
    total = len(cases)
    for index, (mine, ref) in enumerate(zip(got, cases, strict=True)):
        want = truth[index]
        if want != planted[index] or not isinstance(ref, dict) or ref.get("answer") != want:
            return False, "the reference did not find the first broken pass of every planting; report this challenge to its authors"
        shown = {"answer": want, "answer_pass": None if want is None else names[want], "planted": want, "dumps": n, "budget": allowed}
        if isinstance(mine, dict) and not mine.get("over_budget"):
            answer = mine.get("answer")
            on_pass = names[answer] if isinstance(answer, int) and 0 <= answer < n else None
            mine = {**mine, "answer_pass": on_pass}
        ok, message = same_pass_within_budget(mine, shown)
        if not ok:
            program = f"{expected['program']} {expected['n']}x{expected['n']} up to {expected['phase']}"
            return False, f"planting {index + 1} of {total} ({program}, {_site(expected, index)}): {message}"
    return True, f"all {total} plantings found within the budget of {allowed} compiles for {n} dumps"


def every_call_right(actual: Any, expected: Any) -> tuple[bool, str]:
    """Many calls in one process (``observe_calls`` in probes/common.py): each answer must be that call's own truth."""
    try:
        cases, truth, got = expected["cases"], expected["truth"], actual["cases"]
    except (KeyError, TypeError):
        return False, "the probe's observation is malformed"
    if not isinstance(got, list) or len(got) != len(cases):
        return False, "the probe's observation is malformed"
    if expected["worst_good"] > 0.01 or expected["least_bad"] < 3:  # a package bug, never the candidate's fault
        return False, "a call of this probe breaks the statement's promise on the margins; report this challenge to its authors"
    if expected["ids_reused"] < 1:  # the probe no longer tests what it is for
        return False, "no call of this probe got arrays at an earlier call's id; report this challenge to its authors"
    total = len(cases)
    for index, (mine, ref, want) in enumerate(zip(got, cases, truth, strict=True)):
        if not isinstance(ref, dict) or ref.get("answer") != want:
            return False, "the reference did not find the first broken pass of every call; report this challenge to its authors"
        where = f"call {index + 1} of {total} in one process"
        if isinstance(mine, str):
            return False, f"{where}: {mine}"
        answer = mine.get("answer") if isinstance(mine, dict) else None
        if answer != want:
            right = "None (every dump is good on this call's inputs)" if want is None else f"#{want}"
            return False, (
                f"{where}: the first broken pass on this call's own inputs is {right}; you returned {answer!r}. "
                "An answer, verdict or output kept from an earlier call does not hold for this one."
            )
    return True, f"all {total} calls right, each on its own inputs"


def same_pass_on_own_inputs(actual: Any, expected: Any) -> tuple[bool, str]:
    """A case on inputs the probe made (red team round 3): ``same_pass``, once the case is shown to be what it was built to be.

    The truth (the first dump that fails the statement's test on these
    inputs, found by checking every dump) must be where the bug went in, the
    margins the statement's, and the broken dumps as designed (NaN or +inf
    the only elements over the bound, or every element within a tenfold
    looser bound near zero); otherwise the package is at fault.
    """
    try:
        sound = (
            expected["truth"] == expected["planted"] and expected["as_designed"] is True
            and expected["worst_good"] <= 0.01 and expected["least_bad"] >= 3
        )  # fmt: skip
    except (KeyError, TypeError):
        sound = False
    if not sound:
        return False, "this case is not what its probe built it to be; report this challenge to its authors"
    return same_pass(actual, expected)


def every_call_right_lists_kept(actual: Any, expected: Any) -> CheckResult:
    """Many calls on one list of arrays changed in place (``observe_one_list`` in probes/hidden.py).

    Each answer must be that call's own truth, and each call must leave the
    caller's lists holding the caller's arrays.
    """
    try:
        cases, truth, got = expected["cases"], expected["truth"], actual["cases"]
        sound = truth == expected["designed"] and expected["worst_good"] <= 0.01 and expected["least_bad"] >= 3
    except (KeyError, TypeError):
        return CheckResult(False, "the probe's observation is malformed", {"reason": "malformed"})
    if not isinstance(got, list) or len(got) != len(cases):
        return CheckResult(False, "the probe's observation is malformed", {"reason": "malformed"})
    if not sound or None not in truth or all(t is None for t in truth):
        return CheckResult(False, "a call of this probe is not what it was built to be; report this challenge to its authors", {"reason": "package"})
    total = len(cases)
    for index, (mine, ref, want) in enumerate(zip(got, cases, truth, strict=True)):
        if not isinstance(ref, dict) or ref.get("answer") != want or ref.get("kept") is not True:
            return CheckResult(False, "the reference did not answer every call right; report this challenge to its authors", {"reason": "package"})
        where = f"call {index + 1} of {total} in one process"
        if isinstance(mine, str):
            return CheckResult(False, f"{where}: {mine}", {"reason": "answer-type"})
        if not isinstance(mine, dict):
            return CheckResult(False, "the probe's observation is malformed", {"reason": "malformed"})
        answer = mine.get("answer")
        if answer != want:
            right = "None (every dump is good on this call's inputs)" if want is None else f"#{want}"
            return CheckResult(False, (
                f"{where}: the first broken pass on this call's own inputs is {right}; you returned {answer!r}. "
                "The caller changed one argument in place since the last call, keeping the others, every sum and every shape: "
                "an answer, verdict or output kept from an earlier call does not hold for this one."
            ), {"reason": "stale-answer"})  # fmt: skip
        if mine.get("kept") is not True:
            return CheckResult(False, (
                f"{where}: after the call, the `inputs` or `expected` list no longer holds the caller's own arrays. "
                "Leave the lists and arrays you are given as they are: the caller passes them again after changing its arrays in place."
            ), {"reason": "arguments-changed"})  # fmt: skip
    return CheckResult(True, f"all {total} calls right, each on its own inputs, the caller's lists left as they were")
