"""Record how each shipped wrong solution fails the hidden probes: ``solutions/signatures.toml`` (grader/diagnose.py).

Place in the flow: ``python -m grader signatures PACKAGE --write`` (grader/__main__.py)
grades the package's wrong solutions as Submits are graded, a lane per job,
several in each sandbox (``grade_series``, as validation and mutation
analysis do), and writes the record the worker's diagnosis reads. A grading
the platform failed is tried again; a record is written only when every wrong
solution was graded.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from grader.diagnose import record_text
from grader.errors import PlatformError
from grader.grade import grade_series
from grader.package import SIGNATURES_RECORD, Package
from grader.verdicts import Verdict
from sandbox import Backend

_TRIES = 2


def grade_wrong_solutions(package: Package, *, jobs: int, backend: Backend | None = None) -> dict[str, dict[str, Any]]:
    """Each wrong solution's hidden result (as a dict), graded ``jobs`` lanes at a time."""
    wrong = [s.name for s in package.solutions if s.verdict != Verdict.ACCEPTED.value]
    lanes = [lane for lane in (wrong[i :: max(1, jobs)] for i in range(max(1, jobs))) if lane]

    def grade_lane(names: list[str]) -> dict[str, dict[str, Any]]:
        for attempt in range(_TRIES):
            try:
                codes: list[str | bytes] = [package.solution_code(name) for name in names]
                results = grade_series(package, codes, public=False, backend=backend)
                return {name: result.to_dict() for name, result in zip(names, results, strict=True)}
            except PlatformError:
                if attempt == _TRIES - 1:
                    raise
        raise AssertionError("unreachable")

    graded: dict[str, dict[str, Any]] = {}
    with ThreadPoolExecutor(max_workers=max(1, len(lanes)), thread_name_prefix="signatures") as pool:
        for part in pool.map(grade_lane, lanes):
            graded.update(part)
    internal = sorted(name for name, result in graded.items() if result.get("verdict") == Verdict.INTERNAL_ERROR.value)
    if internal:
        raise PlatformError(f"the platform failed grading {', '.join(internal)}; not writing {SIGNATURES_RECORD}")
    return graded


def write_signatures(folder: Path, package: Package, results: dict[str, dict[str, Any]]) -> Path:
    path = folder / SIGNATURES_RECORD
    path.write_text(record_text(package, results), encoding="utf-8")
    return path
