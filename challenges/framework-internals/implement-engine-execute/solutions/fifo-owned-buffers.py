"""A shipped solution (its verdict is in solutions/expected.toml): Engine.execute for given/autograd.py.

Kahn's algorithm with a FIFO queue and allocation-saving buffers (red team round 3, correct): with
create_graph=False the first gradient for a slot is kept by reference, the second arrival creates
a new Variable the engine owns, and only owned buffers are added into in place, until the buffer is
handed to its node: then ownership ends (the node may pass that Variable on unchanged). With
create_graph=True every sum is out of place.
"""

from __future__ import annotations

from collections import deque

from given.autograd import *  # noqa: F403


class Engine:
    def execute(self, roots, grad_outputs, retain_graph, create_graph) -> None:
        deps: dict = {}
        seen = set()
        todo = deque()
        for node, _ in roots:
            if node not in seen:
                seen.add(node)
                todo.append(node)
        while todo:
            node = todo.popleft()
            for nxt, _ in node.next_functions:
                if nxt is None:
                    continue
                deps[nxt] = deps.get(nxt, 0) + 1
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)

        buffers: dict = {}
        owned: set = set()  # id()s of Variables this call created (all alive in buffers)

        def add(node, nr, g):
            slots = buffers.get(node)
            if slots is None:
                slots = buffers[node] = [None] * node.num_inputs
            cur = slots[nr]
            if cur is None:
                slots[nr] = g
            elif create_graph:
                slots[nr] = cur + g
            elif id(cur) in owned:
                cur.data += g.data
            else:
                new = Variable(cur.data + g.data)
                owned.add(id(new))
                slots[nr] = new

        with set_grad_enabled(create_graph):
            for (node, nr), g in zip(roots, grad_outputs, strict=True):
                add(node, nr, g)
            ready = deque(n for n in buffers if deps.get(n, 0) == 0)
            while ready:
                node = ready.popleft()
                slots = buffers.pop(node, None) or [None] * node.num_inputs
                for g in slots:  # handed on: the node may pass it to others
                    owned.discard(id(g))
                grads = node(slots)
                if not retain_graph:
                    node.release_variables()
                for (nxt, nr), g in zip(node.next_functions, grads, strict=True):
                    if nxt is None:
                        continue
                    if g is not None:
                        add(nxt, nr, g)
                    deps[nxt] -= 1
                    if deps[nxt] == 0:
                        ready.append(nxt)


set_engine(Engine())
