"""Inputs of every page, kept in ``st.query_params`` (shareable links) and in
``st.session_state`` (the last valid values).

One validated model parses links, widgets and files alike: the plan's inputs
are :class:`planner.plan.PlanInputs`; a page with inputs of its own parses
them with its own pydantic model through :func:`page_inputs`. A link with
unknown, invalid or tampered parameters keeps the defaults for those fields
only and shows one warning per problem, naming the parameter; warnings are
rendered as text (Markdown escaped), never as HTML.

Links are canonical: every field is written (``None`` fields are left out), so
a link reproduces the plan exactly even if a default changes later. Floats are
written in Python's shortest round-trip form (``repr``), so the numbers
survive the trip to the URL and back to the bit.

Streamlit 1.67 clears ``st.query_params`` (and the browser's query string)
when ``st.navigation`` switches pages; :func:`restore_query`, called by
``app.py`` before ``page.run()``, writes the session's parameters back.
"""

from __future__ import annotations

import math
import re
from typing import Any, Callable, Collection, Mapping, Sequence, TypeVar, get_args

import streamlit as st
from pydantic import BaseModel, ValidationError

from kvplan_app.i18n import planner_message
from planner.plan import PlanInputs, plan, plan_error, rebase
from planner.errors import PlanInputError, number_text
from planner.messages import Figure, Message, msg

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
    "measured_kv_bytes_per_token": "mkv",
    "state_bytes_per_sequence": "sbs",
    "measured_usable_kv_gib": "musable",
    "attention_parallelism": "attn",
    "accelerator": "acc",
    "pipeline_parallel_size": "pp",
    "measured_kv_model_id": "mkv_model",
    "measured_kv_format": "mkv_fmt",
    "measured_usable_kv_gpu_id": "mu_gpu",
    "measured_usable_kv_hbm_gib": "mu_hbm",
    "measured_usable_kv_utilization": "mu_util",
    "measured_usable_kv_weights": "mu_weights",
}
"""PlanInputs field -> short query-parameter key. A field missing here is written under its own name."""

PAGE_QUERY_KEYS: dict[str, tuple[str, ...]] = {
    "model": ("m_model", "m_fmt", "m_tp", "m_pp", "m_ctx"),
    "frontier": ("fgpus", "fctx", "fhit", "fheat", "fscale"),
    "traces": ("t_sample", "t_ttl"),
    "app": ("lang",),  # the language of every page (kvplan_app.i18n)
}
"""Page -> the query keys it owns beyond the plan's (one line per page).

Declared here, not only when the page runs, so that a link opened on any page
knows every page's keys: they are kept in the link and restored after a page
switch, and only keys that no page owns are reported as unknown.
"""

PAGE_PARAM = "page"
"""Query key of older share links naming their page (``/?page=model``); the router still opens that page.

Share links now name the page in the path (``/model?...``, :mod:`kvplan_app.share`).
"""

MAX_PARAM_CHARS = 200
"""Longest query-parameter value read; longer ones are rejected with a warning."""
MAX_NAMED_UNKNOWN = 5
"""Unknown parameters named in the warning; the rest are counted."""

_STATE = "plan_inputs"
_NOTICES = "plan_rebase_notices"
_WARNINGS = "plan_link_warnings"
_PAGE_PARAMS = "url_page_params"
_PAGE_STATE = "url_page_inputs_"
_LAST_PAGE = "url_last_page"
_WIDGET_PREFIX = "plan_"
"""The Plan page's widget keys are ``plan_<field>``; they are re-seeded when the plan changes elsewhere."""

M = TypeVar("M", bound=BaseModel)


# ---------------------------------------------------------------------------
# Pure codec: values <-> query strings (no Streamlit state; tested directly)
# ---------------------------------------------------------------------------


def query_keys() -> dict[str, str]:
    """Every PlanInputs field -> its query key (:data:`QUERY_KEYS`, else the field's name)."""
    return {field: QUERY_KEYS.get(field, field) for field in PlanInputs.model_fields}


def fields_by_key(keys: Mapping[str, str] | None = None) -> dict[str, str]:
    """Query key -> field (the inverse of :func:`query_keys` or of ``keys``)."""
    return {key: field for field, key in (keys or query_keys()).items()}


FIELDS_BY_KEY = fields_by_key()
"""Query key -> PlanInputs field."""


def encode_value(value: object) -> str:
    """A field value as a query string: booleans ``1``/``0``, floats in shortest round-trip form.

    >>> encode_value(True), encode_value(100.0), encode_value(0.1), encode_value(1_000_000)
    ('1', '100', '0.1', '1000000')
    """
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and abs(value) < 2**53:
            return str(int(value))
        return repr(value)
    if value is None:
        return "none"
    return str(value)


def to_params(obj: BaseModel, keys: Mapping[str, str]) -> dict[str, str]:
    """Query parameters for every field of ``obj`` (``None`` left out when it is the default)."""
    out: dict[str, str] = {}
    fields = type(obj).model_fields
    for field, key in keys.items():
        if field not in fields:
            continue
        value = getattr(obj, field)
        if value is None and fields[field].default is None:
            continue
        out[key] = encode_value(value)
    return out


def to_query(inputs: PlanInputs) -> dict[str, str]:
    """Query parameters for these plan inputs (every field; ``None`` fields left out)."""
    return to_params(inputs, query_keys())


def shown(text: object, limit: int = 40) -> str:
    """User-supplied text for a message: control characters escaped, at most ``limit`` characters."""
    s = "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text)[: limit * 4])
    return s if len(s) <= limit else s[: limit - 3] + "..."


_MD_SPECIAL = re.compile(r"([!-/:-@\[-`{-~])")
_AUTOLINKABLE = re.compile(r"\S*(?:://|www\.|@\w)\S*", re.IGNORECASE)
"""A whitespace-free run that GitHub-flavoured Markdown may turn into a link (``https://...``, ``www.x``,
``a@b.c``). Its autolink literals are found in the text *after* backslash escapes are resolved
(mdast-util-gfm-autolink-literal), so escaping cannot stop them; a code span can (it is not text)."""


def code_span(text: str) -> str:
    """``text`` as one Markdown inline code span, shown exactly as typed (a fence longer than any backtick run).

    >>> code_span("a`b")
    '`` a`b ``'
    """
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}"


def escape_markdown(text: str, *, keep: str = "") -> str:
    r"""Markdown that shows ``text`` as typed: no markup, no HTML, no link.

    Every ASCII punctuation character is backslash-escaped (CommonMark), which keeps links, images,
    ``:color[...]`` directives, ``$`` maths and HTML tags as plain text. A run that would still auto-link
    (a bare URL, ``www.``, an e-mail address) becomes an inline code span instead. ``keep`` names characters
    left as they are: ``"_"`` keeps field names such as ``context_tokens`` readable in the message text (an
    underscore can only make emphasis, never a tag, link or image).

    >>> escape_markdown("<script>alert(1)</script>")
    '\\<script\\>alert\\(1\\)\\<\\/script\\>'
    >>> escape_markdown("context_tokens: '<b>'", keep="_")
    "context_tokens\\: \\'\\<b\\>\\'"
    >>> escape_markdown("hit=https://evil.example/reset is bad")
    '` hit=https://evil.example/reset ` is bad'
    """
    out, last = [], 0
    for m in _AUTOLINKABLE.finditer(text):
        out.append(_escape_punctuation(text[last:m.start()], keep))
        out.append(code_span(m.group(0)))
        last = m.end()
    out.append(_escape_punctuation(text[last:], keep))
    return "".join(out)


def _escape_punctuation(text: str, keep: str) -> str:
    return _MD_SPECIAL.sub(lambda m: m.group(1) if m.group(1) in keep else "\\" + m.group(1), text)


def _is_none(field_info, value: object) -> bool:
    return str(value).strip().lower() in ("", "none", "null") and _allows_none(field_info)


def _allows_none(field_info) -> bool:
    return field_info.default is None or type(None) in get_args(field_info.annotation)


def model_from_params(
    model: type[M],
    keys: Mapping[str, str],
    params: Mapping[str, Any],
    *,
    ignore_keys: frozenset[str] | set[str] = frozenset(),
    check: Callable[[M], None] | None = None,
    aliases: Mapping[str, Sequence[str]] | None = None,
) -> tuple[M, list[str]]:
    """Parse ``model`` from query parameters: bad fields fall back to their defaults, one warning each.

    Args:
        model: the pydantic model (every field has a default).
        keys: field -> query key.
        params: query key -> value (a string, or a list of strings: the last one is read).
        ignore_keys: keys owned by someone else; neither read nor reported.
        check: extra validation of the parsed model (e.g. catalog ids); raises
            :class:`PlanInputError` naming a field (or an alias of one).
        aliases: a name ``check`` uses in its error -> the fields to drop for it,
            the first one the link gave (``model`` -> ``model_id``).

    Returns:
        (value, warnings).
    """
    by_key = fields_by_key(keys)
    key_of = dict(keys)
    warnings: list[str] = []
    unknown: list[str] = []
    fields: dict[str, Any] = {}
    for key in params:
        value = params[key]
        if isinstance(value, (list, tuple)):
            value = value[-1] if value else ""
        if key in ignore_keys:
            continue
        if key not in by_key:
            unknown.append(key)
            continue
        field = by_key[key]
        if len(str(value)) > MAX_PARAM_CHARS:
            warnings.append(msg("Link parameter '{key}' is too long ({chars:,} characters); default {default} used.",
                                key=key, chars=len(str(value)), default=_default_text(model, field)))
            continue
        if _is_none(model.model_fields[field], value):
            fields[field] = None
            continue
        fields[field] = str(value)

    if unknown:
        names = ", ".join(f"'{shown(k)}'" for k in unknown[:MAX_NAMED_UNKNOWN])
        more = (msg(" and {n:,} more", n=len(unknown) - MAX_NAMED_UNKNOWN) if len(unknown) > MAX_NAMED_UNKNOWN
                else "")
        warnings.append(msg("Unknown link parameters {names}{more} ignored." if len(unknown) > 1 else
                            "Unknown link parameter {names}{more} ignored.", names=names, more=more))

    # Validate together (model validators may relate fields); drop what fails, field by field.
    for _ in range(len(fields) + 1):
        try:
            value = model(**fields)
        except ValidationError as exc:
            bad = [e for e in exc.errors() if e.get("loc") and e["loc"][0] in fields]
            if not bad:
                return model(), warnings + [_conflict(fields, key_of)]
            for e in bad:
                field = str(e["loc"][0])
                err = plan_error(ValidationError.from_exception_data(exc.title, [e]), model)
                warnings.append(_invalid(key_of[field], fields.pop(field), err.allowed, model, field))
            continue
        if check is None:
            return value, warnings
        try:
            check(value)
        except PlanInputError as err:
            field = next((f for f in (aliases or {}).get(err.field, (err.field,)) if f in fields), None)
            if field is None:
                return model(), warnings + [_conflict(fields, key_of, err)]
            warnings.append(_invalid(key_of[field], fields.pop(field), err.allowed, model, field))
            continue
        return value, warnings
    return model(), warnings + [_conflict(fields, key_of)]  # pragma: no cover - the loop always ends above


def _default_text(model: type[BaseModel], field: str) -> str:
    default = model.model_fields[field].default
    if default is None:
        return msg("(none)")
    if isinstance(default, (int, float)) and not isinstance(default, bool):
        return Figure(number_text(default))  # digits in the page's number format (1.000.000, 0,5 in Spanish)
    return shown(encode_value(default))


def _whole_or_shown(text: str, limit: int = 160) -> str:
    """``text`` in at most about ``limit`` characters; a planner message stays a message (so the page can translate
    it), its longest plain value cut (a list of ids), else it is cut as :func:`shown` cuts user text."""
    if isinstance(text, PlanInputError):
        text = text.allowed if len(str(text)) > limit else text
    if not isinstance(text, Message) or not str(text).isprintable():
        return shown(text, limit)
    if len(text) <= limit:
        return text
    values = dict(text.values)
    longest = max((k for k, v in values.items() if type(v) is str), key=lambda k: len(values[k]), default=None)
    if longest is None:
        return shown(text, limit)
    values[longest] = shown(values[longest], max(20, len(values[longest]) - (len(text) - limit)))
    return Message(text.template, **values)


def _invalid(key: str, value: object, allowed: str, model: type[BaseModel], field: str) -> str:
    return msg("Link parameter '{key}' = '{value}' is invalid (expected {allowed}); default {default} used.",
               key=key, value=shown(value), allowed=_whole_or_shown(allowed), default=_default_text(model, field))


def _conflict(fields: Mapping[str, Any], key_of: Mapping[str, str], err: PlanInputError | None = None) -> str:
    keys = ", ".join(f"'{key_of[f]}'" for f in fields) or msg("(none)")
    if err is None:
        return msg("Link parameters {keys} do not make a valid plan together; defaults used.", keys=keys)
    return msg("Link parameters {keys} do not make a valid plan together: {why}; defaults used.", keys=keys,
               why=_whole_or_shown(err))


_PLAN_ALIASES: dict[str, tuple[str, ...]] = {
    "model": ("model_id",),
    "gpu": ("gpu_id",),
    "weights": ("weights_gib", "model_id"),
    "weight_format": ("weight_format", "model_id"),
    "kv_format": ("kv_format", "model_id"),
    "hbm_gib": ("hbm_gib", "gpu_id"),
}
"""Names :func:`planner.plan.plan` uses in its errors -> the PlanInputs fields a link may drop for them.

``hbm_gib`` is raised for ``gpu=custom`` without ``hbm``: when the link gave no
``hbm``, the GPU is what falls back.
"""


def _check_plan(inputs: PlanInputs) -> None:
    """Catalog ids and combinations only :func:`planner.plan.plan` knows (unknown model, custom GPU without HBM).

    An arithmetic failure on extreme values is reported as a conflict of the link's fields, never raised.
    """
    try:
        plan(rebase(inputs)[0])
    except (ArithmeticError, ValueError) as exc:
        if isinstance(exc, PlanInputError):
            raise
        raise PlanInputError("input", type(exc).__name__, "values the planner can evaluate") from None


def inputs_from_query(params: Mapping[str, Any],
                      extra_keys: frozenset[str] | set[str] = frozenset()) -> tuple[PlanInputs, list[str]]:
    """Parse plan inputs from query parameters.

    Args:
        params: key -> value (strings).
        extra_keys: keys owned by other pages, not reported as unknown.

    Returns:
        (inputs, warnings): each bad key yields one warning and the default for
        that field only; unknown keys yield one warning naming them; a measured
        figure bound to another model, format or GPU is dropped with one
        warning (:func:`planner.plan.rebase`). The inputs always make a plan
        (:func:`planner.plan.plan` accepts them).

    A link without ``attn`` gets the default, tensor-parallel attention.
    """
    inputs, warnings = model_from_params(PlanInputs, query_keys(), params, ignore_keys=frozenset(extra_keys),
                                         check=_check_plan, aliases=_PLAN_ALIASES)
    inputs, notices = rebase(inputs)
    return inputs, warnings + notices


# ---------------------------------------------------------------------------
# Session state: the last valid inputs, written to the URL
# ---------------------------------------------------------------------------

_RUNTIME_PAGE_KEYS: dict[str, bool] = {}
"""Query keys registered at run time by :func:`register_page_keys`."""


def page_keys() -> set[str]:
    """Query keys owned by pages other than the plan (:data:`PAGE_QUERY_KEYS` and registered ones)."""
    keys = {k for owned in PAGE_QUERY_KEYS.values() for k in owned}
    return keys | set(_RUNTIME_PAGE_KEYS)


def register_page_keys(*keys: str) -> None:
    """Declare query keys a page owns, so links carrying them raise no warning.

    Prefer an entry in :data:`PAGE_QUERY_KEYS`: it is known before the page first runs.
    """
    for k in keys:
        _RUNTIME_PAGE_KEYS[k] = True


def _read_link() -> None:
    """Parse the link this session was opened with (first run only)."""
    raw = st.query_params.to_dict()
    inputs, warnings = inputs_from_query(raw, frozenset(page_keys() | {PAGE_PARAM}))
    st.session_state[_STATE] = inputs
    st.session_state[_WARNINGS] = warnings
    st.session_state[_PAGE_PARAMS] = {k: str(v) for k, v in raw.items()
                                      if k in page_keys() and len(str(v)) <= MAX_PARAM_CHARS}
    _write_query(drop_unowned=True)


def current_inputs() -> PlanInputs:
    """The last valid plan inputs of this browser session (from the link on first run)."""
    if _STATE not in st.session_state:
        _read_link()
    return st.session_state[_STATE]


def link_warnings() -> list[str]:
    """Warnings from parsing the link this session was opened with (plain text)."""
    current_inputs()
    return st.session_state.get(_WARNINGS, [])


def wanted_query() -> dict[str, str]:
    """Every parameter this session's link should carry: the plan's, then the pages' own."""
    current_inputs()
    return {**to_query(st.session_state[_STATE]), **st.session_state.get(_PAGE_PARAMS, {})}


def _write_query(*, drop_unowned: bool = False) -> None:
    """Make ``st.query_params`` the wanted parameters, in canonical order.

    Keys nobody owns are dropped only when the link is first read (after their
    warning); later, a page's own unregistered keys are left alone.
    """
    wanted = wanted_query()
    params = st.query_params
    current = params.to_dict()
    owned = set(FIELDS_BY_KEY) | page_keys() | {PAGE_PARAM}
    final = dict(wanted)
    if not drop_unowned:
        final.update({k: v for k, v in current.items() if k not in owned and k not in wanted})
    if list(current.items()) != list(final.items()) or any(len(params.get_all(k)) > 1 for k in current):
        params.from_dict(final)


def sync_query() -> None:
    """Write the current plan (and the pages' own inputs) to ``st.query_params``."""
    _write_query()


def set_inputs(inputs: PlanInputs) -> None:
    """Make ``inputs`` the current plan and write them to the URL."""
    current_inputs()
    st.session_state[_STATE] = inputs
    sync_query()


_ACCELERATOR_WIDGETS = ("gpu_id", "acc_id", "acc_name", "acc_mem", "acc_mem_unit", "acc_bw", "acc_tf", "acc_hl",
                        "acc_price")
"""Plan-page widgets (after the prefix) that show a user-defined accelerator."""


def _reseed_widgets(fields) -> None:
    fields = list(fields)
    if "accelerator" in fields:
        fields += _ACCELERATOR_WIDGETS
    for field in fields:  # keep the Plan page's widgets in step
        st.session_state.pop(f"{_WIDGET_PREFIX}{field}", None)
        st.session_state.pop(f"{_WIDGET_PREFIX}{field}_typed", None)  # a typed box beside a slider


def update_inputs(**changes: Any) -> PlanInputs:
    """Change some fields of the current plan through :func:`planner.plan.rebase`; returns the new inputs.

    A measured figure that no longer applies is dropped; its notice is kept
    for :func:`show_notices` (``st.info``).

    Raises:
        PlanInputError: a change is invalid; the current plan is unchanged.
    """
    new, notices = rebase(current_inputs(), **changes)
    set_inputs(new)
    add_notices(notices)
    _reseed_widgets(changes)
    return new


def add_notices(notices: Sequence[str]) -> None:
    """Keep notices (measured figures dropped by :func:`planner.plan.rebase`) for :func:`show_notices`."""
    if notices:
        st.session_state[_NOTICES] = [*st.session_state.get(_NOTICES, []), *notices]


def show_notices() -> None:
    """Render pending rebase notices once, as ``st.info``, in the session's language (text, Markdown escaped)."""
    for note in st.session_state.pop(_NOTICES, []):
        st.info(escape_markdown(planner_message(note), keep="_"))


def load_inputs(inputs: PlanInputs) -> None:
    """Replace the whole plan (a loaded plan file): URL and every Plan-page widget follow.

    Call from a widget callback (before the page's widgets are created).
    """
    set_inputs(inputs)
    _reseed_widgets(PlanInputs.model_fields)


def page_inputs(page: str, model: type[M], keys: Mapping[str, str]) -> M:
    """A page's own inputs, parsed from the link by ``model`` (first call in a session), then the last set.

    Args:
        page: the page's name, a key of :data:`PAGE_QUERY_KEYS` (which lists ``keys``' values).
        model: pydantic model of the page's inputs (every field with a default).
        keys: field -> query key.

    Warnings about the page's own parameters are added to :func:`link_warnings`
    (rendered by :func:`show_link_warnings`, or by ``app.py`` after the page ran).
    """
    keys = dict(keys)
    register_page_keys(*keys.values())
    state = _PAGE_STATE + page
    if state not in st.session_state:
        link = {**st.session_state.get(_PAGE_PARAMS, {}), **st.query_params.to_dict()} \
            if _PAGE_PARAMS in st.session_state else st.query_params.to_dict()
        mine = {k: v for k, v in link.items() if k in fields_by_key(keys)}
        value, warnings = model_from_params(model, keys, mine)
        st.session_state[state] = (value, keys)
        st.session_state[_WARNINGS] = [*st.session_state.get(_WARNINGS, []), *warnings]
        _store_page_params(value, keys)
    return st.session_state[state][0]


def set_page_inputs(page: str, value: BaseModel, keys: Mapping[str, str]) -> None:
    """Make ``value`` the page's inputs and write them to the URL."""
    state = _PAGE_STATE + page
    keys = dict(keys)
    register_page_keys(*keys.values())
    st.session_state[state] = (value, keys)
    _store_page_params(value, keys)


def set_link_param(key: str, value: str | None) -> None:
    """Keep a declared page key (:data:`PAGE_QUERY_KEYS`, e.g. ``lang``) in this session's link; None drops it."""
    current_inputs()
    params = dict(st.session_state.get(_PAGE_PARAMS, {}))
    if params.get(key) == value or (value is None and key not in params):
        return
    if value is None:
        params.pop(key, None)
    else:
        params[key] = value
    st.session_state[_PAGE_PARAMS] = params
    sync_query()


def _store_page_params(value: BaseModel, keys: Mapping[str, str]) -> None:
    current_inputs()
    params = {k: v for k, v in st.session_state.get(_PAGE_PARAMS, {}).items() if k not in fields_by_key(keys)}
    params.update(to_params(value, keys))
    st.session_state[_PAGE_PARAMS] = params
    sync_query()


def restore_query(page_id: str, page_ids: Collection[str] = ()) -> str | None:
    """Keep the link in step with the session; call in ``app.py`` before ``page.run()``.

    First run: parse the link. After a page switch (which in Streamlit 1.67
    clears the query string): write the session's parameters back; keys that
    ``st.switch_page(..., query_params=...)`` set win over the stored ones.

    Args:
        page_id: the ``url_path`` of the page about to run.
        page_ids: every page's ``url_path``.

    Returns:
        The ``url_path`` the link's ``page`` parameter names, on the first run
        when it is another page (``app.py`` switches to it); else None.
    """
    first = _STATE not in st.session_state
    target = st.query_params.get(PAGE_PARAM) if first else None
    current_inputs()
    if target is not None and target not in page_ids:
        st.session_state[_WARNINGS] = [*st.session_state.get(_WARNINGS, []),
                                       msg("Link parameter '{key}' = '{value}' names no page (pages: {pages}); "
                                           "this page is shown.", key=PAGE_PARAM, value=shown(target),
                                           pages=", ".join(p or "(default)" for p in page_ids))]
    switched = not first and st.session_state.get(_LAST_PAGE) != page_id
    st.session_state[_LAST_PAGE] = page_id
    if switched:
        stored = st.session_state.get(_PAGE_PARAMS, {})
        st.session_state[_PAGE_PARAMS] = {**stored, **_live_page_params()}
    sync_query()
    return target if target in page_ids and target != page_id else None


def remember_query() -> None:
    """Remember what the page wrote into ``st.query_params`` under its own keys; call after ``page.run()``."""
    current_inputs()
    st.session_state[_PAGE_PARAMS] = _live_page_params()


def _live_page_params() -> dict[str, str]:
    return {k: str(v) for k, v in st.query_params.to_dict().items()
            if k in page_keys() and len(str(v)) <= MAX_PARAM_CHARS}


def show_link_warnings() -> None:
    """Render pending link warnings once, in the session's language (as text: Markdown escaped, never HTML)."""
    for w in link_warnings():
        st.warning(escape_markdown(planner_message(w)), icon="⚠️")
    st.session_state[_WARNINGS] = []
    show_notices()


def pending_link_warnings() -> bool:
    """Whether link warnings are waiting to be shown."""
    return bool(st.session_state.get(_WARNINGS))


def show_error(exc: PlanInputError) -> None:
    """Render an input error (text only) in the session's language."""
    st.error(escape_markdown(planner_message(exc)))
