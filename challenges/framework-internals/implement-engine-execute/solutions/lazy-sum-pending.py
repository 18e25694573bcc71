"""A shipped solution (its verdict is in solutions/expected.toml): Engine.execute for given/autograd.py.

Correct: every gradient for a slot is kept in a list and summed only when its node runs; a node
runs once no edge pointing at it is still pending (a Counter of pending edges per node, found by
an explicit-stack walk), from a FIFO queue. Written by the package owner in red team round 3.
"""

from __future__ import annotations

import functools
import operator
from collections import Counter, deque

from given.autograd import *  # noqa: F403 - the framework, re-exported


class Engine:
    def execute(self, roots, grad_outputs, retain_graph, create_graph) -> None:
        pending: Counter = Counter()  # node -> how many edges pointing at it have not delivered yet
        reached = set()
        stack = []
        for node, _ in roots:
            if node not in reached:
                reached.add(node)
                stack.append(node)
        while stack:
            for nxt, _ in stack.pop().next_functions:
                if nxt is None:
                    continue
                pending[nxt] += 1
                if nxt not in reached:
                    reached.add(nxt)
                    stack.append(nxt)

        arrived: dict = {}  # node -> one list per input slot of the gradients that arrived for it

        def deliver(node, nr, grad):
            slots = arrived.setdefault(node, [[] for _ in range(node.num_inputs)])
            if grad is not None:
                slots[nr].append(grad)

        with set_grad_enabled(create_graph):
            for (node, nr), grad in zip(roots, grad_outputs, strict=True):
                deliver(node, nr, grad)
            queue = deque(node for node in arrived if pending[node] == 0)
            while queue:
                node = queue.popleft()
                slots = arrived.pop(node, None) or [[] for _ in range(node.num_inputs)]
                inputs = [functools.reduce(operator.add, grads) if grads else None for grads in slots]
                outputs = node(inputs)
                if not retain_graph:
                    node.release_variables()
                for (nxt, nr), grad in zip(node.next_functions, outputs, strict=True):
                    if nxt is None:
                        continue
                    deliver(nxt, nr, grad)
                    pending[nxt] -= 1
                    if pending[nxt] == 0:
                        queue.append(nxt)


set_engine(Engine())
