"""A probe's check, run in the worker: the built-in comparison, or a function of the package's probes/checks.py.

Place in the flow: ``grade.evaluate`` calls :func:`run_check` for each probe
that ran, with the candidate's observation and the reference's, unless the
package's custom checks run in a sandbox (``sandboxed_checks.py``, for
packages written in the browser). A package's checks.py is reviewed content
of the repository, so it is trusted: it is compiled and executed here, once
per package version, and kept for the next gradings of that version.
"""

from __future__ import annotations

import logging
import threading
import types
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from grader.checks import CheckResult, check
from grader.error_report import report_from_check
from grader.errors import PackageError
from grader.package import Package
from grader.probe_meta import ProbeSpec

log = logging.getLogger(__name__)

# The checks every package has without a checks.py (grader/checks.py).
BUILTIN_CHECKS = ("auto", "exact")

# Loaded checks modules by package version, the most recently used last. A
# long-lived worker sees every version a re-synced repository ever had: keep
# only the recent ones.
CHECKS_MODULES_KEPT = 64
_checks_modules: OrderedDict[str, types.ModuleType] = OrderedDict()
_checks_modules_lock = threading.Lock()  # validation grades solutions on threads


def custom_check(package: Package, name: str) -> Callable[[Any, Any], Any]:
    """The function ``name`` of the package's probes/checks.py, loaded here (trusted content)."""
    with _checks_modules_lock:
        module = _checks_modules.get(package.version)
        if module is not None:
            _checks_modules.move_to_end(package.version)
    if module is None:
        source = package.checks_source
        if source is None:
            raise PackageError("probes/checks.py is missing", path=f"{package.slug}/probes/checks.py")
        module = types.ModuleType(f"challenge_checks_{package.version[:12]}")
        module.__dict__["__file__"] = f"{package.slug}/probes/checks.py"
        exec(compile(source, f"{package.slug}/probes/checks.py", "exec"), module.__dict__)  # noqa: S102 - coach content, trusted
        with _checks_modules_lock:
            _checks_modules[package.version] = module
            while len(_checks_modules) > CHECKS_MODULES_KEPT:
                _checks_modules.popitem(last=False)
    fn = getattr(module, name, None)
    if not callable(fn):
        raise PackageError(f"no function '{name}'", path=f"{package.slug}/probes/checks.py")
    return fn  # type: ignore[no-any-return]


def run_check(package: Package, spec: ProbeSpec, actual: Any, expected: Any) -> CheckResult:
    """The probe's check on (actual, expected).

    A custom check may return a CheckResult, (passed, message) or a truth
    value; or (passed, message, report) where report is a dict of numpy
    arrays, at least ``ratio`` (each element's error over the bound the check
    allows it), for the page's heat-map (``grader/error_report.py``). A
    CheckResult (or any object with ``passed``, ``message`` and ``details``,
    as a sandboxed check's is read) may say how it failed in
    ``details["reason"]``, a short kebab-case word (``write-past-buffer``,
    ``copy-inside-k``): the diagnosis (grader/diagnose.py) tells apart two
    mistakes one check fails for different reasons. The candidate never sees
    it: a hidden probe's custom check still reads "does not pass this
    probe's check".
    """
    if spec.check in BUILTIN_CHECKS:
        return check(actual, expected, mode=spec.check, rtol=spec.rtol, atol=spec.atol)
    outcome = custom_check(package, spec.check)(actual, expected)
    if isinstance(outcome, CheckResult):
        return outcome
    if hasattr(outcome, "passed") and hasattr(outcome, "message"):
        details = getattr(outcome, "details", None)
        return CheckResult(bool(outcome.passed), str(outcome.message), dict(details) if isinstance(details, dict) else {})
    if isinstance(outcome, tuple) and len(outcome) == 3:
        result = CheckResult(bool(outcome[0]), str(outcome[1]))
        if not result.passed:
            result.error_report = _report(package, spec, outcome[2], actual)
        return result
    if isinstance(outcome, tuple) and len(outcome) == 2:
        return CheckResult(bool(outcome[0]), str(outcome[1]))
    return CheckResult(bool(outcome), "" if outcome else "the result does not meet the check")


def _report(package: Package, spec: ProbeSpec, extra: Any, actual: Any) -> dict[str, Any] | None:
    """A custom check's report; one that cannot be built is left out, never a grading failure."""
    try:
        return report_from_check(extra, actual)
    except Exception:
        log.exception("the error report of %s's check %s could not be built", package.slug, spec.check)
        return None
