"""What the public and hidden probes of compensated-summation share, imported by both as ``probe_common``."""

from __future__ import annotations

import contextlib
import linecache
import types
from typing import Any

import numpy as np
import torch
from torch.overrides import TorchFunctionMode

# ---------------------------------------------------------------- the rules, watched

# Ops that accumulate in float64 inside on CPU: cumsum(float32)[-1] and
# var_mean/std_mean's mean are float64 sums rounded once.
BANNED_OPS = {"cumsum", "cumulative_trapezoid", "var", "std", "var_mean", "std_mean"}
BANNED_PARTS = ("batch_norm", "layer_norm", "group_norm", "instance_norm")
OUT_OF_TORCH = {"item", "tolist", "numpy", "__float__", "__array__", "__complex__"}
WIDE_DTYPES = (torch.float64, torch.complex128)
# What a torch call on values may hand back besides tensors: booleans and metadata (shapes, dtypes, ...).
METADATA = (bool, type(None), torch.Size, torch.dtype, torch.device, torch.layout, torch.memory_format)
METADATA_INTS = {
    "size",
    "stride",
    "numel",
    "nelement",
    "dim",
    "ndimension",
    "storage_offset",
    "element_size",
    "get_device",
    "__len__",
    "__hash__",
    "__get__",
    "dim_order",
}
METADATA_STRS = {"type"}


def _tensors(obj: Any) -> list[torch.Tensor]:
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, list | tuple):
        return [t for item in obj for t in _tensors(item)]
    if isinstance(obj, dict):
        return [t for item in obj.values() for t in _tensors(item)]
    return []


def _storage_key(t: torch.Tensor) -> int:
    """The address of a tensor's memory (0 for one that holds none): views and in-place writes share it."""
    try:
        return int(t.untyped_storage().data_ptr()) if t.numel() else 0
    except Exception:  # noqa: BLE001 - a tensor without ordinary storage holds nothing to follow
        return 0


def _outside(obj: Any, name: str) -> str | None:
    """The type of the first thing in a torch call's result that is neither a tensor nor metadata, or None."""
    if isinstance(obj, (torch.Tensor, *METADATA)):
        return None
    if isinstance(obj, int):
        return None if name in METADATA_INTS else "int"
    if isinstance(obj, str):
        return None if name in METADATA_STRS else "str"
    if isinstance(obj, list | tuple):
        for item in obj:
            found = _outside(item, name)
            if found:
                return found
        return None
    if isinstance(obj, dict):
        return _outside(list(obj.values()), name)
    return type(obj).__name__


class RuleWatch(TorchFunctionMode):
    """Notes every torch call the rules forbid while the candidate's code runs.

    Values may not leave torch in any form. A float tensor holds values, and
    so does every tensor computed from one (an integer view of its bits, its
    exponents, a mask), followed through views and in-place writes by the
    memory it lives in. A torch call on values that hands back anything but
    tensors, booleans and metadata (a Python number, a list, a string, a
    storage, a NumPy array, a DLPack capsule) takes them out of torch.
    """

    def __init__(self) -> None:
        super().__init__()
        self.violations: list[str] = []
        # Memory that holds values, by address; kept alive while the watch lives, so no address is reused.
        self._holds_values: dict[int, Any] = {}

    def _note(self, text: str) -> None:
        if text not in self.violations and len(self.violations) < 5:
            self.violations.append(text)

    def _is_values(self, t: torch.Tensor) -> bool:
        if t.is_floating_point() or t.is_complex():
            return True
        key = _storage_key(t)
        return key != 0 and key in self._holds_values

    def _mark(self, t: torch.Tensor) -> None:
        key = _storage_key(t)
        if key and key not in self._holds_values:
            self._holds_values[key] = t.untyped_storage()

    def forget(self) -> None:
        """Between calls: let the memory go."""
        self._holds_values.clear()

    def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        name = str(getattr(func, "__name__", func))
        base = name.split(".")[0]
        named_exit = base in OUT_OF_TORCH and any(t.is_floating_point() for t in _tensors(args))
        if named_exit:
            self._note(f"{name}() takes float values out of torch")
        elif base.strip("_") in BANNED_OPS or any(part in base for part in BANNED_PARTS):
            self._note(f"{name} (it accumulates in float64 internally)")
        carries_values = any(self._is_values(t) for t in _tensors(args) + _tensors(kwargs))
        out = func(*args, **kwargs)
        for t in _tensors(out):
            if t.dtype in WIDE_DTYPES:
                self._note(f"{name} made a {str(t.dtype).removeprefix('torch.')} tensor")
                break
        if carries_values:
            leaked = None if named_exit else _outside(out, base)
            if leaked:
                self._note(f"{name}() takes values computed from x out of torch (as a {leaked})")
            # A float result is values by its dtype; an integer or boolean one is followed by its memory. So is
            # whatever an in-place write or out= put values into, whatever its dtype: an integer view may alias it.
            written = [t for t in _tensors(out) if not (t.is_floating_point() or t.is_complex())]
            written += _tensors(kwargs.get("out"))
            in_place = (base.endswith("_") and not base.startswith("__")) or base in {"__setitem__", "__set__"}
            if in_place and args and isinstance(args[0], torch.Tensor):
                written.append(args[0])
            for t in written:
                self._mark(t)
        return out


def _subnormals_work() -> bool:
    """Whether float32 arithmetic on subnormal numbers still gives subnormal results (no flush-to-zero)."""
    tiny = torch.full((8,), 1e-40, dtype=torch.float32)
    return bool(((tiny * 1.0) != 0).all()) and bool(((torch.full((8,), 2.0**-120) * 2.0**-20) != 0).all())


# torch's process-wide settings a call must leave as it found them: (name, read, restore).
GLOBAL_SETTINGS: tuple[tuple[str, Any, Any], ...] = (
    ("subnormal arithmetic (set_flush_denormal)", _subnormals_work, lambda works: torch.set_flush_denormal(not works)),
    ("default dtype", torch.get_default_dtype, torch.set_default_dtype),
    ("default device", lambda: str(torch.get_default_device()), torch.set_default_device),
    ("number of threads", torch.get_num_threads, torch.set_num_threads),
    ("number of inter-op threads", torch.get_num_interop_threads, lambda _n: None),
    (
        "deterministic algorithms",
        lambda: (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()),
        lambda v: torch.use_deterministic_algorithms(v[0], warn_only=v[1]),
    ),
    ("deterministic debug mode", torch.get_deterministic_debug_mode, torch.set_deterministic_debug_mode),
    ("grad mode", torch.is_grad_enabled, torch.set_grad_enabled),
    ("anomaly detection", torch.is_anomaly_enabled, torch.set_anomaly_enabled),
    ("inference mode", torch.is_inference_mode_enabled, lambda _v: None),
    ("float32 matmul precision", torch.get_float32_matmul_precision, torch.set_float32_matmul_precision),
    ("warn-always", torch.is_warn_always_enabled, torch.set_warn_always),
    ("oneDNN backend", lambda: torch.backends.mkldnn.enabled, lambda v: setattr(torch.backends.mkldnn, "enabled", v)),
    ("opt_einsum backend", lambda: torch.backends.opt_einsum.enabled, lambda v: setattr(torch.backends.opt_einsum, "enabled", v)),
    ("print options", lambda: dict(vars(torch._tensor_str.PRINT_OPTS)), lambda v: torch.set_printoptions(**v)),
)


def global_settings() -> dict[str, Any]:
    return {name: read() for name, read, _ in GLOBAL_SETTINGS}


def settings_changed(before: dict[str, Any]) -> list[str]:
    """The settings a call changed, each put back as it was so that the next case starts clean."""
    changed = []
    for name, read, restore in GLOBAL_SETTINGS:
        if read() != before[name]:
            changed.append(name)
            with contextlib.suppress(Exception):  # noted already; the next case may fail on it too
                restore(before[name])
    return changed


# torch's settings as a fresh process has them, from which the solution's top-level code is run again: what it changes
# from here, importing it changes too. The thread count is one that solutions do not pick (the sandbox starts with 1,
# which set_num_threads(1) would leave as it is). The settings not named here start from their current values.
IMPORT_BASELINE: dict[str, Any] = {
    "subnormal arithmetic (set_flush_denormal)": True,
    "default dtype": torch.float32,
    "number of threads": 3,
    "deterministic algorithms": (False, False),
    "deterministic debug mode": 0,
    "grad mode": True,
    "anomaly detection": False,
    "float32 matmul precision": "highest",
    "warn-always": False,
}
_import_changes: list[list[str]] = []  # the answer of import_changes, once per process


def _set_settings(values: dict[str, Any]) -> None:
    for name, read, restore in GLOBAL_SETTINGS:
        if name in values and read() != values[name]:
            with contextlib.suppress(Exception):
                restore(values[name])


def import_changes(solution: Any) -> list[str]:
    """The global settings the solution's top-level code changes, run again from IMPORT_BASELINE.

    The runner imports the solution before any probe code runs, so a setting
    changed at import (``torch.set_num_threads(1)`` or
    ``torch.set_grad_enabled(False)`` at the top of the file) is already in
    force when a probe first looks. Running the same source again in a fresh
    module, from torch's defaults, shows it. The settings are then put back as
    the probe found them.
    """
    if _import_changes:
        return _import_changes[0]
    path = getattr(solution, "__file__", None)
    source = "".join(linecache.getlines(path)) if isinstance(path, str) else ""
    changed: list[str] = []
    if source:
        found = global_settings()
        _set_settings(IMPORT_BASELINE)
        baseline = global_settings()
        module = types.ModuleType("solution")
        module.__file__ = path
        with contextlib.suppress(Exception):  # it ran once already; only the settings it leaves count here
            exec(compile(source, path, "exec", dont_inherit=True), module.__dict__)  # noqa: S102 - the solution's own code, as the runner runs it
        changed = settings_changed(baseline)
        _set_settings(found)
    _import_changes.append(changed)
    return changed


def run_cases(solution: Any, inputs: dict[str, torch.Tensor]) -> dict[str, Any]:
    """Call total() on each input under the watch: the observation for the check.

    After each call torch's global settings must be as they were before it: a
    call that changes one (flush-to-zero, the default dtype, the number of
    threads, ...) breaks the rules, whatever its result. So must importing the
    solution (import_changes).
    """
    watch = RuleWatch()
    for setting in import_changes(solution):
        watch._note(f"importing the solution left torch's {setting} changed")
    cases: dict[str, Any] = {}
    for name, x in inputs.items():
        before = x.clone()
        settings = global_settings()
        try:
            with watch:
                result = solution.total(x)
        except Exception as exc:  # noqa: BLE001 - reported per case by the check
            result = f"raised {type(exc).__name__}: {str(exc)[:300]}"
        watch.forget()
        for setting in settings_changed(settings):
            watch._note(f"total() left torch's {setting} changed")
        if not isinstance(result, torch.Tensor | str):
            result = f"returned a {type(result).__module__}.{type(result).__qualname__}, not a torch.Tensor"
        cases[name] = {
            "x": before.contiguous(),
            "result": result.detach() if isinstance(result, torch.Tensor) else result,
            "input unchanged": bool(torch.equal(x, before)),
        }
    return {"violations": watch.violations, "cases": cases}


# ---------------------------------------------------------------- inputs


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def as_torch(values: np.ndarray, dtype: torch.dtype) -> torch.Tensor:
    """float64 values rounded to ``dtype`` (via float32 for bfloat16, which NumPy lacks)."""
    if dtype == torch.float16:
        return torch.from_numpy(values.astype(np.float16))
    return torch.from_numpy(values.astype(np.float32)).to(dtype)


def shuffled(values: np.ndarray, seed: int) -> np.ndarray:
    return values[rng(seed).permutation(values.size)]


def cancelling_pairs(big: np.ndarray, small: np.ndarray, dtype: torch.dtype, seed: int) -> torch.Tensor:
    """+b and -b for every b (rounded to dtype first, so they cancel exactly), plus small terms, shuffled."""
    b = as_torch(big, dtype).to(torch.float32).numpy().astype(np.float64)
    s = as_torch(small, dtype).to(torch.float32).numpy().astype(np.float64)
    return as_torch(shuffled(np.concatenate([b, -b, s]), seed), dtype)


# ---------------------------------------------------------------- layouts

# Layouts of a 1-D input, each a view into a larger tensor whose other elements are large (+-60000 in float16,
# +-1e30 otherwise), so code that reads memory the view does not show is far off.
LAYOUTS = ("contiguous", "offset", "every third", "every third from 1", "column of a matrix")


def _filler(size: int, dtype: torch.dtype) -> torch.Tensor:
    big = 60000.0 if dtype == torch.float16 else 1e30
    filler = torch.full((size,), big, dtype=dtype)
    filler[1::2] = -big
    return filler


def laid_out(values: np.ndarray, dtype: torch.dtype, layout: str) -> torch.Tensor:
    """``values`` rounded to ``dtype``, as a 1-D tensor of the given layout (see LAYOUTS)."""
    x = as_torch(values, dtype)
    n = x.numel()
    if layout == "contiguous":
        return x
    if layout == "offset":  # contiguous, at storage offset 5
        base = _filler(n + 9, dtype)
        base[5 : 5 + n] = x
        return base[5 : 5 + n]
    if layout == "every third":  # stride 3
        base = _filler(3 * n, dtype)
        base[::3] = x
        return base[::3]
    if layout == "every third from 1":  # stride 3, storage offset 1
        base = _filler(3 * n + 1, dtype)
        base[1::3] = x
        return base[1::3]
    if layout == "column of a matrix":  # m[:, 2] of an (n, 4) matrix: stride 4, storage offset 2
        base = _filler(4 * n, dtype).reshape(n, 4)
        base[:, 2] = x
        return base[:, 2]
    raise ValueError(layout)


def repeated(value: float, n: int, dtype: torch.dtype) -> torch.Tensor:
    """``value`` n times as a stride-0 view of one element: ``torch.tensor(value).expand(n)``."""
    return torch.tensor(value, dtype=dtype).expand(n)
