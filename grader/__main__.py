"""Command line for the grader library, without Django.

    python -m grader check [PACKAGE_DIR ...] [--fresh [--write-signatures]]
                                                    validate packages (default: all under challenges/;
                                                    one that passed before on this code and backend is not run again;
                                                    --write-signatures records how each wrong solution failed)
    python -m grader grade PACKAGE_DIR FILE [--public] [--json | --as-candidate]
    python -m grader mutants PACKAGE_DIR [--jobs N] [--limit N] [--json] [--write | --recount | --carry-over REV]
                                                    grade mutants of the reference on the hidden probes
                                                    and report the survivors (grader/mutants.py)
    python -m grader signatures PACKAGE_DIR [--write] [--leave-one-out]
                                                    grade the shipped wrong solutions and record how each
                                                    fails (grader/diagnose.py); or measure the diagnosis
    python -m grader diagnose PACKAGE_DIR FILE      grade FILE on the hidden probes and name the known
                                                    mistake its failures look like
    python -m grader solutions PACKAGE_DIR [--as-edits]
                                                    list which shipped solutions are mostly the reference;
                                                    --as-edits keeps those as solutions/<name>.patch
                                                    (grader/solution_edits.py)

The web app's ``manage.py grade`` and ``manage.py check_challenges`` wrap the
same functions; this entry point exists so that a coach can work on a
package with nothing but the library. ``--as-candidate`` prints the result
as its candidate would see it (grader/feedback.py): what a reviewer reads to
check that a hidden probe gives nothing away.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
import threading
from pathlib import Path
from typing import Any

from grader.diagnose import leave_one_out, library, nearest, signature
from grader.diagnose import record_problems as diagnosis_record_problems
from grader.errors import PackageError
from grader.feedback import candidate_view
from grader.grade import grade_submission
from grader.mutants import TARGET_SCORE, MutationRun, Outcome, carry_over_record, files_at, record_problems, recount_record, run_mutants, write_record
from grader.package import MUTANTS_RECORD, SIGNATURES_RECORD, Package
from grader.package_load import discover_packages, load_package_dir
from grader.signatures import grade_wrong_solutions, write_signatures
from grader.solution_edits import base_of, edit_of, materialise, worth_an_edit
from grader.validate import validate_all, validate_jobs
from grader.verdicts import Verdict
from sandbox.errors import AppError

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader")
    sub = parser.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="validate challenge packages")
    check.add_argument("packages", nargs="*", type=Path)
    check.add_argument("--fresh", action="store_true", help="validate even packages that passed before on this code and backend")
    check.add_argument(
        "--write-signatures",
        action="store_true",
        help="with --fresh: write each passing package's solutions/signatures.toml from this validation's gradings",
    )
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
        help=f"carry the {MUTANTS_RECORD} of git revision REV over changes no mutant's grading reads "
        "(statement, starter, solutions, coverage table, hints, [rules]), grading nothing; or over probes added "
        "(grader/probe_additions.py), grading only the survivors again",
    )
    signatures = sub.add_parser("signatures", help="record how each shipped wrong solution fails (the diagnosis library)")
    signatures.add_argument("package", type=Path)
    signatures.add_argument("--jobs", type=int, default=None, help="gradings at once (default: GRADER_VALIDATE_JOBS, else the cores, at most 4)")
    signatures.add_argument("--write", action="store_true", help=f"write the package's {SIGNATURES_RECORD}")
    signatures.add_argument(
        "--leave-one-out", action="store_true", help="grade nothing: diagnose each recorded wrong solution with a library without it"
    )
    solutions_cmd = sub.add_parser("solutions", help="keep the shipped solutions that are mostly the reference as edits of it")
    solutions_cmd.add_argument("package", type=Path)
    solutions_cmd.add_argument("--as-edits", action="store_true", help="write solutions/<name>.patch in place of each such .py")
    diagnose_cmd = sub.add_parser("diagnose", help="grade one file on the hidden probes and name the known mistake it looks like")
    diagnose_cmd.add_argument("package", type=Path)
    diagnose_cmd.add_argument("file", type=Path)
    args = parser.parse_args(argv)

    try:
        if args.command == "check":
            folders = args.packages or discover_packages(ROOT / "challenges")
            failed = 0
            repository = (ROOT / "challenges").resolve()
            # The repository's packages must hold a coverage table; a coach's own package elsewhere may.
            required = all(Path(f).resolve().is_relative_to(repository) for f in folders)
            if args.write_signatures and not args.fresh:
                print("error: --write-signatures needs --fresh (a validation looked up grades nothing to record)", file=sys.stderr)
                return 2
            reports = validate_all(folders, remember=not args.fresh, require_coverage=required, record_signatures=args.write_signatures)
            for report in reports:
                print(f"{'PASS' if report.ok else 'FAIL'} {report.name}")
                for line in report.lines:
                    print(f"    {line}")
                failed += not report.ok
            return 1 if failed else 0
        if args.command == "mutants":
            return _mutants(args)
        if args.command == "signatures":
            return _signatures(args)
        if args.command == "solutions":
            return _solutions(args)
        package = load_package_dir(args.package)
        try:
            code = args.file.read_bytes()
        except OSError as exc:
            print(f"error: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
            return 2
        if args.file.suffix == ".patch":
            # A shipped solution stored as its edit of the reference or of another shipped solution (its header names
            # which): graded as the file it makes.

            def shipped(base: str) -> str:
                if base not in package.solution_sources:
                    raise PackageError(f"is an edit of solutions/{base}.py, which the package does not ship", path=str(args.file))
                return package.solution_code(base).decode("utf-8")

            code = materialise(code.decode("utf-8"), reference=package.reference_code, solution_code=shipped, origin=str(args.file)).encode("utf-8")
        result = grade_submission(package, code, public=getattr(args, "public", False))
    except AppError as exc:
        # A broken package, a missing image or an unknown backend is the operator's to fix: one line, no traceback.
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.command == "diagnose":
        print(f"{result.verdict.label}: {result.score:g}% ({result.message})")
        print(_diagnosis_line(result.diagnosis))
        # The signature the match was made from, one probe a line: a diagnosis can be measured again offline (another
        # matching rule, a newer library) from kept outputs without grading the file again.
        for name, kind in sorted((signature(result.to_dict()) or {}).items()):
            print(f"  failed {name}: {kind}")
        return 0
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


def _diagnosis_line(diagnosis: dict[str, Any] | None) -> str:
    if not diagnosis:
        return "no known mistake looks like it, and no part of the statement has all its probes failing"
    if not diagnosis["solutions"]:
        parts = "\n".join(f"  {rule}: {text}" for rule, text in zip(diagnosis["rules"], diagnosis["texts"], strict=True))
        return f"no known mistake looks like it; every probe of these parts of the statement (coverage.toml) fails:\n{parts}"
    how = "the same failures as" if diagnosis["exact"] else f"{diagnosis['similarity']:.0%} like"
    lines = [
        f"{how} solutions/{name}.py (family {family}):\n  {text or '(no diagnosis written for it)'}"
        for name, family, text in zip(diagnosis["solutions"], diagnosis["families"], diagnosis["texts"], strict=True)
    ]
    return "\n".join(lines)


def _solutions(args: argparse.Namespace) -> int:
    """``solutions``: which whole solution files are mostly the reference or a correct shipped solution; with
    --as-edits, each becomes a .patch of the base that gives the smallest edit."""
    folder: Path = args.package
    package = load_package_dir(folder)
    kept: dict[str, bytes] = {}
    bases: dict[str, str] = {}  # solution -> the solution its edit is made of, as decided in this run and before
    for solution in package.solutions:
        edit = package.files.get(f"solutions/{solution.name}.patch")
        if edit is not None and (base := base_of(edit.decode("utf-8"))) is not None:
            bases[solution.name] = base
    # Wrong solutions first: a wrong variant of a correct alternative becomes its edit, not the other way round.
    for solution in sorted(package.solutions, key=lambda s: s.verdict == Verdict.ACCEPTED.value):
        whole = folder / "solutions" / f"{solution.name}.py"
        if not whole.is_file():
            continue  # an edit already
        code = whole.read_bytes().decode("utf-8")
        base, base_code = _nearest_base(package, solution.name, code, bases)
        if not worth_an_edit(base_code, code):
            print(f"  whole  solutions/{solution.name}.py (not mostly the reference or a correct solution)")
            continue
        base_path = f"reference/{package.entry}" if base is None else f"solutions/{base}.py"
        patch = edit_of(base_code, code, reference_path=base_path, solution_path=f"solutions/{solution.name}.py")
        print(f"  edit   solutions/{solution.name}.py: {len(code.splitlines())} lines -> a {len(patch.splitlines())}-line patch of {base_path}")
        if args.as_edits:
            (folder / "solutions" / f"{solution.name}.patch").write_text(patch, encoding="utf-8")
            whole.unlink()
            kept[solution.name] = code.encode("utf-8")
            if base is not None:
                bases[solution.name] = base
    if kept:
        again = load_package_dir(folder)
        changed = [name for name, code in kept.items() if again.solution_code(name) != code]
        if changed:
            print(f"error: the edits of {', '.join(changed)} do not give back their files", file=sys.stderr)
            return 1
    return 0


def _nearest_base(package: Package, name: str, code: str, bases: dict[str, str]) -> tuple[str | None, str]:
    """The reference (None) or the shipped solution whose edit into ``code`` is shortest, and that base's code.

    Only correct solutions are bases: an edit of one is exactly the mistake, where an edit of a wrong sibling would
    show two mistakes, its own and the sibling's undone. A solution whose chain of bases leads back to ``name`` is
    passed over (edits may not go round in a circle); on equal lengths the reference wins."""
    accepted = {s.name for s in package.solutions if s.verdict == Verdict.ACCEPTED.value}

    def leads_back(other: str) -> bool:
        seen = set()
        while other in bases and other not in seen:
            seen.add(other)
            other = bases[other]
            if other == name:
                return True
        return False

    def patch_lines(base_code: str) -> int:
        return sum(1 for _ in difflib.unified_diff(base_code.splitlines(), code.splitlines(), n=3, lineterm=""))

    options: list[tuple[int, int, str | None, str]] = [(patch_lines(package.reference_code), 0, None, package.reference_code)]
    for other in package.solutions:
        if other.name == name or other.name not in accepted or leads_back(other.name):
            continue
        other_code = package.solution_code(other.name).decode("utf-8")
        options.append((patch_lines(other_code), 1, other.name, other_code))
    _, _, base, base_code = min(options, key=lambda o: (o[0], o[1]))
    return base, base_code


def _signatures(args: argparse.Namespace) -> int:
    """``signatures``: grade and (with --write) record; or, with --leave-one-out, measure the record."""
    package = load_package_dir(args.package)
    if args.leave_one_out:
        problems = diagnosis_record_problems(package)
        if problems:
            print("the record does not hold: " + "; ".join(problems), file=sys.stderr)
            return 1
        held = leave_one_out(package)
        for h in held:
            matched = f"{', '.join(k.name for k in h.matched.matches)} ({h.matched.similarity:.2f})" if h.matched else "-"
            print(f"  {h.outcome:6} {h.name:40} family {h.family:30} -> {matched}")
        counts = {o: sum(h.outcome == o for h in held) for o in ("right", "none", "wrong")}
        known = library(package)
        named = sum(1 for k in known if (found := nearest(k.failed, known)) is not None and k.family in found.families)
        print(
            f"{package.slug}: {len(held)} wrong solutions of {len({k.family for k in known})} mistakes; graded as candidates, "
            f"{named} named their own; left out one at a time: " + ", ".join(f"{n} {o}" for o, n in counts.items())
        )
        return 0
    jobs = args.jobs if args.jobs is not None else validate_jobs()
    results = grade_wrong_solutions(package, jobs=jobs)
    for name, result in results.items():
        failed = ", ".join(f"{p} {k}" for p, k in sorted((signature(result) or {}).items()))
        print(f"  {name}: {result['verdict']} {result['score']:g}; {failed or 'no failure'}")
    if args.write:
        print(f"wrote {write_signatures(args.package, package, results)}", file=sys.stderr)
    return 0


def _mutants(args: argparse.Namespace) -> int:
    """``mutants``: progress on stderr, the report on stdout; 1 when the score is below the target."""
    if args.recount or args.carry_over:
        note = ""
        if args.recount:
            path = recount_record(args.package)
        else:
            jobs = args.jobs if args.jobs is not None else validate_jobs()

            def regrade(package: Package, ids: list[str]) -> MutationRun:
                print(f"probes were added: grading the {len(ids)} survivors again ({', '.join(ids)})", file=sys.stderr, flush=True)
                return run_mutants(package, jobs=jobs, ids=ids)

            path, refused = carry_over_record(args.package, files_at(args.package, args.carry_over), regrade)
            note = f" from {args.carry_over}; survivors the rules or new probes now kill: {', '.join(refused) or 'none'}"
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
