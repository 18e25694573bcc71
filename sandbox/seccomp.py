"""The bwrap sandbox's seccomp filter: the system calls no probe needs, refused.

Place in the flow: ``bwrap.BwrapSandbox.command`` hands this filter to
bubblewrap (``--seccomp FD``), which installs it just before it executes the
runner, after its own namespace set-up: everything the candidate's code runs
is under it and cannot remove it (filters only ever add restrictions). The
Docker backend gets the same from Docker's default seccomp profile; this is
the same list, for hosts without Docker.

What it refuses is the usual first step of a kernel privilege escalation and
everything a Python probe never needs: new namespaces (``unshare``,
``setns``, ``clone`` with a ``CLONE_NEW*`` flag; ``clone3``, whose flags a
filter cannot read, answers ENOSYS so that the C library falls back to
``clone``), mounts, the kernel keyring, eBPF, perf events, ``ptrace`` and
cross-process memory access, kernel modules, kexec, ``userfaultfd`` and
io_uring. A refused call fails with EPERM (ENOSYS for ``clone3``), as on
Docker, so code sees an ordinary error instead of being killed.

The program is classic BPF, written out here rather than through libseccomp
(no dependency, and every instruction is readable). It is built for x86_64,
the only architecture we deploy; it checks the architecture first and kills
a process that calls in through another ABI (i386 or x32), which could
otherwise reach the same calls under other numbers.
"""

from __future__ import annotations

import errno
import platform
import struct

# <linux/audit.h>, <linux/seccomp.h>, <linux/filter.h>
AUDIT_ARCH_X86_64 = 0xC000003E
X32_SYSCALL_BIT = 0x40000000
SECCOMP_RET_KILL_PROCESS = 0x80000000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_ALLOW = 0x7FFF0000
BPF_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
BPF_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
BPF_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
BPF_JSET_K = 0x45  # BPF_JMP | BPF_JSET | BPF_K
BPF_RET_K = 0x06  # BPF_RET | BPF_K
# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6]
OFFSET_NR, OFFSET_ARCH, OFFSET_ARG0_LOW = 0, 4, 16

# x86_64 numbers (arch/x86/entry/syscalls/syscall_64.tbl) of the calls refused with EPERM.
REFUSED = {
    "ptrace": 101, "syslog": 103, "acct": 163, "mount": 165, "umount2": 166, "swapon": 167, "swapoff": 168,
    "reboot": 169, "iopl": 172, "ioperm": 173, "init_module": 175, "delete_module": 176, "quotactl": 179,
    "lookup_dcookie": 212, "kexec_load": 246, "add_key": 248, "request_key": 249, "keyctl": 250, "unshare": 272,
    "perf_event_open": 298, "name_to_handle_at": 303, "open_by_handle_at": 304, "setns": 308,
    "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312, "finit_module": 313, "kexec_file_load": 320,
    "bpf": 321, "userfaultfd": 323, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
    "mount_setattr": 442, "pivot_root": 155, "chroot": 161,
}  # fmt: skip
CLONE = 56
CLONE3 = 435
# CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET | NEWTIME: any of them refuses a clone.
CLONE_NEW_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x00000080


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def supported() -> bool:
    """Whether this host's architecture has a filter (x86_64 only)."""
    return platform.machine() in ("x86_64", "AMD64")


def filter_program() -> bytes:
    """The filter as bwrap reads it from ``--seccomp FD``: an array of ``struct sock_filter``."""
    deny = SECCOMP_RET_ERRNO | errno.EPERM
    refused = sorted(REFUSED.values())
    prog = [
        # Only the x86_64 ABI: another architecture's numbers would dodge the list.
        _insn(BPF_LD_W_ABS, 0, 0, OFFSET_ARCH),
        _insn(BPF_JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
        _insn(BPF_RET_K, 0, 0, SECCOMP_RET_KILL_PROCESS),
        _insn(BPF_LD_W_ABS, 0, 0, OFFSET_NR),
        # The x32 ABI shares the architecture value; its numbers carry this bit.
        _insn(BPF_JGE_K, 0, 1, X32_SYSCALL_BIT),
        _insn(BPF_RET_K, 0, 0, SECCOMP_RET_KILL_PROCESS),
    ]
    # Each refused number jumps forward to the shared "deny" return after the list.
    # Jump offsets count instructions after the next one. Each refused number
    # jumps to the shared "deny" return, the last instruction: past the rest
    # of the list and the six instructions of the block below it.
    for i, number in enumerate(refused):
        prog.append(_insn(BPF_JEQ_K, len(refused) - i + 5, 0, number))
    prog += [
        _insn(BPF_JEQ_K, 0, 2, CLONE),  # clone: read its flags; anything else: on to clone3
        _insn(BPF_LD_W_ABS, 0, 0, OFFSET_ARG0_LOW),
        _insn(BPF_JSET_K, 3, 2, CLONE_NEW_FLAGS),  # a new namespace: deny; a thread or a fork: allow
        _insn(BPF_JEQ_K, 0, 1, CLONE3),
        _insn(BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.ENOSYS),
        _insn(BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW),
        _insn(BPF_RET_K, 0, 0, deny),
    ]
    return b"".join(prog)
