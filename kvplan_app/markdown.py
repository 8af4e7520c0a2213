"""Text for Streamlit's Markdown sinks, shown exactly as typed: one helper per sink.

* :func:`shown`: a user-supplied value quoted inside a message (control characters escaped, length cut);
* :func:`escape_markdown`: a whole message body for ``st.warning`` / ``st.error`` / ``st.info`` /
  ``st.markdown`` (no markup, no HTML, no link);
* :func:`code_span`: one inline code span (a run that must stay verbatim, e.g. a URL).

No Streamlit state and no translation here (pure functions, tested directly).
"""

from __future__ import annotations

import re

_MD_SPECIAL = re.compile(r"([!-/:-@\[-`{-~])")
_AUTOLINKABLE = re.compile(r"\S*(?:://|www\.|@\w)\S*", re.IGNORECASE)
"""A whitespace-free run that GitHub-flavoured Markdown may turn into a link (``https://...``, ``www.x``,
``a@b.c``). Its autolink literals are found in the text *after* backslash escapes are resolved
(mdast-util-gfm-autolink-literal), so escaping cannot stop them; a code span can (it is not text)."""


def shown(text: object, limit: int = 40) -> str:
    """User-supplied text for a message: control characters escaped, at most ``limit`` characters."""
    s = "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text)[: limit * 4])
    return s if len(s) <= limit else s[: limit - 3] + "..."


def code_span(text: str) -> str:
    """``text`` as one Markdown inline code span, shown exactly as typed (a fence longer than any backtick run).

    >>> code_span("a`b")
    '`` a`b ``'
    """
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}"


def escape_markdown(text: str, *, keep: str = "") -> str:
    r"""Markdown that shows ``text`` as typed: no markup, no HTML, no link.

    Every ASCII punctuation character is backslash-escaped (CommonMark), which keeps links, images,
    ``:color[...]`` directives, ``$`` maths and HTML tags as plain text. A run that would still auto-link
    (a bare URL, ``www.``, an e-mail address) becomes an inline code span instead. ``keep`` names characters
    left as they are: ``"_"`` keeps field names such as ``context_tokens`` readable in the message text (an
    underscore can only make emphasis, never a tag, link or image).

    >>> escape_markdown("<script>alert(1)</script>")
    '\\<script\\>alert\\(1\\)\\<\\/script\\>'
    >>> escape_markdown("context_tokens: '<b>'", keep="_")
    "context_tokens\\: \\'\\<b\\>\\'"
    >>> escape_markdown("hit=https://evil.example/reset is bad")
    '` hit=https://evil.example/reset ` is bad'
    """
    out, last = [], 0
    for m in _AUTOLINKABLE.finditer(text):
        out.append(_escape_punctuation(text[last:m.start()], keep))
        out.append(code_span(m.group(0)))
        last = m.end()
    out.append(_escape_punctuation(text[last:], keep))
    return "".join(out)


def _escape_punctuation(text: str, keep: str) -> str:
    return _MD_SPECIAL.sub(lambda m: m.group(1) if m.group(1) in keep else "\\" + m.group(1), text)
