"""Sandbox limits and containment, through the real backend and the whole grader.

Each submission is graded on the add-numbers fixture (reference: ``np.add``)
with a hostile ``add``. Where the attack must fail for the answer to be right,
the solution returns the right answer only when the attack failed, so the
verdict itself proves the containment. After every attack the next, honest
submission must still be graded correctly.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from grader import load_package_dir
from tests.helpers import FIXTURES, grade, patient_add_numbers, statuses

HONEST = "import numpy as np\n\ndef add(a, b):\n    return np.add(a, b)\n"


def assert_still_grades(backend: str) -> None:
    result = grade(HONEST, backend=backend)
    assert result.verdict == "accepted", result.to_dict()


def test_infinite_loop_is_time_limit_and_others_still_pass(backend: str) -> None:
    result = grade(
        """
        import numpy as np

        def add(a, b):
            if a.dtype == np.float16:
                while True:
                    pass
            return np.add(a, b)
        """,
        backend=backend,
    )
    assert statuses(result) == {"floats": "accepted", "keeps_float16": "time_limit", "integers": "accepted"}
    assert result.verdict == "partial"
    assert 0 < result.score < 100
    assert_still_grades(backend)


def test_sleep_forever_is_time_limit(backend: str) -> None:
    result = grade("import time\n\ndef add(a, b):\n    time.sleep(3600)\n", backend=backend)
    assert result.verdict == "time_limit"
    assert set(statuses(result).values()) == {"time_limit"}


def test_code_that_never_ends_costs_two_probe_limits_not_every_probes(backend: str) -> None:
    """After the first probe runs out of its time, the probes after it share one more of its limit (issue 29): each
    is cut short when that is spent (side by side, both run at once) or not started (one at a time, the third);
    all three are time limits."""
    result = grade("import time\n\ndef add(a, b):\n    time.sleep(3600)\n", backend=backend)
    runs = {p.name: p for p in result.probes}
    assert [p.name for p in result.probes] == ["floats", "keeps_float16", "integers"]
    assert {p.status for p in result.probes} == {"time_limit"}
    assert [runs[n].details.get("runner_status") for n in ("floats", "keeps_float16", "integers")] == ["timeout", "stopped", "stopped"]
    assert runs["keeps_float16"].message.startswith("stopped: an earlier probe ran out of its time")
    later = runs["integers"]
    assert later.message.startswith("stopped: an earlier probe") or (later.message.startswith("not run: an earlier probe") and later.duration_ms == 0)
    assert_still_grades(backend)


def test_a_cancel_kills_the_sandbox_and_ends_the_grading_at_once(backend: str) -> None:
    """The candidate's Cancel (issue 29): a grading of code that never ends, stopped a second in, raises
    GradingCancelled instead of waiting out its probes' limits; the sandbox is gone and the next grading is right."""
    import threading

    from grader import grade_submission
    from grader.errors import GradingCancelled
    from sandbox import get_backend
    from tests.helpers import add_numbers

    stop = threading.Event()
    timer = threading.Timer(1.0, stop.set)
    timer.start()
    try:
        with pytest.raises(GradingCancelled):
            forever = "import time\n\ndef add(a, b):\n    time.sleep(3600)\n"
            grade_submission(add_numbers(), forever, public=False, backend=get_backend(backend), stop=stop)
    finally:
        timer.cancel()
    assert_still_grades(backend)


def test_cpu_burn_in_many_threads_is_time_limit(backend: str) -> None:
    result = grade(
        """
        import threading

        def burn():
            while True:
                pass

        def add(a, b):
            for _ in range(8):
                threading.Thread(target=burn, daemon=True).start()
            burn()
        """,
        backend=backend,
    )
    assert result.verdict == "time_limit"
    assert_still_grades(backend)


def test_memory_hog_is_memory_limit(backend: str, tmp_path: Path) -> None:
    result = grade(
        """
        def add(a, b):
            hog = []
            while True:
                hog.append(bytearray(16 * 1024 * 1024))
                hog[-1][::4096] = b"x" * len(hog[-1][::4096])
        """,
        backend=backend,
        # A minute per probe: filling 256 MB must never race the fixture's 3 s on a loaded machine (it did, as time_limit).
        package=patient_add_numbers(tmp_path),
    )
    assert result.verdict == "memory_limit", result.to_dict()
    assert_still_grades(backend)


def test_fork_bomb_is_contained(backend: str) -> None:
    result = grade(
        """
        import os

        def add(a, b):
            while True:
                try:
                    os.fork()
                except OSError:
                    pass
        """,
        backend=backend,
    )
    assert result.verdict in ("time_limit", "runtime_error"), result.to_dict()
    assert result.score == 0
    assert_still_grades(backend)


def test_flood_of_output_is_output_limit(backend: str) -> None:
    result = grade(
        """
        import sys

        def add(a, b):
            line = "x" * 1023 + "\\n"
            while True:
                sys.stdout.write(line)
        """,
        backend=backend,
    )
    assert result.verdict == "output_limit", result.to_dict()
    assert_still_grades(backend)


def test_network_is_unreachable(backend: str) -> None:
    # Right answer only if every connection attempt fails: loopback services
    # (Redis, the web port, PostgreSQL) and an outside address.
    result = grade(
        """
        import socket
        import numpy as np

        def reachable(host, port):
            try:
                socket.create_connection((host, port), timeout=0.5).close()
                return True
            except OSError:
                return False

        def add(a, b):
            targets = [("127.0.0.1", 6379), ("127.0.0.1", 8000), ("127.0.0.1", 5432), ("1.1.1.1", 443)]
            if any(reachable(h, p) for h, p in targets):
                return np.add(a, b) + 1
            return np.add(a, b)
        """,
        backend=backend,
    )
    assert result.verdict == "accepted", result.to_dict()


# Each call's natural error, were it to reach the kernel unfiltered, differs from EPERM/EACCES/ENOSYS
# (a new user namespace or a keyring id simply succeed; setns(-1) is EBADF; io_uring_setup and
# perf_event_open with a NULL pointer are EFAULT), so "refused" means a filter or a missing privilege said no.
KERNEL_ATTACK_SURFACE = """
import ctypes, errno, os
import numpy as np

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
CALLS = {
    "unshare(CLONE_NEWUSER)": (272, 0x10000000),
    "unshare(CLONE_NEWUSER|CLONE_NEWNET)": (272, 0x50000000),
    "setns(-1, 0)": (308, -1, 0),
    "clone(CLONE_NEWUSER|SIGCHLD)": (56, 0x10000000 | 17, 0, 0, 0, 0),
    "keyctl(GET_KEYRING_ID, SESSION)": (250, 0, -3, 0),
    "add_key(user)": (248, b"user", b"x", b"y", 1, -2),
    "bpf(PROG_LOAD, NULL)": (321, 5, 0, 0),
    "perf_event_open(NULL)": (298, 0, 0, -1, -1, 0),
    "ptrace(ATTACH, parent)": (101, 16, os.getppid(), 0, 0),
    "mount(tmpfs)": (165, b"none", b"/tmp", b"tmpfs", 0, 0),
    "userfaultfd(0)": (323, 0),
    "kexec_load": (246, 0, 0, 0, 0),
    "io_uring_setup(1, NULL)": (425, 1, 0),
    "io_uring_register(-1)": (427, -1, 0, 0, 0),
    "fsopen(NULL)": (430, 0, 0),
    "fspick(-1, NULL)": (433, -1, 0, 0),
    "open_tree(-1, NULL)": (428, -1, 0, 0),
    "move_mount(NULL)": (429, -1, 0, -1, 0, 0),
    "mount_setattr(NULL)": (442, -1, 0, 0, 0, 0),
    "request_key(NULL)": (249, 0, 0, 0, 0),
    "name_to_handle_at(NULL)": (303, -100, b"/", 0, 0, 0),
    "process_vm_readv(self, nothing)": (310, os.getpid(), 0, 0, 0, 0, 0),
    "pidfd_getfd(-1)": (438, -1, 0, 0),
    "modify_ldt(read 0 bytes)": (154, 0, 0, 0),
    "personality(READ_IMPLIES_EXEC)": (135, 0x0400000),
    "socket(AF_VSOCK)": (41, 40, 1, 0),
}

def attempt(args):
    ctypes.set_errno(0)
    result = libc.syscall(*args)
    if result == 0 and args[0] == 56:
        os._exit(0)  # a child in a new namespace: it must not run on
    return None if result == -1 and ctypes.get_errno() in (errno.EPERM, errno.EACCES, errno.ENOSYS) else (result, ctypes.get_errno())

def add(a, b):
    allowed = {name: outcome for name, args in CALLS.items() if (outcome := attempt(args)) is not None}
    if allowed:
        raise RuntimeError(f"reached the kernel: {allowed}")
    return np.add(a, b)
"""


def test_kernel_attack_surface_is_refused(backend: str) -> None:
    # New namespaces, the keyring, eBPF, perf events, ptrace, mounts and the new mount API, io_uring: the
    # usual first steps of a kernel privilege escalation. Both backends install the one allowlist of
    # sandbox/seccomp.py (Docker's own 20.10 default would let io_uring through).
    result = grade(KERNEL_ATTACK_SURFACE, backend=backend)
    assert result.verdict == "accepted", [p.message for p in result.probes if not p.passed]
    assert_still_grades(backend)


def test_threads_and_subprocesses_still_work_under_the_filter(backend: str) -> None:
    # glibc starts threads with clone3 and falls back to clone on ENOSYS; fork and exec stay allowed.
    result = grade(
        """
        import subprocess, sys, threading
        import numpy as np

        def add(a, b):
            out = []
            t = threading.Thread(target=lambda: out.append(np.add(a, b)))
            t.start(); t.join()
            child = subprocess.run([sys.executable, "-c", "print(6 * 7)"], capture_output=True, text=True, timeout=20)
            return out[0] if child.stdout.strip() == "42" else None
        """,
        backend=backend,
    )
    assert result.verdict == "accepted", [p.message for p in result.probes if not p.passed]


def test_host_files_and_secrets_are_invisible(backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SECRET_KEY", "worker-secret-do-not-leak")
    monkeypatch.setenv("DATABASE_URL", "postgres://secret@db/x")
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    # The Python environment may itself live under ~/.cache (scripts/venv.sh builds it there once per machine);
    # bwrap binds it read-only at its real path, so the folders leading to it show, and nothing else may.
    environment = os.path.realpath(sys.prefix)
    result = grade(
        f"""
        import os
        import numpy as np

        ENVIRONMENT = {environment!r}

        def cache_leaks():
            leaks = []
            for root, dirs, files in os.walk("/root/.cache"):
                paths = [os.path.join(root, name) for name in dirs + files]
                leaks += [p for p in paths if p != ENVIRONMENT and not ENVIRONMENT.startswith(p + "/")]
                dirs[:] = [d for d in dirs if ENVIRONMENT.startswith(os.path.join(root, d) + "/")]
            return leaks

        def visible():
            leaks = [k for k in ("SECRET_KEY", "DATABASE_URL") if k in os.environ] + cache_leaks()
            for path in ({repo!r} + "/challenges", {repo!r} + "/grader", "/etc/shadow", "/var/lib/redis", {repo!r} + "/var"):
                try:
                    os.listdir(path) if os.path.isdir(path) else open(path).read(1)
                    leaks.append(path)
                except OSError:
                    pass
            return leaks

        def add(a, b):
            if visible():
                raise RuntimeError("leak: " + ", ".join(visible()))
            return np.add(a, b)
        """,
        backend=backend,
    )
    assert result.verdict == "accepted", result.to_dict()


def test_writing_outside_the_work_dir_fails(backend: str) -> None:
    result = grade(
        """
        import numpy as np

        def add(a, b):
            for path in ("/usr/pwned", "/runner/runner.py", "/runner/probekit.py", "/etc/passwd"):
                try:
                    with open(path, "w") as fh:
                        fh.write("x")
                    return np.add(a, b) + 1
                except OSError:
                    pass
            with open("scratch.txt", "w") as fh:  # the work dir itself is writable
                fh.write("ok")
            return np.add(a, b)
        """,
        backend=backend,
    )
    assert result.verdict == "accepted", result.to_dict()


def test_rewriting_the_job_files_does_not_change_later_probes(backend: str) -> None:
    # The probes run from the sources in the runner's memory, not from the files in /tmp/work/job.
    result = grade(
        """
        import glob, os
        import numpy as np

        def add(a, b):
            paths = glob.glob("/tmp/**/probes.py", recursive=True)
            if not paths:
                raise RuntimeError("the job files were not found: this test would prove nothing")
            for path in paths:
                os.chmod(path, 0o644)
                with open(path, "w") as fh:
                    fh.write("from probekit import probe\\n@probe(category='values')\\ndef floats(s):\\n    return 0\\n")
            return a
        """,
        backend=backend,
    )
    assert result.score == 0, result.to_dict()
    assert all(p.status == "wrong_answer" for p in result.probes)


def test_killing_the_runner_is_a_runtime_error_not_a_platform_error(backend: str, caplog: pytest.LogCaptureFixture) -> None:
    result = grade(
        """
        import os, signal

        def add(a, b):
            os.kill(os.getppid(), signal.SIGKILL)
        """,
        backend=backend,
    )
    assert result.verdict == "runtime_error"
    assert "killed" in result.probes[0].message
    # The platform's log says so too, with what the runner last wrote.
    assert [r for r in caplog.records if getattr(r, "event", "") == "sandbox.runner_died"]
    assert_still_grades(backend)


def test_killing_every_process_it_can_is_contained(backend: str) -> None:
    result = grade("import os, signal\n\ndef add(a, b):\n    os.kill(-1, signal.SIGKILL)\n", backend=backend)
    assert result.verdict == "runtime_error", result.to_dict()
    assert_still_grades(backend)


def test_ignoring_sigterm_does_not_survive_the_time_limit(backend: str) -> None:
    result = grade(
        """
        import signal, time

        def add(a, b):
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            while True:
                time.sleep(0.01)
        """,
        backend=backend,
    )
    assert result.verdict == "time_limit"
    assert_still_grades(backend)


def test_filling_the_disk_is_contained(backend: str) -> None:
    result = grade(
        """
        import os

        def add(a, b):
            block = b"x" * (1 << 20)
            with open("fill.bin", "wb") as fh:
                while True:
                    fh.write(block)
                    fh.flush()
        """,
        backend=backend,
    )
    assert result.verdict in ("runtime_error", "memory_limit"), result.to_dict()
    assert result.score == 0
    assert_still_grades(backend)


def test_monkeypatching_comparisons_in_the_sandbox_changes_nothing(backend: str) -> None:
    # The checks run outside: making numpy and torch say "equal" to everything inside is useless.
    numpy_result = grade(
        """
        import numpy as np

        np.allclose = lambda *a, **k: True
        np.array_equal = lambda *a, **k: True
        np.testing.assert_allclose = lambda *a, **k: None

        def add(a, b):
            return a - b
        """,
        backend=backend,
    )
    assert numpy_result.verdict == "wrong_answer", numpy_result.to_dict()
    torch_result = grade(
        """
        import torch

        torch.allclose = lambda *a, **k: True
        torch.equal = lambda *a, **k: True
        torch.testing.assert_close = lambda *a, **k: None

        def linear(x, w, b):
            return (x @ w.T + b) * 1.01
        """,
        backend=backend,
        package=load_package_dir(FIXTURES / "demo" / "torch-linear"),
    )
    assert torch_result.verdict == "wrong_answer", torch_result.to_dict()


def test_exiting_early_gives_no_result(backend: str) -> None:
    result = grade("import os\n\ndef add(a, b):\n    os._exit(0)\n", backend=backend)
    assert result.verdict == "runtime_error"
    assert "exited with code 0" in result.probes[0].message


def test_segfault_fails_alone(backend: str) -> None:
    result = grade(
        """
        import ctypes
        import numpy as np

        def add(a, b):
            if a.dtype == np.float16:
                ctypes.string_at(0)
            return np.add(a, b)
        """,
        backend=backend,
    )
    assert statuses(result)["keeps_float16"] == "runtime_error"
    message = next(p.message for p in result.probes if p.name == "keeps_float16")
    # The signal, and what it usually means: the candidate is pointed at memory, not left with a name.
    assert "SIGSEGV" in message and "past the end of a buffer" in message
    assert result.verdict == "partial"


def test_a_probe_killed_by_a_signal_without_a_name_fails_alone(backend: str) -> None:
    # Real-time signals have no name in Python's signal.Signals: describing one
    # must not crash the runner and fail every probe after it.
    result = grade(
        """
        import os
        import numpy as np

        def add(a, b):
            if a.dtype == np.float16:
                os.kill(os.getpid(), 40)
            return np.add(a, b)
        """,
        backend=backend,
    )
    assert statuses(result)["keeps_float16"] == "runtime_error"
    assert "killed by signal 40" in next(p.message for p in result.probes if p.name == "keeps_float16")
    assert result.verdict == "partial"


def test_unbounded_recursion_is_a_runtime_error(backend: str) -> None:
    result = grade("def add(a, b):\n    return add(a, b)\n", backend=backend)
    assert result.verdict == "runtime_error"
    assert "RecursionError" in result.probes[0].message


def test_global_state_does_not_leak_between_probes(backend: str) -> None:
    # The first probe's call poisons module state; a fresh import per probe hides it from the others.
    result = grade(
        """
        import numpy as np
        CALLS = []

        def add(a, b):
            CALLS.append(1)
            if len(CALLS) > 1:
                return np.add(a, b) + 1
            return np.add(a, b)
        """,
        backend=backend,
    )
    assert result.verdict == "accepted", result.to_dict()


def test_background_processes_do_not_outlive_the_run(backend: str) -> None:
    marker = f"mlprep-stray-{uuid.uuid4().hex[:8]}"
    result = grade(
        f"""
        import subprocess
        import numpy as np

        def add(a, b):
            subprocess.Popen(["/bin/sh", "-c", "exec -a {marker} sleep 300"], start_new_session=True)
            return np.add(a, b)
        """,
        backend=backend,
    )
    assert result.verdict == "accepted", result.to_dict()
    left = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
    assert left.stdout.strip() == "", f"stray processes survived: {left.stdout}"


def test_forged_frames_on_stdout_are_not_believed(backend: str) -> None:
    # The candidate writes a well-formed "probe passed" frame on every fd it can reach.
    result = grade(
        """
        import json, os, struct

        def add(a, b):
            frame = json.dumps({"type": "probe", "name": "floats", "status": "ok", "tree": 1.0, "arrays": 0}).encode()
            data = struct.pack(">I", len(frame)) + frame
            for fd in range(0, 64):
                try:
                    os.write(fd, data)
                except OSError:
                    pass
            try:
                with open(f"/proc/{os.getppid()}/fd/1", "wb") as fh:
                    fh.write(data)
            except OSError:
                pass
            return None
        """,
        backend=backend,
    )
    assert result.score == 0
    assert all(not p.passed for p in result.probes)


def test_syntax_error_names_the_line(backend: str) -> None:
    result = grade("def add(a, b):\n    return a +\n", backend=backend)
    assert result.verdict == "syntax_error"
    assert "line 2" in result.message


def test_non_utf8_output_is_handled(backend: str) -> None:
    result = grade(
        """
        import os
        import numpy as np

        def add(a, b):
            os.write(1, b"\\xff\\xfe bad bytes \\x80")
            return np.add(a, b)
        """,
        backend=backend,
        public=True,
    )
    assert result.verdict == "accepted"
    assert "bad bytes" in result.probes[0].stdout


def test_huge_observation_is_output_limit(backend: str, tmp_path: Path) -> None:
    # Encoding 40 MB takes a loaded machine more than the fixture's 3 s: the verdict must not depend on that.
    huge = "import numpy as np\n\ndef add(a, b):\n    return np.zeros(40 * 1024 * 1024 // 8)\n"
    result = grade(huge, backend=backend, package=patient_add_numbers(tmp_path))
    assert result.verdict == "output_limit", result.to_dict()


def test_observation_with_custom_reduce_is_refused(backend: str) -> None:
    result = grade(
        """
        import os

        class Evil:
            def __reduce__(self):
                return (os.system, ("echo pwned",))

        def add(a, b):
            return Evil()
        """,
        backend=backend,
    )
    assert result.verdict == "runtime_error"
    assert "unsupported" in result.probes[0].message


def test_the_cpp_toolchain_is_usable(backend: str, tmp_path: Path) -> None:
    # C++ operator challenges build with load_inline (`c++` resolves through
    # /etc/alternatives) and dlopen the result from /tmp, which must allow exec.
    result = grade(
        """
        import ctypes, os, subprocess
        import numpy as np

        def add(a, b):
            for compiler in ("c++", "g++"):
                done = subprocess.run([compiler, "--version"], capture_output=True, text=True)
                if done.returncode != 0:
                    raise RuntimeError(f"{compiler}: {done.stderr}")
            with open("twice.cpp", "w") as fh:
                fh.write('extern "C" int twice(int x) { return 2 * x; }')
            done = subprocess.run(["c++", "-shared", "-fPIC", "-o", "libtwice.so", "twice.cpp"], capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(done.stderr)
            if ctypes.CDLL(os.path.abspath("libtwice.so")).twice(21) != 42:
                raise RuntimeError("the shared library computed the wrong value")
            return np.add(a, b)
        """,
        backend=backend,
        package=patient_add_numbers(tmp_path),  # a compile per probe: seconds on a loaded machine
    )
    assert result.verdict == "accepted", result.to_dict()


def test_the_environments_tools_are_found_by_name(backend: str, tmp_path: Path) -> None:
    # Compiler challenges call IREE's command-line tools; both backends put the
    # environment's bin folder first on PATH, so the same code works in each.
    result = grade(
        """
        import subprocess
        import numpy as np

        def add(a, b):
            for tool in ("iree-compile", "iree-import-onnx"):
                done = subprocess.run([tool, "--help"], capture_output=True, text=True)
                if done.returncode != 0:
                    raise RuntimeError(f"{tool}: {done.stderr[-500:]}")
            return np.add(a, b)
        """,
        backend=backend,
        package=patient_add_numbers(tmp_path),  # iree-compile loads LLVM for each --help
    )
    assert result.verdict == "accepted", result.to_dict()
