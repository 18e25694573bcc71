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

C++ held in a string constant (a ``TORCH_LIBRARY`` block, or a source that
starts with ``#include``: :func:`is_cpp_source`), such as the kernel a
reference builds with ``load_inline``, is mutated too, or a mutation analysis
would only see the Python around the kernel. A small tokenizer reads it
(comments, string and char literals, preprocessor lines, and so the schema in
``m.def("...")``, are never changed) and makes the same mistakes in C++
spelling: a comparison, ``+``/``-``, ``*``/``/`` or ``&&``/``||`` flipped, a
``!`` dropped, an integer literal off by one (not in template arguments), an
assignment or call statement in a function body dropped, ``.contiguous()`` or
a ``static_cast<...>`` dropped, a ``for`` loop's bound off by one. Their ids
are ``cpp-<kind>:line:col:n``, the position in the Python file, and the
mutant is the file's own text with that one change inside the (raw) string,
so it still reads as the reference. Whether a C++ mutant compiles is only
known when it is built: one that does not fails every probe.
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Iterator
from dataclasses import dataclass

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


@dataclass(frozen=True)
class Mutant:
    id: str
    kind: str
    line: int
    description: str
    before: str  # the original source line, stripped
    after: str  # the same line with the mutation made
    source: str  # the whole mutated file


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
    mutants.extend(_cpp_mutants(source, filename, tree, seen | {source}))
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


# ---------------------------------------------------------------- C++ held in a Python string

CPP_KINDS = ("cpp-arith", "cpp-compare", "cpp-boolop", "cpp-not", "cpp-const", "cpp-drop", "cpp-contiguous", "cpp-cast", "cpp-range")
_CPP_COMPARE = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
_CPP_ARITH = {"+": "-", "-": "+", "*": "/", "/": "*", "+=": "-=", "-=": "+=", "*=": "/=", "/=": "*="}
# Longest first, so that "<=" is one token and not "<" then "=".
_CPP_PUNCT = (
    "<<=", ">>=", "...", "->*", "::", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
    "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", ".*",
)  # fmt: skip
# Words that start a statement which is not an assignment or a call (a declaration, a return, a jump).
_CPP_NOT_DROPPED = {
    "return", "const", "constexpr", "static", "auto", "using", "typedef", "template", "typename", "struct", "class",
    "enum", "namespace", "break", "continue", "goto", "case", "default", "throw", "delete", "new", "volatile",
    "unsigned", "signed", "int", "long", "short", "char", "bool", "float", "double", "void", "inline", "extern",
}  # fmt: skip
_CPP_CONTROL = {"if", "for", "while", "switch"}
_CPP_INT = re.compile(r"(0|[1-9][0-9']*)([uUlL]*)")
# Tokens allowed between the angle brackets of a template argument list.
_CPP_TEMPLATE_INNER = {"::", ",", "*", "&"}


@dataclass(frozen=True)
class _Token:
    kind: str  # "id", "num", "str" (string or char literal) or "punct"
    text: str
    start: int  # offsets in the C++ text
    end: int
    space_before: bool
    space_after: bool


def is_cpp_source(text: str) -> bool:
    """A Python string constant that holds C++ source: a ``TORCH_LIBRARY`` block, or a file starting with ``#include``."""
    return "TORCH_LIBRARY" in text or text.lstrip().startswith("#include")


def _cpp_tokens(text: str) -> list[_Token]:
    """The C++ tokens of ``text``, without comments and preprocessor lines (``#include``), literals as one token each."""
    tokens: list[_Token] = []
    i, n = 0, len(text)
    line_start = True  # only whitespace since the last newline: a '#' here starts a directive
    while i < n:
        c = text[i]
        if c == "\n":
            line_start = True
            i += 1
            continue
        if c.isspace():
            i += 1
            continue
        start = i
        if c == "#" and line_start:
            while i < n and (text[i] != "\n" or text[i - 1] == "\\"):
                i += 1
            continue
        line_start = False
        if text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
            continue
        if text.startswith("/*", i):
            i = text.find("*/", i + 2)
            i = n if i < 0 else i + 2
            continue
        raw = re.match(r'(?:u8|[uUL])?R"([^()\\\s]{0,16})\(', text[i:])
        if raw:
            close = text.find(f'){raw.group(1)}"', i + raw.end())
            i = n if close < 0 else close + len(raw.group(1)) + 2
            kind = "str"
        elif c in "\"'" or (re.match(r"(?:u8|[uUL])[\"']", text[i : i + 3]) and not _word_before(text, i)):
            while text[i] not in "\"'":
                i += 1
            quote = text[i]
            i += 1
            while i < n and text[i] != quote:
                i += 2 if text[i] == "\\" else 1
            i += 1
            kind = "str"
        elif c.isalpha() or c == "_":
            while i < n and (text[i].isalnum() or text[i] == "_"):
                i += 1
            kind = "id"
        elif c.isdigit() or (c == "." and i + 1 < n and text[i + 1].isdigit()):
            i += 1
            while i < n and (text[i].isalnum() or text[i] in "._'" or (text[i] in "+-" and text[i - 1] in "eEpP")):
                i += 1
            kind = "num"
        else:
            punct = next((p for p in _CPP_PUNCT if text.startswith(p, i)), c)
            i += len(punct)
            kind = "punct"
        i = min(i, n)
        tokens.append(_Token(kind, text[start:i], start, i, start > 0 and text[start - 1].isspace(), i < n and text[i].isspace()))
    return tokens


def _word_before(text: str, i: int) -> bool:
    return i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")


def _template_brackets(tokens: list[_Token]) -> dict[int, int]:
    """Angle brackets of template argument lists: each '<' token's index -> its closing '>' (or '>>') index.

    A '<' after a name opens one when only names, numbers, '::', ',', '*', '&'
    and nested lists follow up to a matching '>': ``static_cast<acc_t>(``,
    ``std::tuple<at::Tensor, at::Tensor>``. ``k < start + window`` and
    ``r < rows;`` are comparisons.
    """
    pairs: dict[int, int] = {}
    for i, token in enumerate(tokens):
        if token.text != "<" or i == 0 or tokens[i - 1].kind != "id":
            continue
        depth = 1
        for j in range(i + 1, len(tokens)):
            text = tokens[j].text
            if text == "<":
                depth += 1
            elif text in (">", ">>"):
                depth -= 1 if text == ">" else 2
                if depth <= 0:
                    pairs[i] = j
                    break
            elif tokens[j].kind not in ("id", "num") and text not in _CPP_TEMPLATE_INNER:
                break
    return pairs


def _value_end(token: _Token) -> bool:
    """The token can end an operand: a name (not a keyword that precedes an expression), a number, ')' or ']'."""
    if token.kind == "id":
        return token.text not in {"return", "case", "throw", "else", "do", "new", "delete"}
    return token.kind in ("num", "str") or token.text in (")", "]")


def _value_start(token: _Token) -> bool:
    return token.kind in ("id", "num", "str") or token.text in ("(", "-", "+", "!", "~", "*", "&", "::")


def _matching(tokens: list[_Token], i: int, open_: str, close: str) -> int:
    """Index of the bracket closing the one at ``i`` (len(tokens) if it is not closed)."""
    depth = 0
    for j in range(i, len(tokens)):
        if tokens[j].text == open_:
            depth += 1
        elif tokens[j].text == close:
            depth -= 1
            if depth == 0:
                return j
    return len(tokens)


def _cpp_statements(tokens: list[_Token]) -> list[tuple[int, int]]:
    """(first, last) token indices of every ';'-terminated simple statement inside a function body.

    A function body is a block opened after ')' or ']' (a function, a
    ``TORCH_LIBRARY`` block, a lambda) and every block inside one. The
    statement after an ``if``/``for``/``while`` header is a statement of its
    own; the ';'s inside a ``for`` header end none.
    """
    statements: list[tuple[int, int]] = []
    # One frame per open brace: (is a function body or inside one, is a braced initializer list).
    frames: list[tuple[bool, bool]] = [(False, False)]
    start: list[int | None] = [0]  # the first token of the statement being read, per frame
    after_block = ("else", "do", "try", "mutable", "const", "noexcept", "override")
    i = 0
    while i < len(tokens):
        text = tokens[i].text
        in_function, initializer = frames[-1]
        current = start[-1]
        if current is None:
            current = start[-1] = i
        first = tokens[current].text
        if text == "{":
            before = tokens[i - 1].text if i else ""
            # '= {', 'f({', 'T x{' inside a function: a braced list, whose ','s and ';'s are no statements.
            is_initializer = before in ("=", ",", "(", "{", "return") or (tokens[i - 1].kind == "id" and in_function and before not in after_block)
            body = in_function or before in (")", "]", *after_block)
            frames.append((body and not is_initializer, is_initializer))
            start.append(None)
            i += 1
            continue
        if text == "}":
            if len(frames) > 1:
                frames.pop()
                start.pop()
            # A block that is a statement (a loop's or function's body) ends it; a lambda inside a call does not.
            outer = start[-1]
            if outer is not None and not _open_paren(tokens, outer, i) and _block_ends_statement(tokens, outer, i):
                start[-1] = None
            i += 1
            continue
        if i == current and first in _CPP_CONTROL:
            start[-1] = None
            i = _matching(tokens, i + 1, "(", ")") + 1
            continue
        if i == current and first in ("else", "do"):
            start[-1] = None
            i += 1
            continue
        if text == ";" and not _open_paren(tokens, current, i):
            if in_function and not initializer and _droppable(tokens, current, i):
                statements.append((current, i))
            start[-1] = None
        i += 1
    return statements


def _open_paren(tokens: list[_Token], first: int, i: int) -> bool:
    """Is a '(' opened between ``first`` and ``i`` still open at ``i`` (a lambda's body inside a call)?"""
    depth = 0
    for token in tokens[first:i]:
        depth += (token.text == "(") - (token.text == ")")
    return depth > 0


def _block_ends_statement(tokens: list[_Token], first: int, close: int) -> bool:
    """A '}' ends the statement it is in unless that statement goes on after it (``T x = {...};``, ``struct S {...} s;``).

    A block that is a statement of its own (``{ ... }``) or a loop's,
    function's or namespace's body ends it; an initializer after '=' does not.
    """
    if tokens[first].text in _CPP_CONTROL | {"{", "else", "do", "namespace", "try"}:
        return True
    return not any(t.text == "=" for t in tokens[first:close]) and tokens[first].text not in ("struct", "class", "enum", "union")


def _droppable(tokens: list[_Token], first: int, last: int) -> bool:
    """An assignment or a call statement: not a declaration, a return or an empty statement."""
    if first >= last or tokens[first].kind != "id" or tokens[first].text in _CPP_NOT_DROPPED:
        return tokens[first].text in ("++", "--") if first < last else False
    # Skip one (qualified, templated) name and any '*'/'&': a second name right after it makes a declaration.
    i = first
    brackets = _template_brackets(tokens[first:last])
    while i < last:
        if tokens[i].kind == "id":
            i += 1
        else:
            break
        if i - first in brackets:
            i = first + brackets[i - first] + 1
        if i < last and tokens[i].text == "::":
            i += 1
            continue
        break
    while i < last and tokens[i].text in ("*", "&", "&&"):
        i += 1
    return not (i < last and tokens[i].kind == "id")


def _cpp_changes(text: str) -> Iterator[tuple[str, int, int, int, str]]:
    """(kind, position, start, end, replacement): replace text[start:end] with replacement; position names the change."""
    tokens = _cpp_tokens(text)
    brackets = _template_brackets(tokens)
    in_template = {j for i, close in brackets.items() for j in range(i, close + 1)}
    for i, token in enumerate(tokens):
        prev = tokens[i - 1] if i else None
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        if token.kind == "punct" and token.text in _CPP_COMPARE and i not in in_template:
            yield "cpp-compare", token.start, token.start, token.end, _CPP_COMPARE[token.text]
        if token.kind == "punct" and token.text in _CPP_ARITH and prev is not None and nxt is not None:
            binary = _value_end(prev) and _value_start(nxt) and i not in in_template
            if token.text == "*":  # a pointer declarator (T* p, T *p) is spaced on one side only
                binary = binary and token.space_before == token.space_after
            if binary or token.text.endswith("="):
                yield "cpp-arith", token.start, token.start, token.end, _CPP_ARITH[token.text]
        if token.text in ("&&", "||") and not (
            prev is not None and prev.kind == "id" and nxt is not None and nxt.kind == "id" and token.space_before != token.space_after
        ):
            yield "cpp-boolop", token.start, token.start, token.end, "||" if token.text == "&&" else "&&"
        if token.text == "!":
            yield "cpp-not", token.start, token.start, token.end, ""
        if token.kind == "num" and i not in in_template:
            match = _CPP_INT.fullmatch(token.text)
            if match:
                value = int(match.group(1).replace("'", ""))
                new = 1 if value == 0 else 0 if value == 1 else value + 1
                yield "cpp-const", token.start, token.start, token.end, f"{new}{match.group(2)}"
        if token.text == "." and [t.text for t in tokens[i + 1 : i + 4]] == ["contiguous", "(", ")"]:
            yield "cpp-contiguous", token.start, token.start, tokens[i + 3].end, ""
        if token.text == "static_cast" and i + 1 in brackets:
            yield "cpp-cast", token.start, token.start, tokens[brackets[i + 1]].end, ""
        if token.text == "for" and nxt is not None and nxt.text == "(":
            yield from _loop_bounds(text, tokens, i + 1, in_template)
    for first, last in _cpp_statements(tokens):
        yield "cpp-drop", tokens[first].start, tokens[first].start, tokens[last].end, ";"


def _loop_bounds(text: str, tokens: list[_Token], open_: int, in_template: set[int]) -> Iterator[tuple[str, int, int, int, str]]:
    """The bound a ``for`` loop's condition compares with, one more and one less: ``k < n`` -> ``k < n + 1``, ``k < n - 1``."""
    close = _matching(tokens, open_, "(", ")")
    semis = [j for j in range(open_ + 1, close) if tokens[j].text == ";" and not _open_paren(tokens, open_ + 1, j)]
    if len(semis) != 2:
        return  # a range-based for
    condition = range(semis[0] + 1, semis[1])
    ops = [j for j in condition if tokens[j].text in ("<", "<=", ">", ">=", "!=") and j not in in_template]
    if len(ops) != 1 or ops[0] + 1 >= semis[1]:
        return
    first, last = tokens[ops[0] + 1], tokens[semis[1] - 1]
    bound = text[first.start : last.end]
    match = _CPP_INT.fullmatch(bound)
    for delta in (1, -1):
        if match:
            new = f"{int(match.group(1).replace(chr(39), '')) + delta}{match.group(2)}"
        else:
            new = f"{bound} {'+' if delta > 0 else '-'} 1"
        yield "cpp-range", first.start, first.start, last.end, new


def _cpp_string_spans(source: str, tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(offset in ``source`` of the string's first character, the string) for each C++ string constant.

    Only a string written as one literal whose text is its value (a raw
    string, or one without escapes) is used: then an offset in the C++ text
    is an offset in the file, and a change to it is the same change there.
    """
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str) and is_cpp_source(node.value)):
            continue
        segment = ast.get_source_segment(source, node)
        if segment is None:
            continue
        match = re.match(r"([rRbBuU]*)('''|\"\"\"|'|\")", segment)
        if match is None:
            continue
        prefix, quote = match.groups()
        body = segment[match.end() : len(segment) - len(quote)]
        if not segment.endswith(quote) or body != node.value or ("\\" in body and "r" not in prefix.lower()):
            continue
        line_bytes = source.splitlines(keepends=True)[node.lineno - 1].encode()[: node.col_offset]
        yield starts[node.lineno - 1] + len(line_bytes.decode()) + match.end(), body


def _cpp_mutants(source: str, filename: str, tree: ast.AST, seen: set[str]) -> list[Mutant]:
    mutants = []
    taken: dict[str, int] = {}
    for offset, text in _cpp_string_spans(source, tree):
        lines = text.split("\n")
        for kind, position, start, end, replacement in _cpp_changes(text):
            where = offset + position
            line = source.count("\n", 0, where) + 1
            col = where - (source.rfind("\n", 0, where) + 1) + 1
            key = f"{kind}:{line}:{col}"
            n = taken.get(key, 0)
            taken[key] = n + 1
            mutated = source[: offset + start] + replacement + source[offset + end :]
            if mutated in seen:
                continue
            try:
                compile(mutated, filename, "exec")
            except (SyntaxError, ValueError):
                continue
            seen.add(mutated)
            cpp_line = text.count("\n", 0, position)
            before = lines[cpp_line].strip()
            after = (text[:start] + replacement + text[end:]).split("\n")[cpp_line].strip()
            column = position - (text.rfind("\n", 0, position) + 1) - (len(lines[cpp_line]) - len(lines[cpp_line].lstrip()))
            mutants.append(
                Mutant(
                    id=f"{key}:{n}",
                    kind=kind,
                    line=line,
                    description=f"line {line}: C++ {_around(before, column)} -> {_around(after, column)}",
                    before=before,
                    after=after,
                    source=mutated if mutated.endswith("\n") else mutated + "\n",
                )
            )
    return mutants


def _around(line: str, column: int, limit: int = 70) -> str:
    """``line`` quoted, cut to at most ``limit`` characters around ``column`` (where the change is)."""
    if len(line) <= limit:
        return f"'{line}'"
    start = max(0, column - 30)
    head = "..." if start > 0 else ""
    text = line[start : start + limit - 3 - len(head)]
    tail = "..." if start + len(text) < len(line) else ""
    return f"'{head}{text}{tail}'"
