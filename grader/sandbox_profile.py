"""Which sandbox profile a package's jobs run in: its runtime, or a lighter variant of it.

Place in the flow: :mod:`grader.execute` and :mod:`grader.sandboxed_checks`
ask :func:`sandbox_profile` for the profile of every sandbox they start; the
profile is what the runner imports before it waits for a job
(sandbox/runner/profiles.py) and what the warm pools keep ready.

The torch profile imports TorchDynamo up front: custom ops, dispatch modes,
fake tensors, ``torch.func``, ``torch.compile`` and ``torch.export`` all reach
for it, and a profile without it would make every forked probe import it
again (1-2 s each). That costs about 1 s of CPU at every sandbox start (0.9-1.2 s measured),
and a sandbox is never reused, so on a busy worker it is a good part of each
grading. A torch package whose own code (reference, starter, probes, checks,
given modules) names none of those APIs runs in ``torch-eager`` instead.

The decision is the package's alone, never a candidate's code: the reference
that computes the expected observations and every submission graded against
them run in the same environment. A candidate who reaches for one of those
APIs in an eager package still gets it (torch imports it on first use), paid
inside each probe that does, within the probe's time limit.
"""

from __future__ import annotations

import re

from grader.package import Package

# Names that lead into TorchDynamo. Measured with torch 2.13 (a fresh process,
# then ``"torch._dynamo" in sys.modules``): custom_op, TorchDispatchMode,
# make_fx, FakeTensorMode and torch.func.grad import it; Library.define,
# fx.symbolic_trace, autograd.Function and gradcheck do not. Erring towards
# "reaches it" only costs speed: every private module (torch._*) and the whole
# of torch.library, torch.func, torch.export, torch.onnx count.
_REACHES_DYNAMO = re.compile(
    r"""
    \btorch\s*\.\s*(?:_[A-Za-z]\w*|compile|export|func|library|onnx|fx\s*\.\s*experimental|utils\s*\.\s*_python_dispatch)\b
    | \bfrom\s+torch(?:\s*\.\s*(?:utils|fx))?\s+import\b[^\n]*\b(?:_[A-Za-z]\w*|compile|export|func|library|onnx|experimental)\b
    | \bfunctorch\b
    """,
    re.VERBOSE,
)


def reaches_dynamo(source: str) -> bool:
    """Whether ``source`` names an API that imports TorchDynamo when used."""
    return _REACHES_DYNAMO.search(source) is not None


def _package_code(package: Package) -> list[str]:
    """The package's own Python: everything but ``solutions/`` (other candidates' code)."""
    return [
        content.decode("utf-8", "replace")
        for path, content in package.files.items()
        if path.endswith(".py") and not path.startswith("solutions/")
    ]


def sandbox_profile(package: Package) -> str:
    """The profile to start for ``package``'s probes and checks."""
    if package.runtime != "torch":
        return package.runtime
    # Inductor, preloaded or warmed, imports TorchDynamo itself.
    if "inductor" in package.preload or "inductor" in package.warm:
        return "torch"
    if any(reaches_dynamo(source) for source in _package_code(package)):
        return "torch"
    return "torch-eager"
