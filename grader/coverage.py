"""A package's coverage table: each rule of its statement and each input class it allows, with the probes that test it.

Place in the flow: a package may hold ``coverage.toml`` (repository packages
must: ``check_challenges`` fails without it). ``grader/validate.py`` checks
it before any probe runs (:func:`coverage_problems`), and the authoring pages
show it to coaches (web/authoring: the package's coverage page). It does not
take part in grading: no probe reads it, so a mutation record carries over
an edit of it (``grader/mutants.py``: ``carry_over_record``).

Mutation analysis shows that the probes notice mistakes *inside the
reference's code*; this table is the reviewer's side: for every sentence of
the statement that a solution could get wrong, which hidden probe fails when
exactly that is wrong. The format::

    [[entry]]
    id = "empty-bias-name"                   # short, unique in the table
    kind = "rule"                             # "rule" (a behaviour asked for) or "input" (an input class allowed)
    statement = "an empty name means the input is absent"   # quoted from statement.md
    probes = ["empty_bias_name", "generated_pairs_that_fold"]

The quote ties the entry to the statement's text: it must appear in
statement.md (compared without Markdown's emphasis and code marks, with
whitespace collapsed and case ignored), so a statement edited under the table
shows up as an entry whose quote no longer matches. Every entry names at least
one hidden probe that exists, and every hidden probe is named by some entry:
a probe nobody can say the purpose of is as much a gap as a rule without a
probe.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass

from grader.errors import PackageError
from grader.probe_meta import ProbeSpec

COVERAGE_TABLE = "coverage.toml"
KINDS = ("rule", "input")
_ID_RE = re.compile(r"^[a-z0-9]+(?:[-_][a-z0-9]+)*$")
_MARKS_RE = re.compile(r"[`*]")
_SPACE_RE = re.compile(r"\s+")


@dataclass(frozen=True)
class CoverageEntry:
    id: str
    kind: str
    statement: str
    probes: tuple[str, ...]


def _plain(text: str) -> str:
    """``text`` as the comparison sees it: no Markdown code or emphasis marks, whitespace collapsed, lower case."""
    return _SPACE_RE.sub(" ", _MARKS_RE.sub("", text)).strip().lower()


def parse_coverage(text: str, origin: str = COVERAGE_TABLE) -> tuple[CoverageEntry, ...]:
    """The entries of a coverage table; PackageError naming the entry and field for a malformed one."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PackageError(f"invalid TOML: {exc}", path=origin) from None
    unknown = set(raw) - {"entry"}
    if unknown:
        raise PackageError(f"unknown top-level keys {sorted(unknown)}: the table is a list of [[entry]]", path=origin)
    items = raw.get("entry", [])
    if not isinstance(items, list) or not items:
        raise PackageError("holds no [[entry]]", path=origin)
    entries: list[CoverageEntry] = []
    seen: set[str] = set()
    for number, item in enumerate(items, start=1):
        where = f"entry {number}"
        if not isinstance(item, dict):
            raise PackageError(f"{where} is not a table", path=origin)
        extra = set(item) - {"id", "kind", "statement", "probes"}
        if extra:
            raise PackageError(f"{where}: unknown keys {sorted(extra)}", path=origin)
        ident = item.get("id")
        if not isinstance(ident, str) or not _ID_RE.match(ident):
            raise PackageError(f"{where}: must be lowercase words joined by '-' or '_'", path=origin, field="id")
        where = f"entry '{ident}'"
        if ident in seen:
            raise PackageError(f"{where} appears twice", path=origin, field="id")
        seen.add(ident)
        kind = item.get("kind")
        if kind not in KINDS:
            raise PackageError(f"{where}: must be one of {', '.join(KINDS)}", path=origin, field="kind")
        quote = item.get("statement")
        if not isinstance(quote, str) or len(_plain(quote)) < 8:
            raise PackageError(f"{where}: must quote the statement (8 characters or more)", path=origin, field="statement")
        probes = item.get("probes")
        if not isinstance(probes, list) or not all(isinstance(p, str) and p for p in probes):
            raise PackageError(f"{where}: must be a list of probe names", path=origin, field="probes")
        entries.append(CoverageEntry(ident, kind, quote, tuple(probes)))
    return tuple(entries)


def coverage_problems(
    entries: tuple[CoverageEntry, ...], statement: str, hidden: tuple[ProbeSpec, ...], public: tuple[ProbeSpec, ...] = ()
) -> list[str]:
    """What is wrong with a parsed table against its package: one line per problem, empty when it holds."""
    problems: list[str] = []
    text = _plain(statement)
    hidden_names = {p.name for p in hidden}
    known = hidden_names | {p.name for p in public}
    named: set[str] = set()
    for entry in entries:
        if _plain(entry.statement) not in text:
            problems.append(f"entry '{entry.id}': its quote is not in statement.md: {entry.statement!r}")
        unknown = [p for p in entry.probes if p not in known]
        if unknown:
            problems.append(f"entry '{entry.id}': no probe is called {', '.join(unknown)}")
        if not any(p in hidden_names for p in entry.probes):
            problems.append(f"entry '{entry.id}' ({entry.kind}) has no hidden probe: nothing fails a submission that gets it wrong")
        named.update(entry.probes)
    for spec in hidden:
        if spec.name not in named:
            problems.append(f"hidden probe '{spec.name}' is named by no entry: say which rule or input class it tests")
    return problems


#: A sentence longer than this (a table row, a run-on list) is not shown whole: the quote alone says more.
MAX_SENTENCE = 320
_BLOCK_RE = re.compile(r"\n\s*\n|\n(?=\s*(?:[-*|]|\d+\.)\s)")
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*(\[])")


def quoted_sentence(statement: str, quote: str) -> str:
    """The sentence of ``statement`` that holds ``quote`` (as the table's comparison finds it), as written, so that a
    fragment such as "1 included" reads in its context; the quote itself when no one sentence of at most
    ``MAX_SENTENCE`` characters holds it (it spans two, or sits in a table row)."""
    wanted = _plain(quote)
    blocks = _BLOCK_RE.split(statement)
    # A table row's cells are read apart: a row is no sentence, but a cell often is.
    cells = [cell for block in blocks for cell in (block.split("|") if block.lstrip().startswith("|") else [block])]
    for block in cells:
        # Bold marks go outside code spans (a bolded lead-in would hide the sentence break after it; inside code
        # `**` is a power); code blocks are no sentences.
        unbolded = "`".join(part if i % 2 else part.replace("**", "") for i, part in enumerate(block.split("`")))
        for sentence in _SENTENCE_RE.split(unbolded.strip()):
            text = " ".join(sentence.split()).lstrip("-* ").strip()
            if wanted in _plain(text):
                whole = len(text) <= MAX_SENTENCE and "```" not in text and text.count("`") % 2 == 0
                return text if whole else " ".join(quote.split())
    return " ".join(quote.split())


def package_coverage(files: dict[str, bytes], origin: str = "<package>") -> tuple[CoverageEntry, ...] | None:
    """The package's parsed table, or None when it has none; PackageError when it cannot be read."""
    raw = files.get(COVERAGE_TABLE)
    if raw is None:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise PackageError("is not UTF-8", path=f"{origin}/{COVERAGE_TABLE}") from None
    return parse_coverage(text, f"{origin}/{COVERAGE_TABLE}")
