"""The helpers of kvplan_app/markdown.py, one per sink, and the last check every chart passes (render.guarded_figure).

Expected strings are written out by hand from the sinks' own rules: CommonMark backslash escapes for Markdown,
Plotly's entities (``&lt;`` ``&gt;`` ``&amp;`` and numeric ``&#123;``, plotly.js ``svg_text_utils.convertEntities``)
for Plotly text, HTML's ``&quot;`` for attributes, OWASP "CSV Injection" for cells.
"""

import plotly.graph_objects as go

from kvplan_app.markdown import csv_cell, file_name, html_attr, md, plotly_guard, plotly_text
from kvplan_app.render import guarded_figure
from markdown_text import shown, visible_autolinks


def test_md_shows_names_as_typed():
    for name in ("X ![i](http://127.0.0.1:9/x.png)", "X <img src=//127.0.0.1:9/h>", ":red[r] **b** $x$",
                 "X http://127.0.0.1:9/u", "a@b.example", "[c](javascript:alert(1))"):
        assert shown(md(name)) == name
        assert visible_autolinks(md(name)) == []


def test_plotly_text_makes_no_tag_and_no_substitution():
    assert plotly_text("<a href='http://x'>c</a>") == "&lt;a href='http://x'&gt;c&lt;/a&gt;"
    assert plotly_text("%{y} & <br>") == "%&#123;y&#125; &amp; &lt;br&gt;"
    assert plotly_text("H200") == "H200"


def test_plotly_guard_keeps_the_products_own_tags_only():
    assert plotly_guard("a<br>b<b>c</b><sup>2</sup><extra></extra>") == "a<br>b<b>c</b><sup>2</sup><extra></extra>"
    assert plotly_guard("<a href='x'>c</a>") == "&lt;a href='x'>c&lt;/a>"
    assert plotly_guard("<span style='x'>s</span><img src=x>") == "&lt;span style='x'>s&lt;/span>&lt;img src=x>"
    assert plotly_guard("<br style=x>") == "&lt;br style=x>"


def test_guarded_figure_reaches_every_text_property():
    fig = go.Figure(go.Scatter(x=[1], y=[1], name="<a href='//t/n'>n</a>", text=["<a href='//t/t'>t</a>"],
                               hovertemplate="<a href='//t/h'>h</a><br>%{y}<extra></extra>"))
    fig.update_layout(title="<a href='//t/title'>t</a>", xaxis_title="<a href='//t/x'>x</a>",
                      yaxis_ticktext=["<a href='//t/k'>k</a>"], yaxis_tickvals=[1], legend_title_text="<a>l</a>")
    fig.add_annotation(text="<a href='//t/a'>a</a>", x=1, y=1)
    out = guarded_figure(fig).to_plotly_json()
    assert "<a" not in str(out)
    assert "<br>%{y}<extra></extra>" in out["data"][0]["hovertemplate"]
    assert "<a" in fig.data[0].name  # the builder's figure is not changed (it may be shared)


def test_guarded_figure_is_free_when_nothing_needs_it():
    fig = go.Figure(go.Scatter(x=[1], y=[1], name="H200", hovertemplate="%{x}<br>%{y}<extra></extra>"))
    assert guarded_figure(fig) is fig


def test_html_attr_csv_cell_and_file_name():
    assert html_attr('x" onerror="alert(1)') == "x&quot; onerror=&quot;alert(1)"
    assert csv_cell('=HYPERLINK("http://x")') == '\'=HYPERLINK("http://x")'
    assert csv_cell("h200") == "h200"
    assert file_name("kvplan", "../../etc/passwd", "=h200", suffix=".csv") == "kvplan-etc_passwd-h200.csv"
    assert file_name("kvplan", "", suffix=".json") == "kvplan.json"
