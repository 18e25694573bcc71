"""sandbox/seccomp.py: the sandboxes' one allowlist, as bwrap's BPF (run instruction by instruction on a small
classic-BPF interpreter) and as Docker's JSON profile (the same calls, the same rules).

The filter is BPF assembled here, so its jumps are the risk: an offset one too
short lands on "allow". Every allowed and refused number, the argument rules
and the architecture checks are run through the program; the real kernel's
verdicts in sandboxes of both backends are in
tests/sandbox/test_limits_and_containment.py.
"""

from __future__ import annotations

import errno
import json
import re
import struct
from pathlib import Path

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
            taken = {
                seccomp.BPF_JEQ_K: acc == k, seccomp.BPF_JGT_K: acc > k, seccomp.BPF_JGE_K: acc >= k, seccomp.BPF_JSET_K: bool(acc & k),
            }[code]  # fmt: skip
            pc += 1 + (jt if taken else jf)
        assert pc < len(insns), "jumped past the end of the program"
    raise AssertionError("the program did not return")


RULED = {seccomp.CLONE, seccomp.CLONE3, seccomp.SOCKET, seccomp.PERSONALITY}


@pytest.mark.parametrize("name", sorted(seccomp.ALLOWED))
def test_every_allowed_call_is_allowed(name: str) -> None:
    assert run(seccomp.ALLOWED[name]) == ALLOW


@pytest.mark.parametrize("name", sorted(seccomp.REFUSED_EXAMPLES))
def test_every_refused_example_gets_eperm(name: str) -> None:
    assert run(seccomp.REFUSED_EXAMPLES[name]) == EPERM


def test_it_is_an_allowlist_every_number_not_listed_is_refused_up_to_calls_the_kernel_has_not_made_yet() -> None:
    listed = set(seccomp.ALLOWED.values()) | RULED
    for nr in range(0, 1024):
        if nr not in listed:
            assert run(nr) == EPERM, nr
    assert not set(seccomp.REFUSED_EXAMPLES.values()) & listed


# glibc's pthread_create (CLONE_VM | FS | FILES | SIGHAND | THREAD | SYSVSEM | SETTLS | PARENT_SETTID | CHILD_CLEARTID) and fork (SIGCHLD).
THREAD = 0x3D0F00
FORK = 17


@pytest.mark.parametrize("flags", [THREAD, FORK, 0])
def test_threads_and_forks_are_allowed(flags: int) -> None:
    assert run(seccomp.CLONE, flags) == ALLOW


@pytest.mark.parametrize("flag", [0x10000000, 0x40000000, 0x20000000, 0x00020000, 0x08000000, 0x04000000, 0x02000000])
def test_a_clone_into_any_new_namespace_gets_eperm(flag: int) -> None:
    assert run(seccomp.CLONE, FORK | flag) == EPERM


def test_clone3_gets_enosys_so_that_the_c_library_falls_back_to_clone() -> None:
    assert run(seccomp.CLONE3, THREAD) == ENOSYS


@pytest.mark.parametrize(("family", "verdict"), [(1, ALLOW), (2, ALLOW), (10, ALLOW), (16, ALLOW), (40, EPERM)])
def test_sockets_of_every_family_but_the_hypervisors(family: int, verdict: int) -> None:
    assert run(seccomp.SOCKET, family) == verdict


@pytest.mark.parametrize(
    ("persona", "verdict"), [(0, ALLOW), (0xFFFFFFFF, ALLOW), (0x20008, ALLOW), (0x0400000, EPERM), (0x0040000, EPERM), (1, EPERM)]
)
def test_personality_only_linux_and_the_query(persona: int, verdict: int) -> None:
    assert run(seccomp.PERSONALITY, persona) == verdict


def test_another_architecture_or_the_x32_abi_is_killed() -> None:
    assert run(0, arch=0x40000003) == KILL  # i386: its own numbers would dodge the list
    assert run(seccomp.X32_SYSCALL_BIT | 272) == KILL
    assert run(seccomp.X32_SYSCALL_BIT | 0) == KILL


def test_a_jump_too_long_for_bpf_is_refused_when_the_filter_is_built() -> None:
    far: list[object] = [(seccomp.BPF_JEQ_K, "end", None, 1), *[(seccomp.BPF_RET_K, None, None, ALLOW)] * 300]
    far += ["end", (seccomp.BPF_RET_K, None, None, EPERM)]
    with pytest.raises(ValueError, match="does not fit"):
        seccomp._assemble(far)  # type: ignore[arg-type]


HEADER = Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h")  # linux-libc-dev, which `make deps` installs


def test_the_numbers_are_the_kernels() -> None:
    numbers = {m.group(1): int(m.group(2)) for m in re.finditer(r"#define __NR_(\w+) (\d+)", HEADER.read_text())}
    ruled = {"clone": seccomp.CLONE, "clone3": seccomp.CLONE3, "socket": seccomp.SOCKET, "personality": seccomp.PERSONALITY}
    table = {**seccomp.ALLOWED, **seccomp.REFUSED_EXAMPLES, **ruled}
    assert {name: numbers.get(name) for name in table} == table


def test_the_docker_profile_is_the_same_policy() -> None:
    profile = json.loads(seccomp.docker_profile())
    assert profile["defaultAction"] == "SCMP_ACT_ERRNO" and profile["defaultErrnoRet"] == errno.EPERM
    assert profile["architectures"] == ["SCMP_ARCH_X86_64"]
    plain = [rule for rule in profile["syscalls"] if rule["action"] == "SCMP_ACT_ALLOW" and "args" not in rule]
    assert len(plain) == 1 and set(plain[0]["names"]) == set(seccomp.ALLOWED)
    ruled = {name for rule in profile["syscalls"] if "args" in rule for name in rule["names"]}
    assert ruled == {"clone", "socket", "personality"}
    assert {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": errno.ENOSYS} in profile["syscalls"]
    every_name = {name for rule in profile["syscalls"] for name in rule["names"]}
    assert not every_name & set(seccomp.REFUSED_EXAMPLES)
    personas = sorted(rule["args"][0]["value"] for rule in profile["syscalls"] if rule["names"] == ["personality"])
    assert personas == sorted(seccomp.PERSONALITIES)
    assert seccomp.docker_security_options() == ["no-new-privileges", f"seccomp={seccomp.docker_profile()}"]
