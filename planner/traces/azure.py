"""Azure LLM inference trace CSV (``TIMESTAMP,ContextTokens,GeneratedTokens``): lengths and arrivals only.

Patel et al., "Splitwise: Efficient Generative LLM Inference Using Phase
Splitting", ISCA 2024; Azure/AzurePublicDataset. The timestamp is a naive
datetime such as ``2023-11-16 18:15:46.6805900`` (an ISO 8601 offset such as
``+00:00`` is also accepted, as in the 2024 trace). Read with Python's ``csv``
module over the chunks of :mod:`planner.traces.sources` (plain, gzip, zstd; any
size for a local path).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

from planner.errors import PlanInputError
from planner.traces.rows import Collector, RowError, reason_of, whole
from planner.traces.sources import MAX_TRACE_BYTES, Opened, TraceSource, decode, line_chunks
from planner.traces.trace import Trace
from planner.messages import msg


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


def _text_lines(opened: Opened) -> Iterator[str]:
    for _, offset, chunk in line_chunks(opened):
        yield from decode(chunk, offset, opened.name).splitlines(keepends=True)


def read_azure(source: TraceSource, *, name: str | None = None, max_bytes: int | None = MAX_TRACE_BYTES,
               source_note: str = "") -> Trace:
    """Read an Azure LLM inference trace CSV (``TIMESTAMP,ContextTokens,GeneratedTokens``), plain or compressed.

    Lengths and arrivals only: the result has no prefix hashes, so hit rates are
    not measurable (``Trace.has_prefix_hashes`` is False and ``notes`` says so).
    Source: Patel et al., "Splitwise: Efficient Generative LLM Inference Using
    Phase Splitting", ISCA 2024; Azure/AzurePublicDataset.

    Raises:
        PlanInputError: file too large, unreadable, not UTF-8, a header without
            the three columns, or no well-formed row.
    """
    opened = Opened(source, max_bytes, name)
    shown = opened.name
    reader = csv.reader(_text_lines(opened))
    header: list[str] | None = None
    cols: list[int] = []
    rows = Collector(None)
    parsed: list[tuple[int, int, int, int]] = []   # (line, ns since 1970, prompt tokens, output tokens)
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:  # e.g. a field over csv.field_size_limit(): the reader goes on with the next line
            if header is None:
                raise PlanInputError("trace", shown, msg("a CSV header row ({exc})", exc=exc)) from None
            rows.num_rows += 1
            rows.bad(reader.line_num, msg("not a CSV row ({exc})", exc=exc))
            continue
        line_no = reader.line_num
        if not fields or all(not f.strip() for f in fields):
            continue
        if header is None:
            header = [f.strip() for f in fields]
            lower = [h.lower() for h in header]
            missing = [c for c in _AZURE_COLUMNS if c.lower() not in lower]
            if missing:
                raise PlanInputError("trace", shown, msg("a CSV header with columns {choices} (missing {choices2})",
                                                         choices=", ".join(_AZURE_COLUMNS),
                                                         choices2=', '.join(missing)))
            cols = [lower.index(c.lower()) for c in _AZURE_COLUMNS]
            continue
        rows.num_rows += 1
        try:
            if len(fields) != len(header):
                raise RowError(msg("{count} fields, the header has {header}", count=len(fields), header=len(header)))
            try:
                t_ns = parse_timestamp_ns(fields[cols[0]])
            except ValueError as exc:
                raise RowError(msg("TIMESTAMP {exc}", exc=exc)) from None
            vals = {}
            for key, idx in zip(_AZURE_COLUMNS[1:], cols[1:]):
                raw = fields[idx].strip()
                try:
                    # digits only: an exact int (a 309-digit count is out of range, not float inf)
                    vals[key] = (int(raw) if raw.isascii() and raw.isdigit() and len(raw) <= 4_000
                                 else float(raw) if raw else raw)
                except ValueError:
                    vals[key] = raw
            inp = whole(vals, "ContextTokens")
            out = whole(vals, "GeneratedTokens")
        except RowError as exc:
            rows.bad(line_no, reason_of(exc))
            continue
        parsed.append((line_no, t_ns, inp, out))
    if header is None:
        raise PlanInputError("trace", shown, msg("a CSV header with columns {choices}",
                                                 choices=", ".join(_AZURE_COLUMNS)))
    # Integer ns relative to the first arrival keeps 100 ns resolution in float64 seconds.
    t0 = min((t for _, t, _, _ in parsed), default=0)
    for line_no, t_ns, inp, out in parsed:
        rows.add(line_no, (t_ns - t0) / 1e9, inp, out, None)
    return rows.trace(name=shown, fmt="azure", source=source_note)
