"""Custom check for onnx-constant-folding, run in the trusted worker.

Structure (node counts per op type, number of initializers, interface) is
compared with the reference's folded model; outputs are compared with the
*original* model's onnxruntime outputs from the reference's run, run by run
and feed by feed (a model with a random op is run twice in one session).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from grader.checks import CheckResult

RTOL = 1e-5
ATOL = 1e-6


def _arr(value: Any) -> np.ndarray | None:
    return value.data if hasattr(value, "data") and hasattr(value, "dtype") and hasattr(value, "source") else None


def _fmt_counts(counts: dict[str, int]) -> str:
    return "{" + ", ".join(f"{k}: {v}" for k, v in counts.items()) + "}" if counts else "no nodes"


def _outputs_problem(actual: Any, expected: Any, rtol: float = RTOL, atol: float = ATOL) -> str | None:
    if not isinstance(actual, list):
        return str(actual)
    for f, (got_runs, want_runs) in enumerate(zip(actual, expected, strict=True)):
        for r, (got, want) in enumerate(zip(got_runs, want_runs, strict=True)):
            where = f"feed {f}" + (f", run {r}" if len(want_runs) > 1 else "")
            for name, ref_t in want.items():
                g, e = _arr(got.get(name)), _arr(ref_t)
                if g is None:
                    return f"{where}: the folded model has no output {name!r}"
                if e.dtype.kind == "S":  # a string output (UTF-8 bytes): equal or not, no values shown
                    if g.dtype.kind != "S" or g.shape != e.shape:
                        return f"{where}: output {name!r} is not a string tensor of shape {list(e.shape)} like the original's"
                    bad = g != e
                    if bad.any():
                        return (f"{where}: string output {name!r} differs from the original model's at {int(bad.sum())} of "
                                f"{g.size} elements; first at flat index {int(np.argmax(bad))}")
                    continue
                if g.shape != e.shape or g.dtype != e.dtype:
                    return f"{where}: output {name!r} is {g.dtype}{list(g.shape)}, the original gives {e.dtype}{list(e.shape)}"
                gv, ev = g.astype(np.float64), e.astype(np.float64)
                bad = np.abs(gv - ev) > atol + rtol * np.abs(ev)
                if bad.any():
                    i = int(np.argmax(bad))
                    return (
                        f"{where}: output {name!r} differs from the original model's at {int(bad.sum())} of {g.size} "
                        f"elements; first at flat index {i}: got {gv.flat[i]:.7g}, original {ev.flat[i]:.7g}"
                    )
    return None


def folded_ok(actual: Any, expected: Any) -> tuple[bool, str]:
    if not isinstance(actual, dict):
        return False, "the probe's observation is malformed"
    if "error" in actual:
        return False, str(actual["error"])
    if actual.get("folded_interface") != expected["interface"]:
        return False, f"the folded graph's inputs/outputs are {actual.get('folded_interface')}; they must stay {expected['interface']}"
    if actual.get("opset") != expected["original_opset"]:
        return False, "the folded model's opset_import differs from the original model's: keep the original's opset"
    if actual.get("check_model") != "ok":
        return False, f"onnx.checker.check_model(full_check=True) rejects the folded model: {actual.get('check_model')}"
    rtol, atol = expected.get("tolerance", (RTOL, ATOL))
    problem = _outputs_problem(actual.get("outputs"), expected["original"], rtol, atol)
    if problem:
        return False, problem
    if actual.get("op_counts") != expected["op_counts"]:
        return False, (
            f"the folded graph has {_fmt_counts(actual.get('op_counts') or {})}; "
            f"expected {_fmt_counts(expected['op_counts'])} (from {expected['original_nodes']} nodes)"
        )
    if actual.get("initializers") != expected["initializers"]:
        return False, f"the folded graph has {actual.get('initializers')} initializers; expected {expected['initializers']}"
    if actual.get("body_nodes") != expected["body_nodes"]:
        return False, (f"the bodies of If/Loop/Scan nodes hold {actual.get('body_nodes')} nodes; expected {expected['body_nodes']} "
                       "(bodies keep every node)")
    if actual.get("bodies") != expected["bodies"]:
        changed = actual.get("bodies_not_original")
        return False, (f"{changed if isinstance(changed, int) else 'some'} of the If/Loop/Scan bodies in the folded graph "
                       "differ from the original's: a body stays as it is, but for the outer names it reads, which follow the renames")
    return True, f"valid, same outputs, {_fmt_counts(expected['op_counts'])} and {expected['initializers']} initializers"


def generated_ok(actual: Any, expected: Any) -> tuple[bool, str]:
    """Generated models: one record per case, "ok <op counts> sub:<nodes in bodies> init:<initializers>" or what went wrong."""
    if not isinstance(actual, list) or len(actual) != len(expected) or not all(isinstance(a, str) for a in actual):
        return False, "the probe's observation is malformed"
    wrong = [k for k, (a, e) in enumerate(zip(actual, expected, strict=True)) if a != e]
    if wrong:
        k = wrong[0]
        return False, f"{len(wrong)} of {len(expected)} generated models differ; first, case {k}: {actual[k]!r}, expected {expected[k]!r}"
    return True, f"{len(expected)} generated models folded as the rules say"


def folded_functions_ok(actual: Any, expected: Any) -> tuple[bool, str] | CheckResult:
    """folded_ok, and the model-local functions: each the original's, byte for byte, in order, none dropped. A failure
    says how, for the diagnosis (the candidate never sees the reason): functions dropped, function nodes replaced (by
    folded Constants), only removed, or changed otherwise."""
    ok, message = folded_ok(actual, expected)
    if not ok:
        return ok, message
    found, want = actual.get("functions"), expected["functions"]
    if not isinstance(found, list) or len(found) != len(want):
        return CheckResult(False, (f"the folded model has {len(found) if isinstance(found, list) else 'no'} model-local functions; "
                                   f"expected {len(want)}: model.functions come back exactly as they are, even one that no node "
                                   "calls any more"), {"reason": "functions-dropped"})
    if found != want:
        changed = actual.get("functions_not_original")
        edit = actual.get("function_edit")
        reason = {"replaced": "function-nodes-replaced", "removed": "function-nodes-removed"}.get(edit, "function-changed")
        return CheckResult(False, (f"{changed if isinstance(changed, int) and changed else 'some'} of the model-local functions differ "
                                   "from the original's: model.functions come back exactly as they are (the rules apply to the "
                                   "main graph only)"), {"reason": reason})
    return True, message + f", {len(want)} model-local functions as they were"


def folded_each_ok(actual: Any, expected: Any) -> tuple[bool, str]:
    """Several models folded in one process: folded_ok on each call, in order."""
    if not isinstance(actual, dict) or not isinstance(actual.get("calls"), list) or len(actual["calls"]) != len(expected["calls"]):
        return False, "the probe's observation is malformed"
    for k, (got, want) in enumerate(zip(actual["calls"], expected["calls"], strict=True)):
        ok, message = folded_ok(got, want)
        if not ok:
            return False, f"model {k + 1} of {len(expected['calls'])} folded in this process: {message}"
    return True, f"{len(expected['calls'])} models folded in one process, each from its own values"
