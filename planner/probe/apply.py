"""Using a probe in a plan: the measured bytes per token as the model's coefficient, and tables.

:func:`measured_model` returns the catalog model with its KV layout in the
probed format and the *measured* bytes per token as its reported coefficient,
so that :func:`planner.plan.plan` prices growing KV with what the device
really spent (``plan(inputs_for(result, inputs), model=measured_model(result))``).
Only pools whose every group grows with each token qualify (DeepSeek V4.1,
MLA, full attention): with window layers in the pool, bytes / tokens at one
length would blend a capped group into a per-token slope.
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from planner.catalog.entries import get_model
from planner.errors import PlanInputError
from planner.kv.models import NATIVE, ModelSpec
from planner.probe.result import ProbeResult
from planner.messages import msg
from planner.units import format_figure


def measured_model(result: ProbeResult) -> ModelSpec:
    """The probed model, priced by the measured bytes per token (its format's layout kept).

    Raises:
        PlanInputError: the model's pool holds window-capped groups, or nothing was measured.
    """
    model = get_model(result.model_id)
    groups = model.layout(result.kv_format)
    capped = [g.name for g in groups if g.in_pool and g.capped]
    if capped:
        raise PlanInputError("model", result.model_id,
                             msg("a model whose pooled KV grows with every token; this pool also holds {choices}, so "
                                 "bytes / tokens at one length is not a per-token slope", choices=", ".join(capped)))
    if result.measured_bytes_per_token <= 0:
        raise PlanInputError("measured_bytes_per_token", result.measured_bytes_per_token, msg("a positive number"))
    label = (f"{result.kv_format}, measured on {result.device_name}: {format_figure(result.measured_bytes_per_token, 6)} B/token "
             f"({result.num_tokens:,}-token pool, {result.timestamp:%Y-%m-%d})")
    return replace(model, groups=groups, reported_kv_bytes_per_token=result.measured_bytes_per_token,
                   native_format_label=label,
                   notes=(*model.notes, f"KV bytes per token measured by kvplan probe: {label}."))


def inputs_for(result: ProbeResult, inputs):
    """Plan inputs for :func:`measured_model`: the probed model, its format folded into "native".

    Through :func:`planner.plan.rebase`: a measured figure of another model or format does not come along.
    """
    from planner.plan import rebase

    return rebase(inputs, model_id=result.model_id, kv_format=NATIVE)[0]


GROUP_COLUMNS = ("group", "role", "format", "layers", "blocks", "entries_per_block", "entry_bytes", "entries",
                 "planner_bytes", "pool_bytes")
"""Column contract of :func:`groups_frame`."""
FORMAT_COLUMNS = ("format", "channels", "role", "rel_rmse", "max_abs_error", "quantize_gbps", "dequantize_gbps",
                  "copy_gbps", "quantize_over_copy", "dequantize_over_copy")
"""Column contract of :func:`formats_frame`."""


def groups_frame(result: ProbeResult) -> pd.DataFrame:
    """One row per pool tensor, columns :data:`GROUP_COLUMNS` (bytes as integers)."""
    rows = [{"group": g.name, "role": g.role, "format": g.kv_format, "layers": g.num_layers, "blocks": g.num_blocks,
             "entries_per_block": g.entries_per_block, "entry_bytes": g.entry_bytes, "entries": g.entries,
             "planner_bytes": g.predicted_bytes, "pool_bytes": g.pool_bytes} for g in result.groups]
    return pd.DataFrame(rows, columns=list(GROUP_COLUMNS))


def formats_frame(result: ProbeResult) -> pd.DataFrame:
    """One row per measured format and width, columns :data:`FORMAT_COLUMNS` (speed None if not measured)."""
    speed = {(t.kv_format, t.num_channels): t for t in result.throughput}
    rows = []
    for q in result.quality:
        t = speed.get((q.kv_format, q.num_channels))
        rows.append({"format": q.kv_format, "channels": q.num_channels, "role": q.role, "rel_rmse": q.rel_rmse,
                     "max_abs_error": q.max_abs_error,
                     "quantize_gbps": t.quantize_gbps if t else None,
                     "dequantize_gbps": t.dequantize_gbps if t else None,
                     "copy_gbps": t.copy_gbps if t else None,
                     "quantize_over_copy": t.quantize_over_copy if t else None,
                     "dequantize_over_copy": t.dequantize_over_copy if t else None})
    return pd.DataFrame(rows, columns=list(FORMAT_COLUMNS))
