"""A shipped solution (its verdict is in solutions/expected.toml): Engine.execute for given/autograd.py.

No dependency counts (red team round 2, correct): run the reachable nodes in decreasing
sequence_nr. A node is always created after the nodes it points to, so that is a topological
order of the backward graph: every producer of a node's gradient runs before it.
"""

from __future__ import annotations

from collections.abc import Sequence

from given.autograd import *  # noqa: F403


class Engine:
    def execute(self, roots: Sequence[Edge], grad_outputs: Sequence[Variable], retain_graph: bool, create_graph: bool) -> None:
        reachable: dict[Node, None] = {}
        todo = [node for node, _ in roots if node is not None]
        while todo:
            node = todo.pop()
            if node in reachable:
                continue
            reachable[node] = None
            todo.extend(nxt for nxt, _ in node.next_functions if nxt is not None and nxt not in reachable)
        order = sorted(reachable, key=lambda n: n.sequence_nr, reverse=True)

        with set_grad_enabled(create_graph):
            buffers: dict[Node, list[Variable | None]] = {node: [None] * node.num_inputs for node in order}
            for (node, nr), g in zip(roots, grad_outputs, strict=True):
                if node is None:
                    continue
                cur = buffers[node][nr]
                buffers[node][nr] = g if cur is None else cur + g
            for node in order:
                outs = node(buffers.pop(node))
                if not retain_graph:
                    node.release_variables()
                for (nxt, nr), g in zip(node.next_functions, outs, strict=True):
                    if nxt is None or g is None:
                        continue
                    cur = buffers[nxt][nr]
                    buffers[nxt][nr] = g if cur is None else cur + g


set_engine(Engine())
