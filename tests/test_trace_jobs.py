"""The Traces page's work in the worker pool (kvplan_app/trace_jobs.py): small results, a shared cache, cancel.

Workers are real processes (spawn). No timing assertions.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import stat
import sys
import time
from concurrent.futures.process import EXTRA_QUEUED_CALLS
from pathlib import Path

import pytest

from kvplan_app import trace_jobs
from kvplan_app.jobs import JobCancelled, JobPool, JobSettings
from kvplan_app.sample_jobs import wait_in_steps, wait_until_released
from planner.errors import PlanInputError
from planner.traces import load_sample, reuse_profile

sys.path.insert(0, str(Path(__file__).resolve().parent / "e2e"))
from load import write_mooncake_trace  # noqa: E402


@pytest.fixture
def pool():
    p = JobPool(JobSettings(preload=("planner.traces",), workers=1, queue=4))
    trace_jobs._RESULTS.clear()
    yield p
    trace_jobs._RESULTS.clear()
    p.shutdown()


def sample_kwargs(**changes):
    return {"sample": "conversation", "path": None, "fmt": "detect", "block_tokens": 16, "name": "",
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
    manager = multiprocessing.get_context("spawn").Manager()
    started, release = manager.Event(), manager.Event()
    try:
        job = pool.submit(wait_until_released, {"started": started, "release": release}, with_progress=True)
        assert started.wait(timeout=60)     # the worker runs it (bounded; normally a second or two)
        # The executor hands a free worker's next calls to its call queue (workers + EXTRA_QUEUED_CALLS of them;
        # CPython, Lib/concurrent/futures/process.py): two short jobs fill it while the worker is held, so the
        # next one waits in the pool until the worker is free again, whatever the threads' timing.
        handed = [pool.submit(wait_in_steps, {"seconds": 0.1}, with_progress=True)
                  for _ in range(pool.settings.workers + EXTRA_QUEUED_CALLS)]
        queued = pool.submit(wait_in_steps, {"seconds": 60.0}, with_progress=True)
        pool.cancel(queued)                 # waiting: dropped
        pool.cancel(handed[-1])             # pending or in the call queue, never started
        pool.cancel(job)                    # running: stops at its next progress report
        assert queued.future.cancelled()
        with pytest.raises(JobCancelled):
            pool.result(job)
        if not handed[-1].future.cancelled():  # already in the call queue: its cancel flag stops it at its
            with pytest.raises(JobCancelled):   # first report, before its body runs
                pool.result(handed[-1])
        assert [pool.result(h) for h in handed[:-1]] == [0.1]   # the worker goes on with the jobs behind it
        assert pool.result(pool.submit(wait_in_steps, {"seconds": 0.1}, with_progress=True)) == 0.1
    finally:
        release.set()
        manager.shutdown()


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
    with trace_jobs._LOCK:   # the timer cancels the job and drops its entry under this lock: once the job has
        assert ("slow",) not in trace_jobs._RESULTS   # stopped, the entry is gone


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


@pytest.fixture
def spooled(monkeypatch):
    """The upload files written for jobs, with their modes at writing."""
    paths = []
    real = trace_jobs.spool_upload

    def spool(data):
        path = real(data)
        paths.append((path, stat.S_IMODE(os.stat(path).st_mode)))
        return path

    monkeypatch.setattr(trace_jobs, "spool_upload", spool)
    return paths


def gone(path: str, bound_s: float = 60.0) -> bool:
    """Whether ``path`` is deleted, waiting at most ``bound_s`` (a job's done callback deletes it)."""
    deadline = time.monotonic() + bound_s
    while os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not os.path.exists(path)


def upload_kwargs(name="up.jsonl"):
    return sample_kwargs(sample=None, name=name)


def test_an_upload_goes_to_its_job_as_a_private_file_deleted_when_the_job_ends(pool, spooled, tmp_path):
    data = write_mooncake_trace(tmp_path / "t.jsonl", blocks=2_000).read_bytes()
    first = trace_jobs.shared_analysis(("up", 1), upload_kwargs(), upload=data, pool=pool)
    assert first.num_requests == data.count(b"\n") and first.has_prefix_hashes
    [(path, mode)] = spooled
    assert mode == 0o600 and gone(path)
    # served from the shared cache: no second file is written
    assert trace_jobs.shared_analysis(("up", 1), upload_kwargs(), upload=data, pool=pool) is first
    assert len(spooled) == 1


def test_an_unreadable_upload_names_the_upload_not_the_servers_file_and_its_file_is_deleted(pool, spooled):
    with pytest.raises(PlanInputError) as info:
        trace_jobs.shared_analysis(("bad",), upload_kwargs("bad.jsonl"), upload=b"not json\n", pool=pool)
    [(path, _mode)] = spooled
    assert "bad.jsonl" in str(info.value) and path not in str(info.value)
    assert os.path.basename(path) not in str(info.value) and gone(path)


def test_a_cancelled_upload_job_deletes_its_file(pool, spooled, monkeypatch):
    monkeypatch.setattr(trace_jobs, "CANCEL_GRACE_S", 0.1)

    class Stop(Exception):
        pass

    def stop(*_):
        raise Stop  # its session ended

    blocker = pool.submit(wait_in_steps, {"seconds": 60.0}, with_progress=True)
    with pytest.raises(Stop):
        trace_jobs.shared_analysis(("cancel",), upload_kwargs(), upload=b'{"timestamp":0}\n', pool=pool,
                                   on_update=stop)
    [(path, _mode)] = spooled
    pool.cancel(blocker)
    assert gone(path)
