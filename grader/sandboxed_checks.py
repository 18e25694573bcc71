"""Run a package's custom checks (probes/checks.py) in a sandbox instead of the trusted worker.

Place in the flow: ``grade.judge`` calls :func:`run_sandboxed_checks` between
running the probes and scoring them, for packages whose ``checks_in_sandbox``
is set (the web sets it for challenges coaches wrote in the browser, whose
checks.py is code from a less trusted author than the repository's reviewed
packages). The checks then see exactly what they would see in the worker: the
decoded observations, ``TaggedArray`` included, and ``grader.checks`` to
import ``CheckResult`` and ``check`` from.

No runner change is needed: the checks travel as an ordinary job. The
"solution" is a generated data module (the observations, encoded by the
observation codec as on the wire, and a copy of ``grader.checks`` it
installs under its own name); the
package's checks.py is the job's ``probe_common``; the "probes" are generated,
one per probe to check, each calling the check twice, on (candidate,
expected) and on (expected, expected), the second being what ``grade`` needs
to tell a candidate's misshaped observation from a broken check. Outcomes
come back as small observations and are read as data, never run.

A check's error report (the third item of ``(passed, message, report)``,
``grader/error_report.py``) is skipped here: its verdict and message come
back, its arrays do not, so a probe checked in a sandbox has no heat-map.
Carrying it would mean trusting arrays a less trusted author's code computed
about the candidate's output; the built-in checks' reports are unaffected.

The runner reads at most 96 MiB of job, so observations are sent in batches
under :data:`BATCH_BYTES`; two observations at the wire's cap fit in one, and
anything larger than a batch is refused (a wrong answer for the candidate's,
a package error for the reference's).
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader.checks import CheckResult
from grader.custom_checks import BUILTIN_CHECKS
from grader.errors import PackageError
from grader.execute import Execution, run_job, stretched_wall_seconds
from grader.package import Package
from grader.probe_meta import ProbeSpec
from grader.sandbox_profile import sandbox_profile
from sandbox import Backend, SandboxLimits, get_backend
from sandbox.runner.codec import encode_observation
from sandbox.runner.profiles import PIDS_LIMIT

#: Encoded observations per sandbox job, base64 included; the runner refuses a job line over 96 MiB.
#: Two observations at the wire's 32 MiB cap (grader/execute.py OBSERVATION_BYTES) fit in one.
BATCH_BYTES = 88 * 1024 * 1024
OUTCOME_BYTES = 256 * 1024
_GRADER_CHECKS = Path(__file__).resolve().with_name("checks.py")


class CheckRaised(Exception):
    """The check raised (or did not finish) in its sandbox: the type it raised there and its message."""

    def __init__(self, error: str) -> None:
        exc_type, sep, text = error.partition(": ")
        self.exc_type = exc_type if sep and exc_type.isidentifier() else "CheckFailed"
        self.text = text if sep and exc_type.isidentifier() else error
        super().__init__(error)


@dataclass
class SandboxedChecks:
    """Outcomes per probe name: the candidate's observation and the reference's own, each checked."""

    outcomes: dict[str, dict[str, Any]] = field(default_factory=dict)

    def candidate(self, name: str) -> CheckResult:
        return _result(self.outcomes[name]["candidate"])

    def reference(self, name: str) -> CheckResult:
        return _result(self.outcomes[name]["reference"])


def _result(outcome: Any) -> CheckResult:
    if not isinstance(outcome, dict) or "error" in outcome or not isinstance(outcome.get("passed"), bool):
        error = outcome.get("error") if isinstance(outcome, dict) else None
        raise CheckRaised(str(error or "the check returned nothing readable")[:500])
    details = outcome.get("details")
    return CheckResult(bool(outcome["passed"]), str(outcome.get("message", ""))[:2000], details if isinstance(details, dict) else {})


def needs_sandbox(package: Package, spec: ProbeSpec) -> bool:
    return package.checks_in_sandbox and spec.check not in BUILTIN_CHECKS


# ---------------------------------------------------------------- the generated job


@dataclass
class _Item:
    """One probe's check to run: both observations encoded by the codec, their arrays in ``blobs``."""

    name: str
    check: str
    actual: Any  # tree
    expected: Any  # tree
    blobs: list[bytes]
    size: int


def _item(spec: ProbeSpec, actual: Any, expected: Any) -> _Item:
    blobs: list[bytes] = []
    actual_tree = encode_observation(actual, blobs)
    expected_tree = encode_observation(expected, blobs)
    size = sum(len(b) for b in blobs) * 4 // 3 + len(json.dumps([actual_tree, expected_tree]))
    return _Item(spec.name, spec.check, actual_tree, expected_tree, blobs, size)


_DATA_MODULE = '''"""Observations for sandboxed custom checks (generated by grader/sandboxed_checks.py)."""
import base64
import json
import sys
import types

import codec

ITEMS = json.loads({payload!r})
for _item in ITEMS:
    _item["blobs"] = [base64.b64decode(b) for b in _item["blobs"]]


def value(item, key):
    """A fresh decoded copy of the item's "actual" or "expected": a check that mutates its input spoils nothing."""
    return codec.decode_observation(item[key], item["blobs"])


def _install_grader_checks():
    """checks.py may import grader.checks (CheckResult, check), as in the worker: give it the same module."""
    for name in ("sandbox", "sandbox.runner", "grader"):
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules["sandbox.runner.codec"] = codec
    module = types.ModuleType("grader.checks")
    module.__file__ = "grader/checks.py"
    sys.modules["grader.checks"] = module
    exec(compile({grader_checks!r}, "grader/checks.py", "exec"), module.__dict__)


_install_grader_checks()
'''

_PROBES_HEADER = '''"""One probe per custom check to run (generated by grader/sandboxed_checks.py)."""
import numbers

import probe_common as checks
from probekit import probe


def _plain(details):
    out = {}
    for key, value in (details or {}).items():
        if isinstance(value, bool | str):
            out[str(key)] = value
        elif isinstance(value, numbers.Integral):
            out[str(key)] = int(value)
        elif isinstance(value, numbers.Real):
            out[str(key)] = float(value)
    return out


def _outcome(fn, actual, expected):
    try:
        out = fn(actual, expected)
        if hasattr(out, "passed") and hasattr(out, "message"):
            return {"passed": bool(out.passed), "message": str(out.message), "details": _plain(getattr(out, "details", None))}
        if isinstance(out, tuple) and len(out) in (2, 3):
            # A third item (the error report's arrays) is not carried back: see the module's docstring.
            return {"passed": bool(out[0]), "message": str(out[1])}
        passed = bool(out)
        return {"passed": passed, "message": "" if passed else "the result does not meet the check"}
    except Exception as exc:  # the check's failure is data for the worker to judge
        return {"error": type(exc).__name__ + ": " + str(exc)[:300]}


def _run(solution, index):
    item = solution.ITEMS[index]
    fn = getattr(checks, item["check"])
    return {
        "candidate": _outcome(fn, solution.value(item, "actual"), solution.value(item, "expected")),
        "reference": _outcome(fn, solution.value(item, "expected"), solution.value(item, "expected")),
    }
'''

_PROBE = """

@probe(category="checks")
def check_{index}(solution):
    return _run(solution, {index})
"""


def _job(package: Package, items: list[_Item]) -> dict[str, Any]:
    entries = [
        {"check": item.check, "actual": item.actual, "expected": item.expected, "blobs": [base64.b64encode(b).decode("ascii") for b in item.blobs]}
        for item in items
    ]
    payload = json.dumps(entries, separators=(",", ":"))
    solution = _DATA_MODULE.format(payload=payload, grader_checks=_GRADER_CHECKS.read_text(encoding="utf-8"))
    probes = _PROBES_HEADER + "".join(_PROBE.format(index=i) for i in range(len(items)))
    assert package.checks_source is not None
    return {
        "public": False,
        "probes_list": [{"name": f"check_{i}", "timeout": package.limits.probe_seconds} for i in range(len(items))],
        "limits": {"output_bytes": 64 * 1024, "observation_bytes": OUTCOME_BYTES},
        "sources": {"solution": solution, "probes": probes, "common": package.checks_source.decode("utf-8")},
    }


def _batches(items: list[_Item]) -> list[list[_Item]]:
    batches: list[list[_Item]] = [[]]
    used = 0
    for item in items:
        if batches[-1] and used + item.size > BATCH_BYTES:
            batches.append([])
            used = 0
        batches[-1].append(item)
        used += item.size
    return [b for b in batches if b]


def _limits(package: Package, n: int) -> SandboxLimits:
    return SandboxLimits(
        # Room for each check stretched for the host's load, as a probe run has (grader/execute.py: sandbox_limits).
        wall_seconds=stretched_wall_seconds([package.limits.probe_seconds] * n),
        memory_mb=package.limits.memory_mb,
        pids=PIDS_LIMIT.get(package.runtime, 128),
        stream_bytes=n * (OUTCOME_BYTES + 2 * 64 * 1024) + 1024 * 1024,
    )


def _read(execution: Execution, items: list[_Item], outcomes: dict[str, dict[str, Any]]) -> None:
    if execution.syntax_error:
        raise PackageError(f"the sandboxed checks did not compile: {execution.syntax_error.get('message')}", path="probes/checks.py")
    for i, item in enumerate(items):
        run = execution.probes.get(f"check_{i}")
        if run is None or run.status != "ok" or not isinstance(run.observation, dict):
            why = f"{run.status}: {run.message}" if run is not None else "it did not run"
            failed = {"error": f"the check did not finish in its sandbox ({why})"[:500]}
            outcomes[item.name] = {"candidate": failed, "reference": failed}
            continue
        outcomes[item.name] = {"candidate": run.observation.get("candidate"), "reference": run.observation.get("reference")}


def run_sandboxed_checks(
    package: Package, execution: Execution, expected: dict[str, Any], *, public: bool, backend: Backend | None = None
) -> SandboxedChecks:
    """Run, in sandboxes of the package's runtime, every custom check this execution needs."""
    result = SandboxedChecks()
    items = []
    for spec in package.probes(public):
        run = execution.probes.get(spec.name)
        if not needs_sandbox(package, spec) or run is None or run.status != "ok" or spec.name not in expected:
            continue
        item = _item(spec, run.observation, expected[spec.name])
        if item.size > BATCH_BYTES:
            reference = _item(spec, expected[spec.name], expected[spec.name])
            if reference.size > BATCH_BYTES:
                raise PackageError(
                    f"probe '{spec.name}' observes more than {BATCH_BYTES // 2**20} MB; custom checks of browser-authored "
                    "packages need smaller observations (summarise arrays in the probe)",
                    path=f"{package.slug}/probes/checks.py",
                )
            too_big = f"the result is too large to check ({item.size // 2**20} MB; the reference's is {reference.size // 2**20} MB)"
            result.outcomes[spec.name] = {"candidate": {"passed": False, "message": too_big}, "reference": {"passed": True, "message": ""}}
            continue
        items.append(item)
    backend = backend or get_backend()
    profile = sandbox_profile(package)
    for batch in _batches(items):
        ran = run_job(backend, profile, _limits(package, len(batch)), _job(package, batch), {f"check_{i}" for i in range(len(batch))})
        _read(ran, batch, result.outcomes)
    return result
