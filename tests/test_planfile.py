"""Plan files: versioned JSON, exact export -> import, clear refusals, CLI --plan/--save, Plan page upload."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.plan import PlanInputs, make_inputs, plan
from planner.cli import main
from planner.errors import PlanInputError
from planner.files.planfile import (
    LEGACY_FIELDS,
    MAX_PLAN_FILE_BYTES,
    SCHEMA_VERSION,
    PlanFile,
    dumps,
    json_schema,
    kvplan_version,
    load,
    loads,
    plan_file,
    save,
    schema_text,
)

ROOT = Path(__file__).resolve().parents[1]
STAMP = datetime(2026, 11, 29, 9, 0, 0, tzinfo=timezone.utc)

# Every field away from its default, floats that do not survive a short decimal print.
ODD = PlanInputs(
    model_id="llama-3.1-70b", gpu_id="custom", gpus_per_replica=2, hbm_gib=77.123456789012345,
    gpu_memory_utilization=0.1 + 0.2, weights_gib=140.40129852294922, weight_format="fp8", reserve_gib=1 / 3,
    context_tokens=123_457, output_tokens=789, hit_rate=2 / 3, kv_format="fp8", state_in_hbm=True,
    decode_tokens_per_s=1234.5678, session_decode_tokens_per_s=33.3, shared_prefixes=4, pause_mean_s=12.5,
    pause_distribution="fixed", ttl_s=0.0, prefill_tokens_per_s=9999.99, host_ram_gib=0.0, ssd_gib=12345.678,
    host_link="pcie5-x16", ssd_link="nvme-gen4", target_sessions_per_gpu=0,
)


def _doc(inputs: PlanInputs = ODD) -> dict:
    return json.loads(dumps(inputs, created_at=STAMP))


def test_odd_inputs_are_a_valid_plan():
    plan(ODD)  # raises if a value above is not allowed


def test_dumps_writes_every_field_and_the_header():
    doc = _doc()
    assert doc["schema_version"] == SCHEMA_VERSION == 2
    assert doc["kvplan_version"] == kvplan_version()
    assert doc["created_at"] == "2026-11-29T09:00:00Z"
    assert list(doc["inputs"]) == list(PlanInputs.model_fields)
    assert json.loads(dumps(PlanInputs()))["inputs"]["hbm_gib"] is None  # None written as null, not left out


def test_export_then_import_is_exact():
    assert loads(dumps(ODD)).inputs == ODD
    assert loads(dumps(ODD)).inputs.hbm_gib == 77.123456789012345  # to the bit


finite = dict(allow_nan=False, allow_infinity=False)


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    hit=st.floats(0, 1, **finite), util=st.floats(0, 1, exclude_min=True, **finite),
    hbm=st.none() | st.floats(0, 100_000, exclude_min=True, **finite),
    ctx=st.integers(1, 100_000_000), reserve=st.floats(0, 100_000, **finite),
    pause=st.floats(0, 31_536_000, **finite), state=st.booleans(),
)
def test_export_then_import_is_exact_for_any_values(hit, util, hbm, ctx, reserve, pause, state):
    inputs = PlanInputs(hit_rate=hit, gpu_memory_utilization=util, hbm_gib=hbm, context_tokens=ctx,
                        reserve_gib=reserve, pause_mean_s=pause, state_in_hbm=state)
    back = loads(dumps(inputs))
    assert back.inputs == inputs
    assert back.inputs.model_dump_json() == inputs.model_dump_json()


def test_save_and_load_files(tmp_path):
    path = tmp_path / "plan.json"
    written = save(path, ODD, created_at=STAMP)
    assert load(path) == written
    assert load(path).created_at == STAMP
    assert path.read_bytes().decode("utf-8").endswith("}\n")


def _refused(doc, *needles: str) -> str:
    with pytest.raises(PlanInputError) as info:
        loads(json.dumps(doc))
    msg = str(info.value)
    for n in needles:
        assert n in msg, msg
    return msg


def test_another_schema_version_is_refused_naming_both():
    doc = _doc()
    doc["schema_version"] = 3
    _refused(doc, "schema_version", "3", "reads plan files of schema versions 1 and 2")


@pytest.mark.parametrize("version", [True, "1", 1.5, None, 0])
def test_schema_version_must_be_the_integer_1_or_2(version):
    doc = _doc()
    doc["schema_version"] = version
    _refused(doc, "schema_version")


def test_missing_schema_version_is_refused():
    doc = _doc()
    del doc["schema_version"]
    _refused(doc, "schema_version", "missing")


@pytest.mark.parametrize("field", ["inputs", "kvplan_version"])
def test_missing_top_level_field_is_refused(field):
    doc = _doc()
    del doc[field]
    _refused(doc, field, "missing")


def test_created_at_may_be_left_out_or_null():
    doc = _doc()
    del doc["created_at"]
    assert loads(json.dumps(doc)).created_at is None
    doc["created_at"] = None
    assert loads(json.dumps(doc)).inputs == ODD


def test_created_at_needs_a_zone():
    doc = _doc()
    doc["created_at"] = "2026-11-29T09:00:00"
    _refused(doc, "created_at")


@pytest.mark.parametrize("field", [f for f in PlanInputs.model_fields if f not in LEGACY_FIELDS])
def test_missing_input_field_is_refused(field):
    doc = _doc()
    del doc["inputs"][field]
    _refused(doc, f"inputs.{field}", "missing")


def test_extra_fields_are_refused():
    doc = _doc()
    doc["comment"] = "hi"
    _refused(doc, "comment", "no such field")
    doc = _doc()
    doc["inputs"]["hit_rat"] = 0.5
    _refused(doc, "inputs.hit_rat", "no such field", "hit_rate")


@pytest.mark.parametrize("field, value, words", [
    ("hit_rate", 2, "[0, 1]"),
    ("hbm_gib", -1, "(0, 100,000"),
    ("context_tokens", 1e99, "context_tokens"),
    ("kv_format", "fp3", "one of native"),
    ("state_in_hbm", "maybe", "state_in_hbm"),
    ("pause_distribution", "gaussian", "pause_distribution"),
])
def test_invalid_input_values_are_refused_naming_field_and_range(field, value, words):
    doc = _doc()
    doc["inputs"][field] = value
    _refused(doc, f"inputs.{field}", words)


@pytest.mark.parametrize("text", ["", "not json", "[1, 2]", "null", "1", '"x"', "{" * 5000, b"\xff\xfe\x00"])
def test_not_a_plan_document_is_refused(text):
    with pytest.raises(PlanInputError) as info:
        loads(text)
    assert str(info.value).startswith("plan file:")


def test_too_large_is_refused_before_parsing(tmp_path):
    big = " " * (MAX_PLAN_FILE_BYTES + 1)
    with pytest.raises(PlanInputError, match="at most 65,536 bytes"):
        loads(big)
    path = tmp_path / "big.json"
    path.write_text(big)
    with pytest.raises(PlanInputError, match="at most 65,536 bytes"):
        load(path)


def test_unreadable_and_unwritable_paths(tmp_path):
    with pytest.raises(PlanInputError, match="readable plan file"):
        load(tmp_path / "missing.json")
    with pytest.raises(PlanInputError, match="writable path"):
        save(tmp_path / "no" / "such" / "dir.json", ODD)


def test_plan_file_model_is_frozen_and_strict():
    pf = plan_file(ODD, created_at=STAMP)
    with pytest.raises(Exception):
        pf.schema_version = 1  # type: ignore[misc]
    assert isinstance(pf, PlanFile)


# --- the published schema -------------------------------------------------------------------------------


def test_published_schema_is_current():
    published = (ROOT / "docs" / "plan-schema.json").read_text(encoding="utf-8")
    assert published == schema_text(), "regenerate: python -m planner.files.planfile > docs/plan-schema.json"


def test_schema_requires_every_input_and_forbids_extras():
    schema = json_schema()
    assert schema["required"] == ["schema_version", "inputs", "kvplan_version"]
    assert schema["additionalProperties"] is False
    inputs = schema["$defs"]["PlanInputs"]
    assert inputs["required"] == list(PlanInputs.model_fields)
    assert inputs["additionalProperties"] is False
    assert schema["properties"]["schema_version"]["const"] == 2


def test_files_validate_against_the_published_schema():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "docs" / "plan-schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(_doc())
    jsonschema.Draft202012Validator(schema).validate(json.loads(dumps(PlanInputs())))
    bad = _doc()
    bad["schema_version"] = 3
    assert not jsonschema.Draft202012Validator(schema).is_valid(bad)
    bad = _doc()
    del bad["inputs"]["ttl_s"]
    assert not jsonschema.Draft202012Validator(schema).is_valid(bad)


def test_docs_describe_the_format():
    text = (ROOT / "docs" / "plan-files.md").read_text(encoding="utf-8")
    for needle in ("schema_version", "kvplan plan --plan", "--save", "plan-schema.json", "Download plan JSON",
                   "Load plan JSON"):
        assert needle in text


# --- CLI --------------------------------------------------------------------------------------------------


def test_cli_save_then_plan_reproduces_the_inputs(tmp_path, capsys):
    path = tmp_path / "plan.json"
    flags = ["--model", "deepseek-v4.1-flash", "--gpu", "h200", "--gpus-per-replica", "1", "--hbm-gib", "100",
             "--gpu-memory-utilization", "1", "--reserve-gib", "0", "--weights-gib", "0", "--context", "1000000",
             "--output-tokens", "0", "--hit-rate", "0.5"]
    assert main(["plan", *flags, "--save", str(path), "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["sessions_per_gpu"] == 240  # (100 x 2**30 - 445,000,000) // 445,000,000
    assert load(path).inputs == make_inputs(model_id="deepseek-v4.1-flash", gpu_id="h200", gpus_per_replica=1,
                                            hbm_gib=100, gpu_memory_utilization=1, reserve_gib=0, weights_gib=0,
                                            context_tokens=1_000_000, output_tokens=0, hit_rate=0.5)
    assert main(["plan", "--plan", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == first


def test_cli_flags_override_the_file(tmp_path, capsys):
    path = tmp_path / "plan.json"
    save(path, ODD.model_copy(update={"gpu_id": "h200", "hbm_gib": None}))
    again = tmp_path / "again.json"
    assert main(["plan", "--plan", str(path), "--hit-rate", "0.25", "--no-state-in-hbm", "--save", str(again)]) == 0
    capsys.readouterr()
    got = load(again).inputs
    assert got.hit_rate == 0.25 and got.state_in_hbm is False
    assert got.model_dump(exclude={"hit_rate", "state_in_hbm"}) == \
        ODD.model_copy(update={"gpu_id": "h200", "hbm_gib": None}).model_dump(exclude={"hit_rate", "state_in_hbm"})


def test_cli_refuses_a_bad_file_in_one_line(tmp_path, capsys):
    path = tmp_path / "v3.json"
    doc = _doc()
    doc["schema_version"] = 3
    path.write_text(json.dumps(doc))
    assert main(["plan", "--plan", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "schema_version" in err and "kvplan: error:" in err


def test_cli_unknown_model_in_a_file_is_a_clear_error(tmp_path, capsys):
    path = tmp_path / "m.json"
    doc = _doc(PlanInputs())
    doc["inputs"]["model_id"] = "gpt-17"
    path.write_text(json.dumps(doc))
    assert main(["plan", "--plan", str(path)]) == 2
    assert "gpt-17" in capsys.readouterr().err


# --- Plan page --------------------------------------------------------------------------------------------


def _app():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    assert not at.exception
    return at


def test_plan_page_loads_a_plan_file_exactly():
    at = _app()
    inputs = ODD.model_copy(update={"gpu_id": "h200", "model_id": "deepseek-v4.1-flash", "weights_gib": None})
    at.file_uploader(key="plan_upload_json").upload("team.json", dumps(inputs).encode(), "application/json").run()
    assert not at.exception
    assert at.session_state["plan_inputs"] == inputs
    assert any("Loaded team" in s.value for s in at.success)
    at.run()  # the page's widgets now hold the file's values: the plan stays the file's
    assert at.session_state["plan_inputs"] == inputs
    assert at.query_params["hbm"] == "77.12345678901235"  # repr of the float: exact


def test_plan_page_refuses_a_bad_file_and_keeps_the_plan():
    at = _app()
    before = at.session_state["plan_inputs"]
    doc = _doc(PlanInputs())
    doc["inputs"]["model_id"] = "<img src=x onerror=alert(1)>"
    at.file_uploader(key="plan_upload_json").upload("bad.json", json.dumps(doc).encode(), "application/json").run()
    assert not at.exception
    assert at.session_state["plan_inputs"] == before
    errors = [e.value for e in at.error]
    assert errors and "not loaded" in errors[0]
    assert "\\<img" in errors[0] and not re.search(r"(?<!\\)[<>]", errors[0])  # Markdown-escaped: shown as text


def test_plan_page_offers_the_plan_as_json():
    at = _app()
    labels = [b.label for b in at.get("download_button")]
    assert "Download plan JSON" in labels and "Download plan CSV" in labels
    assert at.file_uploader(key="plan_upload_json").label == "Load plan JSON"


def test_a_file_written_before_attention_parallelism_and_bindings_still_loads():
    # a schema-1 file from before these fields: data-parallel attention (what kvplan assumed when it was written),
    # and its measured figure bound to the file's own model and format
    inputs = make_inputs(model_id="deepseek-v4.1-flash", measured_kv_bytes_per_token=445).model_dump(mode="json")
    for f in ("shared_prefix", "attention_parallelism", "pipeline_parallel_size", "measured_kv_model_id",
              "measured_kv_format",
              *[k for k in inputs if k.startswith("measured_usable_kv_") and k != "measured_usable_kv_gib"]):
        inputs.pop(f)
    pf = loads(json.dumps({"schema_version": 1, "inputs": inputs, "kvplan_version": "0.1.0"}))
    assert pf.inputs.attention_parallelism == "dp" and pf.inputs.pipeline_parallel_size == 1
    assert (pf.inputs.measured_kv_model_id, pf.inputs.measured_kv_format) == ("deepseek-v4.1-flash", "native")
    assert plan(pf.inputs).kv_source == "measured"


def test_cli_drops_a_measured_figure_of_another_model_in_one_stderr_line(tmp_path, capsys):
    from planner.cli import main

    path = tmp_path / "p.json"
    assert main(["plan", "--model", "deepseek-v4.1-flash", "--measured-kv-bytes-per-token", "445",
                 "--save", str(path)]) == 0
    capsys.readouterr()
    assert main(["plan", "--plan", str(path), "--model", "llama-3.1-8b", "--json"]) == 0
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert data["kv_source"] == "architecture" and data["inputs"]["measured_kv_bytes_per_token"] is None
    assert err.count("\n") == 1 and "445" in err and "deepseek-v4.1-flash" in err and "llama-3.1-8b" in err
    # the same model again: the file's figure applies, no notice
    assert main(["plan", "--plan", str(path), "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["kv_source"] == "measured" and err == ""


def test_a_user_accelerator_round_trips_through_a_plan_file():
    acc = "id:h20~name:NVIDIA H20~mem:102625181696~bw:4000~tf:148~hl:64~price:1.8"
    inputs = PlanInputs(gpu_id="custom", accelerator=acc)
    assert loads(dumps(inputs)).inputs == inputs
    doc = _doc()
    del doc["inputs"]["accelerator"]  # a file written before the field existed
    assert loads(json.dumps(doc)).inputs.accelerator is None


def test_a_version_1_hit_rate_becomes_the_shared_prefix_with_a_notice(tmp_path, capsys):
    # Version 1 read hit_rate as a prefix shared by every session (memory). The same figure becomes shared_prefix,
    # so the file gives the sessions it gave: the golden case of docs/capacity.md, 100 GiB, 1M tokens, hit 0.5,
    # no output, 1 GPU -> floor((107,374,182,400 - 445,000,000) / 445,000,000) = 240 sessions.
    from planner.cli import main

    inputs = make_inputs(model_id="deepseek-v4.1-flash", gpu_id="custom", hbm_gib=100, gpu_memory_utilization=1,
                         weights_gib=0, reserve_gib=0, context_tokens=1_000_000, hit_rate=0.5, output_tokens=0,
                         gpus_per_replica=1, attention_parallelism="dp").model_dump(mode="json")
    inputs.pop("shared_prefix")
    text = json.dumps({"schema_version": 1, "inputs": inputs, "kvplan_version": "0.1.0"})
    pf = loads(text)
    assert (pf.inputs.shared_prefix, pf.inputs.hit_rate) == (0.5, 0.5)
    assert "schema version 1" in pf.notice and "shared_prefix 0.5" in pf.notice
    assert plan(pf.inputs).sessions_per_gpu == 240
    assert "notice" not in json.loads(dumps(pf)) and json.loads(dumps(pf))["schema_version"] == 2
    path = tmp_path / "v1.json"
    path.write_text(text)
    assert main(["plan", "--plan", str(path), "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["sessions_per_gpu"] == 240
    assert err.startswith("kvplan: note: plan file of schema version 1") and err.count("\n") == 1


def test_a_version_1_file_cannot_carry_a_shared_prefix():
    inputs = PlanInputs().model_dump(mode="json")
    _refused({"schema_version": 1, "inputs": inputs, "kvplan_version": "0.1.0"}, "shared_prefix")
