"""Fleet replay on Dask: time and peak memory per worker, against the single-process fleet table.

Run ``python bench/bench_fleet_dask.py TRACE [--workers 2] [--replicas 4,16] [--routing random,session]
[--capacity-blocks 5000] [--repeat 1]``. TRACE is any ``kvplan trace`` input: ``sample:conversation``
(288,500 block references), a file from ``bench/make_traces.py`` (``x100.jsonl``: 28.85 million), or a
500-million-reference trace (``python bench/make_traces.py DIR --only synthetic-100m`` gives 100 million;
five such copies, or a longer synthetic week, reach 500 million: at about 4 B per reference per worker
partition plus 24 B per reference of the pass in progress, plan 2 to 3 GiB per worker and several minutes
per routing on 2 cores).

Prints: the read time; the single-process fleet table's wall time (skipped with ``--skip-single``); the Dask
run's wall time (a LocalCluster of ``--workers`` processes on 127.0.0.1, one thread each, started before the
clock and reached through its scheduler address, as ``--scheduler`` does), each worker's peak resident memory
(``ru_maxrss`` after the run) and whether every number of the two tables is equal. Asserts nothing about time.
"""

from __future__ import annotations

import argparse
import logging
import os
import resource
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--replicas", default="4,16")
    ap.add_argument("--routing", default="random,session")
    ap.add_argument("--capacity-blocks", type=int, default=5000)
    ap.add_argument("--block-tokens", type=int, default=None)
    ap.add_argument("--skip-single", action="store_true")
    args = ap.parse_args()
    from distributed import Client, LocalCluster

    from planner.traces import fleet_table, read_trace
    from planner.traces.fleet_dask import fleet_table_dask

    replicas = [int(x) for x in args.replicas.split(",")]
    routings = args.routing.split(",")
    t0 = time.perf_counter()
    trace = read_trace(args.trace, block_tokens=args.block_tokens, max_bytes=None)
    print(f"{trace.name}: {trace.num_requests:,} requests, {trace.num_block_refs:,} block refs; "
          f"read in {time.perf_counter() - t0:.2f} s; load average {os.getloadavg()[0]:.1f}")
    single = None
    if not args.skip_single:
        t0 = time.perf_counter()
        single, _ = fleet_table(trace, replicas, routings, capacity_blocks=args.capacity_blocks)
        print(f"single process: {time.perf_counter() - t0:.2f} s, client peak RSS {_peak_rss_mib():,.0f} MiB")
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, silence_logs=logging.ERROR) as cluster, \
            Client(cluster) as client:
        client.run(lambda: __import__("planner.traces.kernels"))      # import and load compiled loops first
        t0 = time.perf_counter()
        table, _ = fleet_table_dask(trace, replicas, routings, capacity_blocks=args.capacity_blocks,
                                    scheduler=cluster.scheduler_address)
        wall = time.perf_counter() - t0
        peaks = client.run(lambda: (os.getpid(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                                    __import__("psutil").Process().memory_info().rss / 2**20))
    print(f"dask, {args.workers} workers: {wall:.2f} s; per worker (pid, peak RSS, RSS now): "
          + ", ".join(f"({pid}, {peak:,.0f} MiB, {now:,.0f} MiB)" for pid, peak, now in peaks.values())
          + f"; client pid {os.getpid()}")
    if single is not None:
        print(f"identical to the single process: {table.equals(single)}")
    print(table.to_string(index=False))


if __name__ == "__main__":
    main()
