"""Grade one submission: expectations, a sandboxed run, checks outside, score, hints.

Place in the flow: the only entry point the web app (through its Celery
task), ``manage.py grade`` and the tests use. The trust boundary is here:
observations come from the sandbox as data; the reference's expectations
come from the cache; the comparison, the score and the hints are computed in
this process and nothing the sandbox sent is executed.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from grader import expected as expected_cache
from grader.checks import CheckResult
from grader.custom_checks import run_check
from grader.diagnose import diagnosis_of
from grader.diff import expected_summary, structured_diff
from grader.error_report import auto_report
from grader.errors import InvalidSubmission, PackageError, PlatformError
from grader.execute import Execution, ProbeRun, execute, execute_series
from grader.feedback import failure_details, syntax_error_message
from grader.hints import unlocked_hints
from grader.live import ProbeProgress, live_judge
from grader.package import Package
from grader.probe_meta import ProbeSpec
from grader.sandboxed_checks import CheckRaised, SandboxedChecks, needs_sandbox, run_sandboxed_checks
from grader.scoring import Scored, score
from grader.source_rules import describe
from grader.verdicts import Verdict, most_severe
from sandbox import Backend
from sandbox.runner.codec import to_jsonable

log = logging.getLogger(__name__)

MAX_CODE_BYTES = 256 * 1024

# Runner status -> probe verdict (``killed`` depends on the memory cgroup).
_STATUS = {
    "error": Verdict.RUNTIME_ERROR,
    "timeout": Verdict.TIME_LIMIT,
    # Not run, or cut short, because an earlier probe ran out of its time and the time the rest share was spent
    # (sandbox/runner/runner.py): the endless loop's cost, charged as the time limit it is.
    "stopped": Verdict.TIME_LIMIT,
    "memory": Verdict.MEMORY_LIMIT,
    "output_limit": Verdict.OUTPUT_LIMIT,
    "observation_limit": Verdict.OUTPUT_LIMIT,
    "crashed": Verdict.RUNTIME_ERROR,
    "no_result": Verdict.RUNTIME_ERROR,
    "bad_observation": Verdict.RUNTIME_ERROR,
    # The candidate's import or calls left a process-wide setting changed (sandbox/runner/process_state.py): the
    # result may be right, the behaviour is not.
    "settings_changed": Verdict.WRONG_ANSWER,
}


@dataclass
class ProbeResult:
    name: str
    category: str
    weight: float
    passed: bool
    status: str
    message: str
    description: str
    duration_ms: int = 0
    stdout: str = ""
    observation: Any = None
    expected: Any = None
    details: dict[str, Any] = field(default_factory=dict)
    # Public probes only: where the result differs from the expected one (grader/diff.py).
    diff: dict[str, Any] | None = None
    # A float tensor that failed its check: where and by how much (grader/error_report.py);
    # the feedback policy shows a hidden probe's only as positions and relative sizes.
    error_report: dict[str, Any] | None = None


@dataclass
class GradeResult:
    verdict: Verdict
    score: float
    categories: dict[str, dict[str, Any]]
    probes: list[ProbeResult]
    hints: list[dict[str, Any]]
    message: str
    version: str
    public: bool
    timings: dict[str, int] = field(default_factory=dict)
    # A failing Submit: the known mistake its failures look like (grader/diagnose.py), for coaches whole and for
    # its candidate, on request, as the author's words only.
    diagnosis: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict.value,
            "score": self.score,
            "categories": self.categories,
            "probes": [asdict(p) for p in self.probes],
            "hints": self.hints,
            "message": self.message,
            "version": self.version,
            "public": self.public,
            "timings": self.timings,
            "diagnosis": self.diagnosis,
        }


def _size(n: int) -> str:
    if n >= 1024 * 1024:
        return f"{n / (1024 * 1024):.1f} MB"
    if n >= 1024:
        return f"{n / 1024:.0f} KiB" if n % 1024 == 0 else f"{n / 1024:.1f} KiB"
    return f"{n} bytes"


def decode_submission(code: str | bytes, *, allow_empty: bool = False) -> bytes:
    """Validate the submitted code and return it as UTF-8 bytes; InvalidSubmission otherwise.

    The messages are for the candidate: the web shows them as they are.
    ``allow_empty`` keeps every rule but "not empty" (an autosave of a cleared editor).
    """
    if isinstance(code, str):
        try:
            raw = code.encode("utf-8")
        except UnicodeEncodeError as exc:  # lone surrogates, e.g. from a JSON "\ud800"
            raise InvalidSubmission(f"Your code is not valid UTF-8 text (bad character at position {exc.start}).") from None
    else:
        raw = bytes(code)
    # Size first: no point decoding 10 MB to refuse it.
    if len(raw) > MAX_CODE_BYTES:
        raise InvalidSubmission(f"Your code is {_size(len(raw))}; the limit is {_size(MAX_CODE_BYTES)}.")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidSubmission(
            f"Your code is not valid UTF-8 text (invalid byte at position {exc.start}). Save it as UTF-8 and try again."
        ) from None
    if not allow_empty and not text.strip():
        raise InvalidSubmission("Your code is empty.")
    if "\x00" in text:
        raise InvalidSubmission("Your code contains a NUL byte; it is not a Python source file.")
    return raw


# ---------------------------------------------------------------- expectations


def reference_failures(execution: Execution, package: Package, public: bool) -> list[str]:
    problems = []
    if execution.syntax_error:
        problems.append(f"the reference has a syntax error: {execution.syntax_error['message']}")
    if execution.rule_violations:
        refused = "; ".join(str(v) for v in execution.rule_violations)
        problems.append(f"the reference is refused before it runs (the package's [rules], or the starter's parameters): {refused}")
        return problems
    for spec in package.probes(public):
        run = execution.probes.get(spec.name)
        if run is None or run.status != "ok":
            what = "did not run" if run is None else f"{run.status}: {run.exc_type} {run.message}".strip()
            problems.append(f"probe '{spec.name}' fails on the reference ({what}) {run.traceback if run else ''}".strip())
    return problems


def expected_observations(package: Package, public: bool, backend: Backend | None = None) -> tuple[dict[str, Any], bool]:
    """({probe: expected observation}, whether it came from the cache)."""
    cached = expected_cache.load(package.version, public)
    if cached is not None and set(cached) == {s.name for s in package.probes(public)}:
        return cached, True
    execution = execute(package, package.reference_code.encode(), public=public, backend=backend)
    if execution.timed_out or any(p.status in ("timeout", "stopped") for p in execution.probes.values()):
        # On a loaded machine the reference itself can be slow: retry later, not the coach's bug.
        raise PlatformError(f"the reference of '{package.slug}' ran out of time; retrying")
    problems = reference_failures(execution, package, public)
    if problems:
        raise PackageError("; ".join(problems), path=f"{package.slug}/reference/{package.entry}")
    observations = {name: run.observation for name, run in execution.probes.items()}
    expected_cache.store(package.version, public, observations)
    return observations, False


# ---------------------------------------------------------------- evaluation


def _missing_probe(execution: Execution, name: str) -> ProbeRun:
    if execution.timed_out:
        return ProbeRun(name, "timeout", message="the run reached its wall-clock limit before this probe finished")
    if execution.stream_overflow:
        return ProbeRun(name, "output_limit", message="the run produced more output than allowed")
    if execution.runner_died:
        return ProbeRun(name, "crashed", message="the sandbox's runner was killed while this probe ran (did the code kill its parent?)")
    return ProbeRun(name, "crashed", message="the probe did not run")


def _checked(package: Package, spec: ProbeSpec, actual: Any, expected: Any, sandboxed: SandboxedChecks | None, *, reference: bool) -> CheckResult:
    """The probe's check on (actual, expected): run here, or read from the sandbox that ran it.

    A sandbox ran each custom check twice, on the candidate's observation and
    on the reference's own (``reference``), the two calls ``evaluate`` makes.
    """
    if sandboxed is not None and needs_sandbox(package, spec):
        return sandboxed.reference(spec.name) if reference else sandboxed.candidate(spec.name)
    return run_check(package, spec, actual, expected)


def _failed_check(package: Package, spec: ProbeSpec, expected: Any, exc: Exception, sandboxed: SandboxedChecks | None = None) -> CheckResult | None:
    """Whose fault is a custom check that raised: the candidate's observation, or the check?

    A check that accepts the reference's own observation is sound; if it
    raised on the candidate's, the observation does not have the shape the
    statement asks for (a missing key, a list instead of a dict), which is a
    wrong answer. Treating it as a platform failure would let any candidate
    force retries and internal errors. A check that also fails on the
    reference's observation is the package's bug: None, an internal error.
    """
    try:
        sound = _checked(package, spec, expected, expected, sandboxed, reference=True).passed
    except Exception:  # noqa: BLE001 - any failure on the reference means the check is broken
        return None
    if not sound:
        return None
    return CheckResult(False, f"the result does not have the structure this probe expects ({_exc_type(exc)}: {_exc_text(exc)[:200]})")


def _exc_type(exc: Exception) -> str:
    """The exception's type name; for a check that raised in its sandbox, the type it raised there."""
    return exc.exc_type if isinstance(exc, CheckRaised) else type(exc).__name__


def _exc_text(exc: Exception) -> str:
    return exc.text if isinstance(exc, CheckRaised) else str(exc)


def _diff(spec: ProbeSpec, actual: Any, expected: Any) -> dict[str, Any] | None:
    """The page's structured diff; a diff that cannot be drawn is left out, never a grading failure."""
    try:
        return structured_diff(actual, expected, check_mode=spec.check, rtol=spec.rtol, atol=spec.atol)
    except Exception:  # the verdict stands without it
        log.exception("structured diff of probe %s failed", spec.name)
        return None


def _error_report(spec: ProbeSpec, actual: Any, expected: Any, outcome: CheckResult) -> dict[str, Any] | None:
    """The built-in check's error report (a float tensor out of tolerance); never a grading failure."""
    if spec.check != "auto" or not isinstance(outcome.details.get("rtol"), float | int):
        return None
    try:
        return auto_report(actual, expected, outcome.details, rtol=float(outcome.details["rtol"]), atol=float(outcome.details["atol"]))
    except Exception:  # the verdict stands without it
        log.exception("error report of probe %s failed", spec.name)
        return None


def evaluate(
    package: Package, execution: Execution, expected: dict[str, Any], *, public: bool, sandboxed: SandboxedChecks | None = None
) -> GradeResult:
    """Compare an execution with expectations and build the result (pure: no sandbox).

    ``sandboxed`` holds the outcomes of custom checks that ran in a sandbox
    (``judge`` runs them for a package with ``checks_in_sandbox``); without
    it, custom checks run here, in the worker.
    """
    if package.checks_in_sandbox and sandboxed is None and any(needs_sandbox(package, s) for s in package.probes(public)):
        raise PackageError("this package's checks must run in a sandbox: grade it with judge(), not evaluate()", path=package.slug)
    specs = package.probes(public)
    if execution.syntax_error:
        err = execution.syntax_error
        message = syntax_error_message(err.get("line"), err["message"])
        return _not_run(package, specs, public, Verdict.SYNTAX_ERROR, "the code does not compile", message)
    if execution.rule_violations:
        return _not_run(package, specs, public, Verdict.RULE_VIOLATION, "the code breaks a rule", describe(execution.rule_violations, package.rules))

    results: list[ProbeResult] = []
    for spec in specs:
        run = execution.probes.get(spec.name) or _missing_probe(execution, spec.name)
        result = ProbeResult(
            spec.name, spec.category, spec.weight, False, "", "", spec.description, run.duration_ms,
            stdout=run.stdout if public else "",
        )  # fmt: skip
        if run.status == "ok":
            try:
                outcome = _checked(package, spec, run.observation, expected[spec.name], sandboxed, reference=False)
            except Exception as exc:
                candidates_fault = _failed_check(package, spec, expected[spec.name], exc, sandboxed)
                if candidates_fault is not None:
                    outcome = candidates_fault
                else:
                    log.exception("check %s of %s failed", spec.check, package.slug)
                    outcome = CheckResult(False, f"the check itself failed ({_exc_type(exc)}); this is the platform's fault")
                    result.status = Verdict.INTERNAL_ERROR.value
            result.passed = outcome.passed
            result.status = result.status or (Verdict.ACCEPTED.value if outcome.passed else Verdict.WRONG_ANSWER.value)
            result.message = outcome.message
            # JSON-safe: an infinite relative error (expected 0) is reported as a string, in lists too.
            result.details = to_jsonable({k: v for k, v in outcome.details.items() if isinstance(v, int | float | str | list)})
            if not outcome.passed:
                result.error_report = outcome.error_report or _error_report(spec, run.observation, expected[spec.name], outcome)
            if public:
                result.observation = to_jsonable(run.observation)
                result.expected = to_jsonable(expected[spec.name])
                if not result.passed:
                    result.diff = _diff(spec, run.observation, expected[spec.name])
        else:
            # No observation came back. A public probe's expected value is public: it is what
            # the candidate needs most beside the error (a hidden probe's never leaves the grader).
            if public and spec.name in expected:
                result.expected = to_jsonable(expected[spec.name])
                result.diff = expected_summary(expected[spec.name])
            status = _STATUS.get(run.status, Verdict.RUNTIME_ERROR)
            if run.status == "killed":
                status = Verdict.MEMORY_LIMIT if execution.oom_killed else Verdict.RUNTIME_ERROR
            result.status = status.value
            result.details = failure_details(run.status, run.exc_type, run.traceback, run.message)
            if run.status == "error":
                result.message = (run.traceback or f"{run.exc_type}: {run.message}").strip()
                if run.exc_type in ("MemoryError",):
                    result.status = Verdict.MEMORY_LIMIT.value
            elif status == Verdict.MEMORY_LIMIT:
                result.message = "the memory limit was reached"
            elif status == Verdict.TIME_LIMIT:
                limit = spec.timeout or package.limits.probe_seconds
                kept = "wall-clock" in run.message or run.status == "stopped"  # says why, better than the limit alone
                result.message = run.message if kept else f"time limit exceeded ({limit:g} s)"
            else:
                result.message = run.message
        results.append(result)

    total, categories = score([Scored(r.category, r.weight, r.passed) for r in results])
    verdict = run_verdict([r.passed for r in results], [Verdict(r.status) for r in results if not r.passed])
    # The probe to fix first leads: the heaviest failing one, then the earliest.
    failing = sorted((i for i, r in enumerate(results) if not r.passed), key=lambda i: (-results[i].weight, i))
    # Only probes that ran to an outcome (a wrong value, or an exception) say which idea is wrong: an endless loop
    # or a memory blow-up fails every probe alike and once unlocked ten numerics hints that did not apply.
    informative = [i for i in failing if results[i].status in HINTS_FROM]
    failed_tags = [tag for i in informative for tag in specs[i].hints]
    # Each hint names the failing probes it is about, the one to fix first first: the page says which.
    hints = [
        {
            "id": h.id,
            "tier": h.tier,
            "tags": list(h.tags),
            "text": h.text,
            "probes": [results[i].name for i in informative if set(specs[i].hints) & set(h.tags)],
        }
        for h in unlocked_hints(package.hints, failed_tags)
    ]
    message = f"{sum(r.passed for r in results)} of {len(results)} probes passed"
    return GradeResult(verdict, total, {k: asdict(v) for k, v in categories.items()}, results, hints, message, package.version, public)


# The failed probes' statuses that unlock their hints: the code returned a wrong value, or raised.
HINTS_FROM = frozenset({Verdict.WRONG_ANSWER.value, Verdict.RUNTIME_ERROR.value})


def _not_run(package: Package, specs: Sequence[ProbeSpec], public: bool, verdict: Verdict, why: str, message: str) -> GradeResult:
    """The result of code that never ran: every probe failed with ``verdict``, score 0."""
    probes = [ProbeResult(s.name, s.category, s.weight, False, verdict.value, f"not run: {why}", s.description) for s in specs]
    _, categories = score([Scored(s.category, s.weight, False) for s in specs])
    return GradeResult(verdict, 0.0, {k: asdict(v) for k, v in categories.items()}, probes, [], message, package.version, public)


def judge(package: Package, execution: Execution, expected: dict[str, Any], *, public: bool, backend: Backend | None = None) -> GradeResult:
    """``evaluate``, after running the package's custom checks in a sandbox if it asks for that."""
    sandboxed = run_sandboxed_checks(package, execution, expected, public=public, backend=backend) if package.checks_in_sandbox else None
    return evaluate(package, execution, expected, public=public, sandboxed=sandboxed)


def grade_submission(
    package: Package,
    code: str | bytes,
    *,
    public: bool,
    backend: Backend | None = None,
    on_progress: Callable[[ProbeProgress], None] | None = None,
    stop: threading.Event | None = None,
) -> GradeResult:
    """Grade ``code`` on the package's public (Run) or hidden (Submit) probes.

    ``on_progress``, if given, is called in this thread with each probe's
    live outcome as it finishes in the sandbox (``grader/live.py``); the
    result returned is judged afterwards from the whole run, as without it.
    Raises InvalidSubmission for code that cannot be graded, PlatformError
    when the platform failed (retry), PackageError when the package is broken,
    GradingCancelled when ``stop`` was set while the probes ran (a Cancel).
    """
    raw = decode_submission(code)
    t0 = time.monotonic()
    expected, cached = expected_observations(package, public, backend)
    t1 = time.monotonic()
    on_probe = live_judge(package, public, expected, on_progress) if on_progress is not None else None
    execution = execute(package, raw, public=public, backend=backend, on_probe=on_probe, stop=stop)
    result = judge(package, execution, expected, public=public, backend=backend)
    if not public:
        as_dict = result.to_dict()
        result.diagnosis, hint = diagnosis_of(package, as_dict)
        if hint is not None:
            result.hints.append(hint)
    return _timed(result, execution, time.monotonic() - t0, t1 - t0, cached)


def grade_series(
    package: Package,
    codes: list[str | bytes],
    *,
    public: bool,
    backend: Backend | None = None,
    only: Sequence[Collection[str] | None] | None = None,
    rules: Sequence[bool] | None = None,
) -> list[GradeResult]:
    """Grade each of ``codes`` as :func:`grade_submission` would, their probes run one code after another in one sandbox.

    Trusted code only: a package's shipped solutions, mutants of its
    reference (``execute_series`` says why). Each result is the one that
    code would get alone; its timings count the sandbox start only for the
    first code of each sandbox. ``only``, one entry per code, grades that
    code on the named probes alone (None: on all): its score is over those
    probes, so a score below 100 there is below 100 on the whole set too.
    ``rules``, one entry per code, says whether the package's source rules
    are checked first (``execute.Run.rules``; None: for every code).
    """
    raws = [decode_submission(code) for code in codes]
    t0 = time.monotonic()
    expected, cached = expected_observations(package, public, backend)
    reference_s = time.monotonic() - t0
    results = []
    for i, execution in enumerate(execute_series(package, raws, public=public, backend=backend, only=only, rules=rules)):
        names = only[i] if only else None
        # The expectations' time counts once, on the first code.
        results.append(judge_run(package, execution, expected, public=public, only=names, backend=backend, reference_s=reference_s, cached=cached))
        reference_s = 0.0
    return results


def run_verdict(passed: Sequence[bool], failing: Sequence[Verdict]) -> Verdict:
    """A run's verdict from its probes: accepted when every one passed, partial when some did, else the most severe
    of the failing probes' statuses (``failing``)."""
    if all(passed):
        return Verdict.ACCEPTED
    return Verdict.PARTIAL if any(passed) else most_severe(list(failing))


def judge_run(
    package: Package,
    execution: Execution,
    expected: dict[str, Any],
    *,
    public: bool,
    only: Collection[str] | None = None,
    backend: Backend | None = None,
    reference_s: float = 0.0,
    cached: bool = True,
) -> GradeResult:
    """One execution of a series judged as :func:`grade_submission` would, with its timings.

    ``only`` judges it on the named probes alone, as they ran (a score below
    100 there is below 100 on the whole set too). ``reference_s`` is the time
    its expectations took, when it paid for them.
    """
    t0 = time.monotonic()
    if only is None:
        result = judge(package, execution, expected, public=public, backend=backend)
    else:
        kept = {name: value for name, value in expected.items() if name in only}
        result = judge(package.narrowed(public, only), execution, kept, public=public, backend=backend)
    # Its own share of a series: the expectations if it paid for them, its start (if it had one), its run, its judging.
    own = reference_s + (execution.startup_ms + execution.run_ms) / 1000 + time.monotonic() - t0
    return _timed(result, execution, own, reference_s, cached)


def _timed(result: GradeResult, execution: Execution, total_s: float, reference_s: float, cached: bool) -> GradeResult:
    """``result`` with where its time went: in all, on the expectations, the sandbox, the probes."""
    result.timings = {
        "total_ms": int(total_s * 1000),
        "reference_ms": int(reference_s * 1000),
        "reference_cached": int(cached),
        "sandbox_startup_ms": execution.startup_ms,
        "run_ms": execution.run_ms,
        "probes_ms": sum(r.duration_ms for r in result.probes),
    }
    return result
