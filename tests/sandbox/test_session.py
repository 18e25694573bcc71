"""sandbox.session: the conversation with the runner, on a scripted transport (no real sandbox).

What a backend only transports, RunnerSandbox decides: when a run ends, what
is a time limit, and which deaths are the platform's (a kill from outside)
rather than ours (the wall clock, the output cap) or the candidate's.
"""

from __future__ import annotations

import io
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from sandbox import cpus
from sandbox.backend import SandboxLimits, SandboxStartError
from sandbox.runner.wire import write_frame
from sandbox.session import RunnerSandbox
from sandbox.stream import StreamBuffer
from sandbox.teardown import finish_destroys


def frames(*headers: dict[str, Any]) -> bytes:
    out = io.BytesIO()
    for header in headers:
        write_frame(out, header)
    return out.getvalue()


READY = frames({"type": "ready", "profile": "python"})
DONE = frames({"type": "probe", "name": "p", "status": "ok"}, {"type": "done"})


class Scripted(RunnerSandbox):
    """A sandbox whose runner says what the test scripts: ``answer`` once the job arrives, then EOF or silence."""

    def __init__(self, answer: bytes, *, then: str = "eof", ready: bytes = READY, limits: SandboxLimits | None = None) -> None:
        super().__init__("python", limits or SandboxLimits(wall_seconds=60, memory_mb=256, stream_bytes=1 << 20))
        self.answer, self.then = answer, then
        self.stream = StreamBuffer(self.limits.stream_bytes, self.kill)
        self.pump = threading.Thread(target=lambda: None)
        self.pump.start()
        self.stream.add(ready)
        self.jobs: list[dict[str, Any]] = []
        self.kills = 0
        self.destroyed = threading.Event()
        self.exit_code: int | None = -9
        self.outside = False
        self.oom = False

    def send_job(self, line: bytes, *, more: bool = False) -> None:
        self.jobs.append(json.loads(line))
        self.stream.add(self.answer)
        if self.then == "eof":
            self.stream.close()

    def kill_all(self) -> None:
        self.kills += 1
        self.stream.close()  # a killed runner's stdout ends

    def wait_stopped(self) -> int | None:
        return self.exit_code

    def stderr_text(self) -> str:
        return "Traceback: the runner's last words"

    def oom_killed(self, done: bool) -> bool:
        return self.oom

    def killed_from_outside(self, exit_code: int | None) -> bool:
        return self.outside

    def job_limits(self) -> dict[str, Any]:
        return {"address_space_bytes": 1}

    def destroy(self) -> None:
        self.destroyed.set()

    def alive(self) -> bool:
        return not self.destroyed.is_set()


@pytest.fixture(autouse=True)
def private_leases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cpus, "LOCK_DIR", tmp_path / "leases")


def test_a_run_that_says_done_is_complete_and_destroyed_behind() -> None:
    sandbox = Scripted(DONE, then="silence")  # the runner's processes may linger: "done" is enough
    outcome = sandbox.run({"sources": {}, "limits": {"output_bytes": 10}})
    assert outcome.stream == READY + DONE
    assert (outcome.timed_out, outcome.killed_externally, outcome.stream_overflow) == (False, False, False)
    assert outcome.exit_code is None  # nobody waited for the sandbox to end
    (job,) = sandbox.jobs
    assert job["limits"] == {"output_bytes": 10, "address_space_bytes": 1}  # the backend's own limits are added
    assert job["sweep_strays"] is True and len(job["cpus"]) == 1
    assert finish_destroys(timeout=30) == 0 and sandbox.destroyed.is_set()


def test_a_runner_that_dies_is_the_candidates_doing_unless_the_backend_saw_a_kill_from_outside() -> None:
    died = Scripted(frames({"type": "probe", "name": "p", "status": "ok"}))
    outcome = died.run({"limits": {}})
    assert (outcome.timed_out, outcome.killed_externally, outcome.exit_code) == (False, False, -9)
    assert outcome.stderr_tail == "Traceback: the runner's last words"

    killed = Scripted(b"")
    killed.outside = True
    assert killed.run({"limits": {}}).killed_externally is True


def test_the_wall_clock_ends_a_silent_run_and_its_kill_is_ours() -> None:
    sandbox = Scripted(b"", then="silence", limits=SandboxLimits(wall_seconds=0.2, memory_mb=256))
    sandbox.outside = True  # even if the backend would call the death a kill from outside
    outcome = sandbox.run({"limits": {}})
    assert outcome.timed_out and sandbox.kills == 1
    assert not outcome.killed_externally


def test_a_stream_over_its_cap_is_killed_by_us() -> None:
    sandbox = Scripted(b"x" * 64, then="silence", limits=SandboxLimits(wall_seconds=60, memory_mb=256, stream_bytes=len(READY) + 10))
    sandbox.outside = True
    outcome = sandbox.run({"limits": {}})
    assert outcome.stream_overflow and sandbox.kills >= 1
    assert not outcome.timed_out and not outcome.killed_externally
    assert len(outcome.stream) == len(READY) + 10


def test_a_death_by_the_memory_limit_is_not_a_kill_from_outside() -> None:
    sandbox = Scripted(b"")
    sandbox.outside = sandbox.oom = True
    outcome = sandbox.run({"limits": {}})
    assert outcome.oom_killed and not outcome.killed_externally


def test_a_sandbox_that_never_says_ready_is_a_start_error_and_is_destroyed() -> None:
    sandbox = Scripted(DONE, ready=frames({"type": "probe"}))
    with pytest.raises(SandboxStartError, match="did not become ready: Traceback: the runner's last words"):
        sandbox.wait_ready()
    assert sandbox.destroyed.is_set()


class ScriptedSeries(Scripted):
    """A runner that answers each job of a series with the next scripted answer, silent after the last."""

    def __init__(self, answers: list[bytes], limits: SandboxLimits | None = None) -> None:
        super().__init__(b"", then="silence", limits=limits)
        self.answers = list(answers)
        self.closed_after: int | None = None

    def send_job(self, line: bytes, *, more: bool = False) -> None:
        self.jobs.append(json.loads(line))
        if not more:
            self.closed_after = len(self.jobs)
        if self.answers:
            self.stream.add(self.answers.pop(0))


def job_frames(name: str) -> bytes:
    return frames({"type": "probe", "name": name, "status": "ok"}, {"type": "done"})


def test_a_series_gives_each_job_the_ready_frame_and_its_own_frames() -> None:
    sandbox = ScriptedSeries([job_frames("first"), job_frames("second"), job_frames("third")])
    outcomes = sandbox.run_series([{"limits": {}, "n": 1}, {"limits": {}, "n": 2}, {"limits": {}, "n": 3}])
    assert [o.stream for o in outcomes] == [READY + job_frames("first"), READY + job_frames("second"), READY + job_frames("third")]
    # Only the trusted side's flag tells the runner to wait for more; the last line closes the input.
    assert [(j["n"], j["another_follows"]) for j in sandbox.jobs] == [(1, True), (2, True), (3, False)]
    assert sandbox.closed_after == 3
    assert all(not o.timed_out and o.exit_code is None for o in outcomes)
    assert finish_destroys(timeout=30) == 0 and sandbox.destroyed.is_set()


def test_a_job_that_never_says_done_ends_the_series_there() -> None:
    silent_second = frames({"type": "probe", "name": "second", "status": "ok"})  # no "done": the wall clock ends it
    sandbox = ScriptedSeries([job_frames("first"), silent_second], limits=SandboxLimits(wall_seconds=0.3, memory_mb=256))
    outcomes = sandbox.run_series([{"limits": {}}, {"limits": {}}, {"limits": {}}])
    assert len(outcomes) == 2 and len(sandbox.jobs) == 2  # the third job was never sent
    assert not outcomes[0].timed_out and outcomes[0].stream == READY + job_frames("first")
    assert outcomes[1].timed_out and outcomes[1].stream == READY + silent_second
    assert sandbox.kills == 1


def test_a_series_needs_a_job() -> None:
    with pytest.raises(ValueError, match="at least one job"):
        ScriptedSeries([]).run_series([])


class Paced(Scripted):
    """A runner that writes its first probe, then its second only once the watcher has seen the first."""

    def __init__(self, seen_first: threading.Event) -> None:
        super().__init__(b"", then="silence", limits=SandboxLimits(wall_seconds=30, memory_mb=256))
        self.seen_first = seen_first

    def send_job(self, line: bytes, *, more: bool = False) -> None:
        self.jobs.append(json.loads(line))
        self.stream.add(frames({"type": "probe", "name": "a", "status": "ok"}))

        def rest() -> None:
            if self.seen_first.wait(30):
                self.stream.add(frames({"type": "probe", "name": "b", "status": "ok"}, {"type": "done"}))

        threading.Thread(target=rest, daemon=True).start()


def test_a_watcher_sees_each_frame_while_the_job_still_runs() -> None:
    seen_first = threading.Event()
    watched: list[dict[str, Any]] = []

    def watch(header: dict[str, Any], blob: bytes | None) -> None:
        watched.append(header)
        seen_first.set()

    sandbox = Paced(seen_first)
    outcome = sandbox.run({"limits": {}}, on_frame=watch)
    # The runner wrote "b" and "done" only after the watcher had seen "a": without a live watcher the run would time out.
    assert not outcome.timed_out
    assert [(h["type"], h.get("name")) for h in watched] == [("probe", "a"), ("probe", "b"), ("done", None)]
    a, b = {"type": "probe", "name": "a", "status": "ok"}, {"type": "probe", "name": "b", "status": "ok"}
    assert outcome.stream == READY + frames(a, b, {"type": "done"})


def test_a_watcher_that_raises_is_dropped_and_the_run_goes_on() -> None:
    calls: list[str] = []

    def broken(header: dict[str, Any], blob: bytes | None) -> None:
        calls.append(str(header.get("type")))
        raise RuntimeError("the database is down")

    answer = frames({"type": "probe", "name": "p", "status": "ok"}, {"type": "probe", "name": "q", "status": "ok"}, {"type": "done"})
    sandbox = Scripted(answer, then="silence")
    outcome = sandbox.run({"limits": {}}, on_frame=broken)
    assert calls == ["probe"]
    assert not outcome.timed_out and outcome.exit_code is None
