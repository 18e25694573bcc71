"""A shipped solution (its verdict is in solutions/expected.toml): Engine.execute for given/autograd.py.

Pushes every gradient onwards as soon as it is produced, one path at a time.
"""

from __future__ import annotations

from collections.abc import Sequence

from given.autograd import *  # noqa: F403 - the framework, re-exported: the probes use solution.Variable, solution.backward, ...


class Engine:
    """Pushes every gradient onwards as soon as it is produced, one path at a time.

    No input buffers and no dependency counting: a node runs once per path
    reaching it. Summing at the leaves makes the values right when nothing is
    released, but the work grows with the number of paths, and a node that
    releases its saved Variables after its first run fails on its second.
    """

    def execute(
        self,
        roots: Sequence[Edge],
        grad_outputs: Sequence[Variable],
        retain_graph: bool,
        create_graph: bool,
    ) -> None:
        with set_grad_enabled(create_graph):
            stack = [(node, input_nr, grad) for (node, input_nr), grad in zip(roots, grad_outputs, strict=True) if node is not None]
            while stack:
                node, input_nr, grad = stack.pop()
                grad_inputs: list[Variable | None] = [None] * node.num_inputs
                grad_inputs[input_nr] = grad
                grads = node(grad_inputs)
                if not retain_graph:
                    node.release_variables()
                for (next_node, next_nr), next_grad in zip(node.next_functions, grads, strict=True):
                    if next_node is not None and next_grad is not None:
                        stack.append((next_node, next_nr, next_grad))


set_engine(Engine())
