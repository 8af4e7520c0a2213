"""Charts and tables in the page's language: every ``st.plotly_chart`` and ``st.dataframe`` of the pages goes here.

English passes through unchanged. In another language (Spanish: decimal comma, thousands point, RAE):

* a chart gets plotly's ``separators`` of the language (ticks, hover numbers), and the numbers in its
  annotations and fixed tick labels (text written by the figure builder) are localized;
* a table's numeric columns are shown through a pandas ``Styler`` with the language's separators: the cells keep
  their values (sorting is by value) and only the text changes. A ``NumberColumn`` format of the page
  (``"localized"``, ``"percent"``, ``"%.4f"``) is honoured by the Styler instead, since Streamlit writes those in
  the browser's locale, not the page's.

CSV downloads never go through here: they keep one machine format (``planner.files.export``).
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import pandas as pd
import streamlit as st

from kvplan_app.charts.style import LEGEND_LABEL
from kvplan_app.i18n import DEFAULT_LANGUAGE, language, localize_numbers, read_number, t
from kvplan_app.markdown import md, plotly_guard, plotly_needs_guard

SEPARATORS: dict[str, str] = {"en": ".,", "es": ",."}
"""Language -> plotly's ``layout.separators`` (decimal mark, then thousands mark)."""
MISSING = "—"
"""A missing value in a table (never ``None``)."""


def separators(lang: str | None = None) -> str:
    """Plotly's separators for ``lang`` (default: this session's language)."""
    return SEPARATORS.get(lang or language(), SEPARATORS[DEFAULT_LANGUAGE])


def localized_figure(fig, lang: str):
    """``fig`` with ``lang``'s separators and its annotation and tick-label numbers localized (a copy; English: ``fig``).

    A figure that already carries ``lang``'s separators was localized by its builder and is returned as it is.
    """
    if lang == DEFAULT_LANGUAGE or fig.layout.separators == separators(lang):
        return fig
    import plotly.graph_objects as go

    out = go.Figure(fig)  # figures may be shared (cached, or a trace job's result): never changed in place
    out.layout.separators = separators(lang)
    for note in out.layout.annotations:
        if note.text:
            note.text = localize_numbers(note.text, lang)
    if out.layout.title.text:
        out.layout.title.text = localize_numbers(out.layout.title.text, lang)
    for trace in out.data:  # labels written in the legend (kvplan_app.charts.style.legend_label), not data names
        if trace.meta == LEGEND_LABEL and trace.name:
            trace.name = localize_numbers(trace.name, lang)
    for shape in out.layout.shapes:  # a marked line's name in the legend ("model maximum 4,096 tokens")
        if shape.name and shape.showlegend:
            shape.name = localize_numbers(shape.name, lang)
    out.for_each_xaxis(lambda axis: _localize_axis(axis, lang))
    out.for_each_yaxis(lambda axis: _localize_axis(axis, lang))
    return out


def _localize_axis(axis, lang: str) -> None:
    """Tick labels and the title ("Sessions per GPU at hit rate 0.50") with the language's numbers."""
    if axis.ticktext:
        axis.ticktext = [localize_numbers(str(text), lang) for text in axis.ticktext]
    if axis.title.text:
        axis.title.text = localize_numbers(axis.title.text, lang)


def show_chart(fig, where=None, **kwargs: Any):
    """``where.plotly_chart(fig, **kwargs)`` (``where``: ``st`` or a column) with the figure in this language, its
    text passed through :func:`kvplan_app.markdown.plotly_guard` (no link or styled tag reaches the browser)."""
    return (where or st).plotly_chart(guarded_figure(localized_figure(fig, language())), **kwargs)


_TRACE_TEXT = ("name", "hovertemplate", "texttemplate", "legendgroup")
"""Trace properties that Plotly draws as its pseudo-HTML (besides ``text`` and ``hovertext``, which may be arrays)."""


def _guard_value(value):
    """``value`` (a string, or a sequence of labels) with :func:`plotly_guard` applied; ``value`` itself when no
    string in it holds a ``<`` (the common case: no copy)."""
    if isinstance(value, str):
        return plotly_guard(value) if plotly_needs_guard(value) else value
    if hasattr(value, "dtype"):
        if value.dtype != object:  # numbers
            return value
        value = value.tolist()
    if isinstance(value, (list, tuple)) and plotly_needs_guard("\n".join(v for v in value if isinstance(v, str))):
        return [plotly_guard(v) if isinstance(v, str) else v for v in value]
    return value


def guarded_figure(fig):
    """``fig`` whose text properties (trace names, hover templates, ``text``, titles, annotations, tick text, legend
    title) show any tag but the product's own as text. Builders escape untrusted names already
    (:func:`kvplan_app.markdown.plotly_text`); this is the last check, so a forgotten one shows as text, never as a
    link. ``fig`` itself is returned when nothing needs a change (no copy on every rerun), else a copy."""
    import plotly.graph_objects as go

    trace_changes: list = []
    for i, trace in enumerate(fig.data):
        for prop in (*_TRACE_TEXT, "text", "hovertext"):
            try:
                old = trace[prop]
            except (KeyError, ValueError, AttributeError):
                continue
            if old is None:
                continue
            new = _guard_value(old)
            if _differs(new, old):
                trace_changes.append((i, prop, new))
    layout = fig.layout
    texts = [("title_text", layout.title.text), ("legend_title_text", layout.legend.title.text)]
    for name in [k for k in layout if k.startswith(("xaxis", "yaxis"))]:
        axis = layout[name]
        texts += [(f"{name}_title_text", axis.title.text), (f"{name}_ticktext", axis.ticktext)]
    layout_changes = {}
    for path, old in texts:
        if old is not None:
            new = _guard_value(old)
            if _differs(new, old):
                layout_changes[path] = new
    note_changes = [(j, plotly_guard(n.text)) for j, n in enumerate(layout.annotations)
                    if n.text and plotly_guard(n.text) != n.text]
    if not (trace_changes or layout_changes or note_changes):
        return fig
    out = go.Figure(fig)
    for i, prop, new in trace_changes:
        out.data[i][prop] = new
    if layout_changes:
        out.update_layout(layout_changes)
    for j, new in note_changes:
        out.layout.annotations[j].text = new
    return out


def _differs(new, old) -> bool:
    if isinstance(new, str) or isinstance(old, str):
        return new != old
    return list(new) != list(old)


def format_number(value: Any, fmt: str | None, lang: str) -> str:
    """One table cell's text: ``fmt`` is a Streamlit ``NumberColumn`` format (``"localized"``, ``"percent"``, a printf
    pattern such as ``"%.4f"``) or None; whole numbers get thousands marks, others up to 4 decimals.

    >>> format_number(1234567, "localized", "es"), format_number(0.123, "percent", "es"), format_number(0.5, None, "es")
    ('1.234.567', '12,3 %', '0,5')
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    if fmt == "percent":
        text = _trim(f"{value * 100:,.2f}") + " %"
    elif fmt and fmt.startswith("%") and "," not in fmt:
        try:
            text = fmt % value
        except (TypeError, ValueError):
            text = _plain(value)
    else:
        text = _plain(value)
    return localize_numbers(text, lang)


def _plain(value) -> str:
    if float(value).is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    return _trim(f"{value:,.4f}")


def _trim(text: str) -> str:
    return text.rstrip("0").rstrip(".") if "." in text else text


def _markdown_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its column names and text cells escaped for a Markdown sink (a copy)."""
    out = frame.rename(columns=lambda c: md(c) if isinstance(c, str) else c)
    for col in out.columns:
        if out[col].dtype == object:
            out[col] = [md(v) if isinstance(v, str) else v for v in out[col]]
    return out


def show_table(data, where=None, *, column_config: dict | None = None, static: bool = False, **kwargs: Any):
    """``where.dataframe(data, ...)`` (``where``: ``st`` or a column) with the numbers in this language.

    ``data``: a DataFrame or rows (list of dicts). ``column_config`` as ``st.dataframe`` takes it.
    ``static``: an ``st.table`` instead, for a few rows of words: its text wraps, so no header or cell is cut
    however narrow the page (no sorting, no ``column_config``). ``st.table`` draws its headers and text cells as
    Markdown, so each is passed through :func:`kvplan_app.markdown.md` (a name from a link shows as typed); an
    ``st.dataframe`` draws plain text and needs none.
    """
    where = where or st
    lang = language()
    if static:
        data = _markdown_safe(data if isinstance(data, pd.DataFrame) else pd.DataFrame(data))
        draw = where.table
        kwargs = {k: v for k, v in kwargs.items() if k in ("hide_index", "border")}
    else:
        draw = partial(where.dataframe, **({"column_config": column_config} if column_config else {}))
    if lang == DEFAULT_LANGUAGE:
        return draw(data, **kwargs)
    frame = data if isinstance(data, pd.DataFrame) else pd.DataFrame(data)
    config = dict(column_config or {})
    formats = {}
    for col in frame.columns:
        kind = frame[col].dtype
        if not pd.api.types.is_numeric_dtype(kind) or pd.api.types.is_bool_dtype(kind):
            continue
        spec = config.get(col)
        fmt = None
        if isinstance(spec, dict) and (spec.get("type_config") or {}).get("type") == "number":
            fmt = spec["type_config"].get("format")
            config[col] = {**spec, "type_config": {**spec["type_config"], "format": None}}
        formats[col] = lambda v, fmt=fmt: format_number(v, fmt, lang)
    styled = frame.style.format(formats, na_rep=MISSING) if formats else frame
    if config and not static:
        draw = partial(where.dataframe, column_config=config)
    return draw(styled, **kwargs)



def number_slider(where, label: str, lo: float, hi: float, *, step: float, key: str, decimals: int = 2, **kwargs):
    """A slider over [lo, hi] in steps of ``step`` whose shown value is written in the page's language.

    Streamlit's ``st.slider`` prints its value with a printf-style ``format`` in the browser ("0.50" whatever the
    language). In English that slider is used unchanged; in another language an ``st.select_slider`` over the same
    steps (plus the current value, which a link or a typed box may set off the steps) shows each value through
    :func:`kvplan_app.i18n.localize_numbers` ("0,50"). The value is the same float either way.

    Args:
        where: ``st`` or a column.
        decimals: digits after the decimal mark shown.
        kwargs: passed on (``on_change``, ``args``, ``help``).
    """
    current = st.session_state.get(key)
    if current is not None:  # a link or a typed box may set a value off the steps: show it whole (0.25, not 0.3)
        decimals = _shown_decimals(float(current), decimals)
    if language() == DEFAULT_LANGUAGE:
        return where.slider(label, min_value=lo, max_value=hi, step=step, key=key, format=f"%.{decimals}f", **kwargs)
    count = int(round((hi - lo) / step))
    options = {round(lo + i * step, 10) for i in range(count + 1)}
    if current is not None:
        options.add(float(current))
    lang = language()
    return where.select_slider(label, sorted(options), key=key,
                               format_func=lambda v: localize_numbers(f"{v:.{decimals}f}", lang), **kwargs)


def _shown_decimals(value: float, decimals: int, most: int = 10) -> int:
    """Digits after the decimal mark that show ``value`` unrounded: at least ``decimals``, at most ``most``.

    >>> _shown_decimals(0.25, 1), _shown_decimals(0.5, 2), _shown_decimals(80.0, 1)
    (2, 2, 1)
    """
    while decimals < most and round(value, decimals) != value:
        decimals += 1
    return decimals


_UNSET = object()
TEXT_SUFFIX = "_text"
"""Key suffix of a number box's text field (``plan_reserve_gib_text``)."""
_BAD_SUFFIX = "_refused"


def number_box(where, label: str, min_value: float | None = None, max_value: float | None = None, *, key: str,
               format: str = "%g", value: Any = _UNSET, on_change=None, args: tuple = (), **kwargs):
    """A number typed by the user, written in the page's language; its value is the float in
    ``st.session_state[key]`` (None when left empty, for a box whose ``value`` is None).

    Streamlit's ``st.number_input`` writes its value with a printf ``format`` in the browser ("0.50", "80.0")
    whatever the language, has no locale, and on a bad text (``abc``, ``0,5``, out of range) silently clamps or
    keeps a stale value. So in every language the box is an ``st.text_input`` (key ``key`` + :data:`TEXT_SUFFIX`)
    showing the value with that language's marks ("0.50" in English, "0,50" in Spanish; see :func:`_box_text`),
    read back by :func:`kvplan_app.i18n.read_number` (English: ``1.024`` is 1.024, ``1,024`` is 1024, ``0,5`` is
    refused). A text that is not a number in [``min_value``, ``max_value``] gets one ``st.error`` under the box's row
    naming the field, the text and the range; the value, hence the plan, stays the last valid one.

    Args:
        where: ``st`` or a column.
        format: printf pattern of the shown value; more decimals are shown when it would round the value.
        value: the starting value when ``key`` holds none (None: empty).
        on_change, args: called after a valid value is stored.
        kwargs: passed on (``help``, ``placeholder``); ``step`` is dropped (a text box has no arrows).
    """
    if key not in st.session_state:
        st.session_state[key] = (min_value if min_value is not None else 0.0) if value is _UNSET else value
    current = st.session_state[key]
    lang = language()
    text_key, bad_key = key + TEXT_SUFFIX, key + _BAD_SUFFIX
    refused = st.session_state.get(bad_key)
    if refused is not None and refused[1] != current:  # the value moved since (a slider): the box follows it
        refused = None
        st.session_state.pop(bad_key, None)
    if refused is None:
        st.session_state[text_key] = "" if current is None else localize_numbers(_box_text(current, format), lang)
    kwargs.pop("step", None)
    where.text_input(label, key=text_key, on_change=_number_typed,
                     args=(key, label, min_value, max_value, value is None, lang, on_change, args), **kwargs)
    if refused is not None:  # the width of the enclosing block (page, expander), under the row: a column is narrow
        st.error(refused[0])
    return st.session_state[key]


def _box_text(value: float, format: str) -> str:
    """``value`` written with ``format``, or with as many decimals as it needs (at most 10) when ``format`` would
    round it: the box shows the number the plan uses (0.25 under "%.1f" is "0.25", never "0.2").

    >>> _box_text(0.25, "%.1f"), _box_text(5.0, "%.1f"), _box_text(0.255, "%.2f"), _box_text(123456789.0, "%g")
    ('0.25', '5.0', '0.255', '123456789')
    """
    text = format % value
    if float(text) == value:
        return text
    for digits in range(11):
        text = f"{value:.{digits}f}"
        if float(text) == value:
            return text
    return repr(float(value))


def _number_typed(key: str, label: str, lo: float | None, hi: float | None, may_be_empty: bool, lang: str,
                  on_change, args: tuple) -> None:
    """The text of a :func:`number_box` changed: store its number, or the refusal that names field, text and range."""
    text = st.session_state.get(key + TEXT_SUFFIX, "")
    if may_be_empty and not text.strip():
        number = None
    else:
        try:
            number = read_number(text, lang)
        except ValueError:
            number = math.nan
        if not (math.isfinite(number) and (lo is None or number >= lo) and (hi is None or number <= hi)):
            bounds = localize_numbers(f"[{_plain(lo) if lo is not None else '-∞'}, "
                                      f"{_plain(hi) if hi is not None else '∞'}]", lang)
            st.session_state[key + _BAD_SUFFIX] = (
                t("{field}: “{text}” is not a number in {range}; the last valid value, {last}, is kept.",
                  field=label, text=md(text), range=bounds, last=t("empty") if st.session_state.get(key) is None
                  else localize_numbers(_plain(st.session_state[key]), lang)),
                st.session_state.get(key))
            return
    st.session_state.pop(key + _BAD_SUFFIX, None)
    st.session_state[key] = number
    if on_change is not None:
        on_change(*args)
