"""Custom check for onnx-export-verify, run in the trusted worker.

A verification probe returns ``{"report": ..., "truth": ...}``: what the
candidate's ``verify`` reported, and what the probe itself measured between
onnxruntime and PyTorch before calling it. The truth used here is the one
from the reference run (the expected observation): the probe built the ONNX
file and the inputs itself, so it does not depend on the solution.

A report passes when each of max_abs and max_rel is within 2% of the
measured value (plus a floor of 1e-6 for max_abs and 1e-4 for max_rel, for
the errors of a faithful export, which are float32 rounding). Where the
measured value is infinite (a NaN or an infinity on one side only), the
report must be ``inf`` exactly.
"""

from __future__ import annotations

import math
from typing import Any

from grader.checks import CheckResult

FLOORS = {"max_abs": 1e-6, "max_rel": 1e-4}
REL = 0.02


def reported_error_matches(actual: Any, expected: Any) -> tuple[bool, str]:
    truth = expected["truth"]
    if not isinstance(actual, dict) or "report" not in actual:
        return False, "the probe's observation is malformed"
    report = actual["report"]
    if isinstance(report, str):
        return False, report
    if not isinstance(report, dict):
        return False, "verify() did not return a dict"
    problems = []
    for key, floor in FLOORS.items():
        got = report.get(key)
        want = float(truth[key])
        if not isinstance(got, int | float) or isinstance(got, bool):
            problems.append(f"{key} is missing or not a number")
            continue
        got = float(got)
        if math.isinf(want):  # a NaN or infinity on one side only: the definition's maximum is inf
            if got != math.inf:
                problems.append(f"{key} = {got!r}, but the error is infinite (NaN or inf on one side)")
            continue
        if not math.isfinite(got):
            problems.append(f"{key} = {got!r}, but the measured value is {want:.4g}")
            continue
        if abs(got - want) > REL * abs(want) + floor:
            problems.append(f"{key} = {got:.4g}, but the probe measured {want:.4g}")
    if problems:
        return False, "verify() reported " + "; ".join(problems)
    return True, f"max_abs {float(truth['max_abs']):.3g} and max_rel {float(truth['max_rel']):.3g} reported correctly"


def every_report_matches(actual: Any, expected: Any) -> tuple[bool, str]:
    """Probes of several verifications, {case: {"report", "truth"}}: each must pass ``reported_error_matches``."""
    if not isinstance(actual, dict):
        return False, "the probe's observation is malformed"
    for case, want in expected.items():
        ok, why = reported_error_matches(actual.get(case), want)
        if not ok:
            return False, f"{case}: {why}"
    return True, f"{len(expected)} verifications reported correctly"


def verify_refuses(actual: Any, expected: Any) -> tuple[bool, str]:
    """Files whose outputs differ from the model's in number or shape, {case: "raised" | {"returned": report}}: verify must raise."""
    if not isinstance(actual, dict):
        return False, "the probe's observation is malformed"
    for case in expected:
        if actual.get(case) != "raised":
            got = actual.get(case)
            what = f"returned {got['returned']!r}" if isinstance(got, dict) and "returned" in got else "did not raise"
            return False, f"{case}: verify() {what}; with outputs that differ from the model's in number or shape it must raise"
    return True, f"verify() raised for all {len(expected)} mismatched files"


def every_size_ok(actual: Any, expected: Any) -> tuple[bool, str]:
    """Export probes: every entry ("load" and one per size) must be "ok", as in the reference run."""
    if not isinstance(actual, dict):
        return False, "the probe's observation is malformed"
    failures = [f"{key}: {actual.get(key, 'not run')}" for key in expected if actual.get(key) != "ok"]
    if failures:
        more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
        return False, failures[0][:600] + more
    return True, f"the file ran correctly at {len(expected) - 1} sizes"


def every_entry_ok(actual: Any, expected: Any) -> tuple[bool, str]:
    """Interface probes and generated families: every entry, at any depth, must be "ok", as in the reference run."""
    failures: list[str] = []

    def walk(got: Any, want: Any, where: str) -> None:
        if isinstance(want, dict):
            if not isinstance(got, dict):
                failures.append(f"{where}malformed observation")
                return
            for key, sub in want.items():
                walk(got.get(key, "not run"), sub, f"{where}{key}: ")
        elif got != "ok":
            failures.append(f"{where}{got}")

    walk(actual, expected, "")
    if failures:
        more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
        return False, failures[0][:600] + more
    return True, "every entry ok"


def _repeated_calls_right(actual: Any, expected: Any) -> CheckResult:
    taken = expected["freed ids taken"]
    if not all(taken.values()):
        return CheckResult(
            False, f"the expected observation's rebuilt objects did not take the freed ids ({taken}): the probe no longer tests id reuse", {"reason": "no-id-reuse"}
        )
    exports, want_exports = actual["export"], expected["export"]
    calls, want_calls = actual["verify"], expected["verify"]
    if not isinstance(exports, list) or len(exports) != len(want_exports) or not isinstance(calls, list) or len(calls) != len(want_calls):
        return CheckResult(False, "the probe's observation is malformed", {"reason": "malformed"})
    for number, (got, want) in enumerate(zip(exports, want_exports, strict=True), start=1):
        for when, reason in (("at call", f"export-call-{number}"), ("after all calls", f"export-call-{number}-changed-later")):
            if got[when] != "ok":
                moment = "as written" if when == "at call" else "run again after the later calls"
                return CheckResult(False, f"export() call {number} of {len(exports)} ({want['step']}), its file {moment}: {got[when]}", {"reason": reason})
    for number, (call, want) in enumerate(zip(calls, want_calls, strict=True), start=1):
        for when, reason in (("at call", f"verify-call-{number}"), ("after all calls", f"verify-call-{number}-changed-later")):
            ok, message = reported_error_matches({"report": call[when]}, want)
            if not ok:
                moment = "as returned" if when == "at call" else "read again after the later calls"
                return CheckResult(False, f"verify() call {number} of {len(calls)} ({want['step']}), its report {moment}: {message}", {"reason": reason})
    return CheckResult(True, f"{len(exports)} export() and {len(calls)} verify() calls in one process, each right when returned and after the later calls")


def repeated_calls_right(actual: Any, expected: Any) -> CheckResult:
    """export and verify called several times in one process ({"export": [...], "verify": [...], "freed ids taken": {...}}).

    Each exported file must compute its model as it was exported, right after
    the call and again once every call has run; each verify report must pass
    ``reported_error_matches`` against the truth the reference run's probe
    measured, as returned and as it reads after every later call. The expected
    observation must record that the rebuilt models and input took the freed
    ids (the reference's run), so a probe that stops testing id reuse fails
    validation; the candidate's own run is not held to it (a solution that
    keeps a reference to an object keeps its id taken). The reason names the
    call (``export-call-N``, ``verify-call-N``, with ``-changed-later`` for a
    result changed by a later call) for the diagnosis.
    """
    try:
        return _repeated_calls_right(actual, expected)
    except (KeyError, TypeError, AttributeError, ValueError, IndexError) as exc:
        return CheckResult(False, f"the probe's observation is malformed ({type(exc).__name__})", {"reason": "malformed"})
