"""The one CSV writer (planner.files.export) and the documented CSV contracts (docs/csv.md).

Formula injection: OWASP "CSV Injection" lists =, +, -, @, tab (0x09) and
carriage return (0x0D) as the characters that make a spreadsheet evaluate a
cell; the mitigation is a leading single quote on such text cells.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from planner.plan import PLAN_CSV_COLUMNS, make_inputs, plan, plan_frame
from planner.cli import main
from planner.files.export import FORMULA_PREFIXES, neutralise, safe_frame, to_csv_bytes

ROOT = Path(__file__).resolve().parents[1]

# The plan of the share link: 100 GiB, all of it for KV, 1M tokens, half of them a shared prefix.
# 1M tokens x 890 B/token = 890,000,000 B per session; prefix 500k tokens = 445,000,000 B stored once;
# (100 x 2**30 - 445,000,000) // 445,000,000 = (107,374,182,400 - 445,000,000) // 445,000,000 = 240 sessions.
LINK_FLAGS = ["--model", "deepseek-v4.1-flash", "--gpu", "h200", "--gpus-per-replica", "1", "--hbm-gib", "100",
              "--gpu-memory-utilization", "1", "--reserve-gib", "0", "--weights-gib", "0", "--context", "1000000",
              "--output-tokens", "0", "--hit-rate", "0.5", "--shared-prefix", "0.5"]
LINK_INPUTS = dict(model_id="deepseek-v4.1-flash", gpu_id="h200", gpus_per_replica=1, hbm_gib=100.0,
                   gpu_memory_utilization=1.0, reserve_gib=0.0, weights_gib=0.0, context_tokens=1_000_000,
                   output_tokens=0, hit_rate=0.5, shared_prefix=0.5)


@pytest.mark.parametrize("prefix", FORMULA_PREFIXES)
def test_every_formula_prefix_is_neutralised(prefix):
    cell = f"{prefix}HYPERLINK(\"http://x\")"
    assert neutralise(cell) == "'" + cell
    out = to_csv_bytes(pd.DataFrame({"name": [cell]})).decode("utf-8")
    row = next(iter(pd.read_csv(io.StringIO(out), dtype=str, keep_default_na=False)["name"]))
    assert row == "'" + cell


def test_numbers_stay_numbers_and_only_strings_are_neutralised():
    df = pd.DataFrame({"kv_bytes": [-1, 890_000_000], "kv_gib": [-0.5, 0.8288770914077759],
                       "label": ["-1", "h200"], "mixed": [-3, "-3"]})
    text = to_csv_bytes(df).decode("utf-8")
    assert text == ("kv_bytes,kv_gib,label,mixed\n"
                    "-1,-0.5,'-1,-3\n"
                    "890000000,0.8288770914077759,h200,'-3\n")


def test_headers_are_neutralised_too():
    assert to_csv_bytes(pd.DataFrame({"=cmd": [1]})) == b"'=cmd\n1\n"


def test_utf8_one_header_row_newlines_no_bom_no_index():
    df = pd.DataFrame({"model": ["Überlänge 模型", "a,b\"c"], "kv_bytes": [1, 2]})
    data = to_csv_bytes(df)
    assert not data.startswith(b"\xef\xbb\xbf")
    text = data.decode("utf-8")
    assert "\r" not in text
    lines = text.splitlines()
    assert lines[0] == "model,kv_bytes"
    assert lines[1] == "Überlänge 模型,1"
    assert lines[2] == '"a,b""c",2'
    assert len(lines) == 3


def test_missing_values_are_empty_cells():
    df = pd.DataFrame({"request_rate_per_s": [None], "ttft_s": [float("nan")], "x": [pd.NA]}, dtype=object)
    assert to_csv_bytes(df) == b"request_rate_per_s,ttft_s,x\n,,\n"


def test_safe_frame_leaves_the_input_alone():
    df = pd.DataFrame({"a": ["=1"]})
    safe_frame(df)
    assert df["a"][0] == "=1"


def test_floats_round_trip_exactly():
    values = [0.1 + 0.2, 1 / 3, 2.0**-40, 1e300, 140.40129852294922]
    text = to_csv_bytes(pd.DataFrame({"v": values})).decode()
    # parsed by Python itself: pandas before 2.2 reads "0.30000000000000004" back as 0.3 by default
    assert [float(line) for line in text.splitlines()[1:]] == values


def test_plan_csv_has_units_in_the_headers_and_the_link_numbers():
    frame = plan_frame(plan(make_inputs(**LINK_INPUTS)))
    text = to_csv_bytes(frame).decode("utf-8")
    header, row, *rest = text.split("\n")
    assert rest == [""]
    assert header.split(",") == list(PLAN_CSV_COLUMNS)
    assert {"hbm_bytes_per_gpu", "hbm_gib_per_gpu", "usable_kv_bytes_per_gpu", "session_kv_bytes_per_gpu",
            "session_kv_gib_per_gpu", "hit_rate", "shared_prefix", "weight_format"} <= set(PLAN_CSV_COLUMNS)
    got = dict(zip(header.split(","), row.split(",")))
    assert got["hbm_bytes_per_gpu"] == "107374182400"  # 100 x 2**30
    assert got["hbm_gb_per_gpu"] == "107.0" and got["hbm_gib_per_gpu"] == "100.0"  # 107.374 GB, 3 digits
    assert got["session_kv_bytes_per_gpu"] == "890000000"  # 1,000,000 x 890 B (docs/sources.md)
    assert got["session_kv_gb_per_gpu"] == "0.89"
    assert got["shared_prefix_bytes_per_gpu"] == "445000000"  # 500k x 890 B
    assert got["sessions_per_gpu"] == "240"  # see LINK_FLAGS
    assert (got["hit_rate"], got["shared_prefix"], got["weight_format"]) == ("0.5", "0.5", "fp8")
    assert got["kv_bytes_per_token_per_gpu"] == "890.0"


def test_plan_csv_names_per_gpu_and_per_replica_and_rounds_to_what_it_means():
    # Llama 3.1 70B on 4 x H100 under tp: 327,680 B/token for the model, 81,920 per GPU at TP 4
    # (tests/test_attention_parallelism.py); usable 39,521,245,337 B per GPU -> 39.5 GB; 3 sessions per replica,
    # 0.75 per GPU; hit rate 1: rate per GPU min(5, 0.75 / 20 s) = 0.0375 /s, per replica x 4 = 0.15 /s
    r = plan(make_inputs(model_id="llama-3.1-70b", gpu_id="h100-sxm", gpus_per_replica=4, context_tokens=128_000,
                         hit_rate=1, shared_prefix=0))
    text = to_csv_bytes(plan_frame(r)).decode("utf-8")
    got = dict(zip(*[line.split(",") for line in text.splitlines()]))
    assert got["kv_bytes_per_token_per_gpu"] == "81920.0"
    assert got["usable_kv_bytes_per_gpu"] == "39521245337" and got["usable_kv_gb_per_gpu"] == "39.5"
    assert (got["sessions_per_replica"], got["sessions_per_gpu"]) == ("3", "0.75")
    assert got["request_rate_per_s_per_gpu"] == "0.0375" and got["request_rate_per_s_per_replica"] == "0.15"
    assert got["weight_format"] == "bf16"
    for name in PLAN_CSV_COLUMNS:  # a byte column is per GPU, or says what else it is
        if "bytes" in name and name not in ("host_link_bytes_per_s", "ssd_link_bytes_per_s"):
            assert name.endswith("_per_gpu"), name


def test_cli_csv_stdout_is_the_export_bytes(capfdbinary):
    assert main(["plan", *LINK_FLAGS, "--csv", "-"]) == 0
    out = capfdbinary.readouterr().out
    assert out == to_csv_bytes(plan_frame(plan(make_inputs(**LINK_INPUTS))))


def test_cli_csv_file_is_the_export_bytes(tmp_path, capsys):
    target = tmp_path / "plan.csv"
    assert main(["plan", *LINK_FLAGS, "--csv", str(target)]) == 0
    assert target.read_bytes() == to_csv_bytes(plan_frame(plan(make_inputs(**LINK_INPUTS))))
    assert "sessions per GPU:    240" in capsys.readouterr().out


def test_cli_csv_to_a_pipe_is_byte_exact():
    done = subprocess.run([sys.executable, "-c", "import sys; from planner.cli import main; sys.exit(main())", "plan", *LINK_FLAGS, "--csv", "-"],
                          capture_output=True, check=True, cwd=ROOT)
    assert done.stdout == to_csv_bytes(plan_frame(plan(make_inputs(**LINK_INPUTS))))


def test_cli_csv_unwritable_path_is_one_line_error(capsys):
    assert main(["plan", "--csv", "/nonexistent-dir/plan.csv"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("kvplan: error: csv:") and "\n" not in err


def _documented_columns(section: str) -> list[str]:
    """Column names in the first column of the table under ``## <section>`` in docs/csv.md."""
    text = (ROOT / "docs" / "csv.md").read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(section)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert match, f"docs/csv.md has no section '## {section}'"
    return re.findall(r"^\| `([^`]+)` \|", match.group(1), re.M)


def test_plan_csv_columns_are_documented_in_order():
    assert _documented_columns("Plan CSV") == list(PLAN_CSV_COLUMNS)


def test_frontier_grid_columns_are_documented_in_order():
    from planner.frontier import FRAME_COLUMNS

    assert _documented_columns("Frontier grid CSV") == list(FRAME_COLUMNS)


def test_model_breakdown_columns_are_documented_in_order():
    from planner.kv.models import BREAKDOWN_COLUMNS

    assert _documented_columns("Model breakdown CSV") == list(BREAKDOWN_COLUMNS)
