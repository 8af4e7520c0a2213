"""Fleet replay on Dask: time and peak memory per worker, against the single-process fleet table.

Run ``python bench/bench_fleet_dask.py TRACE [--workers 2] [--replicas 4,16] [--routing random,session]
[--capacity-blocks 5000] [--repeat 1]``. TRACE is any ``kvplan trace`` input: ``sample:conversation``
(288,500 block references), a file from ``bench/make_traces.py`` (``x100.jsonl``: 28.85 million), or a
500-million-reference trace (``python bench/make_traces.py DIR --only synthetic-100m`` gives 100 million;
five such copies, or a longer synthetic week, reach 500 million: at about 4 B per reference per worker
partition plus 24 B per reference of the pass in progress, plan 2 to 3 GiB per worker and several minutes
per routing on 2 cores).

``--generate REFS`` (e.g. ``--generate 500000000``) replays instead a synthetic chat service of about REFS
block references (``bench/fleet_synthetic.py``) under session routing, each replica's partition generated and
replayed by one task on a worker, so that no process ever holds the whole trace: the client holds only the
partitions' counts. It first checks, at ``--check-sessions`` sessions, that the partitions' sums equal
``fleet_table`` on the whole trace, then prints per fleet row the wall time, and per worker its tasks and peak
resident memory (``ru_maxrss`` of the worker process, which is spawned, not forked), and the client's.

Prints (a trace file): the read time; the single-process fleet table's wall time (skipped with ``--skip-single``); the Dask
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
    ap.add_argument("trace", nargs="?", help="a kvplan trace input (not with --generate)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--replicas", default="4,16")
    ap.add_argument("--routing", default="random,session")
    ap.add_argument("--capacity-blocks", type=int, default=5000)
    ap.add_argument("--block-tokens", type=int, default=None)
    ap.add_argument("--skip-single", action="store_true")
    ap.add_argument("--generate", type=int, default=None, metavar="REFS")
    ap.add_argument("--check-sessions", type=int, default=40_000)
    ap.add_argument("--worker-memory-gib", type=float, default=8.0)
    args = ap.parse_args()
    if args.generate is not None:
        generated(args)
        return
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


def _generated_partition(num_sessions: int, n: int, replica: int, cap: int | None) -> dict:
    """One task: replica ``replica`` of ``n``'s partition, generated and replayed here (session routing)."""
    import numpy as np

    from planner.traces.fleet import partition_hits

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import fleet_synthetic

    t0 = time.perf_counter()
    part = fleet_synthetic.partition(num_sessions, n, replica)
    made = time.perf_counter() - t0
    reqs, refs, hit_blocks, hit_tokens = partition_hits(part, np.arange(part.num_requests), cap, None)
    return {"n": n, "replica": replica, "requests": reqs, "refs": refs, "hit_blocks": hit_blocks,
            "hit_tokens": hit_tokens, "tokens": int(part.input_tokens.sum()), "pid": os.getpid(),
            "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "generate_s": made, "replay_s": time.perf_counter() - t0 - made}


def generated(args) -> None:
    """``--generate REFS``: the module docstring's partitioned run."""
    import numpy as np
    from distributed import Client, LocalCluster, as_completed

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import fleet_synthetic
    from planner.traces import fleet_table
    from planner.traces.fleet import partition_hits

    replicas = [int(x) for x in args.replicas.split(",")]
    cap = args.capacity_blocks if args.capacity_blocks > 0 else None
    # 1. small check: partitions generated apart sum to the whole trace's fleet table, number for number
    whole = fleet_synthetic.whole_trace(args.check_sessions)
    table, _ = fleet_table(whole, replicas, ["session"], capacity_blocks=cap)
    for n in replicas:
        parts = [fleet_synthetic.partition(args.check_sessions, n, r) for r in range(n)]
        sums = np.sum([partition_hits(p, np.arange(p.num_requests), cap, None) for p in parts], axis=0)
        row = table[table["replicas"] == n].iloc[0]
        equal = (sums[1] == whole.num_block_refs and sums[2] / sums[1] == row["block_hit_rate"]
                 and sums[3] / whole.input_tokens.sum() == row["token_hit_rate"])
        print(f"check at {args.check_sessions:,} sessions ({whole.num_block_refs:,} refs), {n} replicas: "
              f"partitions equal the whole trace's fleet table: {bool(equal)}")
    del whole, table
    # 2. the big run
    num_sessions = args.generate // fleet_synthetic.REFS_PER_SESSION
    print(f"generating {num_sessions:,} sessions (about {args.generate:,} block refs) on {args.workers} workers, "
          f"{args.worker_memory_gib:g} GiB memory limit each; load average {os.getloadavg()[0]:.1f}", flush=True)
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, memory_limit=int(args.worker_memory_gib * 2**30),
                      silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
        client.run(lambda: __import__("planner.traces.kernels"))      # import and load compiled loops first
        workers = {}
        for n in replicas:
            t0 = time.perf_counter()
            futures = [client.submit(_generated_partition, num_sessions, n, r, cap, pure=False) for r in range(n)]
            rows = []
            for future in as_completed(futures):
                row = future.result()
                rows.append(row)
                w = workers.setdefault(row["pid"], {"tasks": 0, "peak_mib": 0.0, "generate_s": 0.0, "replay_s": 0.0})
                w["tasks"] += 1
                w["peak_mib"] = max(w["peak_mib"], row["peak_mib"])
                w["generate_s"] += row["generate_s"]
                w["replay_s"] += row["replay_s"]
                del future
            wall = time.perf_counter() - t0
            refs = sum(r["refs"] for r in rows)
            rates = [r["hit_blocks"] / r["refs"] for r in rows if r["refs"]]
            print(f"{n} replicas, session routing, {cap or 'unlimited'} blocks each: {refs:,} block refs, "
                  f"{sum(r['requests'] for r in rows):,} requests; block hit rate "
                  f"{sum(r['hit_blocks'] for r in rows) / refs:.4f}, token hit rate "
                  f"{sum(r['hit_tokens'] for r in rows) / sum(r['tokens'] for r in rows):.4f}, replicas "
                  f"{min(rates):.4f} - {max(rates):.4f}; largest partition {max(r['refs'] for r in rows):,} refs; "
                  f"wall {wall:.1f} s; load average {os.getloadavg()[0]:.1f}", flush=True)
        for pid, w in workers.items():
            print(f"worker pid {pid}: {w['tasks']} partitions, peak RSS {w['peak_mib']:,.0f} MiB, "
                  f"generate {w['generate_s']:.1f} s, replay {w['replay_s']:.1f} s")
    print(f"client: peak RSS {_peak_rss_mib():,.0f} MiB")


if __name__ == "__main__":
    main()
