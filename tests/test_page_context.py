"""GB-vs-context page (AppTest): renders the published 890 B/token table, several models, and reacts to its widgets."""

from streamlit.testing.v1 import AppTest


def _context_page():
    at = AppTest.from_file("../app.py", default_timeout=120)
    at.run()
    at.switch_page("kvplan_app/views/context.py")
    at.run()
    assert not at.exception, at.exception
    return at


def test_published_table_values():
    at = _context_page()
    published = next(d.value for d in at.dataframe if "KV (GB)" in d.value.columns)
    # docs/sources.md: 890 B/token x 100k, 250k, 500k, 1M tokens = 0.089, 0.2225, 0.445, 0.89 GB
    assert published["Context (tokens)"].tolist() == [100_000, 250_000, 500_000, 1_000_000]
    assert published["KV (B)"].tolist() == [89_000_000, 222_500_000, 445_000_000, 890_000_000]
    assert [round(x, 4) for x in published["KV (GB)"]] == [0.089, 0.2225, 0.445, 0.89]


def test_several_models_and_both_units():
    at = _context_page()
    chart = at.get("plotly_chart")[0]
    import json

    fig = json.loads(chart.proto.spec)
    names = {t.get("name") for t in fig["data"] if t.get("name")}
    assert {"DeepSeek V4.1-Flash", "Llama 3.1 70B"} <= names
    assert "GB" in fig["layout"]["yaxis"]["title"]["text"] and "GiB" in fig["layout"]["yaxis2"]["title"]["text"]


def test_changing_the_accelerator_changes_where_context_stops_fitting():
    at = _context_page()
    fits = next(d.value for d in at.table if "Model" in d.value.columns)  # st.table: its words wrap
    before = fits.iloc[:, -1].tolist()
    at.selectbox(key="context_gpu").set_value("l4").run()
    assert not at.exception
    after = next(d.value for d in at.table if "Model" in d.value.columns).iloc[:, -1].tolist()
    assert after != before


def test_moving_the_context_slider_keeps_rendering():
    at = _context_page()
    at.select_slider(key="context_max").set_value(10_000_000).run()
    assert not at.exception
    at.multiselect(key="context_models").set_value(["qwen3-8b"]).run()
    assert not at.exception


def test_a_linked_user_accelerator_plans_every_catalog_model_in_the_fits_table():
    # A user-defined accelerator arrives as gpu=custom + acc=...; the table's "usable KV" column plans each model on
    # it. It used to plan on the accelerator's own id (not a catalog GPU), fail, and say "unknown (no parameter
    # count)" for models whose weights the catalog knows.
    at = AppTest.from_file("../app.py", default_timeout=120)
    at.query_params.update({"gpu": "custom", "acc": "id:x1~name:X1~mem:102625181696~bw:4000~tf:148"})
    at.run()
    at.switch_page("kvplan_app/views/context.py")
    at.run()
    assert not at.exception and not at.error
    fits = next(d.value for d in at.table if "Model" in d.value.columns)
    usable = fits.iloc[:, -1].tolist()
    assert usable and not any(str(v).startswith(("unknown", "not planned")) for v in usable), usable
