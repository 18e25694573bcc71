"""A shipped solution (its verdict is in solutions/expected.toml): Engine.execute for given/autograd.py.

Dependency counting with a ready queue ordered like PyTorch's (newest node first).
"""

from __future__ import annotations

from collections.abc import Sequence

from given.autograd import *  # noqa: F403 - the framework, re-exported: the probes use solution.Variable, solution.backward, ...


class _GraphRoot(Node):
    """A node whose next functions are the roots: it turns many roots into one.

    PyTorch does the same: with a single start node, a root reachable from
    another root is just a node with one more dependency.
    """

    def __init__(self, roots: Sequence[Edge], grad_outputs: Sequence[Variable]) -> None:
        super().__init__(roots, num_inputs=0)
        self.grad_outputs = list(grad_outputs)

    def __call__(self, grad_inputs: Sequence[Variable | None]) -> list[Variable | None]:
        return list(self.grad_outputs)


class Engine:
    """Dependency counting with a ready queue ordered like PyTorch's (newest node first)."""

    def execute(
        self,
        roots: Sequence[Edge],
        grad_outputs: Sequence[Variable],
        retain_graph: bool,
        create_graph: bool,
    ) -> None:
        """Run every node reachable from a synthetic graph root, newest ready node first."""
        import heapq

        graph_root = _GraphRoot(roots, grad_outputs)
        # Pass 1: dependencies, by an explicit-stack traversal.
        dependencies: dict[Node, int] = {}
        seen = {graph_root}
        stack: list[Node] = [graph_root]
        while stack:
            for next_node, _ in stack.pop().next_functions:
                if next_node is None:
                    continue
                dependencies[next_node] = dependencies.get(next_node, 0) + 1
                if next_node not in seen:
                    seen.add(next_node)
                    stack.append(next_node)

        # Pass 2: run. The heap key is -sequence_nr: any ready node is a
        # valid choice; newest-first mirrors PyTorch's CPU ready queue.
        buffers: dict[Node, list[Variable | None]] = {graph_root: []}
        heap: list[tuple[int, Node]] = [(-graph_root.sequence_nr, graph_root)]
        with set_grad_enabled(create_graph):  # restored whatever a node raises
            while heap:
                _, node = heapq.heappop(heap)
                grads = node(buffers.pop(node))
                if not retain_graph and node is not graph_root:
                    node.release_variables()
                for (next_node, input_nr), grad in zip(node.next_functions, grads, strict=True):
                    if next_node is None:
                        continue
                    slots = buffers.setdefault(next_node, [None] * next_node.num_inputs)
                    if grad is not None:
                        slots[input_nr] = grad if slots[input_nr] is None else slots[input_nr] + grad
                    dependencies[next_node] -= 1
                    if dependencies[next_node] == 0:
                        heapq.heappush(heap, (-next_node.sequence_nr, next_node))


set_engine(Engine())
