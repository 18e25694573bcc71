"""The sandboxes' seccomp policy, one allowlist for both backends: what a probe may ask of the kernel.

Place in the flow: ``bwrap.BwrapSandbox.command`` hands :func:`filter_program`
to bubblewrap (``--seccomp FD``), which installs it just before it executes
the runner; ``docker.DockerSandbox`` passes :func:`docker_profile` as the
container's ``seccomp=`` security option, and the launcher refuses a create
body whose profile is not exactly this one (``launcher_policy``). Everything
the candidate's code runs is under it and cannot remove it (filters only
ever add restrictions).

It is an allowlist (issue 28): the system calls in :data:`ALLOWED`, and
``clone``, ``socket`` and ``personality`` with the arguments below, are
allowed; every other call fails with EPERM, so code sees an ordinary error
instead of being killed, and a system call added to the kernel later is
refused until it is listed here. The list is Docker's default profile for a
container without capabilities, less what no probe needs and what has been
the first step of kernel privilege escalations: io_uring (Docker 20.10's
default allows it; bwrap's old denylist happened to refuse it),
``name_to_handle_at``. Refused as on Docker without capabilities: new
namespaces (``unshare``, ``setns``, ``clone`` with a ``CLONE_NEW*`` flag;
``clone3``, whose flags a filter cannot read, answers ENOSYS so that the C
library falls back to ``clone``), mounts and the new mount API, the kernel
keyring, eBPF, perf events, ``ptrace`` and cross-process memory access,
``userfaultfd``, kernel modules, kexec, NUMA memory policies, clock setting.

One source, two forms. Docker compiles :func:`docker_profile` with its
libseccomp; bwrap reads classic BPF, which :func:`filter_program` writes out
here (no dependency, and every instruction is readable): the architecture
first (a process calling in through another ABI, i386 or x32, which could
reach the same calls under other numbers, is killed, as libseccomp does for
a profile of one architecture), then the calls with argument rules, then
the allowed numbers as ranges. Numbers are x86_64's, the only architecture
we deploy (arch/x86/entry/syscalls/syscall_64.tbl; a test compares them with
the kernel headers where those are installed).
"""

from __future__ import annotations

import errno
import json
import platform
import struct
from functools import cache

# The allowed system calls without argument rules, by x86_64 number.
ALLOWED: dict[str, int] = {
    "read": 0, "write": 1, "open": 2, "close": 3, "stat": 4, "fstat": 5, "lstat": 6, "poll": 7, "lseek": 8, "mmap": 9, "mprotect": 10,
    "munmap": 11, "brk": 12, "rt_sigaction": 13, "rt_sigprocmask": 14, "rt_sigreturn": 15, "ioctl": 16, "pread64": 17, "pwrite64": 18,
    "readv": 19, "writev": 20, "access": 21, "pipe": 22, "select": 23, "sched_yield": 24, "mremap": 25, "msync": 26, "mincore": 27,
    "madvise": 28, "shmget": 29, "shmat": 30, "shmctl": 31, "dup": 32, "dup2": 33, "pause": 34, "nanosleep": 35, "getitimer": 36, "alarm": 37,
    "setitimer": 38, "getpid": 39, "sendfile": 40, "connect": 42, "accept": 43, "sendto": 44, "recvfrom": 45, "sendmsg": 46, "recvmsg": 47,
    "shutdown": 48, "bind": 49, "listen": 50, "getsockname": 51, "getpeername": 52, "socketpair": 53, "setsockopt": 54, "getsockopt": 55,
    "fork": 57, "vfork": 58, "execve": 59, "exit": 60, "wait4": 61, "kill": 62, "uname": 63, "semget": 64, "semop": 65, "semctl": 66,
    "shmdt": 67, "msgget": 68, "msgsnd": 69, "msgrcv": 70, "msgctl": 71, "fcntl": 72, "flock": 73, "fsync": 74, "fdatasync": 75,
    "truncate": 76, "ftruncate": 77, "getdents": 78, "getcwd": 79, "chdir": 80, "fchdir": 81, "rename": 82, "mkdir": 83, "rmdir": 84,
    "creat": 85, "link": 86, "unlink": 87, "symlink": 88, "readlink": 89, "chmod": 90, "fchmod": 91, "chown": 92, "fchown": 93, "lchown": 94,
    "umask": 95, "gettimeofday": 96, "getrlimit": 97, "getrusage": 98, "sysinfo": 99, "times": 100, "getuid": 102, "getgid": 104,
    "setuid": 105, "setgid": 106, "geteuid": 107, "getegid": 108, "setpgid": 109, "getppid": 110, "getpgrp": 111, "setsid": 112,
    "setreuid": 113, "setregid": 114, "getgroups": 115, "setgroups": 116, "setresuid": 117, "getresuid": 118, "setresgid": 119,
    "getresgid": 120, "getpgid": 121, "setfsuid": 122, "setfsgid": 123, "getsid": 124, "capget": 125, "capset": 126, "rt_sigpending": 127,
    "rt_sigtimedwait": 128, "rt_sigqueueinfo": 129, "rt_sigsuspend": 130, "sigaltstack": 131, "utime": 132, "mknod": 133, "statfs": 137,
    "fstatfs": 138, "getpriority": 140, "setpriority": 141, "sched_setparam": 142, "sched_getparam": 143, "sched_setscheduler": 144,
    "sched_getscheduler": 145, "sched_get_priority_max": 146, "sched_get_priority_min": 147, "sched_rr_get_interval": 148, "mlock": 149,
    "munlock": 150, "mlockall": 151, "munlockall": 152, "prctl": 157, "arch_prctl": 158, "adjtimex": 159, "setrlimit": 160, "sync": 162,
    "gettid": 186, "readahead": 187, "setxattr": 188, "lsetxattr": 189, "fsetxattr": 190, "getxattr": 191, "lgetxattr": 192, "fgetxattr": 193,
    "listxattr": 194, "llistxattr": 195, "flistxattr": 196, "removexattr": 197, "lremovexattr": 198, "fremovexattr": 199, "tkill": 200,
    "time": 201, "futex": 202, "sched_setaffinity": 203, "sched_getaffinity": 204, "set_thread_area": 205, "io_setup": 206, "io_destroy": 207,
    "io_getevents": 208, "io_submit": 209, "io_cancel": 210, "get_thread_area": 211, "epoll_create": 213, "epoll_ctl_old": 214,
    "epoll_wait_old": 215, "remap_file_pages": 216, "getdents64": 217, "set_tid_address": 218, "restart_syscall": 219, "semtimedop": 220,
    "fadvise64": 221, "timer_create": 222, "timer_settime": 223, "timer_gettime": 224, "timer_getoverrun": 225, "timer_delete": 226,
    "clock_gettime": 228, "clock_getres": 229, "clock_nanosleep": 230, "exit_group": 231, "epoll_wait": 232, "epoll_ctl": 233, "tgkill": 234,
    "utimes": 235, "mq_open": 240, "mq_unlink": 241, "mq_timedsend": 242, "mq_timedreceive": 243, "mq_notify": 244, "mq_getsetattr": 245,
    "waitid": 247, "ioprio_set": 251, "ioprio_get": 252, "inotify_init": 253, "inotify_add_watch": 254, "inotify_rm_watch": 255, "openat": 257,
    "mkdirat": 258, "mknodat": 259, "fchownat": 260, "futimesat": 261, "newfstatat": 262, "unlinkat": 263, "renameat": 264, "linkat": 265,
    "symlinkat": 266, "readlinkat": 267, "fchmodat": 268, "faccessat": 269, "pselect6": 270, "ppoll": 271, "set_robust_list": 273,
    "get_robust_list": 274, "splice": 275, "tee": 276, "sync_file_range": 277, "vmsplice": 278, "utimensat": 280, "epoll_pwait": 281,
    "signalfd": 282, "timerfd_create": 283, "eventfd": 284, "fallocate": 285, "timerfd_settime": 286, "timerfd_gettime": 287, "accept4": 288,
    "signalfd4": 289, "eventfd2": 290, "epoll_create1": 291, "dup3": 292, "pipe2": 293, "inotify_init1": 294, "preadv": 295, "pwritev": 296,
    "rt_tgsigqueueinfo": 297, "recvmmsg": 299, "fanotify_mark": 301, "prlimit64": 302, "clock_adjtime": 305, "syncfs": 306, "sendmmsg": 307,
    "getcpu": 309, "sched_setattr": 314, "sched_getattr": 315, "renameat2": 316, "seccomp": 317, "getrandom": 318, "memfd_create": 319,
    "execveat": 322, "membarrier": 324, "mlock2": 325, "copy_file_range": 326, "preadv2": 327, "pwritev2": 328, "pkey_mprotect": 329,
    "pkey_alloc": 330, "pkey_free": 331, "statx": 332, "io_pgetevents": 333, "rseq": 334, "pidfd_send_signal": 424, "pidfd_open": 434,
    "close_range": 436, "openat2": 437, "faccessat2": 439, "epoll_pwait2": 441, "landlock_create_ruleset": 444, "landlock_add_rule": 445,
    "landlock_restrict_self": 446, "memfd_secret": 447, "process_mrelease": 448, "futex_waitv": 449,
}  # fmt: skip

CLONE, CLONE3, SOCKET, PERSONALITY = 56, 435, 41, 135
# CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET: a clone with any of them is refused
# (Docker's mask; CLONE_NEWTIME cannot be asked of clone(), whose low byte is the exit signal).
CLONE_NEW_FLAGS = 0x7E020000
AF_VSOCK = 40  # a socket family that reaches the host's hypervisor without a network namespace
# personality(2) values a C library or a runtime asks for: the default, ADDR_NO_RANDOMIZE-less Linux variants
# and the query (0xffffffff); anything else (READ_IMPLIES_EXEC, other ABIs) is refused.
PERSONALITIES = (0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF)

# Refused calls the tests make in real sandboxes of both backends (tests/sandbox/test_seccomp.py).
REFUSED_EXAMPLES: dict[str, int] = {
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428, "move_mount": 429,
    "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442, "mount": 165,
    "umount2": 166, "pivot_root": 155, "chroot": 161, "add_key": 248, "request_key": 249, "keyctl": 250,
    "userfaultfd": 323, "bpf": 321, "perf_event_open": 298, "unshare": 272, "setns": 308, "ptrace": 101,
    "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312, "pidfd_getfd": 438, "kexec_load": 246,
    "init_module": 175, "finit_module": 313, "delete_module": 176, "name_to_handle_at": 303,
    "open_by_handle_at": 304, "syslog": 103, "acct": 163, "swapon": 167, "reboot": 169, "iopl": 172,
    "ioperm": 173, "quotactl": 179, "lookup_dcookie": 212, "mbind": 237, "set_mempolicy": 238,
    "get_mempolicy": 239, "settimeofday": 164, "clock_settime": 227, "modify_ldt": 154, "vhangup": 153,
    "fanotify_init": 300, "sethostname": 170,
}  # fmt: skip

# <linux/audit.h>, <linux/seccomp.h>, <linux/filter.h>
AUDIT_ARCH_X86_64 = 0xC000003E
X32_SYSCALL_BIT = 0x40000000
SECCOMP_RET_KILL_PROCESS = 0x80000000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_ALLOW = 0x7FFF0000
BPF_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
BPF_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
BPF_JGT_K = 0x25  # BPF_JMP | BPF_JGT | BPF_K
BPF_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
BPF_JSET_K = 0x45  # BPF_JMP | BPF_JSET | BPF_K
BPF_RET_K = 0x06  # BPF_RET | BPF_K
# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6]. Every argument ruled on is an
# int or flags in the low 32 bits, which the kernel reads alone.
OFFSET_NR, OFFSET_ARCH, OFFSET_ARG0_LOW = 0, 4, 16

DENY = SECCOMP_RET_ERRNO | errno.EPERM


def supported() -> bool:
    """Whether this host's architecture has a filter (x86_64 only)."""
    return platform.machine() in ("x86_64", "AMD64")


def allowed_ranges() -> list[tuple[int, int]]:
    """The allowed numbers (without argument rules) as sorted, inclusive ranges."""
    ranges: list[list[int]] = []
    for number in sorted(ALLOWED.values()):
        if ranges and ranges[-1][1] == number - 1:
            ranges[-1][1] = number
        else:
            ranges.append([number, number])
    return [(low, high) for low, high in ranges]


# An instruction before its jumps are resolved: (code, jump if true, jump if false, k); a jump is a label or
# None for the next instruction.
_Insn = tuple[int, str | None, str | None, int]


def _assemble(program: list[_Insn | str]) -> bytes:
    """Resolve labels (the strings in ``program`` mark the next instruction) into BPF's 8-bit forward offsets."""
    labels: dict[str, int] = {}
    insns: list[_Insn] = []
    for item in program:
        if isinstance(item, str):
            labels[item] = len(insns)
        else:
            insns.append(item)
    out = []
    for index, (code, true, false, k) in enumerate(insns):
        offsets = []
        for target in (true, false):
            offset = 0 if target is None else labels[target] - index - 1
            if not 0 <= offset <= 255:
                raise ValueError(f"seccomp filter: a jump of {offset} instructions does not fit BPF's 8 bits")
            offsets.append(offset)
        out.append(struct.pack("=HBBI", code, offsets[0], offsets[1], k))
    return b"".join(out)


@cache
def filter_program() -> bytes:
    """The filter as bwrap reads it from ``--seccomp FD``: an array of ``struct sock_filter``."""
    program: list[_Insn | str] = [
        # Only the x86_64 ABI: another architecture's numbers would dodge the list.
        (BPF_LD_W_ABS, None, None, OFFSET_ARCH),
        (BPF_JEQ_K, "native", None, AUDIT_ARCH_X86_64),
        (BPF_RET_K, None, None, SECCOMP_RET_KILL_PROCESS),
        "native",
        (BPF_LD_W_ABS, None, None, OFFSET_NR),
        # The x32 ABI shares the architecture value; its numbers carry this bit.
        (BPF_JGE_K, "kill", None, X32_SYSCALL_BIT),
        (BPF_JEQ_K, "clone", None, CLONE),
        (BPF_JEQ_K, "enosys", None, CLONE3),
        (BPF_JEQ_K, "socket", None, SOCKET),
        (BPF_JEQ_K, "personality", None, PERSONALITY),
    ]
    # Ranges ascending: past a range's top, on to the next; else inside it or in the gap below it.
    ranges = allowed_ranges()
    for i, (low, high) in enumerate(ranges):
        program.append((BPF_JGT_K, f"range{i + 1}" if i + 1 < len(ranges) else "deny", None, high))
        program.append((BPF_JGE_K, "allow", "deny", low))
        program.append(f"range{i + 1}")
    program += [
        # Blocks of the calls with argument rules (BPF jumps only forward: the returns come after them).
        "clone",  # a thread or a fork: allowed; a new namespace: refused
        (BPF_LD_W_ABS, None, None, OFFSET_ARG0_LOW),
        (BPF_JSET_K, "deny", "allow", CLONE_NEW_FLAGS),
        "socket",  # any family the network namespace offers, except the hypervisor's
        (BPF_LD_W_ABS, None, None, OFFSET_ARG0_LOW),
        (BPF_JEQ_K, "deny", "allow", AF_VSOCK),
        "personality",
        (BPF_LD_W_ABS, None, None, OFFSET_ARG0_LOW),
    ]
    program += [(BPF_JEQ_K, "allow", None, value) for value in PERSONALITIES]
    program += [
        "deny",
        (BPF_RET_K, None, None, DENY),
        "enosys",
        (BPF_RET_K, None, None, SECCOMP_RET_ERRNO | errno.ENOSYS),
        "kill",
        (BPF_RET_K, None, None, SECCOMP_RET_KILL_PROCESS),
        "allow",
        (BPF_RET_K, None, None, SECCOMP_RET_ALLOW),
    ]
    return _assemble(program)


@cache
def docker_profile() -> str:
    """The same policy as a Docker seccomp profile (JSON, one line, the same bytes every time): ``seccomp=<this>``."""
    profile = {
        "defaultAction": "SCMP_ACT_ERRNO",
        "defaultErrnoRet": errno.EPERM,
        # One architecture: libseccomp kills a call made through another ABI (i386, x32).
        "architectures": ["SCMP_ARCH_X86_64"],
        "syscalls": [
            {"names": sorted(ALLOWED), "action": "SCMP_ACT_ALLOW"},
            {
                "names": ["clone"],
                "action": "SCMP_ACT_ALLOW",
                "args": [{"index": 0, "value": CLONE_NEW_FLAGS, "valueTwo": 0, "op": "SCMP_CMP_MASKED_EQ"}],
            },
            {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": errno.ENOSYS},
            {"names": ["socket"], "action": "SCMP_ACT_ALLOW", "args": [{"index": 0, "value": AF_VSOCK, "valueTwo": 0, "op": "SCMP_CMP_NE"}]},
            *(
                {"names": ["personality"], "action": "SCMP_ACT_ALLOW", "args": [{"index": 0, "value": value, "valueTwo": 0, "op": "SCMP_CMP_EQ"}]}
                for value in PERSONALITIES
            ),
        ],
    }
    return json.dumps(profile, separators=(",", ":"), sort_keys=True)


def docker_security_options() -> list[str]:
    """A sandbox container's ``SecurityOpt``, exactly (the launcher refuses any other): no setuid gains, this policy."""
    return ["no-new-privileges", f"seccomp={docker_profile()}"]
