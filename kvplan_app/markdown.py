"""Untrusted text shown exactly as typed: one helper per sink, used by every page and chart.

Untrusted is anything that came from a link (``acc=`` accelerator names, model ids), an upload or a file
(``config.json``, plan files, probe results, traces, logs): names included, whatever they contain.

* Markdown (``st.markdown`` / ``caption`` / ``info`` / ``warning`` / ``error`` / ``success`` / ``subheader`` /
  ``title``, metric help): :func:`md` for one value placed into a product sentence, :func:`escape_markdown` for a
  whole message body (no markup, no HTML, no link); :func:`code_span` for one verbatim run; :func:`shown` quotes
  a value inside a message (control characters escaped, length cut).
* Plotly text (trace names, titles, axis titles, legend, annotations, hover templates, ``text`` labels, tick
  text): :func:`plotly_text`. Plotly draws its own pseudo-HTML there (``<a href>``, ``<br>``, ``<b>``, ``<span
  style>``) and substitutes ``%{...}`` in hover templates; :func:`plotly_guard` is the last check every chart
  passes on its way to the page (``kvplan_app.render.show_chart``): any tag but the product's own few is shown
  as text.
* HTML attributes: :func:`html_attr`.
* CSV cells: :func:`csv_cell` (``planner.files.export.neutralise``: the one writer every CSV goes through).
* Download file names: :func:`file_name`.

No Streamlit state and no translation here (pure functions, tested directly).
"""

from __future__ import annotations

import html
import re

from planner.files.export import neutralise as csv_cell  # noqa: F401 - the CSV sink's helper, re-exported here

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


def md(value: object) -> str:
    r"""One untrusted value (a name, an id, a path) for a product sentence in a Markdown sink: shown as typed.

    >>> md("X ![i](http://127.0.0.1:9/x.png)")
    'X ` ![i](http://127.0.0.1:9/x.png) `'
    >>> md("a <img src=x> :red[b]")
    'a \\<img src\\=x\\> \\:red\\[b\\]'
    """
    return escape_markdown(str(value))


_PLOTLY_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "{": "&#123;", "}": "&#125;"}
_PLOTLY_SPECIAL = re.compile("[&<>{}]")


def plotly_text(value: object) -> str:
    """One untrusted value for Plotly text (trace name, title, annotation, hover template, ``text`` label).

    ``<``, ``>`` and ``&`` become entities (Plotly shows them as the characters, never as a tag), and so do
    braces, so that ``%{...}`` in a name is never substituted in a hover template.

    >>> plotly_text("<a href='http://x'>c</a> %{y}")
    "&lt;a href='http://x'&gt;c&lt;/a&gt; %&#123;y&#125;"
    """
    return _PLOTLY_SPECIAL.sub(lambda m: _PLOTLY_ESCAPES[m.group(0)], str(value))


_PLOTLY_OWN_TAG = re.compile(r"<(?!/?(?:br|b|i|em|sup|sub|extra)\s*/?>)", re.IGNORECASE)
"""A ``<`` that does not open one of the few tags the product's own chart text uses (no attributes, no link)."""


def plotly_guard(text: str) -> str:
    """Chart text with every tag but the product's own (``<br>``, ``<b>``, ``<i>``, ``<em>``, ``<sup>``, ``<sub>``,
    ``<extra>``) shown as text: no ``<a href>``, no ``<span style>`` reaches Plotly, whatever a builder forgot.

    >>> plotly_guard("a<br><a href='http://x'>b</a><extra></extra>")
    "a<br>&lt;a href='http://x'>b&lt;/a><extra></extra>"
    """
    return _PLOTLY_OWN_TAG.sub("&lt;", text)


def plotly_needs_guard(text: str) -> bool:
    """Whether :func:`plotly_guard` would change ``text`` (one regex search: cheap on long joined labels)."""
    return _PLOTLY_OWN_TAG.search(text) is not None


def html_attr(value: object) -> str:
    """One untrusted value inside a double- or single-quoted HTML attribute.

    >>> html_attr('x" onerror="alert(1)')
    'x&quot; onerror=&quot;alert(1)'
    """
    return html.escape(str(value), quote=True)


_FILE_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def file_name(*parts: object, suffix: str) -> str:
    """A download's file name from parts that may be untrusted (a model id from an upload): letters, digits,
    ``.``, ``_`` and ``-`` only, never starting with a dot or a formula character, at most 100 characters.

    >>> file_name("kvplan", "../../etc/passwd", "=h200", suffix=".json")
    'kvplan-etc_passwd-h200.json'
    """
    words = [_FILE_NAME_UNSAFE.sub("_", str(p)).strip("._-=+@") for p in parts]
    return "-".join(w for w in words if w)[:100] + suffix
