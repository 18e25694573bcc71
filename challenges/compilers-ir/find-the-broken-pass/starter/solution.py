"""Find the first broken pass of an IREE pipeline by compiling its IR dumps.

Write ``find_broken_pass(passes, inputs, expected, compile_and_run)``: return
the index of the first dump whose outputs leave the tolerance around
``expected``, or None if every dump is good, using as few calls of
``compile_and_run`` as you can. The statement defines "good" exactly.

The probes' machinery is the read-only module given/pipeline.py (its tab is
beside this file): the programs, the dumps, ``build_case`` and
``CompileAndRun``. Import it to build cases, plant bugs and count your
compiles locally:

    from given.pipeline import CompileAndRun, build_case
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

RTOL, ATOL = 1e-4, 1e-5


def find_broken_pass(
    passes: Sequence[tuple[str, str]],
    inputs: Sequence[np.ndarray],
    expected: Sequence[np.ndarray],
    compile_and_run: Callable[[str, Sequence[np.ndarray]], list[np.ndarray]],
) -> int | None:
    """First draft: walk the pipeline and stop at the first dump whose outputs differ from expected."""
    for index, (_name, ir) in enumerate(passes):
        outputs = compile_and_run(ir, inputs)
        if not all(np.array_equal(y, e) for y, e in zip(outputs, expected, strict=True)):
            return index
    return None
