"""Uploads bounded by what their job will cost (planner/traces/budget.py) and one session's share of the pool.

Hand-derived counts; workers are real processes (spawn); no timing assertions.
"""

from __future__ import annotations

import gzip
import io
import threading

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kvplan_app import trace_jobs
from kvplan_app.jobs import JobPool, JobSettings, SessionBusyError
from kvplan_app.sample_jobs import wait_in_steps
from planner.errors import PlanInputError
from planner.traces import budget


def tiny_parquet(rows: int, refs_per_row: int = 0, row_group: int = 1 << 20) -> bytes:
    cols = {"timestamp_s": np.zeros(rows), "input_length": np.full(rows, 16 * max(refs_per_row, 1), np.int64),
            "output_length": np.ones(rows, np.int64)}
    if refs_per_row:
        offsets = np.arange(0, rows * refs_per_row + 1, refs_per_row, dtype=np.int32)
        cols["hash_ids"] = pa.ListArray.from_arrays(offsets, pa.array(np.arange(rows * refs_per_row)))
    buf = io.BytesIO()
    pq.write_table(pa.table(cols), buf, row_group_size=row_group)
    return buf.getvalue()


def test_parquet_rows_and_refs_come_from_the_footer():
    cost = budget.estimate_cost(tiny_parquet(3000, refs_per_row=2, row_group=1000))
    assert (cost.rows, cost.refs) == (3000, 6000)   # 3 row groups of 1,000 rows x 2 ids
    assert cost.row_group_bytes > 0


def test_text_rows_counted_through_gzip():
    line = b'{"timestamp_s": 1, "input_length": 32, "output_length": 1, "hash_ids": [1, 2]}\n'
    cost = budget.estimate_cost(gzip.compress(line * 500))
    assert cost.rows == 500
    assert cost.refs == 500 * 4   # an upper bound: one per comma (3 between fields, 1 between ids)


def test_too_many_rows_refused_naming_count_limit_and_the_way_out():
    with pytest.raises(PlanInputError) as err:
        budget.check_upload_cost(tiny_parquet(2000), name="big.parquet", max_rows=1000)
    text = str(err.value)
    assert "big.parquet" in text and "2,000 rows" in text and "at most 1,000 rows" in text
    assert "kvplan trace" in text
    assert "Parquet" not in text.split("expected")[-1].split(";")[0]   # the cause is the rows, not the file


def test_the_memory_cap_lowers_the_row_limit():
    # 1,000 rows x 160 B = 160,000 B > 100,000 B of job memory (100,000 // 160 = 625): refused under max_rows
    with pytest.raises(PlanInputError, match="at most 625 rows"):
        budget.check_upload_cost(tiny_parquet(1000), memory_bytes=100_000)


def test_too_many_refs_refused_with_a_sample_rate():
    with pytest.raises(PlanInputError) as err:
        budget.check_upload_cost(tiny_parquet(1000, refs_per_row=4), max_refs=1000)
    assert "4,000" in str(err.value) and "--sample-rate 0.25" in str(err.value)   # 1,000 / 4,000
    assert budget.check_upload_cost(tiny_parquet(1000, refs_per_row=4), max_refs=1000, sample_rate=0.25).refs == 4000


@pytest.fixture
def pool():
    p = JobPool(JobSettings(preload=("planner.traces",), workers=1, queue=4))
    trace_jobs._RESULTS.clear()
    yield p
    trace_jobs._RESULTS.clear()
    p.shutdown()


def kwargs(**changes):
    return {"sample": None, "path": None, "fmt": "detect", "block_tokens": 16, "name": "",
            "model_id": "deepseek-v4.1-flash", "kv_format": None, "usable_kv_bytes": 60e9, "gpu_name": "H200",
            "ttl_s": None, "session_decode_tokens_per_s": 50.0, "ttl_label": "no TTL", **changes}


def test_a_huge_upload_is_refused_before_a_job_and_another_session_is_served(pool, monkeypatch):
    monkeypatch.setattr(budget, "MAX_UPLOAD_ROWS", 1000)
    submitted = []
    real_submit = pool.submit
    monkeypatch.setattr(pool, "submit", lambda *a, **k: submitted.append(k.get("owner")) or real_submit(*a, **k))
    big = tiny_parquet(5000)   # 5,000 rows: 5x the (lowered) limit
    errors, results = [], []

    def big_session():
        try:
            trace_jobs.shared_analysis(("big",), kwargs(name="big.parquet"), upload=big, pool=pool, owner="A")
        except PlanInputError as exc:
            errors.append(exc)

    def small_session():
        results.append(trace_jobs.shared_analysis(("small",), kwargs(sample="conversation"), pool=pool, owner="B"))

    threads = [threading.Thread(target=big_session), threading.Thread(target=small_session)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(errors) == 1 and "5,000 rows" in str(errors[0]) and "big.parquet" in str(errors[0])
    assert submitted == ["B"]   # the big one never reached the pool: no worker read it
    assert results[0].num_requests > 0


def test_one_session_cannot_hold_every_slot(pool):
    a1 = pool.submit(wait_in_steps, {"seconds": 30.0}, with_progress=True, owner="A")
    a2 = pool.submit(wait_in_steps, {"seconds": 30.0}, with_progress=True, owner="A")
    with pytest.raises(SessionBusyError) as err:
        pool.submit(wait_in_steps, {"seconds": 30.0}, with_progress=True, owner="A")
    assert "2 job(s)" in str(err.value) and "at most 2 per session" in str(err.value)
    b = pool.submit(wait_in_steps, {"seconds": 0.1}, with_progress=True, owner="B")   # another session still can
    for job in (a1, a2):
        pool.cancel(job)
    assert pool.result(b) == 0.1


def test_a_cpu_probe_pool_is_bounded_by_a_share_of_host_memory():
    from kvplan_app.jobs import check_probe_pool

    settings = JobSettings(probe_host_share=0.05)
    total = 64 * 2**30                       # 5 % of 64 GiB = 3.2 GiB = 3,435,973,836 B
    check_probe_pool(3_435_973_836, "cpu", total_bytes=total, settings=settings)
    with pytest.raises(PlanInputError, match="KVPLAN_PROBE_HOST_SHARE"):
        check_probe_pool(3_435_973_837, "cpu", total_bytes=total, settings=settings)
    check_probe_pool(100 * 2**30, "cuda", total_bytes=total, settings=settings)   # GPU: the probe's own cap


def test_the_new_settings_are_read_and_checked():
    s = JobSettings.from_env({"KVPLAN_JOB_PER_SESSION": "3", "KVPLAN_PROBE_HOST_SHARE": "0.1"})
    assert (s.per_session, s.probe_host_share) == (3, 0.1)
    with pytest.raises(ValueError, match="KVPLAN_PROBE_HOST_SHARE"):
        JobSettings.from_env({"KVPLAN_PROBE_HOST_SHARE": "0.95"})
