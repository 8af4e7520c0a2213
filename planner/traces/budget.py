"""What an uploaded trace will cost its job, decided from the file's metadata before any job runs.

A small file can hold a huge trace: Parquet's run-length and dictionary encodings store 200,000,000 identical
tiny rows in about 3 MB, and a job reading them holds every row (about :data:`PEAK_BYTES_PER_ROW` bytes each)
for minutes. :func:`check_upload_cost` counts rows and block references without reading the rows:

* Parquet: the footer (``ParquetFile.metadata.num_rows``; the ``hash_ids`` values of every column chunk; the
  largest row group's uncompressed size);
* JSONL and CSV: the lines of the decompressed text (plain: counted in the bytes; gzip or zstd: decompressed
  once, at most :data:`~planner.traces.sources.MAX_TRACE_BYTES`, the reader's own cap), and at most one block
  reference per comma;

For a file of prompts (``planner.traces.prompts``) the references are bounded by its decompressed text: at
most one token per byte (byte-level tokenizers; word and subword tokenizers give fewer), so at most
``bytes / block_tokens`` full blocks, plus one block per row for the special tokens a template may add
(:func:`estimate_prompt_cost`).

It refuses, naming the count, the limit and the way out (a sample rate, or the command line, which has no such
limit), a trace past :data:`MAX_UPLOAD_ROWS` rows, :data:`MAX_UPLOAD_REFS` references, or the job's memory.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from planner.errors import PlanInputError
from planner.messages import msg
from planner.traces.rows import MIN_SAMPLE_RATE
from planner.traces.sources import MAX_TRACE_BYTES, Opened, job_limit, line_chunks
from planner.units import MB

PEAK_BYTES_PER_ROW: int = 160
"""Peak memory of a trace job per row, bytes: measured 149 B per row (2,000,000 rows of lengths only, Parquet:
read, sorted, concurrency; peak RSS 524 MiB over a 240 MiB base), rounded up."""
PEAK_BYTES_PER_REF: int = 96
"""Peak memory of a trace job per block reference, bytes, on top of its row: the ids as read (8 B), dense ids and
offsets (4 to 8 B), and the stack-distance and replay passes' arrays; measured 91 B per reference (1,000,000 rows
of 4 references, Parquet: read, concurrency, stack distances, replay; peak RSS 751 MiB over a 262 MiB base,
minus 149 B per row; RELIABILITY.md), rounded up."""
MAX_UPLOAD_ROWS: int = 5_000_000
"""Rows one upload to the dashboard may hold (the command line has no limit): 5,000,000 rows x 160 B = 0.8 GB,
a fifth of the default 4 GiB job memory, leaving the rest to the references, charts and tables (a 10,000,000-row
upload ran out of that memory); the bundled conversation trace has 12,031."""
MAX_UPLOAD_REFS: int = 30_000_000
"""Block references one upload may hold after sampling (the command line has no limit): 30,000,000 x 96 B =
2.88 GB, under the default 4 GiB job memory. A 64 MB JSONL holds at most about 32,000,000 (one per two bytes)."""
MAX_ROW_GROUP_BYTES: int = 512 * MB
"""Largest uncompressed Parquet row group read from an upload, bytes: a row group is decompressed whole."""


@dataclass(frozen=True)
class TraceCost:
    """What a trace holds, counted before reading it: ``rows`` (Parquet: exact; text: non-blank lines, an
    upper bound), ``refs`` (block references: Parquet: exact; text: an upper bound), ``row_group_bytes`` (the
    largest uncompressed Parquet row group; 0 for text)."""

    rows: int
    refs: int
    row_group_bytes: int = 0

    def peak_bytes(self, sample_rate: float = 1.0) -> int:
        """Estimated peak memory of a job reading and replaying it, bytes."""
        return self.rows * PEAK_BYTES_PER_ROW + int(self.refs * sample_rate) * PEAK_BYTES_PER_REF


def estimate_cost(source, *, name: str | None = None, max_bytes: int | None = MAX_TRACE_BYTES) -> TraceCost:
    """Count rows and references of a trace (bytes, path or file-like) from its metadata (module docstring).

    Raises:
        PlanInputError: not readable, or over ``max_bytes`` (compressed or decompressed).
    """
    opened = Opened(source, max_bytes, name)
    if opened.parquet:
        return _parquet_cost(opened)
    rows = refs = 0
    for _, _, chunk in line_chunks(opened):
        rows += chunk.count(b"\n") + (0 if chunk.endswith(b"\n") else 1)
        refs += chunk.count(b",")
    return TraceCost(rows=rows, refs=refs)


def estimate_prompt_cost(source, *, block_tokens: int, name: str | None = None,
                         max_bytes: int | None = MAX_TRACE_BYTES) -> TraceCost:
    """Rows and an upper bound of block references of a prompts file (module docstring).

    Raises:
        PlanInputError: not readable, or over ``max_bytes`` (compressed or decompressed).
    """
    opened = Opened(source, max_bytes, name)
    if opened.parquet:
        from planner.traces.readers import open_parquet

        meta = open_parquet(opened).metadata
        rows, text_bytes = meta.num_rows, 0
        biggest = 0
        for g in range(meta.num_row_groups):
            size = meta.row_group(g).total_byte_size
            text_bytes += size
            biggest = max(biggest, size)
        return TraceCost(rows=rows, refs=text_bytes // block_tokens + rows, row_group_bytes=biggest)
    rows = text_bytes = 0
    for _, _, chunk in line_chunks(opened):
        rows += chunk.count(b"\n") + (0 if chunk.endswith(b"\n") else 1)
        text_bytes += len(chunk)
    return TraceCost(rows=rows, refs=text_bytes // block_tokens + rows)


def _parquet_cost(opened: Opened) -> TraceCost:
    from planner.traces.readers import open_parquet

    meta = open_parquet(opened).metadata
    refs = biggest = 0
    try:
        for g in range(meta.num_row_groups):
            group = meta.row_group(g)
            biggest = max(biggest, group.total_byte_size)
            for c in range(group.num_columns):
                column = group.column(c)
                if column.path_in_schema.split(".")[0] == "hash_ids":
                    refs += column.num_values
    except (pa.ArrowException, OSError) as exc:
        job_limit(exc)
        raise PlanInputError("trace", opened.name, msg("a readable Parquet file")) from None
    return TraceCost(rows=meta.num_rows, refs=refs, row_group_bytes=biggest)


def upload_refs_limit(cost: TraceCost, memory_bytes: int | None = None, max_refs: int | None = None) -> int:
    """Most block references a job reading an upload of ``cost``'s rows may hold: :data:`MAX_UPLOAD_REFS` (or
    ``max_refs``), and what the job's memory leaves after the rows. Readers whose references the file's metadata
    cannot bound (KV events, prompts) stop past it."""
    limit = MAX_UPLOAD_REFS if max_refs is None else max_refs
    if memory_bytes is not None:
        limit = min(limit, max(0, memory_bytes - cost.rows * PEAK_BYTES_PER_ROW) // PEAK_BYTES_PER_REF)
    return int(limit)


def check_upload_cost(source, *, name: str | None = None, memory_bytes: int | None = None,
                      max_rows: int | None = None, max_refs: int | None = None,
                      sample_rate: float = 1.0, prompt_block_tokens: int | None = None,
                      count_refs: bool = True) -> TraceCost:
    """Refuse an upload whose job would pass the dashboard's limits, before any job runs.

    Args:
        source: the upload's bytes (or a path, file-like).
        name: the upload's own file name, for the errors.
        memory_bytes: the job's memory cap (``kvplan_app.jobs.JobSettings.memory_bytes``), or None.
        max_rows, max_refs: the limits (default :data:`MAX_UPLOAD_ROWS`, :data:`MAX_UPLOAD_REFS`).
        sample_rate: the fraction of blocks the job keeps.
        prompt_block_tokens: the file holds prompts, hashed into blocks of this many tokens
            (:func:`estimate_prompt_cost`); None: a trace of lengths and block ids.
        count_refs: False when the file's bytes do not bound its references (a KV-event stream, whose events
            stand for their ancestors too): only rows are checked here, and the reader stops past
            :func:`upload_refs_limit`.

    Raises:
        PlanInputError: ``trace``, naming the count, the limit and the way out.
    """
    max_rows = MAX_UPLOAD_ROWS if max_rows is None else max_rows
    max_refs = MAX_UPLOAD_REFS if max_refs is None else max_refs
    cost = (estimate_cost(source, name=name) if prompt_block_tokens is None
            else estimate_prompt_cost(source, block_tokens=prompt_block_tokens, name=name))
    if not count_refs:
        cost = TraceCost(rows=cost.rows, refs=0, row_group_bytes=cost.row_group_bytes)
    shown = name or "uploaded trace"
    rows_limit = max_rows if memory_bytes is None else min(max_rows, memory_bytes // PEAK_BYTES_PER_ROW)
    if cost.rows > rows_limit:
        raise PlanInputError("trace", shown, msg(
            "at most {limit:,} rows per upload here; this file holds {rows:,} rows: use the command line "
            "(kvplan trace FILE), which has no such limit, or upload a part of it", limit=rows_limit, rows=cost.rows))
    if cost.row_group_bytes > MAX_ROW_GROUP_BYTES:
        raise PlanInputError("trace", shown, msg(
            "Parquet row groups of at most {limit:,} B uncompressed; this file has one of {size:,} B: write it "
            "with smaller row groups, or use the command line (kvplan trace FILE)", limit=MAX_ROW_GROUP_BYTES,
            size=cost.row_group_bytes))
    refs_limit = upload_refs_limit(cost, memory_bytes, max_refs)
    kept = int(cost.refs * sample_rate)
    if kept > refs_limit:
        rate = refs_limit / cost.refs if cost.refs else 1.0
        way = (msg("sample with rate {rate:.2g} (kvplan trace FILE --sample-rate {rate:.2g}) or use the command line",
                   rate=rate) if rate >= MIN_SAMPLE_RATE and prompt_block_tokens is None else msg("use the command line (kvplan trace FILE)"))
        raise PlanInputError("trace", shown, msg(
            "at most {limit:,} block references per upload here; this file holds up to {refs:,}: {way}",
            limit=refs_limit, refs=kept, way=way))
    return cost
