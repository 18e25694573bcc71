"""A shipped solution (its verdict is in solutions/expected.toml): Engine.execute for given/autograd.py.

Reverse post-order from an explicit-stack depth-first search.
"""

from __future__ import annotations

from collections.abc import Sequence

from given.autograd import *  # noqa: F403 - the framework, re-exported: the probes use solution.Variable, solution.backward, ...


class Engine:
    """Reverse post-order from an explicit-stack depth-first search.

    A different correct strategy: compute one topological order first, then
    sweep it once. A node appears in the post-order after everything it sends
    gradients to, so in reverse post-order every node comes after all of its
    producers.
    """

    def execute(
        self,
        roots: Sequence[Edge],
        grad_outputs: Sequence[Variable],
        retain_graph: bool,
        create_graph: bool,
    ) -> None:
        order = self._post_order([node for node, _ in roots if node is not None])
        with set_grad_enabled(create_graph):
            buffers: dict[Node, list[Variable | None]] = {}
            for (node, input_nr), grad in zip(roots, grad_outputs, strict=True):
                if node is not None:
                    self._add(buffers, node, input_nr, grad)
            for node in reversed(order):
                grads = node(buffers.pop(node, None) or [None] * node.num_inputs)
                if not retain_graph:
                    node.release_variables()
                for (next_node, input_nr), grad in zip(node.next_functions, grads, strict=True):
                    if next_node is not None and grad is not None:
                        self._add(buffers, next_node, input_nr, grad)

    @staticmethod
    def _post_order(start: list[Node]) -> list[Node]:
        """Depth-first post-order with an explicit stack of (node, next child index)."""
        order: list[Node] = []
        visited: set[Node] = set()
        for root in start:
            if root in visited:
                continue
            visited.add(root)
            stack: list[tuple[Node, int]] = [(root, 0)]
            while stack:
                node, i = stack[-1]
                if i < len(node.next_functions):
                    stack[-1] = (node, i + 1)
                    child = node.next_functions[i][0]
                    if child is not None and child not in visited:
                        visited.add(child)
                        stack.append((child, 0))
                else:
                    stack.pop()
                    order.append(node)
        return order

    @staticmethod
    def _add(buffers: dict[Node, list[Variable | None]], node: Node, input_nr: int, grad: Variable) -> None:
        slots = buffers.setdefault(node, [None] * node.num_inputs)
        slots[input_nr] = grad if slots[input_nr] is None else slots[input_nr] + grad


set_engine(Engine())
