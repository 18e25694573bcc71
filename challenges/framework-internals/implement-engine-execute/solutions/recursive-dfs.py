"""A shipped solution (its verdict is in solutions/expected.toml): Engine.execute for given/autograd.py.

Topological order by a recursive depth-first search.
"""

from __future__ import annotations

from collections.abc import Sequence

from given.autograd import *  # noqa: F403 - the framework, re-exported: the probes use solution.Variable, solution.backward, ...


class Engine:
    """Topological order by a recursive depth-first search.

    Plausible and correct on small graphs, but the recursion depth grows with
    the depth of the graph: a 10,000-node chain overflows Python's stack limit.
    """

    def execute(
        self,
        roots: Sequence[Edge],
        grad_outputs: Sequence[Variable],
        retain_graph: bool,
        create_graph: bool,
    ) -> None:
        order: list[Node] = []
        visited: set[Node] = set()

        def visit(node: Node) -> None:
            if node in visited:
                return
            visited.add(node)
            for next_node, _ in node.next_functions:
                if next_node is not None:
                    visit(next_node)
            order.append(node)  # post-order: after everything it feeds into

        for node, _ in roots:
            if node is not None:
                visit(node)

        with set_grad_enabled(create_graph):
            buffers: dict[Node, list[Variable | None]] = {}
            for (node, input_nr), grad in zip(roots, grad_outputs, strict=True):
                if node is not None:
                    slots = buffers.setdefault(node, [None] * node.num_inputs)
                    slots[input_nr] = grad if slots[input_nr] is None else slots[input_nr] + grad
            for node in reversed(order):
                # A node that got only None still runs (it returns None for each input).
                grad_inputs = buffers.pop(node, None) or [None] * node.num_inputs
                grads = node(grad_inputs)
                if not retain_graph:
                    node.release_variables()
                for (next_node, input_nr), grad in zip(node.next_functions, grads, strict=True):
                    if next_node is None or grad is None:
                        continue
                    slots = buffers.setdefault(next_node, [None] * next_node.num_inputs)
                    slots[input_nr] = grad if slots[input_nr] is None else slots[input_nr] + grad


set_engine(Engine())
