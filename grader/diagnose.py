"""Diagnosis by failure signature: which known mistake a failing submission looks like (issue 29).

Every package ships realistic wrong solutions (``solutions/``), each with the
verdict it must get and, for the candidate, a ``diagnosis``: the mistake in a
hint's words ("your weight gradient looks summed over the wrong dimensions"),
never a hidden input or an expected value. A wrong solution's *signature* is
how its hidden grading failed: for each failing probe, the kind of failure the
candidate's own feedback already names (the values, the shape, the dtype, a
raised exception, the time limit...). The signatures are recorded in
``solutions/signatures.toml`` by ``python -m grader signatures PACKAGE``;
validation grades every wrong solution anyway and checks that the record still
holds (``compare``).

When a Submit fails, :func:`diagnose` finds the recorded signature closest to
the submission's (the same one first, then the most similar above
``MIN_SIMILARITY``); the worker stores the match with the full result, the
candidate sees its words only on request, as with hints
(``web/submissions``), and coaches see which solution it came from. A match
tells the candidate no more than their own feedback does: a signature is made
of what a hidden probe's candidate view shows (its name, and which property
failed), and the words are the author's.

Place in the flow: ``grade.grade_submission`` -> ``diagnose`` on hidden
results; ``validate`` -> ``compare``; ``__main__`` -> ``signatures`` and
``diagnose`` commands; ``leave_one_out`` measures how well the library names
mistakes it has not seen (docs/grading-integrity.md).

When no known mistake is near, the failures can still point at the statement:
the package's coverage table (``coverage.toml``, grader/coverage.py) says which
hidden probes test each rule and each input class it allows, and
:func:`failing_rules` names the few parts of the statement every probe of which
fails. They are the author's quotes of the statement, tied to probes whose names
the candidate already sees: no more than the feedback tells, said where to look.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

from grader.coverage import CoverageEntry, package_coverage, quoted_sentence
from grader.errors import PackageError
from grader.package import SIGNATURES_RECORD, Package, hidden_graded_version
from grader.verdicts import Verdict

#: Below this similarity no known mistake is named: a wrong name teaches less than none. Measured on the catalogue's
#: 388 wrong solutions, each left out of the library in turn (docs/grading-integrity.md): at 2/3, 69 were named by a
#: sibling of their mistake and 95 by another mistake; at 0.9, 58 and 38. Nearly every right name is an exact match.
MIN_SIMILARITY = 0.9
#: What two failures of one probe count for when they fail in different ways (the values vs the shape).
DIFFERENT_KIND = 0.5
#: Whole-submission verdicts no signature can tell apart: nothing of the code ran, or the platform failed.
_UNDIAGNOSED = (Verdict.ACCEPTED.value, Verdict.SYNTAX_ERROR.value, Verdict.RULE_VIOLATION.value, Verdict.INTERNAL_ERROR.value)
#: Failure kinds that depend on the host's speed: a recorded one and a fresh one of another kind still agree.
_TIMING_KINDS = ("time_limit",)

Signature = dict[str, str]
#: What a custom check's ``reason`` may be to name a failure kind: a short kebab-case word, nothing a candidate wrote.
REASON = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+){0,5}")


def failure_kind(probe: Mapping[str, Any]) -> str | None:
    """How one probe failed, in the words of its candidate view (grader/feedback.py); None when it passed.

    A wrong answer is named by the property its check reports (``value``,
    ``shape``, ``dtype``, ``elements``...) and the top-level key of the result
    where it failed; a raised exception by its class when the candidate view
    may name it; limits by their status.
    """
    if probe.get("passed") is True:
        return None
    status = str(probe.get("status") or "")
    details = probe.get("details") if isinstance(probe.get("details"), Mapping) else {}
    assert isinstance(details, Mapping)
    if status == "wrong_answer":
        if details.get("runner_status") == "settings_changed":
            return "wrong:settings"
        failure = details.get("failure")
        reason = details.get("reason")  # a custom check's own word for how it failed (grader/custom_checks.py)
        if isinstance(failure, str):
            kind = f"wrong:{failure}"
        elif isinstance(reason, str) and REASON.fullmatch(reason):
            kind = f"wrong:check:{reason}"
        else:
            kind = "wrong:check"
        # A result's top-level key says which part is wrong ("grad", "w"); a list's index says only which input
        # case came first, so it is left out.
        path = details.get("path")
        if isinstance(path, list) and path and isinstance(path[0], str):
            kind += f"@{path[0][:40]}"
        return kind
    if status == "runtime_error":
        runner_status = str(details.get("runner_status") or "error")
        if runner_status == "error":
            from grader.feedback import EXCEPTION_NAMES  # the names a candidate view may show

            name = details.get("exc_type")
            return f"raised:{name if isinstance(name, str) and name in EXCEPTION_NAMES else 'exception'}"
        return f"runtime:{runner_status}"
    return status or "failed"


def signature(result: Mapping[str, Any]) -> Signature | None:
    """A hidden result's signature (failing probe -> how it failed); None when no signature can be read off it."""
    if result.get("public") or result.get("verdict") in _UNDIAGNOSED:
        return None
    failed = {}
    for probe in result.get("probes") or []:
        kind = failure_kind(probe)
        if kind is not None:
            failed[str(probe.get("name"))] = kind
    return failed or None


def similarity(a: Mapping[str, str], b: Mapping[str, str]) -> float:
    """1 for the same failures; otherwise the share of probes failing in either, a probe counting 1 when both fail
    alike, ``DIFFERENT_KIND`` when both fail otherwise, 0 when only one fails."""
    union = set(a) | set(b)
    if not union:
        return 1.0
    both = set(a) & set(b)
    agree = sum(1.0 if _same_kind(a[name], b[name]) else DIFFERENT_KIND for name in both)
    return agree / len(union)


def _same_kind(recorded: str, fresh: str) -> bool:
    return recorded == fresh or recorded in _TIMING_KINDS or fresh in _TIMING_KINDS


# ----------------------------------------------------------------- the library


@dataclass(frozen=True)
class Known:
    """A shipped wrong solution as the library knows it: its signature and the words its author wrote."""

    name: str
    family: str
    diagnosis: str
    failed: Signature


@dataclass(frozen=True)
class Diagnosis:
    """The known mistake(s) a failing submission looks like: one per family, as alike as each other (mistakes whose
    failures are the same cannot be told apart by them; the candidate is given each, and knows their code)."""

    matches: tuple[Known, ...]
    similarity: float

    @property
    def solution(self) -> str:
        return self.matches[0].name

    @property
    def family(self) -> str:
        return self.matches[0].family

    @property
    def families(self) -> tuple[str, ...]:
        return tuple(k.family for k in self.matches)

    @property
    def exact(self) -> bool:
        return self.similarity >= 1.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "solutions": [k.name for k in self.matches],
            "families": list(self.families),
            "similarity": round(self.similarity, 3),
            "exact": self.exact,
            "texts": [k.diagnosis for k in self.matches],
        }


def source_hash(code: bytes) -> str:
    return hashlib.sha256(code).hexdigest()


def read_record(package: Package) -> dict[str, Any] | None:
    """The package's signatures record as written, or None when it ships none."""
    data = package.files.get(SIGNATURES_RECORD)
    if data is None:
        return None
    try:
        record = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise PackageError(f"cannot be read ({type(exc).__name__}: {exc})", path=SIGNATURES_RECORD) from None
    if not isinstance(record.get("solution", {}), dict):
        raise PackageError("[solution.<name>] tables expected", path=SIGNATURES_RECORD)
    return record


def library(package: Package) -> list[Known]:
    """Every wrong solution with a recorded signature, in ``expected.toml``'s order; empty when the record is missing
    or stale (a probe changed since: its signatures may no longer be what the probes say)."""
    record = read_record(package)
    if record is None or record_problems(package, record):
        return []
    entries = record.get("solution", {})
    known = []
    for solution in package.solutions:
        entry = entries.get(solution.name)
        if solution.verdict == Verdict.ACCEPTED.value or not isinstance(entry, dict):
            continue
        failed = entry.get("failed", {})
        if isinstance(failed, dict) and failed:
            known.append(Known(solution.name, solution.family or solution.name, solution.diagnosis, {str(k): str(v) for k, v in failed.items()}))
    return known


#: More mistakes than this alike to the same degree name none: a list that long would not help. Four, because the
#: places a schedule's write-back can wrongly sit (tvm-schedule-matmul's rule 3) are four mistakes that one check
#: fails alike, and naming the four is still one rule to look at.
MAX_MATCHES = 4


def nearest(failed: Signature, known: Sequence[Known]) -> Diagnosis | None:
    """The known mistake(s) closest to ``failed``: the most similar, at least ``MIN_SIMILARITY``, one solution per
    family (the first in expected.toml's order); None when there is none, or more than ``MAX_MATCHES`` families."""
    scored = sorted(((similarity(k.failed, failed), i, k) for i, k in enumerate(known)), key=lambda t: (-t[0], t[1]))
    if not scored or scored[0][0] < MIN_SIMILARITY:
        return None
    best = scored[0][0]
    matches: dict[str, Known] = {}
    for score, _, k in scored:
        if score == best:
            matches.setdefault(k.family, k)
    if len(matches) > MAX_MATCHES:
        return None
    return Diagnosis(tuple(matches.values()), best)


#: The hint-like entry a diagnosis becomes in a result's hints (see :func:`diagnosis_hint`).
DIAGNOSIS_KIND = "diagnosis"


def diagnosis_hint(found: Diagnosis, result: Mapping[str, Any]) -> dict[str, Any] | None:
    """The diagnosis as an entry of the result's unlocked hints, which the web reveals on request and records like a
    hint (and a mock interview that switches hints off withholds like one). Its id is opaque (a hash of the
    families): the list of unlocked hints is seen before any is revealed. ``solution(s)`` and ``similarity`` are for
    coaches; the candidate's view of hints never carries them. None when the author wrote no words for them."""
    worded = [k for k in found.matches if k.diagnosis]
    if not worded:
        return None
    alike = "are those of" if found.exact else "look like those of"
    if len(worded) == 1:
        text = f"Your failures {alike} a known mistake: {worded[0].diagnosis}"
    else:
        # Mistakes that fail the same probes the same way: each is given, the candidate knows which is theirs.
        text = f"Your failures {alike} {len(worded)} known mistakes, which fail alike; one of them may be yours:\n\n"
        text += "\n".join(f"- {k.diagnosis}" for k in worded)
    failed = signature(result) or {}
    families = ",".join(sorted(k.family for k in worded))
    return {
        "id": "diagnosis-" + hashlib.sha256(families.encode()).hexdigest()[:10],
        "tier": 1,
        "tags": [DIAGNOSIS_KIND],
        "text": text,
        "probes": list(failed)[:3],
        "kind": DIAGNOSIS_KIND,
        "solution": ", ".join(k.name for k in worded),
        "similarity": round(found.similarity, 3),
    }


def diagnose(package: Package, result: Mapping[str, Any]) -> Diagnosis | None:
    """The known mistake a hidden result looks like, or None (accepted, not diagnosable, or like none of them)."""
    failed = signature(result)
    return nearest(failed, library(package)) if failed else None


# ----------------------------------------------------------------- the statement, when no mistake is near

#: At most this many parts of the statement are named: the few that account for the failures, not a list to read.
MAX_RULES = 3
#: A part of the statement is named only when its probes are at least this share of the failing hidden probes.
MIN_RULE_SHARE = 0.5


def failing_rules(package: Package, failed: Signature) -> tuple[CoverageEntry, ...]:
    """The parts of the statement (coverage.toml's rules and input classes) whose every hidden probe is among the
    ``failed`` and whose probes are at least half of them: the fewest that account for the most failing probes (a
    greedy cover, table order on ties), at most ``MAX_RULES``. Empty when the package has no table, or when every
    hidden probe failed: then no part is singled out, and the verdict already says the code is wrong throughout.

    The share is what keeps a bystander out: a part whose one probe fails among many others is failed *by* a mistake
    made elsewhere far more often than it is the mistake (the measurement on held-out blind files, and the rule it
    was chosen over: docs/grading-integrity.md, "Diagnosis by failure signature", session 31)."""
    entries = package_coverage(package.files) or ()
    hidden = {spec.name for spec in package.hidden_probes}
    failing = set(failed) & hidden
    if not failing or failing == hidden:
        return ()
    wholly = [
        (e, probes)
        for e in entries
        if (probes := set(e.probes) & hidden) and probes <= failing and MIN_RULE_SHARE * len(failing) <= len(probes)
    ]
    chosen: list[CoverageEntry] = []
    left = set(failing)
    while wholly and left and len(chosen) < MAX_RULES:
        best = max(wholly, key=lambda pair: len(pair[1] & left))
        if not best[1] & left:
            break
        chosen.append(best[0])
        left -= best[1]
        wholly.remove(best)
    return tuple(chosen)


def rules_hint(rules: Sequence[CoverageEntry], statement: str, result: Mapping[str, Any]) -> dict[str, Any]:
    """The parts of the statement as a diagnosis entry of the result's hints (revealed on request, recorded, withheld
    where hints are switched off, like :func:`diagnosis_hint`'s); ``rules`` (the table's ids) is for coaches."""
    lines = [f"- {part}" for part in _parts(rules, statement)]
    one = len(lines) == 1
    text = (
        "No known mistake fails quite like yours, but every probe that tests "
        f"{'this part' if one else 'these parts'} of the statement fails, so read {'it' if one else 'them'} again against your code:\n\n"
        + "\n".join(lines)
    )
    ids = ",".join(e.id for e in rules)
    return {
        "id": "diagnosis-" + hashlib.sha256(("rules:" + ids).encode()).hexdigest()[:10],
        "tier": 1,
        "tags": [DIAGNOSIS_KIND],
        "text": text,
        "probes": list(signature(result) or {})[:3],
        "kind": DIAGNOSIS_KIND,
        "solution": "",
        "similarity": None,
        "rules": [e.id for e in rules],
    }


def _parts(rules: Sequence[CoverageEntry], statement: str) -> list[str]:
    """The parts of the statement as the candidate is shown them: what kind of part, and the sentence that holds the
    table's quote (two entries quoting one sentence show it once)."""
    shown: list[str] = []
    for entry in rules:
        part = f"{'the rule' if entry.kind == 'rule' else 'the inputs it allows'}: “{quoted_sentence(statement, entry.statement)}”"
        if part not in shown:
            shown.append(part)
    return shown


def diagnosis_of(package: Package, result: Mapping[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """What a failing hidden result is told (the worker's call): the nearest known mistake, else the parts of the
    statement its failures point at. Returns the diagnosis for the full result (coaches) and its hint entry (the
    candidate's, on request); (None, None) when there is nothing to say."""
    known = diagnose(package, result)
    if known is not None:
        return known.to_dict(), diagnosis_hint(known, result)
    failed = signature(result)
    rules = failing_rules(package, failed) if failed else ()
    if not rules:
        return None, None
    texts = [_parts([e], package.statement)[0] for e in rules]
    found = {"solutions": [], "families": [], "similarity": None, "exact": False, "texts": texts, "rules": [e.id for e in rules]}
    return found, rules_hint(rules, package.statement, result)


# ----------------------------------------------------------------- the record


def record_problems(package: Package, record: Mapping[str, Any] | None = None) -> list[str]:
    """Why the signatures record does not describe the package as it is (empty when it does): the probes changed, a
    wrong solution was edited, added or removed. No grading: what ``make test`` checks of every package."""
    record = read_record(package) if record is None else record
    if record is None:
        return [f"no {SIGNATURES_RECORD}: run python -m grader signatures PACKAGE --write"]
    problems = []
    if record.get("graded") != hidden_graded_version(package.files):
        problems.append("the probes, reference or limits changed since it was written")
    entries = record.get("solution", {})
    wrong = {s.name for s in package.solutions if s.verdict != Verdict.ACCEPTED.value}
    for name in sorted(wrong):
        entry = entries.get(name)
        if not isinstance(entry, dict):
            problems.append(f"solutions/{name}.py has no signature")
        elif entry.get("source") != source_hash(package.solution_code(name)):
            problems.append(f"solutions/{name}.py changed since its signature was recorded")
    problems += [f"'{name}' is not a wrong solution of expected.toml" for name in sorted(set(entries) - wrong)]
    if problems:
        problems.append(f"run python -m grader signatures {package.track}/{package.slug} --write")
    return problems


def record_text(package: Package, results: Mapping[str, Mapping[str, Any]]) -> str:
    """The record for ``results`` (wrong solution name -> its hidden result as a dict)."""
    lines = [
        "# How each wrong solution of solutions/ fails the hidden probes, written by",
        "# `python -m grader signatures PACKAGE --write` (grader/diagnose.py). A failing Submit is matched",
        "# against these to name the known mistake it looks like (expected.toml's `diagnosis`).",
        "# `graded` is the hash of what a grading reads; `source` each solution's hash: the record holds while both do.",
        f'graded = "{hidden_graded_version(package.files)}"',
    ]
    for solution in package.solutions:
        if solution.name not in results:
            continue
        failed = signature(results[solution.name]) or {}
        lines += ["", f'[solution."{solution.name}"]', f'source = "{source_hash(package.solution_code(solution.name))}"']
        lines.append(f'verdict = "{results[solution.name].get("verdict")}"')
        lines.append(f'[solution."{solution.name}".failed]')
        lines += [f'"{_escape(name)}" = "{_escape(kind)}"' for name, kind in sorted(failed.items())]
    return "\n".join(lines) + "\n"


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _current_record(package: Package) -> dict[str, Any] | None:
    """The signatures record while it belongs to the package as it is (its ``graded`` hash holds), else None."""
    record = read_record(package)
    return record if record is not None and record.get("graded") == hidden_graded_version(package.files) else None


def _entry_holds(entry: Any, package: Package, name: str) -> TypeGuard[dict[str, Any]]:
    """Whether a record's entry still describes solution ``name``: it was written from the file as it is."""
    return isinstance(entry, dict) and entry.get("source") == source_hash(package.solution_sources.get(name, b""))


def recorded_failures(package: Package) -> dict[str, tuple[str, ...]]:
    """For each wrong solution a current record describes, the hidden probes it fails, in the package's order; empty
    when the record is missing or the package changed since it was written."""
    record = _current_record(package)
    if record is None:
        return {}
    failures = {}
    for name, entry in record.get("solution", {}).items():
        if _entry_holds(entry, package, name):
            failed = {str(k) for k in (entry.get("failed") or {})}
            failures[name] = tuple(spec.name for spec in package.hidden_probes if spec.name in failed)
    return failures


def compare(package: Package, name: str, result: Mapping[str, Any]) -> str | None:
    """How a fresh grading of wrong solution ``name`` differs from its recorded signature; None when it agrees or
    nothing is recorded to agree with (validation's check that the record still holds).

    Only which probes fail is compared, not how: a wrong solution's kind of failure may differ between gradings
    (an uninitialised buffer holds other garbage on another backend: values one time, NaN the next; a time limit
    on a loaded host). A probe that passes where the record says it fails, or the reverse, means the record no
    longer describes the package. Except a time limit: on a loaded host a probe of a slow wrong solution runs out of
    time where it passed on a quiet one (and the probes after a time limit share what is left), so a probe that ran
    out of time in one grading and passed in the other tells nothing about the record. Nor do the probes its
    expected.toml entry lists as ``varying`` (a mistake keyed on id() fails where Python happens to reuse one)."""
    record = _current_record(package)
    entry = record.get("solution", {}).get(name) if record is not None else None
    if not _entry_holds(entry, package, name):
        return None
    varying = next((set(s.varying) for s in package.solutions if s.name == name), set())
    recorded = {str(k): str(v) for k, v in (entry.get("failed") or {}).items()}
    fresh = signature(result) or {}
    differ = sorted(p for p in set(recorded) ^ set(fresh) if recorded.get(p, fresh.get(p)) not in _TIMING_KINDS and p not in varying)
    if not differ:
        return None
    shown = ", ".join(f"{p}: recorded {recorded.get(p, 'passed')}, now {fresh.get(p, 'passed')}" for p in differ[:4])
    return f"its failures differ from {SIGNATURES_RECORD} ({shown}{', ...' if len(differ) > 4 else ''}); write the record again"


# ----------------------------------------------------------------- measuring it


@dataclass(frozen=True)
class HeldOut:
    """One wrong solution diagnosed by a library without it: what it was matched with, and whether that is its family."""

    name: str
    family: str
    matched: Diagnosis | None

    @property
    def outcome(self) -> str:
        if self.matched is None:
            return "none"
        return "right" if self.family in self.matched.families else "wrong"


def leave_one_out(package: Package) -> list[HeldOut]:
    """Each known wrong solution diagnosed by the library without itself: how often another solution of the same
    mistake (its ``family``) is named (alone or among mistakes that fail alike), how often none, how often only
    different mistakes (a mistake the library lacks, whose failures are another's)."""
    known = library(package)
    return [HeldOut(k.name, k.family, nearest(k.failed, [o for o in known if o.name != k.name])) for k in known]
