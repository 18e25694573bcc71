"""Mutants of a reference solution: small, plausible mistakes made by rewriting its syntax tree.

Place in the flow: ``grader/mutants.py`` grades every mutant this module
makes on a package's hidden probes; a mutant that still scores 100 is a
mistake the probes cannot see (or an equivalent program). The mutator is
ours, stdlib ``ast`` only, so that the mistakes it makes are the ones an ML
engineer makes: an operator or a comparison flipped, a sign lost, the wrong
reduction dim or keepdim, a narrower or wider dtype, a constant off by one,
an update or in-place call dropped, two arguments swapped, a range or slice
bound off by one.

Every mutant is one change at one node of the original tree. Its id
(``kind:line:col:n``) names the kind, the node's position in the original
source and, for several changes of one kind at one position, their order:
it stays the same as long as that line does, which is what lets
``solutions/mutants.toml`` keep its judgements from one run to the next.
A mutant that does not compile, or that prints (``ast.unparse``) the same as
the unmutated tree or as an earlier mutant, is left out. Comments and
docstrings are not in the tree's mutable nodes, and neither are type
annotations or f-strings (error messages), where a change is invisible.

C++ held in a string constant (a ``TORCH_LIBRARY`` block, or a ``load_inline``
kernel) is mutated by ``grader/mutate_cpp.py``; its mutants join these.
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Iterator

from grader.mutant import Mutant
from grader.mutate_cpp import cpp_mutants

# Operator swaps: each is the mistake most often made in its place.
_ARITH: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Div,
    ast.Pow: ast.Mult,
    ast.MatMult: ast.Mult,
}
_COMPARE: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}
_SYMBOL: dict[type[ast.AST], str] = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Pow: "**", ast.MatMult: "@",
    ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
    ast.Is: "is", ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in", ast.And: "and", ast.Or: "or",
}  # fmt: skip
# Dtype names, as attributes (torch.float32, np.float64, x.half), names or strings ("float32").
_DTYPES: dict[str, tuple[str, ...]] = {
    "float32": ("float64", "float16"),
    "float64": ("float32",),
    "float16": ("float32", "bfloat16"),
    "bfloat16": ("float16", "float32"),
    "half": ("float",),
    "double": ("float",),
    "int32": ("int64",),
    "int64": ("int32",),
}
_DIM_KEYWORDS = {"dim", "axis", "dims", "axes"}
_KEEPDIM_KEYWORDS = {"keepdim", "keepdims"}
# Methods and functions whose first positional argument is a dimension: x.sum(0), torch.softmax(x, 1) is not.
_REDUCTIONS = {
    "sum", "mean", "prod", "amax", "amin", "max", "min", "argmax", "argmin", "std", "var", "norm",
    "logsumexp", "cumsum", "cumprod", "softmax", "log_softmax", "all", "any", "squeeze", "unsqueeze", "size",
}  # fmt: skip
_DIM_CHOICES = (0, 1, -1)
# Calls whose positional arguments commute: swapping them makes an equivalent program, not a mistake.
_COMMUTATIVE = {"max", "min", "maximum", "minimum", "fmax", "fmin", "add", "mul", "multiply", "logaddexp", "hypot", "gcd", "lcm"}
# An in-place tensor method: add_, copy_, mul_, zero_ (a trailing underscore, not a dunder).
_INPLACE = re.compile(r"^[a-z][a-z0-9_]*[a-z0-9]_$")

KINDS = ("arith", "sign", "not", "compare", "boolop", "dim", "keepdim", "dtype", "const", "drop", "inplace", "swap", "range", "slice")


def make_mutants(source: str, filename: str = "solution.py") -> list[Mutant]:
    """Every distinct, compiling mutant of ``source``, in source order of the nodes they change.

    A SyntaxError in ``source`` itself propagates: the reference must compile.
    """
    tree = ast.parse(source, filename)
    baseline = ast.unparse(tree)
    lines = source.splitlines()
    parents = _parents(tree)
    frozen = _unmutable(tree)
    seen = {baseline}
    taken: dict[str, int] = {}
    mutants = []
    for index, node in enumerate(ast.walk(tree)):
        if id(node) in frozen:
            continue
        for kind, replacement in _mutations(node, parents.get(id(node))):
            line, col = getattr(node, "lineno", 0), getattr(node, "col_offset", -1) + 1
            key = f"{kind}:{line}:{col}"
            n = taken.get(key, 0)
            taken[key] = n + 1
            mutated = _apply(source, filename, index, replacement)
            if mutated is None or mutated in seen:
                continue
            seen.add(mutated)
            before, after = _diff_line(lines, source, node, replacement)
            mutants.append(
                Mutant(
                    id=f"{key}:{n}",
                    kind=kind,
                    line=line,
                    description=f"line {line}: {_describe(kind, node, replacement)}",
                    before=before,
                    after=after,
                    source=mutated + "\n",
                )
            )
    mutants.extend(cpp_mutants(source, filename, tree, seen | {source}))
    # ast.walk goes breadth first: report in the order a reader meets the changes.
    return sorted(mutants, key=lambda m: _position(m.id))


def _position(mutant_id: str) -> tuple[int, int, str, int]:
    kind, line, col, n = mutant_id.split(":")
    return int(line), int(col), kind, int(n)


# ---------------------------------------------------------------- which nodes, which changes


def _parents(tree: ast.AST) -> dict[int, ast.AST]:
    return {id(child): parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}


def _unmutable(tree: ast.AST) -> set[int]:
    """Nodes no mutant touches: annotations, f-strings, docstrings (ids of every node below them too)."""
    roots: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.arg | ast.AnnAssign) and node.annotation is not None:
            roots.append(node.annotation)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns is not None:
            roots.append(node.returns)
        elif isinstance(node, ast.JoinedStr):
            roots.append(node)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            roots.append(node)
    return {id(sub) for root in roots for sub in ast.walk(root)}


def _mutations(node: ast.AST, parent: ast.AST | None) -> Iterator[tuple[str, ast.AST]]:
    """(kind, the node that replaces ``node``) for every change this module makes at ``node``."""
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
        yield "arith", _with(node, op=_ARITH[type(node.op)]())
    if isinstance(node, ast.AugAssign) and type(node.op) in _ARITH:
        yield "arith", _with(node, op=_ARITH[type(node.op)]())
    if isinstance(node, ast.UnaryOp):
        if isinstance(node.op, ast.USub):
            yield "sign", copy.deepcopy(node.operand)
        elif isinstance(node.op, ast.Not):
            yield "not", copy.deepcopy(node.operand)
    if isinstance(node, ast.Return) and node.value is not None and _numeric_looking(node.value):
        yield "sign", _with(node, value=_negated(node.value))
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.BinOp) and type(node.value.op) in _ARITH:
        yield "sign", _with(node, value=_negated(node.value))
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            if type(op) in _COMPARE:
                ops = list(node.ops)
                ops[i] = _COMPARE[type(op)]()
                yield "compare", _with(node, ops=ops)
    if isinstance(node, ast.BoolOp):
        yield "boolop", _with(node, op=ast.Or() if isinstance(node.op, ast.And) else ast.And())
    if isinstance(node, ast.keyword):
        yield from _keyword_mutations(node)
    if isinstance(node, ast.Call):
        yield from _call_mutations(node, parent)
    yield from _dtype_mutations(node)
    if isinstance(node, ast.Constant) and not isinstance(node.value, bool) and isinstance(node.value, int | float):
        for value in _constants(node.value):
            yield "const", ast.Constant(value)
    if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call | ast.Await)) or isinstance(node, ast.AugAssign | ast.Raise):
        yield "drop", ast.Pass()
    if parent is not None:
        yield from _bound_mutations(node, parent)


def _keyword_mutations(node: ast.keyword) -> Iterator[tuple[str, ast.AST]]:
    if node.arg in _DIM_KEYWORDS and _dim_like(node.value):
        for value in _other_dims(_int_value(node.value)):
            yield "dim", _with(node, value=_int_node(value))
    if node.arg in _KEEPDIM_KEYWORDS and isinstance(node.value, ast.Constant) and isinstance(node.value.value, bool):
        yield "keepdim", _with(node, value=ast.Constant(not node.value.value))


def _call_mutations(node: ast.Call, parent: ast.AST | None) -> Iterator[tuple[str, ast.AST]]:
    func = node.func
    # x.sum(0): the positional dim of a reduction method; of torch.sum(x, 0), the second argument.
    if isinstance(func, ast.Attribute) and func.attr in _REDUCTIONS and node.args:
        position = 1 if _is_module(func.value) else 0
        if position < len(node.args) and _dim_like(node.args[position]):
            for value in _other_dims(_int_value(node.args[position])):
                args = list(node.args)
                args[position] = _int_node(value)
                yield "dim", _with(node, args=args)
    # An in-place update whose result is used (y = x.add_(1)): the update dropped, the receiver kept.
    # As a statement of its own it is dropped whole by "drop".
    if isinstance(func, ast.Attribute) and _INPLACE.match(func.attr) and not isinstance(parent, ast.Expr):
        yield "inplace", copy.deepcopy(func.value)
    positional = node.args
    commutative = (func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else "") in _COMMUTATIVE
    if not commutative and not any(isinstance(a, ast.Starred) for a in positional):
        for i in range(len(positional) - 1):
            if ast.unparse(positional[i]) != ast.unparse(positional[i + 1]):
                args = list(positional)
                args[i], args[i + 1] = args[i + 1], args[i]
                yield "swap", _with(node, args=args)


def _dtype_mutations(node: ast.AST) -> Iterator[tuple[str, ast.AST]]:
    if isinstance(node, ast.Attribute) and node.attr in _DTYPES:
        for other in _DTYPES[node.attr]:
            yield "dtype", _with(node, attr=other)
    elif isinstance(node, ast.Name) and node.id in _DTYPES:
        for other in _DTYPES[node.id]:
            yield "dtype", _with(node, id=other)
    elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in _DTYPES:
        for other in _DTYPES[node.value]:
            yield "dtype", ast.Constant(other)


def _bound_mutations(node: ast.AST, parent: ast.AST) -> Iterator[tuple[str, ast.AST]]:
    """Off by one: a bound of range() (start, stop) or of a slice, one more and one less."""
    if not isinstance(node, ast.expr):
        return
    kind = None
    if isinstance(parent, ast.Slice) and (node is parent.lower or node is parent.upper):
        kind = "slice"
    elif (
        isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Name)
        and parent.func.id == "range"
        and any(node is a for a in parent.args[:2])  # start and stop, not the step
    ):
        kind = "range"
    if kind is None:
        return
    for delta in (1, -1):
        yield kind, _shifted(node, delta)


# ---------------------------------------------------------------- node helpers


def _with(node: ast.AST, **fields: object) -> ast.AST:
    """A deep copy of ``node`` with ``fields`` replaced."""
    new = copy.deepcopy(node)
    for name, value in fields.items():
        setattr(new, name, value)
    return new


def _negated(value: ast.expr) -> ast.expr:
    return ast.UnaryOp(op=ast.USub(), operand=copy.deepcopy(value))


def _numeric_looking(value: ast.expr) -> bool:
    """A return value a minus sign could plausibly be lost from (not a container, string or flag)."""
    return isinstance(value, ast.BinOp | ast.Call | ast.Name | ast.Attribute | ast.Subscript)


def _int_value(node: ast.expr) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        inner = node.operand.value
        return -inner if type(inner) is int else None
    return None


def _dim_like(node: ast.expr) -> bool:
    """A dim written as a whole number, or passed on from a variable (``dim``, ``self.dim``)."""
    return _int_value(node) is not None or isinstance(node, ast.Name | ast.Attribute)


def _int_node(value: int) -> ast.expr:
    return ast.Constant(value) if value >= 0 else ast.UnaryOp(op=ast.USub(), operand=ast.Constant(-value))


def _other_dims(current: int | None) -> list[int]:
    """Other dims to reduce over; for a dim the caller passes on (``current`` None), the hard-coded last and first."""
    if current is None:
        return [-1, 0]
    choices = [d for d in _DIM_CHOICES if d != current]
    return choices if current in _DIM_CHOICES else [current + 1, -1]


def _is_module(node: ast.expr) -> bool:
    """``torch`` in torch.sum(x, 0), ``np`` in np.sum(x, 0): a module-level function, whose first argument is the data."""
    return isinstance(node, ast.Name) and node.id in {"torch", "np", "numpy", "tf", "jnp", "F", "math"}


def _constants(value: int | float) -> list[int | float]:
    if isinstance(value, int):
        return [1] if value == 0 else [0] if value == 1 else [value + 1]
    if value == 0.0:
        return [1.0]
    if value == 1.0:
        return [0.0]
    # A tolerance or an epsilon is wrong by a factor, not by one.
    return [float(f"{value * 10:.15g}")] if abs(value) < 1 else [value + 1]


def _shifted(node: ast.expr, delta: int) -> ast.expr:
    value = _int_value(node)
    if value is not None:
        return _int_node(value + delta)
    op: ast.operator = ast.Add() if delta > 0 else ast.Sub()
    return ast.BinOp(left=copy.deepcopy(node), op=op, right=ast.Constant(abs(delta)))


# ---------------------------------------------------------------- applying and describing


def _apply(source: str, filename: str, index: int, replacement: ast.AST) -> str | None:
    """The source with the ``index``-th node (in ``ast.walk`` order) replaced; None if it does not compile."""
    tree = ast.parse(source, filename)
    target = next(node for i, node in enumerate(ast.walk(tree)) if i == index)
    _replace(tree, target, copy.deepcopy(replacement))
    ast.fix_missing_locations(tree)
    try:
        text = ast.unparse(tree)
        compile(text, filename, "exec")
    except (SyntaxError, ValueError, TypeError, RecursionError):
        return None
    return text


def _replace(tree: ast.AST, target: ast.AST, replacement: ast.AST) -> None:
    """Put ``replacement`` where ``target`` is in ``tree`` (a field of its parent, or an item of a list field)."""
    for parent in ast.walk(tree):
        for name, value in ast.iter_fields(parent):
            if value is target:
                setattr(parent, name, replacement)
                return
            if isinstance(value, list):
                for i, item in enumerate(value):
                    if item is target:
                        value[i] = replacement
                        return


def _diff_line(lines: list[str], source: str, node: ast.AST, replacement: ast.AST) -> tuple[str, str]:
    """The node's first source line, and that line with the node's text replaced by the mutant's."""
    lineno = getattr(node, "lineno", 0)
    line = lines[lineno - 1] if 0 < lineno <= len(lines) else ""
    new_text = "pass" if isinstance(replacement, ast.Pass) else ast.unparse(replacement)
    end_line = getattr(node, "end_lineno", None)
    start, end = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
    if end_line == lineno and start is not None and end is not None:
        raw = line.encode()  # col offsets count UTF-8 bytes
        changed = raw[:start].decode() + new_text + raw[end:].decode()
        return line.strip(), changed.strip()
    return line.strip(), new_text.splitlines()[0] if new_text else ""


def _describe(kind: str, node: ast.AST, replacement: ast.AST) -> str:
    old_op = _operator(node)
    new_op = _operator(replacement)
    if kind in ("arith", "compare", "boolop") and old_op and new_op:
        return f"'{old_op}' -> '{new_op}' in {_short(ast.unparse(node))}"
    if isinstance(replacement, ast.Pass):
        return f"{_short(ast.unparse(node))} dropped"
    return f"{_short(ast.unparse(node))} -> {_short(ast.unparse(replacement))}"


def _operator(node: ast.AST) -> str:
    if isinstance(node, ast.BinOp | ast.AugAssign | ast.BoolOp):
        return _SYMBOL.get(type(node.op), "")
    if isinstance(node, ast.Compare):
        return " ".join(_SYMBOL.get(type(op), "?") for op in node.ops)
    return ""


def _short(text: str, limit: int = 70) -> str:
    text = " ".join(text.split())
    return f"'{text}'" if len(text) <= limit else f"'{text[: limit - 3]}...'"
