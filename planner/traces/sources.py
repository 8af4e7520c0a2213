"""Where trace bytes come from: paths, bytes or uploads, plain, gzip or zstd, read in bounded chunks.

A path is read as a stream, so a local file of any size works (the command
line passes ``max_bytes=None``); bytes and file-like objects (a Streamlit
upload) are capped at ``max_bytes`` before and after decompression, which
keeps the dashboard's memory bounded. Compression is detected from the first
bytes (gzip ``1f 8b``, RFC 1952; zstd ``28 b5 2f fd``, RFC 8878), not the
file name, and decoded by pyarrow's codecs.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable, Iterator
from typing import IO, Union

import pyarrow as pa

from planner.errors import PlanInputError
from planner.reads import require_regular_file
from planner.units import MB
from planner.messages import msg

MAX_TRACE_BYTES: int = 64 * MB
"""Default cap on a trace given as bytes or an upload, 64 MB = 64,000,000 B (the
bundled Mooncake conversation trace is 3,029,533 B); paths from the command
line pass ``max_bytes=None``."""

CHUNK_BYTES: int = 16 * 2**20
"""Bytes read per chunk, 16 MiB; every chunk ends at a line break (a longer line is one chunk)."""

_MAGIC = {b"\x1f\x8b": "gzip", b"\x28\xb5\x2f\xfd": "zstd"}
_PARQUET_MAGIC = b"PAR1"

TraceSource = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, IO]
"""A path, the file's bytes, or a file-like object (bytes or text)."""


def too_large(size: int, max_bytes: int, what: str = msg("a file")) -> PlanInputError:
    """The error for a source over the cap."""
    return PlanInputError("trace", f"{size:,} B", msg("{what} of at most {max_bytes:,} B ({value:g} MB)", what=what,
                                                      max_bytes=max_bytes, value=max_bytes / MB))


def _unreadable(path: str, exc: OSError) -> PlanInputError:
    return PlanInputError("trace", path, msg("a readable file ({value})", value=exc.strerror or exc))


class Opened:
    """An opened source: ``name``, ``compression`` (None, "gzip" or "zstd"), ``parquet`` (bool), and
    :meth:`stream` (a fresh pyarrow input stream of the decompressed bytes) or :meth:`parquet_source`."""

    def __init__(self, source: TraceSource, max_bytes: int | None, name: str | None = None) -> None:
        """``name``: the file's name in every error (an upload's own name: never the server's temporary file,
        which the job reads); default the path's base name, the upload's ``name``, or "uploaded trace"."""
        self.max_bytes = max_bytes
        self.path: str | None = None
        self.buffer: pa.Buffer | None = None
        if isinstance(source, (str, os.PathLike)):
            self.path = os.fspath(source)
            self.name = os.path.basename(self.path)
            size = require_regular_file(self.path, "trace")   # missing, a directory, FIFO or device: refused
            try:
                with open(self.path, "rb") as fh:
                    head = fh.read(4)
            except OSError as exc:  # a permission, a vanished file
                raise _unreadable(self.name, exc) from None
            if max_bytes is not None and size > max_bytes:
                raise too_large(size, max_bytes)
        else:
            if isinstance(source, (bytes, bytearray, memoryview)):
                data = bytes(source)
                self.name = "uploaded trace"
            elif hasattr(source, "read"):
                size = getattr(source, "size", None)  # Streamlit UploadedFile
                if isinstance(size, int) and max_bytes is not None and size > max_bytes:
                    raise too_large(size, max_bytes)
                data = source.read() if max_bytes is None else source.read(max_bytes + 1)
                if isinstance(data, str):
                    data = data.encode("utf-8")
                self.name = str(getattr(source, "name", "") or "uploaded trace")
            else:
                raise PlanInputError("trace", type(source).__name__, msg("a path, bytes or a file-like object"))
            if max_bytes is not None and len(data) > max_bytes:
                raise too_large(len(data), max_bytes)
            self.buffer = pa.py_buffer(data)
            head = data[:4]
        if name:
            self.name = name
        self.parquet = head == _PARQUET_MAGIC
        self.compression = next((codec for magic, codec in _MAGIC.items() if head.startswith(magic)), None)

    def _raw(self) -> pa.NativeFile:
        if self.path is not None:
            try:
                self.raw = pa.OSFile(self.path, "rb")
            except OSError as exc:
                raise _unreadable(self.name, exc) from None
        else:
            self.raw = pa.BufferReader(self.buffer)
        return self.raw

    def fraction_read(self) -> float:
        """Share of the (compressed) source consumed by the last stream, in [0, 1]."""
        size = self.raw.size() if hasattr(self, "raw") else 0
        return min(1.0, self.raw.tell() / size) if size else 1.0

    def stream(self) -> pa.NativeFile:
        """The decompressed bytes as a pyarrow input stream."""
        raw = self._raw()
        return pa.CompressedInputStream(raw, self.compression) if self.compression else raw

    def parquet_source(self) -> pa.NativeFile:
        """The raw file for ``pyarrow.parquet.ParquetFile``."""
        return self._raw()


def line_chunks(opened: Opened, chunk_bytes: int | None = None,
                progress: Callable[[float, str], None] | None = None) -> Iterator[tuple[int, int, bytes]]:
    """Yield ``(first line number, first byte offset, bytes)`` chunks of whole lines.

    The first chunk loses a UTF-8 byte-order mark. Decompressed bytes beyond
    ``opened.max_bytes`` raise (a small compressed upload cannot expand
    without bound).

    Raises:
        PlanInputError: over the cap, or a corrupt compressed stream.
    """
    chunk_bytes = chunk_bytes or CHUNK_BYTES
    line_no, offset, carry, first = 1, 0, b"", True
    total = 0
    with opened.stream() as stream:
        while True:
            try:
                block = stream.read(chunk_bytes)
            except (OSError, pa.ArrowException) as exc:
                job_limit(exc)
                raise PlanInputError("trace", opened.name,
                                     msg("a readable {value} file ({exc})", value=opened.compression or 'plain',
                                         exc=str(exc)[:120])) from None
            total += len(block)
            if opened.max_bytes is not None and total > opened.max_bytes:
                raise too_large(total, opened.max_bytes, msg("a file that decompresses"))
            data = carry + block
            if first and data.startswith(b"\xef\xbb\xbf"):
                data, offset = data[3:], 3
            first = False
            if not block:
                if data:
                    yield line_no, offset, data
                return
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                carry = data
                continue
            chunk, carry = data[:cut], data[cut:]
            if progress is not None:
                progress(opened.fraction_read(), "reading")
            yield line_no, offset, chunk
            line_no += chunk.count(b"\n")
            offset += len(chunk)


def job_limit(exc: BaseException) -> None:
    """Re-raise ``exc`` when it is the job's limit, not the file's fault: the time limit (``TimeoutError``, an
    ``OSError``) or memory (``MemoryError``, also pyarrow's ``ArrowMemoryError``), so that a reader's handler of
    unreadable files never blames the file for them (the job pool names the limit)."""
    if isinstance(exc, (TimeoutError, MemoryError)):
        raise exc


def release_memory() -> None:
    """Hand freed read buffers back to the operating system (pyarrow's pool; glibc's heap on Linux).

    Reading leaves freed chunk buffers in the allocators' caches; the
    stack-distance pass that follows would otherwise stack its arrays on top.
    """
    pa.default_memory_pool().release_unused()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


def write_private_files(parent: str, files: dict[str, bytes], chunk_bytes: int = 1 << 20) -> tuple[str, dict[str, str]]:
    """Write ``files`` (plain file names -> bytes) into a new owner-only folder under ``parent``.

    For the files a job reads beside an upload (a tokenizer, a metrics snapshot): the names are the
    caller's constants, never a user's, and are refused when they hold a path separator.

    Returns:
        ``(folder, name -> path)``; the caller removes the folder.
    """
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="extra-", dir=parent)
    paths = {}
    try:
        for file_name, data in files.items():
            if not file_name or file_name in (".", "..") or os.sep in file_name or "/" in file_name:
                raise ValueError(f"not a plain file name: {file_name!r}")
            path = os.path.join(folder, file_name)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            view = memoryview(data)
            with os.fdopen(fd, "wb") as fh:
                for start in range(0, len(view), chunk_bytes):
                    fh.write(view[start:start + chunk_bytes])
            paths[file_name] = path
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return folder, paths


def decode(chunk: bytes, offset: int, name: str) -> str:
    """UTF-8 text of a chunk.

    Raises:
        PlanInputError: naming the first byte (in the whole file) that is not UTF-8.
    """
    try:
        return chunk.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PlanInputError("trace", name, msg("UTF-8 text (byte {value:,} is not)", value=offset + exc.start)) from None
