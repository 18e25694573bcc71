"""Wrong (red team round 1): writes .grad itself instead of calling the leaf's AccumulateGrad node.

The first gradient is stored as it is (no copy), later ones are added out of place. The values
are right, but without create_graph a gradient that requires grad and reaches a leaf unchanged
(a grad_output through an addition, or a leaf as a root) is stored with its graph, and .grad
is the very Variable the caller handed in, or the one another leaf got too (rule 2: the engine
never writes .grad itself; a leaf's .grad is its own).
"""

from __future__ import annotations

from collections.abc import Sequence

from given.autograd import *  # noqa: F403


class Engine:
    def execute(self, roots: Sequence[Edge], grad_outputs: Sequence[Variable], retain_graph: bool, create_graph: bool) -> None:
        deps: dict[Node, int] = {}
        stack = []
        seen: set[Node] = set()
        for n, _ in roots:
            if n is not None and n not in seen:
                seen.add(n)
                stack.append(n)
        while stack:
            node = stack.pop()
            for nxt, _ in node.next_functions:
                if nxt is None:
                    continue
                deps[nxt] = deps.get(nxt, 0) + 1
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        with set_grad_enabled(create_graph):
            buffers: dict[Node, list[Variable | None]] = {}

            def add(node: Node, nr: int, g: Variable) -> None:
                slots = buffers.setdefault(node, [None] * node.num_inputs)
                slots[nr] = g if slots[nr] is None else slots[nr] + g

            for (n, nr), g in zip(roots, grad_outputs):
                if n is not None:
                    add(n, nr, g)
            ready = [n for n in buffers if deps.get(n, 0) == 0]
            while ready:
                node = ready.pop()
                inputs = buffers.pop(node, None) or [None] * node.num_inputs
                if isinstance(node, AccumulateGrad):
                    (g,) = inputs
                    if g is not None:
                        var = node.variable
                        var.grad = g if var.grad is None else var.grad + g
                    continue
                grads = node(inputs)
                if not retain_graph:
                    node.release_variables()
                for (nxt, nr), g in zip(node.next_functions, grads):
                    if nxt is None:
                        continue
                    if g is not None:
                        add(nxt, nr, g)
                    deps[nxt] -= 1
                    if deps[nxt] == 0:
                        ready.append(nxt)


set_engine(Engine())
