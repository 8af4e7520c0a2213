"""One entry point for every trace: a file in any supported format, or a bundled sample.

:func:`read_trace` detects the format and picks the reader
(:mod:`planner.traces.readers`) or the bundled sample
(:mod:`planner.traces.samples`); it sits above both, so neither imports the other
back.
"""

from __future__ import annotations

import json
import re


from planner.errors import PlanInputError
from planner.traces.readers import open_parquet, read_azure, read_jsonl, read_mooncake
from planner.traces.rows import check_sample_rate
from planner.traces.samples import get_sample, load_sample, sample_bytes
from planner.traces.sources import MAX_TRACE_BYTES, Opened, TraceSource, line_chunks
from planner.traces.trace import FORMATS, MOONCAKE_BLOCK_TOKENS, Progress, Trace
from planner.messages import msg

HEAD_BYTES: int = 65_536
"""Bytes of a text file looked at to detect its format."""


def detect_format(text_head: str) -> str:
    """Guess a format from the start of a text file: ``azure``, ``mooncake`` or ``jsonl``.

    A first non-blank line starting with ``{`` is JSONL: ``mooncake`` when it
    has a ``timestamp`` key, else ``jsonl``; otherwise ``azure`` (CSV).

    >>> detect_format('{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [0]}')
    'mooncake'
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


_JSONL_NAME = re.compile(r"\.(jsonl|ndjson|json)(\.(gz|zst|zstd))?$", re.IGNORECASE)
"""File names that say JSON lines: a first line that is not JSON is then a bad JSONL row, not a CSV header."""


def _detect(source: TraceSource, max_bytes: int | None, name: str | None = None) -> str:
    opened = Opened(source, max_bytes, name)
    if opened.parquet:
        names = open_parquet(opened).schema_arrow.names
        return "mooncake" if "timestamp" in names else "jsonl"
    for _, _, chunk in line_chunks(opened, chunk_bytes=HEAD_BYTES):
        detected = detect_format(chunk[:HEAD_BYTES].decode("utf-8", errors="replace"))
        if detected == "azure" and _JSONL_NAME.search(name or opened.name or ""):
            return "jsonl"
        return detected
    return "jsonl"


def read_trace(source: TraceSource, *, format: str | None = None, block_tokens: int | None = None,
               name: str | None = None, max_bytes: int | None = MAX_TRACE_BYTES,
               sample_rate: float = 1.0, progress: Progress | None = None) -> Trace:
    """Read a trace in any supported format, or a bundled sample (``"sample:conversation"``).

    Args:
        source: path, bytes, file-like, or ``"sample:NAME"`` (see
            :data:`planner.traces.samples.SAMPLES`).
        format: one of :data:`~planner.traces.trace.FORMATS`, or None to detect
            it from the content (Parquet: ``mooncake`` when it has a
            ``timestamp`` column).
        block_tokens: tokens per ``hash_ids`` block, for ``jsonl`` (Mooncake is
            512 and rejects any other value; Azure has no blocks and ignores it).
        name: display name.
        max_bytes: size limit, bytes (None: no limit, for local paths).
        sample_rate: fraction of distinct blocks kept by spatial hash sampling
            (1 = every block; ``planner.traces.sampling``).
        progress: optional callback ``(fraction, label)`` while reading JSONL or Parquet.

    Raises:
        PlanInputError: unknown format or sample, a ``block_tokens`` the format
            cannot take, a bad ``sample_rate``, or any error of the chosen reader.
    """
    sample_rate = check_sample_rate(sample_rate)
    if isinstance(source, str) and source.startswith("sample:"):
        sample = get_sample(source.removeprefix("sample:"))
        if format is not None and format != sample.format:
            raise PlanInputError("format", format, msg("{format} for {source}", format=sample.format, source=source))
        if block_tokens is not None and sample.format == "mooncake" and block_tokens != MOONCAKE_BLOCK_TOKENS:
            raise PlanInputError("block_tokens", block_tokens, msg("{mooncake_block_tokens} for {source}",
                                                                   mooncake_block_tokens=MOONCAKE_BLOCK_TOKENS,
                                                                   source=source))
        if sample_rate == 1.0:
            return load_sample(sample.name)
        source, name, format = sample_bytes(sample.name), sample.filename, sample.format
    if format is not None and format not in FORMATS:
        raise PlanInputError("format", format, msg("one of {choices}", choices=", ".join(FORMATS)))
    if hasattr(source, "read"):   # an upload: read once (capped), then detect and parse the bytes
        opened = Opened(source, max_bytes)
        source, name = opened.buffer.to_pybytes(), name or opened.name
    detected = format is None
    if format is None:
        format = _detect(source, max_bytes, name)
    if format == "mooncake":
        if detected and block_tokens is not None and block_tokens != MOONCAKE_BLOCK_TOKENS:
            block_tokens = None  # the generic-JSONL block size does not apply to a detected Mooncake trace
        if block_tokens is not None and block_tokens != MOONCAKE_BLOCK_TOKENS:
            raise PlanInputError("block_tokens", block_tokens,
                                 msg("{mooncake_block_tokens} for Mooncake traces (their hash_ids cover 512-token "
                                     "blocks)", mooncake_block_tokens=MOONCAKE_BLOCK_TOKENS))
        return read_mooncake(source, name=name, max_bytes=max_bytes, sample_rate=sample_rate, progress=progress)
    if format == "azure":
        return read_azure(source, name=name, max_bytes=max_bytes)
    return read_jsonl(source, block_tokens=block_tokens, name=name, max_bytes=max_bytes, sample_rate=sample_rate,
                      progress=progress)
