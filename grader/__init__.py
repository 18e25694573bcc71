"""The trusted judge: load challenge packages, run probes in a sandbox, check, score, hint.

Public entry points::

    from grader import grade_submission, load_package_dir, package_from_files
    result = grade_submission(package, code, public=False)   # -> GradeResult

This package never imports Django: the web app is one client, ``python -m
grader`` another, the tests a third.
"""

from __future__ import annotations

from grader.errors import GraderError, InvalidSubmission, PackageError, PlatformError
from grader.grade import GradeResult, ProbeResult, grade_submission
from grader.package import Package
from grader.package_load import discover_packages, load_package_dir, package_from_files
from grader.verdicts import Verdict

__all__ = [
    "GradeResult",
    "GraderError",
    "InvalidSubmission",
    "Package",
    "PackageError",
    "PlatformError",
    "ProbeResult",
    "Verdict",
    "discover_packages",
    "grade_submission",
    "load_package_dir",
    "package_from_files",
]
