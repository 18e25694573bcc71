"""sandbox/seccomp.py: the bwrap sandbox's filter, run instruction by instruction on a small classic-BPF interpreter.

The filter is hand-written BPF, so its jumps are the risk: an offset one too
short lands on "allow". Every refused number, every clone flag and the
architecture checks are run through the program here; the real kernel's
verdicts on both backends are in tests/sandbox/test_limits_and_containment.py.
"""

from __future__ import annotations

import errno
import struct

import pytest

from sandbox import seccomp

ALLOW = seccomp.SECCOMP_RET_ALLOW
KILL = seccomp.SECCOMP_RET_KILL_PROCESS
EPERM = seccomp.SECCOMP_RET_ERRNO | errno.EPERM
ENOSYS = seccomp.SECCOMP_RET_ERRNO | errno.ENOSYS


def run(nr: int, arg0: int = 0, arch: int = seccomp.AUDIT_ARCH_X86_64) -> int:
    """What the filter returns for one call: a classic-BPF interpreter for the instructions it uses."""
    data = struct.pack("=iIQ6Q", nr, arch, 0, arg0, 0, 0, 0, 0, 0)
    program = seccomp.filter_program()
    insns = [struct.unpack_from("=HBBI", program, i) for i in range(0, len(program), 8)]
    pc, acc = 0, 0
    for _ in range(len(insns)):  # no loops in classic BPF: every jump goes forward
        code, jt, jf, k = insns[pc]
        if code == seccomp.BPF_LD_W_ABS:
            (acc,) = struct.unpack_from("=I", data, k)
            pc += 1
        elif code == seccomp.BPF_RET_K:
            return k
        else:
            taken = {seccomp.BPF_JEQ_K: acc == k, seccomp.BPF_JGE_K: acc >= k, seccomp.BPF_JSET_K: bool(acc & k)}[code]
            pc += 1 + (jt if taken else jf)
        assert pc < len(insns), "jumped past the end of the program"
    raise AssertionError("the program did not return")


@pytest.mark.parametrize("name", sorted(seccomp.REFUSED))
def test_every_refused_call_gets_eperm(name: str) -> None:
    assert run(seccomp.REFUSED[name]) == EPERM


@pytest.mark.parametrize("name, nr", [("read", 0), ("write", 1), ("mmap", 9), ("futex", 202), ("execve", 59), ("openat", 257), ("getrandom", 318)])
def test_ordinary_calls_are_allowed(name: str, nr: int) -> None:
    assert run(nr) == ALLOW, name


def test_calls_around_the_refused_numbers_are_allowed() -> None:
    refused = set(seccomp.REFUSED.values()) | {seccomp.CLONE, seccomp.CLONE3}
    for nr in range(0, 460):
        if nr not in refused:
            assert run(nr) == ALLOW, nr


# glibc's pthread_create (CLONE_VM | FS | FILES | SIGHAND | THREAD | SYSVSEM | SETTLS | PARENT_SETTID | CHILD_CLEARTID) and fork (SIGCHLD).
THREAD = 0x3D0F00
FORK = 17


@pytest.mark.parametrize("flags", [THREAD, FORK, 0])
def test_threads_and_forks_are_allowed(flags: int) -> None:
    assert run(seccomp.CLONE, flags) == ALLOW


@pytest.mark.parametrize("flag", [0x10000000, 0x40000000, 0x20000000, 0x00020000, 0x08000000, 0x04000000, 0x02000000, 0x00000080])
def test_a_clone_into_any_new_namespace_gets_eperm(flag: int) -> None:
    assert run(seccomp.CLONE, FORK | flag) == EPERM


def test_clone3_gets_enosys_so_that_the_c_library_falls_back_to_clone() -> None:
    assert run(seccomp.CLONE3, THREAD) == ENOSYS


def test_another_architecture_or_the_x32_abi_is_killed() -> None:
    assert run(0, arch=0x40000003) == KILL  # i386: its own numbers would dodge the list
    assert run(seccomp.X32_SYSCALL_BIT | 272) == KILL
