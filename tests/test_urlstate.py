"""URL state: every plan input in the link, parsed by PlanInputs; tampered links warn and fall back per field.

Pure codec tests first (kvplan_app.links, no session), then AppTests of the router
(app.py): share links, page switches, the HBM slider round trip, bad input.
"""

from __future__ import annotations

import re
import typing
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from planner.plan import PlanInputs, plan
from planner.catalog.entries import GPUS, models
from planner.errors import PlanInputError
from planner.kv.formats import FORMATS
from planner.kv.models import NATIVE, WEIGHT_BYTES_PER_PARAM
from planner.catalog.tiers import AUTO, HOST_LINKS, SSD_LINKS
from kvplan_app.share import share_url
from kvplan_app.links import (
    FIELDS_BY_KEY,
    MAX_PARAM_CHARS,
    PAGE_PARAM,
    PAGE_QUERY_KEYS,
    QUERY_KEYS,
    encode_value,
    inputs_from_query,
    query_keys,
    to_query,
)
from kvplan_app.markdown import escape_markdown
from markdown_text import outside_code_spans, shown, visible_autolinks

ROOT = Path(__file__).resolve().parents[1]

# The issue's share link: 100 GiB all for KV, 1M tokens, half of them a shared prefix, no output.
# Session: 1M x 890 B = 890,000,000 B; prefix 500k x 890 = 445,000,000 B stored once; each session adds its
# 500k-token tail = 445,000,000 B; (100 x 2**30 - 445,000,000) // 445,000,000 = 107,374,182,400 // ... = 240.
LINK = {"model": "deepseek-v4.1-flash", "gpu": "h200", "gpus": "1", "hbm": "100", "util": "1", "reserve": "0",
        "weights": "0", "ctx": "1000000", "out": "0", "hit": "0.5", "shared": "0.5"}
LINK_SESSIONS = 240
OLD_LINK = {k: v for k, v in LINK.items() if k != "shared"}
"""A link written when one hit rate meant a prefix shared by every session (no ``shared`` key)."""


# --- keys -------------------------------------------------------------------------------------------------


def test_every_field_has_one_short_url_safe_key():
    keys = query_keys()
    assert list(keys) == list(PlanInputs.model_fields)
    assert len(set(keys.values())) == len(keys), "two fields share a key"
    for field, key in keys.items():
        assert re.fullmatch(r"[a-z][a-z0-9_]*", key), key
    assert set(QUERY_KEYS) <= set(PlanInputs.model_fields), "QUERY_KEYS names a field PlanInputs lacks"
    assert FIELDS_BY_KEY == {v: k for k, v in keys.items()}


def test_page_keys_do_not_collide_with_plan_keys_or_each_other():
    owned = [k for keys in PAGE_QUERY_KEYS.values() for k in keys]
    assert len(owned) == len(set(owned))
    assert not set(owned) & set(FIELDS_BY_KEY)
    assert PAGE_PARAM not in set(owned) | set(FIELDS_BY_KEY)


# --- codec ------------------------------------------------------------------------------------------------


def test_values_are_written_readably_and_exactly():
    assert encode_value(True) == "1" and encode_value(False) == "0"
    assert encode_value(100.0) == "100"
    assert encode_value(0.1 + 0.2) == "0.30000000000000004"
    assert encode_value(140.40129852294922) == "140.40129852294922"
    assert encode_value(1_000_000) == "1000000"
    assert encode_value("fp8") == "fp8"


def test_an_old_link_reads_its_hit_rate_as_the_shared_prefix_too_with_one_notice():
    # the same 240 sessions as when it was written (docs/capacity.md golden case), and a notice saying why
    inputs, warnings = inputs_from_query(OLD_LINK)
    assert (inputs.hit_rate, inputs.shared_prefix) == (0.5, 0.5)
    assert plan(inputs).sessions_per_gpu == LINK_SESSIONS
    assert len(warnings) == 1 and "shared prefix" in warnings[0] and "hit rate 0.5" in warnings[0]
    inputs, warnings = inputs_from_query({**OLD_LINK, "hit": "0.2"})
    assert inputs.shared_prefix == 0.2 and len(warnings) == 1


def test_the_issue_link_parses_without_warnings_and_plans_240_sessions():
    inputs, warnings = inputs_from_query(LINK)
    assert warnings == []
    assert inputs.hbm_gib == 100.0 and inputs.hit_rate == 0.5 and inputs.weights_gib == 0.0
    assert plan(inputs).sessions_per_gpu == LINK_SESSIONS


def test_a_link_without_hbm_means_the_reported_total():
    inputs, _ = inputs_from_query({k: v for k, v in LINK.items() if k != "hbm"})
    assert inputs.hbm_gib is None
    assert plan(inputs).hbm_bytes == 143_771 * 2**20  # H200 nvidia-smi total, MiB (public nvidia-smi output)
    assert "hbm" not in to_query(inputs)


def _values(field: str, info) -> st.SearchStrategy:
    """Valid values for one PlanInputs field, from its annotation and bounds."""
    choices = {"model_id": list(models()), "gpu_id": [*GPUS, "custom"], "kv_format": [NATIVE, *FORMATS],
               "weight_format": [None, *WEIGHT_BYTES_PER_PARAM], "host_link": [AUTO, *HOST_LINKS],
               "ssd_link": [AUTO, *SSD_LINKS]}
    if field in choices:
        return st.sampled_from(choices[field])
    ann = info.annotation
    args = typing.get_args(ann)
    optional = type(None) in args
    base = next((a for a in args if a is not type(None)), ann) if optional else ann
    if typing.get_origin(base) is typing.Literal:
        strat = st.sampled_from(typing.get_args(base))
    elif base is bool:
        strat = st.booleans()
    elif base in (int, float):
        lo = hi = None
        lo_open = False
        for m in info.metadata:
            lo = getattr(m, "ge", None) if getattr(m, "ge", None) is not None else lo
            if getattr(m, "gt", None) is not None:
                lo, lo_open = m.gt, True
            hi = getattr(m, "le", None) if getattr(m, "le", None) is not None else hi
        if base is int:
            strat = st.integers(int(lo) + (1 if lo_open else 0), int(hi))
        else:
            strat = st.floats(lo, hi, exclude_min=lo_open, allow_nan=False, allow_infinity=False)
    else:  # a new free-text field: its default only
        strat = st.just(info.default)
    return st.none() | strat if optional else strat


def plan_inputs() -> st.SearchStrategy:
    """Any PlanInputs, every field drawn (new fields are picked up automatically)."""
    def build(d):
        if d["gpus_per_replica"] % d["pipeline_parallel_size"]:
            d["pipeline_parallel_size"] = 1  # stages divide the replica's GPUs
        return PlanInputs(**d)

    return st.fixed_dictionaries({f: _values(f, i) for f, i in PlanInputs.model_fields.items()}).map(build)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan_inputs())
def test_every_field_round_trips_through_the_link_exactly(inputs):
    try:
        plan(inputs)
    except (PlanInputError, ArithmeticError, ValueError):
        assume(False)  # not a plan the UI could show (ValueError: planner.plan on extreme values)
    back, warnings = inputs_from_query(to_query(inputs))
    assert warnings == []
    assert back == inputs
    assert to_query(back) == to_query(inputs)


def _other_value(field: str, info):
    """A valid value for ``field`` other than its default, chosen without randomness (odd floats on purpose)."""
    choices = {"model_id": list(models()), "gpu_id": list(GPUS), "kv_format": [NATIVE, *FORMATS],
               "weight_format": list(WEIGHT_BYTES_PER_PARAM), "host_link": [AUTO, *HOST_LINKS],
               "ssd_link": [AUTO, *SSD_LINKS], "engine_version": ["0.19.0"]}
    if field in choices:
        return next(c for c in choices[field] if c != info.default)
    if field == "accelerator":  # a device reporting 97,871 MiB = 102,625,181,696 B
        return "id:h20~name:NVIDIA H20~mem:102625181696~bw:4000~tf:148~hl:64~price:1.8"
    args = typing.get_args(info.annotation)
    optional = type(None) in args
    base = next(a for a in args if a is not type(None)) if optional else info.annotation
    if typing.get_origin(base) is typing.Literal:
        return next(c for c in typing.get_args(base) if c != info.default)
    if base is bool:
        return not info.default
    hi = next((m.le for m in info.metadata if getattr(m, "le", None) is not None), 1e6)
    if base is int:
        return 1 if info.default not in (None, 1) else 2
    return min(hi, 1.0) / 3  # 0.333..., in every float field's range (all allow (0, 1])


@pytest.mark.parametrize("field", list(PlanInputs.model_fields))
def test_each_field_alone_round_trips(field):
    """One non-default value per field, so a field the link drops fails here by name."""
    info = PlanInputs.model_fields[field]
    value = _other_value(field, info)
    assert value != info.default
    figure = {"measured_kv": "measured_kv_bytes_per_token", "measured_usable_kv": "measured_usable_kv_gib"}
    bound_to = next((f for prefix, f in figure.items() if field.startswith(prefix + "_") and field != f), None)
    if bound_to is not None:  # a binding travels with its measured figure (alone it is dropped)
        value = {"measured_kv_model_id": "llama-3.1-8b", "measured_kv_format": "fp8",
                 "measured_usable_kv_gpu_id": "b200", "measured_usable_kv_weights": "x"}.get(field, value)
        inputs = PlanInputs(**{bound_to: 0.5, field: value})
        back, warnings = inputs_from_query(to_query(inputs))
        assert back == inputs or (getattr(back, bound_to) is None and len(warnings) == 1)  # rebased away, said once
        return
    # a user-defined accelerator describes the custom GPU, so it travels with gpu=custom
    inputs = PlanInputs(**{field: value, **({"gpu_id": "custom"} if field == "accelerator" else {})})
    try:
        plan(inputs)
    except PlanInputError:
        pytest.skip(f"{field}={value!r} is not a plan on its own")
    back, warnings = inputs_from_query(to_query(inputs))
    assert warnings == [] and getattr(back, field) == value and back == inputs


# --- tampered links ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("key, value, field", [
    ("hit", "2", "hit_rate"),
    ("hit", "-0.1", "hit_rate"),
    ("hit", "nan", "hit_rate"),
    ("hbm", "-1", "hbm_gib"),
    ("hbm", "inf", "hbm_gib"),
    ("hbm", "0", "hbm_gib"),
    ("ctx", "1e99", "context_tokens"),
    ("ctx", "0", "context_tokens"),
    ("ctx", "1.5", "context_tokens"),
    ("gpus", "0", "gpus_per_replica"),
    ("util", "0", "gpu_memory_utilization"),
    ("fmt", "fp3", "kv_format"),
    ("state_hbm", "maybe", "state_in_hbm"),
    ("model", "<script>alert(1)</script>", "model_id"),
    ("gpu", "h9000", "gpu_id"),
    ("model", "x" * 10_000, "model_id"),
])
def test_one_bad_parameter_warns_by_name_and_keeps_the_rest(key, value, field):
    params = {**LINK, key: value}
    inputs, warnings = inputs_from_query(params)
    default = PlanInputs.model_fields[field].default
    assert getattr(inputs, field) == default
    assert len(warnings) == 1 and f"'{key}'" in warnings[0]
    assert len(warnings[0]) < 400  # long values are cut
    good, _ = inputs_from_query(LINK)
    assert inputs.model_dump(exclude={field}) == good.model_dump(exclude={field})
    plan(inputs)  # a valid plan


def test_the_issue_bad_link_gives_warnings_and_a_valid_plan():
    inputs, warnings = inputs_from_query({"hit": "2", "hbm": "-1", "ctx": "1e99", "model": "<script>"})
    assert inputs == PlanInputs()
    assert sorted(re.findall(r"'(\w+)'", " ".join(w.split(" = ")[0] for w in warnings))) == \
        ["ctx", "hbm", "hit", "model"]
    plan(inputs)


def test_unknown_keys_are_named_in_one_warning_and_counted():
    inputs, warnings = inputs_from_query({**LINK, **{f"junk{i}": "1" for i in range(300)}})
    assert inputs == inputs_from_query(LINK)[0]
    assert len(warnings) == 1
    assert "'junk0'" in warnings[0] and "295 more" in warnings[0]


def test_ten_kilobytes_of_junk_is_refused_politely():
    inputs, warnings = inputs_from_query({"x" * 10_000: "y" * 10_000, "hit": "0.3", "ctx": "9" * 10_000})
    assert inputs.hit_rate == 0.3
    assert inputs.context_tokens == PlanInputs().context_tokens
    assert all(len(w) < 400 for w in warnings)
    assert any("'ctx' is too long" in w for w in warnings)


def test_control_characters_are_shown_escaped():
    _, warnings = inputs_from_query({"fmt": "a\nb\x1b[31m"})
    assert "\n" not in warnings[0] and "\x1b" not in warnings[0]
    assert "a\\nb\\x1b" in warnings[0]


def test_values_at_the_length_limit_are_read():
    inputs, warnings = inputs_from_query({"ctx": "0" * (MAX_PARAM_CHARS - 7) + "1000000"})
    assert warnings == [] and inputs.context_tokens == 1_000_000


def test_empty_and_none_clear_optional_fields():
    inputs, warnings = inputs_from_query({"hbm": "", "weights": "none", "wfmt": "None"})
    assert warnings == [] and inputs.hbm_gib is None and inputs.weights_gib is None and inputs.weight_format is None


def test_repeated_keys_read_the_last_value():
    inputs, _ = inputs_from_query({"hit": ["0.1", "0.2"]})
    assert inputs.hit_rate == 0.2


def test_other_pages_keys_are_not_unknown():
    keys = {k: "1" for owned in PAGE_QUERY_KEYS.values() for k in owned}
    _, warnings = inputs_from_query({**LINK, **keys}, frozenset(keys))
    assert warnings == []


def test_escape_markdown_shows_text_as_typed():
    text = "<script>alert(1)</script> ![x](http://e/x.png) [a](javascript:x) :red[b] $x$ **c** `d`"
    escaped = escape_markdown(text)
    assert not re.search(r"(?<!\\)[<>\[\]()!:$*`]", outside_code_spans(escaped))
    assert shown(escaped) == text and visible_autolinks(escaped) == []


# --- share links ------------------------------------------------------------------------------------------


def test_share_url_names_the_page_in_the_path():
    url = share_url("https://tools.example.com/kvplan", {"model": "deepseek-v4.1-flash", "hit": "0.5"}, "frontier")
    assert url == "https://tools.example.com/kvplan/frontier?model=deepseek-v4.1-flash&hit=0.5"
    assert share_url(None, {"hit": "0.5"}) == "?hit=0.5"
    assert share_url(None, {"hit": "0.5"}, "model") == "model?hit=0.5"
    assert share_url("http://127.0.0.1:8501", {"a": "x y&z"}) == "http://127.0.0.1:8501/?a=x%20y%26z"
    assert share_url("http://127.0.0.1:8501", {"hit": "0.5", PAGE_PARAM: "model"}, "traces") == \
        "http://127.0.0.1:8501/traces?hit=0.5"  # a stale page= never travels


# --- the router in AppTest --------------------------------------------------------------------------------


def _app(params: dict | None = None, url: str | None = None):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    if params:
        at.query_params = dict(params)
    if url:
        at.context = {"url": url}
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def _metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label.startswith(label))


def _share_link(at) -> str:
    codes = [c.value for c in at.sidebar.code]
    assert codes, "no share link in the sidebar"
    return codes[-1]


def test_opening_a_link_reproduces_the_plan():
    at = _app(LINK)
    assert _metric(at, "Sessions per GPU") == f"{LINK_SESSIONS:,}"
    assert all("link parameter" not in w.value.lower() for w in at.warning)
    for key, value in LINK.items():
        assert at.query_params[key] == value


def test_the_share_link_is_the_full_url_of_this_host_and_reopens_the_same_plan():
    at = _app(LINK, url="https://kvplan.example.com/team")
    link = _share_link(at)
    parts = urlsplit(link)
    assert (parts.scheme, parts.netloc, parts.path) == ("https", "kvplan.example.com", "/team/")
    params = dict(parse_qsl(parts.query))
    assert params == {k: str(v) for k, v in at.query_params.items()}
    again = _app(params)
    assert _metric(again, "Sessions per GPU") == f"{LINK_SESSIONS:,}"
    assert again.session_state["plan_inputs"] == at.session_state["plan_inputs"]


def test_moving_a_slider_updates_the_link_and_the_numbers():
    at = _app(LINK)
    at.slider(key="plan_shared_prefix").set_value(0.75).run()
    assert at.query_params["shared"] == "0.75"
    # tail 250k tokens x 890 = 222,500,000 B; prefix 667,500,000 B:
    # (107,374,182,400 - 667,500,000) // 222,500,000 = 479
    assert _metric(at, "Sessions per GPU") == "479"
    assert "shared=0.75" in _share_link(at)
    # the hit rate saves prefill, not memory: the sessions stay, the link follows
    at.slider(key="plan_hit_rate").set_value(0.9).run()
    assert at.query_params["hit"] == "0.9" and _metric(at, "Sessions per GPU") == "479"


def test_hbm_slider_round_trips_exactly():
    at = _app({"gpu": "h200"})  # no hbm: the device's reported total, 140.40 GiB
    assert "hbm" not in at.query_params
    at.slider(key="plan_hit_rate").set_value(0.6).run()
    assert "hbm" not in at.query_params  # untouched slider at the rounded figure is still "reported"
    at = _app({"gpu": "h200", "hbm": "140.4"})  # set explicitly to the rounded figure: kept as set
    assert at.query_params["hbm"] == "140.4"
    at.slider(key="plan_hit_rate").set_value(0.6).run()
    assert at.query_params["hbm"] == "140.4"
    at = _app({"gpu": "h200", "hbm": "77.123456789"})  # off the slider's 0.1 grid: exact
    assert at.query_params["hbm"] == "77.123456789"
    at.slider(key="plan_hbm_gib").set_value(99.5).run()  # the user moves it: now set
    assert at.query_params["hbm"] == "99.5"
    at.selectbox(key="plan_gpu_id").set_value("b200").run()  # another GPU: its own reported total
    assert "hbm" not in at.query_params


def test_linked_values_outside_the_widgets_ranges_survive():
    params = {"hbm": "2000", "util": "0.01", "reserve": "5000", "dtps": "0.5", "stps": "0.01", "hit": "0.555"}
    at = _app(params)
    for key, value in params.items():
        assert at.query_params[key] == value
    at.slider(key="plan_hit_rate").set_value(0.5).run()
    assert not at.exception
    assert {k: at.query_params[k] for k in params if k != "hit"} == {k: v for k, v in params.items() if k != "hit"}


def test_page_switches_keep_the_link():
    """AppTest keeps the query across switch_page; the browser test checks Streamlit's clearing and the restore."""
    at = _app({**LINK, "m_tp": "2"})
    before = dict(at.query_params)
    for page in ("kvplan_app/views/model.py", "kvplan_app/views/frontier.py", "kvplan_app/views/context.py", "kvplan_app/views/traces.py", "kvplan_app/views/plan.py"):
        at.switch_page(page).run()
        assert not at.exception, (page, [e.message for e in at.exception])
        for key in LINK:
            assert at.query_params[key] == before[key], (page, key)
        assert at.query_params["m_tp"] == "2", page
    assert _metric(at, "Sessions per GPU") == f"{LINK_SESSIONS:,}"


def test_every_key_a_page_writes_is_declared_in_page_query_keys():
    """A key only a page knew would be reported unknown on a link opened elsewhere."""
    at = _app()
    declared = {k for keys in PAGE_QUERY_KEYS.values() for k in keys} | set(FIELDS_BY_KEY)
    for page in sorted(p.name for p in (ROOT / "kvplan_app" / "views").glob("*.py")):
        at.switch_page(f"kvplan_app/views/{page}").run()
        assert set(at.query_params) <= declared, (page, "add the page's link to kvplan_app.link_models.LINKS")


def test_a_link_opens_the_page_it_names():
    at = _app({**LINK, PAGE_PARAM: "model"})
    assert [t.value for t in at.title][0].startswith("Model")
    assert PAGE_PARAM not in at.query_params
    assert at.query_params["hit"] == "0.5"


def test_a_link_naming_no_page_warns_and_shows_the_plan():
    at = _app({PAGE_PARAM: "<b>x</b>"})
    assert any("names no page" in w.value for w in at.warning)
    assert at.session_state["url_last_page"] == ""


BAD_LINKS = [
    {"hit": "2"},
    {"hbm": "-1"},
    {"ctx": "1e99"},
    {"model": "<script>alert(1)</script>"},
    {"junk": "j" * 10_240},
    {"j" * 10_240: "1"},
    {"hit": "2", "hbm": "-1", "ctx": "1e99", "model": "<script>alert(1)</script>", "zz": "<img src=x>"},
    {"gpu": "custom"},
    {"model": "![x](http://example.invalid/x.png)", "fmt": ":red[big]", "wfmt": "$x$"},
]


@pytest.mark.parametrize("params", BAD_LINKS, ids=lambda p: ",".join(k[:8] for k in p))
def test_bad_links_warn_and_show_a_valid_plan_as_text(params):
    at = _app(params)
    warnings = [w.value for w in at.warning if "link parameter" in w.value.lower()]
    assert warnings, "no warning"
    for w in warnings:
        assert not re.search(r"(?<!\\)[<>\[\]!:$]", outside_code_spans(w)), w  # Markdown escaped: rendered as text
        assert visible_autolinks(w) == [], w
    assert _metric(at, "Sessions per GPU")  # a plan is shown
    for key in params:  # the URL now carries valid values only
        assert at.query_params.get(key) in (None, to_query(PlanInputs()).get(key))
    at.run()  # warnings are shown once
    assert not [w for w in at.warning if "link parameter" in w.value.lower()]
