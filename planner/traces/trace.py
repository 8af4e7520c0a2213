"""The in-memory request trace every reader returns, and the skipped-row report.

A :class:`Trace` holds requests sorted by arrival: per-request arrays (8 bytes
each per request) and, when the file carries prefix hashes, one int32 block id
per block reference (4 bytes per reference), so a trace of ``n`` references
and ``r`` requests takes about ``4 n + 40 r`` bytes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from planner.messages import msg

TraceFormat = Literal["mooncake", "azure", "jsonl"]
"""Trace record formats the readers understand (``planner.traces.readers``)."""

FORMATS: tuple[str, ...] = ("mooncake", "azure", "jsonl")
"""Format ids, in help order."""

MOONCAKE_BLOCK_TOKENS: int = 512
"""Tokens per ``hash_ids`` block in the Mooncake FAST'25 traces (Qin et al., FAST '25, appendix A)."""

Progress = Callable[[float, str], None]
"""Progress callback: ``(fraction done in [0, 1], what is being done)``."""

NUM_MALFORMED_EXAMPLES: int = 5
"""How many malformed rows are reported with their line number and reason."""


@dataclass(frozen=True, kw_only=True)
class MalformedRows:
    """Rows a reader skipped.

    Attributes:
        num_rows: data rows seen (header and blank lines excluded).
        num_malformed: rows skipped as malformed.
        examples: ``(line_number, reason)`` of the first
            :data:`NUM_MALFORMED_EXAMPLES` malformed rows; line numbers are
            1-based lines of the (decompressed) file, or 1-based rows of a
            Parquet file.
    """

    num_rows: int
    num_malformed: int
    examples: tuple[tuple[int, str], ...] = ()

    def summary(self) -> str:
        """One line: "2 of 1,000 rows malformed (line 3: ...; line 9: ...)" or "no malformed rows"."""
        if not self.num_malformed:
            return msg("no malformed rows ({rows:,} rows read)", rows=self.num_rows)
        items = [msg("line {line}: {reason}", line=line, reason=reason) for line, reason in self.examples]
        shown = items[0] if items else ""
        for item in items[1:]:
            shown = msg("{first}; {rest}", first=shown, rest=item)
        more = ", ..." if self.num_malformed > len(self.examples) else ""
        return msg("{malformed:,} of {rows:,} rows malformed and skipped ({shown}{more})", malformed=self.num_malformed,
                   rows=self.num_rows, shown=shown, more=more)


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
        block_ids: shape (num_block_refs,), int32, or None: prefix-block IDs
            as integers in ``[0, id_space)`` (equal IDs in the file map to
            equal integers; small non-negative IDs, as in the Mooncake
            release, are kept as they are).
        id_space: one more than the largest id (0 without hashes).
        unique_blocks: distinct block IDs (0 without hashes).
        session_ids: shape (num_requests,), int64, or None: a session or
            conversation key per request, when the file has one.
        sample_rate: fraction of distinct blocks kept by spatial hash sampling
            (1 = every block; see ``planner.traces.sampling``).
        sampled_ref_tokens: shape (num_block_refs,), int64, or None: real
            tokens of each kept reference (only for a sampled trace, whose
            kept blocks are no longer at known positions).
        unhashed_tokens: prompt tokens no hash covers (the whole trace).
        unsampled_block_refs, unsampled_hashed_tokens: block references and
            the tokens in them before sampling (sampled traces only; else 0).
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
    id_space: int = 0
    unique_blocks: int = 0
    session_ids: np.ndarray | None = None
    sample_rate: float = 1.0
    sampled_ref_tokens: np.ndarray | None = None
    unhashed_tokens: int = 0
    unsampled_block_refs: int = 0
    unsampled_hashed_tokens: int = 0
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
        return self.unique_blocks if self.block_ids is not None else 0

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

    def partial_blocks(self) -> tuple[np.ndarray, np.ndarray]:
        """References whose block holds fewer than ``block_tokens`` real tokens, and those tokens.

        Block ``j`` of a request covers tokens ``[j*B, min((j+1)*B, input_length))``
        with ``B = block_tokens``; only a request's last hashed block can be
        short (a row has at most ``ceil(input_length / B)`` hashes).

        Returns:
            ``(refs, tokens)``: shape (k,) int64 each, ``refs`` increasing.
        """
        if self.block_ids is None or self.block_offsets is None:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty
        if self.sampled_ref_tokens is not None:
            refs = np.flatnonzero(self.sampled_ref_tokens < self.block_tokens).astype(np.int64)
            return refs, self.sampled_ref_tokens[refs].astype(np.int64)
        counts = self.num_blocks
        has = counts > 0
        last = self.block_offsets[1:][has] - 1
        tokens = self.input_tokens[has] - (counts[has] - 1) * self.block_tokens
        short = tokens < self.block_tokens
        return last[short].astype(np.int64), np.clip(tokens[short], 0, self.block_tokens).astype(np.int64)

    def ref_tokens(self) -> np.ndarray:
        """Shape (num_block_refs,), int64: real prompt tokens in each referenced block."""
        if self.block_ids is None:
            return np.zeros(0, dtype=np.int64)
        tokens = np.full(self.num_block_refs, self.block_tokens, dtype=np.int64)
        refs, short = self.partial_blocks()
        tokens[refs] = short
        return tokens

    def token_denominator(self) -> int:
        """Prompt tokens the token hit rate divides by: every prompt token, or for a sampled
        trace the kept blocks' tokens plus ``sample_rate`` times the unhashed tokens."""
        if self.sampled_ref_tokens is None:
            return int(self.input_tokens.sum())
        return int(self.sampled_ref_tokens.sum()) + round(self.sample_rate * self.unhashed_tokens)
