"""The trace loops compiled ahead of time (numba.pycc, planner.traces.kernels) give what the just-in-time loops give.

Both compile the same Python functions; this checks the signatures and the module build: every output array,
element for element, on random traces (repeats, long requests, ages) and random ids.
"""

from __future__ import annotations

import numpy as np
import pytest

from planner.traces import kernels


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("KVPLAN_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    reason = kernels.compile_ahead_of_time()
    if reason is not None and ("CompileError" in reason or "compiler" in reason.lower()):
        pytest.skip(f"no C compiler here: {reason}")
    assert reason is None, reason
    assert kernels.aot_ready()
    aot = kernels._load_aot()
    assert aot is not None and aot.kind == "ahead of time"
    yield aot, kernels._jit()
    mp.undo()


def _random_trace(rng, requests, id_space):
    counts = rng.integers(0, 40, requests)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    # runs of consecutive ids from a few roots: prefixes shared, as in real traces
    ids = np.empty(int(offsets[-1]), np.int32)
    for i in range(requests):
        root = rng.integers(0, id_space - 40)
        ids[offsets[i]:offsets[i + 1]] = root + np.arange(counts[i])
    arrival = np.sort(rng.uniform(0, 1000, requests))
    return offsets, ids, arrival


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_distances_equal(both, seed):
    aot, jit = both
    rng = np.random.default_rng(seed)
    offsets, ids, arrival = _random_trace(rng, 400, 300)
    n = ids.shape[0]
    out = []
    for impl in (aot, jit):
        tree, last_pos, last_req = np.zeros(n + 1, np.int32), np.full(300, -1, np.int32), np.zeros(300, np.int32)
        marks, dist, age = np.zeros(1, np.int64), np.empty(n, np.int32), np.empty(n, np.float64)
        impl.distances(offsets, ids, arrival, 0, 150, tree, last_pos, last_req, marks, dist, age)   # in two slices
        impl.distances(offsets, ids, arrival, 150, 400, tree, last_pos, last_req, marks, dist, age)
        out.append((dist, age, tree, marks))
    for a, b in zip(*out):
        np.testing.assert_array_equal(a, b)
    assert (out[0][0] != kernels.COLD).any() and (out[0][0] == kernels.COLD).any()


def test_hash_repeats_gather_equal(both):
    aot, jit = both
    rng = np.random.default_rng(7)
    values = rng.integers(-2**63, 2**63 - 1, 1000, dtype=np.int64)
    np.testing.assert_array_equal(aot.splitmix64(values), jit.splitmix64(values))
    counts = rng.integers(0, 50, 200).astype(np.int64)
    ids = rng.integers(0, 400, int(counts.sum())).astype(np.int64)
    np.testing.assert_array_equal(aot.rows_with_repeats(counts, ids), jit.rows_with_repeats(counts, ids))
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    order = rng.permutation(200).astype(np.int64)
    for name, dtype in (("gather_requests_i4", np.int32), ("gather_requests_i8", np.int64)):
        a, b = getattr(aot, name)(offsets, ids.astype(dtype), order), getattr(jit, name)(offsets, ids.astype(dtype), order)
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])
        assert a[1].dtype == dtype


def test_splitmix64_known_value():
    # SplitMix64 of 0 (the first output of Vigna's reference splitmix64.c seeded with 0): 0xE220A8397B1DCDAF
    assert int(kernels.splitmix64(np.zeros(1, np.int64))[0]) == 0xE220A8397B1DCDAF
