"""Custom check for onnx-fold-batchnorm, run in the trusted worker.

A probe's observation describes the graph the candidate's pass returned
(see probes/hidden.py): node counts per op type, the checker's verdict,
the numerics against the original model, and for the hygiene probes
whether the caller's model was left unchanged. Some probes run the pass on
several models and return one such description per model, keyed by a label.

The expected node counts come from the reference run. Everything else must
be "ok" / True, so the message can say exactly what went wrong, and where.
"""

from __future__ import annotations

from typing import Any


def _fmt_ops(ops: Any) -> str:
    if not isinstance(ops, dict):
        return repr(ops)
    return "{" + ", ".join(f"{k}: {v}" for k, v in ops.items()) + "}"


def _problems(actual: Any, expected: dict[str, Any], where: str) -> list[str]:
    if not isinstance(actual, dict):
        return [f"{where}the probe's observation is malformed"]
    if actual.get("returned") != expected["returned"]:
        return [f"{where}{actual.get('returned')}"]
    out = []
    if actual.get("ops") != expected["ops"]:
        out.append(f"{where}the returned graph has nodes {_fmt_ops(actual.get('ops'))}; expected {_fmt_ops(expected['ops'])}")
    if actual.get("valid") != "ok":
        out.append(f"{where}{actual.get('valid')}")
    if actual.get("numerics") != "ok":
        out.append(f"{where}{actual.get('numerics')}")
    if "input unchanged" in expected and actual.get("input unchanged") is not True:
        out.append(f"{where}the model passed to fold_batchnorm was modified; work on a copy")
    if "second run" in expected and actual.get("second run") != expected["second run"]:
        out.append(
            f"{where}fold_batchnorm(fold_batchnorm(model)) has nodes {_fmt_ops(actual.get('second run'))}; "
            f"expected {_fmt_ops(expected['second run'])}"
        )
    return out


def graph_matches(actual: Any, expected: Any) -> tuple[bool, str]:
    if "returned" in expected:
        problems = _problems(actual, expected, "")
    else:
        if not isinstance(actual, dict):
            return False, "the probe's observation is malformed"
        problems = []
        for label, sub in expected.items():
            problems += _problems(actual.get(label), sub, f"[{label}] ")
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return False, problems[0][:700] + more
    return True, "the folded graph has the expected nodes and computes what the original did"
