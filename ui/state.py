"""Plan inputs shared by every page, kept in ``st.query_params`` (shareable links)
and in ``st.session_state`` (the last valid plan).

One validated model, :class:`planner.capacity.PlanInputs`, parses links, widgets
and files alike. A link with unknown or invalid parameters keeps defaults for
those fields only and shows a warning naming them.
"""

from __future__ import annotations

from typing import Any, Mapping

import streamlit as st
from pydantic import ValidationError

from planner.capacity import PlanInputs
from planner.errors import PlanInputError

QUERY_KEYS: dict[str, str] = {
    "model_id": "model",
    "gpu_id": "gpu",
    "gpus_per_replica": "gpus",
    "hbm_gib": "hbm",
    "gpu_memory_utilization": "util",
    "weights_gib": "weights",
    "weight_format": "wfmt",
    "reserve_gib": "reserve",
    "context_tokens": "ctx",
    "output_tokens": "out",
    "hit_rate": "hit",
    "kv_format": "fmt",
    "state_in_hbm": "state_hbm",
    "decode_tokens_per_s": "dtps",
    "session_decode_tokens_per_s": "stps",
    "shared_prefixes": "prefixes",
    "pause_mean_s": "pause",
    "pause_distribution": "pause_dist",
    "ttl_s": "ttl",
    "prefill_tokens_per_s": "ptps",
    "host_ram_gib": "host",
    "ssd_gib": "ssd",
    "host_link": "hlink",
    "ssd_link": "slink",
    "target_sessions_per_gpu": "target",
}
"""PlanInputs field -> short query-parameter key."""
FIELDS_BY_KEY = {v: k for k, v in QUERY_KEYS.items()}
MAX_PARAM_CHARS = 200
"""Longest query-parameter value read; longer ones are rejected with a warning."""

_STATE = "plan_inputs"
_WARNINGS = "plan_link_warnings"


def _short(text: object, limit: int = 40) -> str:
    s = str(text)
    return s if len(s) <= limit else s[: limit - 3] + "..."


def inputs_from_query(params: Mapping[str, Any], extra_keys: frozenset[str] = frozenset()) -> tuple[PlanInputs, list[str]]:
    """Parse plan inputs from query parameters.

    Args:
        params: key -> value (strings).
        extra_keys: keys owned by other pages, not reported as unknown.

    Returns:
        (inputs, warnings): each bad or unknown key yields one warning and the
        default for that field only.
    """
    warnings: list[str] = []
    fields: dict[str, Any] = {}
    for key in params:
        value = params[key]
        if key in extra_keys:
            continue
        if key not in FIELDS_BY_KEY:
            warnings.append(f"Unknown link parameter '{_short(key)}' ignored.")
            continue
        field = FIELDS_BY_KEY[key]
        if len(str(value)) > MAX_PARAM_CHARS:
            warnings.append(f"Link parameter '{key}' is too long ({len(str(value)):,} characters); default used.")
            continue
        if value in ("", "none", "None") and PlanInputs.model_fields[field].default is None:
            continue
        try:
            PlanInputs(**{field: value})
        except ValidationError as exc:
            from planner.capacity import plan_error

            err = plan_error(exc, PlanInputs)
            warnings.append(f"Link parameter '{key}' = '{_short(value)}' is invalid ({err.allowed}); default used.")
            continue
        fields[field] = value
    try:
        return PlanInputs(**fields), warnings
    except ValidationError:  # individually valid, jointly not: cannot happen today; keep defaults
        return PlanInputs(), warnings + ["Link parameters conflict; defaults used."]


def to_query(inputs: PlanInputs) -> dict[str, str]:
    """Query parameters for these inputs (every field, None omitted)."""
    out: dict[str, str] = {}
    for field, key in QUERY_KEYS.items():
        value = getattr(inputs, field)
        if value is None:
            continue
        out[key] = ("1" if value else "0") if isinstance(value, bool) else str(value)
    return out


def current_inputs() -> PlanInputs:
    """The last valid plan inputs of this browser session (from the link on first run)."""
    if _STATE not in st.session_state:
        inputs, warnings = inputs_from_query(st.query_params.to_dict(), frozenset(_PAGE_KEYS))
        st.session_state[_STATE] = inputs
        st.session_state[_WARNINGS] = warnings
    return st.session_state[_STATE]


def link_warnings() -> list[str]:
    """Warnings from parsing the link this session was opened with."""
    current_inputs()
    return st.session_state.get(_WARNINGS, [])


def set_inputs(inputs: PlanInputs) -> None:
    """Make ``inputs`` the current plan and write them to the URL."""
    st.session_state[_STATE] = inputs
    sync_query()


def update_inputs(**changes: Any) -> PlanInputs:
    """Change some fields of the current plan (validated); returns the new inputs.

    Raises:
        PlanInputError: a change is invalid; the current plan is unchanged.
    """
    from planner.capacity import plan_error

    try:
        new = PlanInputs(**{**current_inputs().model_dump(), **changes})
    except ValidationError as exc:
        raise plan_error(exc, PlanInputs) from None
    set_inputs(new)
    for field, value in changes.items():  # keep the Plan page's widgets in step
        st.session_state.pop(f"plan_{field}", None)
    return new


_PAGE_KEYS: dict[str, Any] = {}
"""Query keys owned by pages other than the plan (registered by those pages)."""


def register_page_keys(*keys: str) -> None:
    """Declare query keys a page owns, so links carrying them raise no warning."""
    for k in keys:
        _PAGE_KEYS[k] = True


def sync_query() -> None:
    """Write the current plan to ``st.query_params``, keeping other pages' keys."""
    wanted = to_query(st.session_state[_STATE])
    params = st.query_params
    for key in list(params.keys()):
        if key in FIELDS_BY_KEY and key not in wanted:
            del params[key]
    for key, value in wanted.items():
        if params.get(key) != value:
            params[key] = value


def show_link_warnings() -> None:
    """Render link warnings once per session (as text, never HTML)."""
    for w in link_warnings():
        st.warning(w, icon="⚠️")
    st.session_state[_WARNINGS] = []


def show_error(exc: PlanInputError) -> None:
    """Render an input error (text only)."""
    st.error(str(exc))
