"""Find the first layer of torch.compile's stack that breaks a function.

torch.compile is three layers: Dynamo (graph capture), AOTAutograd
(functionalisation and the ahead-of-time backward) and Inductor (code
generation). The backend string decides where the stack stops:

    "eager"      Dynamo's graph, run op by op
    "aot_eager"  AOTAutograd's graphs, run op by op
    "inductor"   Inductor's generated code

Implement ``first_failing_layer`` below: try the layers in order, compare each
run with plain eager execution, and return the first layer that fails.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch  # noqa: F401 - you will need it

# Layer name -> the backend that stops the stack right after that layer, in
# the order the layers must be tried.
BACKENDS: dict[str, str] = {
    "dynamo": "eager",
    "aot_autograd": "aot_eager",
    "inductor": "inductor",
}


def first_failing_layer(fn: Callable[..., Any], args: Sequence[Any], *, fullgraph: bool = False, seed: int = 0) -> str | None:
    """Return the first layer ("dynamo", "aot_autograd", "inductor") that breaks fn, or None.

    Args:
        fn: a function of tensors; it may mutate its arguments, draw random
            numbers or call custom operators.
        args: its positional arguments (tensors, some requiring grad, and
            maybe plain Python values).
        fullgraph: passed on to torch.compile.
        seed: the RNG seed every run starts from.

    A layer fails if compiling or calling fn with its backend raises, or if
    the result (the return value and the arguments after the call) is not
    close to the eager result.
    """
    raise NotImplementedError("first_failing_layer: try each backend in turn")
