"""Fuzzing every input surface: links, plan inputs, config.json, traces, plan files, ProbeResult JSON.

Each drawn input must give a valid result (finite figures, sorted arrivals, a link that round-trips) or a
PlanInputError that names the field, the value and what is allowed, on one line; never another exception.
The strategies and checks are in ``tests/fuzz_surfaces.py`` (shared with ``bench/fuzz_counts.py``, which runs
them many more times); the directed cases below are the ones the issue names, with their expected messages.
A few AppTest runs open every page with hostile links. Under CI, Hypothesis runs the 'ci' profile (derandomized,
tests/conftest.py); locally the 'dev' profile draws afresh.
"""

from __future__ import annotations

import json
import math
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fuzz_surfaces as fs
from planner.plan import MIN_TOKENS_PER_S, PlanInputs, format_sessions, make_inputs, plan
from planner.hf.config import MAX_CONFIG_BYTES, layout_from_config, parse_config_text
from planner.errors import PlanInputError
from planner.files.planfile import MAX_PLAN_FILE_BYTES
from planner.files.planfile import loads as plan_loads
from planner.plan.placement import place_sessions
from planner.traces import MAX_TRACE_BYTES, read_trace
from planner.traces.readers import MAX_TRACE_SPAN_S
from markdown_text import outside_code_spans

SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
EXAMPLES = {"plan inputs": 400, "share links": 150, "config.json": 400, "trace files": 250, "plan files": 400,
            "probe results": 300, "token counts": 400, "cli": 150}
"""Inputs drawn per surface here (about 25 s on two cores); bench/fuzz_counts.py draws more."""


@pytest.mark.parametrize("surface", fs.SURFACES)
def test_every_input_is_refused_clearly_or_gives_a_sane_result(surface):
    strategy, check = fs.STRATEGIES[surface]

    @settings(max_examples=EXAMPLES[surface], suppress_health_check=SLOW)
    @given(strategy)
    def run(value):
        check(value)

    before = fs.COUNTS[surface]
    run()
    assert fs.COUNTS[surface] - before >= EXAMPLES[surface] // 2  # hypothesis may stop early on a small space
    assert fs.OUTCOMES[surface, "refused"] > 0  # the strategies do reach the refusals ...
    if surface != "share links":
        assert fs.OUTCOMES[surface, "valid"] > 0  # ... and the arithmetic behind the valid inputs


# ---------------------------------------------------------------------------
# Numbers: every float input at tiny, huge and denormal values
# ---------------------------------------------------------------------------

FLOAT_FIELDS = [n for n in PlanInputs.model_fields if fs.field_bounds(n)[0] is not None and not fs.field_bounds(n)[2]]
EXTREMES = [5e-324, 2.2250738585072014e-308, 1e-300, 1e-9, 1e300, 1e308, 1.7976931348623157e308]


def test_the_issue_denormal_prefill_is_refused_with_its_range():
    # was: ValueError "cannot convert float NaN to integer" (128 tokens / 5e-324 = inf; 0 x inf = NaN)
    with pytest.raises(PlanInputError) as info:
        plan(make_inputs(prefill_tokens_per_s=5e-324, pause_mean_s=30))
    assert info.value.field == "prefill_tokens_per_s" and info.value.value == 5e-324
    assert info.value.allowed == "a finite number in [0.001, 1,000,000,000]"


@pytest.mark.parametrize("value", EXTREMES, ids=repr)
@pytest.mark.parametrize("field", FLOAT_FIELDS)
def test_every_float_input_at_extremes_is_refused_or_finite(field, value):
    for extra in ({}, {"pause_mean_s": 30.0}, {"pause_mean_s": 30.0, "target_sessions_per_gpu": 10_000}):
        fields = {**extra, field: value}
        try:
            result = plan(make_inputs(**fields))
        except PlanInputError as exc:
            fs.assert_clear(exc)
            assert exc.field == field
            continue
        fs.assert_sane_plan(result)


def test_slowest_speeds_give_finite_seconds():
    # V4.1-Flash replays its 128-token window ring on a miss (planner/plan/core.py); at 0.001 tokens/s that is
    # 128 / 0.001 = 128,000 s per miss; exponential pauses of mean 30 s with a 60 s TTL miss with
    # P = exp(-60 / 30) = exp(-2) = 0.1353..., so 128,000 x exp(-2) = 17,322.9... s per turn.
    r = plan(make_inputs(prefill_tokens_per_s=MIN_TOKENS_PER_S, decode_tokens_per_s=MIN_TOKENS_PER_S,
                         session_decode_tokens_per_s=MIN_TOKENS_PER_S, pause_mean_s=30.0, ttl_s=60.0))
    assert r.replay_seconds_per_miss == 128_000.0
    assert r.replay_seconds_per_turn == pytest.approx(128_000 * math.exp(-2))
    fs.assert_sane_plan(r)


def test_a_nan_active_fraction_places_every_session_as_running():
    # NaN counts as 1 (all running): 10 sessions, 4 fit in HBM -> 4 admitted, 6 rejected (was: ValueError)
    t = place_sessions(10, hbm_sessions=4, active_fraction=float("nan"), usable_hbm_bytes=400, prefix_bytes=0,
                       num_prefixes=1, per_session_bytes=100, state_bytes=0, state_alive_fraction=float("nan"),
                       host_ram_bytes=0, ssd_bytes=0)
    assert (t.sessions, t.sessions_rejected, t.active_sessions, t.action) == (4, 6, 4, "reject")


# ---------------------------------------------------------------------------
# config.json: malformed, deep, huge
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("text,why", [
    ('{"num_hidden_layers": ' + "1" * 5_000 + "}", "ValueError"),       # Python refuses > 4,300 digits
    (fs.deep(100_000), "RecursionError"),                                # 100,000 nested lists
    (fs.deep(100_000, "dict"), "RecursionError"),
    ('{"num_hidden_layers": 32,', "line 1, column 26"),   # a JSONDecodeError, placed
    (b'{"a": "\xff"}', "not UTF-8 JSON text"),
])
def test_malformed_config_is_one_clear_error(text, why):
    with pytest.raises(PlanInputError) as info:
        parse_config_text(text)
    fs.assert_clear(info.value)
    assert info.value.field == "config" and why in info.value.allowed


def test_config_over_the_size_limit_is_refused_before_parsing():
    with pytest.raises(PlanInputError) as info:
        parse_config_text(" " * (MAX_CONFIG_BYTES + 1))
    assert info.value.field == "config" and "at most 1,000,000 bytes" in info.value.allowed


def test_a_value_too_deep_to_print_is_named_by_its_type():
    value: list = []
    for _ in range(5_000):  # deeper than repr() can go
        value = [value]
    with pytest.raises(PlanInputError) as info:
        layout_from_config({"num_hidden_layers": value})
    assert str(info.value).startswith("config.num_hidden_layers: <list> is not allowed")


# ---------------------------------------------------------------------------
# Traces: empty, too large, unsorted, bad lines, absurd spans
# ---------------------------------------------------------------------------

ROW = '{{"timestamp_s": {t}, "input_length": 100, "output_length": 10}}'


@pytest.mark.parametrize("data", [b"", b"\n\n  \n", b"\xef\xbb\xbf"])
def test_an_empty_trace_is_one_clear_error(data):
    with pytest.raises(PlanInputError) as info:
        read_trace(data, format="jsonl")
    fs.assert_clear(info.value)
    assert "at least one well-formed jsonl row; rows read: 0, malformed: 0" in info.value.allowed


def test_a_trace_over_the_size_limit_is_refused():
    with pytest.raises(PlanInputError) as info:
        read_trace(b"\n" * (MAX_TRACE_BYTES + 1))
    assert info.value.value == "64,000,001 B" and "at most 64,000,000 B" in info.value.allowed


def test_unsorted_timestamps_are_sorted_and_said():
    trace = read_trace("\n".join(ROW.format(t=t) for t in (30, 10, 20)).encode())
    assert trace.arrival_s.tolist() == [0.0, 10.0, 20.0]
    assert any("not in arrival order (1 steps back" in n for n in trace.notes)


def test_bad_lines_are_counted_never_fatal():
    lines = [ROW.format(t=0), '{"timestamp_s": 1, "input_length": ' + "9" * 5_000 + ', "output_length": 1}',
             fs.deep(100_000), '{"timestamp_s": "<img src=x onerror=alert(1)>", "input_length": 1, "output_length": 1}',
             ROW.format(t=2)]
    trace = read_trace("\n".join(lines).encode())  # detection skips nothing: the first line is JSON
    assert trace.num_requests == 2
    assert trace.malformed.num_malformed == 3
    reasons = dict(trace.malformed.examples)
    assert "Exceeds the limit (4300 digits)" in reasons[2] and "recursion" in reasons[3]
    assert reasons[4] == "timestamp_s is '<img src=x onerror=alert(1)>', not a finite number"


def test_a_deep_first_line_is_still_detected_and_skipped():
    trace = read_trace((fs.deep(100_000, "dict") + "\n" + ROW.format(t=0)).encode())
    assert trace.format == "jsonl" and trace.num_requests == 1 and trace.malformed.num_malformed == 1


@pytest.mark.parametrize("late", [1e13, 1e308, float(MAX_TRACE_SPAN_S) + 1])
def test_an_absurd_span_is_refused_before_per_minute_bins(late):
    # 1e13 s is 1.7e11 one-minute bins (1.2 TiB of counts): refused, naming the unit to check
    with pytest.raises(PlanInputError) as info:
        read_trace((ROW.format(t=-1e308 if late == 1e308 else 0) + "\n" + ROW.format(t=late)).encode())
    assert "at most 31,622,400 s (366 days)" in info.value.allowed and "timestamp unit" in info.value.allowed


def test_a_span_of_exactly_366_days_is_read():
    trace = read_trace((ROW.format(t=0) + "\n" + ROW.format(t=float(MAX_TRACE_SPAN_S))).encode())
    assert trace.duration_s == 31_622_400.0


def test_azure_rows_past_year_9999_or_over_the_csv_field_limit_are_malformed_rows():
    head = "TIMESTAMP,ContextTokens,GeneratedTokens"
    rows = [head, "2023-11-16 18:15:46.6805900,100,10", "0001-01-01 00:00:00+05:00,1,1",
            '"' + "x" * 200_000 + '",1,1', "2023-11-16 18:15:47.0000000,200,20"]
    trace = read_trace("\n".join(rows).encode())
    assert trace.num_requests == 2 and trace.malformed.num_malformed == 2
    reasons = dict(trace.malformed.examples)
    assert reasons[3] == "TIMESTAMP '0001-01-01 00:00:00+05:00' is outside the years 1 to 9999 in UTC"
    assert reasons[4] == "not a CSV row (field larger than field limit (131072))"


def test_trace_bytes_are_content_never_a_path():
    for content in (b"sample:conversation", b"/etc/passwd", b"../../etc/passwd"):
        with pytest.raises(PlanInputError) as info:
            read_trace(content)
        assert info.value.field == "trace" and info.value.value == "uploaded trace"


# ---------------------------------------------------------------------------
# Plan files and ProbeResult JSON
# ---------------------------------------------------------------------------


def test_plan_file_of_another_version_extra_or_missing_fields():
    doc = json.loads(json.dumps(fs.PLAN_FILE))
    with pytest.raises(PlanInputError, match=r"plan file: schema_version: 3 is not allowed; expected 2 or 1"):
        plan_loads(json.dumps({**doc, "schema_version": 3}))
    with pytest.raises(PlanInputError, match=r"plan file: comment: .* no such field"):
        plan_loads(json.dumps({**doc, "comment": "x"}))
    del doc["inputs"]["hit_rate"]
    with pytest.raises(PlanInputError, match=r"plan file: inputs.hit_rate: None .* \(missing: hit_rate\)"):
        plan_loads(json.dumps(doc))
    with pytest.raises(PlanInputError, match=r"plan file: 'plan.json' is not allowed; expected a JSON object; this file is not valid JSON \(RecursionError"):
        plan_loads(fs.deep(30_000))  # 60,000 bytes: under the 64 KiB limit, too deep for the parser
    assert len(fs.deep(30_000)) < MAX_PLAN_FILE_BYTES


def test_probe_result_nested_too_deep_is_a_plan_input_error():
    from planner.probe import load_probe_result

    with pytest.raises(PlanInputError):
        load_probe_result(fs.deep(100_000))


def test_probe_result_with_a_huge_integer_is_a_plan_input_error():
    from planner.probe import load_probe_result

    with pytest.raises(PlanInputError):
        load_probe_result('{"schema_version": 1, "total_bytes": ' + "1" * 5_000 + "}")


# ---------------------------------------------------------------------------
# Page-level link parsing: AppTest with hostile query parameters
# ---------------------------------------------------------------------------

UNESCAPED = re.compile(r"(?<!\\)<(img|script|b)\b|(?<!\\)!(?<!\\)\[|(?<!\\):red\[")
"""Markup that would render if a Markdown element quoted user text unescaped."""
MARKDOWN_ELEMENTS = ("markdown", "caption", "warning", "error", "info", "success", "title", "subheader", "header")
HOSTILE_LINKS = [
    {"page": "model", "m_tp": "²", "m_pp": "١٢", "m_ctx": "<img src=x onerror=alert(1)>", "m_fmt": ":red[x]",
     "m_model": "![x](http://example.invalid/x.png)"},
    {"page": "frontier", "fgpus": "h200,<b>x</b>", "fctx": "1e999", "fhit": "nan", "fheat": "../../etc/passwd",
     "fscale": "x" * 10_240},
    {"page": "traces", "t_sample": "../../etc/passwd", "t_ttl": "inf", "ptps": "5e-324"},
    {"page": "context", "ctx": "1e308", "hbm": "5e-324", "gpu": "custom", "dtps": "-0"},
    {"page": "probe", "stps": "1.7976931348623157e308", "measured_kv_bytes_per_token": "nan"},
    {"page": "recommend", "gpu": "custom", "acc": "id:<b>x</b>~name:![x](http://example.invalid/x.png)~mem:1e999",
     "ctx": "1e308"},
    {"page": "reconcile", "gpu": "custom", "acc": "id:h20~name::red[x] <script>~mem:1~bw:nan~tf:1" + "~" * 500},
    {"hit": "NaN", "ctx": "١٠٠٠", "prefixes": "1e7", "target": "-1", "<script>alert(1)</script>": "1",
     "x" * 10_240: "<img src=x onerror=alert(1)>", "pause": "5e-324", "ttl": "1e308"},
]
PAGE_KEYS = ["m_tp", "m_pp", "m_ctx", "m_fmt", "m_model", "fgpus", "fctx", "fhit", "fheat", "fscale", "t_sample",
             "t_ttl", "hit", "hbm", "ptps", "stps", "dtps", "ctx", "gpu", "model"]


def _open_page(params: dict):
    from streamlit.testing.v1 import AppTest

    fs.COUNTS["page links (AppTest)"] += 1
    at = AppTest.from_file("../app.py", default_timeout=120)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    for kind in MARKDOWN_ELEMENTS:
        for el in at.get(kind):
            assert not UNESCAPED.search(outside_code_spans(str(el.value))), (kind, str(el.value)[:200])
    return at


@pytest.mark.parametrize("params", HOSTILE_LINKS, ids=lambda p: p.get("page", "plan"))
def test_hostile_links_open_every_page_with_text_warnings(params):
    at = _open_page(params)
    assert at.title, "the page renders"
    if "page" not in params:  # the Plan page: its figures are the plan of the link's valid fields (here: none)
        sessions = next(m.value for m in at.metric if m.label.startswith("Sessions per GPU"))
        assert sessions == format_sessions(plan(PlanInputs()).sessions_per_gpu)


@settings(max_examples=6, suppress_health_check=SLOW)
@given(st.sampled_from(["model", "frontier", "traces", "context", "probe", ""]),
       st.dictionaries(st.sampled_from(PAGE_KEYS), st.sampled_from(fs.HOSTILE_TEXT), max_size=5))
def test_drawn_hostile_links_never_raise(page, params):
    _open_page({**params, **({"page": page} if page else {})})


def test_zz_inputs_tried_per_surface(capsys):
    """Last in the file: print the inputs tried per surface this session (RELIABILITY.md: bench/fuzz_counts.py)."""
    tried = ", ".join(f"{s} {fs.COUNTS[s]:,}" for s in (*fs.SURFACES, "page links (AppTest)"))
    with capsys.disabled():
        print(f"\nfuzz inputs tried this session: {tried}; 0 crashes")
    assert all(fs.COUNTS[s] > 0 for s in fs.SURFACES)
