"""How long the host kept a probe from running: the host's load, which is not the candidate's time.

Place in the flow: the runner (``runner.py``, ``Child``) gives every probe a
wall-clock limit. On a loaded host a probe that needs 2 s of CPU can take
6 s of wall clock because other processes (other sandboxes, other jobs on
the machine, a hypervisor's steal) ran on its cores, and the candidate was
charged a time limit for it (issue 28: two of six correct references scored
92.59 with two workers and six queued submissions). When a probe reaches its
limit, the runner asks this module how long the host kept the probe from
running since it started, and gives that time back, once per deadline, up
to a cap.

Two measures, both from /proc, and the smaller counts: the time the probe's
own tasks waited, runnable, for a CPU (``schedstat``'s run delay, summed
over its process group's threads), and the time its cores spent on anything
outside the sandbox (the cores' busy time in ``/proc/stat``, host-wide, also
inside a pid namespace or a container, less the CPU time of every process the
sandbox's own /proc shows on those cores). The
first alone would count the candidate's own threads queueing for their one
core; the second alone would count the host's work while the probe slept.
Their minimum is the time the host kept the probe from running. Neither is
under the candidate's control: every process they start is in the sandbox,
so it counts as theirs, whatever group it puts itself in. Where /proc does not say (a kernel that hides
it), the answer is 0 and the limit stays the plain wall clock, as before.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

TICK = 1.0 / os.sysconf("SC_CLK_TCK")
# How far the runner moves a probe's deadline for the host's load: up to LOAD_STRETCH times its limit of wall clock,
# in steps of at least LOAD_STEP of the limit (runner.py). Here because the grader sizes a run's wall clock by the
# same stretch (grader/execute.py: sandbox_limits), so time given back is never taken again by the run's clock.
LOAD_STRETCH = 5.0
LOAD_STEP = 0.05


def busy_seconds(cores: Iterable[int]) -> float:
    """CPU seconds the given cores spent on anything (user, system, interrupts, a hypervisor's steal) since boot."""
    wanted = {f"cpu{c}" for c in cores}
    total = 0
    try:
        with open("/proc/stat") as fh:
            for line in fh:
                name, *fields = line.split()
                if name in wanted and len(fields) >= 8:
                    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(f) for f in fields[:8])
                    total += user + nice + system + irq + softirq + steal
    except (OSError, ValueError):
        return 0.0
    return total * TICK


def _stat_fields(entry: str) -> list[str] | None:
    """The fields of /proc/<entry>/stat after the command name (which is in parentheses and may hold spaces)."""
    try:
        with open(f"/proc/{entry}/stat") as fh:
            text = fh.read()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()
    return fields if len(fields) > 14 else None


def _group_processes(pgid: int) -> list[str]:
    """The /proc entries of the live processes in process group ``pgid``."""
    return [e for e in os.listdir("/proc") if e.isdigit() and (f := _stat_fields(e)) is not None and f[2] == str(pgid)]


def sandbox_seconds(cores: Iterable[int], parent: int) -> float:
    """CPU seconds of every process this sandbox shows (its pid namespace) that may run on ``cores``.

    Counted as the probe's own, so that no process of the sandbox can pass
    for the host: a candidate's process in a group of its own, burning the
    probe's core, would otherwise be "others" and earn the probe more time.
    A process pinned elsewhere (a probe beside this one, on its own core)
    does not count. Reaped children count with the process that reaped them
    (init's orphans included), but not the runner's (``parent``): those are
    the probes before and beside this one.
    """
    wanted = set(cores)
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        fields = _stat_fields(entry)
        if fields is None:
            continue
        try:
            allowed = os.sched_getaffinity(int(entry))
        except OSError:
            allowed = wanted
        if not allowed & wanted:
            continue
        total += int(fields[11]) + int(fields[12])
        if int(entry) != parent:
            total += int(fields[13]) + int(fields[14])
    return total * TICK


def group_waits(pgid: int) -> float:
    """Seconds the threads of process group ``pgid`` spent runnable but waiting for a CPU (the scheduler's run delay)."""
    total = 0
    for entry in _group_processes(pgid):
        try:
            tasks = os.listdir(f"/proc/{entry}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{entry}/task/{task}/schedstat") as fh:
                    total += int(fh.read().split()[1])
            except (OSError, ValueError, IndexError):
                continue
    return total / 1e9


class CoreShare:
    """The time the host kept a probe's group from running since it started, sampled at its start and at its deadlines."""

    def __init__(self, pgid: int, cores: Iterable[int]) -> None:
        self.pgid = pgid
        self.cores = tuple(sorted(cores))
        self.parent = os.getpid()  # the runner, whose reaped children are other probes
        self.busy_at_start = busy_seconds(self.cores)
        self.own_at_start = sandbox_seconds(self.cores, self.parent)
        self.waits_at_start = group_waits(pgid)
        self.given_back = 0.0

    def taken_by_others(self) -> float:
        """Seconds the probe's group waited for its cores while processes outside the sandbox used them (never negative)."""
        others = busy_seconds(self.cores) - self.busy_at_start - (sandbox_seconds(self.cores, self.parent) - self.own_at_start)
        waited = group_waits(self.pgid) - self.waits_at_start
        return max(0.0, min(others, waited))

    def sandbox_used(self) -> float:
        """CPU seconds the sandbox's own processes on these cores used since the probe started (never negative)."""
        return max(0.0, sandbox_seconds(self.cores, self.parent) - self.own_at_start)

    def not_yet_given_back(self) -> float:
        """What others took since the last time some was given back; counted as given back from now on."""
        taken = self.taken_by_others()
        owed = max(0.0, taken - self.given_back)
        self.given_back = max(self.given_back, taken)
        return owed
