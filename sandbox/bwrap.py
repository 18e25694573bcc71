"""The bubblewrap backend: a sandbox from Linux namespaces, for hosts without Docker.

Each sandbox is a ``bwrap`` process tree with new pid, network, ipc and uts
namespaces (no network at all: not even the host's loopback services), a
read-only view of the system (``/usr``) and of the Python environment, the
runner's folder at ``/runner`` and a size-capped private ``/tmp``, where the
runner writes the job's sources. Nothing
else of the host is visible: not the repository, the challenges, the
database, or the worker's environment (``--clearenv``).

When the worker runs as root, the runner is started through ``setpriv`` as
uid/gid 65534 with no capabilities, no_new_privs and an empty bounding set,
so file permissions protect the host even inside the namespaces; a cgroup
(see ``cgroups.py``) caps real memory, the number of processes and the CPU
share. A rootless worker uses a user namespace instead, and rlimits where
cgroups cannot be created.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
from pathlib import Path

from sandbox import cgroups, seccomp
from sandbox.backend import Backend, SandboxLimits, SandboxStartError
from sandbox.environment import RUNNER_DIR, SANDBOX_UID, sandbox_env
from sandbox.process import ProcessSandbox
from sandbox.runner.profiles import ADDRESS_SPACE_OVERHEAD_MB
from sandbox.scratch import sweep_orphan_host_dirs
from sandbox.warm import SANDBOX_WARM_DIR, ready_host_cache

log = logging.getLogger(__name__)

_ETC_FILES = {
    "passwd": f"root:x:0:0::/root:/bin/false\nsandbox:x:{SANDBOX_UID}:{SANDBOX_UID}::/tmp:/bin/false\n",
    "group": f"root:x:0:\nsandbox:x:{SANDBOX_UID}:\n",
    "hosts": "127.0.0.1 localhost\n::1 localhost\n",
    "nsswitch.conf": "passwd: files\ngroup: files\nhosts: files\n",
}


def python_paths() -> tuple[str, list[str]]:
    """The interpreter to run and the host folders it needs, read-only.

    ``SANDBOX_PYTHON`` may name another interpreter (a venv's python); by
    default it is the worker's own, whose venv has the runtimes installed.
    """
    chosen = os.environ.get("SANDBOX_PYTHON")
    executable = chosen or sys.executable
    venv = str(Path(executable).parent.parent) if chosen else sys.prefix
    # A venv reached through a symlink (a git worktree's .venv) is bound at its
    # real path too: its console scripts (iree-compile) name that path in their #! line.
    folders = {venv, os.path.realpath(venv), str(Path(os.path.realpath(executable)).parent.parent)}
    if not chosen:
        folders.add(sys.base_prefix)
    return executable, sorted(f for f in folders if not f.startswith("/usr"))


class BwrapSandbox(ProcessSandbox):
    # bwrap's outer process is outside the sandbox's pid namespace: the
    # candidate cannot signal it, so its death by a signal came from outside.
    outside_kill_detectable = True

    def __init__(self, profile: str, limits: SandboxLimits, backend: BwrapBackend) -> None:
        super().__init__(profile, limits)
        self.backend = backend
        self.cgroup: cgroups.Cgroup | None = None
        etc = self.host_dir / "etc"
        etc.mkdir()
        for name, text in _ETC_FILES.items():
            (etc / name).write_text(text)
            os.chmod(etc / name, 0o444)
        os.chmod(etc, 0o755)  # noqa: S103 - read by the sandbox user
        # The seccomp filter, read by bwrap from this descriptor (sandbox/seccomp.py).
        self._seccomp_fd: int | None = None
        if seccomp.supported():
            (self.host_dir / "seccomp.bpf").write_bytes(seccomp.filter_program())
            self._seccomp_fd = os.open(self.host_dir / "seccomp.bpf", os.O_RDONLY | os.O_CLOEXEC)
        if backend.use_cgroups:
            try:
                self.cgroup = cgroups.Cgroup(limits.memory_mb, limits.pids, limits.cpus)
            except OSError as exc:
                self.destroy()
                raise SandboxStartError(f"could not create the sandbox cgroup: {exc}") from exc

    def command(self) -> list[str]:
        python, folders = python_paths()
        argv = [
            self.backend.bwrap,
            "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent", "--new-session", "--clearenv",
            "--ro-bind", "/usr", "/usr",
        ]  # fmt: skip
        for link in ("bin", "lib", "lib64", "sbin", "lib32", "libx32"):
            host = Path("/") / link
            if host.is_symlink():
                argv += ["--symlink", os.readlink(host), f"/{link}"]
            elif host.is_dir():
                argv += ["--ro-bind", str(host), f"/{link}"]
        # /etc itself must be traversable by the sandbox user (bwrap would make it
        # 0700 root): /usr/bin/c++ and cc resolve through /etc/alternatives.
        argv += ["--perms", "0755", "--dir", "/etc"]
        for name in ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime"):
            argv += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
        for name in _ETC_FILES:
            argv += ["--ro-bind", str(self.host_dir / "etc" / name), f"/etc/{name}"]
        # /tmp first: the Python environment may itself live under /tmp (a CI
        # checkout), and a later tmpfs would hide its bind.
        argv += ["--perms", "1777", "--size", str(self.limits.tmpfs_mb * 1024 * 1024), "--tmpfs", "/tmp"]
        # bwrap creates missing parents as 0700 root: make them traversable
        # for the unprivileged sandbox user first.
        parents = sorted({str(p) for f in folders for p in Path(f).parents if str(p) not in ("/", "/tmp")}, key=len)
        for parent in parents:
            argv += ["--perms", "0755", "--dir", parent]
        for folder in folders:
            argv += ["--ro-bind", folder, folder]
        if self.backend.warm_dir is not None:
            argv += ["--perms", "0755", "--dir", "/opt", "--ro-bind", str(self.backend.warm_dir), SANDBOX_WARM_DIR]
        argv += [
            "--ro-bind", str(RUNNER_DIR), "/runner",
            "--proc", "/proc",
            "--dev", "/dev",
            "--perms", "1777", "--size", str(64 * 1024 * 1024), "--tmpfs", "/dev/shm",
            "--chdir", "/tmp",
        ]  # fmt: skip
        if self._seccomp_fd is not None:
            argv += ["--seccomp", str(self._seccomp_fd)]
        # The environment's own tools (iree-compile, iree-import-onnx, ninja)
        # are found by name, as in the docker image, whose PATH starts with /opt/venv/bin.
        env = sandbox_env()
        env["PATH"] = f"{Path(python).parent}:{env['PATH']}"
        for key, value in env.items():
            argv += ["--setenv", key, value]
        inner = [python, "-B", "/runner/runner.py", self.profile]
        if os.geteuid() == 0:
            argv += [
                "--",
                "/usr/bin/setpriv",
                f"--reuid={SANDBOX_UID}", f"--regid={SANDBOX_UID}", "--clear-groups",
                "--no-new-privs", "--bounding-set=-all", "--inh-caps=-all",
                *inner,
            ]  # fmt: skip
        else:
            argv += ["--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID), "--", *inner]
        if self.cgroup is None:
            return argv
        # Join the cgroup before exec'ing bwrap, so every process of the
        # sandbox is counted from its first instruction.
        join = 'for f; do [ "$f" = -- ] && break; echo $$ > "$f" || exit 97; shift; done; shift; exec "$@"'
        return ["/bin/sh", "-c", join, "sh", *self.cgroup.procs_files, "--", *argv]

    def environment(self) -> dict[str, str]:
        return {"PATH": "/usr/bin:/bin"}

    def inherited_fds(self) -> tuple[int, ...]:
        # Handed to bwrap once: launch() closes it once bwrap has it.
        fd, self._seccomp_fd = self._seccomp_fd, None
        return () if fd is None else (fd,)

    def apply_limits(self, limits: SandboxLimits) -> None:
        super().apply_limits(limits)
        self.stream.cap = limits.stream_bytes
        if self.cgroup is not None:
            try:
                self.cgroup.set_limits(limits.memory_mb, limits.pids)
            except OSError as exc:
                raise SandboxStartError(f"could not apply the job's limits: {exc}") from exc

    def widen(self, cores: int) -> bool:
        if self.cgroup is None:
            return True  # no quota to raise: the pin to the leased cores is what bounds it, as for every job here
        try:
            self.cgroup.set_cpus(cores, self.limits.pids * cores)
        except OSError:
            return False
        return True

    def oom_killed(self, done: bool) -> bool:
        # Also when the run said "done": the runner cannot see this cgroup, so
        # a probe it saw die by SIGKILL is a memory limit only if this says so.
        return bool(self.cgroup and self.cgroup.oom_kills() > 0)

    def job_limits(self) -> dict[str, int]:
        if self.cgroup is not None:
            return {}
        # No cgroup: bound address space instead, with room for what the
        # profile's libraries reserve without using.
        overhead = ADDRESS_SPACE_OVERHEAD_MB.get(self.profile, 512)
        return {"address_space_bytes": (self.limits.memory_mb + overhead) * 1024 * 1024}

    def release_resources(self) -> None:
        if self._seccomp_fd is not None:  # never launched
            os.close(self._seccomp_fd)
            self._seccomp_fd = None
        if self.cgroup is not None:
            self.cgroup.destroy()


class BwrapBackend(Backend):
    name = "bwrap"

    def __init__(self) -> None:
        super().__init__()
        found = shutil.which("bwrap")
        if not found:
            raise SandboxStartError("bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
        self.bwrap = found
        # Built by `make sandbox-image` (sandbox/warm.py); without it probes
        # that compile with inductor are only slower, never wrong.
        self.warm_dir = ready_host_cache()
        self.use_cgroups = cgroups.available()
        if not seccomp.supported():
            log.warning("no seccomp filter for this architecture: bwrap sandboxes run without one", extra={"event": "sandbox.no_seccomp"})
        self.sweep()

    def sweep_orphans(self) -> int:
        # Scratch folders and groups left by workers that died (SIGKILL, OOM) without destroying their sandboxes.
        folders = sweep_orphan_host_dirs()
        groups = cgroups.sweep_orphans() if self.use_cgroups else 0
        if folders or groups:
            log.info("removed orphaned sandbox leftovers", extra={"event": "sandbox.orphans_swept", "folders": folders, "cgroups": groups})
        return folders + groups

    def start(self, profile: str, limits: SandboxLimits) -> BwrapSandbox:
        self.sweep_if_due()
        sandbox = BwrapSandbox(profile, limits, self)
        sandbox.launch()
        return sandbox
