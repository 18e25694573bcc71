"""Mutants of C++ held in a Python string: the same mistakes as grader/mutate.py, in C++ spelling.

Place in the flow: ``grader/mutate.py`` calls :func:`cpp_mutants` for every
reference it mutates. C++ held in a string constant (a ``TORCH_LIBRARY``
block, or a source that starts with ``#include``: :func:`is_cpp_source`),
such as the kernel a reference builds with ``load_inline``, is mutated too,
or a mutation analysis would only see the Python around the kernel. A small tokenizer reads it
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
import re
from collections.abc import Iterator
from dataclasses import dataclass

from grader.mutant import Mutant

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


def cpp_mutants(source: str, filename: str, tree: ast.AST, seen: set[str]) -> list[Mutant]:
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
