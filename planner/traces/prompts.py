"""Prompts in, engine blocks out: a trace of prompt texts, tokenized offline and hashed into blocks.

Rows (JSONL, CSV or Parquet; plain, gzip or zstd), one request each:

* ``timestamp``: arrival, seconds (any origin; requests are sorted by it);
* ``prompt``: the prompt text, tokenized with the tokenizer's special tokens
  (as vLLM's completions endpoint does, ``add_special_tokens=True``), or
* ``messages``: a list of ``{"role": ..., "content": ...}`` (in CSV, that
  list as a JSON string), rendered with the chat template
  (``add_generation_prompt=True``) and tokenized without adding special
  tokens (the template writes them, as vLLM's chat endpoint does);
* optional ``session_id`` (string or integer) and ``output_length`` (tokens,
  default 0).

The tokenizer is a ``tokenizer.json`` read by the ``tokenizers`` library,
offline. The chat template comes from ``chat_template`` (a Jinja file) or the
``chat_template`` key of the ``tokenizer_config.json`` beside the tokenizer
(rendered in Jinja's sandbox, with ``bos_token`` and ``eos_token`` from that
config).

Blocks are hashed as the engine does (``vllm/v1/core/kv_cache_utils.py``,
``hash_request_tokens`` / ``hash_block_tokens``): each *full* block of
``block_tokens`` token ids gets a hash chained on its parent block's hash and
its own token ids; a partial last block is not hashed (vLLM caches only full
blocks), so its tokens always miss. The hash here is BLAKE2b-64 of the
parent's hash and the token ids (little-endian uint32), with a zero root: the
hash function differs from the engine's, equality of prefixes does not.
Ignored: everything else the engine mixes into a block's hash (the "extra
keys": LoRA adapter, multimodal inputs, cache salt), and any other row field
(named in the trace's notes).

Memory: the file is streamed; only per-request lengths and block ids (4
bytes per block reference) and one dictionary entry per distinct block are
kept, never the texts or token ids.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
from collections.abc import Iterator

import numpy as np

from planner.errors import PlanInputError
from planner.messages import msg
from planner.traces.rows import Collector, RowError, check_block_tokens, reason_of
from planner.traces.sources import Opened, decode, line_chunks
from planner.traces.trace import Progress, Trace

KNOWN_FIELDS: frozenset[str] = frozenset({"timestamp", "prompt", "messages", "session_id", "output_length"})
"""Row fields read; any other is ignored and named in the trace's notes."""

ROOT_HASH: bytes = bytes(8)
"""Parent hash of a request's first block (vLLM seeds it with its own NONE_HASH)."""

MAX_OUTPUT_TOKENS: int = 10_000_000
"""Largest ``output_length`` accepted, tokens."""

MAX_TOKENIZER_BYTES: int = 64_000_000
"""Largest ``tokenizer.json`` the dashboard takes, bytes (64 MB; Llama 3's is 9 MB, Gemma 3's 33 MB)."""

MAX_TOKENIZER_CONFIG_BYTES: int = 5_000_000
"""Largest ``tokenizer_config.json`` the dashboard takes, bytes (5 MB; chat templates are kilobytes)."""


def load_tokenizer(path: str):
    """A ``tokenizers.Tokenizer`` from a ``tokenizer.json``, offline.

    Raises:
        PlanInputError: the ``tokenizers`` package is missing, or the file is not a tokenizer it reads.
    """
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise PlanInputError("tokenizer", path, msg("the tokenizers package (pip install 'kvplan[prompts]')")) from None
    try:
        return Tokenizer.from_file(os.fspath(path))
    except Exception as exc:   # the library raises a bare Exception for a bad file
        raise PlanInputError("tokenizer", os.fspath(path),
                             msg("a tokenizer.json the tokenizers library reads ({error})",
                                 error=str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__)) from None


def load_chat_template(tokenizer_path: str, chat_template: str | None) -> tuple[object | None, dict]:
    """The compiled chat template (or None) and the tokens it may use (``bos_token``, ``eos_token``).

    Raises:
        PlanInputError: an unreadable template file or tokenizer_config.json, or a template Jinja cannot parse.
    """
    config: dict = {}
    config_path = os.path.join(os.path.dirname(os.path.abspath(os.fspath(tokenizer_path))), "tokenizer_config.json")
    if os.path.isfile(config_path):
        try:
            with open(config_path, encoding="utf-8") as fh:
                loaded = json.load(fh)
            config = loaded if isinstance(loaded, dict) else {}
        except (OSError, ValueError) as exc:
            raise PlanInputError("tokenizer_config.json", config_path, msg("a readable JSON object ({error})",
                                                                            error=str(exc)[:120])) from None
    source = None
    if chat_template is not None:
        try:
            with open(chat_template, encoding="utf-8") as fh:
                source = fh.read()
        except OSError as exc:
            raise PlanInputError("chat_template", chat_template, msg("a readable Jinja file ({error})",
                                                                     error=exc.strerror or exc)) from None
    else:
        found = config.get("chat_template")
        if isinstance(found, list):   # named templates: the default one, else the first
            named = {t.get("name"): t.get("template") for t in found if isinstance(t, dict)}
            found = named.get("default") or next(iter(named.values()), None)
        source = found if isinstance(found, str) else None
    specials = {k: _token_text(config.get(k)) for k in ("bos_token", "eos_token")}
    if source is None:
        return None, specials
    from jinja2 import TemplateError
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message):
        raise TemplateError(message)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = raise_exception
    try:
        return env.from_string(source), specials
    except TemplateError as exc:
        raise PlanInputError("chat_template", chat_template or config_path,
                             msg("a Jinja template ({error})", error=str(exc)[:120])) from None


def _token_text(value: object) -> str:
    if isinstance(value, dict):   # {"content": "<s>", ...} in some configs
        value = value.get("content")
    return value if isinstance(value, str) else ""


class BlockHasher:
    """Chained block hashes of token sequences, as dense int ids (one dictionary entry per distinct block).

    Args:
        block_tokens: tokens per block.
    """

    def __init__(self, block_tokens: int) -> None:
        self.block_tokens = block_tokens
        self.ids: dict[bytes, int] = {}

    def blocks(self, token_ids: list[int]) -> list[int]:
        """Dense ids of the full blocks of ``token_ids`` (a partial last block gets none)."""
        bt = self.block_tokens
        arr = np.asarray(token_ids, dtype="<u4")
        parent = ROOT_HASH
        out = []
        for k in range(len(token_ids) // bt):
            parent = hashlib.blake2b(parent + arr[k * bt:(k + 1) * bt].tobytes(), digest_size=8).digest()
            out.append(self.ids.setdefault(parent, len(self.ids)))
        return out


def _rows(opened: Opened, progress: Progress | None) -> Iterator[tuple[int, object]]:
    """(line or row number, a dict or a RowError) of each row of a JSONL, CSV or Parquet file."""
    if opened.parquet:
        import pyarrow.parquet as pq

        pfile = pq.ParquetFile(opened.parquet_source())
        row = 0
        for batch in pfile.iter_batches(batch_size=4096):
            for obj in batch.to_pylist():
                row += 1
                yield row, obj
            if progress is not None:
                progress(min(1.0, row / max(1, pfile.metadata.num_rows)), "reading")
        return
    chunks = line_chunks(opened, progress=progress)
    first = next(chunks, None)
    if first is None:
        return
    head = decode(first[2], first[1], opened.name)
    if head.lstrip().startswith("{"):
        yield from _json_rows(head, first[0])
        for line_no, offset, chunk in chunks:
            yield from _json_rows(decode(chunk, offset, opened.name), line_no)
        return

    def lines() -> Iterator[str]:
        yield from io.StringIO(head)
        for _, offset, chunk in chunks:
            yield from io.StringIO(decode(chunk, offset, opened.name))

    reader = csv.DictReader(lines())
    for obj in reader:
        yield reader.line_num, obj


def _json_rows(text: str, first_line: int) -> Iterator[tuple[int, object]]:
    for k, line in enumerate(text.split("\n")):
        if line.strip():
            try:
                yield first_line + k, json.loads(line)
            except (ValueError, RecursionError) as exc:
                yield first_line + k, RowError(msg("not valid JSON ({error})",
                                                   error=str(getattr(exc, "msg", exc))[:80]))


def _number(obj: dict, key: str, lo: float, hi: float, default: float | None = None) -> float:
    value = obj.get(key)
    if value is None or value == "":
        if default is not None:
            return default
        raise RowError(msg("missing {key}", key=key))
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise RowError(msg("{key} = {value!r} is not a number", key=key, value=str(value)[:40])) from None
    if not lo <= number <= hi:
        raise RowError(msg("{key} = {value} is outside [{lo}, {hi}]", key=key, value=f"{number:g}", lo=f"{lo:g}",
                           hi=f"{hi:g}"))
    return number


def read_prompts(source, *, tokenizer: str, block_tokens: int, chat_template: str | None = None,
                 name: str | None = None, max_bytes: int | None = None, max_refs: int | None = None,
                 progress: Progress | None = None) -> Trace:
    """A trace from prompt rows (module docstring): tokenized offline, full blocks hashed as the engine does.

    Args:
        source: path, bytes or file-like: JSONL, CSV or Parquet (plain, gzip, zstd).
        tokenizer: path of a ``tokenizer.json``.
        block_tokens: tokens per block (the engine's block size, e.g. vLLM's ``--block-size``, 16 by default).
        chat_template: path of a Jinja chat template for ``messages`` rows (default: the
            ``chat_template`` of the ``tokenizer_config.json`` beside the tokenizer).
        name: display name.
        max_bytes: size limit of the file, bytes (None: no limit).
        max_refs: most block references in all (None: no limit; the dashboard passes its upload limit).
        progress: optional callback ``(fraction, label)``.

    Returns:
        A :class:`Trace` of format ``prompts``; malformed rows are counted and skipped.

    Raises:
        PlanInputError: a bad ``block_tokens``, tokenizer or template, more than ``max_refs`` block references,
            or no well-formed row.
    """
    bt = check_block_tokens(block_tokens)
    if bt is None:
        raise PlanInputError("block_tokens", None, msg("tokens per block (the engine's block size), with a tokenizer"))
    tok = load_tokenizer(tokenizer)
    template, specials = load_chat_template(tokenizer, chat_template)
    opened = Opened(source, max_bytes, name)
    rows = Collector(bt)
    hasher = BlockHasher(bt)
    ignored: set[str] = set()
    refs = 0
    for line_no, obj in _rows(opened, progress):
        rows.num_rows += 1
        try:
            if isinstance(obj, RowError):
                raise obj
            if not isinstance(obj, dict):
                raise RowError(msg("a JSON {kind}, not an object", kind=type(obj).__name__))
            ignored.update(k for k, v in obj.items() if k not in KNOWN_FIELDS and v not in (None, ""))
            time_s = _number(obj, "timestamp", -1e15, 1e15)
            out = int(_number(obj, "output_length", 0, MAX_OUTPUT_TOKENS, default=0))
            ids = _token_ids(obj, tok, template, specials)
            session = obj.get("session_id")
            session = None if session is None or session == "" else str(session)
            blocks = hasher.blocks(ids)
            refs += len(blocks)
            if max_refs is not None and refs > max_refs:
                raise PlanInputError("prompts", opened.name, msg(
                    "at most {limit:,} block references (line or row {line} passes it): use the command line "
                    "(kvplan trace FILE --tokenizer ...), which has no such limit", limit=max_refs, line=line_no))
            rows.add(line_no, time_s, len(ids), out, blocks, session)
        except RowError as exc:
            rows.bad(line_no, reason_of(exc))
        if len(rows._pending) >= 4096:
            rows.flush()
    notes = [msg("Prompts tokenized with {tokenizer}; full {block_tokens}-token blocks hashed, each chained on its "
                 "parent (a partial last block is not cached). Ignored: LoRA adapters, multimodal inputs and cache "
                 "salts, which the engine also mixes into block hashes.",
                 tokenizer=os.path.basename(os.fspath(tokenizer)), block_tokens=bt)]
    if ignored:
        notes.append(msg("Fields ignored: {fields}.", fields=", ".join(sorted(ignored)[:10])))
    return rows.trace(name=name or opened.name, fmt="prompts", notes=tuple(notes))


def _token_ids(obj: dict, tok, template, specials: dict) -> list[int]:
    prompt, messages = obj.get("prompt"), obj.get("messages")
    if prompt not in (None, "") and messages not in (None, ""):
        raise RowError(msg("both prompt and messages (one or the other)"))
    if prompt not in (None, ""):
        if not isinstance(prompt, str):
            raise RowError(msg("prompt is a {kind}, not text", kind=type(prompt).__name__))
        return tok.encode(prompt, add_special_tokens=True).ids
    if messages in (None, ""):
        raise RowError(msg("missing prompt or messages"))
    if isinstance(messages, str):
        try:
            messages = json.loads(messages)
        except ValueError:
            raise RowError(msg("messages is not a JSON list")) from None
    if not isinstance(messages, list) or not all(isinstance(m, dict) and isinstance(m.get("content", ""), str)
                                                 for m in messages):
        raise RowError(msg("messages is not a list of {{role, content}} objects"))
    if template is None:
        raise RowError(msg("messages without a chat template (--chat-template, or tokenizer_config.json beside "
                           "the tokenizer)"))
    from jinja2 import TemplateError

    try:
        text = template.render(messages=messages, add_generation_prompt=True, **specials)
    except TemplateError as exc:
        raise RowError(msg("chat template failed ({error})", error=str(exc)[:80])) from None
    return tok.encode(text, add_special_tokens=False).ids
