"""Validate a challenge package: what ``check_challenges`` runs.

A package is valid only if the reference scores 100% on public and hidden
probes, the starter and every generic cheat (``cheats.py``) score below
100% (shown on the first few hidden probes when they fail one there), every
probe is deterministic (two runs of the reference agree under the probe's
own check), every run finishes inside its limits, every shipped solution in
``solutions/`` gets the verdict and score its ``expected.toml`` states, and a
hostile submission that reads the hidden probes in its sandbox gets none of
them back in its candidate's view (``seal.py``).

Running the reference twice serves two checks at once: the first run is the
expectation (it fills the cache), the second is graded against it, so a
score of 100 proves both correctness of the wiring and determinism. When the
cache already holds this version's expectations (an earlier run, on this
backend or another), one run graded against them proves the same.

Validating on several backends (``make test``: bwrap and docker) can share
the work out (:class:`Share`) instead of repeating all of it on each.

A wrong solution can be graded by its record (``by_record``, what ``make
test`` does): on the hidden probes ``solutions/signatures.toml`` says it
fails, and a few it passes, instead of on all of them. The record is written
from a whole grading of this very package and solution (``grader check
--fresh --write-signatures``; it is current only while neither changed), so
the re-grading shows that the platform, runtime and backend still reject it
for the same reasons; its verdict and score are then those of the whole
set, each probe not graded counted as the record has it (passed). A solution
whose focused grading differs from its record in any way is graded again on
every probe and judged on that, as without ``by_record``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader import expected as expected_cache
from grader import validation_cache
from grader.cheats import Cheat, cheat_sources
from grader.coverage import COVERAGE_TABLE, coverage_problems, package_coverage
from grader.diagnose import compare as compare_signature
from grader.diagnose import recorded_failures
from grader.errors import GraderError, PackageError
from grader.execute import Execution, Run, execute, execute_runs, probe_timeout
from grader.grade import GradeResult, decode_submission, expected_observations, grade_series, judge, judge_run, reference_failures, run_verdict
from grader.package import SIGNATURES_RECORD, Package
from grader.package_load import load_package_dir
from grader.scoring import Scored, score
from grader.seal import check_seal, leaker_source
from grader.signatures import write_signatures
from grader.verdicts import Verdict
from sandbox import Backend, get_backend


@dataclass
class Report:
    name: str
    ok: bool = True
    lines: list[str] = field(default_factory=list)
    # The wrong solutions' hidden results, by name (GradeResult.to_dict()), kept when the validation is asked to write the
    # signatures record from them (``record_signatures``): the grading the record needs is the one validation just did.
    wrong_results: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Failures other than a wrong solution's score or verdict outside what expected.toml says: while there are none,
    # the gradings are sound and only the expectations need moving (the signatures record may still be written).
    hard_failures: int = 0

    def fail(self, line: str) -> None:
        self.fail_expectation(line)
        self.hard_failures += 1

    def fail_expectation(self, line: str) -> None:
        """A wrong solution graded soundly, but not as expected.toml says: the record of how it fails still holds."""
        self.ok = False
        self.lines.append(f"FAIL {line}")

    def info(self, line: str) -> None:
        self.lines.append(f"  ok {line}")

    def detail(self, line: str) -> None:
        """A line explaining the one before it."""
        self.lines.append(f"       {line}")


def _gist(message: str, limit: int = 600) -> str:
    """The end of a probe's message on one line: for a traceback, its last lines, where the error is."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    text = " | ".join(lines[-3:]) if lines else "(no message)"
    return text if len(text) <= limit else "..." + text[-limit:]


@dataclass(frozen=True)
class Share:
    """This backend's part of one package's validation shared out over ``of`` backends; ``index`` says which part.

    Every backend grades what can differ between backends: the reference
    on the hidden probes (its probe times against the limits; the limits are
    checked on each). The public probes, what Run grades, run on the first
    part only. The starter, the shipped solutions, the cheats and the leaker
    are dealt out in turn, each graded on one backend, the
    failing ones and the correct alternatives as two decks so that every part
    gets both when there are enough: a verdict is a function of the
    solution's observations, and the reference's observations agreeing across
    backends (below) shows the backends observe alike.

    Determinism: the first part (index 0) runs the reference once and records
    it; the others must agree with that record, which proves determinism
    across two sandboxes, as two runs on one backend would, and agreement
    across backends besides. A part that finds no record runs it twice.
    """

    index: int
    of: int

    def __post_init__(self) -> None:
        if not 0 <= self.index < self.of:
            raise ValueError(f"share {self.index} of {self.of}: index must be in 0..{self.of - 1}")

    @property
    def records_once(self) -> bool:
        """Whether this part may record the reference from one run (a later part proves determinism)."""
        return self.index == 0 and self.of > 1

    def grades(self, position: int) -> bool:
        """Whether this part grades the item at ``position`` of a deck dealt out over the parts."""
        return position % self.of == self.index

    def __str__(self) -> str:
        return f"part {self.index + 1} of {self.of}"


WHOLE = Share(0, 1)

# How many hidden probes (the first ones) screen the starter and the cheats.
SCREEN_PROBES = 3
# How many probes a wrong solution graded by its record passes besides the ones it fails: picked by its name, so that
# over a package's solutions most probes also run on code the record says passes them (a drift shows either way).
RECORD_WITNESSES = 2


def validate_package(
    folder: Path | str,
    backend: Backend | None = None,
    *,
    checks_in_sandbox: bool = False,
    remember: bool = False,
    share: Share = WHOLE,
    require_coverage: bool = False,
    record_signatures: bool = False,
    by_record: bool = False,
) -> Report:
    """Run every check on the package in ``folder`` and report.

    ``checks_in_sandbox`` validates it as the web grades a browser-authored
    package: its custom checks run in a sandbox (grader/sandboxed_checks.py).
    ``remember`` looks the validation up in grader/validation_cache.py first
    and records it there when it passes: a package, platform, runtime and
    backend that passed together before are not run again. ``share`` does
    only this backend's part of a validation shared out over several.
    ``require_coverage`` fails a package without a coverage table (the
    repository's packages must hold one); a table present is always checked
    (grader/coverage.py). ``record_signatures`` (a whole validation only)
    writes ``solutions/signatures.toml`` from the wrong solutions' gradings of
    this validation when it passes, instead of comparing them with the record
    it replaces: ``python -m grader check --fresh --write-signatures`` after a
    probe changed, one grading of each wrong solution instead of two.
    ``by_record`` grades each wrong solution that signatures.toml describes
    by its record (the module's docstring says how); the others whole.
    """
    if record_signatures and (share != WHOLE or remember or by_record):
        raise ValueError("record_signatures needs a whole validation that is run, not looked up: share=WHOLE, remember=False, by_record=False")
    report = Report(str(folder))
    try:
        package = load_package_dir(folder)
        if checks_in_sandbox:
            package = dataclasses.replace(package, checks_in_sandbox=True)
    except GraderError as exc:
        report.fail(f"package: {exc}")
        return report
    report.name = f"{package.track}/{package.slug}"
    _check_coverage(package, report, required=require_coverage)
    if not report.ok:
        return report
    cache_key = None
    if remember and validation_cache.enabled():
        backend = backend or get_backend()
        how = f"{share}; wrong solutions by their record" if by_record else str(share)
        cache_key = validation_cache.key(package.version, backend, checks_in_sandbox=package.checks_in_sandbox, share=how)
        recorded = validation_cache.lookup(cache_key)
        if recorded is not None:
            when = recorded.get("recorded_at", "?")
            report.lines = [*recorded["lines"], f"  ok passed before on this version, platform code, runtime and backend ({when}); not run again"]
            return report
    try:
        _validate_loaded(package, report, backend, share, record_signatures=record_signatures, by_record=by_record)
    except GraderError as exc:
        report.fail(f"{type(exc).__name__}: {exc}")
    if record_signatures and report.hard_failures == 0:
        # Also when only wrong solutions' scores or verdicts differ from expected.toml: the record is about how they
        # fail, which these gradings say; moving the expectations keeps it valid (it does not hash expected.toml).
        _record_signatures(Path(folder), package, report)
    if cache_key is not None and report.ok:
        validation_cache.record(cache_key, report.name, report.lines)
    return report


def _check_coverage(package: Package, report: Report, *, required: bool) -> None:
    """The coverage table against the statement and the probes, before any probe runs."""
    try:
        entries = package_coverage(package.files)
    except PackageError as exc:
        report.fail(f"coverage: {exc}")
        return
    if entries is None:
        if required:
            report.fail(f"coverage: no {COVERAGE_TABLE}: list each rule of the statement and each input class it allows with the probes that test it")
        else:
            report.info(f"coverage: no {COVERAGE_TABLE} (optional outside the repository)")
        return
    problems = coverage_problems(entries, package.statement, package.hidden_probes, package.public_probes)
    for problem in problems:
        report.fail(f"coverage: {problem}")
    if not problems:
        rules = sum(e.kind == "rule" for e in entries)
        report.info(f"coverage: {rules} rules and {len(entries) - rules} input classes, each with a hidden probe; every hidden probe has a purpose")


@dataclass(frozen=True)
class Deal:
    """What this part grades besides the reference: the package's own codes dealt to it, in lanes, and whether it tests the seal.

    The starter, the shipped solutions and the cheats form two decks dealt
    in turn over the parts (failing code, correct alternatives), so that
    every part gets failing code and, when the package ships two or more,
    correct alternatives. The starter and the cheats need only to score
    below 100: they are screened on the first hidden probes, where one
    failure settles it.
    """

    lanes: list[list[tuple[str, bytes]]]
    cheats: dict[str, Cheat]
    screen: tuple[str, ...]
    screened: frozenset[str]
    leaker: bool
    # Wrong solutions graded by their record: the probes each is graded on (its recorded failures and witnesses).
    focus: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def only(self, name: str) -> tuple[str, ...] | None:
        """The hidden probes ``name`` is graded on: the screening ones, its record's, or None for all."""
        return self.screen if name in self.screened else self.focus.get(name)

    def ruled(self, name: str) -> bool:
        """Whether ``name``'s source rules are checked: not for the platform's cheats and leaker (``Run.rules``)."""
        return name not in self.cheats and name != "leaker"

    def run(self, name: str, code: bytes) -> Run:
        return Run(code, False, self.only(name), self.ruled(name))


def _deal(package: Package, share: Share, *, by_record: bool = False) -> Deal:
    def source(solution: Any) -> tuple[str, bytes | str]:
        return f"solutions/{solution.name}.py", package.solution_code(solution.name)

    battery = [(f"cheat {cheat.name}", cheat, code) for cheat, code in cheat_sources(package)]
    failing = [
        ("starter", package.starter_code),
        *(source(s) for s in package.solutions if s.verdict != Verdict.ACCEPTED.value),
        *((name, code) for name, _, code in battery),
    ]
    accepted = [source(s) for s in package.solutions if s.verdict == Verdict.ACCEPTED.value]
    dealt = [item for deck in (failing, accepted) for position, item in enumerate(deck) if share.grades(position)]
    shipped = [(name, decode_submission(code)) for name, code in dealt]
    # Lanes run side by side, each sandbox held to one CPU by its cgroup, so
    # no probe gets less CPU than it would alone.
    count = validate_jobs()
    lanes = [lane for lane in (shipped[i::count] for i in range(count)) if lane]
    # The leaker is dealt too, as if it came after the failing deck: the
    # seal it tests is the grader's (what a hidden probe's candidate view may
    # hold), the same on every backend, and tests/sandbox/test_seal.py puts each
    # backend's walls to the test. Over the catalogue both backends get leakers.
    # It is hostile only to the seal: it reads its own job's folder, as a
    # candidate's code can, and sends the text out through every channel. So
    # it may run in the lane's sandbox, last, with nothing after it.
    leaker = share.grades(len(failing))
    if leaker:
        lanes = lanes or [[]]
        lanes[-1].append(("leaker", decode_submission(leaker_source(package))))
    cheats = {name: cheat for name, cheat, _ in battery}
    return Deal(
        lanes=lanes,
        cheats=cheats,
        screen=tuple(s.name for s in package.hidden_probes[:SCREEN_PROBES]),
        screened=frozenset({"starter", *cheats}),
        leaker=leaker,
        focus=_focus(package) if by_record else {},
    )


def _focus(package: Package) -> dict[str, tuple[str, ...]]:
    """The probes each wrong solution with a current record is graded on: those it fails and ``RECORD_WITNESSES``
    it passes, in the package's order. A solution failing none (refused before it ran) or all is graded whole."""
    focus = {}
    names = [spec.name for spec in package.hidden_probes]
    recorded = recorded_failures(package)
    for solution in package.solutions:
        if solution.verdict == Verdict.ACCEPTED.value:
            continue
        failed = recorded.get(solution.name)
        if not failed or len(failed) == len(names):
            continue
        passing = sorted((n for n in names if n not in failed), key=lambda n: hashlib.sha256(f"{solution.name}\0{n}".encode()).hexdigest())
        chosen = {*failed, *passing[:RECORD_WITNESSES]}
        focus[f"solutions/{solution.name}.py"] = tuple(n for n in names if n in chosen)
    return focus


def _as_whole(package: Package, result: GradeResult) -> tuple[Verdict, float]:
    """The verdict and score of a grading by the record over the whole set: each probe not graded counted passed,
    as the record has it (grade.judge_run's rules)."""
    graded = {p.name: p for p in result.probes}
    scored = [Scored(s.category, s.weight, graded[s.name].passed if s.name in graded else True) for s in package.hidden_probes]
    total, _ = score(scored)
    return run_verdict([s.passed for s in scored], [Verdict(p.status) for p in result.probes if not p.passed]), total


def _record_signatures(folder: Path, package: Package, report: Report) -> None:
    wrong = [s.name for s in package.solutions if s.verdict != Verdict.ACCEPTED.value]
    missing = [name for name in wrong if name not in report.wrong_results]
    if missing:  # cannot happen in a whole validation that passed; never write half a record
        report.fail(f"{SIGNATURES_RECORD}: not written, no grading of {', '.join(missing)}")
        return
    path = write_signatures(folder, package, {name: report.wrong_results[name] for name in wrong})
    report.info(f"{SIGNATURES_RECORD}: written from these gradings ({len(wrong)} wrong solutions) to {path}")
    if not report.ok:
        report.detail("the check failed only on wrong solutions' scores or verdicts: move them in expected.toml and the record holds")


def _validate_loaded(
    package: Package, report: Report, backend: Backend | None, share: Share, *, record_signatures: bool = False, by_record: bool = False
) -> None:
    """The reference's runs, then the codes dealt to this part; with one lane, all in one sandbox.

    The reference is trusted code and so are the starter, the solutions and
    the cheats (the package's own): they may share a sandbox (a series, see
    ``execute.execute_runs``), each run in its own folder and forked
    children, one sandbox start instead of one per run. The reference runs
    first, so its probe times, checked against the limits, are measured with
    nothing else running. The codes after it are judged only once it has
    passed and its observations are the expectations. With several lanes,
    which run side by side, they start after the reference's series instead.
    """
    if share != WHOLE:
        report.info(f"{share} of a validation shared out over backends (grader/validate.py: Share)")
    backend = backend or get_backend()
    deal = _deal(package, share, by_record=by_record)
    # The public probes are what Run grades; the first part runs them and
    # records them. A later part's hidden run, on the same probe machinery,
    # is what shows that its backend grades the package.
    kinds = [public for public in (True, False) if not (public and share.index > 0 and expected_cache.load(package.version, True) is not None)]
    carried = deal.lanes[0] if len(deal.lanes) == 1 else []
    runs = [Run(package.reference_code.encode(), public) for public in kinds] + [deal.run(name, code) for name, code in carried]
    executions = execute_runs(package, runs, backend)
    firsts = dict(zip(kinds, executions, strict=False))
    for public in (True, False):
        if public in firsts:
            _validate_reference(package, public, report, backend, share, firsts[public])
        else:
            report.info("reference, public: run by the first part, whose record stands")
    if not report.ok:
        return
    expected, _ = expected_observations(package, False, backend)  # recorded just above
    done = {
        name: judge_run(package, execution, expected, public=False, only=run.only, backend=backend)
        for (name, _), run, execution in zip(carried, runs[len(kinds) :], executions[len(kinds) :], strict=True)
    }
    _validate_submissions(package, report, backend, deal, done, record_signatures=record_signatures)


def _validate_reference(package: Package, public: bool, report: Report, backend: Backend, share: Share, first: Execution) -> None:
    """The reference passes every probe, twice alike, inside its limits; its observations become the expectations.

    ``first`` is its first run (in a series, see :func:`_validate_loaded`).
    Determinism needs two runs that agree. When the expectations of this
    package version and runtime are already recorded (by an earlier run, on
    this backend or another: ``make test`` validates every package on bwrap
    and on docker), the first run is judged against them, which proves the
    same thing with one sandbox instead of two, and across backends too.
    """
    kind = "public" if public else "hidden"
    specs = package.probes(public)
    names = {s.name for s in specs}
    t0 = time.monotonic()
    recorded = expected_cache.load(package.version, public)
    if recorded is not None and set(recorded) != names:
        recorded = None
    earlier = (first.startup_ms + first.run_ms) / 1000  # the first run counts its own time
    problems = reference_failures(first, package, public)
    if problems:
        for problem in problems:
            report.fail(f"reference, {kind}: {problem}")
        return
    if recorded is None and share.records_once:
        expected, second = {name: run.observation for name, run in first.probes.items()}, first
        agreement = "recorded from one run (the next backend's run must agree with it),"
    elif recorded is None:
        expected = {name: run.observation for name, run in first.probes.items()}
        second = execute(package, package.reference_code.encode(), public=public, backend=backend)
        agreement = "deterministic; two runs agree,"
    else:
        expected, second = recorded, first
        agreement = "deterministic; one run agrees with the recorded run of this version,"
    result = judge(package, second, expected, public=public, backend=backend)
    elapsed = time.monotonic() - t0 + earlier
    if result.score != 100:
        for probe in result.probes:
            if not probe.passed:
                report.fail(f"reference, {kind}: probe '{probe.name}' is not deterministic or fails: {probe.status}: {probe.message}")
        return
    if recorded is None:
        expected_cache.store(package.version, public, expected)
    slowest = max(specs, key=lambda s: first.probes[s.name].duration_ms)
    worst = first.probes[slowest.name].duration_ms / 1000
    report.info(
        f"reference, {kind}: 100% on {len(specs)} probes, {agreement} in {elapsed:.1f} s; "
        f"slowest probe '{slowest.name}' {worst:.2f} s of its {probe_timeout(package, slowest):g} s"
    )
    if worst > 0.8 * probe_timeout(package, slowest):
        report.fail(f"reference, {kind}: probe '{slowest.name}' uses over 80% of its time limit; raise the limit")


def _validate_submissions(
    package: Package, report: Report, backend: Backend, deal: Deal, done: dict[str, GradeResult], *, record_signatures: bool = False
) -> None:
    """The starter and every cheat score below 100, every shipped solution gets the verdict ``solutions/expected.toml`` states, the seal holds.

    Only what was dealt to this part; ``done`` holds the results of those
    already graded (the lane that followed the reference in its sandbox).
    """
    results = dict(done)
    rest = [lane for lane in deal.lanes if not all(name in done for name, _ in lane)]
    with ThreadPoolExecutor(max_workers=max(1, len(rest)), thread_name_prefix="validate") as pool:
        series = [pool.submit(grade_series, package, [code for _, code in lane], public=False, backend=backend,
                              only=[deal.only(name) for name, _ in lane], rules=[deal.ruled(name) for name, _ in lane])
                  for lane in rest]  # fmt: skip
        for lane, future in zip(rest, series, strict=True):
            results.update(zip((name for name, _ in lane), future.result(), strict=True))
    screened, cheats, screen = set(deal.screened), deal.cheats, deal.screen
    # Rare: a starter or cheat that passed every screening probe gets the whole set.
    shipped = [item for lane in deal.lanes for item in lane]
    unsettled = [(name, code) for name, code in shipped if name in screened and results[name].score >= 100]
    if unsettled and len(screen) < len(package.hidden_probes):
        rules = [deal.ruled(name) for name, _ in unsettled]
        whole = grade_series(package, [code for _, code in unsettled], public=False, backend=backend, rules=rules)
        results.update(zip((name for name, _ in unsettled), whole, strict=True))
        screened -= {name for name, _ in unsettled}
    # Wrong solutions graded by their record: one whose grading differs from the record is graded again whole, and
    # judged on that, so a failure's report is the one a whole validation would give.
    focused = {name for name in results if name in deal.focus}
    drifted = [
        (name, code) for name, code in shipped if name in focused and compare_signature(package, _solution_name(name), results[name].to_dict())
    ]
    if drifted:
        whole = grade_series(package, [code for _, code in drifted], public=False, backend=backend)
        results.update(zip((name for name, _ in drifted), whole, strict=True))
        focused -= {name for name, _ in drifted}

    def on(name: str) -> str:
        return f"the first {len(screen)} hidden probes (a screening: below 100 there is below 100 on all)" if name in screened else "hidden probes"

    starter = results.get("starter")
    if starter is None:
        report.info("starter: graded by another backend's part")
    elif starter.score >= 100:
        report.fail("starter: scores 100% on the hidden probes; it must score less")
    else:
        report.info(f"starter: {starter.verdict.value}, {starter.score:g}% on {on('starter')}{_took(starter)}")

    for name, cheat in cheats.items():
        result = results.get(name)
        if result is None:
            continue  # dealt to another backend's part
        if result.score >= 100:
            report.fail(f"{name} ({cheat.does}): scores 100% on the hidden probes; they must reject code that does no work")
        else:
            report.info(f"{name}: {result.verdict.value}, {result.score:g}% on {on(name)}{_took(result)}")

    if deal.leaker:
        _report_seal(package, results["leaker"].to_dict(), report)
    else:
        report.info("seal: put to the test by another backend's part")

    for solution in package.solutions:
        key = f"solutions/{solution.name}.py"
        result = results.get(key)
        if result is None:
            continue  # dealt to another backend's part
        problems = []
        verdict, scored = _as_whole(package, result) if key in focused else (result.verdict, result.score)
        if verdict.value != solution.verdict:
            problems.append(f"verdict {verdict.value}, expected {solution.verdict}")
        if solution.score is not None and abs(scored - solution.score) > 0.01:
            problems.append(f"score {scored:g}, expected {solution.score:g}")
        if solution.score_below is not None and not scored < solution.score_below:
            problems.append(f"score {scored:g}, expected below {solution.score_below:g}")
        if solution.score_at_least is not None and not scored >= solution.score_at_least:
            problems.append(f"score {scored:g}, expected at least {solution.score_at_least:g}")
        if result.verdict == Verdict.INTERNAL_ERROR:
            problems.append("the platform failed")
        elif solution.verdict != Verdict.ACCEPTED.value and record_signatures:
            report.wrong_results[solution.name] = result.to_dict()  # the record is written from this grading
        elif key in focused:
            pass  # its grading agreed with the record (above)
        elif solution.verdict != Verdict.ACCEPTED.value:
            # The diagnosis library must say how this solution fails today (grader/diagnose.py).
            drift = compare_signature(package, solution.name, result.to_dict())
            if drift:
                problems.append(drift)
        if problems:
            failures = [p for p in result.probes if not p.passed]
            failed = ", ".join(f"{p.name} ({p.status})" for p in failures)
            line = f"solutions/{solution.name}.py: " + "; ".join(problems) + (f"; failed: {failed}" if failed else "")
            # wrong_results holds only wrong solutions graded without a platform failure (above).
            if solution.name in report.wrong_results and result.verdict != Verdict.ACCEPTED:
                report.fail_expectation(line)  # a wrong solution still wrong, by another score: expected.toml to move
            else:
                report.fail(line)
            if failures:
                # The verdict alone cannot tell a wrong solution from a sandbox that
                # broke under it: the first failure's own words can.
                report.detail(f"first failure, '{failures[0].name}': {_gist(failures[0].message)}")
        else:
            how = f", by its record ({len(result.probes)} of {len(package.hidden_probes)} probes graded)" if key in focused else ""
            report.info(f"solutions/{solution.name}.py: {verdict.value}, {scored:g}% as expected{how}{_took(result)}")


def _solution_name(key: str) -> str:
    """``solutions/<name>.py`` -> ``<name>``."""
    return key.removeprefix("solutions/").removesuffix(".py")


def _took(result: GradeResult) -> str:
    """How long a code's probes ran, for the report: where a validation's minutes go."""
    probes_ms = result.timings.get("probes_ms")
    return f" ({probes_ms / 1000:.1f} s of probes)" if probes_ms is not None else ""


def _report_seal(package: Package, leaker: dict[str, Any], report: Report) -> None:
    problems, tested = check_seal(package, leaker, expected_cache.load(package.version, False) or {})
    for problem in problems:
        report.fail(f"seal: {problem}")
    if not tested:
        report.fail("seal: the leaker's text reached no hidden probe's message, so the seal was not put to the test")
    elif not problems:
        report.info("seal: a submission that reads the hidden probes in its sandbox gets none of them, and no expected value, back")


def validation_runs(package: Package) -> int:
    """The most runs a whole validation of ``package`` makes, one after another at worst, each up to its wall clock.

    The reference twice on each probe file, the starter, the cheats, the
    shipped solutions and the leaker, and the starter and the cheats again
    on every probe if one passes its screening: what sizes the time limit
    of a validation task in the web.
    """
    screened = 1 + len(cheat_sources(package))
    return 4 + 2 * screened + len(package.solutions) + 1


def validate_jobs() -> int:
    """How many gradings a validation runs at once (GRADER_VALIDATE_JOBS; default: the host's cores, at most 4)."""
    configured = os.environ.get("GRADER_VALIDATE_JOBS", "").strip()
    if configured:
        try:
            return max(1, int(configured))
        except ValueError:
            raise PackageError(f"GRADER_VALIDATE_JOBS must be a whole number, not {configured!r}") from None
    return max(1, min(4, os.cpu_count() or 1))


def validate_all(
    folders: list[Path], backend: Backend | None = None, *, remember: bool = False, require_coverage: bool = False, record_signatures: bool = False
) -> list[Report]:
    if not folders:
        raise PackageError("no challenge packages found")
    return [
        validate_package(folder, backend, remember=remember, require_coverage=require_coverage, record_signatures=record_signatures)
        for folder in folders
    ]
