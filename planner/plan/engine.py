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
from planner.errors import MISSING, PlanInputError
from planner.hf.weights import checkpoint_weights, weights_refusal_reason
from planner.kv.models import ModelSpec
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


def _config_of(inputs: PlanInputs, model: ModelSpec | None, config: dict | None) -> dict:
    """The config.json the budget prices: the one given, an imported model's own, else the catalog's."""
    if config is not None:
        return config
    if model is not None and model.checkpoint_config is not None:
        return model.checkpoint_config
    return catalog_config(inputs.model_id)


def _params_model(inputs: PlanInputs, model: ModelSpec | None) -> ModelSpec | None:
    """The model whose parameter count prices a weight format (the one given, else the catalog's; None when
    neither carries a count)."""
    if model is not None:
        return model if model.total_params is not None else None
    try:
        m = get_model(inputs.model_id)
    except PlanInputError:
        return None
    return m if m.total_params is not None else None


def checkpoint_weights_or_none(config: dict, tp: int = 1, pp: int = 1) -> tuple[int | None, str]:
    """The checkpoint's weight bytes of one rank (the binding stage at ``pp`` > 1), or None and why not
    (a field the config lacks, or an architecture whose weights are not priced)."""
    try:
        return checkpoint_weights(config, tp=tp, pp=pp).weight_bytes, ""
    except PlanInputError as exc:
        return None, weights_refusal_reason(exc)


def _dp_attention_weights(config: dict, width: int, pp: int) -> tuple[int | None, str, str]:
    """Weight bytes per GPU under DP attention with expert parallelism (vLLM ``--data-parallel-size W
    --tensor-parallel-size 1 --enable-expert-parallel``): every class whole (TP 1) but the routed experts, split
    over the W ranks; (None, "", why) where the checkpoint cannot be priced."""
    from planner.engines.budget import budget_constants

    try:
        cw = checkpoint_weights(config, tp=1, pp=pp, mxfp4_layout=budget_constants()["vllm"]["mxfp4_moe_layout"])
    except PlanInputError as exc:
        return None, "", weights_refusal_reason(exc)
    experts = sum(c.weight_bytes for c in cw.classes if c.name == "MoE experts")
    rest = cw.weight_bytes - experts
    if experts:
        source = msg("checkpoint at TP 1 under DP attention: {rest} GiB whole on every GPU + MoE experts {experts} "
                     "GiB / {width} ranks (expert parallelism)", rest=f"{rest / 2**30:.2f}",
                     experts=f"{experts / 2**30:.2f}", width=width)
    else:
        source = msg("checkpoint at TP 1 under DP attention: {rest} GiB whole on every GPU (no routed experts)",
                     rest=f"{rest / 2**30:.2f}")
    return rest + cdiv(experts, width), source, ""


def engine_budget_for(inputs: PlanInputs, gpu_id: str, hbm_bytes: int, config: dict | None = None,
                      model: ModelSpec | None = None) -> EngineBudget | None:
    """The engine budget of a plan on one accelerator, or None without ``engine``. The caller asks only where no
    measured usable KV applies (a measured figure for this accelerator wins).

    ``config``: the model's config.json (default: ``model.checkpoint_config`` for an imported model, else the
    catalog's). Weights, in order: ``weights_gib``; ``weight_format`` x the parameter count; the checkpoint's
    own, class by class; where the checkpoint cannot be priced, the catalog's parameter count x its format (said
    in the assumptions); an imported config with neither is refused, naming ``weights_gib``.

    Raises:
        PlanInputError: an uncalibrated engine version, a weight format without a parameter count, weights
            that cannot be derived, or a model whose activations the budget cannot price.
    """
    if inputs.engine is None:
        return None
    cfg = _config_of(inputs, model, config)
    tp = inputs.gpus_per_replica // inputs.pipeline_parallel_size
    pp = inputs.pipeline_parallel_size
    dp_width = 0  # DP attention: vLLM --data-parallel-size W --tensor-parallel-size 1 --enable-expert-parallel
    if inputs.attention_parallelism == "dp" and tp > 1:
        dp_width, tp = tp, 1
    total, source, caveat = _total(inputs, gpu_id, hbm_bytes)
    extra: list[str] = []
    weights, weights_source = None, "set by user"  # None: the checkpoint's own, class by class
    if inputs.weights_gib is not None:
        weights = cdiv(gib_to_bytes(inputs.weights_gib), inputs.gpus_per_replica)
    elif inputs.weight_format is not None:  # the user's format: parameters x its bytes, as the generic plan
        pm = _params_model(inputs, model)
        if pm is None:
            raise PlanInputError("weights_gib", MISSING, msg(
                "the weights of one replica in GiB (--weights-gib): weight format {fmt} needs a parameter count, "
                "and {id} carries none", fmt=inputs.weight_format, id=inputs.model_id))
        weights = cdiv(pm.weights_bytes(inputs.weight_format), inputs.gpus_per_replica)
        weights_source = msg("{params} parameters x {fmt} (set by user) / {gpus} GPUs", params=f"{pm.total_params:,}",
                             fmt=inputs.weight_format, gpus=inputs.gpus_per_replica)
    elif dp_width > 1:  # DP attention: each rank at TP 1, experts split over the ranks (expert parallelism)
        weights, weights_source, why = _dp_attention_weights(cfg, dp_width, pp)
        if why:
            pm = _params_model(inputs, model)
            if pm is None:
                raise PlanInputError("weights_gib", MISSING, msg(
                    "the weights of one replica in GiB (--weights-gib): {id}'s checkpoint weights cannot be "
                    "derived from its config ({why})", id=inputs.model_id, why=why))
            weights = cdiv(pm.weights_bytes(None), inputs.gpus_per_replica)
            weights_source = msg("catalog: {params} parameters x {fmt} / {gpus} GPUs", params=f"{pm.total_params:,}",
                                 fmt=pm.weight_format, gpus=inputs.gpus_per_replica)
            extra.append(msg("under DP attention vLLM keeps the attention and dense weights whole on every GPU; "
                             "this parameter-count split (the checkpoint's tensors could not be priced: {why}) does "
                             "not see it, so the budget may be high", why=why))
    else:
        _, why = checkpoint_weights_or_none(cfg, tp, pp)
        if why:
            pm = _params_model(inputs, model)
            if pm is None:
                raise PlanInputError("weights_gib", MISSING, msg(
                    "the weights of one replica in GiB (--weights-gib): {id}'s checkpoint weights cannot be "
                    "derived from its config ({why})", id=inputs.model_id, why=why))
            weights = cdiv(pm.weights_bytes(None), inputs.gpus_per_replica)
            weights_source = msg("catalog: {params} parameters x {fmt} / {gpus} GPUs", params=f"{pm.total_params:,}",
                                 fmt=pm.weight_format, gpus=inputs.gpus_per_replica)
            extra.append(msg("weights: {params} parameters x {fmt} / {gpus} GPUs (the checkpoint's tensors could "
                             "not be priced: {why}); the engine's figure may differ by what stays unquantized",
                             params=f"{pm.total_params:,}", fmt=pm.weight_format, gpus=inputs.gpus_per_replica,
                             why=why))
    if inputs.engine == "vllm":
        budget = predict_vllm_budget(cfg, total_memory_bytes=total, total_source=source,
                                     gpu_memory_utilization=inputs.gpu_memory_utilization, tp=tp, pp=pp,
                                     version=inputs.engine_version, weights_bytes_per_gpu=weights,
                                     gpu_name=_gpu_name(inputs, gpu_id), weights_source=weights_source)
    else:
        budget = predict_sglang_budget(cfg, total_memory_bytes=total, total_source=source,
                                       mem_fraction_static=inputs.gpu_memory_utilization, tp=tp, pp=pp,
                                       weights_bytes_per_gpu=weights, version=inputs.engine_version,
                                       weights_source=weights_source)
    if dp_width > 1 and inputs.engine == "vllm":
        extra.append(msg("DP attention: the budget is one TP 1 rank's (activation and non-torch memory at TP 1; "
                         "expert-parallel all-to-all buffers not measured)"))
    extra.append(msg("reserve_gib is not used: the engine's own terms replace it"))
    if caveat:
        extra.append(caveat)
    if inputs.engine == "vllm" and gpu_id != CALIBRATED_GPU:
        extra.append(msg("the activation and non-torch constants were measured on H100 80 GB; on {gpu} they are "
                         "assumed to hold", gpu=gpu_id))
    return EngineBudget(engine=budget.engine, version=budget.version, available_kv_bytes=budget.available_kv_bytes,
                        requested_bytes=budget.requested_bytes, terms=budget.terms, binding_rank=budget.binding_rank,
                        assumptions=budget.assumptions + tuple(extra))
