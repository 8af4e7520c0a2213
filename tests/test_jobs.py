"""The server's worker pool (kvplan_app/jobs.py): bounded queue, memory cap, time limit, errors that travel.

Workers are real processes (spawn); each test's pool is small and shut down at the end. No timing assertions:
the sleeps only keep a job busy while the queue is inspected.
"""

from __future__ import annotations

import time

import pytest

from kvplan_app.jobs import JobError, JobPool, JobsBusyError, JobSettings
from kvplan_app.sample_jobs import allocate_bytes, modules_loaded, wait_seconds, worker_pid
from planner.errors import PlanInputError
from planner.units import GiB, MiB, parse_tokens


@pytest.fixture
def pool_factory():
    pools = []

    def make(**fields) -> JobPool:
        pool = JobPool(JobSettings(**{"preload": (), **fields}))
        pools.append(pool)
        return pool

    yield make
    for pool in pools:
        pool.shutdown()


def test_settings_come_from_the_environment_and_bad_ones_are_refused():
    s = JobSettings.from_env({"KVPLAN_JOB_WORKERS": "3", "KVPLAN_JOB_QUEUE": "0", "KVPLAN_JOB_MEMORY_GIB": "0.5",
                              "KVPLAN_JOB_TIME_LIMIT_S": "30"})
    assert (s.workers, s.queue, s.memory_bytes, s.time_limit_s) == (3, 0, GiB // 2, 30.0)
    assert JobSettings.from_env({"KVPLAN_JOB_IDLE_EXIT_S": "0"}).idle_exit_s == 0.0
    assert JobSettings.from_env({}) == JobSettings()
    for name, value in (("KVPLAN_JOB_WORKERS", "0"), ("KVPLAN_JOB_MEMORY_GIB", "lots"),
                        ("KVPLAN_JOB_TIME_LIMIT_S", "nan"), ("KVPLAN_JOB_IDLE_EXIT_S", "-1")):
        with pytest.raises(ValueError, match=name):
            JobSettings.from_env({name: value})


def test_a_full_queue_refuses_at_once_and_positions_count_the_jobs_ahead(pool_factory):
    pool = pool_factory(workers=1, queue=1)
    first = pool.submit(wait_seconds, {"seconds": 3})
    second = pool.submit(wait_seconds, {"seconds": 0})
    assert pool.position(second) == 1  # the first is still starting or running: 3 s of sleep
    with pytest.raises(JobsBusyError, match="busy"):
        pool.submit(wait_seconds, {"seconds": 0})
    updates = []
    assert pool.result(second, poll_s=0.1, on_update=lambda f, stage, ahead: updates.append(ahead)) == 0
    assert pool.result(first) == 3
    assert updates and updates[0] == 1 and pool.position(second) == 0


def test_the_memory_cap_turns_a_huge_allocation_into_a_job_error_and_the_worker_goes_on(pool_factory):
    pool = pool_factory(workers=1, queue=2, memory_bytes=GiB // 4)
    with pytest.raises(JobError, match="out of memory"):
        pool.result(pool.submit(allocate_bytes, {"num_bytes": 2 * GiB}))
    assert pool.result(pool.submit(allocate_bytes, {"num_bytes": 16 * MiB})) == 16 * MiB


def test_the_time_limit_stops_a_job_and_the_worker_goes_on(pool_factory):
    pool = pool_factory(workers=1, queue=2, time_limit_s=1.0)
    with pytest.raises(JobError, match="time limit"):
        pool.result(pool.submit(wait_seconds, {"seconds": 60}))
    assert pool.result(pool.submit(wait_seconds, {"seconds": 0})) == 0


def test_a_plan_input_error_comes_back_whole(pool_factory):
    pool = pool_factory(workers=1, queue=1)
    with pytest.raises(PlanInputError) as info:
        pool.result(pool.submit(parse_tokens, {"text": "1,5M"}))
    assert info.value.field == "context_tokens" and info.value.value == "1,5M"


def test_a_probe_in_a_capped_worker_is_refused_before_it_allocates(pool_factory):
    pytest.importorskip("torch")
    from planner.probe import run_probe

    # V4.1 nvfp4 at 10,000,000 tokens: 890 B x 10,000,000 = 8.9 GB of pool, over a 1 GiB worker cap
    pool = pool_factory(workers=1, queue=1, memory_bytes=GiB, preload=("planner.probe.run", "torch"))
    with pytest.raises(PlanInputError) as info:
        pool.result(pool.submit(run_probe, {"model_id": "deepseek-v4.1-flash", "num_tokens": 10_000_000,
                                            "kv_format": "nvfp4", "device": "cpu", "measure_formats": False}))
    assert info.value.field == "tokens" and "RLIMIT_AS" in str(info.value)
    # a small pool runs in the same worker
    result = pool.result(pool.submit(run_probe, {"model_id": "deepseek-v4.1-flash", "num_tokens": 16_384,
                                                 "kv_format": "nvfp4", "device": "cpu", "measure_formats": False}))
    assert result.measured_bytes == 14_581_760  # 890 B x 16,384 tokens in whole 16-token blocks


def process_gone(pid: int) -> bool:
    """Whether ``pid`` has exited and been reaped (or is a zombie)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rpartition(")")[2].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_a_worker_exits_once_the_pool_is_idle_and_the_next_job_gets_a_fresh_one(pool_factory):
    pool = pool_factory(workers=1, queue=1, idle_exit_s=0.2)
    first = pool.result(pool.submit(worker_pid, {}))
    deadline = time.monotonic() + 60   # a bound on the wait, not a timing assertion
    while not process_gone(first) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert process_gone(first)
    second = pool.result(pool.submit(worker_pid, {}))
    assert second != first


def test_a_busy_worker_is_reused_while_jobs_keep_coming(pool_factory):
    pool = pool_factory(workers=1, queue=2, idle_exit_s=600)
    assert pool.result(pool.submit(worker_pid, {})) == pool.result(pool.submit(worker_pid, {}))


def test_a_trace_worker_never_imports_torch_and_a_probe_job_asks_for_it(pool_factory):
    pytest.importorskip("torch")
    defaults = JobSettings()
    pool = pool_factory(workers=1, queue=1, preload=defaults.preload, idle_exit_s=600)
    assert pool.result(pool.submit(modules_loaded, {"names": ("torch", "planner.traces")})) == (False, True)
    assert pool.result(pool.submit(modules_loaded, {"names": ("torch",)}, imports=("torch",))) == (True,)


def test_a_probe_that_imports_torch_itself_still_gets_the_whole_cap(pool_factory):
    pytest.importorskip("torch")
    from planner.probe import run_probe

    # no torch preloaded: the job's import raises the worker's base, then the 1 GiB cap is placed above it.
    # V4.1 nvfp4: 890 B per token; 16,384 tokens = 14,581,760 B fits, 10,000,000 tokens = 8.9 GB does not
    pool = pool_factory(workers=1, queue=2, memory_bytes=GiB, preload=(), idle_exit_s=600)
    kwargs = {"model_id": "deepseek-v4.1-flash", "kv_format": "nvfp4", "device": "cpu", "measure_formats": False}
    result = pool.result(pool.submit(run_probe, {**kwargs, "num_tokens": 16_384}, imports=("torch",)))
    assert result.measured_bytes == 14_581_760
    with pytest.raises(PlanInputError) as info:
        pool.result(pool.submit(run_probe, {**kwargs, "num_tokens": 10_000_000}, imports=("torch",)))
    assert info.value.field == "tokens" and "RLIMIT_AS" in str(info.value)
