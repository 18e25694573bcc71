"""Custom check for onnx-decompose-unsupported, run in the trusted worker.

The truth is the original model run by onnxruntime in the reference's run
(``expected["original"]``), not the reference's rewrite: the candidate's
rewritten model must reproduce the model it was given.
"""

from __future__ import annotations

from typing import Any

import numpy as np

RTOL = 1e-4
ATOL = 1e-5


def _arr(value: Any) -> np.ndarray | None:
    return value.data if hasattr(value, "data") and hasattr(value, "dtype") and hasattr(value, "source") else None


def decomposition_ok(actual: Any, expected: Any) -> tuple[bool, str]:
    if not isinstance(actual, dict):
        return False, "the probe's observation is malformed"
    if "error" in actual:
        return False, str(actual["error"])
    changed = actual.get("foreign_nodes_changed", 0)
    if changed:
        return False, (
            f"decompose rewrote or removed {changed} node(s) of other domains than the default one or of control flow; "
            "only default-domain Gelu, LayerNormalization, Softmax and HardSwish are to be rewritten"
        )
    untouched = actual.get("untouched")
    if untouched:
        listed = "; ".join(str(n) for n in untouched) if isinstance(untouched, list) else str(untouched)
        return False, (
            f"decompose changed what it must leave as it was: {listed}. Only the Gelu, LayerNormalization, Softmax "
            "and HardSwish nodes are replaced; every other node, initializer, sparse initializer, value_info entry "
            "and graph input or output stays as it is"
        )
    left = actual.get("unsupported_left")
    if left:
        return False, "after decompose, these op types are still unsupported by the accelerator: " + ", ".join(left)
    if actual.get("rewritten_interface") != expected["interface"]:
        return False, (
            f"the rewritten graph's inputs/outputs are {actual.get('rewritten_interface')}; "
            f"they must stay {expected['interface']}"
        )
    names = actual.get("names")
    if names:
        listed = "; ".join(str(n) for n in names) if isinstance(names, list) else str(names)
        return False, f"a made-up name is one the model already uses, or a name is defined twice: {listed}"
    if actual.get("check_model") != "ok":
        return False, f"onnx.checker.check_model(full_check=True) rejects the rewritten model: {actual.get('check_model')}"
    outputs = actual.get("outputs")
    if not isinstance(outputs, dict):
        return False, str(outputs)
    worst = 0.0
    for name, want in expected["original"].items():
        got = _arr(outputs.get(name))
        ref = _arr(want)
        if got is None:
            return False, f"the rewritten model has no output {name!r}"
        if got.shape != ref.shape or got.dtype != ref.dtype:
            return False, f"output {name!r}: {got.dtype}{list(got.shape)}, the original model gives {ref.dtype}{list(ref.shape)}"
        g, r = got.astype(np.float64), ref.astype(np.float64)
        if not np.all(np.isfinite(g)):
            bad = int((~np.isfinite(g)).sum())
            return False, f"output {name!r}: {bad} of {g.size} values are NaN or infinite; the original model's are finite"
        if g.size == 0:  # an empty output (a dim of size 0): its shape and dtype are all there is to compare
            continue
        err = np.abs(g - r)
        allowed = ATOL + RTOL * np.abs(r)
        ratio = err / allowed
        i = int(np.argmax(ratio))
        if ratio.flat[i] > 1.0:
            idx = [int(v) for v in np.unravel_index(i, g.shape)]
            return False, (
                f"output {name!r} differs from the original model's at {int((ratio > 1).sum())} of {g.size} elements; "
                f"worst at {idx}: got {g.flat[i]:.7g}, original {r.flat[i]:.7g} (rtol={RTOL:g}, atol={ATOL:g})"
            )
        worst = max(worst, float(err.max()))
    return True, f"every node is supported and the outputs match the original model (max abs error {worst:.2g})"


class _Plain:
    """An output the generated probes send as plain data, read back as an array."""

    source = "numpy"

    def __init__(self, value: dict[str, Any]) -> None:
        self.dtype = str(value["dtype"])
        self.data = np.asarray(value["values"], dtype=self.dtype).reshape([int(d) for d in value["shape"]])


def _arrays(part: Any) -> Any:
    """A case (or its second pass) with its outputs turned back into arrays; anything malformed stays as it is."""
    if not isinstance(part, dict):
        return part
    part = dict(part)
    for key in ("original", "outputs"):
        value = part.get(key)
        if isinstance(value, dict):
            try:
                part[key] = {str(name): _Plain(v) for name, v in value.items()}
            except (KeyError, TypeError, ValueError):
                part[key] = "the probe's observation is malformed"
    return part


def generated_ok(actual: Any, expected: Any) -> tuple[bool, str]:
    """Every generated model: decomposition_ok on the first pass, and on decompose applied to its own result."""
    cases = actual.get("cases") if isinstance(actual, dict) else None
    want = [_arrays(e) for e in expected["cases"]]
    if not isinstance(cases, list) or len(cases) != len(want):
        return False, "the probe's observation is malformed"
    cases = [_arrays(c) for c in cases]
    for c in cases:
        if isinstance(c, dict):
            c["again"] = _arrays(c.get("again"))
    failed: list[tuple[int, str]] = []
    for i, (got, exp) in enumerate(zip(cases, want, strict=True)):
        ok, msg = decomposition_ok(got, exp)
        if ok:
            again = got.get("again") if isinstance(got, dict) else None
            ok, msg = decomposition_ok(again, exp)
            msg = msg if ok else "decompose applied to its own result: " + msg
        if not ok:
            failed.append((i, msg))
    if failed:
        i, msg = failed[0]
        return False, f"{len(failed)} of {len(want)} generated models fail; the first, model {i}: {msg}"
    return True, f"all {len(want)} generated models decompose and match the original, twice over"


# The cases of a planted probe, per base model, in the order of hidden.py's PLANT_KINDS.
PLANTED = (
    "the model as it is",
    "its made-up names as node outputs",
    "its made-up names as node names",
    "its made-up names as graph inputs nobody reads",
    "its made-up names as initializers nobody reads",
    "its made-up names as value_info of no tensor",
    "its made-up names as node outputs and node names in an If branch",
    "its made-up names as a Loop body's inputs",
    "its made-up names as initializers of an If branch",
    "its made-up names as value_info of an If branch",
    "its made-up names as sparse initializers nobody reads",
    "its made-up names as node outputs that are graph outputs too",
    "its made-up names as an If branch's outputs",
    "its made-up names as sparse initializers of an If branch",
    "its made-up names as node outputs and node names two graphs deep (an If in a Loop body)",
    "its made-up names as node outputs and node names three graphs deep (an If in a Loop body in an If branch)",
    "its made-up names as node outputs and node names in a graph that a com.microsoft node holds (judged without onnxruntime)",
    "its made-up names as node names (their outputs other names) in an If branch",
    "its made-up names as node names in a Scan body",
    "its made-up names as node names two graphs deep (an If in a Loop body)",
    "its made-up names as node names three graphs deep (an If in a Loop body in an If branch)",
)
PLANTED_OUT = "planted:out"


def _fixed(outputs: list[Any]) -> list[Any]:
    """A planted model's graph outputs up to PLANTED_OUT: the base's and its own, the same for every solution."""
    return outputs[: outputs.index(PLANTED_OUT) + 1] if PLANTED_OUT in outputs else outputs


def planted_ok(actual: Any, expected: Any) -> tuple[bool, str]:
    """decomposition_ok on each base model and each model that plants the names the candidate's own pass made up.

    The planted names are the candidate's, so a planted model's graph inputs
    (the names as unread inputs) are its own, and so are the graph outputs
    after PLANTED_OUT (the names as graph outputs); the outputs compared, the
    base's and PLANTED_OUT, are the same for every solution, and the truth is
    the reference run's original.
    """
    cases = actual.get("cases") if isinstance(actual, dict) else None
    want = [_arrays(e) for e in expected["cases"]]
    if not isinstance(cases, list) or len(cases) != len(want):
        return False, "the probe's observation is malformed"
    failed: list[tuple[int, str]] = []
    for i, (got, exp) in enumerate(zip((_arrays(c) for c in cases), want, strict=True)):
        if not isinstance(got, dict):
            failed.append((i, "the probe's observation is malformed"))
            continue
        given = got.get("interface")
        if (
            isinstance(given, dict)
            and isinstance(given.get("inputs"), list)
            and isinstance(given.get("outputs"), list)
            and _fixed(given["outputs"]) == _fixed(exp["interface"]["outputs"])
        ):
            exp = dict(exp, interface={"inputs": given["inputs"], "outputs": given["outputs"]})
        ok, msg = decomposition_ok(got, exp)
        if not ok:
            failed.append((i, msg))
    if failed:
        i, msg = failed[0]
        model = f"model {i // len(PLANTED)}, " if len(want) > len(PLANTED) else ""
        return False, f"{len(failed)} of {len(want)} cases fail; the first, {model}{PLANTED[i % len(PLANTED)]}: {msg}"
    return True, f"all {len(want)} cases decompose and match the original, with the made-up names planted"


REBUILT_FLAG = "a rebuilt model took a freed id"


def repeated_ok(actual: Any, expected: Any) -> tuple[bool, str]:
    """Each call of repeated_calls judged on its own (a report exactly, a decompose by decomposition_ok), then the results held."""
    if not expected.get(REBUILT_FLAG):
        return False, "the probe rebuilt no model at a freed id in the reference's run: it no longer tests id reuse"
    calls = actual.get("calls") if isinstance(actual, dict) else None
    want = expected["calls"]
    if not isinstance(calls, list) or len(calls) != len(want):
        return False, "the probe's observation is malformed"
    for i, (got, exp) in enumerate(zip(calls, want, strict=True)):
        step = f"call {i + 1} of {len(want)} ({exp['step']})"
        if "report" in exp:
            if not isinstance(got, dict) or got.get("report") != exp["report"]:
                return False, f"{step}: coverage_report's result is wrong"
            continue
        ok, msg = decomposition_ok(_arrays(got), _arrays(exp))
        if not ok:
            return False, f"{step}: {msg}"
    changed = actual.get("results changed after later calls")
    if changed:
        listed = "; ".join(str(s) for s in changed) if isinstance(changed, list) else str(changed)
        return False, f"results already returned changed after later calls: {listed}"
    return True, f"all {len(want)} calls right, and every result unchanged after the calls that followed"


def calls_ok(actual: Any, expected: Any) -> tuple[bool, str]:
    """A sequence of decompose calls in one process (red team round 8): each judged by decomposition_ok, then the results held."""
    calls = actual.get("calls") if isinstance(actual, dict) else None
    want = expected["calls"]
    if not isinstance(calls, list) or len(calls) != len(want):
        return False, "the probe's observation is malformed"
    for i, (got, exp) in enumerate(zip(calls, want, strict=True)):
        ok, msg = decomposition_ok(_arrays(got), _arrays(exp))
        if not ok:
            return False, f"call {i + 1} of {len(want)} ({exp['step']}): {msg}"
    changed = actual.get("results changed after later calls")
    if changed:
        listed = "; ".join(str(s) for s in changed) if isinstance(changed, list) else str(changed)
        return False, f"results already returned changed after later calls: {listed}"
    return True, f"all {len(want)} calls right, and every result unchanged after the calls that followed"
