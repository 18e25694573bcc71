"""A shipped solution (its verdict is in solutions/expected.toml): Engine.execute for given/autograd.py.

The reference, but grad mode is switched by hand and switched back on the last line of execute,
not in a `with` block or a finally: a backward that raises partway (it reached a released node)
leaves grad mode at create_graph, so after a failing plain backward the caller's ops record no
graph. Red team round 3.
"""

from __future__ import annotations

from collections.abc import Sequence

from given.autograd import *  # noqa: F403 - the framework, re-exported: the probes use solution.Variable, solution.backward, ...


class Engine:
    """Runs backward passes (PyTorch's ``torch::autograd::Engine``).

    The algorithm is PyTorch's, minus the threads:

    1. Walk the graph once from the roots (an explicit stack, no recursion)
       and count, for every reachable node, how many edges point at it: that
       is how many producers must deliver a gradient before it may run.
    2. Seed an input buffer per root node with ``grad_outputs``.
    3. Repeatedly run a node whose count has reached zero, then, for each of
       its next edges, add the produced gradient into the next node's buffer
       slot ``input_nr`` and decrement that node's count; a node whose count
       reaches zero is ready.
    """

    def execute(
        self,
        roots: Sequence[Edge],
        grad_outputs: Sequence[Variable],
        retain_graph: bool,
        create_graph: bool,
    ) -> None:
        """Propagate ``grad_outputs`` backwards from ``roots`` through the graph.

        See the package statement for the full contract; in short: every
        reachable node runs once, after all of its producers; gradients for
        the same (node, input_nr) are summed; nodes release their saved
        Variables unless ``retain_graph``; grad mode is ``create_graph``
        while nodes run.
        """
        if len(roots) != len(grad_outputs):
            raise ValueError(f"got {len(grad_outputs)} gradients for {len(roots)} roots")
        dependencies = self._count_dependencies([node for node, _ in roots])

        # The whole pass, seeding included, runs in the grad mode the caller
        # asked for: summing two root gradients must be recorded too when
        # create_graph is set. The context manager restores the mode even if
        # a node raises (for example because its graph was already freed).
        mode = set_grad_enabled(create_graph)
        mode.__enter__()
        buffers: dict[Node, list[Variable | None]] = {}
        for (node, input_nr), grad in zip(roots, grad_outputs, strict=True):
            if node is not None:
                self._accumulate(buffers, node, input_nr, grad)

        # A root another root leads to is not ready yet: it must wait for
        # the gradient that flows into it from above.
        ready = [node for node in buffers if dependencies.get(node, 0) == 0]
        while ready:
            node = ready.pop()
            grad_inputs = buffers.pop(node, None) or [None] * node.num_inputs
            grads = node(grad_inputs)
            if not retain_graph:
                node.release_variables()
            for (next_node, input_nr), grad in zip(node.next_functions, grads, strict=True):
                if next_node is None:
                    continue
                if grad is not None:
                    self._accumulate(buffers, next_node, input_nr, grad)
                # Count the delivery even when the gradient is None: the
                # consumer has still finished with this node.
                dependencies[next_node] -= 1
                if dependencies[next_node] == 0:
                    ready.append(next_node)
        mode.__exit__(None, None, None)  # restored only when no node raised

    @staticmethod
    def _count_dependencies(root_nodes: Sequence[Node | None]) -> dict[Node, int]:
        """For every node reachable from the roots, the number of edges pointing at it."""
        dependencies: dict[Node, int] = {}
        seen: set[Node] = set()
        stack = []
        for node in root_nodes:
            if node is not None and node not in seen:
                seen.add(node)
                stack.append(node)
        while stack:
            node = stack.pop()
            for next_node, _ in node.next_functions:
                if next_node is None:
                    continue
                dependencies[next_node] = dependencies.get(next_node, 0) + 1
                if next_node not in seen:
                    seen.add(next_node)
                    stack.append(next_node)
        return dependencies

    @staticmethod
    def _accumulate(buffers: dict[Node, list[Variable | None]], node: Node, input_nr: int, grad: Variable) -> None:
        """Add ``grad`` into slot ``input_nr`` of ``node``'s input buffer.

        Out of place on purpose: a node may hand the same Variable to several
        consumers, and with create_graph the sum must be recorded.
        """
        slots = buffers.get(node)
        if slots is None:
            slots = buffers[node] = [None] * node.num_inputs
        current = slots[input_nr]
        slots[input_nr] = grad if current is None else current + grad


set_engine(Engine())
