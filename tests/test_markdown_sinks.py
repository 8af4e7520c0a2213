"""Static check: no page builds Markdown from untrusted text by hand.

Streamlit draws the text of ``st.markdown``, ``caption``, ``info``, ``warning``, ``error``, ``success``,
``subheader``, ``title``, ``header``, ``write``, ``toast``, widget labels and ``help=`` tooltips as Markdown (links
and images included). A name that came from a link or an upload (an ``acc=`` accelerator's name, an imported
model's name, a file name, a measured-on id) must reach them through ``kvplan_app.markdown.md`` /
``escape_markdown`` / ``code_span``. This test reads every page script (and the router and notices) and fails on:

* an f-string in a sink's text whose placeholders are not all numbers (a format spec such as ``:,``) or calls of
  the product's own helpers (translation, number formatting, the escapers);
* a value that reads a name-like attribute (``.name``, ``.gpu_name``, ``.model_name``, ``.source``, ``_id``
  fields, ``.kv_format``, ``.accelerator``, ``.device_name``) placed into a sink's text (as a ``t()`` / ``tn()`` /
  ``.format()`` argument or by ``+``) without one of the escapers around it.

The browser side of the same rule is ``tests/e2e/test_hostile_links.py``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "kvplan_app" / "views").glob("*.py")) + [
    ROOT / "kvplan_app" / name for name in ("router.py", "notices.py", "share.py", "uploads.py")]

SINKS = {"markdown", "caption", "info", "warning", "error", "success", "subheader", "title", "header", "write",
         "toast", "metric", "expander", "button", "toggle", "checkbox", "radio", "selectbox", "multiselect",
         "text_input", "number_input", "text_area", "slider", "select_slider", "download_button", "tabs",
         "file_uploader"}
"""Streamlit calls whose text (first argument, ``label=``, ``help=``) is drawn as Markdown."""
TEXT_KWARGS = {"label", "help", "body"}
ESCAPERS = {"md", "escape_markdown", "code_span"}
"""kvplan_app.markdown's helpers for a Markdown sink."""
SAFE_CALLS = ESCAPERS | {"t", "tn", "num", "words", "planner_message", "format_bytes", "format_duration", "format_figure",
                         "format_sessions", "to_gib", "to_gb", "str.upper", "upper", "lower", "int", "float", "len",
                         "ttl_label", "_tokens", "_fits_text", "_engine_missing"}
"""Calls whose result an f-string may place in a sink: product text, numbers, or already escaped text."""
UNTRUSTED_ATTRS = {"name", "gpu_name", "model_name", "source", "model_id", "gpu_id", "measured_kv_model_id",
                   "measured_usable_kv_gpu_id", "measured_kv_format", "kv_format", "accelerator", "device_name", "id"}
"""Attributes that hold text from a link, an upload or a file (or from a catalog a user can extend)."""
TRUSTED_RECEIVERS = {"kind", "f", "fmt", "FORMATS", "node", "LINKS", "status"}
"""Receivers whose name-like attributes are the product's own (a layer kind, a KV format of the catalog, a link of
the catalog, the server's own GPU as torch reports it)."""


def _call_name(node: ast.Call) -> str:
    f = node.func
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute):
        return f.attr
    return ""


def _untrusted_attr(node: ast.AST) -> bool:
    if not isinstance(node, ast.Attribute) or node.attr not in UNTRUSTED_ATTRS:
        return False
    receiver = node.value
    while isinstance(receiver, (ast.Attribute, ast.Subscript, ast.Call)):
        receiver = receiver.value if not isinstance(receiver, ast.Call) else receiver.func
        if isinstance(receiver, ast.Attribute) and receiver.attr in ("GPUS", "LINKS", "FORMATS"):
            return False
    if isinstance(receiver, ast.Name) and receiver.id in TRUSTED_RECEIVERS:
        return False
    # the catalog's own entries: models()[id].name, GPUS[g].name
    if isinstance(node.value, ast.Subscript):
        base = node.value.value
        if isinstance(base, ast.Call) and _call_name(base) == "models":
            return False
        if isinstance(base, ast.Name) and base.id in ("GPUS", "LINKS", "FORMATS"):
            return False
    return True


def _problems(node: ast.AST, escaped: bool = False) -> list[str]:
    """Unescaped untrusted text inside a sink's text expression."""
    if escaped:
        return []
    out: list[str] = []
    if isinstance(node, ast.Call):
        name = _call_name(node)
        if name in ESCAPERS:
            return []
        parts = [*node.args, *(k.value for k in node.keywords)]
        if name in ("t", "tn", "format", "num", "join"):
            for part in parts:
                if _untrusted_attr(part):
                    out.append(f"line {part.lineno}: {ast.unparse(part)} placed unescaped (wrap it in md())")
        for part in parts:
            out += _problems(part)
        if isinstance(node.func, ast.Attribute):
            out += _problems(node.func.value)
        return out
    if isinstance(node, ast.JoinedStr):
        for value in node.values:
            if not isinstance(value, ast.FormattedValue):
                continue
            inner = value.value
            numeric = value.format_spec is not None
            safe_call = isinstance(inner, ast.Call) and _call_name(inner) in SAFE_CALLS
            if not (numeric or safe_call or isinstance(inner, ast.Constant)):
                out.append(f"line {node.lineno}: f-string placeholder {{{ast.unparse(inner)}}} is neither a number "
                           "nor escaped (md(), escape_markdown())")
            out += _problems(inner)
        return out
    if isinstance(node, ast.BinOp):
        for side in (node.left, node.right):
            if _untrusted_attr(side):
                out.append(f"line {side.lineno}: {ast.unparse(side)} concatenated unescaped (wrap it in md())")
            out += _problems(side)
        return out
    if isinstance(node, (ast.List, ast.Tuple)):
        for elt in node.elts:
            out += _problems(elt)
        return out
    if isinstance(node, ast.IfExp):
        return _problems(node.body) + _problems(node.orelse)
    if _untrusted_attr(node):
        return [f"line {node.lineno}: {ast.unparse(node)} shown unescaped (wrap it in md())"]
    return out


def sink_problems(source: str) -> list[str]:
    """Every unescaped untrusted text that reaches a Markdown sink in ``source`` (a page script)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SINKS):
            continue
        texts = list(node.args[:1]) + [k.value for k in node.keywords if k.arg in TEXT_KWARGS]
        if node.func.attr == "metric":
            texts = list(node.args[:1]) + [k.value for k in node.keywords if k.arg in ("label", "help")]
        for text in texts:
            out += _problems(text)
    return list(dict.fromkeys(out))


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_no_unescaped_untrusted_text_in_markdown_sinks(script):
    assert sink_problems(script.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("source", [
    'st.caption(f"Source: {model.source}")',
    'st.subheader(t("Measured on {gpu}", gpu=result.gpu_name))',
    'st.markdown(f"**{title}**")',
    'st.error(up.name + ": too big")',
    'c1.metric(t("Sessions"), "1", help=t("{gpu}, hit", gpu=plan_name.name))',
    'st.info(t("x") + f" {note}")',
])
def test_the_check_catches_what_it_names(source):
    """The check itself: each of these placed untrusted text in a sink by hand (as pages once did)."""
    assert sink_problems(source)


@pytest.mark.parametrize("source", [
    'st.caption(t("Source: {source}", source=md(model.source)))',
    'st.subheader(t("Measured on {gpu}", gpu=md(result.gpu_name)))',
    'st.error(escape_markdown(up.name) + ": too big")',
    'st.caption(num(f"{n:,} tokens"))',
    'st.selectbox(t("Model"), ids, format_func=lambda m: models()[m].name)',
])
def test_the_check_passes_escaped_text(source):
    assert sink_problems(source) == []
