"""Rows into a :class:`~planner.traces.trace.Trace`: per-row checks, columnar accumulation, assembly.

Readers hand rows to a :class:`Collector` a chunk at a time, as numpy
columns (the fast, columnar path) or one by one after the Python checks
below (the path that names each malformed row's line and reason). The
collector applies hash sampling as rows arrive, so a sampled read never holds
the unsampled references, and :meth:`Collector.trace` sorts by arrival and
freezes the arrays.
"""

from __future__ import annotations

import math

import numpy as np

from planner.errors import PlanInputError, json_kind, short_repr
from planner.traces.kernels import gather_requests, splitmix64
from planner.traces.sources import release_memory
from planner.traces.trace import NUM_MALFORMED_EXAMPLES, MalformedRows, Trace
from planner.messages import msg

MAX_BLOCK_TOKENS: int = 1 << 20
"""Largest block size accepted, tokens."""

MAX_TOKENS_PER_REQUEST: int = 10**9
"""Largest prompt or output length accepted per row, tokens."""

MAX_TRACE_SPAN_S: float = 366 * 86_400
"""Longest span from the first to the last arrival, seconds (366 days = 31,622,400 s).

Per-minute figures hold one bin per minute of the span (527,040 at most); a
longer span is almost always milliseconds read as seconds, or one stray row."""

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_DENSE_ID_LIMIT = 2**31 - 2


class RowError(ValueError):
    """A malformed row; the message is the reason shown to the user."""


def reason_of(exc: RowError) -> str:
    """A RowError's reason, as written (a :class:`planner.messages.Message` stays one, for translation)."""
    return exc.args[0] if len(exc.args) == 1 and isinstance(exc.args[0], str) else str(exc)


def whole(row: dict, key: str, *, lo: int = 0, hi: int = MAX_TOKENS_PER_REQUEST) -> int:
    """``row[key]`` as a whole number in ``[lo, hi]`` (a float with no fraction is accepted)."""
    if key not in row:
        raise RowError(msg("missing {key}", key=key))
    v = row[key]
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise RowError(msg("{key} is {value}, not a whole number", key=key, value=short_repr(v)))
    if isinstance(v, float):
        if not (math.isfinite(v) and v.is_integer()):
            raise RowError(msg("{key} is {value}, not a whole number", key=key, value=short_repr(v)))
        v = int(v)
    if not lo <= v <= hi:
        if abs(v) >= 10**20:   # a 309-digit length is named by its digits, not written out
            raise RowError(msg("{key} is a {digits:,}-digit number, outside [{lo:,}, {hi:,}]", key=key,
                               digits=_digits(v), lo=lo, hi=hi))
        raise RowError(msg("{key} is {v:,}, outside [{lo:,}, {hi:,}]", key=key, v=v, lo=lo, hi=hi))
    return v


def _digits(v: int) -> int:
    """Decimal digits of ``abs(v)`` (from its bit length past Python's 4,300-digit ``str`` limit)."""
    v = abs(v)
    return len(str(v)) if v.bit_length() < 14_000 else int(v.bit_length() * 0.30103) + 1


MAX_FINITE: float = 1.7976931348623157e308
"""Largest finite float64 (IEEE 754 binary64): a number read past it has no float value."""


def finite(row: dict, key: str) -> float:
    """``row[key]`` as a finite float; an integer past the float64 range (a 309-digit timestamp) is refused,
    naming the field and the range, never an OverflowError."""
    v = row[key]
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise RowError(msg("{key} is {value}, not a finite number", key=key, value=short_repr(v)))
    if isinstance(v, int) and not -MAX_FINITE <= v <= MAX_FINITE:   # int/float comparison is exact, never raises
        raise RowError(msg("{key} is a {digits:,}-digit number, outside [{lo:.4g}, {hi:.4g}]", key=key,
                           digits=_digits(v), lo=-MAX_FINITE,
                           hi=MAX_FINITE))
    if not math.isfinite(v):
        raise RowError(msg("{key} is {value}, not a finite number", key=key, value=short_repr(v)))
    return float(v)


def hash_ids(row: dict, input_tokens: int, block_tokens: int) -> list[int]:
    """``row["hash_ids"]``: a list of distinct signed 64-bit integers, at most one per block."""
    ids = row["hash_ids"]
    if not isinstance(ids, list):
        raise RowError(msg("hash_ids is {kind}, not a list", kind=json_kind(ids)))
    if not all(type(h) is int for h in ids):
        bad = next(h for h in ids if type(h) is not int)
        raise RowError(msg("hash_ids holds {value}, not an integer", value=short_repr(bad)))
    if ids and (min(ids) < INT64_MIN or max(ids) > INT64_MAX):
        raise RowError(msg("hash_ids holds an integer outside the signed 64-bit range"))
    max_blocks = -(-input_tokens // block_tokens)
    if len(ids) > max_blocks:
        raise RowError(msg("hash_ids has {count:,} blocks but input_length {input_tokens:,} fills at most "
                           "{max_blocks:,} blocks of {block_tokens:,} tokens", count=len(ids),
                           input_tokens=input_tokens, max_blocks=max_blocks, block_tokens=block_tokens))
    if len(set(ids)) != len(ids):
        raise RowError(msg("hash_ids repeats an ID (chained block hashes are unique within a request)"))
    return ids


def check_block_tokens(block_tokens: int | None) -> int | None:
    """None or a whole number of tokens in [1, 2^20].

    Raises:
        PlanInputError: anything else.
    """
    if block_tokens is None:
        return None
    if isinstance(block_tokens, bool) or not isinstance(block_tokens, int) or not 1 <= block_tokens <= MAX_BLOCK_TOKENS:
        raise PlanInputError("block_tokens", block_tokens, msg("a whole number of tokens in [1, {max_block_tokens:,}]",
                                                               max_block_tokens=MAX_BLOCK_TOKENS))
    return block_tokens


MIN_SAMPLE_RATE = 1e-6
"""Smallest sampling rate accepted: one block in a million. SHARDS keeps a block when its 64-bit hash is under
``rate * 2^64`` (Waldspurger et al., FAST '15); far below this, a trace keeps no block at all and the scaled-up
curve (``1 / rate``) means nothing."""


def check_sample_rate(value: object) -> float:
    """A sampling rate: a number in [:data:`MIN_SAMPLE_RATE`, 1].

    Raises:
        PlanInputError: anything else.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not MIN_SAMPLE_RATE <= float(value) <= 1:
        raise PlanInputError("sample_rate", value, msg("a fraction of blocks in [{lo}, 1]", lo=MIN_SAMPLE_RATE))
    return float(value)


class Collector:
    """Rows of one read, as lists of numpy chunks; hash-sampled as they arrive.

    Args:
        block_tokens: tokens per hashed block (None for lengths-only formats).
        sample_rate: fraction of distinct blocks to keep, in (0, 1]; a block
            is kept iff ``splitmix64(id) < sample_rate * 2^64``.
    """

    def __init__(self, block_tokens: int | None, sample_rate: float = 1.0) -> None:
        self.block_tokens = block_tokens
        self.sample_rate = check_sample_rate(sample_rate)
        self._threshold = np.uint64(min(2**64 - 1, int(self.sample_rate * 2**64)))
        self.num_rows = 0
        self.num_malformed = 0
        self.examples: list[tuple[int, str]] = []
        self.cols: dict[str, list[np.ndarray]] = {k: [] for k in
                                                  ("line", "time", "input", "output", "count", "hashed", "ids",
                                                   "tokens", "session")}
        self.unhashed_tokens = 0
        self.unsampled_refs = 0
        self.unsampled_tokens = 0
        self._pending: list[tuple[int, float, int, int, list[int] | None]] = []

    # -- malformed rows ---------------------------------------------------
    def bad(self, line: int, reason: str) -> None:
        """Count a malformed row (its reason kept if among the first few)."""
        self.num_malformed += 1
        if len(self.examples) < NUM_MALFORMED_EXAMPLES:
            self.examples.append((line, reason))

    def malformed(self) -> MalformedRows:
        """The skipped-row report so far."""
        return MalformedRows(num_rows=self.num_rows, num_malformed=self.num_malformed,
                             examples=tuple(self.examples))

    # -- rows ---------------------------------------------------------------
    def add(self, line: int, time_s: float, inp: int, out: int, ids: list[int] | None,
            session: str | None = None) -> None:
        """One checked row (the Python path); :meth:`flush` moves pending rows into columns."""
        self._pending.append((line, time_s, inp, out, ids, session))

    def flush(self) -> None:
        """Columns from the rows given to :meth:`add` since the last flush."""
        if not self._pending:
            return
        rows, self._pending = self._pending, []
        lines, times, inputs, outputs, hashes, sessions = zip(*rows)
        hashed = np.fromiter((h is not None for h in hashes), dtype=bool, count=len(rows))
        counts = np.fromiter((len(h) if h is not None else 0 for h in hashes), dtype=np.int64, count=len(rows))
        flat = np.fromiter((x for h in hashes if h is not None for x in h), dtype=np.int64, count=int(counts.sum()))
        self.add_columns(np.asarray(lines, dtype=np.int64), np.asarray(times, dtype=np.float64),
                         np.asarray(inputs, dtype=np.int64), np.asarray(outputs, dtype=np.int64),
                         counts if hashed.any() else None, flat if hashed.any() else None, hashed=hashed,
                         sessions=np.asarray(sessions, dtype=object))

    def add_columns(self, lines: np.ndarray, times_s: np.ndarray, inputs: np.ndarray, outputs: np.ndarray,
                    counts: np.ndarray | None, flat_ids: np.ndarray | None, *, hashed: np.ndarray | None = None,
                    sessions: np.ndarray | None = None) -> None:
        """Checked rows as columns: shape (k,) each; ``flat_ids`` shape (counts.sum(),), int64;
        ``sessions`` an object array of session keys (str, or None where a row has none)."""
        k = lines.shape[0]
        self.cols["session"].append(sessions if sessions is not None else np.full(k, None, dtype=object))
        self.cols["line"].append(lines)
        self.cols["time"].append(times_s)
        self.cols["input"].append(inputs)
        self.cols["output"].append(outputs)
        if hashed is None:
            hashed = np.full(k, counts is not None)
        self.cols["hashed"].append(hashed)
        if counts is None:
            self.cols["count"].append(np.zeros(k, dtype=np.int64))
            return
        bt = self.block_tokens
        if self.sample_rate < 1.0:
            req = np.repeat(np.arange(k), counts)
            starts = np.cumsum(counts) - counts
            pos = np.arange(flat_ids.shape[0]) - starts[req]
            tokens = np.clip(inputs[req] - pos * bt, 0, bt)
            self.unhashed_tokens += int(inputs[hashed].sum() - tokens.sum())
            self.unsampled_refs += int(flat_ids.shape[0])
            self.unsampled_tokens += int(tokens.sum())
            keep = splitmix64(flat_ids) < self._threshold
            counts = np.bincount(req[keep], minlength=k).astype(np.int64)
            flat_ids, tokens = flat_ids[keep], tokens[keep]
            self.cols["tokens"].append(tokens.astype(np.int64))
        self.cols["count"].append(counts.astype(np.int64))
        if flat_ids.size and 0 <= int(flat_ids.min()) and int(flat_ids.max()) <= _DENSE_ID_LIMIT:
            flat_ids = flat_ids.astype(np.int32)
        self.cols["ids"].append(flat_ids)

    # -- the trace ----------------------------------------------------------
    def trace(self, *, name: str, fmt: str, source: str = "", notes: tuple[str, ...] = (),
              require_all_hashed: bool = True) -> Trace:
        """Sort by arrival, make ids dense when they are not, freeze.

        Raises:
            PlanInputError: no well-formed row, or arrivals spanning over 366 days.
        """
        self.flush()
        self._ids = self.cols.pop("ids")
        col = {k: (np.concatenate(v) if v else None) for k, v in self.cols.items()}
        self.cols = {}
        if col["time"] is None or col["time"].size == 0:
            first = (msg(" ({example} on line {line})", example=self.examples[0][1], line=self.examples[0][0])
                     if self.examples else "")
            raise PlanInputError("trace", name, msg("at least one well-formed {fmt} row; rows read: {num_rows:,}, "
                                                    "malformed: {num_malformed:,}{first}", fmt=fmt,
                                                    num_rows=self.num_rows, num_malformed=self.num_malformed,
                                                    first=first))
        hashed = col["hashed"]
        if require_all_hashed and hashed.any() and not hashed.all():
            # Either every row has hash_ids or none does: a row without them among
            # hashed rows would silently count as all-miss.
            for line in col["line"][~hashed]:
                self.bad(int(line), msg("missing hash_ids (other rows have them)"))
            self.examples.sort()
            keep = hashed
            for k in ("line", "time", "input", "output", "count", "session"):
                col[k] = col[k][keep]
            hashed = hashed[keep]
        trace = self._assemble(col, bool(hashed.any()), name=name, fmt=fmt, source=source, notes=notes)
        del col
        release_memory()
        return trace

    def _assemble(self, col: dict, has_hashes: bool, *, name: str, fmt: str, source: str,
                  notes: tuple[str, ...]) -> Trace:
        times = col["time"]
        notes_out = list(notes)
        order = np.argsort(times, kind="stable")
        span = float(times[order[-1]]) - float(times[order[0]])  # Python floats: 1e308 - (-1e308) is inf
        if not span <= MAX_TRACE_SPAN_S:
            raise PlanInputError("trace", name, msg("arrivals spanning at most {max_trace_span_s:,.0f} s (366 days); "
                                                    "this trace spans {span:,.6g} s: check the timestamp unit "
                                                    "(timestamp_ms vs timestamp_s) and stray rows",
                                                    max_trace_span_s=MAX_TRACE_SPAN_S, span=span))
        num_back = int(np.count_nonzero(np.diff(times) < 0))
        in_order = num_back == 0
        if not in_order:
            notes_out.append(msg("Rows were not in arrival order ({steps:,} steps back in time); requests were stably "
                                 "sorted by arrival.", steps=num_back))
        arrival = (times[order] - times[order[0]]) if not in_order else times - times[0]
        inputs = col["input"] if in_order else col["input"][order]
        outputs = col["output"] if in_order else col["output"][order]
        fields: dict = {}
        sessions = col["session"]
        has_session = np.fromiter((v is not None for v in sessions), dtype=bool, count=sessions.shape[0])
        if has_session.all():
            import pandas as pd

            codes = pd.factorize(sessions)[0].astype(np.int64)
            fields["session_ids"] = codes if in_order else codes[order]
        elif has_session.any():
            notes_out.append(msg("session_id is missing on {rows:,} rows: session routing uses each request's "
                                 "conversation block instead.", rows=int((~has_session).sum())))
        del sessions
        if has_hashes:
            fields.update(self._blocks(col["count"], col["tokens"], None if in_order else order))
        else:
            notes_out.append(msg("No prefix block hashes: prefix-cache hit rates cannot be measured from this trace; "
                                 "lengths, arrivals and concurrency still can."))
        for a in (arrival, inputs, outputs, *[v for v in fields.values() if isinstance(v, np.ndarray)]):
            a.flags.writeable = False
        return Trace(name=name, format=fmt, block_tokens=self.block_tokens if has_hashes else None,
                     arrival_s=arrival, input_tokens=inputs, output_tokens=outputs, malformed=self.malformed(),
                     notes=tuple(notes_out), source=source, **fields)

    def _blocks(self, counts: np.ndarray, tokens: np.ndarray | None, order: np.ndarray | None) -> dict:
        chunks = self._ids
        offsets = np.zeros(counts.shape[0] + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        if all(c.dtype == np.int32 for c in chunks):
            ids = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int32)
            chunks.clear()
            id_space = int(ids.max()) + 1 if ids.size else 0
            if id_space > 4 * ids.size + 1024:   # sparse: dense ids keep the per-block tables small
                _, inverse = np.unique(ids, return_inverse=True)
                ids = inverse.astype(np.int32).reshape(-1)
                id_space = int(ids.max()) + 1 if ids.size else 0
                unique = id_space
            else:
                seen = np.zeros(max(id_space, 1), dtype=bool)   # one byte per possible id
                seen[ids] = True
                unique = int(np.count_nonzero(seen))
                del seen
        else:
            flat = np.concatenate([c.astype(np.int64) for c in chunks])
            chunks.clear()
            uniq, inverse = np.unique(flat, return_inverse=True)
            del flat
            ids = inverse.astype(np.int32).reshape(-1)
            id_space = unique = int(uniq.shape[0])
        sampled_tokens = None
        if order is not None:
            if tokens is not None:
                _, sampled_tokens = gather_requests(offsets, tokens, order)
            offsets, ids = gather_requests(offsets, ids, order)
        elif tokens is not None:
            sampled_tokens = tokens
        fields = dict(block_offsets=offsets, block_ids=ids, id_space=id_space, unique_blocks=unique,
                      sample_rate=self.sample_rate, unhashed_tokens=self.unhashed_tokens)
        if self.sample_rate < 1.0:
            fields.update(sampled_ref_tokens=sampled_tokens, unsampled_block_refs=self.unsampled_refs,
                          unsampled_hashed_tokens=self.unsampled_tokens)
        return fields
