"""Probe page (AppTest): renders, says plainly when there is no GPU, reads an uploaded ProbeResult,
rejects a forged one with an error while the app keeps running, runs a small CPU probe on request,
and puts the measured bytes per token next to the plan's."""

import json
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

sys.path.insert(0, str(Path(__file__).parent))
from test_probe_layout import result_dict  # noqa: E402  (the hand-written V4.1 result at 1,000 tokens)


def _probe_page():
    at = AppTest.from_file("../app.py", default_timeout=120)
    at.run()
    at.switch_page("kvplan_app/views/probe.py")
    at.run()
    assert not at.exception, at.exception
    return at


def _upload(at, payload: bytes, name="probe.json"):
    at.file_uploader(key="probe_upload").set_value((name, payload, "application/json")).run()
    assert not at.exception, at.exception
    return at


def _metric(at, label_start):
    for m in at.metric:
        if m.label.startswith(label_start):
            return m.value
    raise AssertionError(f"no metric {label_start!r}: {[m.label for m in at.metric]}")


def test_renders_and_states_the_device():
    at = _probe_page()
    assert any("Live probe" in t.value for t in at.title)
    text = " ".join(x.value for x in [*at.info, *at.success])
    assert "GPU" in text     # "No GPU on this server" / "torch is not installed" / "GPU: <name>"
    assert any("No probe yet" in c.value for c in at.caption)


def test_uploading_a_valid_result_shows_it():
    at = _upload(_probe_page(), json.dumps(result_dict()).encode())
    assert not at.error
    # 890,000 B / 1,000 tokens = 890 B; measured 897,120 B / 1,000 = 897.12 B
    assert _metric(at, "Planner: bytes per token") == "890 B"
    assert _metric(at, "Measured: bytes per token") == "897.12 B"
    assert len(at.dataframe) == 2


def test_uploading_a_forged_result_shows_an_error_and_keeps_running():
    forged = result_dict()
    forged["measured_bytes_per_token"] = 89.712           # 10x below measured_bytes / num_tokens
    at = _upload(_probe_page(), json.dumps(forged).encode(), "forged.json")
    errors = [e.value.replace("\\", "") for e in at.error]   # Markdown-escaped text
    assert any("forged.json not loaded" in e and "measured_bytes_per_token" in e for e in errors), errors
    assert any("No probe yet" in c.value for c in at.caption)   # nothing forged is shown
    at.run()
    assert not at.exception


def test_uploading_garbage_shows_an_error():
    at = _upload(_probe_page(), b"\x00\x01 not json", "garbage.json")
    assert any("garbage.json not loaded" in e.value.replace("\\", "") for e in at.error)


def test_measured_coefficient_replaces_the_plans():
    at = _upload(_probe_page(), json.dumps(result_dict()).encode())
    at.button(key="probe_apply").click().run()
    assert not at.exception, at.exception
    # the default plan is V4.1-Flash native (890 B/token); the upload measured 897,120 B / 1,000 tokens = 897.12
    assert _metric(at, "Planner (DeepSeek V4.1-Flash, nvfp4): KV bytes per token") == "890 B"  # 2.5 x 356
    assert _metric(at, "Plan now (measured): KV bytes per token") == "897.12 B"
    inputs = at.session_state["plan_inputs"]
    assert (inputs.model_id, inputs.kv_format, inputs.measured_kv_bytes_per_token) == \
        ("deepseek-v4.1-flash", "nvfp4", 897.12)
    assert at.query_params["mkv"] in ("897.12", ["897.12"])   # travels in the share link
    at.button(key="probe_clear").click().run()
    assert at.session_state["plan_inputs"].measured_kv_bytes_per_token is None


def test_cpu_probe_runs_on_request():
    pytest.importorskip("torch", reason="running the probe needs torch")
    at = _probe_page()
    if any(c.key == "probe_cpu_ok" for c in at.checkbox):
        assert at.button[0].disabled  # the form's submit button: disabled until the CPU run is confirmed
        at.checkbox(key="probe_cpu_ok").check().run()
    assert not at.button[0].disabled
    at.text_input(key="probe_tokens").set_value("1024")
    at.radio(key="probe_device").set_value("cpu")
    at.button[0].click().run()    # the form's submit button
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    # 1,024 tokens = 64 whole blocks: 890 B/token measured too (per-tensor scales kept apart)
    assert _metric(at, "Planner: bytes per token") == "890 B"
    assert _metric(at, "Measured: bytes per token") == "890 B"
