"""Custom check for onnx-fold-batchnorm, run in the trusted worker.

A probe's observation describes the graph the candidate's pass returned
(see probes/common.py, ``apply_pass``): node counts per op type, the
checker's verdict, the numerics against the original model, whether the
graph's inputs were kept, whether everything the fold does not own is byte
for byte the original's (``untouched``: "ok" or the parts that differ), and
whether it is a new model (not the caller's object, and editing it leaves the caller's model as it
was), whether every name is used once (``names``), whether each folded Conv carries its Conv's attributes byte for
byte (``attributes``), and for the hygiene probes whether the caller's model
was left unchanged. Some probes run the pass on several models and
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


# What "untouched" (probes/common.py) may name: the parts of the returned model outside what the fold owns
# that differ from the original. Anything else in that list (the observation is the candidate's) reads as
# a plain change.
_UNTOUCHED_PARTS = {
    "model fields": "a model-level field (ir_version, opset_import, producer, domain, model_version, doc_string, "
    "metadata_props, functions, training_info) is not the original's",
    "graph fields": "the graph's name, doc_string, inputs or outputs are not the original's",
    "nodes": "a node other than the folded Conv/BatchNormalization pairs was changed, added or removed "
    "(nodes are compared field for field, their subgraphs included)",
    "node order": "the nodes that stay are not in their original order",
    "initializers": "an initializer of the original was changed, or removed while something other than a folded pair reads it "
    "(a node at any depth, a graph input or output, or training_info: a binding or a node of its graphs)",
    "value_info": "the graph's value_info is not the original's: an entry of a tensor still in the graph was changed or "
    "removed, or an entry was added",
}


# What "names" (probes/common.py, names_once) may name.
_NAME_PROBLEMS = {
    "defined twice": "a tensor name is defined more than once across the graph and its subgraphs",
    "name in use": "a name given to a new initializer is already used by the model (an initializer, sparse or not, a graph "
    "input or output, a node's output, a value_info entry, or any of these inside a subgraph, at any depth, or a name in "
    "training_info)",
    "node name": "the new node's name is another node's name (a node of the model passed in, at any depth, or another new node)",
}


def _names_message(parts: Any) -> str:
    if isinstance(parts, list):
        for part in parts:
            if isinstance(part, str) and part in _NAME_PROBLEMS:
                return _NAME_PROBLEMS[part]
    return "a name of the returned model is used twice"


def _untouched_message(parts: Any) -> str:
    if isinstance(parts, list):
        for part in parts:
            if isinstance(part, str) and part in _UNTOUCHED_PARTS:
                return _UNTOUCHED_PARTS[part]
    return "a part of the model that the fold does not own is not the original's"


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
    if actual.get("untouched") != "ok":
        out.append(f"{where}what the fold must leave alone changed: " + _untouched_message(actual.get("untouched")))
    if "attributes" in expected and actual.get("attributes") != "ok":
        out.append(
            f"{where}a folded Conv does not carry the attributes of the Conv it replaces: it must have every attribute of "
            "that Conv, as it was (kernel_shape and attributes equal to their defaults included), and no other"
        )
    if "names" in expected and actual.get("names") != "ok":
        out.append(f"{where}" + _names_message(actual.get("names")))
    if "new model" in expected and actual.get("new model") is not True:
        out.append(f"{where}fold_batchnorm returned the model passed in, or one that shares its data, not a new model")
    if "input unchanged" in expected and actual.get("input unchanged") is not True:
        out.append(f"{where}the model passed to fold_batchnorm was modified; work on a copy")
    if "second run" in expected and actual.get("second run") != expected["second run"]:
        out.append(f"{where}running fold_batchnorm again on its own result changes the node counts")
    if "second run valid" in expected and actual.get("second run valid") != "ok":
        out.append(f"{where}running fold_batchnorm again on its own result gives a model onnx.checker rejects")
    if "second run untouched" in expected and actual.get("second run untouched") != "ok":
        out.append(f"{where}running fold_batchnorm again on its own result changes it: " + _untouched_message(actual.get("second run untouched")))
    if "second run new model" in expected and actual.get("second run new model") is not True:
        out.append(f"{where}run again on its own result, fold_batchnorm returned that model, not a new one")
    if "second run numerics" in expected and actual.get("second run numerics") != "ok":
        out.append(f"{where}running fold_batchnorm again on its own result changes what the model computes")
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
