"""Write challenge.toml from the authoring form's fields (no TOML writer is installed).

Only what a challenge.toml holds is supported: strings, lists of strings,
numbers, one ``[limits]`` table and the ``[[hints]]`` array of tables.
Strings are TOML basic strings with every character that needs it escaped,
so any title or hint text a coach types parses back to exactly that text
(tests/web/test_authoring_package.py round-trips them through grader.package_load).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

TomlValue = str | int | float | Sequence[str]

_ESCAPES = {"\\": "\\\\", '"': '\\"', "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def toml_string(text: str, *, multiline: bool = False) -> str:
    """``text`` as a TOML basic string; multi-line keeps newlines readable (for hint texts)."""
    out = []
    for ch in text:
        if multiline and ch == "\n":
            out.append(ch)
        elif ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    body = "".join(out)
    # A newline right after the opening quotes is trimmed by TOML, so the text
    # may itself start with a newline without losing it.
    return f'"""\n{body}"""' if multiline else f'"{body}"'


def toml_value(value: TomlValue) -> str:
    if isinstance(value, bool):
        raise TypeError("booleans are not used in challenge.toml")
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"TOML number must be finite (got {value!r})")
        return str(int(value)) if value.is_integer() and abs(value) < 2**53 else repr(value)
    return "[" + ", ".join(toml_string(item) for item in value) + "]"


def toml_table_lines(table: dict[str, TomlValue]) -> list[str]:
    return [f"{key} = {toml_value(value)}" for key, value in table.items()]
