"""The seal check: a hostile "leaker" submission must get nothing of the hidden probes back.

Place in the flow: ``validate.py`` grades :func:`leaker_source` once on the
hidden probes beside the starter and the shipped solutions, and fails the
package for every problem :func:`seal_problems` finds in what its candidate
would see (``grader.feedback.candidate_view``). One grading per package and
backend; ``check_challenges``, the browser's Validate and the catalogue tests
all run it.

The leaker is built from the starter: each public name the starter defines
becomes a function (or a class whose construction, methods and class
attributes are such functions) that reads every file in the sandbox's job
folder (the hidden probes first), prints it, writes it to stderr, warns it,
and then carries it out the way the running probe's position in the file
picks (read off the stack, as any candidate could): raised in an exception,
returned as a string, as a dict's keys, as an array's bytes, or as the
process's exit code. For the first probe the leaker raises the text while it
is imported, so that whatever the probes call (a name, or an op the starter
would have registered), one probe's full result shows that the files were
read: a leaker that never got its text anywhere would prove nothing, and
validation says so. The question is only whether any of it comes back to the
candidate.

A leak is a 40-character stretch of the hidden probe file, or a string value
of a hidden expected observation, found in the candidate's view outside the
package's own texts (probe names, categories, descriptions, hint texts).
Expected strings shorter than :data:`MIN_EXPECTED_CHARS`, the names of
exceptions the policy may name, and words of its templates do not count: the
policy says them whatever the candidate does.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import Any

from grader.feedback import EXCEPTION_NAMES, TEMPLATES, candidate_view
from grader.package import Package
from grader.verdicts import Verdict
from sandbox.runner.codec import TaggedArray

WINDOW = 40
MIN_EXPECTED_CHARS = 4

_LEAKER_HEAD = '''\
"""A hostile submission (grader/seal.py): carries the sandbox's files out through every channel it has."""

import ast
import os
import sys
import warnings

_JOB = os.path.dirname(os.path.abspath(__file__))


def _secrets():
    names = sorted(os.listdir(_JOB), key=lambda name: (name != "probes.py", name))
    parts = []
    for name in names:
        try:
            with open(os.path.join(_JOB, name), encoding="utf-8", errors="replace") as fh:
                parts.append(fh.read())
        except OSError:
            pass
    return "\\n".join(parts)


def _probes():
    try:
        with open(os.path.join(_JOB, "probes.py"), encoding="utf-8", errors="replace") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError):
        return []
    return [node.name for node in tree.body if isinstance(node, ast.FunctionDef) and node.decorator_list]


def _running():
    """The position of the probe this process runs, read off the stack (the runner holds its name), or -1."""
    probes = _probes()
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename.endswith("probes.py") and frame.f_code.co_name in probes:
            return probes.index(frame.f_code.co_name)
        name = frame.f_locals.get("name")
        if isinstance(name, str) and name in probes:
            return probes.index(name)
        frame = frame.f_back
    return -1


def _mode():
    """How this probe carries the text out: by its position, so every channel is tried in one grading."""
    return max(_running(), 0) % 5


def _leak(*args, _init=False, **kwargs):
    text = _secrets()
    print(text, flush=True)
    sys.stderr.write(text)
    sys.stderr.flush()
    warnings.simplefilter("always")
    warnings.warn(text, stacklevel=2)
    mode = _mode()
    if mode == 0:
        raise RuntimeError(text[:3000])
    if mode == 1:
        os._exit(len(text) % 255 + 1)
    if _init:
        return None
    if mode == 2:
        return text
    if mode == 3:
        return {text[i : i + 64]: text for i in range(0, min(len(text), 640), 64)}
    import numpy

    return numpy.frombuffer(text.encode()[:4096] or b"x", dtype=numpy.uint8)


# The first probe raises while this module is imported, before it can call
# anything: whatever the probes use (a name, an op this module would register),
# a coach's view of that probe shows the text, so the seal is put to the test.
if _running() == 0:
    raise RuntimeError(_secrets()[:3000])


class _LeakyType(type):
    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _leak


class _Leaky(metaclass=_LeakyType):
    def __init__(self, *args, **kwargs):
        _leak(_init=True)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _leak

    def __call__(self, *args, **kwargs):
        return _leak()
'''


def public_names(starter: str) -> list[tuple[str, str]]:
    """The names the starter defines at top level and a probe may use: (name, "function" | "class" | "value"), in order."""
    names: list[tuple[str, str]] = []
    for node in ast.parse(starter).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found = [(node.name, "function")]
        elif isinstance(node, ast.ClassDef):
            found = [(node.name, "class")]
        elif isinstance(node, ast.Assign):
            found = [(t.id, "value") for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found = [(node.target.id, "value")]
        else:
            continue
        names.extend((name, kind) for name, kind in found if not name.startswith("_") and name not in {n for n, _ in names})
    return names


def leaker_source(package: Package) -> str:
    """The leaker for this package: the starter's public names, each one a leak.

    A starter that defines no function or class (its module-level code is the
    solution: it registers a C++ op, say) gives the probes nothing to call,
    so that leaker raises the files' text while it is imported.
    """
    names = public_names(package.starter_code)
    lines = [_LEAKER_HEAD]
    for name, kind in names:
        lines.append(f"\n\nclass {name}(_Leaky):\n    pass\n" if kind == "class" else f"\n\n{name} = _leak\n")
    if not any(kind != "value" for _, kind in names):
        lines.append("\n\n_leak()\n")
    return "".join(lines)


# -------------------------------------------------------------- finding a leak


def _strings(value: Any, *, keys: bool) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            if keys and isinstance(key, str):
                yield key
            yield from _strings(item, keys=keys)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item, keys=keys)
    elif isinstance(value, TaggedArray):
        return


def _squash(text: str) -> str:
    return " ".join(text.split())


def package_texts(package: Package) -> set[str]:
    """The package's own words a candidate is shown anyway: probe names, categories, descriptions, hints."""
    texts = {v.value for v in Verdict}
    for spec in package.probes(False):
        texts.update((spec.name, spec.category, spec.description))
    for hint in package.hints:
        texts.update((hint.id, hint.text, *hint.tags))
    return texts


def _shown(view: dict[str, Any], package: Package) -> list[tuple[str, str]]:
    """(where, text) of every string in the view that is not the package's own words."""
    own = package_texts(package)
    found: list[tuple[str, str]] = []
    for probe in view.get("probes") or []:
        for key, value in probe.items():
            for text in _strings(value, keys=True):
                if text not in own:
                    found.append((f"probe '{probe.get('name')}' {key}", text))
    for key in ("message", "hints", "categories"):
        for text in _strings(view.get(key), keys=True):
            if text not in own:
                found.append((key, text))
    return found


def _template_words() -> set[str]:
    return {word.lower() for text in TEMPLATES.values() for word in re.findall(r"[A-Za-z_][\w.-]*", text)}


def seal_problems(package: Package, view: dict[str, Any], expected: dict[str, Any]) -> list[str]:
    """What of the hidden probe file or of the hidden expected strings the candidate's ``view`` shows."""
    shown = [(where, _squash(text)) for where, text in _shown(view, package)]
    problems: list[str] = []
    source = _squash(package.probe_source(False).decode("utf-8", errors="replace"))
    for start in range(0, max(0, len(source) - WINDOW) + 1):
        window = source[start : start + WINDOW]
        if len(window) < WINDOW:
            break
        place = next((where for where, text in shown if window in text), None)
        if place is not None:
            problems.append(f"the candidate's view shows hidden probe source in {place}: {window!r}")
            break  # one is enough to fail; the rest would repeat it
    common = _template_words() | {n.lower() for n in EXCEPTION_NAMES}
    answers = {s for s in _strings(expected, keys=False) if len(s.strip()) >= MIN_EXPECTED_CHARS and s.lower() not in common}
    for answer in sorted(answers):
        pattern = re.compile(rf"(?<![\w]){re.escape(answer)}(?![\w])")
        place = next((where for where, text in shown if pattern.search(text)), None)
        if place is not None:
            problems.append(f"the candidate's view shows the hidden expected value {answer[:80]!r} in {place}")
    return problems


def leaked_into_full_result(package: Package, result: dict[str, Any]) -> bool:
    """Whether the leaker's text reached the full (coach's) result at all: if not, the seal was not put to the test."""
    source = _squash(package.probe_source(False).decode("utf-8", errors="replace"))
    text = _squash(" ".join(str(p.get("message", "")) for p in result.get("probes") or []))
    return any(source[i : i + WINDOW] in text for i in range(0, max(1, len(source) - WINDOW + 1), WINDOW // 2))


def check_seal(package: Package, result: dict[str, Any], expected: dict[str, Any]) -> tuple[list[str], bool]:
    """(problems, whether the leaker's text reached the coach's view) for the leaker's full ``result``."""
    return seal_problems(package, candidate_view(result), expected), leaked_into_full_result(package, result)
