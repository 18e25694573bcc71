"""Run one set of probes over one piece of code in a fresh sandbox, and decode what it said.

Place in the flow: ``grade.py`` calls :func:`execute` twice per grading, once
for the reference (through the expected-observation cache) and once for the
submission. Everything read from the sandbox is untrusted: the stream is
parsed under a byte budget, every frame is validated, and anything
malformed is a platform error before candidate code ran, or a failed probe
after.
"""

from __future__ import annotations

import dataclasses
import io
import logging
import threading
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from grader.errors import GradingCancelled, HostLoadError, PlatformError
from grader.interface import interface_violations, starter_interface
from grader.package import Package
from grader.probe_meta import ProbeSpec
from grader.sandbox_profile import sandbox_profile
from grader.source_rules import Violation, rule_violations
from sandbox import Backend, FrameWatcher, RunOutcome, Sandbox, SandboxLimits, SandboxStartError, get_backend
from sandbox.errors import SandboxNotReady
from sandbox.runner.codec import ObservationError, decode_observation
from sandbox.runner.host_load import LOAD_STRETCH
from sandbox.runner.profiles import PIDS_LIMIT
from sandbox.runner.wire import WireError, read_frames

log = logging.getLogger(__name__)

OUTPUT_BYTES = 1024 * 1024  # what one probe may print
OBSERVATION_BYTES = 32 * 1024 * 1024  # one probe's encoded result
# Time for the syntax check and sandbox start-up beyond the probes' own limits.
SLACK_SECONDS = 15.0


@dataclass
class ProbeRun:
    """What one probe produced in the sandbox, decoded."""

    name: str
    # ok | error | timeout | stopped | memory | output_limit | observation_limit | crashed | killed | no_result | bad_observation | not_run
    status: str
    observation: Any = None
    message: str = ""
    traceback: str = ""
    exc_type: str = ""
    stdout: str = ""
    duration_ms: int = 0
    host_ms: int = 0  # what other processes took of its cores while it ran (the runner's measure)


@dataclass
class Execution:
    """The result of running one probe file over one solution."""

    syntax_error: dict[str, Any] | None = None
    # The package's source rules this code breaks, and the starter's parameters it changes: it was not run
    # (grader/source_rules.py, grader/interface.py).
    rule_violations: list[Violation] = field(default_factory=list)
    probes: dict[str, ProbeRun] = field(default_factory=dict)
    oom_killed: bool = False
    timed_out: bool = False
    stream_overflow: bool = False
    runner_died: bool = False
    startup_ms: int = 0
    run_ms: int = 0


def probe_timeout(package: Package, spec: ProbeSpec) -> float:
    return spec.timeout if spec.timeout is not None else package.limits.probe_seconds


def stretched_wall_seconds(timeouts: Iterable[float]) -> float:
    """A run's wall clock for probes of these limits: each stretched as far as the runner may for the host's load, and
    the syntax check and sandbox start-up (SLACK_SECONDS)."""
    return sum(LOAD_STRETCH * t + 0.5 for t in timeouts) + SLACK_SECONDS


def sandbox_limits(package: Package, public: bool) -> SandboxLimits:
    """The run's limits: its wall clock has room for every probe stretched as far as the runner may for the host's
    load (host_load.LOAD_STRETCH times its limit), within the package's wall_seconds.

    Sized for an idle host, the clock took back on a loaded one the time the runner had given the probes (a correct
    solution's three 2 s probes with a third of a core each outlast 3 x 3.5 s + slack), and every grading again met
    the same clock until it became an internal error. The runner still ends each probe at its own limit of CPU, so
    the longer clock only matters when the host is slow, or the runner itself stops answering.
    """
    wall = min(package.limits.wall_seconds, stretched_wall_seconds(probe_timeout(package, s) for s in package.probes(public)))
    return SandboxLimits(
        wall_seconds=max(wall, 1.0),
        memory_mb=package.limits.memory_mb,
        pids=PIDS_LIMIT.get(package.runtime, 128),
        stream_bytes=len(package.probes(public)) * (OBSERVATION_BYTES + 2 * OUTPUT_BYTES) // 4 + 4 * 1024 * 1024,
    )


def refusals(package: Package, code: str | bytes) -> list[Violation]:
    """Why ``code`` is refused before it runs, in line order: the package's source rules it breaks, and the
    definitions that change the starter's parameters. Empty when it may run."""
    found = rule_violations(package.rules, code) + interface_violations(starter_interface(package.starter_code), code)
    return sorted(found, key=lambda v: v.line)


def execute(
    package: Package,
    code: bytes,
    *,
    public: bool,
    backend: Backend | None = None,
    on_probe: Callable[[ProbeRun], None] | None = None,
    stop: threading.Event | None = None,
) -> Execution:
    """Run the package's public or hidden probes over ``code`` in a new sandbox.

    ``on_probe``, if given, is called with each probe's run as its frames
    arrive, while the others still run (live progress); the returned
    execution is decoded from the whole stream afterwards, as without it.
    ``stop``, set while the probes run, kills the sandbox: GradingCancelled.
    """
    if (on_probe is None and stop is None) or refusals(package, code):
        return execute_series(package, [code], public=public, backend=backend)[0]
    backend = backend or get_backend()
    names = {s.name for s in package.probes(public)}
    job = probes_job(package, code, public)
    return run_jobs(backend, sandbox_profile(package), sandbox_limits(package, public), [job], names, on_probe, stop)[0]


def execute_series(
    package: Package,
    codes: list[bytes],
    *,
    public: bool,
    backend: Backend | None = None,
    only: Sequence[Collection[str] | None] | None = None,
    rules: Sequence[bool] | None = None,
) -> list[Execution]:
    """Run the package's probes over each of ``codes``, one after another in as few sandboxes as will do.

    Trusted code only (a package's shipped solutions, mutants of its
    reference): see :func:`execute_runs`. ``only``, one entry per code, runs
    just the named probes for that code (None: all of them); ``rules``, one
    entry per code, says whether its source rules are checked (``Run.rules``).
    """
    runs = [Run(code, public, only[i] if only else None, rules[i] if rules else True) for i, code in enumerate(codes)]
    return execute_runs(package, runs, backend)


@dataclass(frozen=True)
class Run:
    """One code's turn in a series: its public or hidden probes, or only those named in ``only``."""

    code: bytes
    public: bool
    only: Collection[str] | None = None
    # Check the package's source rules first (grader/source_rules.py). False only for the
    # platform's own test codes, the cheat battery and the leaker: they test the probes and the
    # seal, which a refusal by the rules would leave untested.
    rules: bool = True


def execute_runs(package: Package, runs: Sequence[Run], backend: Backend | None = None) -> list[Execution]:
    """The executions of ``runs``, one after another in as few sandboxes as will do.

    Trusted code only (a package's reference and shipped solutions, mutants
    of its reference): see :meth:`sandbox.Sandbox.run_series`. Each execution
    is what :func:`execute` would return for that run alone; a sandbox start
    is paid once for the series instead of once per run. A run that ends its
    sandbox (the wall clock, the memory limit) sends the rest to a new one.
    Public and hidden runs may share a series: the sandbox gets the longer
    wall clock of the two (each job keeps the clock to itself, and each probe
    its own time limit) and room for both streams.
    """
    refused = {i: found for i, run in enumerate(runs) if run.rules and (found := refusals(package, run.code))}
    if refused:
        # Checked here, in the worker, so that no path to a sandbox skips it; the refused codes never start one.
        ran = iter(execute_runs(package, [run for i, run in enumerate(runs) if i not in refused], backend))
        return [Execution(rule_violations=refused[i]) if i in refused else next(ran) for i in range(len(runs))]
    if not runs:
        return []
    backend = backend or get_backend()
    kinds = sorted({run.public for run in runs})
    names = {s.name for public in kinds for s in package.probes(public)}
    jobs = [probes_job(package, run.code, run.public, run.only) for run in runs]
    each = [sandbox_limits(package, public) for public in kinds]
    limits = dataclasses.replace(each[0], wall_seconds=max(x.wall_seconds for x in each), stream_bytes=max(x.stream_bytes for x in each))
    profile = sandbox_profile(package)
    results: list[Execution] = []
    while len(results) < len(jobs):
        results.extend(run_jobs(backend, profile, limits, jobs[len(results) :], names))
    return results


def probes_job(package: Package, code: bytes, public: bool, only: Collection[str] | None = None) -> dict[str, Any]:
    """The job that runs the package's public or hidden probes over ``code`` (only those named in ``only``, if given)."""
    specs = [s for s in package.probes(public) if only is None or s.name in only]
    job: dict[str, Any] = {
        "public": public,
        "probes_list": [{"name": s.name, "timeout": probe_timeout(package, s)} for s in specs],
        "limits": {"output_bytes": OUTPUT_BYTES, "observation_bytes": OBSERVATION_BYTES},
    }
    if package.preload:
        job["preload"] = list(package.preload)
    # The sources travel inside the job: no file of the host is shared with
    # the sandbox, so the same job runs in bwrap, in a container, or remotely.
    sources: dict[str, Any] = {"solution": code.decode("utf-8"), "probes": package.probe_source(public).decode("utf-8")}
    if package.common_source is not None:
        sources["common"] = package.common_source.decode("utf-8")
    if package.given_sources:
        # given/*.py come from the package, never from the submission (one
        # file), so a candidate cannot replace them; imported as given.<name>.
        sources["given"] = {name: data.decode("utf-8") for name, data in package.given_sources.items()}
    job["sources"] = sources
    return job


def _ready_sandbox(backend: Backend, runtime: str, limits: SandboxLimits) -> Sandbox:
    """A started sandbox whose runner said ready; one more is tried if the first hung before it.

    The job has not been sent when a runner hangs on its way to "ready", so
    no candidate code has run and a second sandbox cannot run anything twice.
    """
    try:
        sandbox = backend.start(runtime, limits)
        sandbox.wait_ready()  # instant for a warm sandbox; the whole start for a cold one
        return sandbox
    except SandboxNotReady as exc:
        log.warning(
            "sandbox hung before ready; starting another",
            extra={"event": "sandbox.start_retried", "profile": runtime, "error": str(exc)[:500]},
        )
    sandbox = backend.start(runtime, limits)
    sandbox.wait_ready()
    return sandbox


def run_job(backend: Backend, runtime: str, limits: SandboxLimits, job: dict[str, Any], names: set[str]) -> Execution:
    """Run one job (sources, probes_list, limits) in a new sandbox of ``runtime``; decode the probes named ``names``.

    :func:`execute` builds the job for a package's probes; ``sandboxed_checks``
    builds one that runs a package's custom checks.
    """
    return run_jobs(backend, runtime, limits, [job], names)[0]


def run_jobs(
    backend: Backend,
    runtime: str,
    limits: SandboxLimits,
    jobs: list[dict[str, Any]],
    names: set[str],
    on_probe: Callable[[ProbeRun], None] | None = None,
    stop: threading.Event | None = None,
) -> list[Execution]:
    """Run ``jobs`` in one new sandbox (one job, or a series of trusted ones); the executions of those that ran, at least the first.

    ``on_probe`` (one job only) sees each probe as it finishes: see :func:`execute`.
    """
    t0 = time.monotonic()
    try:
        # A series streams every job's frames through one buffer.
        sandbox = _ready_sandbox(backend, runtime, dataclasses.replace(limits, stream_bytes=limits.stream_bytes * len(jobs)))
        startup_ms = int((time.monotonic() - t0) * 1000)
        if on_probe is not None or stop is not None:
            outcomes = [sandbox.run(jobs[0], _watcher(names, on_probe) if on_probe is not None else None, stop)]
        else:
            outcomes = [sandbox.run(jobs[0])] if len(jobs) == 1 else sandbox.run_series(jobs)
    except SandboxStartError as exc:
        raise PlatformError(str(exc)) from exc
    executions: list[Execution] = []
    for outcome in outcomes:
        try:
            # The first job waited for the start; the others found the sandbox ready.
            execution = _decode(outcome, limits, names, startup_ms if not executions else 0)
            listed = jobs[len(executions)].get("probes_list", [])
            _refuse_a_wall_clock_the_host_ran_out(outcome, execution, {str(p.get("name")): float(p.get("timeout", 0)) for p in listed})
            # The runner reports probes as they end (side by side, not in order); the execution lists them as the job does.
            order = [str(p.get("name")) for p in listed]
            execution.probes = {n: execution.probes[n] for n in order if n in execution.probes} | execution.probes
            executions.append(execution)
        except PlatformError:
            if not executions:
                raise
            break  # this job and the rest run again in a new sandbox, where a second failure is raised
    return executions


# The runner moves a probe's deadline only by LOAD_STEP (5%) of its limit or more (sandbox/runner/runner.py): a probe
# that ran this much past its limit was given time back for the host's load, not stopped late.
GIVEN_BACK_FACTOR = 1.05
# A run cut off by its wall clock whose finished probes lost at least this share of their time to other processes
# was run out by the host: each probe stayed under its limit, but together they were slowed past the run's clock.
HOST_SHARE_OF_A_CUT_RUN = 0.25


def _refuse_a_wall_clock_the_host_ran_out(outcome: RunOutcome, execution: Execution, timeouts: dict[str, float]) -> None:
    """A run stopped by its wall clock after the host took time from its probes is the host's doing: graded again.

    The runner gives each probe back what the host took of its cores, so on a
    loaded host the probes together can outlast the run's wall clock, which
    would then cut the last ones off as time limits, charged to the candidate
    (issue 28). When a finished probe shows it was given time back, the run
    was slowed by the host and the wall clock tells nothing about the code;
    and so when the finished probes, each under its limit, lost a quarter or
    more of their time to other processes (the runner's ``host_ms``). Unless
    a probe ran out of its own time: then the code is too slow (or
    never ends) whatever the host did, and the run keeps its time limit; a
    grading of an endless loop on a loaded host would otherwise be retried
    until it became an internal error, and the candidate never learn why.
    """
    if not outcome.timed_out or any(probe.status == "timeout" for probe in execution.probes.values()):
        return
    slowed = sorted(
        name
        for name, probe in execution.probes.items()
        if timeouts.get(name, 0) > 0 and probe.duration_ms > GIVEN_BACK_FACTOR * 1000 * timeouts[name]
    )
    if slowed:
        raise HostLoadError(f"the host's load ran the run out of its wall clock (probe(s) {', '.join(slowed)} were given time back); graded again")
    # No probe reached its limit, yet the run's clock ran out: on a loaded host every probe is slowed a little (none
    # enough to be given time back) and together they outlast the clock; the runner says how much the host took.
    spent = sum(probe.duration_ms for probe in execution.probes.values())
    taken = sum(min(probe.host_ms, probe.duration_ms) for probe in execution.probes.values())
    if spent > 0 and taken >= HOST_SHARE_OF_A_CUT_RUN * spent:
        raise HostLoadError(
            f"the host's load ran the run out of its wall clock (other processes took {taken / spent:.0%} of its probes' time); graded again"
        )


def _watcher(names: set[str], on_probe: Callable[[ProbeRun], None]) -> FrameWatcher:
    """A sandbox's frame watcher that assembles the frames into probes and hands each one to ``on_probe``."""
    assembler = ProbeAssembler(names)

    def watch(header: dict[str, Any], blob: bytes | None) -> None:
        probe = assembler.feed(header, blob)
        if probe is not None:
            on_probe(probe)

    return watch


def _decode(outcome: RunOutcome, limits: SandboxLimits, names: set[str], startup_ms: int) -> Execution:
    """What one job's stream says, validated frame by frame."""
    if outcome.cancelled:
        raise GradingCancelled("the grading was cancelled while it ran")
    if outcome.stream_lost:
        raise PlatformError(f"the sandbox's stream was lost while it ran (a launcher or engine restart){_exit_status(outcome)}")
    if outcome.killed_externally and not outcome.oom_killed:
        # Not the candidate's doing (they cannot reach that process): the
        # sandbox was killed from outside, so grade again rather than blame the code.
        raise PlatformError(f"the sandbox was killed from outside while it ran{_exit_status(outcome)}")

    result = Execution(
        oom_killed=outcome.oom_killed,
        timed_out=outcome.timed_out,
        stream_overflow=outcome.stream_overflow,
        startup_ms=startup_ms,
        run_ms=outcome.run_ms,
    )
    frames: list[tuple[dict[str, Any], bytes | None]] = []
    stream_broken = False
    try:
        for frame in read_frames(io.BytesIO(outcome.stream), limits.stream_bytes + 1024):
            frames.append(frame)
    except WireError:
        # Cut short mid-frame: the wall clock, the output cap, or a killed runner.
        stream_broken = True
    if not frames or frames[0][0].get("type") != "ready":
        raise PlatformError(f"the sandbox runner did not start{_exit_status(outcome)}: {outcome.stderr_tail[-1500:]}")

    assembler = ProbeAssembler(names)
    for header, blob in frames[1:]:
        probe = assembler.feed(header, blob)
        if probe is not None:
            result.probes[probe.name] = probe
    if assembler.fault is not None:
        raise PlatformError(f"the sandbox runner reports a platform fault: {assembler.fault}")
    result.syntax_error = assembler.syntax_error
    for name in assembler.pending:
        result.probes[name] = ProbeRun(name=name, status="crashed", message="the probe's result was cut off")
    overloaded = sorted(name for name, probe in result.probes.items() if probe.status == "overloaded")
    if overloaded:
        # The runner gave these probes back what the host took of their cores and the host took most of it anyway
        # (sandbox/runner/host_load.py): no verdict on the candidate's time can be read off such a run.
        raise HostLoadError(f"the host was overloaded while probe(s) {', '.join(overloaded)} ran; graded again")
    result.runner_died = not assembler.done and not outcome.timed_out and not outcome.stream_overflow
    if stream_broken and not (outcome.timed_out or outcome.stream_overflow):
        result.runner_died = True
    if result.runner_died:
        # Graded as the candidate's doing (they can kill it), but when they did
        # not, the runner's own last words (a traceback) are the only clue.
        log.warning(
            "the sandbox runner died during the run",
            extra={"event": "sandbox.runner_died", "exit_code": outcome.exit_code, "stderr_tail": outcome.stderr_tail[-2000:]},
        )
    return result


class ProbeAssembler:
    """Frames in, probes out: each probe's header and its arrays, decoded once the last array has come.

    The one reading of a job's frames, used twice: by :func:`_decode` on the
    whole stream after the run, and by the live watcher of
    :func:`execute` (``on_probe``) on each frame as it arrives, so the two
    believe the same frames (the first of each probe named in ``names``).
    """

    def __init__(self, names: Collection[str]) -> None:
        self.names = names
        self.seen: set[str] = set()
        self.pending: dict[str, tuple[dict[str, Any], list[bytes]]] = {}
        self.syntax_error: dict[str, Any] | None = None
        self.fault: str | None = None  # the runner's word that the platform failed in this job (sandbox/runner/runner.py)
        self.done = False

    def feed(self, header: dict[str, Any], blob: bytes | None) -> ProbeRun | None:
        """Take one frame; the probe it completes, if it completes one."""
        kind = header.get("type")
        if kind == "syntax_error":
            self.syntax_error = {
                "message": str(header.get("message", ""))[:500],
                "line": header.get("line") if isinstance(header.get("line"), int) else None,
                "offset": header.get("offset") if isinstance(header.get("offset"), int) else None,
                "text": str(header.get("text", ""))[:500],
            }
        elif kind == "fault":
            self.fault = str(header.get("message", ""))[:500]
        elif kind == "probe":
            name = header.get("name")
            if not isinstance(name, str) or name not in self.names or name in self.seen:
                return None  # not ours to believe
            self.seen.add(name)
            self.pending[name] = (header, [])
        elif kind == "array":
            owner = self.pending.get(str(header.get("probe")))
            if owner is not None and blob is not None:
                owner[1].append(blob)
        elif kind == "done":
            self.done = True
        # At most one probe completes per frame: a probe frame with no arrays, or its last array.
        for name in [n for n, (h, blobs) in self.pending.items() if len(blobs) >= _int(h.get("arrays"))]:
            h, blobs = self.pending.pop(name)
            return _decode_probe(name, h, blobs)
        return None


def _exit_status(outcome: RunOutcome) -> str:
    """How the sandbox ended, for an operator's message; nothing when its end was not waited for (it said "done")."""
    return "" if outcome.exit_code is None else f" (exit {outcome.exit_code})"


def _int(value: Any) -> int:
    return value if isinstance(value, int) and value >= 0 else 0


def _decode_probe(name: str, header: dict[str, Any], blobs: list[bytes]) -> ProbeRun:
    status = str(header.get("status", "crashed"))
    run = ProbeRun(
        name=name,
        status=status,
        message=str(header.get("message", ""))[:2000],
        traceback=str(header.get("traceback", ""))[:4000],
        exc_type=str(header.get("exc_type", ""))[:200],
        stdout=str(header.get("stdout", ""))[:8192],
        duration_ms=_int(header.get("duration_ms")),
        host_ms=_int(header.get("host_ms")),
    )
    if status == "ok":
        try:
            run.observation = decode_observation(header.get("tree"), blobs)
        except ObservationError as exc:
            run.status = "bad_observation"
            run.message = f"the result could not be read: {exc}"
    return run
