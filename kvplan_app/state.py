"""Session bookkeeping: the last valid inputs of every page, kept in ``st.session_state`` and written to
``st.query_params`` (the shareable link).

The link is read once per session, on its first run, by :func:`kvplan_app.links.read_link` (the one codec:
the plan, each page's own parameters, the language), and written back by :func:`kvplan_app.links.encode`.
Pages never read ``st.query_params`` themselves: they ask :func:`current_inputs` and :func:`page_link`, and
write with :func:`set_inputs` / :func:`update_inputs` / :func:`set_page_link`. Warnings wait here until
:mod:`kvplan_app.notices` renders them.

Streamlit 1.67 clears ``st.query_params`` (and the browser's query string) when ``st.navigation`` switches
pages; :func:`restore_query`, called by the router before ``page.run()``, writes the session's parameters back.
"""

from __future__ import annotations

from typing import Any, Collection, Sequence

import streamlit as st
from pydantic import BaseModel

from kvplan_app.links import (
    FIELDS_BY_KEY,
    LINKS,
    MAX_PARAM_CHARS,
    PAGE_PARAM,
    decode,
    encode,
    page_keys,
    plan_widget_keys,
    read_link,
    to_query,
)
from kvplan_app.markdown import shown
from planner.messages import msg
from planner.plan import PlanInputs, rebase

_STATE = "plan_inputs"
_NOTICES = "plan_rebase_notices"
_WARNINGS = "plan_link_warnings"
_PAGE_PARAMS = "url_page_params"
_PAGE_STATE = "url_page_inputs_"
_LAST_PAGE = "url_last_page"
_PAGE_WARNINGS = "url_page_warnings_"


def _read_link() -> None:
    """Read the link this session was opened with (first run only): every page's parameters, one warning per
    value refused, repeated or unknown."""
    params = st.query_params
    read = read_link({k: params.get_all(k) for k in params})
    st.session_state[_STATE] = read.plan
    st.session_state[_WARNINGS] = read.warnings
    for page, value in read.pages.items():
        st.session_state[_PAGE_STATE + page] = value
        st.session_state[_PAGE_WARNINGS + page] = read.page_warnings.get(page, [])
    st.session_state[_PAGE_PARAMS] = read.given
    _write_query(drop_unowned=True)


def current_inputs() -> PlanInputs:
    """The last valid plan inputs of this browser session (from the link on first run)."""
    if _STATE not in st.session_state:
        _read_link()
    return st.session_state[_STATE]


def link_warnings() -> list[str]:
    """Warnings waiting to be shown (plain text messages)."""
    current_inputs()
    return st.session_state.get(_WARNINGS, [])


def pop_link_warnings() -> list[str]:
    """The waiting warnings, once (they are then forgotten)."""
    out = list(link_warnings())
    st.session_state[_WARNINGS] = []
    return out


def add_link_warnings(warnings: Sequence[str]) -> None:
    """Keep warnings about link values for :mod:`kvplan_app.notices`."""
    if warnings:
        st.session_state[_WARNINGS] = [*link_warnings(), *warnings]


def pending_link_warnings() -> bool:
    """Whether link warnings are waiting to be shown."""
    return bool(st.session_state.get(_WARNINGS))


def wanted_query() -> dict[str, str]:
    """Every parameter this session's link should carry: the plan's, then the pages' own."""
    current_inputs()
    return {**to_query(st.session_state[_STATE]), **st.session_state.get(_PAGE_PARAMS, {})}


def _write_query(*, drop_unowned: bool = False) -> None:
    """Make ``st.query_params`` the wanted parameters, in canonical order.

    Keys nobody owns are dropped only when the link is first read (after their warning).
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


def _reseed_plan_widgets(fields: Sequence[str]) -> None:
    for key in plan_widget_keys(list(fields)):  # the Plan page re-seeds them from the plan
        st.session_state.pop(key, None)


def update_inputs(**changes: Any) -> PlanInputs:
    """Change some fields of the current plan through :func:`planner.plan.rebase`; returns the new inputs.

    A measured figure that no longer applies is dropped; its notice waits for :mod:`kvplan_app.notices`.

    Raises:
        PlanInputError: a change is invalid; the current plan is unchanged.
    """
    new, notices = rebase(current_inputs(), **changes)
    set_inputs(new)
    add_notices(notices)
    _reseed_plan_widgets(list(changes))
    return new


def add_notices(notices: Sequence[str]) -> None:
    """Keep notices (measured figures dropped by :func:`planner.plan.rebase`) for :mod:`kvplan_app.notices`."""
    if notices:
        st.session_state[_NOTICES] = [*st.session_state.get(_NOTICES, []), *notices]


def pop_notices() -> list[str]:
    """The waiting rebase notices, once."""
    return st.session_state.pop(_NOTICES, [])


def load_inputs(inputs: PlanInputs) -> None:
    """Replace the whole plan (a loaded plan file): URL and every Plan-page widget follow.

    Call from a widget callback (before the page's widgets are created).
    """
    set_inputs(inputs)
    _reseed_plan_widgets(list(PlanInputs.model_fields))


def page_link(page: str) -> BaseModel:
    """A page's own link value (``kvplan_app.links.LINKS[page]``): as the link gave it, then as last set.

    The first call puts the warnings about the page's own parameters with the link's (shown on this page).
    """
    current_inputs()
    add_link_warnings(st.session_state.pop(_PAGE_WARNINGS + page, []))
    state = _PAGE_STATE + page
    if state not in st.session_state:  # a page value written by st.switch_page(query_params=...)
        spec = LINKS[page]
        value, warnings = decode(spec, {k: v for k, v in st.session_state.get(_PAGE_PARAMS, {}).items()
                                        if k in spec.keys.values()})
        st.session_state[state] = value
        add_link_warnings(warnings)
    return st.session_state[state]


def set_page_link(page: str, value: BaseModel) -> None:
    """Make ``value`` the page's link value and write it to the URL (``None`` fields left out)."""
    current_inputs()
    st.session_state[_PAGE_STATE + page] = value
    spec = LINKS[page]
    params = {k: v for k, v in st.session_state.get(_PAGE_PARAMS, {}).items() if k not in spec.keys.values()}
    params.update(encode(page, value))
    if params != st.session_state.get(_PAGE_PARAMS):
        st.session_state[_PAGE_PARAMS] = params
    sync_query()


def set_link_param(key: str, value: str | None) -> None:
    """Keep a declared page key (``kvplan_app.links.PAGE_QUERY_KEYS``, e.g. ``lang``) in this session's link;
    None drops it."""
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


def restore_query(page_id: str, page_ids: Collection[str] = ()) -> str | None:
    """Keep the link in step with the session; call in the router before ``page.run()``.

    First run: read the link. After a page switch (which in Streamlit 1.67 clears the query string): write the
    session's parameters back; page keys that ``st.switch_page(..., query_params=...)`` set are read by the
    codec (a refused one warns) and win over the stored ones.

    Args:
        page_id: the ``url_path`` of the page about to run.
        page_ids: every page's ``url_path``.

    Returns:
        The ``url_path`` the link's ``page`` parameter names, on the first run when it is another page (the
        router switches to it); else None.
    """
    first = _STATE not in st.session_state
    target = st.query_params.get(PAGE_PARAM) if first else None
    current_inputs()
    if target is not None and target not in page_ids:
        add_link_warnings([msg("Link parameter '{key}' = '{value}' names no page (pages: {pages}); "
                               "this page is shown.", key=PAGE_PARAM, value=shown(target),
                               pages=", ".join(p or "(default)" for p in page_ids))])
    switched = not first and st.session_state.get(_LAST_PAGE) != page_id
    st.session_state[_LAST_PAGE] = page_id
    if switched:
        _take_switch_params()
    sync_query()
    return target if target in page_ids and target != page_id else None


def _take_switch_params() -> None:
    """Page keys in the query after a switch that differ from the session's: read by the codec, page by page."""
    stored = st.session_state.get(_PAGE_PARAMS, {})
    live = {k: v for k, v in st.query_params.to_dict().items() if k in page_keys() and stored.get(k) != v}
    for page, spec in LINKS.items():
        mine = {k: v for k, v in live.items() if k in spec.keys.values()}
        if page == "plan" or not mine:
            continue
        value, warnings = decode(spec, mine)
        add_link_warnings(warnings)
        old = st.session_state.get(_PAGE_STATE + page, spec.model())
        given = {f: getattr(value, f) for f, k in spec.keys.items() if k in mine}
        set_page_link(page, old.model_copy(update=given))


def remember_query() -> None:
    """Kept for the router's call after ``page.run()``: pages write through :func:`set_page_link`, so the
    session already holds what the link carries; nothing read from ``st.query_params`` here."""
    current_inputs()


__all__ = ["MAX_PARAM_CHARS", "add_link_warnings", "add_notices", "current_inputs", "link_warnings", "load_inputs",
           "page_link", "pending_link_warnings", "pop_link_warnings", "pop_notices", "remember_query",
           "restore_query", "set_inputs", "set_link_param", "set_page_link", "sync_query", "update_inputs",
           "wanted_query"]
