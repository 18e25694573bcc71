"""An in-memory sandbox backend for tests: answers each job from a script and runs nothing.

Like httpx's ``MockTransport``: everything above the sandbox runs for real
(the web's services and tasks, the grader's expected-observation cache,
checks, verdicts, scores, hints), and only the sandbox is replaced. What it
answers is what the real runner writes (``sandbox/runner/runner.py``): a
``ready`` frame, one ``probe`` frame per probe with its observation encoded by
the runner's own ``wire`` module, ``done``; or a syntax error, a runner that
dies halfway, a sandbox that does not start or is killed from outside.
``tests/sandbox/test_fake_backend.py`` holds the fake to the real runner's
frames for the same code, so the two cannot drift apart unnoticed.

A test says what a correct solution observes (``answers``) and scripts the
code it submits::

    fake = FakeBackend({"small": 5, "positives": [3, 30, 15]})
    fake.script(WRONG, positives=ok([0, 0, 0]))          # the other probes answer correctly
    fake.script(BROKEN, small=raised("ValueError", "no", line=2))
    fake.script(TYPO, reply=syntax_error("'(' was never closed", line=1))
    fake.fail_starts(2)                                   # the next two sandboxes do not start
    fake.hang_starts(1)                                   # the next one hangs before "ready"

Code not scripted (the reference, among others) observes ``answers``; a
probe without an answer observes None. ``jobs`` records every job run, so a
test can assert what was graded (``runs_of(code)``) and ``starts`` counts the
sandboxes asked for, failed or not.

Plug it in with the ``fake_sandbox`` fixture (tests/web/conftest.py), which
makes it the process's backend through ``sandbox.use_backend``.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sandbox import Backend, FrameWatcher, RunOutcome, Sandbox, SandboxLimits, SandboxStartError
from sandbox.errors import SandboxNotReady
from sandbox.runner.codec import encode_observation
from sandbox.runner.wire import WireError, read_frames, write_frame


@dataclass(frozen=True)
class ProbeReply:
    """What the runner reports for one probe: its status, message and, when ``ok``, the value it returned."""

    status: str
    value: Any = None
    message: str = ""
    exc_type: str = ""
    # For "error": the line of the candidate's file that raised, and the function it is in.
    line: int = 0
    function: str = ""
    stdout: str = ""
    duration_ms: int = 3


def ok(value: Any, *, stdout: str = "") -> ProbeReply:
    """The probe returned ``value`` (printing ``stdout``)."""
    return ProbeReply("ok", value=value, stdout=stdout)


def raised(exc_type: str, message: str, *, line: int = 2, function: str = "add", stdout: str = "") -> ProbeReply:
    """The candidate's code raised ``exc_type(message)`` at ``line`` of their file, inside ``function``."""
    return ProbeReply("error", message=message, exc_type=exc_type, line=line, function=function, stdout=stdout)


def timed_out() -> ProbeReply:
    """The probe ran past its time limit and was killed."""
    return ProbeReply("timeout", message="time limit exceeded")


SEGFAULT = (
    "killed by SIGSEGV: a crash in native code, which read or wrote memory it does not own "
    "(a compiled kernel indexing past the end of a buffer, a pointer to freed memory)"
)


def crashed(message: str = SEGFAULT) -> ProbeReply:
    """The probe's process died of a signal (native code; a segmentation fault unless ``message`` says otherwise)."""
    return ProbeReply("crashed", message=message)


def out_of_memory() -> ProbeReply:
    """The probe was killed by the memory limit."""
    return ProbeReply("memory", message="killed by the memory limit")


def exited(code: int = 0) -> ProbeReply:
    """The probe's process exited before returning a result (the code called exit())."""
    return ProbeReply("no_result", message=f"the process exited with code {code} before returning a result (did the code call exit()?)")


@dataclass(frozen=True)
class Reply:
    """The whole answer to one job. ``probes`` left out answer correctly."""

    probes: Mapping[str, ProbeReply] = field(default_factory=dict)
    syntax_error: dict[str, Any] | None = None
    # The runner dies after reporting this many probes (the candidate killed it): no "done".
    runner_dies_after: int | None = None
    # The sandbox was killed by something the candidate cannot reach: a platform failure.
    killed_externally: bool = False


def syntax_error(message: str, *, line: int, offset: int = 1, text: str = "") -> Reply:
    """The code does not compile: the runner says so before any probe runs."""
    return Reply(syntax_error={"message": message, "line": line, "offset": offset, "text": text})


def runner_killed(after: int = 0) -> Reply:
    """The runner dies after ``after`` probes (the candidate's code killed it)."""
    return Reply(runner_dies_after=after)


def killed_from_outside() -> Reply:
    """An operator or the host's OOM killer killed the sandbox mid-run."""
    return Reply(killed_externally=True)


@dataclass
class _Script:
    reply: Reply
    during: Callable[[], None] | None


class FakeBackend(Backend):
    """A sandbox backend that answers from a script (see the module docstring)."""

    name = "fake"

    def __init__(self, answers: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        self.answers: dict[str, Any] = dict(answers or {})
        self.jobs: list[dict[str, Any]] = []
        self.starts = 0
        self._scripts: dict[str, _Script] = {}
        self._start_failures: list[str] = []
        self._hangs = 0

    # -- scripting
    def script(self, code: str, reply: Reply | None = None, *, during: Callable[[], None] | None = None, **probes: ProbeReply) -> None:
        """Answer every job whose solution is ``code``: with ``reply``, or with these probes' replies.

        ``during`` runs while such a job "runs" (after the job is recorded,
        before the answer is returned): a slow grading, a race with another
        worker, an exception from deep inside the platform.
        """
        if reply is not None and probes:
            raise TypeError("give a whole reply or probe replies, not both")
        self._scripts[code] = _Script(reply if reply is not None else Reply(probes=probes), during)

    def fail_starts(self, count: int, message: str = "the sandbox did not become ready: no output") -> None:
        """The next ``count`` sandboxes fail to start (SandboxStartError: the grader's PlatformError)."""
        self._start_failures.extend([message] * count)

    def hang_starts(self, count: int) -> None:
        """The next ``count`` sandboxes start but never say ready (SandboxNotReady, which the grader retries once)."""
        self._hangs += count

    def runs_of(self, code: str) -> list[dict[str, Any]]:
        """The jobs that ran ``code``, in order."""
        return [job for job in self.jobs if job["sources"]["solution"] == code]

    # -- the Backend interface
    def start(self, profile: str, limits: SandboxLimits) -> Sandbox:
        self.starts += 1
        if self._start_failures:
            raise SandboxStartError(self._start_failures.pop(0))
        hangs = self._hangs > 0
        self._hangs -= hangs
        return FakeSandbox(self, profile, limits, hangs=hangs)

    def answer(self, job: dict[str, Any]) -> tuple[Reply, Callable[[], None] | None]:
        script = self._scripts.get(job["sources"]["solution"])
        return (script.reply, script.during) if script is not None else (Reply(), None)


class FakeSandbox(Sandbox):
    """One job's worth of scripted runner output."""

    def __init__(self, backend: FakeBackend, profile: str, limits: SandboxLimits, *, hangs: bool = False) -> None:
        self.backend = backend
        self.profile = profile
        self.limits = limits
        self.hangs = hangs
        self._alive = True

    def wait_ready(self) -> dict[str, Any]:
        if self.hangs:
            self.destroy()
            raise SandboxNotReady(f"the sandbox did not become ready in {self.limits.startup_seconds:g} s: no output")
        return {"type": "ready", "profile": self.profile, "pid": 2}

    def alive(self) -> bool:
        return self._alive

    def destroy(self) -> None:
        self._alive = False

    def run(self, job: dict[str, Any], on_frame: FrameWatcher | None = None, stop: threading.Event | None = None) -> RunOutcome:
        try:
            self.backend.jobs.append(job)
            reply, during = self.backend.answer(job)
            if during is not None:
                during()
            if stop is not None and stop.is_set():
                return RunOutcome(stream=b"", exit_code=-9, run_ms=5, cancelled=True)  # as a real sandbox killed on a Cancel
            outcome = _outcome(job, reply, self.backend.answers)
            if on_frame is not None:
                _replay(outcome.stream, on_frame)
            return outcome
        finally:
            self.destroy()


def _replay(stream: bytes, on_frame: FrameWatcher) -> None:
    """Show a watcher the frames after ``ready``, as a real sandbox does while its job runs (all at once here)."""
    try:
        for i, (header, blob) in enumerate(read_frames(io.BytesIO(stream), len(stream) + 1)):
            if i:
                on_frame(header, blob)
    except WireError:
        pass  # a stream cut short: the watcher saw what came whole


def _outcome(job: dict[str, Any], reply: Reply, answers: Mapping[str, Any]) -> RunOutcome:
    out = io.BytesIO()
    write_frame(out, {"type": "ready", "profile": "fake", "pid": 2})
    if reply.syntax_error is not None:
        write_frame(out, {"type": "syntax_error", **reply.syntax_error})
        write_frame(out, {"type": "done"})
        return RunOutcome(stream=out.getvalue(), exit_code=0, run_ms=5)
    names = [str(p["name"]) for p in job["probes_list"]]
    for i, name in enumerate(names):
        if reply.runner_dies_after is not None and i >= reply.runner_dies_after:
            return RunOutcome(stream=out.getvalue(), exit_code=-9, run_ms=5, killed_externally=reply.killed_externally)
        probe = reply.probes.get(name) or ok(answers.get(name))
        _write_probe(out, name, probe, job)
    if reply.killed_externally:
        return RunOutcome(stream=out.getvalue(), exit_code=-9, run_ms=5, killed_externally=True)
    write_frame(out, {"type": "done"})
    return RunOutcome(stream=out.getvalue(), exit_code=0, run_ms=5)


def _write_probe(out: io.BytesIO, name: str, probe: ProbeReply, job: dict[str, Any]) -> None:
    """One probe's frames, shaped as the runner's ``_report_probe`` writes them."""
    header: dict[str, Any] = {
        "type": "probe", "name": name, "duration_ms": probe.duration_ms,
        "stdout": probe.stdout, "output_bytes": len(probe.stdout.encode()),
    }  # fmt: skip
    blobs: list[bytes] = []
    if probe.status == "ok":
        tree = encode_observation(probe.value, blobs)
        header.update(status="ok", tree=tree, arrays=len(blobs))
    elif probe.status == "error":
        header.update(status="error", exc_type=probe.exc_type, message=probe.message, traceback=_traceback(probe, job))
    else:
        header.update(status=probe.status, message=probe.message)
    write_frame(out, header)
    for i, blob in enumerate(blobs):
        write_frame(out, {"type": "array", "probe": name, "index": i}, blob)


def _traceback(probe: ProbeReply, job: dict[str, Any]) -> str:
    """The runner's visible traceback: the candidate's own frame (with its source line), then the exception."""
    lines = str(job["sources"]["solution"]).splitlines()
    source = lines[probe.line - 1].strip() if 0 < probe.line <= len(lines) else ""
    frame = f'  File "solution.py", line {probe.line}, in {probe.function}\n' + (f"    {source}\n" if source else "")
    return f"{frame}{probe.exc_type}: {probe.message}\n" if probe.message else f"{frame}{probe.exc_type}\n"
