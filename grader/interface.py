"""The starter's interface, read off its source: a submission must keep the parameters the statement gives.

Place in the flow: ``execute.execute_runs`` asks :func:`interface_violations`
about every code before it goes to a sandbox, beside the statement's
``[rules]`` (grader/source_rules.py); a code that breaks the interface is not
run, and ``grade.evaluate`` turns its violations into the verdict
``rule_violation``, naming the function and both parameter lists. The
source is the submitter's own, so the message may quote it.

Why: the starter is the statement's API. A probe, a test harness or a
colleague's code calls ``verify(model=m, path=p, inputs=x)`` as the starter
spells it; a solution whose parameter is called ``onnx_path``, or whose
``eps`` lost its default, passes every probe that happens to call it
positionally with every argument, and breaks the first caller that does not.
Blind red teams found the class in six packages, one at a time (issue 27);
read off the source, it is refused everywhere at once, before anything runs
and on Run as well as Submit, with a message that says what to change.

What is compared: each function defined at the top of the starter, and each
method of each class defined there, against the definition of the same name
that the submission's module body leaves last (what Python would bind). A
name the submission binds otherwise (an assignment, an import, a class where
the starter has a function) is not judged here: the probes judge what it
does. A definition is compatible when every call the starter's signature
accepts binds to it the same way:

- a parameter that may be passed by position keeps its position and its name
  (the name only if the starter's may be passed by keyword too);
- a parameter that may be passed by keyword is accepted by that name (or by
  ``**kwargs``);
- a parameter with a default keeps one;
- a parameter the submission adds has a default (or is ``*args``/``**kwargs``).

The first parameter of a method (``self``, ``cls``) is matched by position
only; a ``staticmethod`` has none. So are the parameters of ``__call__`` and
``forward``, which ``module(x)`` passes by position. Variadic parameters of the starter are not
compared (no caller can rely on more than that they exist).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from dataclasses import dataclass

from grader.source_rules import Violation, parse_source


@dataclass(frozen=True)
class Parameter:
    name: str
    positional: bool  # may be passed by position
    keyword: bool  # may be passed by keyword
    has_default: bool


@dataclass(frozen=True)
class Signature:
    qualname: str  # "verify" or "Engine.execute"
    parameters: tuple[Parameter, ...]
    var_positional: bool
    var_keyword: bool
    bound_first: bool  # a method whose first parameter is self or cls: matched by position only
    text: str  # the parameter list as written, for the message
    line: int


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef, qualname: str, method: bool) -> Signature:
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    first_default = len(positional) - len(args.defaults)
    parameters = [
        Parameter(a.arg, positional=True, keyword=i >= len(args.posonlyargs), has_default=i >= first_default) for i, a in enumerate(positional)
    ]
    parameters += [
        Parameter(a.arg, positional=False, keyword=True, has_default=default is not None)
        for a, default in zip(args.kwonlyargs, args.kw_defaults, strict=True)
    ]
    static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)
    bound_first = method and not static and bool(positional)
    return Signature(
        qualname,
        tuple(parameters),
        var_positional=args.vararg is not None,
        var_keyword=args.kwarg is not None,
        bound_first=bound_first,
        text=_written(args),
        line=node.lineno,
    )


def _written(args: ast.arguments) -> str:
    """The parameter list as written, for a message; a default nested too deep to print is elided."""
    try:
        return ast.unparse(args)
    except (RecursionError, MemoryError):
        return ", ".join(a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]) + ", ..."


def _definitions(tree: ast.Module) -> dict[str, Signature | None]:
    """What the module body leaves bound to each name: a function's (or a method's) signature, or None for a name
    bound some other way. Later statements win, as when the module runs."""
    found: dict[str, Signature | None] = {}

    def bind_names(target: ast.AST, prefix: str = "") -> None:
        for name in ast.walk(target):
            if isinstance(name, ast.Name):
                found[prefix + name.id] = None

    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found[statement.name] = _signature(statement, statement.name, method=False)
        elif isinstance(statement, ast.ClassDef):
            for key in [k for k in found if k.startswith(statement.name + ".")]:
                del found[key]  # a class defined again replaces every method of the earlier one
            found[statement.name] = None
            for item in statement.body:
                qualname = f"{statement.name}.{item.name}" if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else ""
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    found[qualname] = _signature(item, qualname, method=True)
                elif isinstance(item, ast.ClassDef):
                    found[qualname] = None
                elif isinstance(item, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                    for target in item.targets if isinstance(item, ast.Assign) else [item.target]:
                        bind_names(target, statement.name + ".")
        elif isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for target in statement.targets if isinstance(statement, ast.Assign) else [statement.target]:
                bind_names(target)
        elif isinstance(statement, (ast.Import, ast.ImportFrom)):
            for alias in statement.names:
                found[(alias.asname or alias.name).split(".")[0]] = None
    return found


def _problems(starter: Signature, mine: Signature) -> Iterator[str]:
    theirs = [p for p in starter.parameters if p.positional]
    ours = [p for p in mine.parameters if p.positional]
    by_name = {p.name: p for p in mine.parameters}
    for index, wanted in enumerate(theirs):
        first = index == 0 and starter.bound_first
        if index >= len(ours):
            if not mine.var_positional:
                named = by_name.get(wanted.name)
                yield f"`{wanted.name}` cannot be passed by position" if named is not None else f"it takes no `{wanted.name}`"
            continue
        got = ours[index]
        if not first and wanted.keyword and got.name != wanted.name:
            yield f"`{got.name}` stands where the starter has `{wanted.name}`, which callers may pass by name"
        elif not first and wanted.keyword and not got.keyword:
            yield f"`{wanted.name}` cannot be passed by name"
        elif wanted.has_default and not got.has_default:
            yield f"`{got.name}` has no default, so a call that leaves it out fails"
    for wanted in starter.parameters:
        if wanted.positional:
            continue  # checked above, by position
        named = by_name.get(wanted.name)
        if named is None or not named.keyword:
            if not mine.var_keyword:
                yield f"it takes no keyword `{wanted.name}`"
        elif wanted.has_default and not named.has_default:
            yield f"`{wanted.name}` has no default, so a call that leaves it out fails"
    matched = {p.name for p in starter.parameters} | {p.name for p in ours[: len(theirs)]}
    for extra in mine.parameters:
        if extra.name not in matched and not extra.has_default:
            yield f"it adds `{extra.name}` without a default, which no caller passes"


@functools.lru_cache(maxsize=64)  # a package's starter, parsed once per worker instead of once per code
def starter_interface(starter: str | bytes) -> dict[str, Signature]:
    """The functions and methods of the starter that callers call by name, by qualified name (``Engine.execute``).

    Left out, because the framework calls them by position and never by a parameter's name (so a
    renamed parameter breaks nothing): private names and dunder methods other than ``__init__`` and
    ``__call__`` (``__torch_dispatch__``); the methods of a ``torch.autograd.Function`` subclass
    (``forward(ctx, ...)``, or the new style's ``forward(...)`` with ``setup_context``); functions the starter
    hands to a call (``register_autograd(op, backward, setup_context=setup_context)``) or registers with a
    ``register_*`` decorator (``@op.register_fake``).
    """
    tree = parse_source(starter)
    if tree is None:
        return {}
    callbacks = _callbacks(tree)
    framework_classes = {
        node.name for node in tree.body if isinstance(node, ast.ClassDef) and any(_terminal(base) == "Function" for base in node.bases)
    }
    interface = {}
    for qualname, sig in _definitions(tree).items():
        if sig is None:
            continue
        owner, _, name = qualname.rpartition(".")
        if name.startswith("_") and name not in ("__init__", "__call__"):
            continue
        if owner in framework_classes or (not owner and name in callbacks):
            continue
        if owner and name in CALLED_BY_POSITION:
            sig = _names_free(sig)
        interface[qualname] = sig
    return interface


#: Methods that callers reach through the object's call, ``module(x)``, which passes its arguments by position: their
#: parameters' names are the candidate's own (``forward(self, input)`` for the starter's ``forward(self, x)``), their
#: number and defaults are not.
CALLED_BY_POSITION = ("__call__", "forward")


def _names_free(sig: Signature) -> Signature:
    """``sig`` with its positional parameters taken as positional-only: compared by position, count and default."""
    kept = tuple(Parameter(p.name, p.positional, keyword=p.keyword and not p.positional, has_default=p.has_default) for p in sig.parameters)
    return Signature(sig.qualname, kept, sig.var_positional, sig.var_keyword, sig.bound_first, sig.text, sig.line)


def _terminal(node: ast.AST) -> str:
    """The last name of a dotted expression (``torch.autograd.Function`` -> ``Function``); "" for anything else."""
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _callbacks(tree: ast.Module) -> set[str]:
    """Names the starter passes as arguments of a call, and top-level functions with a ``register*`` decorator."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for argument in [*node.args, *(k.value for k in node.keywords)]:
                if isinstance(argument, ast.Name):
                    found.add(argument.id)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in node.decorator_list:
                target = decorator.func if isinstance(decorator, ast.Call) else decorator
                if _terminal(target).startswith("register"):
                    found.add(node.name)
    return found


def interface_violations(interface: dict[str, Signature], source: str | bytes) -> list[Violation]:
    """Each definition of ``source`` that breaks the starter's ``interface``; empty when none does (or the source
    does not parse: the compile step says why)."""
    if not interface:
        return []
    tree = parse_source(source)
    if tree is None:
        return []
    defined = _definitions(tree)
    violations = []
    for qualname, starter in interface.items():
        mine = defined.get(qualname)
        if mine is None:
            continue
        problems = list(_problems(starter, mine))
        if problems:
            rule = f"the starter's is `{qualname}({starter.text})`: " + "; ".join(problems)
            violations.append(Violation(mine.line, f"`{qualname}({mine.text})`", rule, interface=True))
    return sorted(violations, key=lambda v: v.line)
