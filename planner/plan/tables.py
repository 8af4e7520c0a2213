"""Tables of a plan: the plan CSV (one row, a column contract) and KV bytes per context length."""

from __future__ import annotations

import pandas as pd

from planner.kv.models import NATIVE, ModelSpec
from planner.plan.result import PlanResult
from planner.units import to_gb, to_gib

PLAN_CSV_COLUMNS: tuple[str, ...] = (
    "model_id", "gpu_id", "gpus_per_replica", "kv_format", "context_tokens", "output_tokens", "hit_rate",
    "gpu_memory_utilization", "hbm_bytes", "hbm_gib", "weights_bytes_per_gpu", "reserve_bytes",
    "usable_kv_bytes", "usable_kv_gib", "kv_bytes_per_token", "prefix_tokens",
    "session_kv_bytes", "session_kv_gb", "session_kv_gib", "shared_prefix_bytes", "shared_prefix_gib",
    "per_session_bytes", "per_session_gib", "state_bytes_per_session", "sessions_per_gpu",
    "sessions_per_replica", "request_rate_per_s",
    "shared_prefixes", "prefix_copies", "pause_mean_s", "pause_distribution", "ttl_s", "prefill_tokens_per_s",
    "miss_probability", "replay_tokens_per_turn", "replay_seconds_per_turn", "ttft_s", "time_per_request_s",
    "host_link", "host_link_bytes_per_s", "ssd_link", "ssd_link_bytes_per_s",
    "host_ram_bytes_per_gpu", "ssd_bytes_per_gpu", "target_sessions_per_gpu",
    "tier_hbm_bytes", "tier_host_ram_bytes", "tier_ssd_bytes", "tier_evicted_bytes", "tier_total_bytes",
    "reload_from_host_s", "reload_from_ssd_s", "recompute_s", "overflow_action",
    "attention_parallelism", "tensor_parallel_size", "pipeline_parallel_size",
    "engine", "sessions_basis", "steady_state_sessions_per_replica",
)
"""Column contract of the plan CSV (one header row, one row per plan); later columns appended at the end.

``sessions_per_gpu`` is ``sessions_per_replica / gpus_per_replica`` (a share
under ``attention_parallelism = tp``, where a session spans the replica); both follow
``sessions_basis`` (the named engine's admission figure, or kvplan's steady state, whose
count is ``steady_state_sessions_per_replica`` either way)."""


def plan_frame(result: PlanResult) -> pd.DataFrame:
    """One-row DataFrame with :data:`PLAN_CSV_COLUMNS`; bytes as integers."""
    i = result.inputs
    tiers = result.tiers
    row = {
        "model_id": i.model_id, "gpu_id": i.gpu_id, "gpus_per_replica": i.gpus_per_replica,
        "kv_format": i.kv_format, "context_tokens": i.context_tokens, "output_tokens": i.output_tokens,
        "hit_rate": i.hit_rate, "gpu_memory_utilization": i.gpu_memory_utilization,
        "hbm_bytes": result.hbm_bytes, "hbm_gib": to_gib(result.hbm_bytes),
        "weights_bytes_per_gpu": result.weights_bytes_per_gpu, "reserve_bytes": result.reserve_bytes,
        "usable_kv_bytes": result.usable_kv_bytes, "usable_kv_gib": to_gib(result.usable_kv_bytes),
        "kv_bytes_per_token": result.kv_bytes_per_token, "prefix_tokens": result.prefix_tokens,
        "session_kv_bytes": result.session_kv_bytes, "session_kv_gb": to_gb(result.session_kv_bytes),
        "session_kv_gib": to_gib(result.session_kv_bytes),
        "shared_prefix_bytes": result.shared_prefix_bytes, "shared_prefix_gib": to_gib(result.shared_prefix_bytes),
        "per_session_bytes": result.per_session_bytes, "per_session_gib": to_gib(result.per_session_bytes),
        "state_bytes_per_session": result.state_bytes_per_session, "sessions_per_gpu": result.sessions_per_gpu,
        "sessions_per_replica": result.sessions_per_replica, "request_rate_per_s": result.request_rate_per_s,
        "shared_prefixes": i.shared_prefixes, "prefix_copies": result.prefix_copies,
        "pause_mean_s": i.pause_mean_s, "pause_distribution": i.pause_distribution, "ttl_s": i.ttl_s,
        "prefill_tokens_per_s": i.prefill_tokens_per_s, "miss_probability": result.miss_probability,
        "replay_tokens_per_turn": result.replay_tokens_per_turn,
        "replay_seconds_per_turn": result.replay_seconds_per_turn, "ttft_s": result.ttft_s,
        "time_per_request_s": result.time_per_request_s,
        "host_link": result.host_link_id, "host_link_bytes_per_s": result.host_link_bytes_per_s,
        "ssd_link": result.ssd_link_id, "ssd_link_bytes_per_s": result.ssd_link_bytes_per_s,
        "host_ram_bytes_per_gpu": result.host_ram_bytes_per_gpu, "ssd_bytes_per_gpu": result.ssd_bytes_per_gpu,
        "target_sessions_per_gpu": i.target_sessions_per_gpu,
        "tier_hbm_bytes": tiers.hbm_bytes, "tier_host_ram_bytes": tiers.host_ram_bytes,
        "tier_ssd_bytes": tiers.ssd_bytes, "tier_evicted_bytes": tiers.evicted_bytes,
        "tier_total_bytes": tiers.total_bytes,
        "reload_from_host_s": result.reload_from_host_s, "reload_from_ssd_s": result.reload_from_ssd_s,
        "recompute_s": result.recompute_s, "overflow_action": result.overflow_action,
        "attention_parallelism": result.attention_parallelism, "tensor_parallel_size": result.tensor_parallel_size,
        "pipeline_parallel_size": i.pipeline_parallel_size,
        "engine": i.engine or "", "sessions_basis": result.sessions_basis,
        "steady_state_sessions_per_replica": result.steady_state_sessions_per_replica,
    }
    return pd.DataFrame([row], columns=list(PLAN_CSV_COLUMNS))


SEED_CONTEXTS = (100_000, 250_000, 500_000, 1_000_000)
"""Context lengths of the published DeepSeek V4.1-Flash table (docs/sources.md)."""


def context_table(model: ModelSpec, contexts=SEED_CONTEXTS, kv_format: str = NATIVE) -> pd.DataFrame:
    """KV bytes per context length: columns ``context_tokens, kv_bytes, kv_gb, kv_gib, state_bytes``.

    The published 890 B/token table (docs/sources.md) is ``context_table(get_model("deepseek-v4.1-flash"))``.
    """
    rows = []
    for n in contexts:
        e = model.estimate(int(n), kv_format)
        rows.append({"context_tokens": e.context_tokens, "kv_bytes": e.kv_bytes, "kv_gb": to_gb(e.kv_bytes),
                     "kv_gib": to_gib(e.kv_bytes), "state_bytes": e.state_bytes_outside_pool})
    return pd.DataFrame(rows, columns=["context_tokens", "kv_bytes", "kv_gb", "kv_gib", "state_bytes"])
