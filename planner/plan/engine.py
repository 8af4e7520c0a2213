"""A plan's engine budget: the named engine's own KV budget per GPU in place of kvplan's generic one.

With ``engine`` set (``kvplan plan --engine vllm``), usable KV per GPU is
:func:`planner.engines.budget.predict_vllm_budget` (or the SGLang rule) for the plan's model, accelerator,
utilization and TP x PP split. What the user gives still wins: a measured usable KV
(``measured_usable_kv_gib``) replaces the prediction, ``weights_gib`` (or ``weight_format``: parameters x its
bytes) replaces the checkpoint's weights and ``hbm_gib`` the device memory. ``reserve_gib`` is not used with an
engine: the engine's activation, non-torch and CUDA-graph terms take its place (said in the budget's assumptions).
"""

from __future__ import annotations

from planner.catalog.entries import GPUS, catalog_config, get_model
from planner.engines.budget import EngineBudget, predict_sglang_budget, predict_vllm_budget
from planner.messages import msg
from planner.plan.inputs import PlanInputs
from planner.units import cdiv, format_bytes, gib_to_bytes


CALIBRATED_GPU = "h100-sxm"
"""The accelerator the vLLM budget's constants were measured on (planner/data/engine_budget.toml)."""


def _total(inputs: PlanInputs, gpu_id: str, hbm_bytes: int) -> tuple[int, str, str | None]:
    """(device memory the engine multiplies, its source, a caveat or None)."""
    if inputs.hbm_gib is not None:
        return hbm_bytes, msg("HBM set by user ({hbm})", hbm=format_bytes(hbm_bytes)), None
    gpu = GPUS.get(gpu_id)
    if gpu is not None and gpu.cuda_total_bytes is not None:
        return gpu.cuda_total_bytes, gpu.cuda_total_source, None
    return hbm_bytes, msg("the device's total ({hbm})", hbm=format_bytes(hbm_bytes)), msg(
        "CUDA's own total for this accelerator is not in the catalog: the device total is used (on H100 CUDA "
        "reports 0.46 GiB less), so the budget may be that much high")


def _gpu_name(inputs: PlanInputs, gpu_id: str) -> str:
    """The accelerator's name as vLLM's batch defaults read it (a user-defined accelerator's, or the catalog's)."""
    if inputs.accelerator is not None:
        from planner.catalog.accelerators import accelerator_from_link

        return accelerator_from_link(inputs.accelerator).name
    gpu = GPUS.get(gpu_id)
    return gpu.name if gpu is not None else gpu_id


def engine_budget_for(inputs: PlanInputs, gpu_id: str, hbm_bytes: int,
                      config: dict | None = None) -> EngineBudget | None:
    """The engine budget of a plan on one accelerator, or None without ``engine``. The caller asks only where no
    measured usable KV applies (a measured figure for this accelerator wins).

    ``config``: the model's config.json when it is not a catalog model (an imported config).

    Raises:
        PlanInputError: an uncalibrated engine version, a weight format the checkpoint does not ship, or a
            model whose weights or activations the budget cannot price.
    """
    if inputs.engine is None:
        return None
    cfg = config if config is not None else catalog_config(inputs.model_id)
    tp = inputs.gpus_per_replica // inputs.pipeline_parallel_size
    pp = inputs.pipeline_parallel_size
    total, source, caveat = _total(inputs, gpu_id, hbm_bytes)
    weights = None  # the checkpoint's own, class by class
    if inputs.weights_gib is not None:
        weights = cdiv(gib_to_bytes(inputs.weights_gib), inputs.gpus_per_replica)
    elif inputs.weight_format is not None:  # the user's format: parameters x its bytes, as the generic plan
        weights = cdiv(get_model(inputs.model_id).weights_bytes(inputs.weight_format), inputs.gpus_per_replica)
    if inputs.engine == "vllm":
        budget = predict_vllm_budget(cfg, total_memory_bytes=total, total_source=source,
                                     gpu_memory_utilization=inputs.gpu_memory_utilization, tp=tp, pp=pp,
                                     version=inputs.engine_version, weights_bytes_per_gpu=weights,
                                     gpu_name=_gpu_name(inputs, gpu_id))
    else:
        budget = predict_sglang_budget(cfg, total_memory_bytes=total, total_source=source,
                                       mem_fraction_static=inputs.gpu_memory_utilization, tp=tp, pp=pp,
                                       weights_bytes_per_gpu=weights, version=inputs.engine_version)
    extra = [msg("reserve_gib is not used: the engine's own terms replace it")]
    if caveat:
        extra.append(caveat)
    if inputs.engine == "vllm" and gpu_id != CALIBRATED_GPU:
        extra.append(msg("the activation and non-torch constants were measured on H100 80 GB; on {gpu} they are "
                         "assumed to hold", gpu=gpu_id))
    return EngineBudget(engine=budget.engine, version=budget.version, available_kv_bytes=budget.available_kv_bytes,
                        requested_bytes=budget.requested_bytes, terms=budget.terms, binding_rank=budget.binding_rank,
                        assumptions=budget.assumptions + tuple(extra))
