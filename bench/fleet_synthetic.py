"""A synthetic chat service of any size whose session-routed partitions are generated where they are replayed.

Used by ``bench/bench_fleet_dask.py --generate REFS``: no process ever holds the whole trace. Every quantity of
session ``s`` (its start, turns, system prompt) and of its turn ``k`` (new blocks, gap, output length, the
prompt's tokens in its last block) is a SplitMix64 hash of a counter (``s`` or ``(s, k)``), so a worker draws
exactly the sessions that session routing sends to its replica (``splitmix64(session) % N``, as
``planner.traces.fleet.assign_replicas`` does with a trace's session ids) without drawing the others.

The service is ``bench/make_traces.py``'s: 8 system prompts of 2 to 6 blocks; a session has 1 + Geometric(1/4)
turns (at most 32) spaced by exponential gaps (mean 90 s), starting uniformly over a week; turn ``k`` sends the
system prompt, the conversation so far and 1 to 12 new blocks, chained as prefix hashes are. Blocks are 512
tokens. A partition's block ids are dense within it (system prompt blocks first, then each of its sessions' own
blocks); the stack distances only compare ids within a partition, so this is the same replay as global ids.

``whole_trace(num_sessions)`` builds every session into one trace (with session ids), for checking at a small size
that the partitions' sums equal ``planner.traces.fleet.fleet_table`` on the whole trace.
"""

from __future__ import annotations

import numpy as np

WEEK_S = 7 * 86_400
MAX_TURNS = 32
BLOCK_TOKENS = 512
SYS_LEN = np.array([2, 3, 4, 5, 6, 3, 4, 5], dtype=np.int64)
SYS_BASE = np.concatenate([[0], np.cumsum(SYS_LEN)[:-1]])
NUM_SYS_BLOCKS = int(SYS_LEN.sum())
REFS_PER_SESSION = 120
"""About the mean block references of a session (sessions = target references / this)."""


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64 finalizer of uint64 counters (vectorized; the same function as planner.traces.kernels.splitmix64)."""
    z = x.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _unit(h: np.ndarray) -> np.ndarray:
    """A uniform in (0, 1] from a hash."""
    return ((h >> np.uint64(11)).astype(np.float64) + 1.0) * 2.0**-53


def session_replicas(num_sessions: int, num_replicas: int) -> np.ndarray:
    """Replica of each session under session routing: splitmix64(session id) % N."""
    from planner.traces.kernels import splitmix64

    return (splitmix64(np.arange(num_sessions, dtype=np.int64)) % np.uint64(num_replicas)).astype(np.int64)


def build(sessions: np.ndarray, name: str = "synthetic chat"):
    """The trace of the given sessions (increasing ids), sorted by arrival (stable), dense block ids."""
    from planner.traces.trace import Trace

    with np.errstate(over="ignore"):
        s = sessions.astype(np.uint64)
        salt = np.uint64(1) << np.uint64(62)
        turns = 1 + np.minimum(np.floor(np.log(_unit(_mix(s * np.uint64(4)))) / np.log(0.75)),
                               MAX_TURNS - 1).astype(np.int64)
        prompt = (_mix(s * np.uint64(4) + np.uint64(1)) % np.uint64(8)).astype(np.int64)
        start_s = _unit(_mix(s * np.uint64(4) + np.uint64(2))) * WEEK_S
        num_req = int(turns.sum())
        first = np.cumsum(turns) - turns
        owner = np.repeat(np.arange(sessions.shape[0]), turns)           # local session of each request
        turn = np.arange(num_req) - first[owner]
        r = (s[owner] * np.uint64(MAX_TURNS) + turn.astype(np.uint64)) * np.uint64(4) + salt
        new_blocks = 1 + (_mix(r) % np.uint64(12)).astype(np.int64)
        gaps = -90.0 * np.log(_unit(_mix(r + np.uint64(1))))
        out_len = 50 + (_mix(r + np.uint64(2)) % np.uint64(750)).astype(np.int64)
        short = (_mix(r + np.uint64(3)) % np.uint64(BLOCK_TOKENS)).astype(np.int64)
    del r
    gaps[turn == 0] = 0.0
    cum_gaps = np.cumsum(gaps)
    del gaps
    arrival = start_s[owner] + cum_gaps - cum_gaps[first][owner]
    del cum_gaps
    cum_new = np.cumsum(new_blocks)
    conv_len = cum_new - (cum_new - new_blocks)[first][owner]
    session_blocks = conv_len[first + turns - 1]                        # each session's own blocks
    session_base = NUM_SYS_BLOCKS + np.cumsum(session_blocks) - session_blocks
    lengths = SYS_LEN[prompt[owner]] + conv_len
    order = np.argsort(arrival, kind="stable")
    owner, lengths, arrival = owner[order], lengths[order], arrival[order]
    offsets = np.zeros(num_req + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    ids = np.empty(int(offsets[-1]), dtype=np.int32)
    step = 1 << 16                                                     # requests per slice: bounded temporaries
    for lo in range(0, num_req, step):
        hi = min(num_req, lo + step)
        ln = lengths[lo:hi]
        req = np.repeat(np.arange(lo, hi), ln)
        pos = np.arange(offsets[lo], offsets[hi]) - offsets[req]
        sys_len = SYS_LEN[prompt[owner[req]]]
        ids[offsets[lo]:offsets[hi]] = np.where(pos < sys_len, SYS_BASE[prompt[owner[req]]] + pos,
                                                session_base[owner[req]] + pos - sys_len)
    id_space = int(NUM_SYS_BLOCKS + session_blocks.sum())
    tokens = lengths * BLOCK_TOKENS - short[order]
    return Trace(name=name, format="mooncake", block_tokens=BLOCK_TOKENS, arrival_s=arrival - arrival[0],
                 input_tokens=tokens, output_tokens=out_len[order], block_offsets=offsets, block_ids=ids,
                 id_space=id_space, unique_blocks=id_space, session_ids=sessions[owner].astype(np.int64))


def partition(num_sessions: int, num_replicas: int, replica: int):
    """Replica ``replica``'s share of the service under session routing, as a trace of its own."""
    sessions = np.flatnonzero(session_replicas(num_sessions, num_replicas) == replica)
    return build(sessions, name=f"synthetic chat, replica {replica} of {num_replicas}")


def whole_trace(num_sessions: int):
    """Every session in one trace (for the small-size check only)."""
    return build(np.arange(num_sessions, dtype=np.int64))
