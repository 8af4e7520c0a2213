"""Fleets on Dask (planner.traces.fleet_dask, kvplan trace --workers): the same numbers as one process."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("distributed", reason="the fleet extra (pip install 'kvplan[fleet]')")
psutil = pytest.importorskip("psutil")

from planner.cli import main  # noqa: E402


def test_workers_equal_single_process_number_for_number(capsys):
    argv = ["trace", "sample:conversation", "--replicas", "4,16", "--routing", "random,session",
            "--capacity-blocks", "5000", "--json"]
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    assert main(argv) == 0
    single = json.loads(capsys.readouterr().out)
    assert main([*argv, "--workers", "2"]) == 0
    dask = json.loads(capsys.readouterr().out)
    assert dask == single          # every number, the fleet table's included
    assert [(r["replicas"], r["routing"]) for r in dask["fleet"]] == [(4, "random"), (16, "random"),
                                                                       (4, "session"), (16, "session")]
    # the local cluster is closed: no worker or nanny process of it survives. (multiprocessing's
    # resource tracker is one helper per Python interpreter, started with the first spawned process
    # and ended with the interpreter: not a process of the cluster.)
    left = [p for p in psutil.Process().children(recursive=True) if p.pid not in before and p.is_running()
            and p.status() != psutil.STATUS_ZOMBIE and "resource_tracker" not in " ".join(p.cmdline())]
    assert not left, [p.cmdline() for p in left]


def test_workers_without_replicas_is_one_line_exit_2(capsys):
    assert main(["trace", "sample:conversation", "--workers", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--workers" in err and "--replicas" in err
