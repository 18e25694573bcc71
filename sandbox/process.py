"""A sandbox that is one host process tree, its runner speaking on stdio: the base of bwrap and local.

Place in the flow: ``bwrap.py`` and ``local.py`` give the command line, the
environment and what their kind of sandbox adds (a cgroup, a private /tmp);
this module launches the command in a new session, pumps its stdout into a
:class:`~sandbox.stream.StreamBuffer` and keeps its stderr in a file, kills
the whole process group, and removes the host scratch folder
(``scratch.py``) when the sandbox is destroyed. The conversation with the
runner itself is ``session.py``'s.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from typing import IO

from sandbox.backend import SandboxLimits, SandboxStartError
from sandbox.owners import PROC, stat_fields
from sandbox.scratch import make_host_dir
from sandbox.session import STDERR_TAIL_BYTES, RunnerSandbox
from sandbox.stream import StreamBuffer

log = logging.getLogger(__name__)


def pump_fd(fd: int, stream: StreamBuffer) -> threading.Thread:
    """Read ``fd`` into ``stream`` on a daemon thread until EOF or overflow."""

    def pump() -> None:
        try:
            while True:
                try:
                    chunk = os.read(fd, 1 << 16)
                except OSError:
                    break
                if not chunk or not stream.add(chunk):
                    break
        finally:
            stream.close()

    thread = threading.Thread(target=pump, daemon=True)
    thread.start()
    return thread


class ProcessSandbox(RunnerSandbox):
    """A sandbox that is one host process tree with a runner speaking on stdio.

    Subclasses give the command line and its environment; this class owns
    the process: the scratch folder on the host, the launch, the kill, the
    stderr tail and the cleanup.
    """

    # Whether a signal death of the launched process can only come from outside:
    # true where the candidate's code cannot see that process (bwrap's outer
    # process lives outside the sandbox's pid namespace); false for the local
    # backend, whose runner the candidate's code can kill itself.
    outside_kill_detectable: bool = False

    def __init__(self, profile: str, limits: SandboxLimits) -> None:
        super().__init__(profile, limits)
        # Host-side scratch of this sandbox (bwrap's /etc files, the local backend's tmp).
        self.host_dir = make_host_dir()
        self._destroyed = False
        self.proc: subprocess.Popen[bytes] | None = None
        self._stderr_file: IO[bytes] | None = None

    # -- hooks for subclasses
    def command(self) -> list[str]:
        raise NotImplementedError

    def environment(self) -> dict[str, str] | None:
        return None

    def release_resources(self) -> None:
        """Backend-specific cleanup after the process tree is gone."""

    def inherited_fds(self) -> tuple[int, ...]:
        """File descriptors the launched process inherits (``command`` names them), handed over: launch() closes them."""
        return ()

    # -- lifecycle
    def launch(self) -> None:
        self._stderr_file = tempfile.TemporaryFile()
        argv, fds = self.command(), self.inherited_fds()
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr_file,
                env=self.environment(),
                start_new_session=True,
                close_fds=True,
                pass_fds=fds,
            )
        except OSError as exc:
            self.destroy()
            raise SandboxStartError(f"could not start the sandbox: {exc}") from exc
        finally:
            for fd in fds:
                os.close(fd)
        assert self.proc.stdout is not None
        self.stream = StreamBuffer(self.limits.stream_bytes, self.kill)
        self.pump = pump_fd(self.proc.stdout.fileno(), self.stream)
        log.info("sandbox started", extra={"event": "sandbox.started", "profile": self.profile, **self.log_fields()})

    def log_fields(self) -> dict[str, int | None]:
        return {"sandbox_pid": self.proc.pid if self.proc else None}

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None and not self._destroyed and not self.stream.eof.is_set()

    def send_job(self, line: bytes, *, more: bool = False) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(line)
        if more:
            self.proc.stdin.flush()
        else:
            self.proc.stdin.close()

    def wait_stopped(self) -> int | None:
        assert self.proc is not None
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        return self.proc.returncode

    def killed_from_outside(self, exit_code: int | None) -> bool:
        return self.outside_kill_detectable and exit_code is not None and exit_code < 0

    def stderr_text(self) -> str:
        if self._stderr_file is None:
            return ""
        try:
            self._stderr_file.seek(0, os.SEEK_END)
            size = self._stderr_file.tell()
            self._stderr_file.seek(max(0, size - STDERR_TAIL_BYTES))
            return self._stderr_file.read().decode("utf-8", errors="replace")
        except (OSError, ValueError):  # closed by destroy
            return ""

    def process_snapshot(self) -> str:
        if self.proc is None:
            return ""
        return describe_session(self.proc.pid)

    def kill_all(self) -> None:
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)

    def destroy(self) -> None:
        if self._destroyed:
            return
        self._destroyed = True
        if self.proc is not None:
            self.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=10)
            for stream in (self.proc.stdin, self.proc.stdout):
                with contextlib.suppress(OSError):
                    if stream:
                        stream.close()
        self.release_resources()
        shutil.rmtree(self.host_dir, ignore_errors=True)
        if self._stderr_file is not None:
            self._stderr_file.close()
        log.info("sandbox destroyed", extra={"event": "sandbox.destroyed", "profile": self.profile, **self.log_fields()})


def describe_session(sid: int) -> str:
    """``pid state wchan command`` for every process of session ``sid`` (a launched sandbox is one session)."""
    lines = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        fields = stat_fields(int(entry.name))
        try:
            if not fields or int(fields[3]) != sid:  # fields[0] is field 3 (state), so the session id (field 6) is fields[3]
                continue
            wchan = (entry / "wchan").read_text().strip() or "-"
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except (OSError, ValueError, IndexError):
            continue
        lines.append(f"{entry.name} {fields[0]} {wchan} {command[:160]}")
    return "\n".join(sorted(lines, key=lambda line: int(line.split()[0])))
