"""An accelerator's figures for a plan: HBM, measured usable KV, links, host RAM and SSD.

One resolution for the scalar plan and for each accelerator of a frontier grid.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from planner.catalog.accelerators import UserAccelerator, accelerator_from_link, user_host_link
from planner.catalog.entries import get_gpu
from planner.errors import PlanInputError
from planner.plan.core import HardwareArrays
from planner.plan.inputs import PlanInputs
from planner.engines.budget import EngineBudget
from planner.plan.engine import engine_budget_for
from planner.plan.rebase import usable_binding_mismatch
from planner.catalog.tiers import AUTO, Link, node_for, resolve_links
from planner.units import format_bytes, gib_to_bytes, to_gib
from planner.messages import Figure, msg

_KEEP = object()


@dataclass(frozen=True)
class Hardware:
    """One accelerator, resolved for a plan.

    Attributes:
        gpu_id, gpu_name: catalog id ("custom" for a custom size) and display name.
        hbm_bytes, hbm_source: HBM per GPU and where the figure comes from.
        measured_usable_bytes: the measured usable KV per GPU when it applies
            to this accelerator (its binding matches), else None.
        host_link, ssd_link: the links.
        host_ram_bytes, ssd_bytes, tier_source: tiers per GPU and their source.
        engine_budget: the named engine's predicted KV budget on this accelerator (``inputs.engine``), which
            then stands in ``measured_usable_bytes`` (clamped at 0); None without an engine or with a
            measured figure (which wins).
    """

    gpu_id: str
    gpu_name: str
    hbm_bytes: int
    hbm_source: str
    measured_usable_bytes: int | None
    host_link: Link
    ssd_link: Link
    host_ram_bytes: int
    ssd_bytes: int
    tier_source: str
    engine_budget: EngineBudget | None = None


def resolve_hbm(gpu_id: str, hbm_gib: float | None, user: UserAccelerator | None = None) -> tuple[int, str]:
    """HBM bytes per GPU and where the figure comes from (``user``: a user-defined accelerator's memory).

    Raises:
        PlanInputError: unknown GPU, or "custom" without ``hbm_gib`` nor a user accelerator.
    """
    if hbm_gib is not None:
        return gib_to_bytes(hbm_gib), "set by user"
    if user is not None:
        return user.hbm_bytes, "user-defined accelerator (as the device reports it)"
    if gpu_id == "custom":
        raise PlanInputError("hbm_gib", None, msg("a size in GiB when gpu is 'custom'"))
    gpu = get_gpu(gpu_id)
    return gpu.hbm_bytes, ("reported by the device" if gpu.memory_reported else "vendor figure")


HBM_NOTE_RATIO = 2.0
"""An HBM override at least this many times the accelerator's own memory gets a note (kept, not refused:
people model future parts)."""


def hbm_override_note(inputs: PlanInputs, hbm_bytes: int) -> str:
    """A sentence when ``hbm_gib`` sets HBM per GPU to at least :data:`HBM_NOTE_RATIO` x the catalog
    accelerator's memory, else "" (no override, a custom accelerator, or a plausible figure)."""
    if inputs.hbm_gib is None or inputs.gpu_id == "custom":
        return ""
    try:
        gpu = get_gpu(inputs.gpu_id)
    except PlanInputError:
        return ""
    ratio = hbm_bytes / gpu.hbm_bytes
    if ratio < HBM_NOTE_RATIO:
        return ""
    how = msg("reported memory") if gpu.memory_reported else msg("vendor memory figure")
    times = f"{ratio:,.1f}" if ratio < 10 else f"{ratio:,.0f}"
    return msg("HBM per GPU set to {hbm}: {times} x the {gpu}'s {how} ({catalog}); kept as given (a future part?), "
               "and every figure assumes it.", hbm=Figure(format_bytes(hbm_bytes)), times=Figure(times), gpu=gpu.name,
               how=how, catalog=Figure(format_bytes(gpu.hbm_bytes)))


def host_tiers(inputs: PlanInputs) -> tuple[int, int, str]:
    """(host RAM bytes per GPU, SSD bytes per GPU, source) from the inputs or the accelerator's node."""
    node = node_for(inputs.gpu_id)
    host = gib_to_bytes(inputs.host_ram_gib) if inputs.host_ram_gib is not None else node.host_ram_bytes_per_gpu
    ssd = gib_to_bytes(inputs.ssd_gib) if inputs.ssd_gib is not None else node.ssd_bytes_per_gpu
    parts = []
    if inputs.host_ram_gib is None or inputs.ssd_gib is None or AUTO in (inputs.host_link, inputs.ssd_link):
        parts.append(f"{node.name}, {node.gpus_per_node} GPUs per node: {node.source}")
    if inputs.host_ram_gib is not None or inputs.ssd_gib is not None:
        parts.append("host RAM / SSD per GPU set by user" if inputs.host_ram_gib is not None
                     and inputs.ssd_gib is not None else "partly set by user")
    return host, ssd, " ".join(parts)


def user_accelerator(inputs: PlanInputs) -> UserAccelerator | None:
    """The plan's user-defined accelerator (``accelerator``), or None."""
    return None if inputs.accelerator is None else accelerator_from_link(inputs.accelerator)


def resolve_hardware(inputs: PlanInputs, gpu_id: str | None = None, hbm_gib=_KEEP, accelerator=_KEEP) -> Hardware:
    """The accelerator ``gpu_id`` (default: the inputs') with HBM ``hbm_gib`` (default: the inputs') and the
    user-defined ``accelerator`` (compact form; default: the inputs'; with a new ``gpu_id``: none).

    Raises:
        PlanInputError: unknown GPU, custom without HBM, or a measured usable
            KV above the GPU's HBM.
    """
    if gpu_id is not None or hbm_gib is not _KEEP or accelerator is not _KEEP:
        if accelerator is _KEEP:
            accelerator = inputs.accelerator if gpu_id is None else None
        inputs = inputs.model_copy(update={"gpu_id": inputs.gpu_id if gpu_id is None else gpu_id,
                                           "hbm_gib": inputs.hbm_gib if hbm_gib is _KEEP else hbm_gib,
                                           "accelerator": accelerator})
    user = user_accelerator(inputs)
    hbm, source = resolve_hbm(inputs.gpu_id, inputs.hbm_gib, user)
    measured = None
    if inputs.measured_usable_kv_gib is not None and usable_binding_mismatch(inputs) is None:
        measured = gib_to_bytes(inputs.measured_usable_kv_gib)
        if measured > hbm:
            raise PlanInputError("measured_usable_kv_gib", inputs.measured_usable_kv_gib,
                                 msg("at most the GPU's HBM ({value:,.4g} GiB)", value=to_gib(hbm)))
    budget = engine_budget_for(inputs, inputs.gpu_id, hbm) if measured is None else None
    if budget is not None:
        measured = max(budget.available_kv_bytes, 0)
    host_link, ssd_link = resolve_links(inputs.gpu_id, inputs.host_link, inputs.ssd_link)
    if user is not None and inputs.host_link == AUTO:
        host_link = user_host_link(user) or host_link  # its own host link, when it gives one
    host, ssd, tier_source = host_tiers(inputs)
    name = user.name if user is not None else "custom" if inputs.gpu_id == "custom" else get_gpu(inputs.gpu_id).name
    return Hardware(gpu_id=inputs.gpu_id, gpu_name=name, hbm_bytes=hbm, hbm_source=source,
                    measured_usable_bytes=measured, host_link=host_link, ssd_link=ssd_link, host_ram_bytes=host,
                    ssd_bytes=ssd, tier_source=tier_source, engine_budget=budget)


def hardware_arrays(hardware: Sequence[Hardware], decode_tokens_per_s, prefill_tokens_per_s,
                    shape: tuple[int, ...] = ()) -> HardwareArrays:
    """Stack resolved accelerators into :class:`HardwareArrays` of ``shape`` (``()`` for one; ``(A, 1, 1)`` for a grid)."""
    def arr(values, dtype):
        if shape == () and len(values) == 1:
            return np.asarray(values[0], dtype=dtype)
        return np.asarray(values, dtype=dtype).reshape(shape)

    return HardwareArrays(
        hbm_bytes=arr([h.hbm_bytes for h in hardware], np.int64),
        measured_usable_bytes=arr([-1 if h.measured_usable_bytes is None else h.measured_usable_bytes
                                   for h in hardware], np.int64),
        host_link_bytes_per_s=arr([h.host_link.bytes_per_s for h in hardware], np.float64),
        ssd_link_bytes_per_s=arr([h.ssd_link.bytes_per_s for h in hardware], np.float64),
        host_ram_bytes=arr([h.host_ram_bytes for h in hardware], np.int64),
        ssd_bytes=arr([h.ssd_bytes for h in hardware], np.int64),
        decode_tokens_per_s=np.asarray(decode_tokens_per_s, dtype=np.float64).reshape(shape),
        prefill_tokens_per_s=np.asarray(prefill_tokens_per_s, dtype=np.float64).reshape(shape),
    )
