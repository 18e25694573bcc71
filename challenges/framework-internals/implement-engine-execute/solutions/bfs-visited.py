"""A shipped solution (its verdict is in solutions/expected.toml): Engine.execute for given/autograd.py.

Breadth-first from the roots, each node run the first time it is dequeued.
"""

from __future__ import annotations

from collections.abc import Sequence

from given.autograd import *  # noqa: F403 - the framework, re-exported: the probes use solution.Variable, solution.backward, ...


class Engine:
    """Breadth-first from the roots, each node run the first time it is dequeued.

    No dependency counting: when two paths of different lengths meet, the
    node runs as soon as the shorter path reaches it, and the gradient from
    the longer path arrives too late and is lost.
    """

    def execute(
        self,
        roots: Sequence[Edge],
        grad_outputs: Sequence[Variable],
        retain_graph: bool,
        create_graph: bool,
    ) -> None:
        from collections import deque

        with set_grad_enabled(create_graph):
            buffers: dict[Node, list[Variable | None]] = {}
            queue: deque[Node] = deque()
            visited: set[Node] = set()
            for (node, input_nr), grad in zip(roots, grad_outputs, strict=True):
                if node is None:
                    continue
                slots = buffers.setdefault(node, [None] * node.num_inputs)
                slots[input_nr] = grad if slots[input_nr] is None else slots[input_nr] + grad
                if node not in visited:
                    visited.add(node)
                    queue.append(node)
            while queue:
                node = queue.popleft()
                grads = node(buffers.pop(node, [None] * node.num_inputs))
                if not retain_graph:
                    node.release_variables()
                for (next_node, input_nr), grad in zip(node.next_functions, grads, strict=True):
                    if next_node is None or grad is None:
                        continue
                    slots = buffers.setdefault(next_node, [None] * next_node.num_inputs)
                    slots[input_nr] = grad if slots[input_nr] is None else slots[input_nr] + grad
                    if next_node not in visited:
                        visited.add(next_node)
                        queue.append(next_node)


set_engine(Engine())
