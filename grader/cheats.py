"""The cheat battery: code that does no work must not pass a package's hidden probes.

Place in the flow: ``validate.py`` grades every cheat that applies to a
package on its hidden probes, dealt out with the starter and the failing
solutions, and fails the package for each cheat that scores 100, naming it.
``check_challenges``, the browser's Validate and ``make test`` all run it.

A cheat is built from the starter's interface, as the leaker is
(``seal.public_names``): every public function the starter defines, and
every method and class attribute of every public class, answers with the
cheat's answer whatever it is given. A probe set that accepts one of them
checks less than it seems to: only that something came back, or only the
shape of it, or an output the input already was.

A new cheat is one entry in :data:`CHEATS`: a name, what it does in a line,
and the body of its ``_answer(*args, **kwargs)``.
"""

from __future__ import annotations

from dataclasses import dataclass

from grader.package import Package
from grader.seal import public_names


@dataclass(frozen=True)
class Cheat:
    name: str
    does: str  # what it does, in a line (the report and the source's docstring say it)
    answer: str  # the body of _answer(*args, **kwargs), indented by four spaces


CHEATS: tuple[Cheat, ...] = (
    Cheat("returns-none", "returns None from every call", "    return None\n"),
    Cheat(
        "returns-first-argument",
        "returns its first argument unchanged (the input as the output, the model as the transformed model)",
        "    if args:\n        return args[0]\n    return next(iter(kwargs.values()), None)\n",
    ),
    Cheat(
        "returns-zeros",
        "returns zeros of the first argument's shape and dtype (None when it is not an array or a tensor)",
        """\
    first = args[0] if args else next(iter(kwargs.values()), None)
    # Only the libraries the probes already imported: a cheat loads nothing.
    for module_name in ("torch", "tensorflow", "numpy"):
        module = sys.modules.get(module_name)
        if module is None:
            continue
        kind = {"torch": "Tensor", "tensorflow": "Tensor", "numpy": "ndarray"}[module_name]
        if isinstance(first, getattr(module, kind, ())):
            return module.zeros_like(first)
    return None
""",
    ),
)

_TEMPLATE = '''\
"""A generic cheat (grader/cheats.py): {does}."""

import sys


def _answer(*args, **kwargs):
{answer}

class _CheatType(type):
    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _answer


class _Cheat(metaclass=_CheatType):
    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _answer

    def __call__(self, *args, **kwargs):
        return _answer(*args, **kwargs)
'''


def cheat_source(package: Package, cheat: Cheat) -> str | None:
    """The cheat's code for this package; None when the starter defines no function or class to stand in for.

    A starter whose module-level code is the solution (it registers an op,
    say) has no interface to answer through; the starter itself is then the
    cheat that does nothing, and validation grades it anyway.
    """
    names = public_names(package.starter_code)
    if not any(kind != "value" for _, kind in names):
        return None
    lines = [_TEMPLATE.format(does=cheat.does, answer=cheat.answer)]
    for name, kind in names:
        if kind == "function":
            lines.append(f"\n\n{name} = _answer\n")
        elif kind == "class":
            lines.append(f"\n\nclass {name}(_Cheat):\n    pass\n")
        else:
            lines.append(f"\n\n{name} = None\n")
    return "".join(lines)


def cheat_sources(package: Package) -> list[tuple[Cheat, str]]:
    """Every cheat that applies to the package, with its code."""
    found = [(cheat, cheat_source(package, cheat)) for cheat in CHEATS]
    return [(cheat, source) for cheat, source in found if source is not None]
