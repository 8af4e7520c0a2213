"""Compiled inner loops of the trace code: stack distances with a Fenwick tree, hash sampling.

Everything here works on plain numpy arrays and is called through
:mod:`planner.traces.stack` (curves), :mod:`planner.traces.fleet` (replicas)
and :mod:`planner.traces.ingest` (sampling); the semantics are documented
there and checked against the pure-Python reference replay
(:mod:`planner.traces.replay`) in the tests.

Stack distances online (Bennett and Kruskal, "LRU stack processing", IBM J.
R&D 19(4), 1975; Almási, Caşcaval and Padua, MSP 2002): a Fenwick tree over
reference positions holds a 1 at the last reference of every block seen so
far. A request first looks up all its blocks in the stack as it was before it
arrived: a block last referenced at ``p`` has depth = marks after ``p`` plus
one (one prefix-sum query). Then its blocks are touched tail first (the
request's last block takes its earliest position, its first block the
latest), the order in which vLLM frees a finished request's blocks "so that
the tail blocks are evicted first" (``vllm/v1/core/kv_cache_manager.py``,
``KVCacheManager.free``): each touch moves the block's mark to its new
position. O(log n) per reference, 4 bytes of tree per reference.

Compiled how: each loop is written once, below, as plain Python over numpy
arrays, and compiled by numba, in one of two ways. **Ahead of time**
(``numba.pycc``, a C compiler): :func:`compile_ahead_of_time` builds one
extension module of every loop into the user's cache folder
(``$KVPLAN_CACHE_DIR``, else ``$XDG_CACHE_HOME/kvplan``, else
``~/.cache/kvplan``; one subfolder per version of this file, of Python, of
numpy and numba), once; ``kvplan trace`` calls it on first use and says so.
Later processes load that module in about a millisecond, without importing
numba. **Just in time** (``numba.njit(cache=True)``, numba's own cache in
``__pycache__``) when no such module exists, it cannot be built (no
compiler), or ``KVPLAN_AOT=0``: numba's import and the loading of its
compiled loops then cost about a second of start-up per process. The choice
is made at the first call of a loop in a process (:func:`backend` says which
was taken); both compile the same functions, and the tests check the module
against the just-in-time loops.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import platform
import sys
import tempfile
import types

import numpy as np

COLD: int = np.iinfo(np.int32).max
"""Run distance of a block that can never hit (first reference, or after one): int32 max, 2,147,483,647."""

MAX_REFS: int = 2**31 - 2
"""Most block references one exact pass takes (positions and distances are int32 inside)."""


class DistanceState:
    """The Fenwick tree and per-block tables of one pass, so the pass can run in slices of requests.

    Memory: 4 bytes per reference for the tree and 4 for the distances (8
    more for ages), 8 per possible block id.

    Args:
        n: block references of the trace (at most :data:`MAX_REFS`).
        id_space: one more than the largest block id.
        with_ages: also compute run ages (needed for TTLs).
    """

    def __init__(self, n: int, id_space: int, with_ages: bool = True) -> None:
        self.tree = np.zeros(n + 1, np.int32)
        self.last_pos = np.full(max(id_space, 1), -1, np.int32)
        self.last_req = np.zeros(max(id_space, 1), np.int32)
        self.marks = np.zeros(1, np.int64)
        self.run_dist = np.empty(n, np.int32)
        self.run_age = np.empty(n if with_ages else 0, np.float64)

    def advance(self, offsets: np.ndarray, ids: np.ndarray, arrival_s: np.ndarray, lo: int, hi: int) -> None:
        """Process requests ``lo .. hi-1`` (in order, after every earlier one)."""
        _impl().distances(np.asarray(offsets, np.int64), np.asarray(ids, np.int32), np.asarray(arrival_s, np.float64),
                          int(lo), int(hi), self.tree, self.last_pos, self.last_req, self.marks, self.run_dist,
                          self.run_age)


def run_distances(offsets, ids, arrival_s, id_space):
    """Run distances and run ages of every block reference (leading-run rule applied), in one call.

    Args:
        offsets: shape (r + 1,), int64: request ``i``'s blocks are ``ids[offsets[i]:offsets[i+1]]``.
        ids: shape (n,), integer block ids in ``[0, id_space)`` (not bound-checked).
        arrival_s: shape (r,), float64, non-decreasing.
        id_space: one more than the largest id.

    Returns:
        ``(run_distance, run_age)``: shape (n,) int32 (``COLD`` when the
        reference cannot hit) and float64 (``inf`` likewise).
    """
    state = DistanceState(ids.shape[0], id_space)
    state.advance(offsets, ids, arrival_s, 0, offsets.shape[0] - 1)
    return state.run_dist, state.run_age


def _distances_py(offsets, ids, arrival_s, lo, hi, tree, last_pos, last_req, marks_box,
               run_dist, run_age):  # pragma: no cover - compiled
    n = ids.shape[0]
    cold_mark = np.iinfo(np.int32).max
    ages = run_age.shape[0] > 0
    marks = marks_box[0]
    for i in range(lo, hi):
        now = arrival_s[i]
        start = offsets[i]
        end = offsets[i + 1]
        # 1. lookups: every block's depth in the stack as it was before this request
        rd = 0
        ra = -np.inf
        cold = False
        for t in range(start, end):
            b = ids[t]
            p = last_pos[b]
            if p < 0:
                cold = True
            else:
                # marks after p = marks - (marks at positions 0..p); + 1 for the block itself
                s = 0
                k = p + 1
                while k > 0:
                    s += tree[k]
                    k -= k & -k
                d = marks - s + 1
                if d > rd:
                    rd = d
                age = now - arrival_s[last_req[b]]
                if age > ra:
                    ra = age
            if cold:
                run_dist[t] = cold_mark
                if ages:
                    run_age[t] = np.inf
            else:
                run_dist[t] = rd
                if ages:
                    run_age[t] = ra
        # 2. touches, tail block first (it gets the request's earliest position, the head its latest),
        #    as vLLM frees a finished request's blocks (kv_cache_manager.py, KVCacheManager.free)
        for t in range(end - 1, start - 1, -1):
            b = ids[t]
            p = last_pos[b]
            if p >= 0:
                k = p + 1
                while k <= n:
                    tree[k] -= 1
                    k += k & -k
                marks -= 1
            q = start + (end - 1 - t)
            k = q + 1
            while k <= n:
                tree[k] += 1
                k += k & -k
            marks += 1
            last_pos[b] = q
            last_req[b] = i
    marks_box[0] = marks


def _splitmix64_py(values):  # pragma: no cover - compiled
    """SplitMix64 of each value (Steele, Lea and Flood, OOPSLA 2014): shape (n,) int64 -> uint64.

    A fixed, well-mixed hash, so a block's sampling decision depends on its
    id alone (the spatial sampling of SHARDS, Waldspurger et al., FAST '15).
    """
    out = np.empty(values.shape[0], np.uint64)
    for j in range(values.shape[0]):
        z = np.uint64(values[j]) + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        out[j] = z ^ (z >> np.uint64(31))
    return out


def _rows_with_repeats_py(counts, ids):  # pragma: no cover - compiled
    """Shape (r,) bool: request ``i`` (``counts[i]`` consecutive ids) holds an id twice."""
    out = np.zeros(counts.shape[0], np.bool_)
    start = 0
    for i in range(counts.shape[0]):
        k = counts[i]
        if k > 1:
            if k <= 32:
                for a in range(start, start + k):
                    for b in range(a + 1, start + k):
                        if ids[a] == ids[b]:
                            out[i] = True
            else:
                s = np.sort(ids[start:start + k])
                for a in range(k - 1):
                    if s[a] == s[a + 1]:
                        out[i] = True
                        break
        start += k
    return out


def _gather_requests_py(offsets, ids, order):  # pragma: no cover - compiled
    """Blocks of requests taken in ``order``: new offsets (int64) and ids (same dtype)."""
    r = order.shape[0]
    new_offsets = np.zeros(r + 1, np.int64)
    for j in range(r):
        i = order[j]
        new_offsets[j + 1] = new_offsets[j] + offsets[i + 1] - offsets[i]
    new_ids = np.empty(new_offsets[r], ids.dtype)
    for j in range(r):
        i = order[j]
        new_ids[new_offsets[j]:new_offsets[j + 1]] = ids[offsets[i]:offsets[i + 1]]
    return new_offsets, new_ids


def splitmix64(values: np.ndarray) -> np.ndarray:
    """SplitMix64 of each value (Steele, Lea and Flood, OOPSLA 2014): shape (n,) int64 -> uint64.

    A fixed, well-mixed hash, so a block's sampling decision depends on its
    id alone (the spatial sampling of SHARDS, Waldspurger et al., FAST '15).
    """
    return _impl().splitmix64(np.asarray(values, np.int64))


def rows_with_repeats(counts: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Shape (r,) bool: request ``i`` (``counts[i]`` consecutive ids) holds an id twice."""
    return _impl().rows_with_repeats(np.asarray(counts, np.int64), np.asarray(ids, np.int64))


def gather_requests(offsets: np.ndarray, ids: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Blocks of requests taken in ``order``: new offsets (int64) and ids (int32 stays int32, else int64)."""
    impl = _impl()
    offsets, order = np.asarray(offsets, np.int64), np.asarray(order, np.int64)
    if ids.dtype == np.int32:
        return impl.gather_requests_i4(offsets, ids, order)
    return impl.gather_requests_i8(offsets, np.asarray(ids, np.int64), order)


# ---------------------------------------------------------------------------------------------------------------
# Which compiled loops: ahead of time (an extension module in the cache folder) or just in time (numba)
# ---------------------------------------------------------------------------------------------------------------
AOT_MODULE = "_kvplan_kernels"
"""Name of the extension module :func:`compile_ahead_of_time` builds."""

_EXPORTS: tuple[tuple[str, str, str], ...] = (
    ("distances", "_distances_py", "void(i8[:], i4[:], f8[:], i8, i8, i4[:], i4[:], i4[:], i8[:], i4[:], f8[:])"),
    ("splitmix64", "_splitmix64_py", "u8[:](i8[:])"),
    ("rows_with_repeats", "_rows_with_repeats_py", "b1[:](i8[:], i8[:])"),
    ("gather_requests_i4", "_gather_requests_py", "Tuple((i8[:], i4[:]))(i8[:], i4[:], i8[:])"),
    ("gather_requests_i8", "_gather_requests_py", "Tuple((i8[:], i8[:]))(i8[:], i8[:], i8[:])"),
)
"""(exported name, the Python function above, numba signature): what the module holds, what ``_impl`` gives."""

_IMPL: types.SimpleNamespace | None = None


def _version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "none"


def aot_dir() -> str:
    """This version's folder of the ahead-of-time module (module docstring)."""
    base = os.environ.get("KVPLAN_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "kvplan")
    with open(__file__, "rb") as fh:
        key = hashlib.sha256(fh.read() + "|".join((sys.version, platform.machine(), np.__version__,
                                                    _version("numba"))).encode()).hexdigest()[:16]
    return os.path.join(base, f"kernels-{key}")


def aot_enabled() -> bool:
    """False when ``KVPLAN_AOT=0`` (always the just-in-time loops)."""
    return os.environ.get("KVPLAN_AOT", "1") != "0"


def _load_aot() -> types.SimpleNamespace | None:
    folder = aot_dir()
    try:
        names = [n for n in os.listdir(folder) if n.startswith(AOT_MODULE + ".") and n.endswith((".so", ".pyd"))]
    except OSError:
        return None
    if not names:
        return None
    spec = importlib.util.spec_from_file_location(AOT_MODULE, os.path.join(folder, names[0]))
    try:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except ImportError:
        return None
    return types.SimpleNamespace(kind="ahead of time", **{name: getattr(module, name) for name, _, _ in _EXPORTS})


def _jit() -> types.SimpleNamespace:
    from numba import njit

    compiled = {}
    for name, func, _ in _EXPORTS:
        if func not in compiled:
            compiled[func] = njit(cache=True, nogil=True)(globals()[func])
        compiled[name] = compiled[func]
    return types.SimpleNamespace(kind="just in time", **{name: compiled[name] for name, _, _ in _EXPORTS})


def _impl() -> types.SimpleNamespace:
    global _IMPL
    if _IMPL is None:
        _IMPL = (_load_aot() if aot_enabled() else None) or _jit()
    return _IMPL


def backend() -> str:
    """Which loops this process runs: "ahead of time" or "just in time" (decided at the first call)."""
    return _impl().kind


def aot_ready() -> bool:
    """True when this version's ahead-of-time module exists (or a build of it failed before: not retried)."""
    folder = aot_dir()
    return os.path.isdir(folder) or os.path.exists(folder + ".failed")


def compile_ahead_of_time() -> str | None:
    """Build this version's ahead-of-time module into :func:`aot_dir` (module docstring), once.

    Returns:
        None when built (or already there), else why not (no compiler, no ``numba.pycc``); the reason is
        kept beside the folder, so later calls do not try again.
    """
    folder = aot_dir()
    if os.path.isdir(folder):
        return None
    parent = os.path.dirname(folder)
    try:
        os.makedirs(parent, exist_ok=True)
        work = tempfile.mkdtemp(prefix="build-", dir=parent)
    except OSError as exc:
        return f"cache folder {parent}: {exc.strerror or exc}"
    try:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from numba.pycc import CC

            cc = CC(AOT_MODULE)
            cc.output_dir = work
            cc.verbose = False
            for name, func, signature in _EXPORTS:
                cc.export(name, signature)(globals()[func])
            cc.compile()
        try:
            os.rename(work, folder)          # atomic: another process may have won the race
        except OSError:
            pass
        return None
    except Exception as exc:   # no compiler, no distutils/setuptools, numba without pycc: the JIT stays
        reason = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
        try:
            with open(folder + ".failed", "w", encoding="utf-8") as fh:
                fh.write(reason + "\n")
        except OSError:
            pass
        return reason
    finally:
        import shutil

        shutil.rmtree(work, ignore_errors=True)
