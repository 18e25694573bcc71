"""Answers every question from the printed text, with regular expressions.

The grep approach: it looks right on a quick read of one dump, and part of
it is right. The dispatch counts come out right, because `flow.dispatch`
and `flow.executable` print as whole words. But printed text is a rendering
of the IR:

- ``kind = #vector.kind<add>`` is an attribute that reads like a vector op,
  so ``vector.kind`` is reported as an op;
- ``vector.yield``, the terminator of ``vector.mask``'s region, is not
  printed at all, and ops nested in a one-line region are missed;
- a ``linalg.generic`` prints its ``lowering_config`` at the end of the op,
  in ``attrs = {...}``, not right after its name: the root of a generic
  dispatch is found under the wrong name, or not at all.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

# An op at the start of a line: optional results ("%0 = ", "%x, %y = "), then dialect.name.
OP_AT_LINE_START = re.compile(r"^\s*(?:%[\w#:, %]+ = )?([a-z_][a-z0-9_]*\.[a-z0-9_.]+)", re.M)
VECTOR_OP = re.compile(r"\bvector\.[a-z_]+")


def _op_names(text: str) -> set[str]:
    return set(OP_AT_LINE_START.findall(text))


def matmul_lowered(dumps: Sequence[Any]) -> dict[str, Any] | None:
    for i in range(1, len(dumps)):
        if "linalg.matmul" in dumps[i - 1].ir and "linalg.matmul" not in dumps[i].ir:
            return {"index": i, "became": sorted(_op_names(dumps[i].ir) - _op_names(dumps[i - 1].ir))}
    return None


def dispatch_count(dumps: Sequence[Any]) -> dict[str, int]:
    answer = {"dispatches": 0, "executables": 0}
    for dump in dumps:
        if re.search(r"\bflow\.executable ", dump.ir):
            answer = {
                "dispatches": len(re.findall(r"\bflow\.dispatch @", dump.ir)),
                "executables": len(re.findall(r"\bflow\.executable ", dump.ir)),
            }
    return answer


def first_vector_pass(dumps: Sequence[Any]) -> dict[str, Any] | None:
    for i, dump in enumerate(dumps):
        found = sorted(set(VECTOR_OP.findall(dump.ir)))
        if found:
            return {"index": i, "ops": found}
    return None


def tile_sizes(dumps: Sequence[Any]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for dump in dumps:
        # Attribute aliases are printed once at the top: "#config1 = #iree_cpu.lowering_config<...>".
        aliases = dict(re.findall(r"^(#\w+) = (.*)$", dump.ir, re.M))
        for match in re.finditer(r"func\.func @(\w+)\(\) attributes \{translation_info = (#\w+)\} \{(.*?)\n {8}\}", dump.ir, re.S):
            name, info, body = match.groups()
            if name in found:
                continue
            for op, ref in re.findall(r"= ([a-z_]+\.[a-z0-9_]+) \{lowering_config = (#\w+)\}", body):
                config = aliases.get(ref, "")
                levels = {k: [int(x) for x in v.split(",") if x.strip()] for k, v in re.findall(r"(\w+) = \[([\d, ]*)\]", config)}
                if "distribution" not in levels:
                    continue
                zeros = [0] * len(levels["distribution"])  # a missing level counts as zeros
                parallel = levels.get("vector_common_parallel", zeros)
                reduction = levels.get("vector_reduction", zeros)
                pipeline = re.search(r"pipeline<(\w+)>", aliases.get(info, ""))
                found[name] = {
                    "root": op,
                    "pipeline": pipeline.group(1) if pipeline else None,
                    "workgroup": levels["distribution"],
                    "vector": [p or r for p, r in zip(parallel, reduction, strict=True)],
                }
                break
    return found
