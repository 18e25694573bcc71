"""Custom checks for find-drifting-stage, run in the trusted worker.

A probe's observation is the candidate's report, ``{"first": name or None,
"errors": {stage: {"max_abs": x, "ratio": q}}}``, or a string saying what was
wrong with it. The expected observation is the reference's report on the
same pipeline and inputs (both are deterministic).

- ``first_stage_matches``: only ``first`` is compared.
- ``report_matches``: ``first`` and every stage's ``max_abs`` and ``ratio``,
  to a relative 1e-4 (float32 rounding of the pipelines' outputs is well
  inside it); an infinite expected value must be reported as infinite, and
  ``errors`` must hold exactly the stages after the first.

The probes with stages of their own (and the generated families) observe a
list of reports, ``{"reports": [...], "truth": [...]}``, where ``truth`` is
the report worked out exactly with fractions from the stages' values
(``exact_report`` in probes/hidden.py). ``first_stages_match_truth`` and
``reports_match_truth`` judge each of the candidate's reports as above, but
against the truth of the reference's run, not against the reference's
report: the reference passes only by agreeing with the exact report.

``reports_in_sequence_match_truth`` judges ``repeated_calls``: many calls in
one process, each report against the exact report of its step, once as it
was returned and once after every call has run. A failure says which kind of
step went wrong (``reason``: same-objects-changed, look-alike,
rebuilt-at-freed-ids, changed-after-return), for the diagnosis only.

``reports_and_runs_match_truth`` (``every_stage_runs_on_every_batch``)
first requires that every stage ran at least once on every batch, then
judges the reports as ``reports_match_truth``.
``reports_and_process_as_found`` (``process_left_as_found``) requires that
the import and each call left torch's and NumPy's process-wide settings as
they were, that a pipeline built after a call still builds and runs, and
each report as the reference's (``report_matches``).
"""

from __future__ import annotations

import math
from typing import Any

from grader.checks import CheckResult

REL = 1e-4
ABS = 1e-12


def _close(got: float, want: float) -> bool:
    if math.isinf(want) or math.isinf(got):
        return got == want
    if math.isnan(got):
        return False
    return abs(got - want) <= REL * abs(want) + ABS


def _fmt(errors: dict[str, Any]) -> str:
    parts = []
    for name, e in errors.items():
        if isinstance(e, dict):
            parts.append(f"{name}: ratio {e.get('ratio', float('nan')):.3g}")
    return ", ".join(parts)


def first_stage_matches(actual: Any, expected: Any) -> tuple[bool, str]:
    if isinstance(actual, str):
        return False, actual
    want, got = expected["first"], actual.get("first")
    if got != want:
        return False, f"the first stage out of tolerance is {want!r}; you named {got!r} (your report: {_fmt(actual['errors'])})"
    return True, f"first drifting stage {want!r}"


def report_matches(actual: Any, expected: Any) -> tuple[bool, str]:
    if isinstance(actual, str):
        return False, actual
    ok, message = first_stage_matches(actual, expected)
    if not ok:
        return ok, message
    want, got = expected["errors"], actual["errors"]
    if sorted(got) != sorted(want):
        return False, f"errors must have one entry per stage after the first, {sorted(want)}; yours has {sorted(got)}"
    for name in want:
        for key in ("max_abs", "ratio"):
            if not _close(got[name][key], want[name][key]):
                return False, f"errors[{name!r}][{key!r}] = {got[name][key]:.6g}, expected {want[name][key]:.6g}"
    return True, "first stage and every stage's max_abs and ratio as expected"


def _against_truth(actual: Any, expected: Any, one: Any) -> tuple[bool, str]:
    if isinstance(actual, str):
        return False, actual
    if not isinstance(actual, dict):
        return False, "the probe's observation is not a list of reports"
    reports, truth = actual.get("reports"), expected["truth"]
    if not isinstance(reports, list) or len(reports) != len(truth):
        return False, "the probe did not run every case"
    for number, (got, want) in enumerate(zip(reports, truth, strict=True), start=1):
        ok, message = one(got, want)
        if not ok:
            return False, f"case {number} of {len(truth)}: {message}"
    return True, f"all {len(truth)} cases as the exact report says"


def first_stages_match_truth(actual: Any, expected: Any) -> tuple[bool, str]:
    """``first`` of every case, against the exact report."""
    return _against_truth(actual, expected, first_stage_matches)


def reports_match_truth(actual: Any, expected: Any) -> tuple[bool, str]:
    """The whole report of every case, against the exact report."""
    return _against_truth(actual, expected, report_matches)


def _step_kind(label: str) -> str:
    if label.startswith("everything freed"):
        return "rebuilt-at-freed-ids"
    if label.startswith("new stages"):
        return "look-alike"
    if label == "first call":
        return "first-call"
    return "same-objects-changed"


def reports_in_sequence_match_truth(actual: Any, expected: Any) -> Any:
    """Every call's report, as returned and after all calls, against the exact report of its step."""
    if not expected.get("freed ids taken"):
        return False, "the reference's run rebuilt no object at a freed id: the probe no longer tests ids"
    if isinstance(actual, str):
        return False, actual
    if not isinstance(actual, dict):
        return False, "the probe's observation is not a sequence of reports"
    labels, truth = expected["steps"], expected["truth"]
    for key in ("at each call", "after all calls"):
        reports = actual.get(key)
        if not isinstance(reports, list) or len(reports) != len(truth):
            return False, "the probe did not make every call"
    for number, (label, got, want) in enumerate(zip(labels, actual["at each call"], truth, strict=True), start=1):
        ok, message = report_matches(got, want)
        if not ok:
            return CheckResult(False, f"call {number} of {len(truth)} ({label}): {message}", {"reason": _step_kind(label)})
    for number, (label, got, want) in enumerate(zip(labels, actual["after all calls"], truth, strict=True), start=1):
        ok, message = report_matches(got, want)
        if not ok:
            return CheckResult(
                False, f"the report of call {number} ({label}) changed after later calls: {message}", {"reason": "changed-after-return"}
            )
    return True, f"all {len(truth)} calls as the exact report says, also after the later calls"


def reports_and_runs_match_truth(actual: Any, expected: Any) -> Any:
    """Every stage, the reference too, ran on every batch of every case; then every report against the exact one."""
    if isinstance(actual, dict) and isinstance(actual.get("runs"), list):
        for number, runs in enumerate(actual["runs"], start=1):
            for stage, counts in enumerate(runs):
                if not isinstance(counts, list) or any(not isinstance(c, int) or c < 1 for c in counts):
                    message = f"case {number}: stage {stage} was run {counts} times on the batches, not on every batch"
                    return CheckResult(False, message, {"reason": "stage-not-run-on-a-batch"})
    elif not isinstance(actual, str):
        return False, "the probe's observation holds no run counts"
    return reports_match_truth(actual, expected)


def reports_and_process_as_found(actual: Any, expected: Any) -> Any:
    """Each call's report against the reference's, and torch's and NumPy's process-wide settings as each call found them."""
    if isinstance(actual, str):
        return False, actual
    if not isinstance(actual, dict) or not isinstance(actual.get("steps"), list):
        return False, "the probe's observation is not a sequence of calls"
    if actual.get("changed before any call") != expected["changed before any call"]:
        found, want = actual.get("changed before any call"), expected["changed before any call"]
        message = f"importing the solution changed the process's {found} (the reference's run: {want})"
        return CheckResult(False, message, {"reason": "process-changed-at-import"})
    steps, want = actual["steps"], expected["steps"]
    for number, (got, ref) in enumerate(zip(steps, want, strict=False), start=1):
        if got.get("changed"):
            return CheckResult(False, f"call {number} left the process's {got['changed']} changed", {"reason": "process-changed"})
        if isinstance(got.get("report"), str) and not isinstance(ref.get("report"), str) and got["report"].startswith("a pipeline built after"):
            return CheckResult(False, f"after call {number - 1}: {got['report']}", {"reason": "next-pipeline-broken"})
        ok, message = report_matches(got.get("report"), ref["report"])
        if not ok:
            return CheckResult(False, f"call {number}: {message}", {"reason": "report"})
    if len(steps) != len(want):
        return False, "the probe did not make every call"
    return True, f"all {len(want)} calls as the reference reports them, and the process as each call found it"
