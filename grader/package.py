"""Challenge packages: what a package is, and its versions.

A package is a folder ``challenges/<track>/<slug>/`` (format in
docs/challenge-format.md) or the same set of files stored in the database.
``grader/package_load.py`` reads either into a mapping of relative paths to
bytes, validates it against the challenge.toml schema and builds the
immutable :class:`Package` defined here.

The version is the SHA-256 of every file's path and content: two packages
with the same version grade the same way, which is what lets expected
observations be cached and lets a submission record what it was graded on.
The graded version hashes only what grading reads (:func:`graded_version`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import tomllib
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from grader.errors import PackageError
from grader.probe_meta import ProbeSpec
from grader.source_rules import SourceRules
from sandbox.runner.profiles import PROFILES, VARIANT_OF

# A package's runtime is the sandbox profile it runs in, or the one whose
# lighter variant it runs in (grader/sandbox_profile.py).
RUNTIMES = tuple(p for p in PROFILES if p not in VARIANT_OF)
DIFFICULTIES = ("warm-up", "easy", "medium", "hard")
SLUG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
ENTRY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\.py$")
# given/<name>.py: a read-only module the candidate sees and imports as given.<name>.
GIVEN_RE = re.compile(r"^given/([A-Za-z_][A-Za-z0-9_]*)\.py$")

# The result of the mutation analysis of the reference (grader/mutants.py).
MUTANTS_RECORD = "solutions/mutants.toml"
# How each wrong solution fails the hidden probes, matched against failing Submits (grader/diagnose.py).
SIGNATURES_RECORD = "solutions/signatures.toml"


@dataclass(frozen=True)
class Limits:
    probe_seconds: float
    wall_seconds: float
    memory_mb: int


@dataclass(frozen=True)
class Hint:
    id: str
    tier: int
    tags: tuple[str, ...]
    text: str


@dataclass(frozen=True)
class ExpectedVerdict:
    """What a shipped solution in ``solutions/`` must get on the hidden probes."""

    name: str
    verdict: str
    score: float | None = None
    score_below: float | None = None
    score_at_least: float | None = None
    why: str = ""
    # A wrong solution's mistake in a hint's words, named to a candidate whose failures look like it
    # (grader/diagnose.py): never a hidden input or an expected value.
    diagnosis: str = ""
    # Wrong solutions that make one mistake in different code share a family (default: each its own).
    family: str = ""
    # Hidden probes this wrong solution fails on some gradings and passes on others, by the nature of its mistake
    # (state keyed on id(), which Python hands to new objects as allocation allows): the signatures record's
    # comparison leaves them out (grader/diagnose.py: compare). Its verdict and score range still hold.
    varying: tuple[str, ...] = ()


@dataclass(frozen=True)
class Package:
    slug: str
    title: str
    track: str
    difficulty: str
    tags: tuple[str, ...]
    summary: str
    runtime: str
    entry: str
    limits: Limits
    hints: tuple[Hint, ...]
    statement: str
    starter_code: str
    reference_code: str
    public_probes: tuple[ProbeSpec, ...]
    hidden_probes: tuple[ProbeSpec, ...]
    solutions: tuple[ExpectedVerdict, ...]
    files: dict[str, bytes] = field(repr=False, compare=False)
    version: str = ""
    # Compiler caches the sandbox environment pre-fills from this package's
    # reference (sandbox/warm.py): "inductor" (TorchInductor's kernels) and
    # "compile" (the IREE compiles its probes send through compile_cache);
    # "torch-headers" asks for torch's ATen.h precompiled for the candidates'
    # own C++ extensions (sandbox/runner/torch_headers.py).
    warm: tuple[str, ...] = ()
    # Library modules the runner imports once before it forks the probes
    # (sandbox/runner/profiles.py: PRELOADS); only "inductor" exists.
    preload: tuple[str, ...] = ()
    # Run probes/checks.py in a sandbox rather than in the worker
    # (grader/sandboxed_checks.py). True unless the caller vouches for the
    # package's author: a package from files (the database, a zip, the
    # browser) is untrusted by default; a folder of the repository on the
    # worker's disk (load_package_dir) and the repository's synced versions
    # (web/challenges/services.py: challenge_package) are reviewed code.
    checks_in_sandbox: bool = True
    # The statement's rules checked on the source before it runs (grader/source_rules.py).
    rules: SourceRules = field(default_factory=SourceRules)
    # Each shipped solution's source: its solutions/<name>.py, or its solutions/<name>.patch applied to the
    # reference (grader/solution_edits.py). Read through solution_code.
    solution_sources: dict[str, bytes] = field(default_factory=dict, repr=False, compare=False)

    def probes(self, public: bool) -> tuple[ProbeSpec, ...]:
        return self.public_probes if public else self.hidden_probes

    def narrowed(self, public: bool, names: Collection[str]) -> Package:
        """This package with only the named public or hidden probes, in their order: what a run of those alone is judged on."""
        kept = tuple(s for s in self.probes(public) if s.name in names)
        if public:
            return dataclasses.replace(self, public_probes=kept)
        return dataclasses.replace(self, hidden_probes=kept)

    def solution_code(self, name: str) -> bytes:
        """Shipped solution ``name``'s source, whether it is kept whole or as an edit of the reference."""
        return self.solution_sources[name]

    def solution_path(self, name: str) -> str:
        """The file that holds shipped solution ``name``: ``solutions/<name>.py`` or ``solutions/<name>.patch``."""
        return f"solutions/{name}.patch" if f"solutions/{name}.patch" in self.files else f"solutions/{name}.py"

    def probe_source(self, public: bool) -> bytes:
        return self.files["probes/public.py" if public else "probes/hidden.py"]

    @property
    def checks_source(self) -> bytes | None:
        return self.files.get("probes/checks.py")

    @property
    def common_source(self) -> bytes | None:
        """``probes/common.py``: machinery both probe files import as ``probe_common``."""
        return self.files.get("probes/common.py")

    @property
    def given_sources(self) -> dict[str, bytes]:
        """``given/<name>.py`` by module name: read-only modules the candidate sees, imported as ``given.<name>``."""
        return given_sources(self.files)


def given_sources(files: dict[str, bytes]) -> dict[str, bytes]:
    """The package's ``given/`` modules in ``files``, {module name: source}, sorted by name."""
    found = {}
    for path in sorted(files):
        match = GIVEN_RE.match(path)
        if match:
            found[match.group(1)] = files[path]
    return found


def version_of(files: dict[str, bytes]) -> str:
    digest = hashlib.sha256()
    for path in sorted(files):
        data = files[path]
        digest.update(path.encode() + b"\0" + str(len(data)).encode() + b"\0" + data)
    return digest.hexdigest()


def version_without_mutants(files: dict[str, bytes]) -> str:
    """The version of the package without its mutation record: the version that record names.

    ``solutions/mutants.toml`` (grader/mutants.py) records the package version
    its mutants were graded on; it cannot record the version of a package
    that holds it, since writing it would change that version.
    """
    return version_of({path: data for path, data in files.items() if path != MUTANTS_RECORD})


# What grading never reads: the statement, the lesson, the starter, the shipped solutions (a mutation record is one)
# and the coverage table. What is left, with challenge.toml's fields but its hints and its catalogue prose, decides
# every grade: its hash (graded_version) tells the web whether a new version of a challenge changed its tests or
# limits (web/submissions/services/drafts.py). Records of hidden gradings (a mutation record, grader/mutants.py; the
# signatures record, grader/diagnose.py) are keyed on hidden_graded_version: the same without the public probes.
UNGRADED = ("statement.md", "learn.md", "starter/", "solutions/", "coverage.toml")
# What a grading of the hidden probes never receives: the public probe file (grader/execute.probes_job sends the
# run's own probe file, common.py and given/; the checks judge outside). A public probe's edit keeps those records.
PUBLIC_ONLY = ("probes/public.py",)
# challenge.toml's fields that only the catalogue shows (no grading reads them): retitling a challenge or retagging
# it keeps its records current. Its hints are left out too (a hint is text, unlocked by failures after grading).
UNGRADED_FIELDS = ("hints", "title", "summary", "tags", "difficulty")


def graded_part(files: dict[str, bytes], *, rules: bool = False, hidden_only: bool = False) -> dict[str, Any]:
    """What grading depends on: every file but the ungraded ones, challenge.toml as parsed, without its
    ``UNGRADED_FIELDS`` and, unless ``rules``, without [rules] (a carried-over mutation record applies a rules change
    itself) and, with ``hidden_only``, without the public probes (``PUBLIC_ONLY``)."""
    skipped = (*UNGRADED, *PUBLIC_ONLY) if hidden_only else UNGRADED
    kept: dict[str, Any] = {path: data for path, data in files.items() if not path.startswith(skipped)}
    try:
        meta = tomllib.loads(files["challenge.toml"].decode("utf-8"))
    except (KeyError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise PackageError(f"challenge.toml cannot be read ({type(exc).__name__})", path="challenge.toml") from None
    dropped = UNGRADED_FIELDS if rules else (*UNGRADED_FIELDS, "rules")
    kept["challenge.toml"] = {key: value for key, value in meta.items() if key not in dropped}
    return kept


def graded_version(files: dict[str, bytes], *, hidden_only: bool = False) -> str:
    """A hash of what grading reads: every file but the ungraded ones, challenge.toml without its hints and prose.

    The ``[rules]`` table counts (it refuses code before it runs). With
    ``hidden_only``, what a grading of the hidden probes reads, the public
    probes left out: the key of the records of hidden gradings, so a mutation
    or signatures record whose ``graded`` still matches is current whatever
    else changed: an edit of the statement, a hint, the title, summary, tags,
    difficulty or a public probe no longer asks for ``--carry-over``.
    """
    part = graded_part(files, rules=True, hidden_only=hidden_only)
    canonical = {path: value if path == "challenge.toml" else hashlib.sha256(value).hexdigest() for path, value in part.items()}
    return hashlib.sha256(json.dumps(canonical, sort_keys=True, default=str).encode()).hexdigest()


def hidden_graded_version(files: dict[str, bytes]) -> str:
    """What keys the records of hidden gradings (mutants, signatures): ``graded_version`` without the public probes."""
    return graded_version(files, hidden_only=True)
