"""A shipped solution (its verdict is in solutions/expected.toml): Engine.execute for given/autograd.py.

Kahn's algorithm with a FIFO ready queue, dependencies counted per (node, input_nr) slot: a split
node runs as soon as one of its pieces' gradients is complete, with zeros for the others, and
drops them when they arrive. Roots still wait for all their slots, so split pieces as roots come
out right. Red team round 2.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from given.autograd import *  # noqa: F403


class Engine:
    """Runs backward passes."""

    def execute(self, roots: Sequence[Edge], grad_outputs: Sequence[Variable], retain_graph: bool, create_graph: bool) -> None:
        # How many edges point at each reachable node.
        deps: dict[tuple[Node, int], int] = {}
        seen: set[Node] = set()
        stack: list[Node] = []
        for node, _ in roots:
            if node is not None and node not in seen:
                seen.add(node)
                stack.append(node)
        while stack:
            node = stack.pop()
            for nxt, slot in node.next_functions:
                if nxt is None:
                    continue
                deps[nxt, slot] = deps.get((nxt, slot), 0) + 1
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)

        buffers: dict[Node, list[Variable | None]] = {}

        def add_to(node: Node, nr: int, g: Variable) -> None:
            slots = buffers.get(node)
            if slots is None:
                slots = buffers[node] = [None] * node.num_inputs
            slots[nr] = g if slots[nr] is None else slots[nr] + g

        with set_grad_enabled(create_graph):
            for (node, nr), g in zip(roots, grad_outputs, strict=True):
                if node is not None:
                    add_to(node, nr, g)
            queue = deque((n, 0) for n in buffers if all(deps.get((n, i), 0) == 0 for i in range(n.num_inputs)))
            done: set[Node] = set()
            while queue:
                node, _ = queue.popleft()
                if node in done:  # a multi-output node is queued once per slot
                    continue
                done.add(node)
                inputs = buffers.pop(node, None) or [None] * node.num_inputs
                outs = node(inputs)
                if not retain_graph:
                    node.release_variables()
                for (nxt, nr), g in zip(node.next_functions, outs, strict=True):
                    if nxt is None:
                        continue
                    if g is not None:
                        add_to(nxt, nr, g)
                    deps[nxt, nr] -= 1
                    if deps[nxt, nr] == 0:
                        queue.append((nxt, nr))


set_engine(Engine())
