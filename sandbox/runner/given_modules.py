"""A package's read-only ``given/`` modules, importable in a probe's process as ``given.<name>``.

Place in the flow: the grader puts the package's ``given/*.py`` sources in
the job (``sources["given"]``, {module name: source}); the runner calls
:func:`install` in every probe's forked child, before the solution is
imported, so the solution, ``probe_common`` and the probes can all write
``from given.pipeline import build_case``.

Why an import hook and not files on ``sys.path``: the sources come from the
job held in memory, never from files a probe could have rewritten for the
next probe, and the hook is the first finder on ``sys.meta_path``, so no
``given`` folder or ``given.py`` planted anywhere on disk is ever imported
instead. The ``given`` package has an empty ``__path__``: a name it does not
ship is a ModuleNotFoundError, not a search of the disk. A candidate can
still replace ``sys.modules["given.x"]`` in their own process, which only
affects the probe they are in (every probe is a fresh child of a parent
that never imports these modules).

The files written under ``<job>/given/`` exist for ``inspect`` and tracebacks
only; linecache is primed with the job's text, so both show the shipped
lines even if the files were changed.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import linecache
import sys
import types
from collections.abc import Sequence

PACKAGE = "given"


class GivenFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds and loads ``given`` and ``given.<name>`` from in-memory sources."""

    def __init__(self, sources: dict[str, str], folder: str) -> None:
        self.sources = dict(sources)
        self.folder = folder

    def path_of(self, name: str) -> str:
        return f"{self.folder}/{name}.py"

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname == PACKAGE:
            # A package whose __path__ stays empty (spec_from_file_location
            # would fill in the folder, and the disk would be searched).
            return self._spec(fullname, self.path_of("__init__"), is_package=True)
        head, dot, name = fullname.partition(".")
        if head == PACKAGE and dot and name in self.sources:
            return self._spec(fullname, self.path_of(name), is_package=False)
        return None

    def _spec(self, fullname: str, path: str, *, is_package: bool) -> importlib.machinery.ModuleSpec:
        spec = importlib.machinery.ModuleSpec(fullname, self, origin=path, is_package=is_package)
        spec.has_location = True  # so the module gets __file__, for inspect and tracebacks
        return spec

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None  # the default module object

    def exec_module(self, module: types.ModuleType) -> None:
        if module.__name__ == PACKAGE:
            module.__doc__ = "The challenge's read-only modules (given/*.py in its package)."
            return
        name = module.__name__.partition(".")[2]
        path, source = self.path_of(name), self.sources[name]
        linecache.cache[path] = (len(source), None, source.splitlines(keepends=True), path)
        exec(compile(source, path, "exec", dont_inherit=True), module.__dict__)  # noqa: S102 - this is the sandbox


def install(sources: dict[str, str], folder: str) -> GivenFinder:
    """Make ``given.<name>`` importable from ``sources`` in this process, ahead of every other finder."""
    for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
        del sys.modules[name]  # whatever was there before (nothing, in a fresh child)
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, GivenFinder)]
    finder = GivenFinder(sources, folder)
    sys.meta_path.insert(0, finder)
    return finder
