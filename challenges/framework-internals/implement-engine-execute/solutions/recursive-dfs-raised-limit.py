"""Wrong (red team round 1): a recursive depth-first topological sort, made to pass long chains by
raising sys.setrecursionlimit for the duration of execute and restoring it afterwards.

Its call stack grows by one frame per node of the longest path (rule 3: do not recurse).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from given.autograd import *  # noqa: F403


class Engine:
    def execute(self, roots: Sequence[Edge], grad_outputs: Sequence[Variable], retain_graph: bool, create_graph: bool) -> None:
        order: list[Node] = []
        visited: set[Node] = set()

        def visit(node: Node) -> None:
            visited.add(node)
            for nxt, _ in node.next_functions:
                if nxt is not None and nxt not in visited:
                    visit(nxt)
            order.append(node)

        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old, 100_000))
        try:
            for node, _ in roots:
                if node is not None and node not in visited:
                    visit(node)
        finally:
            sys.setrecursionlimit(old)

        with set_grad_enabled(create_graph):
            buffers: dict[Node, list[Variable | None]] = {}

            def add(node: Node, nr: int, g: Variable) -> None:
                slots = buffers.setdefault(node, [None] * node.num_inputs)
                slots[nr] = g if slots[nr] is None else slots[nr] + g

            for (node, nr), g in zip(roots, grad_outputs):
                if node is not None:
                    add(node, nr, g)
            for node in reversed(order):  # reverse post-order: producers first
                grads = node(buffers.pop(node, None) or [None] * node.num_inputs)
                if not retain_graph:
                    node.release_variables()
                for (nxt, nr), g in zip(node.next_functions, grads):
                    if nxt is not None and g is not None:
                        add(nxt, nr, g)


set_engine(Engine())
