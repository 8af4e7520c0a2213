"""Build the large traces the trace benches read (never committed: they go to a temporary folder).

* ``xN.jsonl`` (N = 1, 10, 40, 100): the bundled Mooncake conversation trace
  (Qin et al., FAST '25; Apache-2.0) written end to end N times, each copy's
  ``hash_ids`` shifted by N x (largest id + 1) and its timestamps by N x
  (last timestamp + 1 ms), so the copies share no block and arrive in order:
  every copy has the same reuse, and the unlimited-cache hit rate of xN equals
  x1's.
* ``x40.parquet`` and ``x40.jsonl.gz``: x40 as Parquet (zstd) and gzip JSONL.
* ``synthetic-100m.parquet``: about 100 million block references of a
  synthetic chat service (below), Mooncake columns, zstd Parquet.

The synthetic service: 8 system prompts of 2 to 6 blocks; sessions start as
a Poisson process; a session has 1 + Geometric(1/4) turns (mean 4) spaced by
exponential gaps (mean 90 s); turn ``t`` sends the system prompt, the whole
conversation so far and 1 to 12 new blocks (uniform), chained as prefix hashes
are, so a turn reuses its previous turn's blocks. Block ids are dense
integers, as in the Mooncake release.

Run: ``python bench/make_traces.py [DIR] [--only x1,x10,...]`` (default DIR:
``$TMPDIR/kvplan-traces``). Prints each file's size.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import tempfile
import time
from importlib import resources

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

COPIES = (1, 10, 40, 100)
"""Copies of the conversation trace written end to end."""

SYNTHETIC_REFS = 100_000_000
"""Target block references of the synthetic trace."""


def default_dir() -> str:
    return os.path.join(tempfile.gettempdir(), "kvplan-traces")


def conversation_rows() -> list[dict]:
    text = resources.files("planner.data.traces").joinpath("mooncake_conversation_trace.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def write_copies(rows: list[dict], copies: int, path: str, opener=open) -> None:
    id_shift = max(max(r["hash_ids"]) for r in rows) + 1
    t_shift = max(r["timestamp"] for r in rows) + 1
    with opener(path, "wt") as fh:
        for k in range(copies):
            for r in rows:
                fh.write(json.dumps({"timestamp": r["timestamp"] + k * t_shift, "input_length": r["input_length"],
                                     "output_length": r["output_length"],
                                     "hash_ids": [h + k * id_shift for h in r["hash_ids"]]}) + "\n")


def write_parquet_copies(rows: list[dict], copies: int, path: str) -> None:
    id_shift = max(max(r["hash_ids"]) for r in rows) + 1
    t_shift = max(r["timestamp"] for r in rows) + 1
    schema = pa.schema([("timestamp", pa.int64()), ("input_length", pa.int64()), ("output_length", pa.int64()),
                        ("hash_ids", pa.list_(pa.int64()))])
    with pq.ParquetWriter(path, schema, compression="zstd") as writer:
        for k in range(copies):
            writer.write_table(pa.Table.from_pylist([
                {"timestamp": r["timestamp"] + k * t_shift, "input_length": r["input_length"],
                 "output_length": r["output_length"], "hash_ids": [h + k * id_shift for h in r["hash_ids"]]}
                for r in rows], schema=schema))


def write_synthetic(path: str, target_refs: int = SYNTHETIC_REFS, seed: int = 14) -> int:
    """Write the synthetic chat trace; returns its block references."""
    rng = np.random.default_rng(seed)
    sys_len = rng.integers(2, 7, 8)
    sys_base = np.concatenate([[0], np.cumsum(sys_len)[:-1]])
    next_id = int(sys_len.sum())
    # Sessions: about 4 turns of about 6.5 new blocks each -> ~ (4 + 16) blocks per request on average.
    num_sessions = int(target_refs / 80)
    turns = 1 + rng.geometric(0.25, num_sessions) - 1
    turns = np.maximum(turns, 1)
    num_req = int(turns.sum())
    session = np.repeat(np.arange(num_sessions), turns)
    first = np.cumsum(turns) - turns
    turn = np.arange(num_req) - first[session]
    new_blocks = rng.integers(1, 13, num_req)
    cum_new = np.cumsum(new_blocks)
    conv_len = cum_new - (cum_new - new_blocks)[first][session]          # blocks of the conversation so far
    prompt = rng.integers(0, 8, num_sessions)[session]
    conv_base = next_id + (cum_new - new_blocks)[first][session]         # a session's own id range
    lengths = sys_len[prompt] + conv_len
    start = np.sort(rng.uniform(0, 7 * 86_400, num_sessions))          # a week of sessions
    gaps = rng.exponential(90.0, num_req)
    gaps[turn == 0] = 0.0
    cum_gaps = np.cumsum(gaps)
    t_ms = np.round((start[session] + cum_gaps - cum_gaps[first][session]) * 1000)
    # Trim to the target (a prefix of the sessions' requests).
    keep = np.cumsum(lengths) <= target_refs
    session, conv_len, prompt, conv_base, lengths, t_ms = (a[keep] for a in (session, conv_len, prompt,
                                                                               conv_base, lengths, t_ms))
    order = np.argsort(t_ms, kind="stable")
    schema = pa.schema([("timestamp", pa.int64()), ("input_length", pa.int64()), ("output_length", pa.int64()),
                        ("hash_ids", pa.list_(pa.int64()))])
    out_len = rng.integers(50, 800, session.shape[0])
    with pq.ParquetWriter(path, schema, compression="zstd") as writer:
        for lo in range(0, order.shape[0], 500_000):
            idx = order[lo:lo + 500_000]
            ln = lengths[idx]
            offs = np.concatenate([[0], np.cumsum(ln)])
            req = np.repeat(np.arange(idx.shape[0]), ln)
            pos = np.arange(offs[-1]) - offs[:-1][req]
            s_len = sys_len[prompt[idx]][req]
            ids = np.where(pos < s_len, sys_base[prompt[idx]][req] + pos, conv_base[idx][req] + pos - s_len)
            tokens = ln * 512 - rng.integers(0, 512, idx.shape[0])
            writer.write_table(pa.table({
                "timestamp": pa.array(t_ms[idx].astype(np.int64)), "input_length": pa.array(tokens),
                "output_length": pa.array(out_len[idx]),
                "hash_ids": pa.ListArray.from_arrays(pa.array(offs.astype(np.int32)), pa.array(ids.astype(np.int64)))},
                schema=schema))
    return int(lengths.sum())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dir", nargs="?", default=default_dir())
    p.add_argument("--only", default="x1,x10,x40,x100,x40.parquet,x40.jsonl.gz,synthetic")
    args = p.parse_args(argv)
    os.makedirs(args.dir, exist_ok=True)
    only = set(args.only.split(","))
    rows = conversation_rows()
    for n in COPIES:
        if f"x{n}" in only:
            t = time.perf_counter()
            write_copies(rows, n, os.path.join(args.dir, f"x{n}.jsonl"))
            print(f"x{n}.jsonl: {os.path.getsize(os.path.join(args.dir, f'x{n}.jsonl')):,} B "
                  f"({time.perf_counter() - t:.1f} s)")
    if "x40.parquet" in only:
        write_parquet_copies(rows, 40, os.path.join(args.dir, "x40.parquet"))
        print(f"x40.parquet: {os.path.getsize(os.path.join(args.dir, 'x40.parquet')):,} B")
    if "x40.jsonl.gz" in only:
        write_copies(rows, 40, os.path.join(args.dir, "x40.jsonl.gz"), opener=gzip.open)
        print(f"x40.jsonl.gz: {os.path.getsize(os.path.join(args.dir, 'x40.jsonl.gz')):,} B")
    if "synthetic" in only:
        t = time.perf_counter()
        refs = write_synthetic(os.path.join(args.dir, "synthetic-100m.parquet"))
        print(f"synthetic-100m.parquet: {refs:,} block refs, "
              f"{os.path.getsize(os.path.join(args.dir, 'synthetic-100m.parquet')):,} B "
              f"({time.perf_counter() - t:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
