"""Markdown to safe HTML for statements and hints.

Statements and hints are authored Markdown, and packages may one day come
from coaches through the browser, so the HTML that Markdown produces is
always passed through nh3 (an allow-list sanitiser) before it reaches a page:
no script, no event handlers, no style, no javascript: links.
"""

from __future__ import annotations

import functools

import markdown
import nh3
from django.utils.safestring import SafeString, mark_safe

_EXTENSIONS = ["fenced_code", "tables", "sane_lists", "smarty"]

_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "details", "div", "dl", "dt", "em",
    "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "kbd", "li", "ol", "p", "pre", "s",
    "span", "strong", "sub", "summary", "sup", "table", "tbody", "td", "th", "thead", "tr", "ul",
}  # fmt: skip
_ATTRIBUTES = {
    "a": {"href", "title"},
    "abbr": {"title"},
    "img": {"src", "alt", "title"},
    "td": {"align"},
    "th": {"align"},
}
# fenced_code marks the language as class="language-x"; the page highlights
# those blocks. Only these classes survive.
_CODE_CLASSES = {"code": {f"language-{lang}" for lang in ("python", "py", "pycon", "text", "console", "bash", "sh", "toml", "json")}}


def markdown_to_html(text: str) -> SafeString:
    return mark_safe(_sanitised_html(text))  # noqa: S308 - nh3 has sanitised it


# A statement is the same text on every view of its challenge page, and
# rendering it is most of that page's CPU (about 20 ms of 27 for a long one):
# remembered per process, by the text itself, so an edit is a new entry.
@functools.lru_cache(maxsize=256)
def _sanitised_html(text: str) -> str:
    html = markdown.markdown(text, extensions=_EXTENSIONS, output_format="html")
    cleaned = nh3.clean(
        html,
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        allowed_classes=_CODE_CLASSES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )
    return str(cleaned)
