"""Command line for the grader library, without Django.

    python -m grader check [PACKAGE_DIR ...] [--fresh]  validate packages (default: all under challenges/;
                                                    one that passed before on this code and backend is not run again)
    python -m grader grade PACKAGE_DIR FILE [--public] [--json | --as-candidate]

The web app's ``manage.py grade`` and ``manage.py check_challenges`` wrap the
same functions; this entry point exists so that a coach can work on a
package with nothing but the library. ``--as-candidate`` prints the result
as its candidate would see it (grader/feedback.py): what a reviewer reads to
check that a hidden probe gives nothing away.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from grader.feedback import candidate_view
from grader.grade import grade_submission
from grader.package import discover_packages, load_package_dir
from grader.validate import validate_all
from sandbox.errors import AppError

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader")
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="validate challenge packages")
    check.add_argument("packages", nargs="*", type=Path)
    check.add_argument("--fresh", action="store_true", help="validate even packages that passed before on this code and backend")
    grade = sub.add_parser("grade", help="grade one file against a package")
    grade.add_argument("package", type=Path)
    grade.add_argument("file", type=Path)
    grade.add_argument("--public", action="store_true", help="run the public probes (Run) instead of the hidden ones")
    output = grade.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print the full result (a coach's view) as one JSON object")
    output.add_argument("--as-candidate", action="store_true", help="print, as JSON, the result as the candidate who submitted FILE sees it")
    args = parser.parse_args(argv)

    try:
        if args.command == "check":
            folders = args.packages or discover_packages(ROOT / "challenges")
            failed = 0
            for report in validate_all(folders, remember=not args.fresh):
                print(f"{'PASS' if report.ok else 'FAIL'} {report.name}")
                for line in report.lines:
                    print(f"    {line}")
                failed += not report.ok
            return 1 if failed else 0
        package = load_package_dir(args.package)
        try:
            code = args.file.read_bytes()
        except OSError as exc:
            print(f"error: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
            return 2
        result = grade_submission(package, code, public=args.public)
    except AppError as exc:
        # A broken package, a missing image or an unknown backend is the operator's to fix: one line, no traceback.
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.as_candidate:
        print(json.dumps(candidate_view(result.to_dict()), indent=2))
    elif args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        print(f"{result.verdict.label}: {result.score:g}% ({result.message})")
        for probe in result.probes:
            mark = "PASS" if probe.passed else probe.status.upper()
            print(f"  {mark:14} {probe.category:14} {probe.name}")
            # The whole message: a traceback's last line is the one that says what went wrong.
            for line in probe.message.splitlines():
                print(f"      {line}")
        for hint in result.hints:
            if hint["tier"] == 1:
                print(f"  hint: {hint['text']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
