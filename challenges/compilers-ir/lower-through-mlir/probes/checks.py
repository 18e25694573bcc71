"""Custom checks for lower-through-mlir, run in the trusted worker.

``levels_match_torch`` (lowering probes). The observation holds what the
probe saw when it ran the candidate's artifacts: ``{"artifacts": "ok" or
what is wrong with them, "input_dims": {"onnx": [...], "mlir": [...]},
"runs": [{"batch": b, "torch": [...], "onnxruntime": [...] or an error
text, "iree": [...] or an error text}]}``. The dims of every input, in the
ONNX graph and in the MLIR function's signature, must be the expected
observation's: "?" (dynamic) for dim 0, the example's size for every other
dim; and there must be exactly one input per argument of ``forward`` (the
ONNX count is ``graph.input`` itself, so weights listed as graph inputs
count, and an unused argument dropped by the export is missing). Each
level's outputs must match the *expected* observation's PyTorch
outputs (the reference run's, computed by the probe from the model alone) to
``|y - t| <= ATOL + RTOL * |t|``, with the same count, shapes and dtypes;
integer outputs exactly.

``report_is_consistent`` (verification probes). The observation is
``{"truth": {level: [outputs]}, "report": the candidate's report}``. The
probe built the artifacts itself, so the truth does not depend on the
solution: the expected observation's truth is used. A report passes when

1. every level's reported outputs are the outputs that level computes (the
   truth, to ``TRUTH_RTOL`` / ``TRUTH_ATOL``: onnxruntime's session options
   may round a little differently), every output of the model included; and
2. every reported error is the error the reported outputs give, recomputed
   here in float64 (to a relative ``ERROR_REL``, so float32 arithmetic is
   fine). A report that measures the wrong pair, a mean, or a subset of the
   outputs fails here, whatever the outputs look like;
3. every ``*_vs_torch`` error is also the error of the reported level
   against the probe's own PyTorch outputs, ``model(*inputs)`` in float32
   computed in the same process just before verify() (to a relative
   ``TORCH_ERROR_REL``). That run is deterministic, so a verify() that runs
   the model as given reports bit-identical outputs and passes with the
   whole margin; a torch level computed some other way (a float64 copy of
   the model, "more exact") stays within ``TRUTH_RTOL`` of the outputs, but
   on a faithful lowering, whose errors are float32 rounding themselves, it
   moves every ``*_vs_torch`` error by tens of percent. The probe's own run
   is taken from the observation only when it matches the expected
   observation's to ``TRUTH_RTOL``: the expected one may come from another
   machine, whose kernels round differently in the last bit.

``reports_are_consistent`` (several verify() calls in one process: new
artifacts at the same paths, the two functions of one vmfb, one model in
training mode wholly then in part): the observation is ``{"calls":
[{"truth", "report"}, ...]}``; every call's report must pass
``report_is_consistent`` against its own truth.

``repeated_calls_consistent`` (lower() and verify() called again and again
in one process, on objects changed in place, look-alikes and rebuilt
objects): the observation is ``{"lowerings": [lowering observations],
"calls": [{"step", "truth", "at call", "after all calls"}], "freed ids
taken": {...}}``. Every lowering must pass ``levels_match_torch`` (the first
one's runs include a run of its files after the second call), and every
verify() call's report must pass ``report_is_consistent`` twice: as it was
returned, and as it reads after every later call. The expected observation
must record that the rebuilt model and input took the freed ids (the
reference's run), so a probe that stops testing id reuse fails validation;
the candidate's own run is not held to it (a solution that keeps a
reference to an object keeps its id taken, and fails elsewhere if that
matters). A failure names the call and the step in general words, and its
reason (``lower-call-N``, ``verify-call-N``, ``verify-call-N-changed-later``)
goes to the diagnosis.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from grader.checks import CheckResult

RTOL = 1e-4
ATOL = 1e-5
TRUTH_RTOL = 1e-5
TRUTH_ATOL = 1e-6
ERROR_REL = 1e-4
ERROR_ABS = 1e-12
TORCH_ERROR_REL = 1e-2
REL_EPS = 1e-7

LEVELS = ("torch", "onnxruntime", "iree")
PAIRS = {
    "onnxruntime_vs_torch": ("onnxruntime", "torch"),
    "iree_vs_torch": ("iree", "torch"),
    "iree_vs_onnxruntime": ("iree", "onnxruntime"),
}


def _data(value: Any) -> np.ndarray:
    """The values of a decoded array observation (a TaggedArray), or of anything array-like."""
    return np.asarray(getattr(value, "data", value))


def _dtype(value: Any) -> str:
    return str(getattr(value, "dtype", _data(value).dtype))


def _compare(got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> str | None:
    """None if got matches want (shape, tolerance; integers exactly), else how it differs."""
    if got.shape != want.shape:
        return f"has shape {list(got.shape)}, expected {list(want.shape)}"
    exact = not np.issubdtype(want.dtype, np.floating)
    g = got.astype(np.float64)
    w = want.astype(np.float64)
    err = np.abs(g - w)
    bound = np.zeros_like(w) if exact else atol + rtol * np.abs(w)
    bad = ~(err <= bound)  # NaN counts as bad
    if not bad.any():
        return None
    count = int(bad.sum())
    worst = np.unravel_index(int(np.argmax(np.where(bad, np.nan_to_num(err, nan=np.inf), -1.0))), err.shape)
    where = "[" + ", ".join(str(int(i)) for i in worst) + "]"
    if exact:
        return f"differs at {count} of {err.size} elements; at {where} it is {g[worst]:g}, expected {w[worst]:g}"
    return (
        f"is off at {count} of {err.size} elements (tolerance {atol:g} + {rtol:g}*|expected|); "
        f"worst at {where}: {g[worst]:.7g}, expected {w[worst]:.7g}, abs error {err[worst]:.3g}"
    )


def _outputs_problem(got: Any, want: list[Any], rtol: float, atol: float, *, dtypes: bool) -> str | None:
    if not isinstance(got, list):
        return f"is {type(got).__name__}, not a list of outputs"
    if len(got) != len(want):
        return f"has {len(got)} output(s); the model returns {len(want)}"
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        if dtypes and _dtype(g) != _dtype(w):
            return f"output {i} has dtype {_dtype(g)}, expected {_dtype(w)}"
        problem = _compare(_data(g), _data(w), rtol, atol)
        if problem:
            return f"output {i} {problem}"
    return None


def _dims_text(dims: Any) -> str:
    if not isinstance(dims, list):
        return str(dims)
    return "(" + ", ".join("[" + ", ".join(str(d) for d in arg) + "]" if isinstance(arg, list) else str(arg) for arg in dims) + ")"


def _levels_match_torch(actual: Any, expected: Any) -> tuple[bool, str]:
    if not isinstance(actual, dict) or "artifacts" not in actual:
        return False, "the probe's observation is malformed"
    if actual["artifacts"] != "ok":
        return False, str(actual["artifacts"])
    got_dims, want_dims = actual["input_dims"], expected["input_dims"]
    for where, label in (("onnx", "the .onnx graph lists"), ("mlir", "the .mlir function takes")):
        if len(got_dims[where]) != len(want_dims[where]):
            return False, (
                f"{label} {len(got_dims[where])} input(s) {_dims_text(got_dims[where])}; it must have exactly one per "
                f"argument of forward ({len(want_dims[where])}), in order: weights are not graph inputs, and an "
                "argument the model does not use is an input all the same"
            )
    for where, label in (("onnx", "the .onnx graph's inputs"), ("mlir", "the .mlir function's arguments")):
        if got_dims[where] != want_dims[where]:
            return False, (
                f"{label} have the dims {_dims_text(got_dims[where])}; dim 0 of every input must be dynamic (?) "
                f"and every other dim fixed at the example's size: {_dims_text(want_dims[where])}"
            )
    runs, want_runs = actual.get("runs"), expected["runs"]
    if not isinstance(runs, list) or len(runs) != len(want_runs):
        return False, "the probe's observation is malformed"
    for run, want in zip(runs, want_runs, strict=True):
        batch = want["batch"]
        problems = []
        for level in ("onnxruntime", "iree"):
            got = run.get(level)
            if isinstance(got, str):
                problems.append(f"{level} could not run your artifact at batch {batch}: {got}")
                continue
            problem = _outputs_problem(got, want["torch"], RTOL, ATOL, dtypes=True)
            if problem:
                problems.append(f"{level} at batch {batch} does not compute what PyTorch computes: {problem}")
        if problems:
            return False, " | ".join(problems)
    batches = ", ".join(str(w["batch"]) for w in want_runs)
    return True, f"onnxruntime and IREE match PyTorch at batch {batches} (tolerance {ATOL:g} + {RTOL:g}*|y|)"


def _measure(got: list[Any], want: list[Any]) -> tuple[float, float]:
    """max |g - w| and max |g - w| / (|w| + 1e-7) over every element of every output, in float64."""
    max_abs = max_rel = 0.0
    for g, w in zip(got, want, strict=True):
        g64 = _data(g).astype(np.float64)
        w64 = _data(w).astype(np.float64)
        diff = np.abs(g64 - w64)
        max_abs = max(max_abs, float(np.max(diff, initial=0.0)))
        max_rel = max(max_rel, float(np.max(diff / (np.abs(w64) + REL_EPS), initial=0.0)))
    return max_abs, max_rel


def _close(got: float, want: float) -> bool:
    if math.isnan(got) or math.isnan(want):
        return False
    return abs(got - want) <= ERROR_REL * abs(want) + ERROR_ABS


def _report_is_consistent(actual: Any, expected: Any) -> tuple[bool, str]:
    if not isinstance(actual, dict) or "report" not in actual:
        return False, "the probe's observation is malformed"
    report, truth = actual["report"], expected["truth"]
    if isinstance(report, str):
        return False, report
    outputs = report["outputs"]
    for level in LEVELS:
        problem = _outputs_problem(outputs[level], truth[level], TRUTH_RTOL, TRUTH_ATOL, dtypes=False)
        if problem:
            return False, f"report['outputs'][{level!r}] is not what {level} computes on these inputs: {problem}"
    for pair, (a, b) in PAIRS.items():
        want = dict(zip(("max_abs", "max_rel"), _measure(outputs[a], outputs[b]), strict=True))
        for key in ("max_abs", "max_rel"):
            got = report["errors"][pair][key]
            if not _close(got, want[key]):
                formula = f"|{a} - {b}|" if key == "max_abs" else f"|{a} - {b}| / (|{b}| + 1e-7)"
                return False, (
                    f"report['errors'][{pair!r}][{key!r}] = {got:.6g}, but your own outputs give {want[key]:.6g} "
                    f"(the largest {formula} over every element of every output)"
                )
    own_torch = actual["truth"]["torch"]
    if _outputs_problem(own_torch, truth["torch"], TRUTH_RTOL, TRUTH_ATOL, dtypes=False):
        return False, "the probe's observation is malformed (its own PyTorch outputs)"
    for pair, (a, b) in PAIRS.items():
        if b != "torch":
            continue
        want = dict(zip(("max_abs", "max_rel"), _measure(outputs[a], own_torch), strict=True))
        for key in ("max_abs", "max_rel"):
            got = report["errors"][pair][key]
            if not abs(got - want[key]) <= TORCH_ERROR_REL * abs(want[key]) + ERROR_ABS:
                return False, (
                    f"report['errors'][{pair!r}][{key!r}] = {got:.6g}, but your {a} outputs against PyTorch's own "
                    f"float32 outputs (model(*inputs) as given, in eval mode) give {want[key]:.6g}: your torch level "
                    "is not the model's own float32 computation"
                )
    summary = ", ".join(f"{pair} max_abs {_measure(truth[a], truth[b])[0]:.3g}" for pair, (a, b) in PAIRS.items())
    return True, f"every level's outputs and errors reported as measured ({summary})"


def _reports_are_consistent(actual: Any, expected: Any) -> tuple[bool, str]:
    calls, want_calls = actual["calls"], expected["calls"]
    if not isinstance(calls, list) or len(calls) != len(want_calls):
        return False, "the probe's observation is malformed"
    messages = []
    for number, (call, want) in enumerate(zip(calls, want_calls, strict=True), start=1):
        ok, message = _report_is_consistent(call, want)
        if not ok:
            return False, f"verify() call {number} of {len(calls)} in this process: {message}"
        messages.append(message)
    return True, f"{len(calls)} verify() calls in one process, each report right: " + "; ".join(messages)


def _repeated_calls_consistent(actual: Any, expected: Any) -> CheckResult:
    taken = expected["freed ids taken"]
    if not (taken["model"] and taken["input"]):
        message = f"the expected observation's rebuilt objects did not take the freed ids ({taken}): the probe no longer tests id reuse"
        return CheckResult(False, message, {"reason": "no-id-reuse"})
    lowerings, want_lowerings = actual["lowerings"], expected["lowerings"]
    calls, want_calls = actual["calls"], expected["calls"]
    if not isinstance(lowerings, list) or len(lowerings) != len(want_lowerings) or not isinstance(calls, list) or len(calls) != len(want_calls):
        return CheckResult(False, "the probe's observation is malformed", {"reason": "malformed"})
    for number, (got, want) in enumerate(zip(lowerings, want_lowerings, strict=True), start=1):
        ok, message = _levels_match_torch(got, want)
        if not ok:
            where = "the first model object" if number == 1 else "the same model object after its weights were replaced in place"
            return CheckResult(False, f"lower() call {number} of {len(lowerings)}, on {where}: {message}", {"reason": f"lower-call-{number}"})
    for number, (call, want) in enumerate(zip(calls, want_calls, strict=True), start=1):
        step = want["step"]
        for when, reason in (("at call", f"verify-call-{number}"), ("after all calls", f"verify-call-{number}-changed-later")):
            ok, message = _report_is_consistent({"truth": call["truth"], "report": call[when]}, want)
            if not ok:
                moment = "as returned" if when == "at call" else "read again after the later calls"
                return CheckResult(False, f"verify() call {number} of {len(calls)} ({step}), its report {moment}: {message}", {"reason": reason})
    message = f"{len(lowerings)} lower() and {len(calls)} verify() calls in one process, each right when returned and after the later calls"
    return CheckResult(True, message)


# The observations come out of the sandbox, where the candidate's code could
# have rewritten them: anything that does not have the probe's structure fails
# the probe instead of raising here (which would read as a platform failure).
MALFORMED = (KeyError, TypeError, AttributeError, ValueError, IndexError)


def levels_match_torch(actual: Any, expected: Any) -> tuple[bool, str]:
    try:
        return _levels_match_torch(actual, expected)
    except MALFORMED as exc:
        return False, f"the probe's observation is malformed ({type(exc).__name__})"


def report_is_consistent(actual: Any, expected: Any) -> tuple[bool, str]:
    try:
        return _report_is_consistent(actual, expected)
    except MALFORMED as exc:
        return False, f"the probe's observation is malformed ({type(exc).__name__})"


def reports_are_consistent(actual: Any, expected: Any) -> tuple[bool, str]:
    try:
        return _reports_are_consistent(actual, expected)
    except MALFORMED as exc:
        return False, f"the probe's observation is malformed ({type(exc).__name__})"


def repeated_calls_consistent(actual: Any, expected: Any) -> CheckResult:
    try:
        return _repeated_calls_consistent(actual, expected)
    except MALFORMED as exc:
        return CheckResult(False, f"the probe's observation is malformed ({type(exc).__name__})", {"reason": "malformed"})


def _verify_calls_consistent(actual: Any, expected: Any) -> CheckResult:
    lowerings, want_lowerings = actual["lowerings"], expected["lowerings"]
    calls, want_calls = actual["calls"], expected["calls"]
    if not isinstance(lowerings, list) or len(lowerings) != len(want_lowerings) or not isinstance(calls, list) or len(calls) != len(want_calls):
        return CheckResult(False, "the probe's observation is malformed", {"reason": "malformed"})
    for number, (got, want) in enumerate(zip(lowerings, want_lowerings, strict=True), start=1):
        ok, message = _levels_match_torch(got, want)
        if not ok:
            return CheckResult(False, f"lower() call {number} of {len(lowerings)} in this process: {message}", {"reason": f"lower-call-{number}"})
    for number, (call, want) in enumerate(zip(calls, want_calls, strict=True), start=1):
        step = want["step"]
        for when, reason in (("at call", f"verify-call-{number}"), ("after all calls", f"verify-call-{number}-changed-later")):
            if when not in want:
                continue
            ok, message = _report_is_consistent({"truth": call["truth"], "report": call[when]}, want)
            if not ok:
                moment = "as returned" if when == "at call" else "read again after the caller changed its inputs and weights"
                return CheckResult(False, f"verify() call {number} of {len(calls)} ({step}), its report {moment}: {message}", {"reason": reason})
    return CheckResult(True, f"{len(lowerings)} lower() and {len(calls)} verify() calls in one process, each report right")


def verify_calls_consistent(actual: Any, expected: Any) -> CheckResult:
    try:
        return _verify_calls_consistent(actual, expected)
    except MALFORMED as exc:
        return CheckResult(False, f"the probe's observation is malformed ({type(exc).__name__})", {"reason": "malformed"})
