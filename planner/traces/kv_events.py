"""The engine's record: a vLLM KV-event stream as a trace, and its Prometheus prefix-cache counters.

**KV events** (``vllm/distributed/kv_events.py``): vLLM publishes
``KVEventBatch(ts, events, data_parallel_rank)`` messages whose events are
``BlockStored(block_hashes, parent_block_hash, token_ids, block_size,
lora_id, medium)``, ``BlockRemoved(block_hashes, medium)`` and
``AllBlocksCleared()``. The structs are msgspec ``array_like`` and tagged by
class name, so on the wire each is an array whose first item is the tag. The
file read here is JSONL, one batch per line, in either shape:

* array-like, as msgpack-decoded from the engine's ZMQ publisher:
  ``[ts, [event, ...], data_parallel_rank]`` with events
  ``["BlockStored", [hash, ...], parent_hash_or_null, [token_id, ...], block_size, lora_id, medium]``,
  ``["BlockRemoved", [hash, ...], medium]``, ``["AllBlocksCleared"]``
  (trailing optional fields may be left out);
* objects: ``{"ts": s, "events": [...], "data_parallel_rank": r}`` with
  events ``{"type": "BlockStored", "block_hashes": [...], "parent_block_hash": h,
  "token_ids": [...], "block_size": n}``, ``{"type": "BlockRemoved", ...}``,
  ``{"type": "AllBlocksCleared"}``.

Hashes may be integers or strings (hex digests); only equality matters.

A request is reconstructed from each ``BlockStored`` event: the blocks it
stored, after the chain of their ancestors (followed through
``parent_block_hash``, as the engine chains hashes in
``kv_cache_utils.hash_block_tokens``), all of ``block_size`` tokens, arriving
at the batch's ``ts``. So the replay sees, per stored run, the prefix it
extended (a hit there) and the blocks it computed. What the stream cannot
show: a request that hit on every block stores nothing and is absent; a
request prefilled in chunks stores several events and counts as several
requests, its later chunks hitting on its earlier ones. ``BlockRemoved`` and
``AllBlocksCleared`` are the engine's own evictions: counted in the notes,
not replayed (the replay evicts by its own capacity and policy).

**Counters**: ``vllm:prefix_cache_queries`` and ``vllm:prefix_cache_hits``
(tokens queried and hit, ``vllm/v1/metrics/loggers.py``), read from a
Prometheus text exposition (``curl host:8000/metrics``); the ``_total``
suffix that Prometheus clients add to counters is accepted, and all label
sets are summed.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

from planner.errors import PlanInputError
from planner.messages import msg
from planner.traces.rows import Collector, RowError, reason_of
from planner.traces.sources import Opened, decode, line_chunks
from planner.traces.trace import Progress, Trace


def _event(raw: object) -> tuple[str, dict]:
    """(tag, fields) of one event in either shape."""
    if isinstance(raw, dict):
        tag = raw.get("type")
        return str(tag), raw
    if isinstance(raw, list) and raw and isinstance(raw[0], str):
        names = {"BlockStored": ("block_hashes", "parent_block_hash", "token_ids", "block_size", "lora_id", "medium"),
                 "BlockRemoved": ("block_hashes", "medium"), "AllBlocksCleared": ()}.get(raw[0])
        if names is None:
            raise RowError(msg("unknown event {tag!r}", tag=raw[0][:40]))
        return raw[0], dict(zip(names, raw[1:]))
    raise RowError(msg("an event is an array starting with its type, or an object with 'type'"))


def _batch(obj: object) -> tuple[float, list]:
    if isinstance(obj, dict):
        ts, events = obj.get("ts"), obj.get("events")
    elif isinstance(obj, list) and len(obj) >= 2:
        ts, events = obj[0], obj[1]
    else:
        raise RowError(msg("a batch [ts, events, data_parallel_rank] or {{ts, events}}"))
    if isinstance(ts, bool) or not isinstance(ts, (int, float)) or not math.isfinite(ts):
        raise RowError(msg("ts = {value!r} is not a finite number of seconds", value=str(ts)[:40]))
    if not isinstance(events, list):
        raise RowError(msg("events is not a list"))
    return float(ts), events


def read_kv_events(source, *, name: str | None = None, max_bytes: int | None = None, max_refs: int | None = None,
                   progress: Progress | None = None) -> Trace:
    """A trace from a recorded KV-event stream (module docstring).

    ``max_refs``: most block references the rebuilt requests may hold (None: no limit). A short event can
    stand for a long request (its ancestors are followed through the parent chain), so the file's size does
    not bound them; the dashboard passes its upload limit.

    Returns:
        A :class:`Trace` of format ``kv-events``; ``block_tokens`` is the
        events' ``block_size``. Malformed batches are counted and skipped.

    Raises:
        PlanInputError: events with two different block sizes, more than ``max_refs`` references, or no
            stored block at all.
    """
    opened = Opened(source, max_bytes, name)
    rows = Collector(None)
    dense: dict[object, int] = {}
    parent_of: list[int] = []      # dense block -> dense parent (-1 = none)
    block_size: int | None = None
    removed = cleared = refs = 0
    for first_line, offset, chunk in line_chunks(opened, progress=progress):
        for k, line in enumerate(decode(chunk, offset, opened.name).split("\n")):
            if not line.strip():
                continue
            line_no = first_line + k
            rows.num_rows += 1
            try:
                try:
                    obj = json.loads(line)
                except ValueError as exc:
                    raise RowError(msg("not valid JSON ({error})", error=str(getattr(exc, "msg", exc))[:80])) from None
                ts, events = _batch(obj)
                for raw in events:
                    tag, ev = _event(raw)
                    if tag == "BlockRemoved":
                        removed += len(ev.get("block_hashes") or [])
                    elif tag == "AllBlocksCleared":
                        cleared += 1
                    elif tag == "BlockStored":
                        size = ev.get("block_size")
                        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
                            raise RowError(msg("block_size = {value!r} is not a whole number of tokens >= 1",
                                               value=str(size)[:40]))
                        if block_size is None:
                            block_size = size
                            rows.block_tokens = size
                        elif size != block_size:
                            raise PlanInputError("block_size", size, msg("{expected} in every BlockStored event "
                                                                         "(line {line})", expected=block_size,
                                                                         line=line_no))
                        hashes = ev.get("block_hashes")
                        if not isinstance(hashes, list) or not hashes:
                            raise RowError(msg("block_hashes is not a non-empty list"))
                        parent = ev.get("parent_block_hash")
                        chain: list[int] = []
                        p = dense.get(_key(parent), -1) if parent is not None else -1
                        while p >= 0:                      # the ancestors, nearest first
                            chain.append(p)
                            p = parent_of[p]
                        chain.reverse()
                        prev = chain[-1] if chain else -1
                        for h in hashes:
                            key = _key(h)
                            if key not in dense:
                                dense[key] = len(parent_of)
                                parent_of.append(prev)
                            prev = dense[key]
                            chain.append(prev)
                        refs += len(chain)
                        if max_refs is not None and refs > max_refs:
                            raise PlanInputError("kv events", opened.name, msg(
                                "at most {limit:,} block references when rebuilt into requests (line {line} passes "
                                "it): use the command line (kvplan trace FILE --kv-events), which has no such limit",
                                limit=max_refs, line=line_no))
                        rows.add(line_no, ts, len(chain) * size, 0, chain, None)
                    else:
                        raise RowError(msg("unknown event {tag!r}", tag=tag[:40]))
            except RowError as exc:
                rows.bad(line_no, reason_of(exc))
        rows.flush()
    notes = [msg("Requests rebuilt from BlockStored events (each: the stored blocks after their ancestors). Requests "
                 "that hit on every block store nothing and are absent; a prefill in chunks counts once per chunk.")]
    if removed or cleared:
        notes.append(msg("The engine removed {removed:,} blocks and cleared its cache {cleared:,} times; the replay "
                         "evicts by its own capacity and policy.", removed=removed, cleared=cleared))
    return rows.trace(name=name or opened.name, fmt="kv-events", notes=tuple(notes))


def _key(h: object) -> object:
    if isinstance(h, list):   # a hash as bytes decoded to a list of ints
        return tuple(h)
    return h


@dataclass(frozen=True, kw_only=True)
class EngineCounters:
    """The engine's prefix-cache counters from a metrics snapshot.

    Attributes:
        queries_tokens: ``vllm:prefix_cache_queries`` summed over label sets, tokens.
        hits_tokens: ``vllm:prefix_cache_hits`` likewise, tokens.
        source: the file read.
    """

    queries_tokens: float
    hits_tokens: float
    source: str

    @property
    def token_hit_rate(self) -> float | None:
        """Hits / queries (tokens), None when nothing was queried."""
        return self.hits_tokens / self.queries_tokens if self.queries_tokens > 0 else None


MAX_METRICS_BYTES: int = 16_000_000
"""Largest metrics snapshot the dashboard takes, bytes (16 MB; an engine's /metrics is tens of kB)."""

_SAMPLE = re.compile(r"^(vllm:prefix_cache_(?:queries|hits))(?:_total)?(?:\{[^}]*\})?\s+(\S+)")


def read_prefix_cache_counters(path: str) -> EngineCounters:
    """``vllm:prefix_cache_queries`` and ``vllm:prefix_cache_hits`` from a Prometheus text snapshot.

    Raises:
        PlanInputError: unreadable, or without both counters.
    """
    totals = {"vllm:prefix_cache_queries": 0.0, "vllm:prefix_cache_hits": 0.0}
    seen: set[str] = set()
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                m = _SAMPLE.match(line.strip())
                if m:
                    try:
                        value = float(m.group(2))
                    except ValueError:
                        continue
                    if math.isfinite(value):
                        totals[m.group(1)] += value
                        seen.add(m.group(1))
    except OSError as exc:
        raise PlanInputError("metrics", path, msg("a readable file ({error})", error=exc.strerror or exc)) from None
    if len(seen) < 2:
        raise PlanInputError("metrics", path, msg("a Prometheus snapshot with vllm:prefix_cache_queries and "
                                                  "vllm:prefix_cache_hits"))
    return EngineCounters(queries_tokens=totals["vllm:prefix_cache_queries"],
                          hits_tokens=totals["vllm:prefix_cache_hits"], source=path)
