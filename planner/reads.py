"""Bounded reads of files named by a user: regular files only, at most a cap plus one byte.

A path given on the command line may name anything: ``/dev/zero`` or ``/dev/urandom`` (endless), a FIFO
(``open`` blocks until a writer appears), a directory, a terminal. Every file argument of kvplan goes through
this module, so each of those is refused at once with one :class:`planner.errors.PlanInputError` line:

1. ``os.stat`` first: only a regular file (``stat.S_ISREG``) is read;
2. opened with ``O_NONBLOCK``, so a path swapped for a FIFO between the ``stat`` and the ``open`` never blocks,
   and checked again with ``fstat`` on the open descriptor (what is read is what was checked);
3. read to at most ``cap_bytes + 1`` bytes, so a file that grows after the ``stat`` is still refused with a
   bounded read.
"""

from __future__ import annotations

import os
import stat

from planner.errors import PlanInputError
from planner.messages import msg

_KIND_NAMES = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _kind(mode: int) -> str:
    for test, name in _KIND_NAMES:
        if test(mode):
            return name
    return "not a regular file"


def _not_regular(path: str, field: str, mode: int) -> PlanInputError:
    return PlanInputError(field, path, msg("a regular file (this path is {kind})", kind=_kind(mode)))


def require_regular_file(path: str | os.PathLike, field: str, noun: str = "file") -> int:
    """Check that ``path`` names a readable-looking regular file; returns its size, bytes.

    Follows symbolic links (a link to a regular file is fine). Opens nothing.

    Raises:
        PlanInputError: ``field`` names a missing path, or a directory, FIFO, device or socket.
    """
    shown = os.fspath(path)
    try:
        st = os.stat(shown)
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        raise PlanInputError(field, shown, msg("a readable {noun} ({value})", noun=msg(noun),
                                               value=getattr(exc, 'strerror', None) or exc)) from None
    if not stat.S_ISREG(st.st_mode):
        raise _not_regular(shown, field, st.st_mode)
    return st.st_size


def _too_large(path: str, field: str, size: str, cap_bytes: int, noun: str) -> PlanInputError:
    return PlanInputError(field, path, msg("a {noun} of at most {cap_bytes:,} bytes (this one is {size})",
                                           noun=msg(noun), cap_bytes=cap_bytes, size=size))


def read_capped(path: str | os.PathLike, cap_bytes: int, field: str, noun: str = "file") -> bytes:
    """The bytes of the regular file ``path``, at most ``cap_bytes`` of them.

    Args:
        path: a file system path (``str`` or ``Path``).
        cap_bytes: largest size accepted, bytes (``>= 0``).
        field: the input's name for the error (``config``, ``plan``).
        noun: what the file should hold, for the error ("plan file", "config.json").

    Raises:
        PlanInputError: missing or unreadable; not a regular file (directory, FIFO, device, socket);
            larger than ``cap_bytes`` (at most ``cap_bytes + 1`` bytes are ever read).
    """
    shown = os.fspath(path)
    size = require_regular_file(shown, field, noun)
    if size > cap_bytes:
        raise _too_large(shown, field, f"{size:,} bytes", cap_bytes, noun)
    try:
        fd = os.open(shown, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise PlanInputError(field, shown, msg("a readable {noun} ({value})", noun=msg(noun),
                                               value=exc.strerror or exc)) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # swapped between the stat and the open
            raise _not_regular(shown, field, mode)
        chunks: list[bytes] = []
        left = cap_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise PlanInputError(field, shown, msg("a readable {noun} ({value})", noun=msg(noun),
                                               value=exc.strerror or exc)) from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > cap_bytes:
        raise _too_large(shown, field, f"more than {cap_bytes:,} bytes", cap_bytes, noun)
    return data


class DuplicateKey(Exception):
    """Raised by :func:`unique_keys`; ``key`` is the key given twice."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """The one ``json.loads`` ``object_pairs_hook`` of every JSON reader (plan files, ``config.json``, JSONL trace
    rows): a JSON object, refused when a key appears twice (``json`` would keep the last copy silently; RFC 8259
    section 4 leaves duplicate names to the parser). ``config.json`` reaches it through
    ``planner.hf.config._config_keys``, which first folds copies of a key that carry the same value.

    Raises:
        DuplicateKey: a key given twice.
    """
    data: dict[str, object] = {}
    for key, value in pairs:
        if key in data:
            raise DuplicateKey(key)
        data[key] = value
    return data


__all__ = ["DuplicateKey", "read_capped", "require_regular_file", "unique_keys"]


def json_text(data: str | bytes, field: str, source: str) -> str:
    """``data`` as text for ``json.loads``: bytes must be UTF-8 (a UTF-8 byte-order mark is dropped).

    ``json.loads`` on bytes guesses UTF-16/32 from the first bytes and then fails
    with a codec message that names neither the file nor the rule; this says both.

    Raises:
        PlanInputError: ``field`` with ``source`` (the file's name): not UTF-8 JSON text.
    """
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise PlanInputError(field, source, msg("UTF-8 JSON text; this file is not UTF-8 JSON text (byte 0x{data:02x} "
                                                "at offset {start:,} is not UTF-8)", data=data[exc.start],
                                                start=exc.start)) from None


JSON_REASONS: dict[str, str] = {text: text for text in (
    msg("Expecting property name enclosed in double quotes"), msg("Expecting ':' delimiter"),
    msg("Expecting ',' delimiter"), msg("Expecting value"), msg("Extra data"), msg("Unterminated string starting at"),
    msg("Invalid control character at"), msg("Invalid \\escape"), msg("Invalid \\uXXXX escape"))}
"""The reasons Python's ``json`` decoder gives (``JSONDecodeError.msg``, CPython ``Lib/json/decoder.py`` and
``Modules/_json.c``) -> the same words as a Message, which a user interface can translate."""


def json_error_text(exc: ValueError) -> str:
    """Where and why ``json.loads`` failed, in words: "line 3, column 7: Expecting ',' delimiter" (a Message
    whose reason is one too when it is one of :data:`JSON_REASONS`)."""
    import json

    if isinstance(exc, json.JSONDecodeError):
        reason = JSON_REASONS.get(exc.msg, exc.msg)
        return msg("line {line:,}, column {column:,}: {reason}", line=exc.lineno, column=exc.colno, reason=reason)
    if isinstance(exc, RecursionError):  # Python's own words name its internals, not the file
        return msg("RecursionError: nested too deeply for the parser")
    return f"{type(exc).__name__}: {exc}"[:160]
