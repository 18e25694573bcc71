"""Process-wide settings a candidate's import or call must leave as it found them; read around every probe.

Place in the flow: ``child.run_probe`` (in the sandbox, in the probe's forked
child) takes a :func:`snapshot` before it imports the candidate's code and
another after the import, then one before and after the probe function runs
the candidate's calls. A difference fails the probe (:func:`changes`,
reported as a ``settings_changed`` frame), in every package, whatever the
result was: a function that switches grad mode off, turns on deterministic
algorithms or anomaly detection, sets the default dtype to float64, silences
NumPy's floating-point warnings or leaves a dispatch mode entered returns the
right values and leaves the caller's next computation different (a backward
that raises, NaN-filled ``torch.empty``, float64 parameters). Red teams found
this class accepted at 100 in ten packages (docs/grading-integrity.md).

What is read, and why not more: settings a caller's next computation
depends on and that can be read back. Left out on purpose, because torch
changes them itself the first time Dynamo, Inductor or ``opcheck`` load
(which a probe may do, with no candidate code involved): ``os.environ``,
``warnings.filters``, the recursion limit and the identity of torch's
functions; and the random number generators, which a call may consume or
(where a statement says so) seed.

The thread count needs care: the sandbox runs torch on one thread, so a call
that sets one thread and never restores it would look unchanged. Calls from
the candidate's file (``solution.py``) to ``torch.get_num_threads`` see a
stand-in count (:data:`STAND_IN_THREADS`) that only their own
``torch.set_num_threads`` moves; the real count is what it was, and torch's
own code (Inductor sizes its kernels by it) and the probes keep reading the
real one. Setting the stand-in count back really sets the sandbox's count.
The import sees one stand-in count and the probe's calls another
(:func:`move_thread_stand_in_for_calls`): a call that puts back a count read
when its module was imported, instead of the one it found, leaves the
caller's count changed, and only a count that moved in between shows it.

The names in :data:`SETTINGS` are the only words of a report a hidden
probe's message may show (``grader/feedback.py``): the child shares its
process with the candidate's code, which could write any text.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

# Counts no solution picks, so that setting 1 (or the core count) and leaving it shows: the one the candidate's
# import sees, and the one its calls find (a caller may change the count between the two).
STAND_IN_THREADS = 3
CALLS_STAND_IN_THREADS = 7


def _torch() -> Any:
    return sys.modules.get("torch")


def _numpy() -> Any:
    return sys.modules.get("numpy")


class _Threads:
    """The candidate's view of torch's thread count (see the module docstring)."""

    def __init__(self) -> None:
        self.count = STAND_IN_THREADS
        # The stand-in count that stands for the sandbox's real one: setting it restores the real count.
        self.home = STAND_IN_THREADS
        self.solution_path = ""
        self.real: int | None = None


THREADS = _Threads()


def _from_solution(depth: int = 2) -> bool:
    """Whether the function ``depth`` frames up was called from the candidate's file."""
    try:
        return THREADS.solution_path != "" and sys._getframe(depth).f_code.co_filename == THREADS.solution_path
    except ValueError:
        return False


def install_thread_stand_in(solution_path: str) -> None:
    """Give calls from ``solution_path`` the stand-in thread count (once per process, before the candidate's import)."""
    torch = _torch()
    if torch is None or THREADS.real is not None:
        return
    THREADS.solution_path = solution_path
    THREADS.real = int(torch.get_num_threads())
    real_get: Callable[[], int] = torch.get_num_threads
    real_set: Callable[[int], None] = torch.set_num_threads

    @functools.wraps(real_get)
    def get_num_threads() -> int:
        return THREADS.count if _from_solution() else real_get()

    @functools.wraps(real_set)
    def set_num_threads(n: int) -> None:
        if not _from_solution():
            real_set(n)
            return
        # The stand-in count stands for the sandbox's real one: setting it back restores that.
        real = THREADS.real
        real_set(real if real is not None and type(n) is int and n == THREADS.home else n)
        THREADS.count = int(n)

    torch.get_num_threads = get_num_threads
    torch.set_num_threads = set_num_threads


def move_thread_stand_in_for_calls() -> None:
    """Show the probe's calls another stand-in count than the import saw, as a caller that sets its own would.

    Called once the candidate's module is imported, before the probe's calls. A count the import itself left
    changed is not moved (it is already reported).
    """
    if THREADS.real is None or THREADS.count != THREADS.home:
        return
    THREADS.count = THREADS.home = CALLS_STAND_IN_THREADS


def _subnormals_flushed() -> bool:
    """Whether the CPU flushes subnormal numbers to zero (``torch.set_flush_denormal(True)``): there is no getter."""
    np = _numpy()
    if np is None:
        return False
    with np.errstate(all="ignore"):  # whatever the candidate's code made of NumPy's warnings (read separately)
        tiny = np.array([1e-39], dtype=np.float32)
        return bool((tiny * np.float32(1.0))[0] == 0)


def _dispatch_modes(torch: Any) -> int:
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

    return len(_get_current_dispatch_mode_stack())


def _function_modes(torch: Any) -> int:
    from torch.overrides import _get_current_function_mode_stack

    return len(_get_current_function_mode_stack())  # type: ignore[no-untyped-call]


def _op_determinism(tf: Any) -> bool:
    from tensorflow.python.framework import config as tf_config  # no public getter in TF 2.21

    return bool(tf_config.is_op_determinism_enabled())


Reader = Callable[[Any], Any]

# Each setting's name (the report's vocabulary) and how to read it from its library's module.
_TORCH: dict[str, Reader] = {
    "torch default dtype": lambda torch: str(torch.get_default_dtype()),
    "torch default device": lambda torch: str(torch.get_default_device()),
    "torch grad mode": lambda torch: torch.is_grad_enabled(),
    "torch inference mode": lambda torch: torch.is_inference_mode_enabled(),
    "torch deterministic algorithms": lambda torch: (
        torch.are_deterministic_algorithms_enabled(),
        torch.is_deterministic_algorithms_warn_only_enabled(),
        torch.get_deterministic_debug_mode(),
    ),
    "torch number of threads": lambda _torch: THREADS.count,
    "torch anomaly detection": lambda torch: (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()),
    "torch float32 matmul precision": lambda torch: torch.get_float32_matmul_precision(),
    "torch warn-always": lambda torch: torch.is_warn_always_enabled(),
    "torch autocast on CPU": lambda torch: (torch.is_autocast_enabled("cpu"), str(torch.get_autocast_dtype("cpu"))),
    "torch oneDNN backend": lambda torch: bool(torch.backends.mkldnn.enabled),
    "torch opt_einsum backend": lambda torch: (bool(torch.backends.opt_einsum.enabled), str(torch.backends.opt_einsum.strategy)),
    "torch dispatch modes entered": _dispatch_modes,
    "torch function modes entered": _function_modes,
    "torch saved-tensor hooks": lambda torch: torch._C._autograd._top_saved_tensors_default_hooks(False) is not None,
    "torch autograd multithreading": lambda torch: bool(torch._C._is_multithreading_enabled()),
    "torch autograd fallback mode": lambda torch: str(torch._C._get_autograd_fallback_mode()),
}
_NUMPY: dict[str, Reader] = {
    "NumPy floating-point error handling": lambda np: sorted(np.geterr().items()),
}
_TENSORFLOW: dict[str, Reader] = {
    "TensorFlow run functions eagerly": lambda tf: bool(tf.config.functions_run_eagerly()),
    "TensorFlow XLA JIT": lambda tf: str(tf.config.optimizer.get_jit()),
    "TensorFlow graph optimizer options": lambda tf: sorted(tf.config.optimizer.get_experimental_options().items()),
    "TensorFlow op determinism": _op_determinism,
    "TensorFlow soft device placement": lambda tf: bool(tf.config.get_soft_device_placement()),
}
_KERAS: dict[str, Reader] = {
    "Keras float type": lambda keras: str(keras.backend.floatx()),
    "Keras dtype policy": lambda keras: str(keras.config.dtype_policy().name),
}
_SUBNORMALS = "subnormal numbers flushed to zero"

#: Every setting a snapshot may hold: the fixed vocabulary of a report (see the module docstring).
SETTINGS: tuple[str, ...] = (*_TORCH, _SUBNORMALS, *_NUMPY, *_TENSORFLOW, *_KERAS)


def snapshot() -> dict[str, Any]:
    """The process-wide settings of the libraries this process has imported (none is imported here)."""
    settings: dict[str, Any] = {_SUBNORMALS: _subnormals_flushed()}
    tf = sys.modules.get("tensorflow")
    tf = tf if tf is not None and hasattr(tf, "config") else None  # a TensorFlow half imported has no settings yet
    for module, readers in (
        (_torch(), _TORCH),
        (_numpy(), _NUMPY),
        (tf, _TENSORFLOW),
        (sys.modules.get("keras") if tf is not None else None, _KERAS),
    ):
        if module is not None:
            settings.update({name: read(module) for name, read in readers.items()})
    return settings


def changes(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """``name (was X, now Y)`` for each setting that differs; a setting only one side could read is not compared."""
    compared = [name for name in SETTINGS if name in before and name in after]
    return [f"{name} (was {before[name]}, now {after[name]})" for name in compared if before[name] != after[name]]


def named_in(message: str) -> list[str]:
    """The settings a report's message names, in :data:`SETTINGS` order: what a hidden probe's message may repeat."""
    return [name for name in SETTINGS if f"{name} (was " in message]
