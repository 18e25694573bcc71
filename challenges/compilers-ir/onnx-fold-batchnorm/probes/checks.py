"""Custom check for onnx-fold-batchnorm, run in the trusted worker.

A probe's observation describes the graph the candidate's pass returned
(see probes/common.py, ``apply_pass``): node counts per op type, the
checker's verdict, the numerics against the original model, whether the
graph's inputs were kept, and for the hygiene probes whether the caller's
model was left unchanged. Some probes run the pass on several models and
return one such description per model, keyed by a label.

The expected node counts come from the reference run. Everything else must
be "ok" / True. The message names the property that failed and, for the
numerics, the size of the error against the tolerance. It never states the
expected node counts (that would hand out the answer of a hidden probe), and
it never repeats a string from the observation: node names, tensor names and
onnxruntime's error text all come from the candidate's model.
"""

from __future__ import annotations

import math
from typing import Any


def _numerics_message(actual: dict[str, Any]) -> str:
    failure = actual.get("numerics failure")
    if failure == "names":
        return "the graph's output names or their order changed"
    if failure == "shape":
        return "an output of the returned model has a different shape than the original's"
    if failure == "runtime":
        return "onnxruntime cannot run the returned model"
    ratio = actual.get("error ratio")
    if isinstance(ratio, (int, float)) and math.isfinite(ratio):
        return f"an output of the returned model differs from the original's by up to {ratio:.3g} times the tolerance"
    return "an output of the returned model differs from the original's"


def _problems(actual: Any, expected: dict[str, Any], where: str) -> list[str]:
    if not isinstance(actual, dict):
        return [f"{where}the probe's observation is malformed"]
    if actual.get("returned") != expected["returned"]:
        return [f"{where}fold_batchnorm did not return an onnx.ModelProto"]
    out = []
    if actual.get("ops") != expected["ops"]:
        out.append(f"{where}the returned graph does not have the node counts per op type that the fold leaves")
    if actual.get("valid") != "ok":
        out.append(f"{where}onnx.checker.check_model rejects the returned model")
    if actual.get("numerics") != "ok":
        out.append(where + _numerics_message(actual))
    if actual.get("graph inputs kept") is not True:
        out.append(f"{where}the returned graph's inputs are not the original's")
    if "input unchanged" in expected and actual.get("input unchanged") is not True:
        out.append(f"{where}the model passed to fold_batchnorm was modified; work on a copy")
    if "second run" in expected and actual.get("second run") != expected["second run"]:
        out.append(f"{where}running fold_batchnorm again on its own result changes the node counts")
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
