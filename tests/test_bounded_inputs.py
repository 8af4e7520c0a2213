"""A shared server and the CLI stay bounded and strict on hostile files and values.

* Every file argument is stat'ed first (regular files only), opened without blocking and read to at most its cap
  plus one byte: a device file (``/dev/zero``), a FIFO or a directory is refused at once with one line.
* Token counts accept ``1.5M``, ``1,500,000`` and ``1_500_000`` and refuse ambiguous forms (``1,5M``).
* Plan files are validated against their schema: no bool for an integer, no string for a bool, an integer
  ``schema_version``, no duplicate keys.
* JSON output never holds NaN; a zero measured figure is refused with its range, never explained as something else.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from planner.plan import make_inputs
from planner.errors import PlanInputError
from planner.reads import read_capped, require_regular_file
from planner.files.planfile import dumps as dump_plan_file
from planner.files.planfile import loads as load_plan_file
from planner.units import parse_tokens

ROOT = Path(__file__).resolve().parents[1]
HANG_GUARD_S = 60
"""A subprocess still running after this long hangs (a guard against a hang, not a timing assertion)."""


def _kvplan(*argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    script = "import sys; from planner.cli import main; sys.exit(main())"
    return subprocess.run([sys.executable, "-c", script, *argv], capture_output=True, text=True,
                          timeout=HANG_GUARD_S, env=env, cwd=ROOT)


def _one_line_refusal(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr[-2000:]
    for needle in needles:
        assert needle in lines[0], lines[0]


# ---------------------------------------------------------------------------
# Bounded file reads
# ---------------------------------------------------------------------------


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("argv,needle", [
    (["kv", "--config", "/dev/zero"], "config"),
    (["plan", "--plan", "/dev/zero"], "plan"),
    (["trace", "/dev/zero"], "trace"),
    (["kv", "--config", "/dev/urandom"], "config"),
])
def test_a_device_file_is_refused_with_one_line(argv, needle):
    _one_line_refusal(_kvplan(*argv), needle, "regular file")


@pytest.mark.parametrize("argv", [["kv", "--config"], ["plan", "--plan"], ["trace"]])
def test_a_fifo_is_refused_and_never_blocks(argv, fifo):
    _one_line_refusal(_kvplan(*argv, str(fifo)), "regular file")


@pytest.mark.parametrize("argv", [["kv", "--config"], ["plan", "--plan"], ["trace"]])
def test_a_directory_is_refused(argv, tmp_path):
    _one_line_refusal(_kvplan(*argv, str(tmp_path)), "regular file")


def test_read_capped_reads_a_small_file(tmp_path):
    path = tmp_path / "c.json"
    path.write_bytes(b"{}")
    assert read_capped(path, 10, "config") == b"{}"


def test_read_capped_refuses_one_byte_past_the_cap_and_names_the_field(tmp_path):
    path = tmp_path / "c.json"
    path.write_bytes(b"x" * 11)
    with pytest.raises(PlanInputError, match=r"^config: .*at most 10 bytes"):
        read_capped(path, 10, "config")
    path.write_bytes(b"x" * 10)
    assert len(read_capped(path, 10, "config")) == 10


def test_read_capped_refuses_a_missing_file_by_name(tmp_path):
    with pytest.raises(PlanInputError, match="config: .*nope.json.*readable"):
        read_capped(tmp_path / "nope.json", 10, "config")


def test_read_capped_refuses_devices_fifos_and_directories(fifo, tmp_path):
    for path in ("/dev/zero", "/dev/null", fifo, tmp_path):
        with pytest.raises(PlanInputError, match="a regular file"):
            read_capped(path, 10, "config")
        with pytest.raises(PlanInputError, match="a regular file"):
            require_regular_file(path, "trace")


def test_a_config_over_its_cap_is_refused_from_the_cli(tmp_path):
    path = tmp_path / "config.json"
    path.write_bytes(b" " * 1_000_001 + b"{}")  # 1,000,001 spaces + 2 B: past the 1,000,000 B config cap
    _one_line_refusal(_kvplan("kv", "--config", str(path)), "config", "1,000,000")


# ---------------------------------------------------------------------------
# Token counts: one parser, no ambiguous forms
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("text,tokens", [
    ("1.5m", 1_500_000), ("1,500,000", 1_500_000), ("1_500_000", 1_500_000), ("128k", 128_000),
    ("1e6", 1_000_000), ("131072", 131_072), ("1,000", 1_000), (" 2m ", 2_000_000), ("100,000,000", 100_000_000),
])
def test_token_counts_people_type(text, tokens):
    assert parse_tokens(text) == tokens


@pytest.mark.parametrize("text", ["1,5M", "1,5", "15,00,000", "1,0000", ",100", "100,", "1__000", "_100", "1_k",
                                  "1,500.5k", "1.5,000", "1e6,000", "1,000e3", "1,5k", "1.5M", "1.5K", ".5k",
                                  "1e3k", "5.k"])
def test_ambiguous_token_counts_are_refused(text):
    with pytest.raises(PlanInputError, match="context_tokens"):
        parse_tokens(text)


def test_cli_context_1_5m_with_comma_is_refused(capsys):
    proc = _kvplan("kv", "--model", "llama-3.1-8b", "--context", "1,5M")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "--context" in proc.stderr and "1,5M" in proc.stderr
    ok = _kvplan("kv", "--model", "llama-3.1-8b", "--context", "1,500,000", "--json")
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["context_tokens"] == 1_500_000


# ---------------------------------------------------------------------------
# Plan files: strict schema
# ---------------------------------------------------------------------------


def _plan_doc() -> dict:
    return json.loads(dump_plan_file(make_inputs()))


@pytest.mark.parametrize("field,value", [
    ("gpus_per_replica", True), ("context_tokens", True), ("state_in_hbm", "yes"), ("state_in_hbm", 1),
    ("hit_rate", True), ("gpus_per_replica", "2"), ("context_tokens", 1.0), ("hbm_gib", "80"),
])
def test_a_plan_file_value_of_the_wrong_json_type_is_refused(field, value):
    doc = _plan_doc()
    doc["inputs"][field] = value
    with pytest.raises(PlanInputError, match=f"plan file: inputs.{field}"):
        load_plan_file(json.dumps(doc))


@pytest.mark.parametrize("version", [1.0, True, "1"])
def test_schema_version_must_be_the_integer_1(version):
    doc = _plan_doc()
    doc["schema_version"] = version
    with pytest.raises(PlanInputError, match="plan file: schema_version"):
        load_plan_file(json.dumps(doc))


def test_duplicate_keys_are_refused():
    text = dump_plan_file(make_inputs())
    dup_top = text.replace('"schema_version": 2,', '"schema_version": 2, "schema_version": 2,', 1)
    with pytest.raises(PlanInputError, match="plan file: .*schema_version.*once"):
        load_plan_file(dup_top)
    dup_inner = text.replace('"hit_rate": ', '"hit_rate": 0.1, "hit_rate": ', 1)
    with pytest.raises(PlanInputError, match="plan file: .*hit_rate.*once"):
        load_plan_file(dup_inner)


def test_a_strict_plan_file_still_round_trips():
    inputs = make_inputs(hbm_gib=80.5, context_tokens=131_072, state_in_hbm=True, hit_rate=0.5, shared_prefix=0.5)
    assert load_plan_file(dump_plan_file(inputs)).inputs == inputs


# ---------------------------------------------------------------------------
# Zero and denormal figures: a clear error, never NaN or a wrong explanation
# ---------------------------------------------------------------------------


def test_measured_usable_kv_zero_is_refused_with_its_range():
    proc = _kvplan("plan", "--measured-usable-kv-gib", "0")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "measured-usable-kv-gib" in proc.stderr or "measured_usable_kv_gib" in proc.stderr
    assert "weights and reserve" not in proc.stderr


def test_measured_usable_kv_zero_is_refused_by_plan_inputs():
    with pytest.raises(PlanInputError, match="measured_usable_kv_gib"):
        make_inputs(measured_usable_kv_gib=0)


def test_trace_json_with_a_denormal_session_speed_is_valid_json_or_refused():
    proc = _kvplan("trace", "sample:conversation", "--session-decode-tokens-per-s", "5e-324", "--json")
    assert "Traceback" not in proc.stderr
    if proc.returncode == 0:
        json.loads(proc.stdout, parse_constant=lambda c: pytest.fail(f"{c} in JSON output"))
    else:
        _one_line_refusal(proc, "session-decode-tokens-per-s")


@pytest.mark.parametrize("path", sorted((ROOT / "planner").rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_json_writer_refuses_nan(path):
    """``json.dumps``/``json.dump`` in the package always pass ``allow_nan=False`` (NaN is not JSON)."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("dumps", "dump")
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "json"):
            flags = {k.arg: k.value for k in node.keywords}
            assert "allow_nan" in flags and isinstance(flags["allow_nan"], ast.Constant) \
                and flags["allow_nan"].value is False, \
                f"{path.name}:{node.lineno} json.{node.func.attr} without allow_nan=False"


# ---------------------------------------------------------------------------
# Frontier: a bounded grid, written in chunks
# ---------------------------------------------------------------------------


def test_a_grid_past_the_cap_is_refused_with_one_line_before_any_work():
    from planner.frontier import MAX_GRID_POINTS

    # 3 accelerators x 2,000 contexts x 1,700 hit rates = 10,200,000 points > 10,000,000 (the plan's own
    # context 1000 and hit rate 0 are on the axes already, and its GPU h200 among the accelerators)
    contexts = ",".join(str(1000 + i) for i in range(2000))
    hits = ",".join(f"{i / 1700:.6f}" for i in range(1700))
    proc = _kvplan("frontier", "--gpus", "h100-sxm,h200,b200", "--contexts", contexts, "--hit-rates", hits,
                   "--gpu", "h200", "--context", "1000", "--hit-rate", "0", "--json")
    _one_line_refusal(proc, "grid", "3 x 2,000 x 1,700 = 10,200,000 points", f"{MAX_GRID_POINTS:,}")
    assert proc.stdout == ""


def _small_grid():
    from planner.frontier import frontier_grid, parse_accelerators

    # 2 accelerators x 5 contexts x 3 hit rates = 30 rows; no output tokens makes some rates undefined (null)
    return frontier_grid(make_inputs(output_tokens=0, gpu_id="h200", context_tokens=1000, hit_rate=0.0, shared_prefix=0.0),
                         parse_accelerators("h200,custom:64"),
                         [1000, 2000, 4000, 8000, 16000], [0.0, 0.5, 0.9])


@pytest.mark.parametrize("rows", [1, 2, 7, 15, 1000])
def test_frames_in_chunks_are_the_whole_frame(rows):
    import pandas as pd

    grid = _small_grid()
    chunks = list(grid.frames(rows))
    assert all(len(c) <= max(rows, 1) for c in chunks)
    whole = grid.frame()
    pd.testing.assert_frame_equal(pd.concat(chunks, ignore_index=True), whole)


def test_cli_csv_in_chunks_is_the_export_bytes_of_the_whole_grid(monkeypatch, capfdbinary):
    import planner.frontier
    from planner.cli import main
    from planner.files.export import to_csv_bytes

    monkeypatch.setattr(planner.frontier, "FRAME_CHUNK_ROWS", 4)  # 30 rows -> 8 chunks
    argv = ["frontier", "--gpus", "h200,custom:64", "--contexts", "1000,2000,4000,8000,16000",
            "--hit-rates", "0,0.5,0.9", "--output-tokens", "0", "--csv", "-",
            "--gpu", "h200", "--context", "1000", "--hit-rate", "0", "--shared-prefix", "0"]  # the plan's own point is on the grid
    assert main(argv) == 0
    assert capfdbinary.readouterr().out == to_csv_bytes(_small_grid().frame())


def test_cli_json_in_chunks_parses_and_holds_every_row(monkeypatch, capsys):
    import math

    import planner.frontier
    from planner.cli import main

    monkeypatch.setattr(planner.frontier, "FRAME_CHUNK_ROWS", 4)
    argv = ["frontier", "--gpus", "h200,custom:64", "--contexts", "1000,2000,4000,8000,16000",
            "--hit-rates", "0,0.5,0.9", "--output-tokens", "0", "--json",
            "--gpu", "h200", "--context", "1000", "--hit-rate", "0", "--shared-prefix", "0"]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out, parse_constant=lambda c: pytest.fail(c))
    whole = _small_grid().frame()
    assert len(doc["rows"]) == len(whole) == 30
    assert [r["sessions_per_gpu"] for r in doc["rows"]] == whole["sessions_per_gpu"].tolist()
    assert all(r["request_rate_per_s"] is None for r in doc["rows"])  # 0 output tokens: no decode, no rate
    assert [r["accelerator"] for r in doc["rows"]] == [str(a) for a in whole["accelerator"]]
    assert all(not isinstance(v, float) or math.isfinite(v) for r in doc["rows"] for v in r.values())
