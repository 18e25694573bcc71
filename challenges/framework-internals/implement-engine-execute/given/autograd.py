"""A miniature autograd framework in pure Python and numpy: everything but the engine.

This module is given and read-only: the probes use it exactly as it is.
Your solution.py imports it (``from given.autograd import *``), writes the
one missing piece, ``Engine.execute``, and hands its engine to
:func:`backward` with ``set_engine(Engine())``. It mirrors how PyTorch is
built:

- :class:`Variable` is the tensor: a float64 numpy array (``.data``) plus
  ``.requires_grad``, ``.grad`` and ``.grad_fn``.
- Every differentiable op run while grad mode is on, on at least one input
  that requires grad, records a backward :class:`Node` as its output's
  ``grad_fn``. A node's ``next_functions`` are ``(node, input_nr)`` edges
  pointing at the nodes that produced its inputs: the graph points backwards,
  from outputs to inputs.
- A leaf that requires grad (a Variable created by the user) is reached
  through its :class:`AccumulateGrad` node, which adds the incoming gradient
  into the leaf's ``.grad``.
- Backward formulas are written with the same differentiable ops, so when
  grad mode is on during the backward pass the gradient computation is
  itself recorded, and the gradients can be differentiated again.
- Grad mode lives in this module: change it with :class:`set_grad_enabled`,
  :func:`no_grad` or :func:`enable_grad`, read it with :func:`is_grad_enabled`.
- :func:`backward` checks its arguments, turns each output into its gradient
  edge and hands everything to the engine given to :func:`set_engine`.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, TypeAlias

import numpy as np

# What ``from given.autograd import *`` brings into solution.py, where the
# probes find it (solution.Variable, solution.backward, ...).
__all__ = [
    "is_grad_enabled", "set_grad_enabled", "no_grad", "enable_grad", "Variable", "as_variable",
    "Edge", "Node", "AccumulateGrad", "AddBackward", "SubBackward", "MulBackward", "DivBackward",
    "NegBackward", "PowBackward", "ExpBackward", "LogBackward", "SinBackward", "CosBackward",
    "TanhBackward", "SumBackward", "BroadcastToBackward", "SumToBackward", "MatmulBackward",
    "TransposeBackward", "SplitBackward", "CatBackward", "add", "sub", "mul", "div", "neg", "power",
    "exp", "log", "sin", "cos", "tanh", "sum_all", "broadcast_to", "sum_to", "matmul", "transpose",
    "split", "cat", "set_engine", "backward",
]

# ============================================================================
# Grad mode
# ============================================================================

_grad_enabled: bool = True


def is_grad_enabled() -> bool:
    """Whether differentiable ops currently record the graph."""
    return _grad_enabled


class set_grad_enabled:
    """Context manager that sets grad mode and restores the previous mode on exit.

    ``with set_grad_enabled(False): ...`` is ``torch.no_grad()``;
    ``with set_grad_enabled(True): ...`` is ``torch.enable_grad()``.
    The previous mode is restored even when the block raises.
    """

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)
        self.previous = True

    def __enter__(self) -> None:
        global _grad_enabled
        self.previous = _grad_enabled
        _grad_enabled = self.mode

    def __exit__(self, *exc_info: object) -> bool:
        global _grad_enabled
        _grad_enabled = self.previous
        return False


def no_grad() -> set_grad_enabled:
    """``with no_grad(): ...`` runs ops without recording a graph."""
    return set_grad_enabled(False)


def enable_grad() -> set_grad_enabled:
    """``with enable_grad(): ...`` records the graph even inside ``no_grad``."""
    return set_grad_enabled(True)


# ============================================================================
# Variable
# ============================================================================


class Variable:
    """A float64 array that can take part in automatic differentiation.

    Attributes:
        data: the values (a numpy float64 array, possibly 0-d). A Variable
            owns its buffer: the constructor copies what it is given.
        requires_grad: whether gradients flow to this Variable.
        grad: the accumulated gradient (a Variable) of a leaf, or None.
        grad_fn: the Node that produced this Variable, None for a leaf.
        output_nr: which output of ``grad_fn`` this Variable is (0 for
            single-output ops).
    """

    # Make numpy defer to our reflected operators: ``ndarray * Variable``
    # must build a Variable, not an object array.
    __array_ufunc__ = None

    def __init__(self, data: Any, requires_grad: bool = False) -> None:
        self.data: np.ndarray = np.array(data, dtype=np.float64)
        self.requires_grad: bool = bool(requires_grad)
        self.grad: Variable | None = None
        self.grad_fn: Node | None = None
        self.output_nr: int = 0
        self._grad_accumulator: AccumulateGrad | None = None

    # ---------------------------------------------------------------- info

    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape

    @property
    def ndim(self) -> int:
        return self.data.ndim

    @property
    def size(self) -> int:
        return self.data.size

    @property
    def is_leaf(self) -> bool:
        """A Variable not produced by a recorded op (PyTorch's ``is_leaf``)."""
        return self.grad_fn is None

    def item(self) -> float:
        return float(self.data.item())

    def numpy(self) -> np.ndarray:
        """A copy of the values."""
        return self.data.copy()

    def detach(self) -> Variable:
        """A new leaf with the same values that does not require grad (a copy)."""
        return Variable(self.data)

    def __repr__(self) -> str:
        extra = f", grad_fn={self.grad_fn.name()}" if self.grad_fn is not None else ""
        extra += ", requires_grad=True" if self.requires_grad and self.grad_fn is None else ""
        return f"Variable({self.data!r}{extra})"

    # ---------------------------------------------------------------- autograd

    def gradient_edge(self) -> Edge:
        """The edge through which a gradient for this Variable enters the graph.

        ``(grad_fn, output_nr)`` for a Variable produced by an op; for a leaf
        that requires grad, ``(its AccumulateGrad node, 0)``, created once and
        reused so that every use of the leaf points at the same node.
        """
        if self.grad_fn is not None:
            return (self.grad_fn, self.output_nr)
        if not self.requires_grad:
            raise RuntimeError("this Variable does not require grad and has no grad_fn")
        if self._grad_accumulator is None:
            self._grad_accumulator = AccumulateGrad(self)
        return (self._grad_accumulator, 0)

    def backward(self, gradient: Any = None, retain_graph: bool | None = None, create_graph: bool = False) -> None:
        """``backward([self], [gradient], retain_graph, create_graph)``."""
        backward([self], None if gradient is None else [gradient], retain_graph, create_graph)

    # ---------------------------------------------------------------- operators

    def __add__(self, other: Any) -> Variable:
        return add(self, other)

    def __radd__(self, other: Any) -> Variable:
        return add(other, self)

    def __sub__(self, other: Any) -> Variable:
        return sub(self, other)

    def __rsub__(self, other: Any) -> Variable:
        return sub(other, self)

    def __mul__(self, other: Any) -> Variable:
        return mul(self, other)

    def __rmul__(self, other: Any) -> Variable:
        return mul(other, self)

    def __truediv__(self, other: Any) -> Variable:
        return div(self, other)

    def __rtruediv__(self, other: Any) -> Variable:
        return div(other, self)

    def __neg__(self) -> Variable:
        return neg(self)

    def __pow__(self, exponent: float) -> Variable:
        return power(self, exponent)

    def __matmul__(self, other: Any) -> Variable:
        return matmul(self, other)

    def __rmatmul__(self, other: Any) -> Variable:
        return matmul(other, self)

    def exp(self) -> Variable:
        return exp(self)

    def log(self) -> Variable:
        return log(self)

    def sin(self) -> Variable:
        return sin(self)

    def cos(self) -> Variable:
        return cos(self)

    def tanh(self) -> Variable:
        return tanh(self)

    def sum(self) -> Variable:
        return sum_all(self)

    @property
    def T(self) -> Variable:
        return transpose(self)

    def split(self, sizes: Sequence[int]) -> list[Variable]:
        return split(self, sizes)

    def chunk(self, chunks: int) -> list[Variable]:
        """Split along the first axis into ``chunks`` equal parts."""
        if chunks <= 0 or self.ndim == 0 or self.shape[0] % chunks:
            raise ValueError(f"cannot chunk a first axis of {self.shape[:1]} into {chunks} equal parts")
        return split(self, [self.shape[0] // chunks] * chunks)


def as_variable(value: Any) -> Variable:
    """A Variable as it is; anything else becomes a constant (no grad)."""
    return value if isinstance(value, Variable) else Variable(value)


# ============================================================================
# Backward nodes
# ============================================================================

#: ``(node, input_nr)``: a gradient travelling along it is the gradient for
#: input ``input_nr`` of ``node`` (which is output ``input_nr`` of the forward
#: op that node came from). ``(None, 0)`` marks an input that does not
#: require grad: nothing is sent along it.
Edge: TypeAlias = "tuple[Node | None, int]"

_FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved "
    "tensors after they have already been freed). Saved intermediate values of the "
    "graph are freed when you call backward(). Specify retain_graph=True if you need "
    "to backward through the graph a second time or if you need to access saved "
    "tensors after calling backward."
)


class Node:
    """A backward function: maps gradients of an op's outputs to gradients of its inputs.

    Attributes:
        next_functions: one edge per input of the forward op, in order.
        num_inputs: how many gradients the node takes, one per output of the
            forward op (1 except for :func:`split`).
        sequence_nr: creation order; a node is always created after the
            nodes its ``next_functions`` point at.
    """

    _counter = itertools.count()

    def __init__(self, next_functions: Sequence[Edge] = (), num_inputs: int = 1) -> None:
        self.next_functions: tuple[Edge, ...] = tuple(next_functions)
        self.num_inputs: int = num_inputs
        self.sequence_nr: int = next(Node._counter)
        # None once released; see release_variables().
        self._saved: tuple[Variable, ...] | None = ()

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{self.name()} #{self.sequence_nr}>"

    # ---------------------------------------------------------------- saved tensors

    def save_for_backward(self, *tensors: Variable) -> None:
        self._saved = tensors

    @property
    def saved_tensors(self) -> tuple[Variable, ...]:
        """The Variables saved at forward time; RuntimeError once released."""
        if self._saved is None:
            raise RuntimeError(_FREED_MESSAGE)
        return self._saved

    def release_variables(self) -> None:
        """Drop the saved Variables (PyTorch frees them after a backward without retain_graph).

        A node that saved nothing can still run afterwards, as in PyTorch.
        """
        self._saved = None

    # ---------------------------------------------------------------- calling

    def needs_input_grad(self, i: int) -> bool:
        """Whether input ``i`` of the forward op wants a gradient."""
        return self.next_functions[i][0] is not None

    def __call__(self, grad_inputs: Sequence[Variable | None]) -> list[Variable | None]:
        """Run the backward function.

        Args:
            grad_inputs: exactly ``num_inputs`` gradients, one per output of
                the forward op; None where no gradient arrived for an output.

        Returns:
            One gradient (or None) per entry of ``next_functions``. The same
            Variable may be returned for several inputs: never modify a
            gradient in place.
        """
        grad_inputs = list(grad_inputs)
        if len(grad_inputs) != self.num_inputs:
            raise RuntimeError(f"{self.name()} takes {self.num_inputs} gradient(s), got {len(grad_inputs)}")
        if all(g is None for g in grad_inputs):
            return [None] * len(self.next_functions)
        grads = list(self.apply(grad_inputs))
        if len(grads) != len(self.next_functions):
            raise RuntimeError(f"{self.name()} returned {len(grads)} gradients for {len(self.next_functions)} inputs")
        return grads

    def apply(self, grad_inputs: list[Variable | None]) -> list[Variable | None]:
        raise NotImplementedError


class AccumulateGrad(Node):
    """The node of a leaf that requires grad: adds the incoming gradient into ``.grad``.

    Like PyTorch: the first gradient is stored; later ones are added to it,
    so ``.grad`` accumulates across backward calls until the user resets it
    to None. When grad mode is on (``create_graph=True``) the gradient is
    stored with its graph and the sum is recorded, so ``.grad`` can itself
    be differentiated.
    """

    def __init__(self, variable: Variable) -> None:
        super().__init__((), num_inputs=1)
        self.variable = variable

    def apply(self, grad_inputs: list[Variable | None]) -> list[Variable | None]:
        (new_grad,) = grad_inputs
        var = self.variable
        if new_grad.shape != var.shape:
            raise RuntimeError(f"AccumulateGrad: gradient of shape {new_grad.shape} for a Variable of shape {var.shape}")
        if var.grad is None:
            # Keep the graph only when it is wanted; otherwise store an owned
            # copy, so later in-place accumulation cannot touch anyone else's buffer.
            var.grad = new_grad if is_grad_enabled() and new_grad.requires_grad else new_grad.detach()
        elif is_grad_enabled():
            var.grad = var.grad + new_grad  # recorded, out of place
        elif var.grad.requires_grad:
            # A gradient kept from a create_graph backward is part of a graph:
            # build a new buffer rather than mutating it.
            var.grad = Variable(var.grad.data + new_grad.data)
        else:
            var.grad.data += new_grad.data  # in place, as PyTorch does
        return []


class AddBackward(Node):
    def __init__(self, next_functions: Sequence[Edge], a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> None:
        super().__init__(next_functions)
        self.a_shape, self.b_shape = a_shape, b_shape

    def apply(self, grad_inputs: list[Variable | None]) -> list[Variable | None]:
        (g,) = grad_inputs
        return [
            sum_to(g, self.a_shape) if self.needs_input_grad(0) else None,
            sum_to(g, self.b_shape) if self.needs_input_grad(1) else None,
        ]


class SubBackward(Node):
    def __init__(self, next_functions: Sequence[Edge], a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> None:
        super().__init__(next_functions)
        self.a_shape, self.b_shape = a_shape, b_shape

    def apply(self, grad_inputs: list[Variable | None]) -> list[Variable | None]:
        (g,) = grad_inputs
        return [
            sum_to(g, self.a_shape) if self.needs_input_grad(0) else None,
            sum_to(neg(g), self.b_shape) if self.needs_input_grad(1) else None,
        ]


class MulBackward(Node):
    def apply(self, grad_inputs: list[Variable | None]) -> list[Variable | None]:
        (g,) = grad_inputs
        a, b = self.saved_tensors
        return [
            sum_to(g * b, a.shape) if self.needs_input_grad(0) else None,
            sum_to(g * a, b.shape) if self.needs_input_grad(1) else None,
        ]


class DivBackward(Node):
    def apply(self, grad_inputs: list[Variable | None]) -> list[Variable | None]:
        (g,) = grad_inputs
        a, b = self.saved_tensors
        return [
            sum_to(g / b, a.shape) if self.needs_input_grad(0) else None,
            sum_to(neg(g * a) / (b * b), b.shape) if self.needs_input_grad(1) else None,
        ]


class NegBackward(Node):
    def apply(self, grad_inputs: list[Variable | None]) -> list[Variable | None]:
        (g,) = grad_inputs
        return [neg(g)]


class PowBackward(Node):
    def __init__(self, next_functions: Sequence[Edge], exponent: float) -> None:
        super().__init__(next_functions)
        self.exponent = exponent

    def apply(self, grad_inputs: list[Variable | None]) -> list[Variable | None]:
        (g,) = grad_inputs
        (a,) = self.saved_tensors
        if self.exponent == 0:
            return [g * 0.0]
        return [g * (self.exponent * power(a, self.exponent - 1))]


class ExpBackward(Node):
    def apply(self, grad_inputs: list[Variable | None]) -> list[Variable | None]:
        (g,) = grad_inputs
        (result,) = self.saved_tensors  # exp saves its output, as in PyTorch
        return [g * result]


class LogBackward(Node):
    def apply(self, grad_inputs: list[Variable | None]) -> list[Variable | None]:
        (g,) = grad_inputs
        (a,) = self.saved_tensors
        return [g / a]


class SinBackward(Node):
    def apply(self, grad_inputs: list[Variable | None]) -> list[Variable | None]:
        (g,) = grad_inputs
        (a,) = self.saved_tensors
        return [g * cos(a)]


class CosBackward(Node):
    def apply(self, grad_inputs: list[Variable | None]) -> list[Variable | None]:
        (g,) = grad_inputs
        (a,) = self.saved_tensors
        return [neg(g * sin(a))]


class TanhBackward(Node):
    def apply(self, grad_inputs: list[Variable | None]) -> list[Variable | None]:
        (g,) = grad_inputs
        (result,) = self.saved_tensors
        return [g * (1.0 - result * result)]


class SumBackward(Node):
    def __init__(self, next_functions: Sequence[Edge], shape: tuple[int, ...]) -> None:
        super().__init__(next_functions)
        self.shape = shape

    def apply(self, grad_inputs: list[Variable | None]) -> list[Variable | None]:
        (g,) = grad_inputs
        return [broadcast_to(g, self.shape)]


class BroadcastToBackward(Node):
    def __init__(self, next_functions: Sequence[Edge], shape: tuple[int, ...]) -> None:
        super().__init__(next_functions)
        self.shape = shape

    def apply(self, grad_inputs: list[Variable | None]) -> list[Variable | None]:
        (g,) = grad_inputs
        return [sum_to(g, self.shape)]


class SumToBackward(Node):
    def __init__(self, next_functions: Sequence[Edge], shape: tuple[int, ...]) -> None:
        super().__init__(next_functions)
        self.shape = shape

    def apply(self, grad_inputs: list[Variable | None]) -> list[Variable | None]:
        (g,) = grad_inputs
        return [broadcast_to(g, self.shape)]


class MatmulBackward(Node):
    def apply(self, grad_inputs: list[Variable | None]) -> list[Variable | None]:
        (g,) = grad_inputs
        a, b = self.saved_tensors
        return [
            matmul(g, transpose(b)) if self.needs_input_grad(0) else None,
            matmul(transpose(a), g) if self.needs_input_grad(1) else None,
        ]


class TransposeBackward(Node):
    def apply(self, grad_inputs: list[Variable | None]) -> list[Variable | None]:
        (g,) = grad_inputs
        return [transpose(g)]


class SplitBackward(Node):
    """The one multi-output node: input ``i`` is the gradient of piece ``i``."""

    def __init__(self, next_functions: Sequence[Edge], sizes: tuple[int, ...], shape: tuple[int, ...]) -> None:
        super().__init__(next_functions, num_inputs=len(sizes))
        self.sizes, self.shape = sizes, shape

    def apply(self, grad_inputs: list[Variable | None]) -> list[Variable | None]:
        # A piece nobody used received no gradient: its gradient is zero.
        pieces = [g if g is not None else Variable(np.zeros((size, *self.shape[1:]))) for g, size in zip(grad_inputs, self.sizes, strict=True)]
        return [cat(pieces)]


class CatBackward(Node):
    def __init__(self, next_functions: Sequence[Edge], sizes: tuple[int, ...]) -> None:
        super().__init__(next_functions)
        self.sizes = sizes

    def apply(self, grad_inputs: list[Variable | None]) -> list[Variable | None]:
        (g,) = grad_inputs
        pieces = split(g, self.sizes)
        return [piece if self.needs_input_grad(i) else None for i, piece in enumerate(pieces)]


# ============================================================================
# Differentiable ops
# ============================================================================


def _needs_graph(*inputs: Variable) -> bool:
    return is_grad_enabled() and any(v.requires_grad for v in inputs)


def _edges(*inputs: Variable) -> list[Edge]:
    return [v.gradient_edge() if v.requires_grad else (None, 0) for v in inputs]


def _attach(out: Variable, node: Node, output_nr: int = 0) -> Variable:
    out.requires_grad = True
    out.grad_fn = node
    out.output_nr = output_nr
    return out


def _sum_to_array(array: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum a broadcast result back down to ``shape`` (the inverse of broadcasting)."""
    lead = array.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, size in enumerate(shape) if size == 1 and array.shape[lead + i] != 1)
    return array.sum(axis=axes, keepdims=True).reshape(shape)


def add(a: Any, b: Any) -> Variable:
    a, b = as_variable(a), as_variable(b)
    out = Variable(a.data + b.data)
    if _needs_graph(a, b):
        _attach(out, AddBackward(_edges(a, b), a.shape, b.shape))
    return out


def sub(a: Any, b: Any) -> Variable:
    a, b = as_variable(a), as_variable(b)
    out = Variable(a.data - b.data)
    if _needs_graph(a, b):
        _attach(out, SubBackward(_edges(a, b), a.shape, b.shape))
    return out


def mul(a: Any, b: Any) -> Variable:
    a, b = as_variable(a), as_variable(b)
    out = Variable(a.data * b.data)
    if _needs_graph(a, b):
        node = MulBackward(_edges(a, b))
        node.save_for_backward(a, b)
        _attach(out, node)
    return out


def div(a: Any, b: Any) -> Variable:
    a, b = as_variable(a), as_variable(b)
    out = Variable(a.data / b.data)
    if _needs_graph(a, b):
        node = DivBackward(_edges(a, b))
        node.save_for_backward(a, b)
        _attach(out, node)
    return out


def neg(a: Any) -> Variable:
    a = as_variable(a)
    out = Variable(-a.data)
    if _needs_graph(a):
        _attach(out, NegBackward(_edges(a)))
    return out


def power(a: Any, exponent: float) -> Variable:
    """``a ** exponent`` for a constant (Python number) exponent."""
    if isinstance(exponent, Variable) or not np.isscalar(exponent):
        raise TypeError("power: the exponent must be a Python number")
    a = as_variable(a)
    exponent = float(exponent)
    out = Variable(a.data**exponent)
    if _needs_graph(a):
        node = PowBackward(_edges(a), exponent)
        node.save_for_backward(a)
        _attach(out, node)
    return out


def exp(a: Any) -> Variable:
    a = as_variable(a)
    out = Variable(np.exp(a.data))
    if _needs_graph(a):
        node = ExpBackward(_edges(a))
        node.save_for_backward(out)
        _attach(out, node)
    return out


def log(a: Any) -> Variable:
    a = as_variable(a)
    out = Variable(np.log(a.data))
    if _needs_graph(a):
        node = LogBackward(_edges(a))
        node.save_for_backward(a)
        _attach(out, node)
    return out


def sin(a: Any) -> Variable:
    a = as_variable(a)
    out = Variable(np.sin(a.data))
    if _needs_graph(a):
        node = SinBackward(_edges(a))
        node.save_for_backward(a)
        _attach(out, node)
    return out


def cos(a: Any) -> Variable:
    a = as_variable(a)
    out = Variable(np.cos(a.data))
    if _needs_graph(a):
        node = CosBackward(_edges(a))
        node.save_for_backward(a)
        _attach(out, node)
    return out


def tanh(a: Any) -> Variable:
    a = as_variable(a)
    out = Variable(np.tanh(a.data))
    if _needs_graph(a):
        node = TanhBackward(_edges(a))
        node.save_for_backward(out)
        _attach(out, node)
    return out


def sum_all(a: Any) -> Variable:
    """The sum of every element, as a 0-d Variable."""
    a = as_variable(a)
    out = Variable(a.data.sum())
    if _needs_graph(a):
        _attach(out, SumBackward(_edges(a), a.shape))
    return out


def broadcast_to(a: Any, shape: Sequence[int]) -> Variable:
    a, shape = as_variable(a), tuple(shape)
    if a.shape == shape:
        return a
    out = Variable(np.broadcast_to(a.data, shape))
    if _needs_graph(a):
        _attach(out, BroadcastToBackward(_edges(a), a.shape))
    return out


def sum_to(a: Any, shape: Sequence[int]) -> Variable:
    """Sum ``a`` down to ``shape`` (undo a broadcast); ``a`` itself if the shape matches."""
    a, shape = as_variable(a), tuple(shape)
    if a.shape == shape:
        return a
    out = Variable(_sum_to_array(a.data, shape))
    if _needs_graph(a):
        _attach(out, SumToBackward(_edges(a), a.shape))
    return out


def matmul(a: Any, b: Any) -> Variable:
    """Matrix product of two 2-D Variables."""
    a, b = as_variable(a), as_variable(b)
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError(f"matmul takes two 2-D Variables, got shapes {a.shape} and {b.shape}")
    out = Variable(a.data @ b.data)
    if _needs_graph(a, b):
        node = MatmulBackward(_edges(a, b))
        node.save_for_backward(a, b)
        _attach(out, node)
    return out


def transpose(a: Any) -> Variable:
    """Reverse the axes (a matrix transpose for 2-D)."""
    a = as_variable(a)
    out = Variable(a.data.T)
    if _needs_graph(a):
        _attach(out, TransposeBackward(_edges(a)))
    return out


def split(a: Any, sizes: Sequence[int]) -> list[Variable]:
    """Cut ``a`` along its first axis into pieces of the given sizes.

    The pieces share one :class:`SplitBackward` node: piece ``i`` has
    ``output_nr == i``, so a gradient for it arrives at input ``i`` of that node.
    """
    a, sizes = as_variable(a), tuple(int(s) for s in sizes)
    if a.ndim == 0 or sum(sizes) != a.shape[0] or min(sizes, default=0) <= 0:
        raise ValueError(f"cannot split a first axis of {a.shape[:1]} into {sizes}")
    bounds = np.cumsum((0, *sizes))
    outs = [Variable(a.data[lo:hi]) for lo, hi in itertools.pairwise(bounds)]
    if _needs_graph(a):
        node = SplitBackward(_edges(a), sizes, a.shape)
        for i, out in enumerate(outs):
            _attach(out, node, output_nr=i)
    return outs


def cat(pieces: Sequence[Any]) -> Variable:
    """Concatenate along the first axis."""
    pieces = [as_variable(p) for p in pieces]
    out = Variable(np.concatenate([p.data for p in pieces], axis=0))
    if _needs_graph(*pieces):
        _attach(out, CatBackward(_edges(*pieces), tuple(p.shape[0] for p in pieces)))
    return out



# ============================================================================
# The public entry point, and the engine it runs
# ============================================================================

# The engine backward() hands its work to: solution.py's, once it calls
# set_engine (PyTorch keeps its engine in ``Variable._execution_engine``).
_engine: Any = None


def set_engine(engine: Any) -> None:
    """Make ``engine`` the one :func:`backward` runs: solution.py calls ``set_engine(Engine())``.

    ``engine.execute(roots, grad_outputs, retain_graph, create_graph)`` gets
    what :func:`backward` prepared (see its last lines).
    """
    global _engine
    _engine = engine


def backward(
    tensors: Variable | Sequence[Variable],
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
) -> None:
    """Accumulate into the leaves' ``.grad`` the gradients of ``tensors`` (``torch.autograd.backward``).

    Args:
        tensors: the outputs to differentiate (a Variable or a sequence).
        grad_tensors: one gradient per output (a Variable, array or number,
            or None for a one-element output, meaning 1.0); a single value
            is accepted when there is a single output.
        retain_graph: keep the saved Variables for another backward; defaults
            to ``create_graph``.
        create_graph: record the backward pass so the gradients can be
            differentiated again.
    """
    outputs = [tensors] if isinstance(tensors, Variable) else list(tensors)
    if grad_tensors is None:
        given: list[Any] = [None] * len(outputs)
    elif isinstance(grad_tensors, list | tuple):
        given = list(grad_tensors)
    else:
        given = [grad_tensors]
    if len(given) != len(outputs):
        raise ValueError(f"got {len(given)} gradients for {len(outputs)} outputs")

    grads: list[Variable] = []
    for i, (out, grad) in enumerate(zip(outputs, given, strict=True)):
        if not out.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if grad is None:
            if out.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            grad = Variable(np.ones(out.shape))
        grad = as_variable(grad)
        if grad.shape != out.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {grad.shape} and output[{i}] has a shape of {out.shape}")
        grads.append(grad)

    if retain_graph is None:
        retain_graph = create_graph
    roots = [out.gradient_edge() for out in outputs]
    if _engine is None:
        raise RuntimeError("no autograd engine is set: solution.py must call set_engine(Engine()) after defining Engine")
    _engine.execute(roots, grads, bool(retain_graph), bool(create_graph))
