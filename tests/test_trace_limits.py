"""Huge numbers, duplicate keys and the upload's own name in trace and config errors (hand-derived inputs)."""

import io

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from planner.errors import PlanInputError
from planner.hf.config import parse_config_text
from planner.traces import read_trace

GOOD = b'{"timestamp_s": 2, "input_length": 5, "output_length": 1}\n'


@pytest.mark.parametrize("fmt,key", [("jsonl", "timestamp_s"), ("jsonl", "timestamp_ms"), ("mooncake", "timestamp")])
def test_309_digit_timestamp_is_a_malformed_row_not_overflow(fmt, key):
    big = "9" * 309   # > 1.797e308: no float64 holds it
    line = f'{{"{key}": {big}, "input_length": 5, "output_length": 1, "hash_ids": [1]}}\n'.encode()
    good = f'{{"{key}": 2, "input_length": 5, "output_length": 1, "hash_ids": [2]}}\n'.encode()
    trace = read_trace(line + good, format=fmt, block_tokens=16 if fmt == "jsonl" else None)
    assert trace.num_requests == 1
    (line_no, reason), = trace.malformed.examples
    assert line_no == 1
    assert str(reason) == f"{key} is a 309-digit number, outside [-1.798e+308, 1.798e+308]"


def test_huge_csv_count_named_with_its_range():
    csv = ("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46," + "9" * 309 + ",1\n"
           "2023-11-16 18:15:47,10,1\n")
    trace = read_trace(csv.encode(), format="azure")
    assert trace.num_requests == 1
    assert str(trace.malformed.examples[0][1]) == "ContextTokens is a 309-digit number, outside [0, 1,000,000,000]"


def test_parquet_decimal_and_uint64_are_named_by_value():
    table = pa.table({"timestamp_ms": pa.array([10**37, 1000], pa.decimal128(38, 0)), "input_length": [1, 1],
                      "output_length": [1, 1], "hash_ids": pa.array([[2**64 - 1], [1]], pa.list_(pa.uint64()))})
    buf = io.BytesIO()
    pq.write_table(table, buf)
    trace = read_trace(buf.getvalue(), format="jsonl", block_tokens=16)
    assert trace.num_requests == 1   # row 2 is fine: its decimal 1000 ms is read as 1 s
    assert "Decimal" not in trace.malformed.summary()
    assert str(trace.malformed.examples[0][1]) == "hash_ids holds an integer outside the signed 64-bit range"


def test_duplicate_key_in_a_jsonl_row_is_refused_naming_it():
    dup = b'{"timestamp_s": 1, "input_length": 5, "input_length": 7, "output_length": 1}\n'
    trace = read_trace(dup + GOOD, format="jsonl")
    assert trace.num_requests == 1 and trace.input_tokens.tolist() == [5]   # the good row, not a silent 7
    assert str(trace.malformed.examples[0][1]).startswith("duplicate key 'input_length'")


def test_duplicate_key_in_config_json_is_refused_naming_it():
    with pytest.raises(PlanInputError) as err:
        parse_config_text('{"num_hidden_layers": 2, "num_hidden_layers": 80}')
    assert err.value.field == "duplicate key" and err.value.value == "num_hidden_layers"


def test_non_object_config_and_row_named_in_json_words():
    with pytest.raises(PlanInputError) as err:
        parse_config_text("[1]")
    assert err.value.value == "array"
    trace = read_trace(b"[1]\n" + GOOD, format="jsonl")
    assert str(trace.malformed.examples[0][1]) == "a JSON array, not an object"


def test_errors_name_the_upload_not_the_server_file(tmp_path):
    spooled = tmp_path / "trace-k3j4h5"   # as kvplan_app.trace_jobs.spool_upload names it
    spooled.write_bytes(b"PAR1 not really parquet")
    with pytest.raises(PlanInputError) as err:
        read_trace(str(spooled), name="my-trace.parquet")
    assert "trace-k3j4h5" not in str(err.value) and "my-trace.parquet" in str(err.value)
    spooled.write_bytes(b'{"timestamp_s": "x"}\n')
    with pytest.raises(PlanInputError) as err:
        read_trace(str(spooled), format="jsonl", name="mine.jsonl")
    assert "trace-k3j4h5" not in str(err.value) and "mine.jsonl" in str(err.value)
