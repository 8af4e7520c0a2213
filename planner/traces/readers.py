"""Trace readers: Mooncake JSONL, Azure LLM inference CSV, and a generic JSONL, also as Parquet.

Every reader returns a :class:`~planner.traces.trace.Trace`: requests sorted by
arrival, with their prompt and output lengths and, when the format carries
them, the prefix-block hash IDs of each prompt. Malformed rows are skipped,
counted and reported (:class:`~planner.traces.trace.MalformedRows`: the first
few line numbers and reasons); they never stop a read. Whole-file problems
(too large, not UTF-8, missing CSV columns, no well-formed row at all) raise
:class:`planner.errors.PlanInputError`.

Sources: a path (``str`` or ``os.PathLike``; any size when ``max_bytes`` is
None, as on the command line), the file's contents as
``bytes``/``bytearray``/``memoryview``, or a file-like object whose ``read()``
returns bytes or text (a Streamlit ``UploadedFile``). Plain, gzip or zstd
(detected from the first bytes). Text must be UTF-8 (a byte-order mark is
ignored). JSONL and Parquet are read with pyarrow in chunks of whole lines
(16 MiB) or row groups: a chunk whose rows all pass the column checks is taken
as columns; any other chunk is read again row by row in Python, which names
each malformed row's line and reason.

Formats
-------
``mooncake``: JSON Lines from the Mooncake FAST'25 release (Qin et al.,
"Mooncake: Trading More Storage for Less Computation", FAST '25, appendix A):
``timestamp`` (int, **milliseconds** since the trace start), ``input_length``,
``output_length``, ``hash_ids`` (one ID per 512-token block; each block's hash
covers that block and every block before it).

``azure``: CSV of the Azure LLM inference trace 2023 (Patel et al.,
"Splitwise", ISCA 2024): header ``TIMESTAMP,ContextTokens,GeneratedTokens``,
the timestamp a naive datetime such as ``2023-11-16 18:15:46.6805900`` (an
ISO 8601 offset such as ``+00:00`` is also accepted, as in the 2024 trace).
Lengths only: prefix-cache hit rates cannot be measured from it.

``jsonl``: the generic format for users' own traces, one JSON object per line::

    {"timestamp_s": 12.5, "input_length": 1800, "output_length": 250, "hash_ids": [17, 18, 42, 43]}

* exactly one of ``timestamp_s`` (seconds) or ``timestamp_ms`` (milliseconds):
  a finite number; any origin (relative or Unix time), rows in any order;
* ``input_length``: prompt tokens, a whole number >= 0;
* ``output_length``: generated tokens, a whole number >= 0;
* ``hash_ids`` (optional): a list of integers in the signed 64-bit range, one
  per block of ``block_tokens`` prompt tokens, where each ID identifies the
  block *and everything before it* (a chained hash, as vLLM, SGLang and
  Mooncake compute them). At most ``ceil(input_length / block_tokens)`` IDs,
  no ID twice in a row; fewer IDs than blocks means the trailing tokens were
  not hashed (vLLM hashes only full blocks) and can never hit. Either every
  row has ``hash_ids`` or none does; ``block_tokens`` is given by the caller;
* ``session_id`` (optional): a session or conversation id, a string of 1 to
  200 characters or an integer (compared as text), for ``session`` routing
  (``planner.traces.fleet``);
* other keys are ignored.

Parquet files hold the same columns as the JSONL formats (``hash_ids`` a list
of integers); malformed rows are reported by 1-based row number.

Common rules: times are converted to seconds since the first arrival
(``Trace.arrival_s``); rows are stably sorted by arrival (out-of-order rows are
counted in ``Trace.notes``); blank lines are skipped and not counted.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import pyarrow.json as pa_json
import pyarrow.parquet as pq

from planner.reads import DuplicateKey, unique_keys
from planner.errors import PlanInputError, json_kind, short_repr
from planner.traces.azure import parse_timestamp_ns, read_azure
from planner.traces.kernels import rows_with_repeats
from planner.traces.rows import (
    MAX_BLOCK_TOKENS, MAX_TOKENS_PER_REQUEST, MAX_TRACE_SPAN_S, Collector, RowError, check_block_tokens, finite,
    hash_ids, reason_of, whole,
)
from planner.traces.sources import MAX_TRACE_BYTES, Opened, TraceSource, decode, job_limit, line_chunks
from planner.traces.trace import MOONCAKE_BLOCK_TOKENS, Progress, Trace
from planner.messages import msg

__all__ = ["MAX_BLOCK_TOKENS", "MAX_TRACE_BYTES", "MAX_TRACE_SPAN_S", "parse_timestamp_ns", "read_azure",
           "read_jsonl", "read_mooncake"]

_F64, _I64 = pa.float64(), pa.int64()
_SCHEMAS = {
    "mooncake": pa.schema([("timestamp", _F64), ("input_length", _I64), ("output_length", _I64),
                           ("hash_ids", pa.list_(_I64))]),
    "jsonl": pa.schema([("timestamp_s", _F64), ("timestamp_ms", _F64), ("input_length", _I64),
                        ("output_length", _I64), ("hash_ids", pa.list_(_I64)), ("session_id", pa.string())]),
}
_JSONL_INT_SESSIONS = _SCHEMAS["jsonl"].set(5, pa.field("session_id", _I64))
MAX_SESSION_ID_CHARS: int = 200
"""Longest ``session_id`` string accepted."""
RowCheck = Callable[[dict], tuple[float, int, int, "list[int] | None"]]


# ---------------------------------------------------------------------------
# Per-row checks (the Python path)
# ---------------------------------------------------------------------------


def _mooncake_row(obj: dict, bt: int) -> tuple[float, int, int, list[int]]:
    if "timestamp" not in obj:
        raise RowError(msg("missing timestamp"))
    t_ms = finite(obj, "timestamp")
    inp = whole(obj, "input_length")
    out = whole(obj, "output_length")
    if "hash_ids" not in obj:
        raise RowError(msg("missing hash_ids"))
    return t_ms / 1000.0, inp, out, hash_ids(obj, inp, bt)


def _session(obj: dict) -> str | None:
    if "session_id" not in obj:
        return None
    v = obj["session_id"]
    if isinstance(v, bool) or not isinstance(v, (str, int)) or (isinstance(v, str) and not 1 <= len(v) <= MAX_SESSION_ID_CHARS):
        raise RowError(msg("session_id is {value}, not a string of 1 to {max_chars} characters or an integer",
                           value=short_repr(v), max_chars=MAX_SESSION_ID_CHARS))
    return str(v)


def _jsonl_row(obj: dict, bt: int | None) -> tuple[float, int, int, list[int] | None, str | None]:
    has_s, has_ms = "timestamp_s" in obj, "timestamp_ms" in obj
    if has_s == has_ms:
        raise RowError(msg("needs exactly one of timestamp_s, timestamp_ms"))
    t_s = finite(obj, "timestamp_s") if has_s else finite(obj, "timestamp_ms") / 1000.0
    inp = whole(obj, "input_length")
    out = whole(obj, "output_length")
    ids = None
    if "hash_ids" in obj:
        if bt is None:
            raise PlanInputError("block_tokens", None, msg("the block size in tokens of the trace's hash_ids (e.g. 16 "
                                                           "for vLLM, 512 for Mooncake)"))
        ids = hash_ids(obj, inp, bt)
    return t_s, inp, out, ids, _session(obj)


def _add_checked(rows: Collector, line_no: int, obj: object, check: RowCheck) -> None:
    rows.num_rows += 1
    try:
        if isinstance(obj, RowError):
            raise obj
        if not isinstance(obj, dict):
            raise RowError(msg("a JSON {kind}, not an object", kind=json_kind(obj)))
        rows.add(line_no, *check(obj))
    except RowError as exc:
        rows.bad(line_no, reason_of(exc))


def _json_lines(text: str, first_line: int) -> Iterator[tuple[int, object]]:
    """(line number, parsed value or RowError) for each non-blank line; an object with a key twice is a RowError
    naming the key (the one ``object_pairs_hook`` of plan files and ``config.json``)."""
    for k, line in enumerate(text.split("\n")):
        if not line.strip():
            continue
        try:
            yield first_line + k, json.loads(line, object_pairs_hook=unique_keys)
        except DuplicateKey as exc:
            yield first_line + k, RowError(msg("duplicate key {key}: each key once (JSON parsers disagree on which "
                                               "copy wins)", key=short_repr(exc.key)))
        except (ValueError, RecursionError) as exc:  # JSONDecodeError, a >4,300-digit integer, deep nesting
            yield first_line + k, RowError(msg("not valid JSON ({error})", error=str(getattr(exc, 'msg', exc))[:80]))


# ---------------------------------------------------------------------------
# Column checks (the fast path): all rows good, or None
# ---------------------------------------------------------------------------


def arrow_numpy(col: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A numeric arrow column without nulls as numpy, a view of its buffer where it can be.

    pyarrow's own ``to_numpy`` imports pandas (about half a second) on every path; a fixed-width
    integer or floating column is read from its data buffer instead (``np.frombuffer``), anything
    else (booleans, which arrow packs in bits) through ``to_numpy``.
    """
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    if (pa.types.is_integer(col.type) or pa.types.is_floating(col.type)) and col.null_count == 0:
        dtype = np.dtype(col.type.to_pandas_dtype())
        if len(col) == 0:
            return np.zeros(0, dtype)
        return np.frombuffer(col.buffers()[1], dtype=dtype, count=len(col), offset=col.offset * dtype.itemsize)
    return col.to_numpy(zero_copy_only=False)


def _np(table: pa.Table | pa.RecordBatch, name: str, kind: str) -> np.ndarray | None:
    """A column without nulls as numpy, else None."""
    col = table.column(name)
    if col.null_count:
        return None
    arr = arrow_numpy(col)
    return arr.astype(np.float64 if kind == "f" else np.int64, copy=False)


def _fast_columns(rows: Collector, table: pa.Table | pa.RecordBatch, fmt: str, first_line: int) -> bool:
    """Add a chunk whose every row passes; False (nothing added) when a row needs the Python path."""
    n = table.num_rows
    names = set(table.schema.names)
    if fmt == "mooncake":
        times = _np(table, "timestamp", "f") if "timestamp" in names else None
        if times is None:
            return False
        times = times / 1000.0
    else:
        has_s = "timestamp_s" in names and table.column("timestamp_s").null_count < n
        has_ms = "timestamp_ms" in names and table.column("timestamp_ms").null_count < n
        if has_s == has_ms:
            return False
        times = _np(table, "timestamp_s", "f") if has_s else _np(table, "timestamp_ms", "f")
        if times is None:
            return False
        times = times if has_s else times / 1000.0
    if not np.isfinite(times).all():
        return False
    lengths = []
    for key in ("input_length", "output_length"):
        v = _np(table, key, "i") if key in names else None
        if v is None or (v.size and (v.min() < 0 or v.max() > MAX_TOKENS_PER_REQUEST)):
            return False
        lengths.append(v)
    counts = flat = None
    if "hash_ids" in names and table.column("hash_ids").null_count < n:
        col = table.column("hash_ids")
        if col.null_count:
            return False
        if isinstance(col, pa.ChunkedArray):
            col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
        values = col.flatten()
        if values.null_count or (fmt == "jsonl" and rows.block_tokens is None):
            return False
        counts = np.diff(arrow_numpy(col.offsets)).astype(np.int64)
        flat = arrow_numpy(values).astype(np.int64, copy=False)
        bt = rows.block_tokens
        if (counts > -(-lengths[0] // bt)).any() or rows_with_repeats(counts, flat).any():
            return False
    elif fmt == "mooncake":
        return False
    sessions = None
    if "session_id" in names and table.column("session_id").null_count < n:
        col = table.column("session_id").cast(pa.string())
        if pa.compute.any(pa.compute.greater(pa.compute.utf8_length(col), MAX_SESSION_ID_CHARS)).as_py() or \
                pa.compute.any(pa.compute.equal(pa.compute.utf8_length(col), 0)).as_py():
            return False
        sessions = np.asarray(col.to_pylist(), dtype=object)
    rows.num_rows += n
    rows.add_columns(np.arange(first_line, first_line + n, dtype=np.int64), times, lengths[0], lengths[1],
                     counts, flat, sessions=sessions)
    return True


# ---------------------------------------------------------------------------
# The JSONL / Parquet driver
# ---------------------------------------------------------------------------


def _read_records(source: TraceSource, fmt: str, rows: Collector, check: RowCheck,
                  max_bytes: int | None, progress: Progress | None = None, name: str | None = None) -> str:
    """Fill ``rows`` from a JSONL (plain, gzip, zstd) or Parquet source; returns the display name (``name``,
    else the file's)."""
    opened = Opened(source, max_bytes, name)
    if opened.parquet:
        _read_parquet(opened, fmt, rows, check, progress)
        return opened.name
    schemas = [_SCHEMAS[fmt]] + ([_JSONL_INT_SESSIONS] if fmt == "jsonl" else [])   # string or integer session ids
    for first_line, offset, chunk in line_chunks(opened, progress=progress):
        table = None
        for schema in schemas:
            try:
                table = pa_json.read_json(
                    pa.BufferReader(chunk), read_options=pa_json.ReadOptions(block_size=4 << 20),
                    parse_options=pa_json.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore"))
                schemas = [schema] + [x for x in schemas if x is not schema]   # try what worked first next time
                break
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                pass
        lines = chunk.count(b"\n") + (0 if chunk.endswith(b"\n") else 1)
        if table is not None and table.num_rows == lines and _fast_columns(rows, table, fmt, first_line):
            continue
        for line_no, obj in _json_lines(decode(chunk, offset, opened.name), first_line):
            _add_checked(rows, line_no, obj, check)
        rows.flush()
    return opened.name


def open_parquet(opened: Opened) -> pq.ParquetFile:
    """The Parquet file behind ``opened``.

    Raises:
        PlanInputError: ``trace``, not a readable Parquet file (a truncated footer, a bad magic number).
    """
    try:
        return pq.ParquetFile(opened.parquet_source())
    except (pa.ArrowException, OSError) as exc:
        job_limit(exc)
        raise _unreadable_parquet(opened, exc) from None


def _unreadable_parquet(opened: Opened, exc: Exception) -> PlanInputError:
    return PlanInputError("trace", opened.name, msg("a readable Parquet file ({exc})", exc=str(exc)[:120]))


def _read_parquet(opened: Opened, fmt: str, rows: Collector, check: RowCheck, progress: Progress | None) -> None:
    pfile = open_parquet(opened)
    try:
        _read_parquet_batches(pfile, fmt, rows, check, progress)
    except (pa.ArrowException, OSError) as exc:  # a corrupt page or column chunk past the footer
        job_limit(exc)   # out of time or memory: the job says so, the file is not blamed
        raise _unreadable_parquet(opened, exc) from None


def _plain(value: object) -> object:
    """A Parquet cell as JSON would give it: a decimal as an int (whole) or float, so that the row checks name
    its value and range, never a ``Decimal(...)`` repr."""
    import decimal

    if isinstance(value, decimal.Decimal):
        return int(value) if value.is_finite() and value == value.to_integral_value() else float(value)
    return value


def _read_parquet_batches(pfile: pq.ParquetFile, fmt: str, rows: Collector, check: RowCheck,
                          progress: Progress | None) -> None:
    wanted = [f for f in _SCHEMAS[fmt] if f.name in pfile.schema_arrow.names]
    first = 1
    for batch in pfile.iter_batches(batch_size=1 << 16, columns=[f.name for f in wanted]):
        try:
            batch = pa.RecordBatch.from_arrays([batch.column(f.name).cast(f.type) for f in wanted],
                                               schema=pa.schema(wanted))
            fast = _fast_columns(rows, batch, fmt, first)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            fast = False
        if not fast:
            for k, obj in enumerate(batch.to_pylist()):
                _add_checked(rows, first + k, {key: _plain(v) for key, v in obj.items() if v is not None}, check)
            rows.flush()
        first += batch.num_rows
        if progress is not None:
            progress(min(1.0, (first - 1) / max(1, pfile.metadata.num_rows)), "reading")


# ---------------------------------------------------------------------------
# Readers
# ---------------------------------------------------------------------------


def read_mooncake(source: TraceSource, *, name: str | None = None, max_bytes: int | None = MAX_TRACE_BYTES,
                  source_note: str = "", sample_rate: float = 1.0, progress: Progress | None = None) -> Trace:
    """Read a Mooncake FAST'25 trace (``timestamp`` in ms, 512-token ``hash_ids``): JSONL or Parquet.

    Source: Qin et al., "Mooncake: Trading More Storage for Less Computation —
    A KVCache-centric Architecture for Serving LLM Chatbot", FAST '25, appendix A.

    Args:
        source: path, bytes or file-like (see the module docstring).
        name: display name (default: the file name).
        max_bytes: size limit, bytes (None: no limit, for local paths).
        source_note: attribution stored in ``Trace.source``.
        sample_rate: fraction of distinct blocks kept (``planner.traces.sampling``; 1 = all).
        progress: optional callback ``(fraction, label)`` after each chunk.

    Returns:
        A :class:`Trace` with ``block_tokens == 512``.

    Raises:
        PlanInputError: file too large, unreadable, not UTF-8, or no well-formed row.
    """
    rows = Collector(MOONCAKE_BLOCK_TOKENS, sample_rate)
    shown = _read_records(source, "mooncake", rows, lambda o: _mooncake_row(o, MOONCAKE_BLOCK_TOKENS), max_bytes,
                          progress, name)
    return rows.trace(name=name or shown, fmt="mooncake", source=source_note)


def read_jsonl(source: TraceSource, *, block_tokens: int | None = None, name: str | None = None,
               max_bytes: int | None = MAX_TRACE_BYTES, source_note: str = "", sample_rate: float = 1.0,
               progress: Progress | None = None) -> Trace:
    """Read the generic trace format (module docstring, docs/traces.md): JSONL or Parquet.

    Args:
        source: path, bytes or file-like.
        block_tokens: tokens per ``hash_ids`` block; required when rows carry
            ``hash_ids`` (16 for vLLM's default, 512 for Mooncake).
        name: display name (default: the file name).
        max_bytes: size limit, bytes (None: no limit, for local paths).
        source_note: attribution stored in ``Trace.source``.
        sample_rate: fraction of distinct blocks kept (1 = all).
        progress: optional callback ``(fraction, label)`` after each chunk.

    Raises:
        PlanInputError: bad ``block_tokens``; rows carry ``hash_ids`` but
            ``block_tokens`` is None; file too large, unreadable, not UTF-8, or
            no well-formed row.
    """
    bt = check_block_tokens(block_tokens)
    rows = Collector(bt, sample_rate)
    shown = _read_records(source, "jsonl", rows, lambda o: _jsonl_row(o, bt), max_bytes, progress, name)
    return rows.trace(name=name or shown, fmt="jsonl", source=source_note)
