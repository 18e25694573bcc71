"""web.challenges.rendering: Markdown to sanitised HTML, remembered per text."""

from __future__ import annotations

from django.utils.safestring import SafeString

from web.challenges.rendering import markdown_to_html

HOSTILE = """# Title

<script>alert(1)</script>
<a href="javascript:alert(2)" onclick="alert(3)">link</a>
<img src="x" onerror="alert(4)">

```python
x = 1
```
"""


def test_hostile_markup_is_removed_every_time() -> None:
    for _ in range(2):  # the second answer comes from the cache: still the sanitised one
        html = markdown_to_html(HOSTILE)
        assert isinstance(html, SafeString)
        assert "<script" not in html and "javascript:" not in html and "onclick" not in html and "onerror" not in html
        assert "<h1>Title</h1>" in html and 'class="language-python"' in html


def test_an_edited_text_renders_as_edited() -> None:
    assert "<em>before</em>" in markdown_to_html("*before*")
    after = markdown_to_html("*after*")
    assert "<em>after</em>" in after and "before" not in after
