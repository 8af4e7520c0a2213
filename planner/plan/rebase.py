"""What survives a change of model, GPU or format: measured figures bound to what they measured.

A measured KV bytes per token holds for the model and KV format it was
measured on; a measured usable KV holds for the accelerator, HBM, memory
utilization and weights setting it was measured with. :func:`rebase` applies
a change to plan inputs and drops each measured figure whose binding no longer
matches, with one human sentence per dropped figure. Weights given in GiB
belong to one model's checkpoint and are dropped the same way when the model
changes. Every page and the CLI call it when they change inputs; nothing else
decides what survives.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from planner.plan.inputs import (
    MEASURED_KV_BINDING,
    MEASURED_USABLE_BINDING,
    PlanInputs,
    plan_error,
    usable_binding_of,
)
from planner.messages import msg


def kv_binding_mismatch(inputs: PlanInputs) -> str | None:
    """Why ``measured_kv_bytes_per_token`` does not apply to these inputs (None when it does or is unset)."""
    if inputs.measured_kv_bytes_per_token is None:
        return None
    wrong = []
    if inputs.measured_kv_model_id != inputs.model_id:
        wrong.append(msg("model {measured}, not {now}", measured=inputs.measured_kv_model_id, now=inputs.model_id))
    if inputs.measured_kv_format != inputs.kv_format:
        wrong.append(msg("KV format {measured}, not {now}", measured=inputs.measured_kv_format, now=inputs.kv_format))
    if not wrong:
        return None
    on = wrong[0] if len(wrong) == 1 else msg("{first} and {second}", first=wrong[0], second=wrong[1])
    return msg("Measured KV bytes per token ({bytes:,.6g} B) not applied: it was measured on {on}; the planner's "
               "arithmetic is used.", bytes=inputs.measured_kv_bytes_per_token, on=on)


def usable_binding_mismatch(inputs: PlanInputs) -> str | None:
    """Why ``measured_usable_kv_gib`` does not apply to these inputs (None when it does or is unset)."""
    if inputs.measured_usable_kv_gib is None:
        return None
    now = usable_binding_of(lambda f: getattr(inputs, f))
    names = {"measured_usable_kv_gpu_id": msg("GPU"), "measured_usable_kv_hbm_gib": msg("HBM setting (GiB; none = "
                                                                                        "device)"),
             "measured_usable_kv_utilization": msg("memory utilization"), "measured_usable_kv_weights": msg("weights")}
    wrong = [msg("{name} {measured!s}, not {now!s}", name=names[f], measured=getattr(inputs, f), now=now[f])
             for f in MEASURED_USABLE_BINDING if getattr(inputs, f) != now[f]]
    if not wrong:
        return None
    what = wrong[0]
    for more in wrong[1:]:
        what = msg("{first}; {rest}", first=what, rest=more)
    return msg("Measured usable KV ({gib:,.6g} GiB per GPU) not applied: it was measured with {what}; the usable "
               "KV is computed.", gib=inputs.measured_usable_kv_gib, what=what)


def rebase(inputs: PlanInputs, **changes: Any) -> tuple[PlanInputs, list[str]]:
    """Apply ``changes`` (any :class:`PlanInputs` fields, e.g. ``model_id``, ``gpu_id``, ``kv_format``) and drop
    every measured figure that no longer applies.

    A measured figure set in ``changes`` is bound to the new inputs (unless its
    binding is given too); one already in ``inputs`` keeps its binding and is
    dropped when the binding no longer matches.

    Returns:
        (new inputs, notices): one sentence per dropped figure.

    Raises:
        PlanInputError: a change is invalid (names the field, value and range).

    >>> from planner.plan.inputs import PlanInputs
    >>> p = PlanInputs(model_id="deepseek-v4.1-flash", measured_kv_bytes_per_token=445)
    >>> q, notes = rebase(p, model_id="llama-3.1-8b")
    >>> q.measured_kv_bytes_per_token is None, notes[0][:60]
    (True, 'Measured KV bytes per token (445 B) not applied: it was meas')
    """
    data = inputs.model_dump()
    if "measured_kv_bytes_per_token" in changes:
        for f in MEASURED_KV_BINDING:
            data[f] = None
    if "measured_usable_kv_gib" in changes:
        for f in MEASURED_USABLE_BINDING:
            data[f] = None
    notices: list[str] = []
    model_changed = changes.get("model_id", inputs.model_id) != inputs.model_id
    if model_changed and inputs.weights_gib is not None and "weights_gib" not in changes:
        # weights given in GiB describe one model's checkpoint: another model takes its catalog weights
        notices.append(msg("Weights of {gib:,.6g} GiB (set for {old}) not applied to {new}: its catalog weights are "
                           "used.", gib=inputs.weights_gib, old=inputs.model_id, new=changes["model_id"]))
        data["weights_gib"] = None
    if model_changed and inputs.state_bytes_per_sequence is not None and "state_bytes_per_sequence" not in changes:
        notices.append(msg("State of {bytes:,} B per sequence (set for {old}) not applied to {new}: its layout's state "
                           "is used.", bytes=inputs.state_bytes_per_sequence, old=inputs.model_id,
                           new=changes["model_id"]))
        data["state_bytes_per_sequence"] = None
    data.update(changes)
    try:
        new = PlanInputs(**data)
    except ValidationError as exc:
        raise plan_error(exc, PlanInputs) from None
    drop: dict[str, Any] = {}
    if (why := kv_binding_mismatch(new)) is not None:
        notices.append(why)
        drop["measured_kv_bytes_per_token"] = None
    if (why := usable_binding_mismatch(new)) is not None:
        notices.append(why)
        drop["measured_usable_kv_gib"] = None
    if drop:
        new = PlanInputs(**{**new.model_dump(), **drop})
    return new, notices
