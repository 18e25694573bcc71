"""Command line for the grader library, without Django.

    python -m grader check [PACKAGE_DIR ...] [--fresh]  validate packages (default: all under challenges/;
                                                    one that passed before on this code and backend is not run again)
    python -m grader grade PACKAGE_DIR FILE [--public] [--json | --as-candidate]
    python -m grader mutants PACKAGE_DIR [--jobs N] [--limit N] [--json] [--write | --recount | --carry-over REV]
                                                    grade mutants of the reference on the hidden probes
                                                    and report the survivors (grader/mutants.py)

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
import threading
from pathlib import Path

from grader.feedback import candidate_view
from grader.grade import grade_submission
from grader.mutants import TARGET_SCORE, Outcome, carry_over_record, files_at, record_problems, recount_record, run_mutants, write_record
from grader.package import MUTANTS_RECORD, discover_packages, load_package_dir
from grader.validate import validate_all, validate_jobs
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
    mutants = sub.add_parser("mutants", help="mutation analysis: grade mutants of the reference, report the survivors")
    mutants.add_argument("package", type=Path)
    mutants.add_argument("--jobs", type=int, default=None, help="gradings at once (default: GRADER_VALIDATE_JOBS, else the cores, at most 4)")
    mutants.add_argument("--limit", type=int, default=None, help="grade only N mutants, evenly spread over the reference")
    mutants.add_argument("--json", action="store_true", help="print one JSON object")
    mutants.add_argument("--write", action="store_true", help=f"write the result to the package's {MUTANTS_RECORD}, keeping its whys")
    mutants.add_argument(
        "--recount", action="store_true", help=f"run nothing: rewrite {MUTANTS_RECORD} after survivors got a why (package unchanged)"
    )
    mutants.add_argument(
        "--carry-over",
        metavar="REV",
        help=f"run nothing: carry the {MUTANTS_RECORD} of git revision REV over changes no mutant's grading reads "
        "(statement, starter, solutions, hints, [rules])",
    )
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
        if args.command == "mutants":
            return _mutants(args)
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


def _mutants(args: argparse.Namespace) -> int:
    """``mutants``: progress on stderr, the report on stdout; 1 when the score is below the target."""
    if args.recount or args.carry_over:
        note = ""
        if args.recount:
            path = recount_record(args.package)
        else:
            path, refused = carry_over_record(args.package, files_at(args.package, args.carry_over))
            note = f" from {args.carry_over}; survivors the rules now refuse, killed: {', '.join(refused) or 'none'}"
        problems = record_problems(args.package)
        print(f"rewrote {path}{note}" + "".join(f"\n  {p}" for p in problems))
        return 1 if problems else 0
    package = load_package_dir(args.package)
    jobs = args.jobs if args.jobs is not None else validate_jobs()
    done = [0]
    lock = threading.Lock()

    def progress(outcome: Outcome) -> None:
        with lock:
            done[0] += 1
            state = "error" if outcome.score is None else "killed" if outcome.killed else "SURVIVED"
            print(f"[{done[0]}] {state:8} {outcome.mutant.id}", file=sys.stderr, flush=True)

    run = run_mutants(package, jobs=jobs, limit=args.limit, on_outcome=progress)
    if args.write:
        path = write_record(args.package, run)
        print(f"wrote {path}", file=sys.stderr)
    if args.json:
        print(json.dumps(run.to_dict(), indent=2))
    else:
        sampled = f" (a spread of {len(run.outcomes)} of the {run.generated} made)" if len(run.outcomes) < run.generated else ""
        print(f"{run.package}: {len(run.outcomes)} mutants of reference/{package.entry}{sampled}, graded on the hidden probes, {jobs} at a time")
        print(
            f"  killed {len(run.killed)}, survived {len(run.survivors)} ({len(run.equivalent)} recorded equivalent), "
            f"errors {len(run.errors)}; mutation score {run.score:.1f}% (target {TARGET_SCORE:g}%)"
        )
        for outcome in run.survivors + run.errors:
            why = run.whys.get(outcome.mutant.id, "")
            label = "EQUIVALENT" if outcome.survived and why else "SURVIVED" if outcome.survived else "ERROR"
            print(f"{label} {outcome.mutant.id}  {outcome.mutant.description}")
            print(f"    - {outcome.mutant.before}")
            print(f"    + {outcome.mutant.after}")
            if why:
                print(f"    why: {why}")
            if outcome.error:
                print(f"    {outcome.error}")
    return 0 if run.score >= TARGET_SCORE and not run.errors else 1


if __name__ == "__main__":
    sys.exit(main())
