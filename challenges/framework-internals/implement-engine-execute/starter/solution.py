"""Write Engine.execute: the backward pass of the mini autograd framework in given/autograd.py.

The framework (Variable and its ops, Node, AccumulateGrad, grad mode,
backward) is the read-only module given/autograd.py, in the tab beside this
file: read it, the probes use it exactly as it is. This file imports all of
it, so the probes reach it through your module (``solution.Variable``,
``solution.backward``): keep that import. Write the engine below; the last
line hands it to ``backward``. You may add helper functions or classes.
"""

from __future__ import annotations

from collections.abc import Sequence

from given.autograd import *  # noqa: F403 - the framework, re-exported: the probes use solution.Variable, solution.backward, ...


class Engine:
    """Runs backward passes (PyTorch's ``torch::autograd::Engine``)."""

    def execute(
        self,
        roots: Sequence[Edge],
        grad_outputs: Sequence[Variable],
        retain_graph: bool,
        create_graph: bool,
    ) -> None:
        """Propagate ``grad_outputs`` backwards from ``roots`` through the graph.

        Args:
            roots: one edge per output being differentiated: the gradient
                ``grad_outputs[i]`` enters the graph at input
                ``roots[i][1]`` of node ``roots[i][0]``. The same edge may
                appear more than once, and one root may be reachable from another.
            grad_outputs: the gradients of those outputs, shapes already checked.
            retain_graph: if False, call ``release_variables()`` on every node
                once it has run, so that a later backward through it fails.
            create_graph: if True, record the backward computation itself
                (grad mode on while nodes run) so the resulting gradients
                can be differentiated; if False, run the nodes with grad mode off.

        Contract:
            - every node reachable from the roots runs exactly once, and only
              after every node that sends it a gradient has run;
            - gradients arriving for the same input of a node are summed, and
              the node is called with a list of ``num_inputs`` gradients
              (None where nothing arrived);
            - edges whose node is None are skipped;
            - leaves are reached through their AccumulateGrad nodes, which
              update ``.grad``: the engine never writes ``.grad`` itself;
            - it must not recurse: a chain of 10,000 nodes must work under
              Python's default recursion limit;
            - grad mode is restored when execute returns or raises.
        """
        raise NotImplementedError("Engine.execute is not implemented yet: that is your task")


set_engine(Engine())
