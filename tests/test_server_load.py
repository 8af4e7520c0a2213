"""What keeps a shared server responsive while heavy jobs run: the shipped config and the job wait loop.

No timing assertions: what is checked is what the server does (its settings, how often a waiting page is
updated), not how fast.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from kvplan_app.jobs import JobPool, JobSettings
from kvplan_app.sample_jobs import wait_in_steps

ROOT = Path(__file__).resolve().parents[1]


def test_the_shipped_config_runs_no_full_garbage_collection_after_every_script_run():
    # Streamlit's runner.postScriptGC (default true) calls gc.collect(2) after each run of each session
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["runner"]["postScriptGC"] is False


@pytest.fixture
def pool():
    p = JobPool(JobSettings(preload=(), workers=1, queue=2))
    yield p
    p.shutdown()


def test_a_waiting_page_is_updated_when_its_job_moves_not_on_every_poll(pool):
    blocker = pool.submit(wait_in_steps, {"seconds": 1.5}, with_progress=True)
    job = pool.submit(wait_in_steps, {"seconds": 0.1}, with_progress=True)
    updates = []
    # polled every 0.01 s: each call repeats nothing it already showed, unless 60 s passed
    assert pool.result(job, poll_s=0.01, quiet_s=60, on_update=lambda *u: updates.append(u)) == 0.1
    assert updates, "a job that waited behind another one is shown waiting"
    assert all(a != b for a, b in zip(updates, updates[1:])), updates
    assert pool.result(blocker) == 1.5


def test_the_frontier_pages_largest_grid_is_small_enough_to_stay_in_the_server():
    # the page computes its grid inline (planner.frontier.frontier_grid: a few ms at this size on one core);
    # every accelerator of the catalog x (CONTEXT_POINTS + the plan's context) x (HIT_RATE_POINTS + 2 hit rates)
    import ast

    from planner.catalog.entries import GPUS

    tree = ast.parse((ROOT / "kvplan_app" / "views" / "frontier.py").read_text(encoding="utf-8"))
    constants = {node.targets[0].id: node.value.value for node in tree.body
                 if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
                 and isinstance(node.value, ast.Constant)}
    points = (len(GPUS) + 1) * (constants["CONTEXT_POINTS"] + 1) * (constants["HIT_RATE_POINTS"] + 2)
    assert points <= 250_000, points   # larger grids belong in the job pool (kvplan_app/jobs.py)
