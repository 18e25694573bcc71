"""Control groups for one sandbox: real memory, process count and CPU share.

Place in the flow: the bwrap backend creates a :class:`Cgroup` per sandbox,
its launcher joins it before exec'ing bubblewrap, and after the run the
backend asks whether the memory limit killed something (``oom_kills``) and
removes the group. A group is named after the worker process that made it
(``<owner token>-<random>``, see ``owners.py``), so a backend can remove the
groups of workers that died without cleaning up (:func:`sweep_orphans`), as
the docker backend removes containers whose worker is gone.

rlimits cannot do this job: ``RLIMIT_AS`` counts address space (tensorflow
needs about 2 GB of it just to import) and ``RLIMIT_NPROC`` is not enforced
for root-owned user ids. Both cgroup v1 (seen on this kind of host) and v2
are supported; on a host where neither is writable the backend falls back to
rlimits and says so.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path

from sandbox.owners import owner_alive, owner_token

ROOT = Path(os.environ.get("SANDBOX_CGROUP_ROOT", "/sys/fs/cgroup"))
# One parent for every sandbox of this installation; a test can pick its own
# to check that it leaves no group behind.
PARENT_NAME = os.environ.get("SANDBOX_CGROUP_PARENT", "mlprep-sandbox")
# A group without an owner pid in its name (made before names carried one) is
# removed only when empty and at least this old: a group is empty for a few
# milliseconds between its creation and its launcher joining it.
LEGACY_GROUP_MIN_AGE_SECONDS = 300


def _write(path: Path, value: str) -> None:
    path.write_text(value)


class Cgroup:
    """One sandbox's group(s); ``procs_files`` are what the launcher writes its pid to."""

    def __init__(self, memory_mb: int, pids: int, cpus: float) -> None:
        self.name = f"{PARENT_NAME}/{owner_token()}-{uuid.uuid4().hex[:16]}"
        self.dirs: list[Path] = []
        self.v2 = (ROOT / "cgroup.controllers").exists()
        memory = memory_mb * 1024 * 1024
        if self.v2:
            parent = ROOT / PARENT_NAME
            parent.mkdir(exist_ok=True)
            _write(ROOT / "cgroup.subtree_control", "+memory +pids +cpu")
            _write(parent / "cgroup.subtree_control", "+memory +pids +cpu")
            group = ROOT / self.name
            group.mkdir()
            self.dirs = [group]
            _write(group / "memory.max", str(memory))
            if (group / "memory.swap.max").exists():
                _write(group / "memory.swap.max", "0")
            _write(group / "pids.max", str(pids))
            _write(group / "cpu.max", f"{int(cpus * 100000)} 100000")
        else:
            for controller in ("memory", "pids", "cpu"):
                base = ROOT / controller
                (base / PARENT_NAME).mkdir(exist_ok=True)
                group = base / self.name
                group.mkdir()
                self.dirs.append(group)
            mem, pid_dir, cpu = self.dirs
            _write(mem / "memory.limit_in_bytes", str(memory))
            if (mem / "memory.memsw.limit_in_bytes").exists():
                _write(mem / "memory.memsw.limit_in_bytes", str(memory))
            _write(mem / "memory.swappiness", "0") if (mem / "memory.swappiness").exists() else None
            _write(pid_dir / "pids.max", str(pids))
            _write(cpu / "cpu.cfs_period_us", "100000")
            _write(cpu / "cpu.cfs_quota_us", str(int(cpus * 100000)))

    def set_limits(self, memory_mb: int, pids: int) -> None:
        """Change the memory and process limits of a live group (a warm sandbox taken for a job)."""
        memory = str(memory_mb * 1024 * 1024)
        if self.v2:
            _write(self.dirs[0] / "memory.max", memory)
            _write(self.dirs[0] / "pids.max", str(pids))
            return
        mem, pid_dir, _ = self.dirs
        swap = mem / "memory.memsw.limit_in_bytes"
        # v1 refuses memory > memsw: raise whichever must grow first.
        current = int((mem / "memory.limit_in_bytes").read_text())
        order = [("memory.limit_in_bytes", memory), ("memory.memsw.limit_in_bytes", memory)]
        if int(memory) > current:
            order.reverse()
        for name, value in order:
            if name == "memory.memsw.limit_in_bytes" and not swap.exists():
                continue
            _write(mem / name, value)
        _write(pid_dir / "pids.max", str(pids))

    def set_cpus(self, cpus: float, pids: int) -> None:
        """Change the CPU quota and the process limit of a live group (probes side by side)."""
        if self.v2:
            _write(self.dirs[0] / "cpu.max", f"{int(cpus * 100000)} 100000")
            _write(self.dirs[0] / "pids.max", str(pids))
            return
        _, pid_dir, cpu = self.dirs
        _write(cpu / "cpu.cfs_quota_us", str(int(cpus * 100000)))
        _write(pid_dir / "pids.max", str(pids))

    @property
    def procs_files(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in self.dirs]

    def oom_kills(self) -> int:
        """How many processes the memory limit killed in this group."""
        control = self.dirs[0] / ("memory.events" if self.v2 else "memory.oom_control")
        try:
            for line in control.read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except OSError:
            return 0
        return 0

    def destroy(self) -> None:
        """Kill what is left in the group, then remove it."""
        for group in self.dirs:
            _kill_and_remove(group)


def _kill_and_remove(group: Path) -> bool:
    """Kill every process in ``group``, then remove it; whether it is gone."""
    for _ in range(50):
        try:
            pids = [int(p) for p in (group / "cgroup.procs").read_text().split()]
        except OSError:
            break
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.02)
    try:
        group.rmdir()
    except OSError:
        return False
    return True


def _parent_dirs() -> list[Path]:
    if (ROOT / "cgroup.controllers").exists():
        return [ROOT / PARENT_NAME]
    return [ROOT / controller / PARENT_NAME for controller in ("memory", "pids", "cpu")]


def _orphaned(group: Path) -> bool:
    owner, sep, _ = group.name.partition("-")
    alive = owner_alive(owner) if sep else None
    if alive is not None:
        return not alive
    # A legacy name: only an old, empty group is surely nobody's.
    try:
        empty = not (group / "cgroup.procs").read_text().split()
        return empty and time.time() - group.stat().st_mtime > LEGACY_GROUP_MIN_AGE_SECONDS
    except OSError:
        return False


def sweep_orphans() -> int:
    """Remove the groups of sandboxes whose worker process is gone; how many were removed.

    A worker killed with SIGKILL never runs ``destroy``: bwrap's processes die
    with their parent, but their groups stay. The bwrap backend calls this as
    it starts, every few minutes after and as it closes.
    """
    removed: set[str] = set()  # by name: on cgroup v1 one sandbox has a group per controller
    for parent in _parent_dirs():
        try:
            groups = [g for g in parent.iterdir() if g.is_dir()]
        except OSError:
            continue
        for group in groups:
            if _orphaned(group) and _kill_and_remove(group):
                removed.add(group.name)
    return len(removed)


def sandbox_groups() -> list[str]:
    """Names of the sandbox groups that exist now under this installation's parent (for health checks and tests)."""
    names: set[str] = set()
    for parent in _parent_dirs():
        try:
            names.update(g.name for g in parent.iterdir() if g.is_dir())
        except OSError:
            continue
    return sorted(names)


def available() -> bool:
    """Whether this process can create sandbox cgroups here."""
    if (ROOT / "cgroup.controllers").exists():
        return os.access(ROOT, os.W_OK)
    return all(os.access(ROOT / c, os.W_OK) for c in ("memory", "pids", "cpu"))
