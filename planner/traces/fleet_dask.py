"""Fleet replays on a Dask cluster: each replica's requests are a partition, its hits computed where it lives.

:func:`fleet_table_dask` gives the same table as
:func:`planner.traces.fleet.fleet_table`, number for number: the requests are
routed on the client (random, round-robin and session routing do not look at
cache state, ``planner.traces.fleet``), each replica's requests are cut into
a trace of their own, scattered to one worker, and its stack-distance pass
(:func:`planner.traces.fleet.partition_hits`) runs on that worker; the client
sums the replicas' counts. Prefix routing depends on every cache at every
arrival, so it stays one sequential simulation on the client.

A local cluster (``workers``) is a ``distributed.LocalCluster`` of
processes, one thread each, listening on 127.0.0.1 only, with
``memory_limit_bytes`` per worker (Dask pauses a worker at 80% of it and
restarts it at 95%); it is closed, its processes ended, before returning.
``scheduler`` connects to an existing cluster instead (its workers need
kvplan installed), which is left running.

Memory per worker: its partitions' arrays (4 bytes per block reference
plus about 40 per request) and one stack-distance pass at a time (about 24
bytes per reference of the partition, ``planner.traces.stack``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
import pandas as pd

from planner.errors import PlanInputError
from planner.messages import msg
from planner.traces.fleet import (
    FleetResult, _simulate_prefix, assign_replicas, check_replicas, check_routing, fleet_frame, fleet_result,
    partition_hits, radix_trace, subtrace,
)
from planner.traces.checks import check_capacity_blocks, check_ttl_s
from planner.traces.policy import DEFAULT_EVICTION_POLICY, check_eviction_policy
from planner.traces.stack import require_hashes
from planner.traces.trace import Progress, Trace

MAX_WORKERS: int = 256
"""Most local worker processes."""

DEFAULT_WORKER_MEMORY_BYTES: int = 4 * 2**30
"""Memory limit of each local worker, bytes (4 GiB)."""


def check_workers(value: object) -> int:
    """A local worker count: a whole number in [1, 256].

    Raises:
        PlanInputError: anything else.
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= int(value) <= MAX_WORKERS:
        raise PlanInputError("workers", value, msg("a whole number of worker processes in [1, {max_workers}]",
                                                   max_workers=MAX_WORKERS))
    return int(value)


def _partition_hits(sub: Trace, cap: int | None, ttl: float | None) -> tuple[int, int, int, int]:
    """The task run on a worker: one replica's hits on its own partition (all its requests)."""
    return partition_hits(sub, np.arange(sub.num_requests), cap, ttl)


def fleet_table_dask(trace: Trace, replicas: Sequence[int], routings: Sequence[str], *,
                     capacity_blocks: int | None = None, ttl_s: float | None = None,
                     eviction_policy: str = DEFAULT_EVICTION_POLICY, workers: int | None = None,
                     scheduler: str | None = None, memory_limit_bytes: int = DEFAULT_WORKER_MEMORY_BYTES,
                     progress: Progress | None = None) -> tuple[pd.DataFrame, list[FleetResult]]:
    """:func:`planner.traces.fleet.fleet_table` on a Dask cluster (module docstring).

    Args:
        trace, replicas, routings, capacity_blocks, ttl_s, eviction_policy: as ``fleet_table``.
        workers: start a local cluster of this many worker processes, or
        scheduler: the address of an existing scheduler (``tcp://host:8786``).
        memory_limit_bytes: memory limit per local worker, bytes.
        progress: optional callback ``(fraction, label)``, once per fleet row.

    Raises:
        PlanInputError: as ``fleet_table``; neither or both of ``workers`` and
            ``scheduler``; dask.distributed not installed; no scheduler at the address.
    """
    if (workers is None) == (scheduler is None):
        raise PlanInputError("workers", workers, msg("a worker count or a scheduler address (one of the two)"))
    if not replicas or not routings:
        raise PlanInputError("replicas", list(replicas), msg("at least one replica count and one routing policy"))
    require_hashes(trace)
    todo = [(check_replicas(int(n)), check_routing(p)) for p in routings for n in replicas]
    cap, ttl = check_capacity_blocks(capacity_blocks), check_ttl_s(ttl_s)
    policy = check_eviction_policy(eviction_policy)
    if trace.sample_rate < 1.0:
        raise PlanInputError("sample_rate", trace.sample_rate, msg("1 (every block) for fleets: routing keys and "
                                                                   "prefix matches need the whole trace"))
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise PlanInputError("workers", workers if workers is not None else scheduler,
                             msg("dask.distributed installed (pip install 'kvplan[fleet]')")) from None
    keyed = radix_trace(trace) if policy == "sglang" else trace
    if scheduler is not None:
        try:
            client = Client(scheduler, timeout=10)
        except (OSError, ValueError, TimeoutError) as exc:
            raise PlanInputError("scheduler", scheduler, msg("the address of a running Dask scheduler ({error})",
                                                             error=str(exc)[:120])) from None
        with client:
            return _run(client, trace, keyed, todo, cap, ttl, policy, progress)
    n_workers = check_workers(workers)
    with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, memory_limit=int(memory_limit_bytes),
                      silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
        return _run(client, trace, keyed, todo, cap, ttl, policy, progress)


def _run(client, trace: Trace, keyed: Trace, todo: list[tuple[int, str]], cap: int | None, ttl: float | None,
         policy: str, progress: Progress | None) -> tuple[pd.DataFrame, list[FleetResult]]:
    results = []
    for k, (n, routing) in enumerate(todo):
        if progress is not None:
            progress(k / len(todo), f"{n} replicas, {routing} routing")
        if routing == "prefix" and n > 1:
            results.append(_simulate_prefix(keyed, n, cap, ttl, policy))
            continue
        replica = np.zeros(trace.num_requests, dtype=np.int64) if n == 1 else assign_replicas(trace, n, routing)
        futures = []
        for r in range(n):
            idx = np.flatnonzero(replica == r)
            if idx.size == 0:
                futures.append(None)
                continue
            part = client.scatter(subtrace(keyed, idx) if n > 1 else keyed)   # lands on one worker
            futures.append(client.submit(_partition_hits, part, cap, ttl, pure=False))
        done = client.gather([f for f in futures if f is not None])
        it = iter(done)
        parts = [(0, 0, 0, 0) if f is None else next(it) for f in futures]
        results.append(fleet_result(trace, n, routing, cap, ttl, policy, parts))
        del futures
    if progress is not None:
        progress(1.0, "fleet")
    return fleet_frame(results), results
