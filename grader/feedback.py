"""The feedback policy: what the candidate who submitted the code may see of its grading.

Place in the flow: ``grade.py`` builds the full result and the web stores it
whole; coaches, interviewers, staff and the logs read it as it is. Every
place that shows a result to its candidate (the challenge page and its
polling JSON, the API and the command-line client built on it, a mock
interview's candidate page, ``--as-candidate``) passes it through
:func:`candidate_view`, and nothing else decides what crosses.

The rule (DESIGN.md, the trust boundary, point 5):

- Public probes (Run) show everything: observation, expected value (also
  when the probe raised), the structured diff of the two (``grader/diff.py``),
  printed output, the check's own message, the traceback.
- Hidden probes (Submit) show a message composed here from templates and the
  result's structured fields: which property failed (values, shape, dtype,
  structure, type, an exception and where in ``solution.py``, time, memory,
  output, a crash), for numbers how far over its tolerance the worst element
  is (in coarse bands) and its index, and for a float tensor the map and
  histogram of error over bound re-quantized to whole decades, with counts
  (``grader/error_report.py`` ``hidden_view``). Never an expected value, never a hidden
  input, never a string the candidate's code controls: exception messages and
  class names outside a fixed vocabulary, tracebacks' text, printed output,
  warnings, strings or keys it put in an observation, exit codes. Never a
  custom check's message either (coaches write those for themselves, and they
  name expected values and the answers of "find the X" probes): a hidden
  custom check says only that the result does not pass it.

Every string in a hidden probe's view is therefore one of: the package's own
text (probe name, category, description, hint texts), a template below, a
number, or a name from :data:`EXCEPTION_NAMES`. Dict keys on a path are the
exception: a path descends into a key only when the candidate's dict has
exactly the expected keys, so the key was the candidate's to know already;
they are cut to :data:`KEY_CHARS` characters.

Residual channels, by design: the candidate's code can still choose *which*
probes fail and how (a handful of outcomes each), the line it raises on, the
index of its worst element, the band of its error and how long the whole
submission takes (and, while it runs, when each probe finishes: the live
progress). Each carries a few bits per probe per submission, at the
rate the submit limits allow, and none of them can carry what the sandbox
never holds: the expected values and the reference (docs/grading-integrity.md).
"""

from __future__ import annotations

import builtins
import math
import re
from collections.abc import Mapping
from typing import Any

from grader.error_report import hidden_view
from sandbox.runner import process_state

# -------------------------------------------------------------- vocabularies

#: Exception class names a hidden probe's message may name. The name is the
#: candidate's to choose (any class can be called ``ValueError``), so only a
#: name from this fixed set is shown; any other is "an exception".
BUILTIN_EXCEPTIONS: frozenset[str] = frozenset(
    name for name, value in vars(builtins).items() if isinstance(value, type) and issubclass(value, BaseException)
)
FRAMEWORK_EXCEPTIONS: frozenset[str] = frozenset(
    {
        # numpy
        "AxisError", "LinAlgError", "DTypePromotionError",
        # torch, torch._dynamo, torch._inductor, fake tensors, symbolic shapes, torch.onnx
        "OutOfMemoryError", "TorchRuntimeError", "Unsupported", "UserError", "BackendCompilerFailed",
        "InternalTorchDynamoError", "InductorError", "LoweringException", "GuardOnDataDependentSymNode",
        "ConstraintViolationError", "DataDependentOutputException", "DynamicOutputShapeException",
        "UnsupportedOperatorException", "UnsupportedFakeTensorException", "MetadataMismatchError", "OnnxExporterError",
        # tensorflow.errors
        "OpError", "InvalidArgumentError", "ResourceExhaustedError", "NotFoundError", "UnimplementedError",
        "FailedPreconditionError", "OutOfRangeError", "InternalError", "UnknownError", "AbortedError",
        "AlreadyExistsError", "CancelledError", "DataLossError", "DeadlineExceededError", "PermissionDeniedError",
        "UnavailableError", "OperatorNotAllowedInGraphError",
        # onnx, onnxruntime
        "ValidationError", "InferenceError", "Fail", "InvalidArgument", "InvalidGraph", "InvalidProtobuf",
        "NoSuchFile", "NoModel", "NotImplemented", "RuntimeException", "EngineError",
        # tvm, iree
        "TVMError", "DiagnosticError", "OpNotImplemented", "CompilerToolError",
    }
)  # fmt: skip
EXCEPTION_NAMES: frozenset[str] = BUILTIN_EXCEPTIONS | FRAMEWORK_EXCEPTIONS

#: Signals a crash may be named by (the runner's own message names the signal).
SIGNALS = ("SIGSEGV", "SIGABRT", "SIGBUS", "SIGFPE", "SIGILL", "SIGKILL", "SIGTERM", "SIGXCPU", "SIGXFSZ", "SIGPIPE")

KEY_CHARS = 32
MAX_LINE = 1_000_000
MAX_INDEX_DIMS = 8

# Bands of "error / what the tolerance allows" for the worst element. Coarse on
# purpose: an exact ratio with a zero answer would give the expected value away.
RATIO_BANDS: tuple[tuple[float, str], ...] = (
    (2.0, "up to 2 times"),
    (10.0, "2 to 10 times"),
    (100.0, "10 to 100 times"),
    (10_000.0, "100 to 10,000 times"),
)
RATIO_ABOVE = "over 10,000 times"

# Every sentence a hidden probe's message is built from. validate's leak check
# (grader/seal.py) reads these to tell the policy's own words from a leak.
TEMPLATES: dict[str, str] = {
    "passed": "",
    "not_run": "not run: the code does not compile",
    "not_run_rule": "not run: the code breaks a rule",
    "type": "{where}: the result is not of the type this probe expects",
    "keys": "{where}: the dict does not have the keys this probe expects",
    "length": "{where}: the list does not have the length this probe expects",
    "value": "{where}: the value is wrong",
    "float": "{where}: the value is off by {band} what its tolerance allows",
    "nonfinite": "{where}: NaN or infinity where the expected value differs{at}",
    "framework": "{where}: the array comes from another framework than this probe expects",
    "shape": "{where}: the array does not have the shape this probe expects",
    "dtype": "{where}: the array does not have the dtype this probe expects",
    "elements": "{where}: the values differ; the worst element{at} is off by {band} what its tolerance allows",
    "elements_exact": "{where}: the values differ, first{at}",
    "check": "the result does not pass this probe's check",
    "settings_changed": "the code left process-wide settings changed ({settings}); code must leave them as it found them",
    "settings_unnamed": "a setting of the process",
    "wrong": "the result is wrong",
    "raised": "raised {exception}{line}",
    "raised_line": " at solution.py line {line}",
    "exception": "an exception",
    "crashed": "the probe's process crashed{signal}",
    "crashed_signal": " (killed by {signal})",
    "no_result": "the probe's process exited before returning a result (did the code call exit()?)",
    "bad_observation": "the probe's result could not be read: it holds something other than plain data and arrays",
    "runtime_error": "the probe failed at run time",
    "time_limit": "the probe did not finish within its time limit",
    "stopped": "not run to the end: an earlier probe ran out of its time, and the time the probes after it share was spent",
    "memory_limit": "the probe reached the memory limit",
    "output_limit": "the probe printed or returned more than the limit allows",
    "internal_error": "the platform could not check this probe; this is not your code's fault",
    "index": " at index {index}",
    "result": "result",
}

_PROBE_FIELDS = ("name", "category", "weight", "passed", "status", "message", "description", "duration_ms")
_PUBLIC_FIELDS = ("stdout", "observation", "expected", "diff", "error_report")
_FRAME = re.compile(r'^\s*File "solution\.py", line (\d+)', re.MULTILINE)
_SIGNAL = re.compile(r"\bkilled by (SIG[A-Z]+)\b")


# -------------------------------------------------------------- the policy


def candidate_view(result: Mapping[str, Any]) -> dict[str, Any]:
    """The candidate's view of a full result (``GradeResult.to_dict()`` or a stored one).

    Public results keep every probe field the page shows; hidden ones get
    :func:`hidden_message` for each probe and no duration (a sleep would
    carry a number out). Timings, the grader's internal figures, are left
    out. Hints go out as ids, tiers, tags and the names of the failing probes
    they are about (the package's words, like every probe's name): no hint text is shown
    unasked, and the web sends a hint's text once the candidate revealed it
    (``web/submissions/presenters.py``, which records every reveal).
    """
    public = bool(result.get("public"))
    return {
        "verdict": result.get("verdict"),
        "score": result.get("score"),
        "categories": result.get("categories") or {},
        "probes": [candidate_probe(p, public=public) for p in result.get("probes") or []],
        "hints": [
            {"id": h.get("id"), "tier": h.get("tier"), "tags": list(h.get("tags") or []), "probes": [str(n) for n in h.get("probes") or []]}
            for h in result.get("hints") or []
        ],
        # Grader-composed: "N of M probes passed", the syntax error of the
        # candidate's own source, compiled before any of their code ran, or
        # the lines of that source that break the package's rules.
        "message": result.get("message") or "",
        "version": result.get("version"),
        "public": public,
    }


#: A live line's outcomes (grader/live.py): the check passed, failed, or judged only at the end.
LIVE_OUTCOMES = ("passed", "failed", "done")


def candidate_progress(live: Mapping[str, Any] | None, *, public: bool) -> dict[str, Any] | None:
    """The candidate's view of a running grading's live progress (``grader.live.ProbeProgress`` lines, as stored).

    Each probe that finished: its name and outcome (passed, failed, or done:
    judged at the end); for a public probe also the runner's status (an
    error, a time limit). A hidden probe's line says no more than its final
    result will (name and pass/fail): no status, no message, no time. When
    each line appears is a residual channel (when a hidden probe finished),
    the per-probe form of "how long the whole submission takes" above.
    """
    if not live:
        return None
    probes = []
    for line in live.get("probes") or []:
        outcome = line.get("outcome") if line.get("outcome") in LIVE_OUTCOMES else "done"
        view = {"name": str(line.get("name") or ""), "outcome": outcome}
        if public:
            view["status"] = str(line.get("status") or "")
        probes.append(view)
    total = live.get("total")
    return {
        "total": total if isinstance(total, int) and total >= len(probes) else len(probes),
        "finished": len(probes),
        "passed": sum(1 for p in probes if p["outcome"] == "passed"),
        "failed": sum(1 for p in probes if p["outcome"] == "failed"),
        "probes": probes,
    }


def candidate_probe(probe: Mapping[str, Any], *, public: bool) -> dict[str, Any]:
    """One probe of a result as its candidate sees it."""
    view = {name: probe.get(name) for name in _PROBE_FIELDS}
    if public:
        view.update({name: probe.get(name) for name in _PUBLIC_FIELDS})
        return view
    view["message"] = hidden_message(probe)
    view["duration_ms"] = None
    # Where a float tensor is wrong, as positions and relative sizes only (grader/error_report.py).
    report = hidden_view(probe.get("error_report")) if probe.get("passed") is not True else None
    if report is not None:
        view["error_report"] = report
    return view


def hidden_message(probe: Mapping[str, Any]) -> str:
    """A hidden probe's message, from its status and structured details only (never its message)."""
    status = str(probe.get("status") or "")
    details = probe.get("details") if isinstance(probe.get("details"), Mapping) else {}
    assert isinstance(details, Mapping)
    if probe.get("passed") is True:
        return TEMPLATES["passed"]
    if status == "syntax_error":
        return TEMPLATES["not_run"]
    if status == "rule_violation":
        return TEMPLATES["not_run_rule"]
    if status == "wrong_answer":
        return _wrong_answer(details)
    if status == "runtime_error":
        return _runtime_error(details)
    if status == "time_limit" and details.get("runner_status") == "stopped":
        return TEMPLATES["stopped"]
    if status in ("time_limit", "memory_limit", "output_limit", "internal_error"):
        return TEMPLATES[status]
    return TEMPLATES["runtime_error"]


def _wrong_answer(details: Mapping[str, Any]) -> str:
    if details.get("runner_status") == "settings_changed":
        named = [s for s in details.get("settings") or [] if isinstance(s, str) and s in process_state.SETTINGS]
        return TEMPLATES["settings_changed"].format(settings=", ".join(named) or TEMPLATES["settings_unnamed"])
    failure = details.get("failure")
    path = details.get("path")
    if not isinstance(failure, str) or failure not in _WRONG or not isinstance(path, list):
        # A custom check (its message is the coach's and may name the answer),
        # or a result stored before checks reported their failure.
        return TEMPLATES["check"] if details.get("failure") is None else TEMPLATES["wrong"]
    where = _where(path)
    at = _index(details.get("worst_index"))
    band = _band(details.get("error_ratio"))
    if failure == "elements" and band is None:
        return TEMPLATES["elements_exact"].format(where=where, at=at or "")
    if failure in ("elements", "float") and band is not None:
        return TEMPLATES[failure].format(where=where, at=at, band=band)
    if failure == "float":
        return TEMPLATES["value"].format(where=where)
    return TEMPLATES[failure].format(where=where, at=at)


_WRONG = ("type", "keys", "length", "value", "float", "nonfinite", "framework", "shape", "dtype", "elements")


def _where(path: list[Any]) -> str:
    """``result['grad'][2]`` from a check's path: list indices, and dict keys cut short."""
    parts = [TEMPLATES["result"]]
    for step in path[: MAX_INDEX_DIMS * 4]:
        if isinstance(step, bool):
            break
        if isinstance(step, int):
            parts.append(f"[{step}]")
        elif isinstance(step, str):
            parts.append(f"[{step[:KEY_CHARS]!r}]")
        else:
            break
    return "".join(parts)


def _index(value: Any) -> str:
    if not isinstance(value, list) or not value or len(value) > MAX_INDEX_DIMS:
        return ""
    if not all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < 2**63 for i in value):
        return ""
    return TEMPLATES["index"].format(index=list(value))


def _band(ratio: Any) -> str | None:
    """The band of an error ratio; None when it is not a finite number (an exact comparison)."""
    if isinstance(ratio, bool) or not isinstance(ratio, int | float) or not math.isfinite(ratio):
        return None
    for upper, label in RATIO_BANDS:
        if ratio <= upper:
            return label
    return RATIO_ABOVE


def _runtime_error(details: Mapping[str, Any]) -> str:
    runner_status = details.get("runner_status")
    if runner_status == "error":
        name = details.get("exc_type")
        exception = name if isinstance(name, str) and name in EXCEPTION_NAMES else TEMPLATES["exception"]
        line = details.get("line")
        where = TEMPLATES["raised_line"].format(line=line) if isinstance(line, int) and not isinstance(line, bool) and 0 < line <= MAX_LINE else ""
        return TEMPLATES["raised"].format(exception=exception, line=where)
    if runner_status in ("crashed", "killed"):
        signal = details.get("signal")
        named = TEMPLATES["crashed_signal"].format(signal=signal) if isinstance(signal, str) and signal in SIGNALS else ""
        return TEMPLATES["crashed"].format(signal=named)
    if runner_status in ("no_result", "bad_observation"):
        return TEMPLATES[str(runner_status)]
    return TEMPLATES["runtime_error"]


# -------------------------------------------------------------- what grade.py records


def failure_details(runner_status: str, exc_type: str, traceback: str, message: str) -> dict[str, Any]:
    """The structured fields of a probe that returned no observation, for :func:`hidden_message`.

    ``grade.evaluate`` stores them in the full result beside the message
    (which keeps the whole traceback for coaches and for public probes). The
    exception type and signal are kept as reported; the policy decides
    whether to name them. The line is the last frame in ``solution.py``: the
    traceback was cut to the candidate's own frames in the sandbox.
    """
    details: dict[str, Any] = {"runner_status": runner_status}
    if runner_status == "error":
        details["exc_type"] = exc_type[:100]
        frames = _FRAME.findall(traceback)
        if frames and len(frames[-1]) <= 7:
            details["line"] = int(frames[-1])
    elif runner_status == "settings_changed":
        details["settings"] = process_state.named_in(message)
    elif runner_status in ("crashed", "killed"):
        found = _SIGNAL.search(message)
        if found and found.group(1) in SIGNALS:
            details["signal"] = found.group(1)
    return details


_SYNTAX_ERROR_LINE = re.compile(r"SyntaxError on line (\d+): ")


def syntax_error_message(line: int | None, message: str) -> str:
    """The result's message for code that does not compile; :func:`syntax_error_line` reads the line back."""
    where = f" on line {line}" if line else ""
    return f"SyntaxError{where}: {message}"


def syntax_error_line(message: str) -> int | None:
    """The line a syntax-error result's message names (the page marks it in the editor); None if it names none."""
    found = _SYNTAX_ERROR_LINE.match(message or "")
    return int(found.group(1)) if found else None
