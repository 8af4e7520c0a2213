"""Recommend page (AppTest): ranked rows with plan links, the chart, refusals shown, a user accelerator searched."""

import json
from urllib.parse import parse_qs, urlsplit

from markdown_text import shown
from streamlit.testing.v1 import AppTest

from planner.plan import plan
from kvplan_app.links import inputs_from_query


def _page(**query):
    at = AppTest.from_file("../app.py", default_timeout=120)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    at.switch_page("kvplan_app/views/recommend.py")
    at.run()
    assert not at.exception, at.exception
    return at


def test_rows_link_to_plans_that_meet_the_target():
    at = _page(model="llama-3.1-70b", ctx="32000")
    table = next(d.value for d in at.dataframe if "plan link" in d.value.columns)
    # Llama-3.1-70B, 32k, hit 0.5: 439 sessions per 8-B200 replica (TP, FP8 KV) -> 3 replicas = 24 GPUs
    assert table.iloc[0]["total_gpus"] == 24 and table.iloc[0]["gpu_id"] == "b200"
    for _, row in table.head(5).iterrows():
        query = {k: v[0] for k, v in parse_qs(urlsplit(row["plan link"]).query).items()}
        assert urlsplit(row["plan link"]).path.split("/")[-1] == "plan"  # the Plan page's own URL (docs/hosting.md)
        linked, warnings = inputs_from_query(query)
        assert warnings == []
        assert plan(linked).sessions_per_replica * row["replicas"] >= 1000
    fig = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert any(t.get("name") == "Pareto front" for t in fig["data"])


def test_attention_axis_filters_rows():
    at = _page(model="llama-3.1-70b", ctx="32000")
    at.multiselect(key="recommend_attention").set_value(["dp"]).run()
    assert not at.exception
    table = next(d.value for d in at.dataframe if "plan link" in d.value.columns)
    assert set(table["attention"]) == {"dp"}


def test_user_accelerator_from_the_plan_is_searched():
    acc = "id:h20~name:NVIDIA H20~mem:102625181696~bw:4000~tf:148~price:1.8"
    at = _page(model="llama-3.1-70b", ctx="32000", gpu="custom", acc=acc)
    assert "h20" in at.multiselect(key="recommend_gpus").value
    table = next(d.value for d in at.dataframe if "plan link" in d.value.columns)
    h20 = table[table["gpu_id"] == "h20"]
    assert len(h20) and (h20["cost_per_hour"] == h20["total_gpus"] * 1.8).all()


def test_hit_rate_from_a_sample_trace():
    at = _page(model="llama-3.1-70b", ctx="32000")
    at.selectbox(key="recommend_hit_source").set_value("conversation").run()
    assert not at.exception
    table = next(d.value for d in at.dataframe if "plan link" in d.value.columns)
    # each configuration plans at its own measured hit rate, carried by its plan link
    assert table["hit_rate"].nunique() > 1 and (table["hit_rate"] < 1).all()
    row = table.iloc[0]
    query = {k: v[0] for k, v in parse_qs(urlsplit(row["plan link"]).query).items()}
    assert float(query["hit"]) == row["hit_rate"]


def test_caption_names_the_model_not_its_id():
    at = _page(model="llama-3.1-70b", ctx="32000")
    caption = " ".join(shown(c.value) for c in at.caption)  # the text a reader sees (names are escaped Markdown)
    assert "Llama 3.1 70B" in caption and "llama-3.1-70b" not in caption


def test_the_link_carries_every_input_and_reproduces_the_search_after_a_restart():
    at = _page(model="llama-3.1-70b", ctx="32000")
    at.text_input(key="recommend_target_text").set_value("2000.0").run()
    at.text_input(key="recommend_headroom_text").set_value("50.0").run()
    at.multiselect(key="recommend_gpus").set_value(["h200", "b200"]).run()
    at.multiselect(key="recommend_kv").set_value(["fp8"]).run()
    assert not at.exception
    query = {k: at.query_params[k] for k in at.query_params}
    assert (query["r_target"], query["r_head"], query["r_gpus"], query["r_kv"]) == ("2000", "0.5", "h200,b200", "fp8")
    first = next(d.value for d in at.dataframe if "plan link" in d.value.columns)
    # a fresh server (a new AppTest) opened at that link: the same inputs, the same table
    again = _page(**query)
    assert again.session_state["recommend_target"] == 2000.0
    assert again.session_state["recommend_headroom"] == 50.0
    table = next(d.value for d in again.dataframe if "plan link" in d.value.columns)
    cols = ["accelerator", "gpus_per_replica", "attention", "kv_format", "total_gpus", "headroom"]
    assert table[cols].head(10).equals(first[cols].head(10))
    # the top row has the headroom asked: capacity at least 2,000 x 1.5 = 3,000 sessions
    assert table.iloc[0]["headroom"] >= 0.5 and table.iloc[0]["capacity"] >= 3000


def test_the_top_row_states_its_assumptions_and_the_no_sharing_answer():
    at = _page(model="llama-3.1-70b", ctx="32000")
    # the default 20 % headroom; B200 x 8 TP FP8: 439 sessions per replica, 3 replicas for 1,200;
    # no shared prefix: 226 per replica, 6 replicas = 48 GPUs (tests/test_recommend.py)
    shown = [m.value.replace("\\", "") for m in at.markdown]  # escaped markdown: the text as shown
    assert any("Assumes: hit rate 0.5" in m and "shared prefix 0.5" in m for m in shown)
    assert any("48 GPUs (6 replicas)" in i.value for i in at.info)
    assert any("Headroom 31.7%" in s.value and "at least 20%" in s.value for s in at.success)


def test_a_context_past_the_models_maximum_is_said_above_the_rows():
    # Llama 3.1 70B: max_position_embeddings = 131,072 (its config.json on Hugging Face); the link's 1,000,000
    # tokens + the default 1,000 output tokens = 1,001,000 tokens, which it cannot serve (as the Plan page says)
    at = _page(model="llama-3.1-70b", ctx="1000000")
    warnings = [w.value.replace("\\", "") for w in at.warning]
    assert any("Context + output (1,001,000 tokens) exceeds Llama 3.1 70B's maximum context (131,072 tokens)" in w
               and "the model cannot serve it" in w for w in warnings), warnings
    assert any("plan link" in d.value.columns for d in at.dataframe)  # the rows are still computed, as on Plan
    at = _page(model="llama-3.1-70b", ctx="32000")
    assert not any("maximum context" in w.value for w in at.warning)
