"""Live progress of one grading: each probe judged as it finishes, while the others still run.

Place in the flow: :func:`grader.grade.grade_submission` takes an optional
``on_progress`` callback (plain Python: the web stores what it gets, the
command line could print it). The sandbox hands each frame to the grader as
it arrives (``sandbox/session.py``), ``execute.ProbeAssembler`` turns the
frames into a probe's run, and :func:`live_judge` judges that run here, in
the worker, outside the sandbox, with the probe's own check against the
expected observation, which the grader holds before the submission starts.

Why judge early rather than say only "done": a candidate watching a long
grading wants to know whether what has finished is right, and the check is
the same one the final result runs on the same decoded observation, so the
live line and the result agree (a deterministic check cannot say otherwise
twice). Two cases are left to the end: a custom check that must run in a
sandbox of its own (``checks_in_sandbox``) would need one per probe, and a
check that raises is judged at the end by ``grade._failed_check``; both
show "done". The verdict and the score always come from the stored result.
The price is each check run twice (here, then in ``evaluate``): milliseconds
for the built-in checks, paid while the sandbox goes on with the next probe.

What a candidate may see of a probe's live line is the feedback policy's
decision (``grader.feedback.candidate_progress``): for a hidden probe its
name and whether it passed, no status, message or time.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from grader.custom_checks import run_check
from grader.execute import ProbeRun
from grader.package import Package
from grader.sandboxed_checks import needs_sandbox

log = logging.getLogger(__name__)

#: The live outcomes of a probe: its check passed, failed (or it did not return), or it is judged at the end.
PASSED, FAILED, DONE = "passed", "failed", "done"


@dataclass(frozen=True)
class ProbeProgress:
    """One probe finished: which, how many have so far, and its outcome as far as it can be told now."""

    name: str
    finished: int  # probes finished so far, this one included
    total: int  # probes in the run
    outcome: str  # PASSED | FAILED | DONE
    status: str  # the runner's status: ok | error | timeout | memory | crashed | ...
    at: float  # when the worker judged it (Unix time), for measuring the delay to the page

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def live_judge(
    package: Package, public: bool, expected: Mapping[str, Any], on_progress: Callable[[ProbeProgress], None]
) -> Callable[[ProbeRun], None]:
    """The ``on_probe`` of ``execute`` that judges each probe's run and reports it to ``on_progress``."""
    specs = {s.name: s for s in package.probes(public)}
    total = len(specs)
    finished = 0

    def on_probe(run: ProbeRun) -> None:
        nonlocal finished
        spec = specs.get(run.name)
        if spec is None:
            return
        finished += 1
        outcome = FAILED
        if run.status == "ok":
            if needs_sandbox(package, spec) or run.name not in expected:
                outcome = DONE
            else:
                try:
                    outcome = PASSED if run_check(package, spec, run.observation, expected[run.name]).passed else FAILED
                except Exception:  # noqa: BLE001 - the final judging decides whose fault it is (grade._failed_check)
                    outcome = DONE
        on_progress(ProbeProgress(run.name, finished, total, outcome, run.status, time.time()))

    return on_probe
