"""Mutation analysis of a package: grade mutants of its reference on the hidden probes, and record the result.

Place in the flow: ``python -m grader mutants PACKAGE`` (grader/__main__.py)
calls :func:`run_mutants`; the mutants come from grader/mutate.py and are
graded as a submission is, a few in each sandbox (``grade_series``), side by side. A
mutant is *killed* when it scores below 100; one that scores 100 *survived*:
either the probes miss a mistake (add a probe that kills it) or no input the
statement allows can tell it from the reference (an *equivalent* mutant,
recorded with a one-line reason). The mutation score is killed / (total -
equivalent).

``solutions/mutants.toml`` records a run: the package version it was
computed for (without the record itself: ``version_without_mutants``), the
counts, every survivor judged equivalent with its ``why``, and the survivors
not judged yet. :func:`record_problems` is what ``make test`` checks of it
(the version is current, the counts add up, the score meets the target)
without running a mutant.
"""

from __future__ import annotations

import ast
import json
import subprocess
import tomllib
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader.errors import PackageError, PlatformError
from grader.execute import refusals
from grader.grade import expected_observations, grade_series, grade_submission
from grader.mutant import Mutant
from grader.mutate import make_mutants
from grader.package import MUTANTS_RECORD, Package, graded_part, hidden_graded_version, version_without_mutants
from grader.package_load import load_package_dir, read_package_files
from grader.probe_additions import PROBE_PREFIX, probe_files_only_added
from sandbox import Backend

# The mutation score every package must reach (issue 12).
TARGET_SCORE = 95.0
# A grading that failed for the platform's sake (a sandbox that did not start) is tried this often.
_TRIES = 2
# Mutants graded one after another in one sandbox (``grade_series``): a
# sandbox start (seconds for torch) paid once per this many instead of each.
SERIES_LENGTH = 8


@dataclass
class Outcome:
    """One mutant's grading: its score, or why it could not be graded."""

    mutant: Mutant
    score: float | None = None
    verdict: str = ""
    failed: tuple[str, ...] = ()  # "probe (status)" of each failed probe
    error: str = ""

    @property
    def killed(self) -> bool:
        return self.score is not None and self.score < 100

    @property
    def survived(self) -> bool:
        return self.score is not None and self.score >= 100


@dataclass
class MutationRun:
    package: str  # track/slug
    version: str  # version_without_mutants
    generated: int  # mutants made; more than graded with --limit
    outcomes: list[Outcome]
    whys: dict[str, str] = field(default_factory=dict)  # equivalent survivors: id -> reason
    graded: str = ""  # hidden_graded_version: the part of the package a mutant's grading reads

    @property
    def killed(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.killed]

    @property
    def survivors(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.survived]

    @property
    def errors(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.score is None]

    @property
    def equivalent(self) -> list[Outcome]:
        return [o for o in self.survivors if self.whys.get(o.mutant.id)]

    @property
    def score(self) -> float:
        return mutation_score(len(self.killed), len(self.killed) + len(self.survivors), len(self.equivalent))

    def to_dict(self) -> dict[str, Any]:
        return {
            "package": self.package,
            "version": self.version,
            "generated": self.generated,
            "total": len(self.outcomes),
            "killed": len(self.killed),
            "survived": len(self.survivors),
            "equivalent": len(self.equivalent),
            "errors": len(self.errors),
            "score": round(self.score, 1),
            "mutants": [
                {
                    "id": o.mutant.id,
                    "kind": o.mutant.kind,
                    "description": o.mutant.description,
                    "before": o.mutant.before,
                    "after": o.mutant.after,
                    "score": o.score,
                    "verdict": o.verdict,
                    "killed": o.killed,
                    "failed": list(o.failed),
                    "error": o.error,
                    "why": self.whys.get(o.mutant.id, "") if o.survived else "",
                }
                for o in self.outcomes
            ],
        }


def mutation_score(killed: int, total: int, equivalent: int) -> float:
    """killed / (total - equivalent), in percent; 100 when every mutant is equivalent (nothing to kill)."""
    judged = total - equivalent
    return 100.0 * killed / judged if judged > 0 else 100.0


def spread(mutants: list[Mutant], limit: int | None) -> list[Mutant]:
    """At most ``limit`` mutants, evenly spaced over the file (the same ones every run)."""
    if limit is None or limit >= len(mutants):
        return list(mutants)
    if limit < 1:
        raise PackageError(f"--limit must be at least 1, not {limit}")
    return [mutants[i * len(mutants) // limit] for i in range(limit)]


def run_mutants(
    package: Package,
    *,
    jobs: int,
    limit: int | None = None,
    backend: Backend | None = None,
    on_outcome: Callable[[Outcome], None] | None = None,
    ids: Collection[str] | None = None,
) -> MutationRun:
    """Grade mutants of the package's reference on its hidden probes, ``jobs`` at a time.

    The expectations are computed (or read from the cache) once, before any
    mutant runs. The reference as ``ast.unparse`` prints it, with no mutation,
    must score 100 first: mutants are printed the same way, and a reference
    whose behaviour depends on its own formatting cannot be judged by them.
    ``ids`` grades only the mutants of those ids (a carried-over record's
    survivors), instead of a spread of ``limit``.
    """
    reference = package.reference_code
    mutants = make_mutants(reference, package.entry)
    chosen = [m for m in mutants if m.id in ids] if ids is not None else spread(mutants, limit)
    expected_observations(package, False, backend)
    baseline = _grade(package, ast.unparse(ast.parse(reference)) + "\n", backend)
    if baseline.score is None or baseline.score < 100:
        what = baseline.error or f"{baseline.score:g}%, failing {', '.join(baseline.failed)}"
        raise PackageError(
            f"the reference, printed back from its syntax tree, does not score 100 ({what}): its mutants cannot be judged",
            path=f"{package.slug}/reference/{package.entry}",
        )

    def grade_batch(batch: list[Mutant]) -> list[Outcome]:
        outcomes = _grade_series(package, batch, backend)
        for outcome in outcomes:
            if on_outcome is not None:
                on_outcome(outcome)
        return outcomes

    batches = [chosen[i : i + SERIES_LENGTH] for i in range(0, len(chosen), SERIES_LENGTH)]
    with ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="mutants") as pool:
        outcomes = [outcome for batch in pool.map(grade_batch, batches) for outcome in batch]
    return MutationRun(
        package=f"{package.track}/{package.slug}",
        version=version_without_mutants(package.files),
        generated=len(mutants),
        outcomes=outcomes,
        whys=recorded_whys(package.files),
        graded=hidden_graded_version(package.files),
    )


def _grade_series(package: Package, batch: list[Mutant], backend: Backend | None) -> list[Outcome]:
    """Grade a batch of mutants in one sandbox (they are trusted code: the reference, changed by us); one by one if the platform failed."""
    try:
        results = grade_series(package, [m.source for m in batch], public=False, backend=backend)
    except PlatformError:
        return [_grade(package, m.source, backend, m) for m in batch]
    outcomes = []
    for mutant, result in zip(batch, results, strict=True):
        outcome = Outcome(mutant, score=result.score, verdict=result.verdict.value)
        outcome.failed = tuple(f"{p.name} ({p.status})" for p in result.probes if not p.passed)
        outcomes.append(outcome)
    return outcomes


def _grade(package: Package, source: str, backend: Backend | None, mutant: Mutant | None = None) -> Outcome:
    outcome = Outcome(mutant or Mutant("reference", "none", 0, "the reference", "", "", source))
    for attempt in range(_TRIES):
        try:
            result = grade_submission(package, source, public=False, backend=backend)
        except PlatformError as exc:
            outcome.error = f"the platform failed (try {attempt + 1} of {_TRIES}): {exc}"
            continue
        outcome.score, outcome.verdict, outcome.error = result.score, result.verdict.value, ""
        outcome.failed = tuple(f"{p.name} ({p.status})" for p in result.probes if not p.passed)
        break
    return outcome


# ---------------------------------------------------------------- the record


def load_record(files: dict[str, bytes]) -> dict[str, Any] | None:
    """The parsed ``solutions/mutants.toml`` of a package's files, None if it has none."""
    raw = files.get(MUTANTS_RECORD)
    if raw is None:
        return None
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise PackageError(f"invalid TOML: {exc}", path=MUTANTS_RECORD) from None


def recorded_whys(files: dict[str, bytes]) -> dict[str, str]:
    """id -> why of every mutant the record judges equivalent."""
    record = load_record(files) or {}
    whys = {}
    for table in ("equivalent", "survivor"):
        for entry in record.get(table, []):
            if isinstance(entry, dict) and isinstance(entry.get("id"), str) and str(entry.get("why", "")).strip():
                whys[entry["id"]] = str(entry["why"]).strip()
    return whys


def _string(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(text, ensure_ascii=False)


@dataclass(frozen=True)
class Tally:
    """What a record holds: the counts of a run and its survivors, (id, description) each."""

    version: str
    generated: int
    total: int
    killed: int
    survivors: tuple[tuple[str, str], ...]
    graded: str = ""  # hidden_graded_version of the package the record is for

    @staticmethod
    def of(run: MutationRun) -> Tally:
        survivors = tuple((o.mutant.id, o.mutant.description) for o in run.survivors)
        return Tally(run.version, run.generated, len(run.outcomes), len(run.killed), survivors, run.graded)


def render_record(tally: Tally, whys: dict[str, str]) -> str:
    """The text of ``solutions/mutants.toml``: a survivor with a ``why`` in ``whys`` is equivalent."""
    equivalent = [(i, d) for i, d in tally.survivors if whys.get(i)]
    unjudged = [(i, d) for i, d in tally.survivors if not whys.get(i)]
    score = mutation_score(tally.killed, tally.total, len(equivalent))
    lines = [
        "# Mutation analysis of the reference, written by `python -m grader mutants PACKAGE --write`.",
        "# A mutant is killed when it scores below 100 on the hidden probes; score = killed / (total - equivalent).",
        "# A [[survivor]] is a mistake no probe catches: add a probe that kills it, or, if no input the statement",
        "# allows can tell it from the reference, give it a one-line `why` and run with --recount (it becomes [[equivalent]]).",
        "# `version` is the package version without this file; `graded` is the hash of what a mutant's grading reads",
        "# (all but the statement, starter, solutions, coverage table and hints): the record stays current while it",
        "# holds. `survived` counts the equivalent ones too.",
        f"version = {_string(tally.version)}",
        *([f"graded = {_string(tally.graded)}"] if tally.graded else []),
        f"score = {round(score, 1)}",
        "",
        "[counts]",
        f"generated = {tally.generated}  # mutants made; more than total when a run had --limit",
        f"total = {tally.total}",
        f"killed = {tally.killed}",
        f"survived = {len(tally.survivors)}",
        f"equivalent = {len(equivalent)}",
    ]
    for table, entries in (("equivalent", equivalent), ("survivor", unjudged)):
        for mutant_id, description in entries:
            lines += ["", f"[[{table}]]", f"id = {_string(mutant_id)}", f"description = {_string(description)}"]
            if table == "equivalent":
                lines.append(f"why = {_string(whys[mutant_id])}")
    return "\n".join(lines) + "\n"


def write_record(folder: Path, run: MutationRun) -> Path:
    """Write ``run`` to the package folder's record (the run must be complete: no mutant left ungraded)."""
    if run.errors:
        raise PlatformError(f"{len(run.errors)} mutants could not be graded; not writing {MUTANTS_RECORD}")
    path = folder / MUTANTS_RECORD
    path.write_text(render_record(Tally.of(run), run.whys), encoding="utf-8")
    return path


def recount_record(folder: Path) -> Path:
    """Rewrite a record after its author judged survivors, running nothing.

    A survivor given a ``why`` becomes ``[[equivalent]]`` and the counts and
    score follow. Only for a record of the package as it is now: after any
    other change the mutants must be graded again.
    """
    files = read_package_files(folder)
    record = load_record(files)
    if record is None:
        raise PackageError("no record to recount: run with --write first", path=str(folder / MUTANTS_RECORD))
    if not record_is_current(record, files):
        raise PackageError("the package changed since this record was written: run with --write, not --recount", path=str(folder / MUTANTS_RECORD))
    table = record.get("counts")
    counts: dict[str, Any] = table if isinstance(table, dict) else {}
    try:
        survivors = tuple(
            (str(entry["id"]), str(entry.get("description", ""))) for table in ("equivalent", "survivor") for entry in record.get(table, [])
        )
        generated, total, killed = int(counts["generated"]), int(counts["total"]), int(counts["killed"])
        tally = Tally(version_without_mutants(files), generated, total, killed, survivors, hidden_graded_version(files))
    except (KeyError, TypeError, ValueError) as exc:
        raise PackageError(f"cannot read the record's counts and entries ({type(exc).__name__}: {exc})", path=str(folder / MUTANTS_RECORD)) from None
    path = folder / MUTANTS_RECORD
    path.write_text(render_record(tally, recorded_whys(files)), encoding="utf-8")
    return path


def record_is_current(record: dict[str, Any], files: dict[str, bytes]) -> bool:
    """Whether a record belongs to the package as it is: its ``graded`` hash matches (or, in a record written before
    there was one, its whole version does)."""
    if record.get("graded"):
        return bool(record["graded"] == hidden_graded_version(files))
    return bool(record.get("version") == version_without_mutants(files))


#: Grades the mutants of the given ids on the package's hidden probes (``run_mutants`` with ``ids``).
Regrade = Callable[[Package, list[str]], MutationRun]


def carry_over_record(folder: Path, base: dict[str, bytes], regrade: Regrade | None = None) -> tuple[Path, list[str]]:
    """Carry a record over changes that cannot unkill a mutant, grading at most its survivors.

    ``base`` is the package's files as they were when the record was written
    (its version must be the record's). Since then, only the statement, the
    starter, the shipped solutions, the coverage table, the hints, the public
    probes and the ``[rules]`` table may
    have changed: a mutant's grading reads none of them, except the rules,
    which only refuse code before it runs (grader/source_rules.py). So a
    killed mutant stays killed, and a survivor stays one unless the rules now
    refuse its source, which kills it. Or, with ``regrade``, probes were
    added and nothing else a grading reads changed (grader/probe_additions.py:
    every old probe runs the same code, so what it failed it still fails): a
    killed mutant stays killed, and the survivors are graded again on the
    probes as they are now. Returns the record's path and the ids of the
    survivors killed since (by the rules or the new probes).
    """
    files = read_package_files(folder)
    record = load_record(base)
    if record is None:
        raise PackageError("the base holds no record to carry over", path=str(folder / MUTANTS_RECORD))
    if not record_is_current(record, base):  # its graded hash (or, in an older record, its whole version) is the base's
        raise PackageError("the base is not the package the record was written for", path=str(folder / MUTANTS_RECORD))
    added_probes = False
    now, then = graded_part(files, hidden_only=True), graded_part(base, hidden_only=True)
    if now != then:
        changed = sorted(p for p in set(now) | set(then) if now.get(p) != then.get(p))  # challenge.toml as parsed, without hints
        others = [p for p in changed if not p.startswith(PROBE_PREFIX)] or probe_files_only_added(base, files)
        if others or regrade is None:
            raise PackageError(
                f"what a mutant's grading reads changed ({', '.join(changed)}"
                + (f"; not only probes added: {'; '.join(others)}" if others and regrade is not None else "")
                + "): run with --write",
                path=str(folder / MUTANTS_RECORD),
            )
        added_probes = True
    package = load_package_dir(folder)
    sources = {m.id: m.source for m in make_mutants(package.reference_code)}
    table = record.get("counts")
    counts: dict[str, Any] = table if isinstance(table, dict) else {}
    survivors = [(str(e["id"]), str(e.get("description", ""))) for kind in ("equivalent", "survivor") for e in record.get(kind, [])]
    refused = [i for i, _ in survivors if i in sources and refusals(package, sources[i])]
    if added_probes and regrade is not None:
        unknown = [i for i, _ in survivors if i not in sources and i not in refused]
        if unknown:  # the mutator no longer makes them: nothing to grade them by
            raise PackageError(f"the record's survivors {', '.join(unknown)} are no longer made: run with --write", path=str(folder / MUTANTS_RECORD))
        pending = [i for i, _ in survivors if i not in refused]
        run = regrade(package, pending) if pending else None
        if run is not None and (run.errors or {o.mutant.id for o in run.outcomes} != set(pending)):
            raise PlatformError(f"the survivors could not all be graded again; not writing {MUTANTS_RECORD}")
        refused += [o.mutant.id for o in run.killed] if run is not None else []
    kept = tuple((i, d) for i, d in survivors if i not in refused)
    try:
        killed = int(counts["killed"]) + len(refused)
        tally = Tally(version_without_mutants(files), int(counts["generated"]), int(counts["total"]), killed, kept, hidden_graded_version(files))
    except (KeyError, TypeError, ValueError) as exc:
        raise PackageError(f"cannot read the record's counts ({type(exc).__name__}: {exc})", path=str(folder / MUTANTS_RECORD)) from None
    path = folder / MUTANTS_RECORD
    path.write_text(render_record(tally, recorded_whys(base)), encoding="utf-8")
    return path, refused


def files_at(folder: Path, revision: str) -> dict[str, bytes]:
    """A package folder's files as git has them at ``revision`` (what :func:`carry_over_record` takes as its base)."""

    def git(*args: str) -> bytes:
        try:
            return subprocess.run(["git", "-C", str(folder), *args], capture_output=True, check=True).stdout
        except (OSError, subprocess.CalledProcessError) as exc:
            said = exc.stderr.decode(errors="replace").strip() if isinstance(exc, subprocess.CalledProcessError) else str(exc)
            raise PackageError(f"git {' '.join(args[:2])} failed: {said}", path=str(folder)) from None

    top = Path(git("rev-parse", "--show-toplevel").decode().strip())
    prefix = folder.resolve().relative_to(top.resolve()).as_posix()
    listing = git("ls-tree", "-r", "-z", "--full-name", "--name-only", revision, "--", str(top / prefix))
    names = [name.decode() for name in listing.split(b"\0") if name]
    if not names:
        raise PackageError(f"git has no files of this package at {revision}", path=str(folder))
    return {name[len(prefix) + 1 :]: git("show", f"{revision}:{name}") for name in names}


def record_problems(folder: Path | str) -> list[str]:
    """What is wrong with a package folder's mutation record, without running anything ([] when nothing is, or it has none).

    The record must belong to the package as it is now (its version ignoring
    the record), its counts must add up and its score must reach the target.
    """
    files = read_package_files(Path(folder))
    try:
        record = load_record(files)
    except PackageError as exc:
        return [str(exc)]
    if record is None:
        return []
    problems = []
    if not record_is_current(record, files):
        problems.append(
            f"{MUTANTS_RECORD} was computed for version {str(record.get('version'))[:12]} and what a mutant's grading reads "
            "(reference, probes, given/, limits, rules) has changed since: run `python -m grader mutants PACKAGE --write` again"
        )
    table = record.get("counts")
    counts = table if isinstance(table, dict) else {}
    names = ("generated", "total", "killed", "survived", "equivalent")
    bad = [name for name in names if type(counts.get(name)) is not int or counts[name] < 0]
    if bad:
        return [*problems, f"{MUTANTS_RECORD}: counts.{', counts.'.join(bad)} must be whole numbers"]
    generated, total, killed, survived, equivalent = (int(counts[name]) for name in names)
    entries = {table: [e for e in record.get(table, []) if isinstance(e, dict)] for table in ("equivalent", "survivor")}
    if killed + survived != total or total > generated:
        problems.append(f"{MUTANTS_RECORD}: killed {killed} + survived {survived} must be total {total}, at most generated {generated}")
    if equivalent != len(entries["equivalent"]):
        problems.append(f"{MUTANTS_RECORD}: counts.equivalent is {equivalent} but {len(entries['equivalent'])} [[equivalent]] entries are listed")
    if survived - equivalent != len(entries["survivor"]):
        problems.append(
            f"{MUTANTS_RECORD}: {survived - equivalent} survivors are not equivalent but {len(entries['survivor'])} [[survivor]] entries are listed"
        )
    unexplained = [str(e.get("id", "?")) for e in entries["equivalent"] if not str(e.get("why", "")).strip()]
    if unexplained:
        problems.append(f"{MUTANTS_RECORD}: equivalent mutants need a one-line why: {', '.join(unexplained)}")
    score = mutation_score(killed, total, equivalent)
    if not isinstance(record.get("score"), int | float) or abs(record["score"] - score) > 0.05:
        problems.append(f"{MUTANTS_RECORD}: score must be {score:.1f}, what its counts give")
    if score < TARGET_SCORE:
        problems.append(f"mutation score {score:.1f}% is below the target {TARGET_SCORE:g}%: {survived - equivalent} survivors need a probe")
    return problems
