"""A challenge as the authoring form edits it, and the package files it becomes.

The form edits a :class:`Draft`; ``draft_to_files`` turns it into the set of
files a package is made of (the same format as challenges/<track>/<slug>/),
writing challenge.toml with toml_writer. ``draft_from_package`` reads a
stored version back into the form. Files the form does not edit (solutions/,
probes/checks.py, data files from an import) are carried over from the
version being edited, so a save never drops them.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field

from grader.errors import GraderError
from grader.package import Hint, Package
from grader.package_load import package_from_files
from web.authoring.toml_writer import toml_string, toml_table_lines

COMMON_PROBES = "probes/common.py"


# A hint row of the form is exactly a package hint.
HintRow = Hint


@dataclass(frozen=True)
class Draft:
    slug: str
    title: str
    track: str
    difficulty: str
    tags: tuple[str, ...]
    summary: str
    runtime: str
    entry: str
    probe_seconds: float
    wall_seconds: float
    memory_mb: int
    statement: str
    starter: str
    reference: str
    public_probes: str
    hidden_probes: str
    common_probes: str = ""
    hints: tuple[HintRow, ...] = ()
    # Kept from an imported package (the form does not edit it).
    warm: tuple[str, ...] = field(default=())

    def metadata(self) -> tuple[object, ...]:
        """Everything challenge.toml says, to tell whether it changed."""
        return (
            self.slug, self.title, self.track, self.difficulty, self.tags, self.summary, self.runtime, self.entry,
            float(self.probe_seconds), float(self.wall_seconds), int(self.memory_mb), self.hints, self.warm,
        )  # fmt: skip


def challenge_toml(draft: Draft) -> str:
    lines = toml_table_lines(
        {
            "slug": draft.slug,
            "title": draft.title,
            "track": draft.track,
            "difficulty": draft.difficulty,
            "tags": list(draft.tags),
            "summary": draft.summary,
            "runtime": draft.runtime,
            "entry": draft.entry,
        }
    )
    if draft.warm:
        lines += toml_table_lines({"warm": list(draft.warm)})
    lines += ["", "[limits]"]
    lines += toml_table_lines(
        {"probe_seconds": float(draft.probe_seconds), "wall_seconds": float(draft.wall_seconds), "memory_mb": int(draft.memory_mb)}
    )
    for hint in draft.hints:
        lines += ["", "[[hints]]"]
        lines += toml_table_lines({"id": hint.id, "tier": hint.tier, "tags": list(hint.tags)})
        lines.append(f"text = {toml_string(hint.text, multiline=True)}")
    return "\n".join(lines) + "\n"


def form_owned_paths(entry: str) -> set[str]:
    """The files the form writes; every other file of a package is carried over."""
    return {
        "challenge.toml", "statement.md", "probes/public.py", "probes/hidden.py", COMMON_PROBES,
        f"starter/{entry}", f"reference/{entry}",
    }  # fmt: skip


def _entry_of(files: dict[str, bytes]) -> str:
    try:
        meta = tomllib.loads(files.get("challenge.toml", b"").decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return "solution.py"
    entry = meta.get("entry", "solution.py")
    return entry if isinstance(entry, str) else "solution.py"


def draft_to_files(draft: Draft, base: dict[str, bytes] | None = None) -> dict[str, bytes]:
    """The package files for ``draft``, keeping the files of ``base`` the form does not edit.

    When the draft says what ``base``'s challenge.toml already says, that file
    is kept byte for byte: an imported package saved without a change keeps
    its version hash instead of becoming a new version with reformatted TOML.
    """
    base = base or {}
    files = {path: data for path, data in base.items() if path not in form_owned_paths(_entry_of(base))}
    toml_bytes = challenge_toml(draft).encode("utf-8")
    if "challenge.toml" in base:
        try:
            if draft_from_package(package_from_files(base)).metadata() == draft.metadata():
                toml_bytes = base["challenge.toml"]
        except GraderError:
            pass  # a base that does not load: write the TOML afresh
    files["challenge.toml"] = toml_bytes
    files["statement.md"] = draft.statement.encode("utf-8")
    files[f"starter/{draft.entry}"] = draft.starter.encode("utf-8")
    files[f"reference/{draft.entry}"] = draft.reference.encode("utf-8")
    files["probes/public.py"] = draft.public_probes.encode("utf-8")
    files["probes/hidden.py"] = draft.hidden_probes.encode("utf-8")
    if draft.common_probes.strip():
        files[COMMON_PROBES] = draft.common_probes.encode("utf-8")
    return files


def draft_from_package(package: Package) -> Draft:
    common = package.common_source
    return Draft(
        slug=package.slug,
        title=package.title,
        track=package.track,
        difficulty=package.difficulty,
        tags=package.tags,
        summary=package.summary,
        runtime=package.runtime,
        entry=package.entry,
        probe_seconds=package.limits.probe_seconds,
        wall_seconds=package.limits.wall_seconds,
        memory_mb=package.limits.memory_mb,
        statement=package.statement,
        starter=package.starter_code,
        reference=package.reference_code,
        public_probes=package.probe_source(True).decode("utf-8"),
        hidden_probes=package.probe_source(False).decode("utf-8"),
        common_probes=common.decode("utf-8") if common is not None else "",
        hints=tuple(package.hints),
        warm=package.warm,
    )


# A new challenge starts as a small package that loads and validates once the
# coach has written a real reference: the starter fails the probes, and the
# probe examples show the decorator's arguments.
_STARTER = '''def solve(x):
    """Replace this with the function the candidate writes."""
    raise NotImplementedError
'''
_REFERENCE = '''def solve(x):
    """The coach's solution: never shown to candidates."""
    return 2 * x
'''
_PUBLIC = '''from probekit import probe


@probe(category="correctness", hints=["basics"])
def small_values(solution):
    """Doubles a few small integers."""
    return [solution.solve(x) for x in (0, 1, 2)]
'''
_HIDDEN = '''from probekit import probe


@probe(category="correctness", weight=2, hints=["basics"])
def many_values(solution):
    """Doubles integers from -50 to 50."""
    return [solution.solve(x) for x in range(-50, 51)]


@probe(category="numerics", rtol=1e-9)
def floats(solution):
    """Doubles floats within a tolerance."""
    return [solution.solve(x / 7) for x in range(10)]
'''
_STATEMENT = """# Title of the challenge

Say what the candidate must write, with an example:

```python
solve(3)  # 6
```
"""


_SKELETON_FILES = {
    "statement.md": (_STATEMENT, "the statement is still the new-challenge template; say what the candidate must write"),
    "reference/solution.py": (_REFERENCE, "the reference is still the template's solve(x); write the real solution"),
    "probes/public.py": (_PUBLIC, "the public probes are still the template's examples; probe the real task"),
    "probes/hidden.py": (_HIDDEN, "the hidden probes are still the template's examples; probe the real task"),
}


def skeleton_leftovers(files: dict[str, bytes]) -> list[str]:
    """What a package still has unchanged from the new-challenge template, as report lines.

    The template validates (it is a working package), so without this a
    coach could publish it untouched; Validate says what is left to write.
    """
    return [
        f"FAIL {path}: {why}"
        for path, (template, why) in _SKELETON_FILES.items()
        if files.get(path, b"").decode("utf-8", "replace").strip() == template.strip()
    ]


def new_draft(*, slug: str = "", track: str = "", runtime: str = "python") -> Draft:
    return Draft(
        slug=slug, title="", track=track, difficulty="easy", tags=(), summary="", runtime=runtime,
        entry="solution.py", probe_seconds=10, wall_seconds=120, memory_mb=1024, statement=_STATEMENT,
        starter=_STARTER, reference=_REFERENCE, public_probes=_PUBLIC, hidden_probes=_HIDDEN, common_probes="",
        hints=(HintRow("basics", 1, ("basics",), "What does `solve` have to return?"),),
    )  # fmt: skip
