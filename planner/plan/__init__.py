"""The plan: inputs, the one array algorithm, the result, rebasing of measured figures, tables.

* :mod:`planner.plan.inputs`: :class:`PlanInputs` (every input and its range), :func:`make_inputs`;
* :mod:`planner.plan.core`: every phase written once over numpy values (:func:`evaluate`);
* :mod:`planner.plan.lengths`: a model's KV bytes at many lengths at once;
* :mod:`planner.plan.hardware`: an accelerator resolved for a plan (HBM, links, tiers);
* :mod:`planner.plan.result`: :class:`PlanResult` and the scalar :func:`plan` (the 0-d case);
* :mod:`planner.plan.rebase`: :func:`rebase`, what survives a change of model, GPU or format;
* :mod:`planner.plan.tables`: the plan CSV and the KV-by-context table.
"""

from planner.plan.core import (
    kv_split,
    miss_probability,
    replay_window_tokens,
    sessions_that_fit,
    state_alive_fraction,
    weights_per_gpu,
)
from planner.plan.lengths import growing_bytes_array
from planner.plan.hardware import host_tiers, resolve_hardware, resolve_hbm
from planner.plan.inputs import (
    MAX_CONTEXT_TOKENS,
    MAX_HBM_GIB,
    MAX_SECONDS,
    MAX_SESSIONS_PER_GPU,
    MAX_SHARED_PREFIXES,
    MAX_TIER_GIB,
    MIN_TOKENS_PER_S,
    PlanInputs,
    field_range,
    make_inputs,
    plan_error,
)
from planner.plan.rebase import rebase
from planner.plan.result import PlanResult, effective_model, format_sessions, parallelism_note, plan
from planner.plan.tables import PLAN_CSV_COLUMNS, SEED_CONTEXTS, context_table, plan_frame

__all__ = [
    "MAX_CONTEXT_TOKENS", "MAX_HBM_GIB", "MAX_SECONDS", "MAX_SESSIONS_PER_GPU", "MAX_SHARED_PREFIXES",
    "MAX_TIER_GIB", "MIN_TOKENS_PER_S", "PLAN_CSV_COLUMNS", "SEED_CONTEXTS", "PlanInputs", "PlanResult",
    "context_table", "effective_model", "field_range", "format_sessions", "growing_bytes_array", "host_tiers",
    "kv_split", "make_inputs", "miss_probability", "parallelism_note", "plan", "plan_error", "plan_frame", "rebase",
    "replay_window_tokens", "resolve_hardware", "resolve_hbm", "sessions_that_fit", "state_alive_fraction",
    "weights_per_gpu",
]
