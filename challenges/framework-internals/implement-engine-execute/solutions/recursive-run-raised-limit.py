"""Wrong (red team round 1): a recursive engine (a node whose count reaches zero runs at once and
recurses into its next edges), made to pass long chains by raising sys.setrecursionlimit for
the duration of execute and restoring it afterwards.

Its call stack grows by frames per node of the longest path (rule 3: do not recurse).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from given.autograd import *  # noqa: F403


class Engine:
    def execute(self, roots: Sequence[Edge], grad_outputs: Sequence[Variable], retain_graph: bool, create_graph: bool) -> None:
        deps: dict[Node, int] = {}
        stack = list(dict.fromkeys(n for n, _ in roots if n is not None))  # each root node once
        seen = set(stack)
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

        def put(node: Node, nr: int, g: Variable | None) -> None:
            slots = buffers.setdefault(node, [None] * node.num_inputs)
            if g is not None:
                slots[nr] = g if slots[nr] is None else slots[nr] + g

        def run(node: Node) -> None:
            grads = node(buffers.pop(node, None) or [None] * node.num_inputs)
            if not retain_graph:
                node.release_variables()
            for (nxt, nr), g in zip(node.next_functions, grads):
                if nxt is None:
                    continue
                put(nxt, nr, g)
                deps[nxt] -= 1
                if deps[nxt] == 0:
                    run(nxt)

        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old, 100_000))
        try:
            with set_grad_enabled(create_graph):
                for (n, nr), g in zip(roots, grad_outputs):
                    if n is not None:
                        put(n, nr, g)
                for n in [n for n in buffers if deps.get(n, 0) == 0]:
                    run(n)
        finally:
            sys.setrecursionlimit(old)


set_engine(Engine())
