"""Trace readers: Mooncake JSONL, Azure LLM inference CSV, and a generic JSONL.

Every reader returns a :class:`Trace`: requests sorted by arrival, with their
prompt and output lengths and, when the format carries them, the prefix-block
hash IDs of each prompt. Malformed rows are skipped, counted and reported
(:class:`MalformedRows`: the first few line numbers and reasons); they never
stop a read. Whole-file problems (too large, not UTF-8, missing CSV columns, no
well-formed row at all) raise :class:`planner.errors.PlanInputError`.

Sources: a path (``str`` or ``os.PathLike``), the file's contents as
``bytes``/``bytearray``/``memoryview``, or a file-like object whose ``read()``
returns bytes or text (a Streamlit ``UploadedFile``, ``io.StringIO``). Text
must be UTF-8 (a byte-order mark is ignored).

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
* other keys are ignored.

Common rules: times are converted to seconds since the first arrival
(``Trace.arrival_s``); rows are stably sorted by arrival (out-of-order rows are
counted in ``Trace.notes``); blank lines are skipped and not counted.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import IO, Literal, Union

import numpy as np
import pandas as pd

from planner.errors import PlanInputError, short_repr
from planner.units import MB

TraceFormat = Literal["mooncake", "azure", "jsonl"]
"""Trace file formats the readers understand (see the module docstring)."""

FORMATS: tuple[str, ...] = ("mooncake", "azure", "jsonl")
"""Format ids, in help order."""

MAX_TRACE_BYTES: int = 64 * MB
"""Largest trace file accepted, 64 MB = 64,000,000 B (the bundled Mooncake
conversation trace is 3,029,533 B)."""

MOONCAKE_BLOCK_TOKENS: int = 512
"""Tokens per ``hash_ids`` block in the Mooncake FAST'25 traces (appendix A)."""

MAX_BLOCK_TOKENS: int = 1 << 20
"""Largest block size accepted, tokens."""

MAX_TOKENS_PER_REQUEST: int = 10**9
"""Largest prompt or output length accepted per row, tokens."""

NUM_MALFORMED_EXAMPLES: int = 5
"""How many malformed rows are reported with their line number and reason."""

MAX_TRACE_SPAN_S: float = 366 * 86_400
"""Longest span from the first to the last arrival, seconds (366 days = 31,622,400 s).

Per-minute figures hold one bin per minute of the span (527,040 at most); a
longer span is almost always milliseconds read as seconds, or one stray row."""

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

TraceSource = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, IO]
"""A path, the file's bytes, or a file-like object (bytes or text)."""


@dataclass(frozen=True, kw_only=True)
class MalformedRows:
    """Rows a reader skipped.

    Attributes:
        num_rows: data rows seen (header and blank lines excluded).
        num_malformed: rows skipped as malformed.
        examples: ``(line_number, reason)`` of the first
            :data:`NUM_MALFORMED_EXAMPLES` malformed rows; line numbers are
            1-based lines of the file.
    """

    num_rows: int
    num_malformed: int
    examples: tuple[tuple[int, str], ...] = ()

    def summary(self) -> str:
        """One line: "2 of 1,000 rows malformed (line 3: ...; line 9: ...)" or "no malformed rows"."""
        if not self.num_malformed:
            return f"no malformed rows ({self.num_rows:,} rows read)"
        shown = "; ".join(f"line {line}: {reason}" for line, reason in self.examples)
        more = ", ..." if self.num_malformed > len(self.examples) else ""
        return f"{self.num_malformed:,} of {self.num_rows:,} rows malformed and skipped ({shown}{more})"


def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


@dataclass(frozen=True, kw_only=True, eq=False)
class Trace:
    """A request trace, sorted by arrival. Arrays are read-only numpy arrays.

    Attributes:
        name: file name or sample name, for display.
        format: the format it was read as (:data:`TraceFormat`).
        block_tokens: tokens per hashed block, or None when the trace has no
            prefix hashes (hit rates are then not measurable).
        arrival_s: shape (num_requests,), float64, seconds since the first
            arrival, non-decreasing.
        input_tokens: shape (num_requests,), int64, prompt tokens.
        output_tokens: shape (num_requests,), int64, generated tokens.
        block_offsets: shape (num_requests + 1,), int64, or None: request
            ``i``'s blocks are ``block_ids[block_offsets[i]:block_offsets[i+1]]``.
        block_ids: shape (num_block_refs,), int64, or None: prefix-block IDs
            remapped to dense integers ``0 .. num_unique_blocks - 1`` (equal
            IDs in the file map to equal integers).
        malformed: rows skipped while reading.
        notes: facts about the read a user should see (reordering, no hashes).
        source: where the trace comes from and how to cite it ("" if unknown).
    """

    name: str
    format: str
    block_tokens: int | None
    arrival_s: np.ndarray
    input_tokens: np.ndarray
    output_tokens: np.ndarray
    block_offsets: np.ndarray | None = None
    block_ids: np.ndarray | None = None
    malformed: MalformedRows = field(default_factory=lambda: MalformedRows(num_rows=0, num_malformed=0))
    notes: tuple[str, ...] = ()
    source: str = ""

    @property
    def num_requests(self) -> int:
        """Requests in the trace."""
        return int(self.arrival_s.shape[0])

    @property
    def has_prefix_hashes(self) -> bool:
        """True when hit rates can be measured (the trace carries block hashes)."""
        return self.block_ids is not None

    @property
    def num_block_refs(self) -> int:
        """Block references: the total length of all requests' ``hash_ids`` (0 without hashes)."""
        return 0 if self.block_ids is None else int(self.block_ids.shape[0])

    @property
    def num_unique_blocks(self) -> int:
        """Distinct block IDs (0 without hashes)."""
        if self.block_ids is None or self.block_ids.size == 0:
            return 0
        return int(self.block_ids.max()) + 1

    @property
    def num_blocks(self) -> np.ndarray:
        """Shape (num_requests,), int64: hashed blocks per request (zeros without hashes)."""
        if self.block_offsets is None:
            return np.zeros(self.num_requests, dtype=np.int64)
        return np.diff(self.block_offsets)

    @property
    def duration_s(self) -> float:
        """Seconds from the first to the last arrival."""
        return float(self.arrival_s[-1]) if self.num_requests else 0.0

    def ref_tokens(self) -> np.ndarray:
        """Shape (num_block_refs,), int64: real prompt tokens in each referenced block.

        Block ``j`` of a request covers tokens ``[j*B, min((j+1)*B, input_length))``
        with ``B = block_tokens``, so every block holds ``B`` tokens except a
        request's partial last block, which holds ``input_length - j*B``.
        """
        if self.block_ids is None or self.block_offsets is None:
            return np.zeros(0, dtype=np.int64)
        counts = self.num_blocks
        req = np.repeat(np.arange(self.num_requests), counts)
        pos = np.arange(self.num_block_refs, dtype=np.int64) - self.block_offsets[:-1][req]
        tokens = self.input_tokens[req] - pos * self.block_tokens
        return np.clip(tokens, 0, self.block_tokens)

    def to_frame(self) -> pd.DataFrame:
        """One row per request: ``arrival_s`` (s since first arrival), ``input_tokens``,
        ``output_tokens``, ``num_blocks`` (hashed blocks; 0 without hashes)."""
        return pd.DataFrame({
            "arrival_s": self.arrival_s,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "num_blocks": self.num_blocks,
        })


# ---------------------------------------------------------------------------
# Sources
# ---------------------------------------------------------------------------


def _too_large(size: int, max_bytes: int) -> PlanInputError:
    return PlanInputError("trace", f"{size:,} B",
                          f"a file of at most {max_bytes:,} B ({max_bytes / MB:g} MB)")


def read_source(source: TraceSource, *, max_bytes: int = MAX_TRACE_BYTES) -> tuple[str, str]:
    """The text of ``source`` and a display name.

    Raises:
        PlanInputError: larger than ``max_bytes``, missing file, or not UTF-8.
    """
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        try:
            size = os.path.getsize(path)
        except OSError as exc:
            raise PlanInputError("trace", path, f"a readable file ({exc.strerror or exc})") from None
        if size > max_bytes:
            raise _too_large(size, max_bytes)
        try:
            with open(path, "rb") as fh:
                data: bytes | str = fh.read(max_bytes + 1)
        except OSError as exc:  # a directory, a permission, a vanished file
            raise PlanInputError("trace", path, f"a readable file ({exc.strerror or exc})") from None
        name = os.path.basename(path)
    elif isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        name = "uploaded trace"
    elif hasattr(source, "read"):
        size = getattr(source, "size", None)  # Streamlit UploadedFile
        if isinstance(size, int) and size > max_bytes:
            raise _too_large(size, max_bytes)
        data = source.read(max_bytes + 1)
        name = str(getattr(source, "name", "") or "uploaded trace")
    else:
        raise PlanInputError("trace", type(source).__name__, "a path, bytes or a file-like object")
    if len(data) > max_bytes:
        raise _too_large(len(data), max_bytes)
    if isinstance(data, str):
        return data.removeprefix("\ufeff"), name
    try:
        return data.decode("utf-8-sig"), name
    except UnicodeDecodeError as exc:
        raise PlanInputError("trace", name, f"UTF-8 text (byte {exc.start:,} is not)") from None


# ---------------------------------------------------------------------------
# Row validation
# ---------------------------------------------------------------------------


class _RowError(ValueError):
    """A malformed row; the message is the reason shown to the user."""


def _whole(row: dict, key: str, *, lo: int = 0, hi: int = MAX_TOKENS_PER_REQUEST) -> int:
    if key not in row:
        raise _RowError(f"missing {key}")
    v = row[key]
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise _RowError(f"{key} is {short_repr(v)}, not a whole number")
    if isinstance(v, float):
        if not (math.isfinite(v) and v.is_integer()):
            raise _RowError(f"{key} is {short_repr(v)}, not a whole number")
        v = int(v)
    if not lo <= v <= hi:
        raise _RowError(f"{key} is {v:,}, outside [{lo:,}, {hi:,}]")
    return v


def _finite(row: dict, key: str) -> float:
    v = row[key]
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise _RowError(f"{key} is {short_repr(v)}, not a finite number")
    return float(v)


def _hash_ids(row: dict, input_tokens: int, block_tokens: int) -> list[int]:
    ids = row["hash_ids"]
    if not isinstance(ids, list):
        raise _RowError(f"hash_ids is {type(ids).__name__}, not a list")
    if not all(type(h) is int for h in ids):
        bad = next(h for h in ids if type(h) is not int)
        raise _RowError(f"hash_ids holds {short_repr(bad)}, not an integer")
    if ids and (min(ids) < _INT64_MIN or max(ids) > _INT64_MAX):
        raise _RowError("hash_ids holds an integer outside the signed 64-bit range")
    max_blocks = -(-input_tokens // block_tokens)
    if len(ids) > max_blocks:
        raise _RowError(f"hash_ids has {len(ids):,} blocks but input_length {input_tokens:,} "
                        f"fills at most {max_blocks:,} blocks of {block_tokens:,} tokens")
    if len(set(ids)) != len(ids):
        raise _RowError("hash_ids repeats an ID (chained block hashes are unique within a request)")
    return ids


class _Collector:
    """Accumulates rows and malformed-row reasons."""

    def __init__(self) -> None:
        self.num_rows = 0
        self.num_malformed = 0
        self.examples: list[tuple[int, str]] = []
        self.lines: list[int] = []
        self.times: list[float] = []
        self.inputs: list[int] = []
        self.outputs: list[int] = []
        self.hashes: list[list[int] | None] = []

    def bad(self, line: int, reason: str) -> None:
        self.num_malformed += 1
        if len(self.examples) < NUM_MALFORMED_EXAMPLES:
            self.examples.append((line, reason))

    def add(self, line: int, time_s: float, inp: int, out: int, ids: list[int] | None) -> None:
        self.lines.append(line)
        self.times.append(time_s)
        self.inputs.append(inp)
        self.outputs.append(out)
        self.hashes.append(ids)

    def malformed(self) -> MalformedRows:
        return MalformedRows(num_rows=self.num_rows, num_malformed=self.num_malformed,
                             examples=tuple(self.examples))


def _build(rows: _Collector, *, name: str, fmt: str, block_tokens: int | None, source: str = "",
           extra_notes: tuple[str, ...] = ()) -> Trace:
    """Sort by arrival, remap hash IDs to dense integers, freeze."""
    if not rows.times:
        first = f" ({rows.examples[0][1]} on line {rows.examples[0][0]})" if rows.examples else ""
        raise PlanInputError("trace", name, f"at least one well-formed {fmt} row; read {rows.num_rows:,} rows, "
                                            f"{rows.num_malformed:,} malformed{first}")
    times = np.asarray(rows.times, dtype=np.float64)
    notes = list(extra_notes)
    order = np.argsort(times, kind="stable")
    span = float(times[order[-1]]) - float(times[order[0]])  # Python floats: 1e308 - (-1e308) is inf, no warning
    if not span <= MAX_TRACE_SPAN_S:
        raise PlanInputError("trace", name, f"arrivals spanning at most {MAX_TRACE_SPAN_S:,.0f} s (366 days); "
                                            f"this trace spans {span:,.6g} s: check the timestamp unit "
                                            "(timestamp_ms vs timestamp_s) and stray rows")
    num_back = int(np.count_nonzero(np.diff(times) < 0))
    if num_back:
        notes.append(f"Rows were not in arrival order ({num_back:,} steps back in time); "
                     "requests were stably sorted by arrival.")
    arrival = times[order] - times[order[0]]
    inputs = np.asarray(rows.inputs, dtype=np.int64)[order]
    outputs = np.asarray(rows.outputs, dtype=np.int64)[order]
    offsets = ids = None
    has = [h is not None for h in rows.hashes]
    if any(has):
        hashes = [rows.hashes[i] for i in order]
        counts = np.fromiter((len(h) for h in hashes), dtype=np.int64, count=len(hashes))
        offsets = np.zeros(len(hashes) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        flat = np.fromiter((x for h in hashes for x in h), dtype=np.int64, count=int(offsets[-1]))
        _, inverse = np.unique(flat, return_inverse=True)
        ids = _frozen(inverse.astype(np.int64).reshape(-1))
        offsets = _frozen(offsets)
    else:
        block_tokens = None
        notes.append("No prefix block hashes: prefix-cache hit rates cannot be measured from this trace; "
                     "lengths, arrivals and concurrency still can.")
    return Trace(name=name, format=fmt, block_tokens=block_tokens, arrival_s=_frozen(arrival),
                 input_tokens=_frozen(inputs), output_tokens=_frozen(outputs), block_offsets=offsets,
                 block_ids=ids, malformed=rows.malformed(), notes=tuple(notes), source=source)


def _check_block_tokens(block_tokens: int | None) -> int | None:
    if block_tokens is None:
        return None
    if isinstance(block_tokens, bool) or not isinstance(block_tokens, int) or not 1 <= block_tokens <= MAX_BLOCK_TOKENS:
        raise PlanInputError("block_tokens", block_tokens, f"a whole number of tokens in [1, {MAX_BLOCK_TOKENS:,}]")
    return block_tokens


def _json_rows(text: str):
    """Yield (line_number, parsed object or _RowError) for each non-blank line."""
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError) as exc:  # JSONDecodeError, a >4,300-digit integer, deep nesting
            yield line_no, _RowError(f"not valid JSON ({str(getattr(exc, 'msg', exc))[:80]})")
            continue
        if not isinstance(obj, dict):
            yield line_no, _RowError(f"a JSON {type(obj).__name__}, not an object")
            continue
        yield line_no, obj


# ---------------------------------------------------------------------------
# Readers
# ---------------------------------------------------------------------------


def read_mooncake(source: TraceSource, *, name: str | None = None, max_bytes: int = MAX_TRACE_BYTES,
                  source_note: str = "") -> Trace:
    """Read a Mooncake FAST'25 JSONL trace (``timestamp`` in ms, 512-token ``hash_ids``).

    Source: Qin et al., "Mooncake: Trading More Storage for Less Computation —
    A KVCache-centric Architecture for Serving LLM Chatbot", FAST '25, appendix A.

    Args:
        source: path, bytes or file-like (see the module docstring).
        name: display name (default: the file name).
        max_bytes: size limit, bytes.
        source_note: attribution stored in ``Trace.source``.

    Returns:
        A :class:`Trace` with ``block_tokens == 512``.

    Raises:
        PlanInputError: file too large, unreadable, not UTF-8, or no well-formed row.
    """
    text, shown = read_source(source, max_bytes=max_bytes)
    rows = _Collector()
    bt = MOONCAKE_BLOCK_TOKENS
    for line_no, obj in _json_rows(text):
        rows.num_rows += 1
        try:
            if isinstance(obj, _RowError):
                raise obj
            if "timestamp" not in obj:
                raise _RowError("missing timestamp")
            t_ms = _finite(obj, "timestamp")
            inp = _whole(obj, "input_length")
            out = _whole(obj, "output_length")
            if "hash_ids" not in obj:
                raise _RowError("missing hash_ids")
            ids = _hash_ids(obj, inp, bt)
        except _RowError as exc:
            rows.bad(line_no, str(exc))
            continue
        rows.add(line_no, t_ms / 1000.0, inp, out, ids)
    return _build(rows, name=name or shown, fmt="mooncake", block_tokens=bt, source=source_note)


def read_jsonl(source: TraceSource, *, block_tokens: int | None = None, name: str | None = None,
               max_bytes: int = MAX_TRACE_BYTES, source_note: str = "") -> Trace:
    """Read the generic JSONL trace format (documented in the module docstring and docs/traces.md).

    Args:
        source: path, bytes or file-like.
        block_tokens: tokens per ``hash_ids`` block; required when rows carry
            ``hash_ids`` (16 for vLLM's default, 512 for Mooncake).
        name: display name (default: the file name).
        max_bytes: size limit, bytes.
        source_note: attribution stored in ``Trace.source``.

    Raises:
        PlanInputError: bad ``block_tokens``; rows carry ``hash_ids`` but
            ``block_tokens`` is None; file too large, unreadable, not UTF-8, or
            no well-formed row.
    """
    bt = _check_block_tokens(block_tokens)
    text, shown = read_source(source, max_bytes=max_bytes)
    rows = _Collector()
    for line_no, obj in _json_rows(text):
        rows.num_rows += 1
        try:
            if isinstance(obj, _RowError):
                raise obj
            has_s, has_ms = "timestamp_s" in obj, "timestamp_ms" in obj
            if has_s == has_ms:
                raise _RowError("needs exactly one of timestamp_s, timestamp_ms")
            t_s = _finite(obj, "timestamp_s") if has_s else _finite(obj, "timestamp_ms") / 1000.0
            inp = _whole(obj, "input_length")
            out = _whole(obj, "output_length")
            ids = None
            if "hash_ids" in obj:
                if bt is None:
                    raise PlanInputError("block_tokens", None,
                                         "the block size in tokens of the trace's hash_ids "
                                         "(e.g. 16 for vLLM, 512 for Mooncake)")
                ids = _hash_ids(obj, inp, bt)
        except _RowError as exc:
            rows.bad(line_no, str(exc))
            continue
        rows.add(line_no, t_s, inp, out, ids)
    # Either every row has hash_ids or none does: a row without them among
    # hashed rows would silently count as all-miss.
    with_ids = sum(h is not None for h in rows.hashes)
    if 0 < with_ids < len(rows.hashes):
        kept = _Collector()
        kept.num_rows, kept.num_malformed, kept.examples = rows.num_rows, rows.num_malformed, rows.examples
        for line, t, i, o, h in zip(rows.lines, rows.times, rows.inputs, rows.outputs, rows.hashes):
            if h is None:
                kept.bad(line, "missing hash_ids (other rows have them)")
            else:
                kept.add(line, t, i, o, h)
        kept.examples.sort()
        rows = kept
    return _build(rows, name=name or shown, fmt="jsonl", block_tokens=bt, source=source_note)


_AZURE_COLUMNS = ("TIMESTAMP", "ContextTokens", "GeneratedTokens")
_TS = re.compile(r"^\s*(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?"
                 r"\s*(Z|[+-]\d{2}:?\d{2})?\s*$")


def parse_timestamp_ns(text: str) -> int:
    """A datetime string -> integer nanoseconds since 1970-01-01 (naive = UTC).

    Keeps all 7 fractional digits of the Azure trace (100 ns), which
    ``datetime`` would truncate to microseconds.

    >>> parse_timestamp_ns("1970-01-01 00:00:01.0000001")
    1000000100

    Raises:
        ValueError: not ``YYYY-MM-DD HH:MM:SS[.fffffffff][Z|+HH:MM]``, or a date
            that does not exist (also after applying the offset, e.g.
            ``0001-01-01 00:00:00+01:00``).
    """
    m = _TS.match(text)
    if not m:
        raise ValueError(f"{text[:60]!r} is not a YYYY-MM-DD HH:MM:SS[.fraction] timestamp")
    y, mo, d, hh, mm, ss, frac, tz = m.groups()
    try:
        dt = datetime(int(y), int(mo), int(d), int(hh), int(mm), int(ss), tzinfo=timezone.utc)
        if tz and tz != "Z":
            sign = 1 if tz[0] == "+" else -1
            digits = tz[1:].replace(":", "")
            dt -= sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    except OverflowError:
        raise ValueError(f"{text.strip()!r} is outside the years 1 to 9999 in UTC") from None
    whole_s = (dt - datetime(1970, 1, 1, tzinfo=timezone.utc)) // timedelta(seconds=1)
    frac_ns = int((frac or "0").ljust(9, "0"))
    return whole_s * 10**9 + frac_ns


def read_azure(source: TraceSource, *, name: str | None = None, max_bytes: int = MAX_TRACE_BYTES,
               source_note: str = "") -> Trace:
    """Read an Azure LLM inference trace CSV (``TIMESTAMP,ContextTokens,GeneratedTokens``).

    Lengths and arrivals only: the result has no prefix hashes, so hit rates are
    not measurable (``Trace.has_prefix_hashes`` is False and ``notes`` says so).
    Source: Patel et al., "Splitwise: Efficient Generative LLM Inference Using
    Phase Splitting", ISCA 2024; Azure/AzurePublicDataset.

    Raises:
        PlanInputError: file too large, unreadable, not UTF-8, a header without
            the three columns, or no well-formed row.
    """
    text, shown = read_source(source, max_bytes=max_bytes)
    shown = name or shown
    reader = csv.reader(io.StringIO(text))
    header: list[str] | None = None
    cols: list[int] = []
    rows = _Collector()
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:  # e.g. a field over csv.field_size_limit(): the reader goes on with the next line
            if header is None:
                raise PlanInputError("trace", shown, f"a CSV header row ({exc})") from None
            rows.num_rows += 1
            rows.bad(reader.line_num, f"not a CSV row ({exc})")
            continue
        line_no = reader.line_num
        if not fields or all(not f.strip() for f in fields):
            continue
        if header is None:
            header = [f.strip() for f in fields]
            lower = [h.lower() for h in header]
            missing = [c for c in _AZURE_COLUMNS if c.lower() not in lower]
            if missing:
                raise PlanInputError("trace", shown, "a CSV header with columns " + ", ".join(_AZURE_COLUMNS)
                                     + f" (missing {', '.join(missing)})")
            cols = [lower.index(c.lower()) for c in _AZURE_COLUMNS]
            continue
        rows.num_rows += 1
        try:
            if len(fields) != len(header):
                raise _RowError(f"{len(fields)} fields, the header has {len(header)}")
            try:
                t_ns = parse_timestamp_ns(fields[cols[0]])
            except ValueError as exc:
                raise _RowError(f"TIMESTAMP {exc}") from None
            vals = {}
            for key, idx in zip(_AZURE_COLUMNS[1:], cols[1:]):
                raw = fields[idx].strip()
                try:
                    vals[key] = float(raw) if raw else raw
                except ValueError:
                    vals[key] = raw
            inp = _whole(vals, "ContextTokens")
            out = _whole(vals, "GeneratedTokens")
        except _RowError as exc:
            rows.bad(line_no, str(exc))
            continue
        rows.add(line_no, t_ns, inp, out, None)
    if header is None:
        raise PlanInputError("trace", shown, "a CSV header with columns " + ", ".join(_AZURE_COLUMNS))
    if rows.times:
        # Integer ns relative to the first arrival keeps 100 ns resolution in float64 seconds.
        t0 = min(rows.times)
        rows.times = [(t - t0) / 1e9 for t in rows.times]
    return _build(rows, name=shown, fmt="azure", block_tokens=None, source=source_note)


def detect_format(text_head: str) -> str:
    """Guess a format from the start of a file: ``azure``, ``mooncake`` or ``jsonl``.

    A first non-blank line starting with ``{`` is JSONL: ``mooncake`` when it
    has a ``timestamp`` key, else ``jsonl``; otherwise ``azure`` (CSV).
    """
    for line in text_head.splitlines():
        if not line.strip():
            continue
        if line.lstrip().startswith("{"):
            try:
                obj = json.loads(line)
            except (ValueError, RecursionError):  # not JSON, a >4,300-digit integer, deep nesting
                return "jsonl"
            return "mooncake" if isinstance(obj, dict) and "timestamp" in obj else "jsonl"
        return "azure"
    return "jsonl"


def read_trace(source: TraceSource, *, format: str | None = None, block_tokens: int | None = None,
               name: str | None = None, max_bytes: int = MAX_TRACE_BYTES) -> Trace:
    """Read a trace in any supported format, or a bundled sample (``"sample:conversation"``).

    Args:
        source: path, bytes, file-like, or ``"sample:NAME"`` (see
            :data:`planner.traces.samples.SAMPLES`).
        format: one of :data:`FORMATS`, or None to detect it from the content.
        block_tokens: tokens per ``hash_ids`` block, for ``jsonl`` (Mooncake is
            512 and rejects any other value; Azure has no blocks and ignores it).
        name: display name.
        max_bytes: size limit, bytes.

    Raises:
        PlanInputError: unknown format or sample, a ``block_tokens`` the format
            cannot take, or any error of the chosen reader.
    """
    if isinstance(source, str) and source.startswith("sample:"):
        from planner.traces.samples import load_sample

        trace = load_sample(source.removeprefix("sample:"))
        if format is not None and format != trace.format:
            raise PlanInputError("format", format, f"{trace.format} for {source}")
        if block_tokens is not None and trace.block_tokens is not None and block_tokens != trace.block_tokens:
            raise PlanInputError("block_tokens", block_tokens, f"{trace.block_tokens} for {source}")
        return trace
    if format is not None and format not in FORMATS:
        raise PlanInputError("format", format, "one of " + ", ".join(FORMATS))
    detected = format is None
    if format is None:
        text, shown = read_source(source, max_bytes=max_bytes)
        format = detect_format(text[:65536])
        source, name = io.StringIO(text), name or shown
    if format == "mooncake":
        if detected and block_tokens is not None and block_tokens != MOONCAKE_BLOCK_TOKENS:
            block_tokens = None  # the generic-JSONL block size does not apply to a detected Mooncake trace
        if block_tokens is not None and block_tokens != MOONCAKE_BLOCK_TOKENS:
            raise PlanInputError("block_tokens", block_tokens,
                                 f"{MOONCAKE_BLOCK_TOKENS} for Mooncake traces (their hash_ids cover 512-token blocks)")
        return read_mooncake(source, name=name, max_bytes=max_bytes)
    if format == "azure":
        return read_azure(source, name=name, max_bytes=max_bytes)
    return read_jsonl(source, block_tokens=block_tokens, name=name, max_bytes=max_bytes)
