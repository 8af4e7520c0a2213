"""The link codec (kvplan_app.links): every page's parameters round-trip; no link value is misread silently.

Pure tests (no session): a link is read by ``read_link`` as a session opening it would read it.
"""

from __future__ import annotations

import ast
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from planner.catalog.entries import GPUS, models
from planner.errors import PlanInputError
from planner.kv.formats import FORMATS
from planner.kv.models import NATIVE
from planner.plan import PlanInputs, plan
from planner.traces import DEFAULT_TTLS_S
from planner.traces.samples import SAMPLES
from kvplan_app.link_models import (
    LANGUAGE_CODES,
    RECOMMEND_TRACE_SOURCES,
    AppLink,
    FrontierLink,
    ModelLink,
    RecommendLink,
    TracesLink,
)
from kvplan_app.links import LINKS, MAX_PARAM_CHARS, decode, encode, read_link, to_query
from test_urlstate import plan_inputs

ROOT = Path(__file__).resolve().parents[1]

PAGE_VALUES = {
    "model": st.builds(ModelLink, model_id=st.none() | st.sampled_from(list(models())),
                       kv_format=st.none() | st.sampled_from([NATIVE, *FORMATS]),
                       tp=st.none() | st.integers(1, 1024), pp=st.none() | st.integers(1, 1024),
                       context_tokens=st.none() | st.integers(1, 10**9)),
    "frontier": st.builds(FrontierLink, gpus=st.lists(st.sampled_from(list(GPUS)), unique=True, max_size=6).map(tuple),
                          max_context_tokens=st.just(0) | st.integers(FrontierLink.MIN_CONTEXT, FrontierLink.MAX_CONTEXT),
                          hit_rate=st.none() | st.floats(0, 1),
                          heatmap_gpu=st.none() | st.sampled_from([*GPUS, "custom"]), scale_throughput=st.booleans()),
    "traces": st.builds(TracesLink, sample=st.none() | st.sampled_from(list(SAMPLES)),
                        ttl_s=st.none() | st.sampled_from([t for t in DEFAULT_TTLS_S if math.isfinite(t)])),
    "app": st.builds(AppLink, lang=st.none() | st.sampled_from(LANGUAGE_CODES)),
    "recommend": st.builds(
        RecommendLink, kind=st.none() | st.sampled_from(["sessions", "requests_per_s"]),
        target=st.none() | st.floats(0.001, 1e12), headroom=st.none() | st.floats(0, 10),
        attention=st.none() | st.lists(st.sampled_from(["tp", "dp"]), unique=True, min_size=1).map(tuple),
        kv_formats=st.none() | st.lists(st.sampled_from([NATIVE, *FORMATS]), unique=True, min_size=1).map(tuple),
        gpus=st.none() | st.lists(st.sampled_from(list(GPUS)), unique=True, min_size=1, max_size=6).map(tuple),
        gpus_per_replica=st.none() | st.lists(st.integers(1, 1024), unique=True, min_size=1, max_size=6).map(tuple),
        weight_formats=st.none() | st.just(("catalog",)) | st.just(("catalog", "fp8")),
        hit_source=st.none() | st.sampled_from(RECOMMEND_TRACE_SOURCES),
        scale_throughput=st.none() | st.booleans(),
        prices=st.none() | st.just(("h200=3.2", "b200=5"))),
}


def test_every_page_with_link_parameters_has_a_strategy():
    assert set(PAGE_VALUES) == set(LINKS) - {"plan"}


@pytest.mark.parametrize("page", sorted(PAGE_VALUES))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_every_page_link_round_trips(page, data):
    """model -> encode -> decode == model, alone and inside a whole link (no warning either way)."""
    value = data.draw(PAGE_VALUES[page])
    params = encode(page, value)
    assert decode(LINKS[page], params) == (value, [])
    read = read_link(params)
    assert read.pages[page] == value and read.all_warnings == []


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan_inputs(), PAGE_VALUES["model"], PAGE_VALUES["frontier"], PAGE_VALUES["traces"], PAGE_VALUES["app"],
       PAGE_VALUES["recommend"])
def test_a_whole_link_round_trips(inputs, model, frontier, traces, app, recommend):
    """Every page's parameters in one link, as the share link writes them: the same plan and page values back."""
    try:
        plan(inputs)
    except (PlanInputError, ArithmeticError, ValueError):
        assume(False)
    values = {"model": model, "frontier": frontier, "traces": traces, "app": app, "recommend": recommend}
    params = {**to_query(inputs), **{k: v for page, x in values.items() for k, v in encode(page, x).items()}}
    read = read_link(params)
    assert read.all_warnings == []
    assert read.plan == inputs and read.pages == values


@pytest.mark.parametrize("key, value, expected", [
    ("ctx", "1e6", 1_000_000), ("ctx", "1 000 000", 1_000_000), ("ctx", "1,000,000", 1_000_000),
    ("ctx", "128k", 128_000), ("out", "1e3", 1_000), ("gpus", "4", 4),
])
def test_counts_read_as_the_widgets_and_the_cli_read_them(key, value, expected):
    read = read_link({key: value})
    assert read.all_warnings == []
    assert to_query(read.plan)[key] == str(expected)


@pytest.mark.parametrize("params", [{"ctx": "128.000"}, {"ctx": "1.000", "lang": "es"}, {"out": "1.000"},
                                    {"m_ctx": "128.000"}, {"fctx": "128.000"}])
def test_a_dot_before_three_digits_is_never_read_as_a_smaller_count(params):
    """128.000 is 128 in English and 128,000 in Spanish: refused, the warning naming both readings."""
    read = read_link(params)
    key, value = next(iter(params.items()))
    assert len(read.all_warnings) == 1
    w = read.all_warnings[0]
    digits = value.replace(".", "")
    assert f"'{key}' = '{value}'" in w and digits in w and f"{int(digits):,}".replace(",", " ") in w
    assert read.plan.context_tokens == PlanInputs().context_tokens and read.plan.output_tokens == 1_000


def test_the_ttl_the_traces_page_writes_is_read_back():
    for ttl in (t for t in DEFAULT_TTLS_S if math.isfinite(t)):
        params = encode("traces", TracesLink(ttl_s=ttl))
        assert params["t_ttl"] == f"{ttl:g}"
        read = read_link(params)
        assert read.all_warnings == [] and read.pages["traces"].ttl_s == ttl
    assert read_link({"t_ttl": "none"}).pages["traces"] == TracesLink()
    bad = read_link({"t_ttl": "61"})
    assert len(bad.all_warnings) == 1 and "'t_ttl' = '61'" in bad.all_warnings[0] and "3600" in bad.all_warnings[0]


def test_a_repeated_parameter_warns_once_and_the_last_value_is_read():
    read = read_link({"ctx": ["1", "2"]})
    assert read.plan.context_tokens == 2
    assert len(read.all_warnings) == 1 and "'ctx'" in read.all_warnings[0] and "2 times" in read.all_warnings[0]


def test_two_thousand_unknown_parameters_warn_once_and_are_counted():
    read = read_link({**{f"junk{i}": "1" for i in range(2_000)}, "hit": "0.3", "shared": "0.3"})
    assert read.plan.hit_rate == 0.3
    assert len(read.all_warnings) == 1 and "'junk0'" in read.all_warnings[0] and "1,995 more" in read.all_warnings[0]


@pytest.mark.parametrize("key", ["ctx", "m_model", "fgpus", "t_sample", "lang"])
def test_an_over_long_value_warns_and_is_not_cut(key):
    read = read_link({key: "1" * (MAX_PARAM_CHARS + 1)})
    assert len(read.all_warnings) == 1 and f"'{key}' is too long" in read.all_warnings[0]
    assert read.given == {}


def test_an_unknown_language_warns():
    read = read_link({"lang": "xx"})
    assert read.pages["app"] == AppLink()
    assert len(read.all_warnings) == 1 and "'lang' = 'xx'" in read.all_warnings[0] and "en, es" in read.all_warnings[0]


@pytest.mark.parametrize("params, key", [({"fgpus": "h900"}, "fgpus"), ({"fhit": "7"}, "fhit"),
                                         ({"fscale": "maybe"}, "fscale"), ({"m_tp": "0"}, "m_tp"),
                                         ({"m_model": "x"}, "m_model"), ({"t_sample": "x"}, "t_sample")])
def test_each_page_value_refused_warns_by_name(params, key):
    read = read_link(params)
    assert len(read.all_warnings) == 1 and f"'{key}'" in read.all_warnings[0]
    assert key not in read.given or read.given[key] != params[key]


def test_the_codec_knows_the_languages_of_the_catalogue():
    from kvplan_app.i18n import LANGUAGES

    assert set(LANGUAGE_CODES) == set(LANGUAGES)


def test_pages_parse_no_link_by_hand():
    """Views read and write links through the codec (kvplan_app.state.page_link / set_page_link) only."""
    for path in sorted((ROOT / "kvplan_app" / "views").glob("*.py")):
        assert "query_params" not in path.read_text(encoding="utf-8"), path.name


def test_modules_stay_small_and_the_codec_imports_no_catalogue():
    for name in ("links", "link_models", "state", "markdown", "notices"):
        path = ROOT / "kvplan_app" / f"{name}.py"
        assert len(path.read_text(encoding="utf-8").splitlines()) <= 500, name
        imported = {n.module for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                    if isinstance(n, ast.ImportFrom) and n.col_offset == 0}
        assert "kvplan_app.i18n" not in imported, name  # i18n may import these, never the other way at import time
