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

The names in :data:`SETTINGS` are the only words of a report a hidden
probe's message may show (``grader/feedback.py``): the child shares its
process with the candidate's code, which could write any text.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

# A count no solution picks, so that setting 1 (or the core count) and leaving it shows.
STAND_IN_THREADS = 3


def _torch() -> Any:
    return sys.modules.get("torch")


def _numpy() -> Any:
    return sys.modules.get("numpy")


class _Threads:
    """The candidate's view of torch's thread count (see the module docstring)."""

    def __init__(self) -> None:
        self.count = STAND_IN_THREADS
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
        real_set(real if real is not None and type(n) is int and n == STAND_IN_THREADS else n)
        THREADS.count = int(n)

    torch.get_num_threads = get_num_threads
    torch.set_num_threads = set_num_threads


def _subnormals_flushed() -> bool:
    """Whether the CPU flushes subnormal numbers to zero (``torch.set_flush_denormal(True)``): there is no getter."""
    np = _numpy()
    if np is None:
        return False
    with np.errstate(all="ignore"):  # whatever the candidate's code made of NumPy's warnings (read separately)
        tiny = np.array([1e-39], dtype=np.float32)
        return bool((tiny * np.float32(1.0))[0] == 0)


def _torch_settings(torch: Any) -> dict[str, Any]:
    from torch.overrides import _get_current_function_mode_stack
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

    return {
        "torch default dtype": str(torch.get_default_dtype()),
        "torch default device": str(torch.get_default_device()),
        "torch grad mode": torch.is_grad_enabled(),
        "torch inference mode": torch.is_inference_mode_enabled(),
        "torch deterministic algorithms": (
            torch.are_deterministic_algorithms_enabled(),
            torch.is_deterministic_algorithms_warn_only_enabled(),
            torch.get_deterministic_debug_mode(),
        ),
        "torch number of threads": THREADS.count,
        "torch anomaly detection": (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()),
        "torch float32 matmul precision": torch.get_float32_matmul_precision(),
        "torch warn-always": torch.is_warn_always_enabled(),
        "torch autocast on CPU": (torch.is_autocast_enabled("cpu"), str(torch.get_autocast_dtype("cpu"))),
        "torch oneDNN backend": bool(torch.backends.mkldnn.enabled),
        "torch opt_einsum backend": (bool(torch.backends.opt_einsum.enabled), str(torch.backends.opt_einsum.strategy)),
        "torch dispatch modes entered": len(_get_current_dispatch_mode_stack()),
        "torch function modes entered": len(_get_current_function_mode_stack()),  # type: ignore[no-untyped-call]
        "torch saved-tensor hooks": torch._C._autograd._top_saved_tensors_default_hooks(False) is not None,
        "torch autograd multithreading": bool(torch._C._is_multithreading_enabled()),
        "torch autograd fallback mode": str(torch._C._get_autograd_fallback_mode()),
    }


def _tensorflow_settings(tf: Any) -> dict[str, Any]:
    from tensorflow.python.framework import config as tf_config

    settings: dict[str, Any] = {
        "TensorFlow run functions eagerly": bool(tf.config.functions_run_eagerly()),
        "TensorFlow XLA JIT": str(tf.config.optimizer.get_jit()),
        "TensorFlow graph optimizer options": sorted(tf.config.optimizer.get_experimental_options().items()),
        "TensorFlow op determinism": bool(tf_config.is_op_determinism_enabled()),
        "TensorFlow soft device placement": bool(tf.config.get_soft_device_placement()),
    }
    keras = sys.modules.get("keras")
    if keras is not None:
        settings["Keras float type"] = str(keras.backend.floatx())
        settings["Keras dtype policy"] = str(keras.config.dtype_policy().name)
    return settings


#: Every setting a snapshot may hold: the fixed vocabulary of a report (see the module docstring).
SETTINGS: tuple[str, ...] = (
    "torch default dtype",
    "torch default device",
    "torch grad mode",
    "torch inference mode",
    "torch deterministic algorithms",
    "torch number of threads",
    "torch anomaly detection",
    "torch float32 matmul precision",
    "torch warn-always",
    "torch autocast on CPU",
    "torch oneDNN backend",
    "torch opt_einsum backend",
    "torch dispatch modes entered",
    "torch function modes entered",
    "torch saved-tensor hooks",
    "torch autograd multithreading",
    "torch autograd fallback mode",
    "subnormal numbers flushed to zero",
    "NumPy floating-point error handling",
    "TensorFlow run functions eagerly",
    "TensorFlow XLA JIT",
    "TensorFlow graph optimizer options",
    "TensorFlow op determinism",
    "TensorFlow soft device placement",
    "Keras float type",
    "Keras dtype policy",
)


def snapshot() -> dict[str, Any]:
    """The process-wide settings of the libraries this process has imported (none is imported here)."""
    settings: dict[str, Any] = {"subnormal numbers flushed to zero": _subnormals_flushed()}
    torch = _torch()
    if torch is not None:
        settings.update(_torch_settings(torch))
    np = _numpy()
    if np is not None:
        settings["NumPy floating-point error handling"] = sorted(np.geterr().items())
    tf = sys.modules.get("tensorflow")
    if tf is not None and hasattr(tf, "config"):
        settings.update(_tensorflow_settings(tf))
    return settings


def changes(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """``name (was X, now Y)`` for each setting that differs; a setting only one side could read is not compared."""
    compared = [name for name in SETTINGS if name in before and name in after]
    return [f"{name} (was {before[name]}, now {after[name]})" for name in compared if before[name] != after[name]]


def named_in(message: str) -> list[str]:
    """The settings a report's message names, in :data:`SETTINGS` order: what a hidden probe's message may repeat."""
    return [name for name in SETTINGS if f"{name} (was " in message]
