"""Custom checks for mlir-read-the-dump, run in the trusted worker.

The probes return the candidate's answers, normalised (op-name lists sorted
and deduplicated, numbers as ints), with the pass and op that an answered
index points at, or ``{"error": message}`` when an answer is malformed. The
expected observation is the reference's answer on the same dumps (the
compile is deterministic: one thread, a fixed target). Every comparison is
exact; the checks exist to say *what* differs.
"""

from __future__ import annotations

from typing import Any


def _error(actual: Any) -> str | None:
    if isinstance(actual, dict) and "error" in actual:
        return str(actual["error"])
    return None


def _at(answer: dict[str, Any]) -> str:
    return f"dump #{answer['index']} (after {answer['pass']} on {answer['op']})"


def _diff(listed: str, got: list[str], want: list[str]) -> str:
    missing = sorted(set(want) - set(got))
    extra = sorted(set(got) - set(want))
    parts = [f"expected {want}"]
    if missing:
        parts.append(f"missing {missing}")
    if extra:
        parts.append(f"not expected {extra}")
    return f"the right dump, but {listed!r}: " + "; ".join(parts)


def _index_matches(actual: Any, expected: Any, listed: str, none_means: str, found: str) -> tuple[bool, str]:
    error = _error(actual)
    if error:
        return False, error
    if expected is None:
        if actual is None:
            return True, f"None: {none_means}"
        return False, f"expected None ({none_means}); you answered {_at(actual)}"
    if actual is None:
        return False, f"expected {_at(expected)}; you answered None"
    if actual["index"] != expected["index"]:
        return False, f"{found} is {_at(expected)}; you answered {_at(actual)}"
    if actual[listed] != expected[listed]:
        return False, _diff(listed, actual[listed], expected[listed])
    return True, f"{_at(expected)}, {listed} {expected[listed]}"


def matmul_matches(actual: Any, expected: Any) -> tuple[bool, str]:
    return _index_matches(
        actual, expected, "became",
        "this program never holds a linalg.matmul op",
        "the first dump without linalg.matmul after one with some",
    )  # fmt: skip


def vector_matches(actual: Any, expected: Any) -> tuple[bool, str]:
    return _index_matches(
        actual, expected, "ops",
        "no dump holds a vector op",
        "the first dump holding a vector-dialect op",
    )  # fmt: skip


def dispatches_match(actual: Any, expected: Any) -> tuple[bool, str]:
    error = _error(actual)
    if error:
        return False, error
    if actual == expected:
        return True, f"{expected['dispatches']} dispatch(es), {expected['executables']} executable(s)"
    return False, (
        f"at the end of the flow phase: expected {expected['dispatches']} flow.dispatch op(s) and "
        f"{expected['executables']} flow.executable op(s); you answered {actual['dispatches']} and {actual['executables']}"
    )


def tiles_match(actual: Any, expected: Any) -> tuple[bool, str]:
    error = _error(actual)
    if error:
        return False, error
    got, want = actual["functions"], expected["functions"]
    if sorted(got) != sorted(want):
        return False, f"expected one entry per dispatch function, {sorted(want)}; yours has {sorted(got)}"
    for name, entry in want.items():
        wrong = [
            f"{key} should be {entry[key]!r}, yours is {got[name][key]!r}"
            for key in ("root", "pipeline", "workgroup", "vector")
            if got[name][key] != entry[key]
        ]
        if wrong:
            return False, f"{name}: " + "; ".join(wrong)
    if not want:
        return True, "no dispatch function: an empty dict"
    return True, "; ".join(f"{n}: {e['root']} workgroup {e['workgroup']} vector {e['vector']}" for n, e in want.items())


_FUNCTION_CHECKS = {
    "matmul_lowered": matmul_matches,
    "dispatch_count": dispatches_match,
    "first_vector_pass": vector_matches,
    "tile_sizes": tiles_match,
}


def _every_call_matches(actual: Any, expected: Any) -> tuple[bool, str]:
    taken = expected["freed ids taken"]
    first, second = taken["lengths"]
    if first != second or not taken["list"] or taken["dumps"] != second:
        return False, (
            f"the expected observation's new list and dumps did not take the freed ids, or its programs' dump counts differ "
            f"({taken}): the probe no longer tests id reuse; report this challenge to its authors"
        )
    steps, want_steps = actual["steps"], expected["steps"]
    if not isinstance(steps, list) or len(steps) != len(want_steps):
        return False, "the probe's observation is malformed"
    calls = len(want_steps) * len(_FUNCTION_CHECKS)
    for number, (got, want) in enumerate(zip(steps, want_steps, strict=True), start=1):
        for function, check in _FUNCTION_CHECKS.items():
            for when, moment in (("at call", "as returned"), ("after all calls", "read again after the later calls")):
                ok, message = check(got[when][function], want["at call"][function])
                if not ok:
                    return False, (
                        f"{function} on list {number} of {len(want_steps)} in one process ({want['step']}), its answer {moment}: {message}. "
                        "Each call must answer from the dumps it is given, and an answer already returned must not change."
                    )
    return True, f"all {calls} calls right, each on its own dumps, and still right after the later calls"


def every_call_matches(actual: Any, expected: Any) -> tuple[bool, str]:
    """The four functions called many times in one process (``calls_in_one_process`` in probes/hidden.py).

    Each step's four answers must match the reference's answers on the same
    dumps, as returned and as they read once every call has run. The expected
    observation must show that the new list and dumps took the freed ids and
    that both programs have as many dumps (the reference's run), so a probe
    that stops testing id reuse fails validation; the candidate's own run is
    not held to it (a solution that keeps the list keeps its id taken).
    """
    try:
        return _every_call_matches(actual, expected)
    except (KeyError, TypeError, AttributeError, ValueError, IndexError) as exc:
        return False, f"the probe's observation is malformed ({type(exc).__name__})"


def _every_flag_call_matches(actual: Any, expected: Any) -> tuple[bool, str]:
    lengths, steps, want_steps = expected["lengths"], actual["steps"], expected["steps"]
    answers = [step["at call"] for step in want_steps]
    if (
        not expected["same first dump"]
        or len(lengths) < 3
        or lengths[0] != lengths[2]
        or any(later == answers[0] for later in answers[1:])
    ):
        return False, (
            f"the expected observation's compiles do not share their first dump, the first and third differ in length, or two of "
            f"them get the same answers (lengths {lengths}): the probe no longer tests a cache keyed on the source; report this "
            "challenge to its authors"
        )
    if not isinstance(steps, list) or len(steps) != len(want_steps):
        return False, "the probe's observation is malformed"
    calls = len(want_steps) * len(_FUNCTION_CHECKS)
    for number, (got, want) in enumerate(zip(steps, want_steps, strict=True), start=1):
        for function, check in _FUNCTION_CHECKS.items():
            for when, moment in (("at call", "as returned"), ("after all calls", "read again after the later calls")):
                ok, message = check(got[when][function], want["at call"][function])
                if not ok:
                    return False, (
                        f"{function} on compile {number} of {len(want_steps)} of one program in one process ({want['step']}), "
                        f"its answer {moment}: {message}. Each call must answer from the dumps it is given (the same program "
                        "compiled with other flags has other dumps), and an answer already returned must not change."
                    )
    return True, f"all {calls} calls right, each on its own compile, and still right after the later calls"


def every_flag_call_matches(actual: Any, expected: Any) -> tuple[bool, str]:
    """The four functions called on one program compiled with three sets of flags (``calls_on_other_flags``).

    Each step's four answers must match the reference's answers on the same
    dumps, as returned and as they read once every call has run. The expected
    observation must show that the compiles share their first dump, that the
    first and third have as many dumps, and that every later compile gets
    other answers than the first: a probe that stops testing a cache keyed
    on the source (or on the source and the length) fails validation.
    """
    try:
        return _every_flag_call_matches(actual, expected)
    except (KeyError, TypeError, AttributeError, ValueError, IndexError) as exc:
        return False, f"the probe's observation is malformed ({type(exc).__name__})"


def _steps_match(actual: Any, expected: Any, why: str) -> tuple[bool, str]:
    """Every step's four answers, as returned and as read after the later calls, against the reference's."""
    steps, want_steps = actual["steps"], expected["steps"]
    if not isinstance(steps, list) or len(steps) != len(want_steps):
        return False, "the probe's observation is malformed"
    calls = len(want_steps) * len(_FUNCTION_CHECKS)
    for number, (got, want) in enumerate(zip(steps, want_steps, strict=True), start=1):
        for function, check in _FUNCTION_CHECKS.items():
            for when, moment in (("at call", "as returned"), ("after all calls", "read again after the later calls")):
                ok, message = check(got[when][function], want["at call"][function])
                if not ok:
                    return False, (
                        f"{function} on compile {number} of {len(want_steps)} in one process ({want['step']}), its answer {moment}: "
                        f"{message}. Each call must answer from the dumps it is given ({why}), and an answer already returned must not change."
                    )
    return True, f"all {calls} calls right, each on its own compile, and still right after the later calls"


def _answers_differ(expected: Any) -> bool:
    answers = [step["at call"] for step in expected["steps"]]
    return all(a != b for i, a in enumerate(answers) for b in answers[i + 1 :])


def every_same_end_call_matches(actual: Any, expected: Any) -> tuple[bool, str]:
    """The four functions called on three programs whose compiles end alike (``same_last_dump_other_programs``).

    Each step's four answers must match the reference's answers on the same
    dumps, as returned and as read once every call has run. The expected
    observation must show that the compiles share their last dump, their
    dump count and their pass names (and what each ran on), and that no two
    get the same answers: a probe that stops testing a cache keyed on the
    last dump (alone, or with the count or the passes) fails validation.
    """
    try:
        lengths = expected["lengths"]
        if not expected["same last dump"] or not expected["same headers"] or len(set(lengths)) != 1 or not _answers_differ(expected):
            return False, (
                f"the expected observation's compiles do not share their last dump, their dump count and their pass names, or two "
                f"of them get the same answers (lengths {lengths}): the probe no longer tests a cache keyed on the last dump; report "
                "this challenge to its authors"
            )
        return _steps_match(actual, expected, "different programs can end in the same last dump, with as many dumps")
    except (KeyError, TypeError, AttributeError, ValueError, IndexError) as exc:
        return False, f"the probe's observation is malformed ({type(exc).__name__})"


def every_same_ends_call_matches(actual: Any, expected: Any) -> tuple[bool, str]:
    """The four functions called on one program compiled two ways that share the first and last dumps (``same_first_and_last_dump``).

    Each step's four answers must match the reference's answers on the same
    dumps, as returned and as read once every call has run. The expected
    observation must show that the compiles share their first and their last
    dump and get other answers: a probe that stops testing a cache keyed on
    the two ends fails validation.
    """
    try:
        if not expected["same first dump"] or not expected["same last dump"] or not _answers_differ(expected):
            return False, (
                f"the expected observation's compiles do not share their first and last dumps, or get the same answers (lengths "
                f"{expected['lengths']}): the probe no longer tests a cache keyed on the first and last dumps; report this challenge "
                "to its authors"
            )
        return _steps_match(actual, expected, "the same program compiled with other flags can begin and end with the same dumps")
    except (KeyError, TypeError, AttributeError, ValueError, IndexError) as exc:
        return False, f"the probe's observation is malformed ({type(exc).__name__})"
