"""Tables of a plan: the plan CSV (one row, a column contract) and KV bytes per context length."""

from __future__ import annotations

import pandas as pd

from planner.kv.models import NATIVE, ModelSpec
from planner.plan.result import PlanResult
from planner.units import to_gb, to_gib

PLAN_CSV_COLUMNS: tuple[str, ...] = (
    "model_id", "gpu_id", "gpus_per_replica", "weight_format", "kv_format", "context_tokens", "output_tokens",
    "hit_rate", "shared_prefix", "gpu_memory_utilization",
    "hbm_bytes_per_gpu", "hbm_gb_per_gpu", "hbm_gib_per_gpu", "weights_bytes_per_gpu", "weights_gb_per_gpu",
    "reserve_bytes_per_gpu", "usable_kv_bytes_per_gpu", "usable_kv_gb_per_gpu", "usable_kv_gib_per_gpu",
    "kv_bytes_per_token_per_gpu", "shared_prefix_tokens",
    "session_kv_bytes_per_gpu", "session_kv_gb_per_gpu", "session_kv_gib_per_gpu",
    "shared_prefix_bytes_per_gpu", "shared_prefix_gb_per_gpu", "shared_prefix_gib_per_gpu",
    "per_session_bytes_per_gpu", "per_session_gb_per_gpu", "per_session_gib_per_gpu",
    "state_bytes_per_session_per_gpu", "sessions_per_gpu", "sessions_per_replica",
    "request_rate_per_s_per_gpu", "request_rate_per_s_per_replica",
    "shared_prefixes_per_kv_domain", "prefix_copies_per_kv_domain", "pause_mean_s", "pause_distribution", "ttl_s",
    "prefill_tokens_per_s_per_gpu", "prompt_prefill_tokens", "prompt_prefill_s",
    "miss_probability", "replay_tokens_per_turn", "replay_seconds_per_turn", "ttft_s", "time_per_request_s",
    "host_link", "host_link_bytes_per_s", "ssd_link", "ssd_link_bytes_per_s",
    "host_ram_bytes_per_gpu", "ssd_bytes_per_gpu", "target_sessions_per_gpu",
    "tier_hbm_bytes_per_gpu", "tier_host_ram_bytes_per_gpu", "tier_ssd_bytes_per_gpu", "tier_evicted_bytes_per_gpu",
    "tier_total_bytes_per_gpu",
    "reload_from_host_s", "reload_from_ssd_s", "recompute_s", "overflow_action",
    "attention_parallelism", "tensor_parallel_size", "pipeline_parallel_size",
    "engine", "sessions_basis", "steady_state_sessions_per_replica",
)
"""Column contract of the plan CSV (one header row, one row per plan; docs/csv.md).

Every figure that is per GPU or per replica says so in its name. Bytes are
integers; ``_gb`` and ``_gib`` beside them are rounded to 3 significant
digits, seconds and probabilities to 4, sessions per GPU (a share under
``attention_parallelism = tp``) to 3; inputs are written as given. Sessions follow
``sessions_basis`` (the named engine's admission figure, or kvplan's steady state, whose
count is ``steady_state_sessions_per_replica`` either way)."""

SIGNIFICANT_GB = 3
"""Significant digits of the GB and GiB columns (the bytes beside them are exact)."""
SIGNIFICANT_FIGURES = 4
"""Significant digits of seconds, rates and probabilities."""


def significant(value: float | None, digits: int) -> float | None:
    """``value`` rounded to ``digits`` significant digits (None stays None: an empty cell).

    >>> significant(51.24487140122801, 3), significant(85.520809984, 3), significant(0.000123456, 3)
    (51.2, 85.5, 0.000123)
    """
    if value is None or value != value or value == 0:
        return value
    return float(f"{value:.{digits}g}")


def plan_frame(result: PlanResult) -> pd.DataFrame:
    """One-row DataFrame with :data:`PLAN_CSV_COLUMNS`: bytes as integers, the rest rounded to what it means."""
    i = result.inputs
    tiers = result.tiers
    gb = lambda b: significant(to_gb(b), SIGNIFICANT_GB)  # noqa: E731
    gib = lambda b: significant(to_gib(b), SIGNIFICANT_GB)  # noqa: E731
    fig = lambda x: significant(x, SIGNIFICANT_FIGURES)  # noqa: E731
    rate = result.request_rate_per_s
    row = {
        "model_id": i.model_id, "gpu_id": i.gpu_id, "gpus_per_replica": i.gpus_per_replica,
        "weight_format": result.weight_format, "kv_format": i.kv_format, "context_tokens": i.context_tokens,
        "output_tokens": i.output_tokens, "hit_rate": i.hit_rate, "shared_prefix": i.shared_prefix,
        "gpu_memory_utilization": i.gpu_memory_utilization,
        "hbm_bytes_per_gpu": result.hbm_bytes, "hbm_gb_per_gpu": gb(result.hbm_bytes),
        "hbm_gib_per_gpu": gib(result.hbm_bytes),
        "weights_bytes_per_gpu": result.weights_bytes_per_gpu, "weights_gb_per_gpu": gb(result.weights_bytes_per_gpu),
        "reserve_bytes_per_gpu": result.reserve_bytes,
        "usable_kv_bytes_per_gpu": result.usable_kv_bytes, "usable_kv_gb_per_gpu": gb(result.usable_kv_bytes),
        "usable_kv_gib_per_gpu": gib(result.usable_kv_bytes),
        "kv_bytes_per_token_per_gpu": significant(result.kv_bytes_per_token, 6),
        "shared_prefix_tokens": result.prefix_tokens,
        "session_kv_bytes_per_gpu": result.session_kv_bytes, "session_kv_gb_per_gpu": gb(result.session_kv_bytes),
        "session_kv_gib_per_gpu": gib(result.session_kv_bytes),
        "shared_prefix_bytes_per_gpu": result.shared_prefix_bytes,
        "shared_prefix_gb_per_gpu": gb(result.shared_prefix_bytes),
        "shared_prefix_gib_per_gpu": gib(result.shared_prefix_bytes),
        "per_session_bytes_per_gpu": result.per_session_bytes, "per_session_gb_per_gpu": gb(result.per_session_bytes),
        "per_session_gib_per_gpu": gib(result.per_session_bytes),
        "state_bytes_per_session_per_gpu": result.state_bytes_per_session,
        "sessions_per_gpu": result.sessions_per_gpu if isinstance(result.sessions_per_gpu, int)
        else significant(result.sessions_per_gpu, 3),
        "sessions_per_replica": result.sessions_per_replica,
        "request_rate_per_s_per_gpu": fig(rate),
        "request_rate_per_s_per_replica": None if rate is None else fig(rate * i.gpus_per_replica),
        "shared_prefixes_per_kv_domain": i.shared_prefixes, "prefix_copies_per_kv_domain": result.prefix_copies,
        "pause_mean_s": i.pause_mean_s, "pause_distribution": i.pause_distribution, "ttl_s": i.ttl_s,
        "prefill_tokens_per_s_per_gpu": i.prefill_tokens_per_s,
        "prompt_prefill_tokens": result.prompt_prefill_tokens, "prompt_prefill_s": fig(result.prompt_prefill_s),
        "miss_probability": fig(result.miss_probability),
        "replay_tokens_per_turn": fig(result.replay_tokens_per_turn),
        "replay_seconds_per_turn": fig(result.replay_seconds_per_turn), "ttft_s": fig(result.ttft_s),
        "time_per_request_s": fig(result.time_per_request_s),
        "host_link": result.host_link_id, "host_link_bytes_per_s": round(result.host_link_bytes_per_s),
        "ssd_link": result.ssd_link_id, "ssd_link_bytes_per_s": round(result.ssd_link_bytes_per_s),
        "host_ram_bytes_per_gpu": result.host_ram_bytes_per_gpu, "ssd_bytes_per_gpu": result.ssd_bytes_per_gpu,
        "target_sessions_per_gpu": i.target_sessions_per_gpu,
        "tier_hbm_bytes_per_gpu": tiers.hbm_bytes, "tier_host_ram_bytes_per_gpu": tiers.host_ram_bytes,
        "tier_ssd_bytes_per_gpu": tiers.ssd_bytes, "tier_evicted_bytes_per_gpu": tiers.evicted_bytes,
        "tier_total_bytes_per_gpu": tiers.total_bytes,
        "reload_from_host_s": fig(result.reload_from_host_s), "reload_from_ssd_s": fig(result.reload_from_ssd_s),
        "recompute_s": fig(result.recompute_s), "overflow_action": result.overflow_action,
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
