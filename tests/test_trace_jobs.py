"""The Traces page's work in the worker pool (kvplan_app/trace_jobs.py): small results, a shared cache, cancel.

Workers are real processes (spawn). No timing assertions.
"""

from __future__ import annotations

import pickle
import time

import pytest

from kvplan_app import trace_jobs
from kvplan_app.jobs import JobCancelled, JobPool, JobSettings, wait_in_steps
from planner.traces import load_sample, reuse_profile


@pytest.fixture
def pool():
    p = JobPool(JobSettings(preload=("planner.traces",), workers=1, queue=4))
    trace_jobs._RESULTS.clear()
    yield p
    trace_jobs._RESULTS.clear()
    p.shutdown()


def sample_kwargs(**changes):
    return {"sample": "conversation", "data": None, "fmt": "detect", "block_tokens": 16, "name": "",
            "model_id": "deepseek-v4.1-flash", "kv_format": None, "usable_kv_bytes": 60e9, "gpu_name": "H200",
            "ttl_s": None, "session_decode_tokens_per_s": 50.0, "ttl_label": "no TTL", **changes}


def test_a_trace_analysed_in_a_worker_comes_back_small_and_identical_inputs_share_one_job(pool):
    updates = []
    first = trace_jobs.shared_analysis(("k",), sample_kwargs(), pool=pool,
                                       on_update=lambda f, stage, pos: updates.append((f, stage, pos)))
    # the same figures the planner gives in this process (the hit rate at unlimited capacity, no TTL)
    profile = reuse_profile(load_sample("conversation"))
    assert first.unlimited.num_hit_blocks == profile.hits(None, None).num_hit_blocks
    assert first.num_requests == load_sample("conversation").num_requests
    assert len(pickle.dumps(first)) < 2_000_000   # results, not the per-reference arrays
    assert set(first.figures) == {"lengths", "arrivals", "concurrency", "curve", "ttl_curve", "cache_bytes"}
    again = trace_jobs.shared_analysis(("k",), sample_kwargs(), pool=pool)
    assert again is first   # served from the shared cache: no second job
    assert all(0.0 <= f <= 1.0 and pos >= 0 for f, _s, pos in updates)


def test_a_job_nobody_waits_for_any_more_is_cancelled(pool):
    job = pool.submit(wait_in_steps, {"seconds": 60.0}, with_progress=True)
    while not pool.started(job):   # bounded by the job's own 60 s
        time.sleep(0.05)
    queued = pool.submit(wait_in_steps, {"seconds": 60.0}, with_progress=True)
    pool.cancel(queued)                 # waiting: dropped
    pool.cancel(job)                    # running: stops at its next progress report
    with pytest.raises(JobCancelled):
        pool.result(job)
    if not queued.future.cancelled():  # the executor had already handed it to the worker's call queue (one
        with pytest.raises(JobCancelled):  # extra call per worker): its cancel flag stops it at its first report
            pool.result(queued)
    assert pool.result(pool.submit(wait_in_steps, {"seconds": 0.1}, with_progress=True)) == 0.1  # worker goes on


def test_a_session_that_stops_waiting_cancels_the_shared_job(pool, monkeypatch):
    monkeypatch.setattr(trace_jobs, "CANCEL_GRACE_S", 0.2)
    class Stop(Exception):
        pass

    def stop(*_):
        raise Stop  # what Streamlit raises in a script whose session ended

    entry_job = pool.submit(wait_in_steps, {"seconds": 60.0}, with_progress=True)
    trace_jobs._RESULTS[("slow",)] = trace_jobs._Entry(job=entry_job, waiters=0, used=time.monotonic())
    with pytest.raises(Stop):
        trace_jobs.shared_analysis(("slow",), {}, pool=pool, on_update=stop)
    with pytest.raises(JobCancelled):    # after the grace period, nobody having asked again
        pool.result(entry_job)
    time.sleep(0.1)
    assert ("slow",) not in trace_jobs._RESULTS


def test_a_rerun_that_asks_again_within_the_grace_period_keeps_the_job(pool, monkeypatch):
    monkeypatch.setattr(trace_jobs, "CANCEL_GRACE_S", 30.0)

    class Rerun(Exception):
        pass

    def rerun(*_):
        raise Rerun

    entry_job = pool.submit(wait_in_steps, {"seconds": 1.0}, with_progress=True)
    trace_jobs._RESULTS[("again",)] = trace_jobs._Entry(job=entry_job, waiters=0, used=time.monotonic())
    with pytest.raises(Rerun):
        trace_jobs.shared_analysis(("again",), {}, pool=pool, on_update=rerun)
    assert trace_jobs.shared_analysis(("again",), {}, pool=pool) == 1.0   # the same job, finished
