"""A shipped solution (its verdict is in solutions/expected.toml): Engine.execute for given/autograd.py.

Kahn's algorithm with a FIFO ready queue (red team round 2, correct): the reference's dependency
counts, run breadth-first instead of from a stack.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from given.autograd import *  # noqa: F403


class Engine:
    """Runs backward passes."""

    def execute(self, roots: Sequence[Edge], grad_outputs: Sequence[Variable], retain_graph: bool, create_graph: bool) -> None:
        # How many edges point at each reachable node.
        deps: dict[Node, int] = {}
        seen: set[Node] = set()
        stack: list[Node] = []
        for node, _ in roots:
            if node is not None and node not in seen:
                seen.add(node)
                stack.append(node)
        while stack:
            node = stack.pop()
            for nxt, _ in node.next_functions:
                if nxt is None:
                    continue
                deps[nxt] = deps.get(nxt, 0) + 1
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
            queue = deque(n for n in buffers if deps.get(n, 0) == 0)
            while queue:
                node = queue.popleft()
                inputs = buffers.pop(node, None) or [None] * node.num_inputs
                outs = node(inputs)
                if not retain_graph:
                    node.release_variables()
                for (nxt, nr), g in zip(node.next_functions, outs, strict=True):
                    if nxt is None:
                        continue
                    if g is not None:
                        add_to(nxt, nr, g)
                    deps[nxt] -= 1
                    if deps[nxt] == 0:
                        queue.append(nxt)


set_engine(Engine())
