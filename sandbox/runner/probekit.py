"""The probe API that challenge authors write against; it runs inside the sandbox.

A probe file (``probes/public.py`` or ``probes/hidden.py`` of a challenge
package) declares probes with :func:`probe`::

    from probekit import probe, raises

    @probe(category="correctness", weight=2, hints=["topo-order"])
    def diamond_graph(solution):
        '''Gradients meet where two paths join.'''
        ...
        return {"grad": x.grad}

Each probe receives the candidate's imported module and returns an
*observation*: plain data (None, bool, int, float, str, lists, tuples, dicts
with string keys) and arrays (numpy arrays, torch and tensorflow tensors).
The runner serialises it; the trusted worker compares it with the reference's
observation for the same probe.

The decorator arguments are read by the trusted worker from the file's source
(``grader.probe_meta``), never from this process, because the candidate's code
shares this process and could rewrite anything here. That is why they must be
literals. Accepted keywords:

- ``category`` (str, required): ``correctness``, ``gradients``, ``numerics``...
- ``weight`` (number, default 1)
- ``check``: ``"auto"`` (default: exact for non-floats, tolerance for floats),
  ``"exact"``, or the name of a function in the package's ``probes/checks.py``
- ``rtol`` / ``atol`` (numbers): override the dtype-aware default tolerances
- ``hints`` (list of str): hint tags a failure of this probe unlocks
- ``timeout`` (number of seconds): overrides the package's per-probe limit

Here the decorator only records the function, in declaration order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

#: name -> function, in declaration order; read by the runner.
REGISTRY: dict[str, Callable[[Any], Any]] = {}


def probe(**meta: Any) -> Callable[[F], F]:
    """Register the decorated function as a probe (see the module docstring)."""

    def register(fn: F) -> F:
        REGISTRY[fn.__name__] = fn
        return fn

    return register


def raises(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> str | None:
    """Call ``fn`` and return the name of the exception it raised, or None.

    Handy for observations such as "a second backward without retain_graph
    raises": the observation is then the exception's class name, which the
    reference produces too.
    """
    try:
        fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - any exception is the observation
        return type(exc).__name__
    return None
