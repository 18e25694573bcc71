"""The in-sandbox runner: import the profile, wait for a job, run its probes.

Place in the flow: a sandbox backend starts ``python runner.py PROFILE`` in a
fresh sandbox; the runner pre-imports the profile's heavy modules, writes a
``ready`` frame, then reads a job (one JSON line on stdin), runs
each probe in a child process forked from itself (what the child does is
``child.py``; this file is the supervisor), and streams frames (see
``wire.py``) on its stdout: one ``probe`` frame per probe (plus ``array``
frames, the observation encoded by ``codec.py``), or one ``syntax_error``
frame, then ``done``. A job marked ``another_follows`` (only the trusted
side sets it, for a series of trusted code: see ``Sandbox.run_series``) is
followed by the next job line, run in a folder of its own.

Probes side by side: when the job names more than one leased core and
``probes_at_once`` (the trusted side leases spare cores only when no other
job holds them: ``RunnerSandbox._lease``), the first probe runs alone and
the others run that many at a time, each child pinned to a core of its own,
their frames written as each one ends. The grade is the one they get one at
a time: a probe that ran beside another and ended by the memory limit or a
crash runs again alone (``DOUBTFUL_BESIDE_OTHERS``); a process that escaped
its probe's process group sends the rest one at a time (``_run_children``).

Why a child per probe: the candidate's code (and the package's given
modules, ``given_modules.py``) is imported afresh in every child, so a probe that crashes, hangs, exits or changes global state fails
alone and cannot leak into the next probe; Run and Submit never disagree
because of leftovers. The parent never imports the candidate's code and never
runs a torch/tensorflow op, so forking stays safe.

Why the children cannot forge the stream: they never hold the parent's
stdout (fd 1 is replaced and every other fd closed), the parent is made
non-dumpable so /proc/<parent>/fd and ptrace are closed to them, and the
parent writes a child's observation under the probe name *it* chose. A child
can only lie about its own observation, which needs the right answer.

Nothing here is trusted by the worker: every frame is validated outside.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import json
import os
import selectors
import shutil
import signal
import sys
import time
import warnings
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import child  # noqa: E402  (after the path fix: this file runs as a script)
import host_load  # noqa: E402
import torch_headers  # noqa: E402
import wire  # noqa: E402
from profiles import PRELOADS, PROFILES  # noqa: E402

PR_SET_DUMPABLE = 4
# A job carries its sources; the largest is a sandboxed-checks job
# (grader/sandboxed_checks.py), which carries two observations of up to 32 MiB, base64-encoded.
MAX_JOB_BYTES = 96 * 1024 * 1024
KEEP_OUTPUT_BYTES = 8 * 1024
# A probe that ran beside another and ended like this may have ended so
# because of the other (the memory limit is the sandbox's, shared; a kill by
# it, or a MemoryError or abort it caused, lands on whichever process asked
# for the page): it runs again alone, and that run is its result.
DOUBTFUL_BESIDE_OTHERS = frozenset({"memory", "killed", "crashed"})
# A probe whose cores other processes took while it ran gets that time back at its deadline (host_load.py), until
# its wall clock reaches LOAD_STRETCH times its limit. Given back only in steps of at least LOAD_STEP of the limit,
# so the /proc reads happen a few times per probe at most. A probe stopped by that backstop before it had its limit
# of its own time (the host left it less than a fifth of its cores) is reported "overloaded": the platform's
# failure, graded again, never a time limit.
LOAD_STRETCH = host_load.LOAD_STRETCH
LOAD_STEP = host_load.LOAD_STEP
# Once a probe has run out of its time, the probes after it share one more of that probe's limit (issue 29): code
# that never ends costs about two probe limits instead of every probe's, and code slow on one input still gets its
# other probes run. A probe not started before that time is spent, or cut short by its end, is "stopped".
MIN_STOPPED_START = 0.05


def _make_undumpable() -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass


# Set from the job: only a backend that gives the sandbox its own pid
# namespace may sweep /proc (elsewhere it would see the host's processes).
SWEEP_STRAYS = False


def _kill_strays() -> None:
    """Kill every process in the sandbox except init (pid 1) and this runner.

    Probes' children may double-fork or setsid to outlive their probe; in a
    pid namespace they are all visible in /proc, so nothing survives into the
    next probe.
    """
    if not SWEEP_STRAYS:
        return
    for _ in range(3):
        found = False
        for pid in _other_processes():
            try:
                os.kill(pid, signal.SIGKILL)
                found = True
            except (ProcessLookupError, PermissionError):
                pass
        if not found:
            return
        time.sleep(0.01)


def _other_processes() -> list[int]:
    """Every process /proc shows except init (pid 1), this runner and its parent."""
    mine = {1, os.getpid(), os.getppid()}
    return [int(entry) for entry in os.listdir("/proc") if entry.isdigit() and int(entry) not in mine]


# ---------------------------------------------------------------- parent side


class ChildRun:
    """What the parent saw of one child: its result bytes, output and end."""

    def __init__(self) -> None:
        self.result = bytearray()
        self.output = bytearray()
        self.output_total = 0
        self.status: str | None = None  # set when the parent ended the child itself
        self.wait_status = 0
        self.duration = 0.0
        self.ooms_before = 0  # the sandbox's OOM kills when the child started (_oom_kills)
        self.capped = False  # given less than its own limit: the time the probes after a time-out share was ending
        # What other processes took of the child's cores while it ran, off its own CPU time: reported, so that the
        # grader can tell a run whose wall clock the host's load used up from a slow solution (grader/execute.py).
        self.host_seconds = 0.0


class Child:
    """One forked child the parent watches: its two pipes, its exit (a pidfd where there is one) and its deadline.

    ``cpu``, when given, pins the child to that one core (probes side by
    side, each on a core of the job's lease); otherwise it inherits the
    parent's pin.
    """

    def __init__(
        self, target: Any, limits: dict[str, Any], timeout: float, workdir: str, sel: selectors.BaseSelector, cpu: int | None = None
    ) -> None:
        self.run = ChildRun()
        self.run.ooms_before = _oom_kills()
        self.sel = sel
        r_res, w_res = os.pipe()
        r_out, w_out = os.pipe()
        self.started = time.monotonic()
        pid = os.fork()
        if pid == 0:  # child
            code = 0
            try:
                os.close(r_res)
                os.close(r_out)
                if cpu is not None:
                    with contextlib.suppress(OSError, ValueError):
                        os.sched_setaffinity(0, {cpu})
                child.setup(w_res, w_out, limits, workdir)
                target(w_res)
            except BaseException:  # noqa: BLE001 - the child must never return into the parent's code
                code = 70
            finally:
                with contextlib.suppress(BaseException):
                    sys.stdout.flush()
                os._exit(code)
        self.pid = pid
        # The child makes itself a group leader too; doing it here as well closes the
        # moment between fork and its setpgid, when a sweep would take it for a stray.
        with contextlib.suppress(OSError):
            os.setpgid(pid, pid)
        os.close(w_res)
        os.close(w_out)
        self.result_cap = int(limits["observation_bytes"])
        self.output_cap = int(limits["output_bytes"])
        self.fds = {r_res, r_out}
        sel.register(r_res, selectors.EVENT_READ, (self, "result"))
        sel.register(r_out, selectors.EVENT_READ, (self, "output"))
        # A pidfd wakes the loop the moment the child exits; without one (old
        # kernels, some sandboxes' kernels) poll waitpid often instead.
        self.pidfd = -1
        with contextlib.suppress(AttributeError, OSError):
            self.pidfd = os.pidfd_open(pid)
            sel.register(self.pidfd, selectors.EVENT_READ, (self, "exit"))
        self.exited = False
        self.timeout = timeout
        self.deadline = self.started + timeout
        self.company = False  # another child ran at some moment of this one's run
        self.cores = host_load.CoreShare(pid, {cpu} if cpu is not None else _affinity())

    @property
    def poll_seconds(self) -> float:
        return 0.5 if self.pidfd >= 0 else 0.005

    def check_exit(self) -> bool:
        """Reap the child if it has exited; True the first time it is found gone."""
        if self.exited:
            return False
        done, status, usage = os.wait4(self.pid, os.WNOHANG)
        if not done:
            return False
        self._reaped(status, usage)
        self._close_pidfd()
        # Its own processes have two seconds more to let go of the pipes.
        self.deadline = min(self.deadline, time.monotonic() + 2.0)
        return True

    def read(self, fd: int, kind: str) -> None:
        chunk = os.read(fd, 65536)
        if not chunk:
            self.sel.unregister(fd)
            os.close(fd)
            self.fds.discard(fd)
            return
        if kind == "result":
            self.run.result += chunk
            if len(self.run.result) > self.result_cap:
                self.run.status = "observation_limit"
        else:
            self.run.output_total += len(chunk)
            if len(self.run.output) < KEEP_OUTPUT_BYTES:
                self.run.output += chunk[: KEEP_OUTPUT_BYTES - len(self.run.output)]
            if self.run.output_total > self.output_cap:
                self.run.status = "output_limit"

    def finished(self, now: float) -> bool:
        if self.run.status is not None or (self.exited and not self.fds):
            return True
        if now >= self.deadline:
            if not self.exited:
                if self._give_back_the_hosts_share(now):
                    return False
                # Its own time is the wall clock less what others took: a probe that got its limit of it ran out of
                # its own time; one stopped by the backstop before it did was starved by the host (not a verdict).
                # Unless the sandbox's own processes burned the limit's CPU on its cores meanwhile: a fork bomb or a
                # pool of busy threads waits mostly for itself, and on a loaded host "others" then looks large, but
                # what it was given, it spent: that is the candidate's time, never a load fault retried forever.
                own = (now - self.started) - self.cores.taken_by_others()
                spent = max(own, self.cores.sandbox_used())
                self.run.status = "timeout" if spent >= (1 - 2 * LOAD_STEP) * self.timeout else "overloaded"
            return True
        return False

    def _give_back_the_hosts_share(self, now: float) -> bool:
        """At the deadline: move it by the time other processes took on this child's cores since it started, if any.

        The limit is the candidate's time, not the host's: a probe slowed by
        other sandboxes or jobs on its cores ends when its own time is up,
        with a wall-clock backstop at LOAD_STRETCH times the limit.
        """
        backstop = self.started + LOAD_STRETCH * self.timeout
        if self.deadline >= backstop:
            return False
        owed = self.cores.not_yet_given_back()
        if owed <= 0 or owed < LOAD_STEP * self.timeout:
            return False
        self.deadline = min(backstop, max(now, self.deadline) + owed)
        return True

    def close(self) -> None:
        """Stop watching; kill and reap the child if it is still running."""
        for fd in list(self.fds):
            self.sel.unregister(fd)
            os.close(fd)
        self.fds.clear()
        self._close_pidfd()
        if not self.exited:
            _end_group(self.pid)
            os.kill(self.pid, signal.SIGKILL) if _alive(self.pid) else None
            _, status, usage = os.wait4(self.pid, 0)
            self._reaped(status, usage)

    def _reaped(self, status: int, usage: Any) -> None:
        """The child's end: its status, its time, and what the host took of its cores meanwhile.

        The host's share is the cores' busy time that was not the child's own
        CPU time (its rusage, its reaped descendants included), bounded by the
        time the child spent off a CPU: a process pinned beside it on another
        core of its lease does not slow a single-threaded probe.
        """
        self.exited = True
        self.run.wait_status = status
        self.run.duration = time.monotonic() - self.started
        own = usage.ru_utime + usage.ru_stime
        busy = host_load.busy_seconds(self.cores.cores) - self.cores.busy_at_start
        self.run.host_seconds = max(0.0, min(busy - own, self.run.duration - own))

    def _close_pidfd(self) -> None:
        if self.pidfd >= 0:
            self.sel.unregister(self.pidfd)
            os.close(self.pidfd)
            self.pidfd = -1


def _end_group(pid: int) -> None:
    """Kill what is left of a finished child's process group (its own children), not its siblings'."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _stray_outside(groups: set[int]) -> bool:
    """Whether a process runs in the sandbox outside the running children's process groups.

    Only where the sandbox has its own pid namespace (SWEEP_STRAYS). A probe's
    process that left its group (setsid, setpgid) cannot be told from its
    siblings' by anything it cannot change; the caller then stops running
    probes side by side.
    """
    if not SWEEP_STRAYS:
        return False
    for pid in _other_processes():
        try:
            if os.getpgid(pid) not in groups:
                return True
        except (ProcessLookupError, PermissionError):
            continue
    return False


class ChildTask:
    """One child to run: what it runs, its limits, its wall time and folder; ``key`` names it to the caller."""

    def __init__(self, key: Any, target: Any, limits: dict[str, Any], timeout: float, workdir: str) -> None:
        self.key, self.target, self.limits, self.timeout, self.workdir = key, target, limits, timeout, workdir


def _run_children(tasks: list[ChildTask], cpus: list[int], on_done: Any, admit: Any = None) -> None:
    """Run ``tasks`` in forked children, as many at once as ``cpus`` has cores (one at a time with none or one).

    Each child side by side runs on a core of its own; ``on_done(task,
    run, company)`` is called as each one ends, in the order they end, with
    ``company`` saying whether another child ran beside it. One at a time,
    every process left in the sandbox is killed after each child, as it
    always was; side by side, a child's own process group is, and the
    sandbox is swept whenever no child runs. A process that escaped its
    group ends the side-by-side run: the children running finish, the
    sandbox is swept, and the rest run one at a time. ``admit(task)``, when
    given, is asked as each task is about to start: the time to give it (at
    most its own), or None not to start it (``on_done`` then gets a run whose
    status is "stopped").
    """
    pending = list(tasks)
    running: dict[Child, tuple[ChildTask, int]] = {}
    side_by_side = len(cpus) > 1
    cores: list[int | None] = list(cpus) if side_by_side else [None]
    free = list(range(len(cores)))
    sel = selectors.DefaultSelector()
    try:
        while pending or running:
            while pending and free and (side_by_side or not running):
                task = pending.pop(0)
                timeout = task.timeout if admit is None else admit(task)
                if timeout is None:
                    stopped = ChildRun()
                    stopped.status = "stopped"
                    on_done(task, stopped, False)
                    continue
                slot = free.pop(0)
                child = Child(task.target, task.limits, timeout, task.workdir, sel, cores[slot] if side_by_side else None)
                child.run.capped = timeout < task.timeout
                child.company = bool(running)
                for other in running:
                    other.company = True
                running[child] = (task, slot)
            for child in running:
                if child.check_exit():
                    if len(running) > 1:
                        _end_group(child.pid)  # so no grandchild keeps its pipes open; its siblings run on
                    else:
                        _kill_strays()  # so no grandchild keeps our pipes open
            now = time.monotonic()
            ended = [c for c in running if c.finished(now)]
            for child in ended:
                task, slot = running.pop(child)
                child.close()
                free.append(slot)
                if running:
                    _end_group(child.pid)
                    if side_by_side and _stray_outside({c.pid for c in running}):
                        side_by_side = False  # the running ones finish, the sandbox is swept, the rest go one at a time
                else:
                    _kill_strays()
                on_done(task, child.run, child.company)
            if ended:
                continue
            remaining = min(c.deadline for c in running) - time.monotonic()
            poll = min(c.poll_seconds for c in running)
            for key, _ in sel.select(timeout=max(0.0, min(remaining, poll))):
                child, kind = key.data
                if kind != "exit" and child in running and key.fd in child.fds:
                    child.read(key.fd, kind)
    finally:
        for child in running:
            child.close()
        sel.close()


def _run_child(target: Any, limits: dict[str, Any], timeout: float, workdir: str) -> ChildRun:
    """Run ``target`` in one forked child and return what the parent saw of it."""
    runs: list[ChildRun] = []
    _run_children([ChildTask(None, target, limits, timeout, workdir)], [], lambda _task, run, _company: runs.append(run))
    return runs[0]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _affinity() -> set[int]:
    """The cores this process may run on (the job's lease), or none where the kernel does not say."""
    try:
        return set(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return set()


def _oom_kills() -> int:
    """OOM kills counted by this sandbox's memory cgroup, where it is visible (docker); else 0."""
    for path, key in (("/sys/fs/cgroup/memory.events", "oom_kill"), ("/sys/fs/cgroup/memory/memory.oom_control", "oom_kill")):
        try:
            with open(path) as fh:
                for line in fh:
                    name, _, value = line.partition(" ")
                    if name == key:
                        return int(value)
        except (OSError, ValueError):
            continue
    return 0


# What a signal from native code usually means, said to the candidate: a
# compiled kernel that indexes past its buffers shows up as one of these, and
# "killed by signal SIGABRT" alone does not point there.
_NATIVE_CRASHES: dict[int, str] = {
    signal.SIGSEGV: "a crash in native code, which read or wrote memory it does not own "
    "(a compiled kernel indexing past the end of a buffer, a pointer to freed memory)",
    signal.SIGABRT: "native code aborted: a library's internal check failed, or the C heap was found corrupted, "
    "which usually follows a write past the end of a buffer",
    signal.SIGBUS: "a crash in native code on a misaligned or unmapped memory access",
    signal.SIGFPE: "an arithmetic fault in native code (an integer division by zero)",
    signal.SIGILL: "native code ran an instruction this CPU does not have (code compiled for another CPU?)",
}


def _describe_exit(status: int) -> tuple[str, str]:
    """(runner status, message) for a child that gave no result."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXCPU:
            return "timeout", "CPU time limit exceeded"
        if sig == signal.SIGKILL:
            return "killed", "killed by SIGKILL"
        if sig == signal.SIGXFSZ:
            return "crashed", "file size limit exceeded"
        try:
            name = signal.Signals(sig).name
        except ValueError:  # a real-time signal has no name; the runner must not die on it
            name = str(sig)
        why = _NATIVE_CRASHES.get(sig)
        return "crashed", f"killed by {name}: {why}" if why else f"killed by signal {name}"
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
    return "no_result", f"the process exited with code {code} before returning a result (did the code call exit()?)"


def _parse_child_frames(data: bytes | bytearray, budget: int) -> list[tuple[dict[str, Any], bytes | None]]:
    return list(wire.read_frames(io.BytesIO(bytes(data)), budget))


def _report_probe(out: io.BufferedWriter, name: str, header: dict[str, Any], blobs: list[bytes]) -> None:
    """Write a probe's frame and its arrays (``_probe_frames``) to the stream."""
    wire.write_frame(out, header)
    for i, blob in enumerate(blobs):
        wire.write_frame(out, {"type": "array", "probe": name, "index": i}, blob)


STOPPED_MESSAGE = "not run: an earlier probe ran out of its time, and the time the probes after it share was spent"
CUT_SHORT_MESSAGE = "stopped: an earlier probe ran out of its time, and the time the probes after it share ran out while this one ran"


def _probe_frames(name: str, run: ChildRun, limits: dict[str, Any]) -> tuple[dict[str, Any], list[bytes]]:
    """The ``probe`` frame for what the parent saw of a probe's child, and its arrays."""
    header: dict[str, Any] = {
        "type": "probe",
        "name": name,
        "duration_ms": int(run.duration * 1000),
        "host_ms": int(run.host_seconds * 1000),
        "stdout": run.output.decode("utf-8", errors="replace"),
        "output_bytes": run.output_total,
    }
    blobs: list[bytes] = []
    if run.status == "stopped" or (run.status == "timeout" and run.capped):
        header.update(status="stopped", message=STOPPED_MESSAGE if run.status == "stopped" else CUT_SHORT_MESSAGE)
    elif run.status == "timeout":
        header.update(status="timeout", message="time limit exceeded")
    elif run.status == "overloaded":
        header.update(status="overloaded", message="the host's other work took most of this probe's time: not a verdict, graded again")
    elif run.status == "memory":
        header.update(status="memory", message="killed by the memory limit")
    elif run.status == "output_limit":
        header.update(status="output_limit", message=f"printed more than {limits['output_bytes']} bytes")
    elif run.status == "observation_limit":
        header.update(status="observation_limit", message=f"the result is larger than {limits['observation_bytes']} bytes")
    else:
        frames: list[tuple[dict[str, Any], bytes | None]] = []
        try:
            frames = _parse_child_frames(run.result, int(limits["observation_bytes"]) + 1024)
        except wire.WireError as exc:
            header.update(status="crashed", message=f"the probe's result was cut off ({exc})")
        if frames:
            first, _ = frames[0]
            kind = first.get("type")
            if kind == "observation":
                arrays = [blob for h, blob in frames[1:] if h.get("type") == "array" and blob is not None]
                if len(arrays) != first.get("arrays"):
                    header.update(status="crashed", message="the probe's result was incomplete")
                else:
                    header.update(status="ok", tree=first.get("tree"), arrays=len(arrays))
                    blobs = arrays
            elif kind == "exception":
                header.update(
                    status="error",
                    exc_type=str(first.get("exc_type"))[:200],
                    message=str(first.get("message"))[:2000],
                    traceback=str(first.get("traceback"))[:4000],
                )
            elif kind == "too_large":
                header.update(status="observation_limit", message=f"the result is larger than {limits['observation_bytes']} bytes")
            elif kind == "memory":
                header.update(status="memory", message="MemoryError: the memory limit was reached")
            elif kind == "settings_changed":
                header.update(status="settings_changed", message=str(first.get("message"))[:2000])
            elif kind == "bad_observation":
                header.update(status="bad_observation", message=str(first.get("message"))[:2000])
            else:
                header.update(status="crashed", message="the probe's result was malformed")
        elif "status" not in header:
            status, message = _describe_exit(run.wait_status)
            header.update(status=status, message=message)
    return header, blobs


def _load_warm_caches(profile: str) -> None:
    """Copy the environment's warm TorchInductor cache into this sandbox's own; point g++ at the precompiled torch headers.

    The warm cache (sandbox/warm.py) is read-only and shared; the copy is
    private and writable, because inductor writes locks and new entries next
    to the ones it reads. It is small (the kernels of a few packages), and it
    is copied before the ready frame, off the grading path of a warm pool.
    """
    if "torch" not in PROFILES.get(profile, ()):
        return
    # The precompiled torch headers are read in place: nothing to copy, only g++ to point at them.
    torch_headers.enable()
    source, target = "/opt/warm/torchinductor", os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if not target or not os.path.isdir(source):
        return
    with contextlib.suppress(OSError):
        shutil.copytree(source, target, dirs_exist_ok=True)


def _write_given(sources: dict[str, str], folder: str) -> None:
    """Write the given modules as files for ``inspect`` and tracebacks; they are imported from the job's memory."""
    if not sources:
        return
    os.makedirs(folder, exist_ok=True)
    for name, source in sources.items():
        path = f"{folder}/{name}.py"
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(source)
        os.chmod(path, 0o444)


def _preload(names: Any) -> None:
    """Import the library modules the package's ``preload`` names, once in the parent, before any child forks.

    Names come from the trusted side (the package's challenge.toml, checked
    when it was loaded); only those in PRELOADS mean anything. In a series
    the modules stay imported for the next job, as the profile's do.
    """
    for name in names if isinstance(names, list) else []:
        for module in PRELOADS.get(name, ()) if isinstance(name, str) else ():
            __import__(module)


def _pin(cpus: Any) -> None:
    """Run on the cores the backend leased for this job (sandbox/cpus.py); the probes' children inherit them.

    Thread pools that a probe starts (TensorFlow's, IREE's, LLVM's) size
    themselves to these cores, not to the host's. Before any child is forked:
    only the calling thread is pinned, and children copy it.
    """
    if not isinstance(cpus, list) or not cpus:
        return
    with contextlib.suppress(OSError, ValueError, TypeError, OverflowError):  # a core outside our cpuset: run unpinned
        os.sched_setaffinity(0, {int(c) for c in cpus})


def main(argv: list[str]) -> int:
    profile = argv[1] if len(argv) > 1 else "python"
    _load_warm_caches(profile)
    # Our stream is a private copy of fd 1; fd 1 itself goes to stderr so that
    # anything a library prints while importing cannot corrupt the frames.
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    _make_undumpable()
    warnings.simplefilter("ignore")
    for module in PROFILES.get(profile, ("numpy",)):
        __import__(module)
    wire.write_frame(out, {"type": "ready", "profile": profile, "pid": os.getpid()})

    # One job, unless the trusted side says another follows (a series of
    # trusted code: a package's shipped solutions, mutants of its reference).
    # Each job has its own folder; the parent never runs a job's code, so
    # the next job forks its children from the same clean state.
    served = 0
    while True:
        line = sys.stdin.buffer.readline(MAX_JOB_BYTES)
        if not line:
            return int(wire.EXIT_NO_JOB)  # the trusted side went away before a job came
        job = json.loads(line)
        base = str(job["limits"].get("workdir", "/tmp/work"))
        workroot = base if served == 0 else f"{base}-{served}"
        _run_job(out, job, workroot)
        served += 1
        if not job.get("another_follows"):
            return 0
        # The finished job's files go: the next one starts in an empty folder of its own.
        shutil.rmtree(workroot, ignore_errors=True)


def _run_job(out: io.BufferedWriter, job: dict[str, Any], workroot: str) -> None:
    """Run one job's syntax check and probes, in folders under ``workroot``, streaming frames to ``out``; ends with ``done``."""
    global SWEEP_STRAYS
    SWEEP_STRAYS = bool(job.get("sweep_strays"))
    _pin(job.get("cpus"))
    limits = job["limits"]
    _preload(job.get("preload"))
    job_dir = f"{workroot}/job"
    os.makedirs(job_dir, exist_ok=True)
    for key, name in (("solution", "solution.py"), ("probes", "probes.py"), ("common", "probe_common.py")):
        if key not in job["sources"]:
            continue
        with open(f"{job_dir}/{name}", "w", encoding="utf-8") as fh:
            fh.write(job["sources"][key])
        os.chmod(f"{job_dir}/{name}", 0o444)
    job["solution"], job["probes"], job["common"] = (f"{job_dir}/{n}" for n in ("solution.py", "probes.py", "probe_common.py"))
    job["given_dir"] = f"{job_dir}/given"
    _write_given(job["sources"].get("given") or {}, job["given_dir"])

    check = _run_child(lambda fd: child.syntax_check(job, fd), limits, float(limits.get("syntax_seconds", 10)), f"{workroot}/syntax")
    frames = []
    try:
        frames = _parse_child_frames(check.result, 64 * 1024)
    except wire.WireError:
        pass
    if frames and frames[0][0].get("type") == "syntax_error":
        wire.write_frame(out, {**frames[0][0], "type": "syntax_error"})
        wire.write_frame(out, {"type": "done"})
        return
    if not frames or frames[0][0].get("type") != "ok":
        # The check only compiles the source (none of the candidate's code runs, and CPython bounds what compile()
        # folds), so a check that ended without a word was ended from outside: its time ran out on a loaded host, or
        # something killed it. That is the platform's failure, never the candidate's syntax error (issue 28).
        _, message = _describe_exit(check.wait_status)
        wire.write_frame(out, {"type": "fault", "message": f"the syntax check ended without a result ({message})"})
        wire.write_frame(out, {"type": "done"})
        return

    def task(i: int, probe: dict[str, Any], folder: str) -> ChildTask:
        timeout = float(probe["timeout"])
        probe_limits = {**limits, "cpu_seconds": max(1, int(timeout * 2 + 1))}
        name = probe["name"]
        return ChildTask((i, name), lambda fd: child.run_probe(job, name, fd), probe_limits, timeout, folder)

    again: list[int] = []
    # When the time the probes after a time-out share ends (MIN_STOPPED_START); None until a probe runs out of its own.
    shared_until: list[float] = []

    def admit(task: ChildTask) -> float | None:
        if not shared_until:
            return float(task.timeout)
        left = shared_until[0] - time.monotonic()
        return min(float(task.timeout), left) if left > MIN_STOPPED_START else None

    def done(task: ChildTask, run: ChildRun, company: bool) -> None:
        i, name = task.key
        if run.status is None and _oom_kills() > run.ooms_before:
            run.status = "memory"
        if run.status == "timeout" and not run.capped and not shared_until:
            shared_until.append(time.monotonic() + float(task.timeout))
        header, blobs = _probe_frames(name, run, limits)
        if company and header.get("status") in DOUBTFUL_BESIDE_OTHERS:
            again.append(i)  # decided alone, as if the probes had run one at a time
            return
        _report_probe(out, name, header, blobs)

    probes = job["probes_list"]
    leased = job.get("cpus")
    cores = [c for c in leased if isinstance(c, int)] if isinstance(leased, list) else []
    at_once = cores[: max(1, min(_int_or(job.get("probes_at_once"), 1), len(probes)))]
    tasks = [task(i, p, f"{workroot}/probe-{i}") for i, p in enumerate(probes)]
    # The first probe runs alone, the rest side by side: a package's first
    # probe is where shared work is done once (cpp-torch-library-op builds
    # its extension there, and its later probes, with shorter limits, load it).
    # Side by side, every probe has one core, as a job of one core gives it
    # (the first and any run again alone too: they inherit the parent's pin).
    # A thread pool sized to two cores could sum in another order.
    if len(at_once) > 1:
        _pin(at_once[:1])
    _run_children(tasks[:1], [], done, admit)
    _run_children(tasks[1:], at_once, done, admit)
    if again:
        _run_children([task(i, probes[i], f"{workroot}/probe-{i}-alone") for i in sorted(again)], [], done, admit)
    wire.write_frame(out, {"type": "done"})


def _int_or(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


if __name__ == "__main__":
    code = main(sys.argv)
    # Skip the interpreter's shutdown: tearing down torch or tensorflow takes
    # seconds, and the frames are already flushed. The sandbox is discarded.
    sys.stdout.flush()
    os._exit(code)
