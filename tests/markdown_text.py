"""Reading Markdown the way Streamlit's renderer (react-markdown + remark-gfm) does, for assertions on messages.

Inline code spans show their content verbatim (never markup, never a link); elsewhere a backslash escape shows
its character as text. GFM auto-links URL and e-mail literals found in the text *after* escapes are resolved
(mdast-util-gfm-autolink-literal), so only code spans stop them.
"""

from __future__ import annotations

import re

CODE_SPAN = re.compile(r"(?<![`\\])(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)
"""An inline code span (a backslash-escaped backtick opens none)."""
GFM_URL = re.compile(r"(https?://|www(?=\.))([-.\w]+)([^ \t\r\n]*)", re.IGNORECASE)
GFM_EMAIL = re.compile(r"([-.\w+]+)@([-\w]+(?:\.[-\w]+)+)")


def outside_code_spans(markdown: str) -> str:
    """The Markdown with every inline code span replaced by a space (what may still be markup)."""
    return CODE_SPAN.sub(" ", markdown)


def visible_autolinks(markdown: str) -> list[str]:
    """URL and e-mail literals remark-gfm would turn into links (code spans removed, escapes resolved)."""
    text = re.sub(r"\\(.)", r"\1", outside_code_spans(markdown))
    return [m.group(0) for m in GFM_URL.finditer(text)] + [m.group(0) for m in GFM_EMAIL.finditer(text)]


def shown(markdown: str) -> str:
    """What a reader sees: code spans' content verbatim (one padding space stripped), escapes resolved elsewhere."""
    out, last = [], 0
    for m in CODE_SPAN.finditer(markdown):
        out.append(re.sub(r"\\(.)", r"\1", markdown[last:m.start()]))
        body = m.group(2)
        out.append(body[1:-1] if body.startswith(" ") and body.endswith(" ") and body.strip() else body)
        last = m.end()
    out.append(re.sub(r"\\(.)", r"\1", markdown[last:]))
    return "".join(out)
