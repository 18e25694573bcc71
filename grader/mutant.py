"""One mutant of a reference: a single plausible mistake, the record both mutators make.

Place in the flow: ``grader/mutate.py`` (Python, by its syntax tree) and
``grader/mutate_cpp.py`` (C++ held in a string) make these; ``grader/mutants.py``
grades each on the package's hidden probes and records which were killed.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mutant:
    id: str
    kind: str
    line: int
    description: str
    before: str  # the original source line, stripped
    after: str  # the same line with the mutation made
    source: str  # the whole mutated file
