"""A shipped solution (its verdict is in solutions/expected.toml): Engine.execute for given/autograd.py.

Correct (red team round 4's owner): the pass's state lives on the engine, in a stack of graph
tasks (one per call of execute, pushed on entry and popped on exit), so a node that runs a backward
of its own (checkpointing) pushes a second task above the first and leaves it alone. FIFO Kahn
order over id()-keyed tables (the task holds every node it counts, so no id is reused meanwhile);
release through release_variables() right after each call that returned.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

from given.autograd import *  # noqa: F403 - the framework, re-exported for the probes
from given.autograd import Edge, Node, Variable, set_engine, set_grad_enabled


class _GraphTask:
    def __init__(self, roots: Sequence[Edge]) -> None:
        self.pending: dict[int, int] = {}
        self.nodes: dict[int, Node] = {}
        self.buffers: dict[int, list[Variable | None]] = {}
        todo = []
        for n, _ in roots:
            if n is not None and id(n) not in self.nodes:
                self.nodes[id(n)] = n
                todo.append(n)
        while todo:
            node = todo.pop()
            for nxt, _ in node.next_functions:
                if nxt is None:
                    continue
                self.pending[id(nxt)] = self.pending.get(id(nxt), 0) + 1
                if id(nxt) not in self.nodes:
                    self.nodes[id(nxt)] = nxt
                    todo.append(nxt)

    def add(self, node: Node, slot: int, grad: Variable) -> None:
        buf = self.buffers.setdefault(id(node), [None] * node.num_inputs)
        buf[slot] = grad if buf[slot] is None else buf[slot] + grad


class Engine:
    def __init__(self) -> None:
        self.tasks: list[_GraphTask] = []

    def execute(self, roots: Sequence[Edge], grad_outputs: Sequence[Variable], retain_graph: bool, create_graph: bool) -> None:
        task = _GraphTask(roots)
        self.tasks.append(task)
        try:
            with set_grad_enabled(create_graph):
                started = []
                for (node, slot), grad in zip(roots, grad_outputs, strict=True):
                    if id(node) not in task.buffers:
                        started.append(node)
                    task.add(node, slot, grad)
                queue = deque(n for n in started if task.pending.get(id(n), 0) == 0)
                while queue:
                    node = queue.popleft()
                    inputs = task.buffers.pop(id(node), None) or [None] * node.num_inputs
                    outputs = node(inputs)
                    if not retain_graph:
                        node.release_variables()
                    for (nxt, slot), grad in zip(node.next_functions, outputs, strict=True):
                        if nxt is None:
                            continue
                        if grad is not None:
                            task.add(nxt, slot, grad)
                        task.pending[id(nxt)] -= 1
                        if task.pending[id(nxt)] == 0:
                            queue.append(nxt)
        finally:
            self.tasks.pop()


set_engine(Engine())
