"""Charts and tables in the page's language (kvplan_app.render): Spanish separators, English unchanged.

Spanish writes a decimal comma and a thousands point (RAE, Ortografía 2010, 8.2.2.1): 1.234.567 and 0,5.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import pytest

from kvplan_app.render import MISSING, format_number, localized_figure

ROOT = Path(__file__).resolve().parents[1]
VIEWS = sorted((ROOT / "kvplan_app" / "views").glob("*.py"))


@pytest.mark.parametrize("value, fmt, text", [
    (1234567, "localized", "1.234.567"),
    (1234567, None, "1.234.567"),
    (1234.5678, None, "1.234,5678"),
    (0.5, None, "0,5"),
    (0.123, "percent", "12,3 %"),
    (0.9, "percent", "90 %"),
    (1234.56789, "%.4f", "1234,5679"),
    (float("nan"), None, MISSING),
    (None, "localized", MISSING),
])
def test_a_table_cell_in_spanish(value, fmt, text):
    assert format_number(value, fmt, "es") == text


def test_english_cells_keep_english_marks():
    assert format_number(1234567.25, None, "en") == "1,234,567.25"


def _figure() -> go.Figure:
    fig = go.Figure(go.Scatter(x=[1, 2], y=[3, 4]))
    fig.add_annotation(x=1, y=3, text="this plan: 1,144 sessions at 0.89 GB on H200")
    fig.update_xaxes(tickvals=[1, 2], ticktext=["64.5 GB (60.1 GiB)", "1,000"])
    return fig


def test_a_spanish_figure_gets_spanish_separators_and_labels_and_the_original_is_untouched():
    fig = _figure()
    es = localized_figure(fig, "es")
    assert es.layout.separators == ",."  # plotly: decimal mark, then thousands mark
    assert es.layout.annotations[0].text == "this plan: 1.144 sessions at 0,89 GB on H200"
    assert list(es.layout.xaxis.ticktext) == ["64,5 GB (60,1 GiB)", "1.000"]
    assert fig.layout.separators is None and fig.layout.annotations[0].text.startswith("this plan: 1,144")


def test_an_english_figure_is_shown_as_built():
    fig = _figure()
    assert localized_figure(fig, "en") is fig


def test_a_figure_localized_by_its_builder_is_not_swapped_back():
    fig = _figure()
    fig.update_layout(separators=",.")
    fig.layout.annotations[0].text = "1.144 sesiones"
    assert localized_figure(fig, "es").layout.annotations[0].text == "1.144 sesiones"


@pytest.mark.parametrize("path", VIEWS, ids=lambda p: p.name)
def test_pages_show_charts_and_tables_through_render(path):
    """Every chart and table of a page goes through kvplan_app.render (a direct call would stay in English)."""
    direct = [node.lineno for node in ast.walk(ast.parse(path.read_text()))
              if isinstance(node, ast.Attribute) and node.attr in ("plotly_chart", "dataframe")]
    assert direct == [], f"{path.name} lines {direct}: use show_chart / show_table"


def test_a_spanish_table_keeps_its_values_and_drops_browser_locale_formats(monkeypatch):
    import kvplan_app.render as render

    seen = {}

    class Where:
        def dataframe(self, data, **kwargs):
            seen["data"], seen["kwargs"] = data, kwargs

    monkeypatch.setattr(render, "language", lambda: "es")
    frame = pd.DataFrame({"tokens": [1_000_000, 128_000], "share": [0.5, None], "name": ["a", "b"]})
    config = {"tokens": render.st.column_config.NumberColumn("Tokens", format="localized"), "name": "Name"}
    render.show_table(frame, Where(), column_config=config, hide_index=True)
    styler = seen["data"]
    assert styler.data is frame  # values kept: sorting is by value
    html = styler.to_html()
    assert "1.000.000" in html and "128.000" in html and "0,5" in html and MISSING in html
    assert seen["kwargs"]["column_config"]["tokens"]["type_config"]["format"] is None
    assert seen["kwargs"]["column_config"]["name"] == "Name" and seen["kwargs"]["hide_index"] is True


def test_spanish_axis_titles_get_spanish_numbers():
    # the Frontier page's titles carry the slice: "Sesiones por GPU con acierto 0.50", "... a 1,000,000 tokens"
    fig = _figure()
    fig.update_layout(title="Sesiones por GPU a 1,000,000 tokens", yaxis_title="Sesiones por GPU con acierto 0.50")
    es = localized_figure(fig, "es")
    assert es.layout.title.text == "Sesiones por GPU a 1.000.000 tokens"
    assert es.layout.yaxis.title.text == "Sesiones por GPU con acierto 0,50"


def test_the_plan_chart_hover_is_in_the_page_language():
    import pandas as pd

    from catalogue import spanish
    from kvplan_app.charts.figures import PLAN_FIGURE_TEXTS, plan_sessions_figure

    frame = pd.DataFrame({"context_tokens": [1_000, 1_000_000], "sessions_per_gpu": [100.0, 17.9],
                          "per_session_bytes": [10**6, 10**9]})
    texts = {k: spanish(v) for k, v in PLAN_FIGURE_TEXTS.items()}
    fig = plan_sessions_figure(frame, plan_context_tokens=1_000_000, plan_sessions=17.9, per_session_bytes=10**9,
                               texts=texts, localize=lambda s: s.replace(",", "."))
    hovers = " ".join(tr.hovertemplate for tr in fig.data)
    assert "sessions per GPU" not in hovers and "per session" not in hovers
    assert "este plan: 1.000.000 tokens" in hovers and "sesiones por GPU" in hovers
