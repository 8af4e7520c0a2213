"""The sidebar's "Share link": the full URL of this plan on the host the app runs on.

The base is ``st.context.url``: the address in the user's browser (scheme,
host, port and ``server.baseUrlPath``; query removed), so the link is right
behind a reverse proxy too. Without it (``AppTest``) the link falls back to the
``Host`` header, then to a relative link.

Links name the page in the path (``/model?...``; the Plan page is the root,
``/?...``). The page scripts are not in a ``pages/`` folder, so every URL runs
the router, which parses the link. Older links that name the page with
``?page=<url_path>`` (:data:`kvplan_app.links.PAGE_PARAM`) still open it.
"""

from __future__ import annotations

from typing import Mapping
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

import streamlit as st

from kvplan_app.i18n import t
from kvplan_app.links import PAGE_PARAM
from kvplan_app.state import wanted_query


def share_url(root: str | None, params: Mapping[str, str], page: str = "") -> str:
    """The URL of ``page`` (a url_path; ``""`` = the Plan page at the root) under the app's ``root``, + ``?`` +
    the parameters, percent-encoded. ``root`` None gives a link relative to the app's root.

    >>> share_url("https://kvplan.example.com/team", {"model": "deepseek-v4.1-flash", "hit": "0.5"}, "model")
    'https://kvplan.example.com/team/model?model=deepseek-v4.1-flash&hit=0.5'
    >>> share_url("https://kvplan.example.com", {"hit": "0.5"})
    'https://kvplan.example.com/?hit=0.5'
    """
    items = {k: v for k, v in params.items() if k != PAGE_PARAM}
    query = urlencode(items, quote_via=quote, safe="-._~,")
    if not root:
        return f"{page}?{query}"
    parts = urlsplit(root)
    path = parts.path.rstrip("/") + "/" + quote(page, safe="-._~")
    return urlunsplit((parts.scheme, parts.netloc, path, query, ""))


def root_url(page: str = "") -> str | None:
    """The app's root URL in the browser: ``st.context.url`` without the page's path, else from the Host header."""
    url = st.context.url
    if url:
        url = url.split("?", 1)[0].split("#", 1)[0].rstrip("/")
        if page and url.endswith("/" + page):
            url = url[: -len(page) - 1]
        return url
    host = st.context.headers.get("host") if st.context.headers else None
    if not host:
        return None
    base_path = str(st.get_option("server.baseUrlPath") or "").strip("/")
    return f"http://{host}/{base_path}".rstrip("/")


def current_share_url(page: str = "") -> str:
    """The share link of this session's plan and pages' inputs, opening on ``page`` (a url_path)."""
    return share_url(root_url(page), wanted_query(), page)


def render_share_link(page: str = "") -> None:
    """The sidebar control: the link as copyable text (``st.code`` has a copy button)."""
    st.markdown("**" + t("Share link") + "**")
    st.code(current_share_url(page), language=None, wrap_lines=True)
    st.caption(t("Opens this page with the same inputs, numbers and language."))


_SLOT = "share_link_slot"
"""Session-state key: (the sidebar's place for the share link, the page's url_path, drawn by a page this run?)."""


def open_share_slot(page: str = "") -> None:
    """The router, before the page runs: keep the sidebar's place for the share link of ``page``."""
    st.session_state[_SLOT] = [st.sidebar.container(), page, False]


def share_link_slot():
    """The sidebar's place for the share link, for a page that draws the link itself (from a fragment, so that the
    link follows the fragment's reruns) with :func:`render_share_link_in`; the router then leaves it."""
    slot = st.session_state.get(_SLOT)
    if slot is None:  # the page runs without the router (a test of the page alone): a place of its own
        slot = [st.sidebar.container(), "", False]
    return slot


def render_share_link_in(slot) -> None:
    """Draw the share link in ``slot`` (from :func:`share_link_slot`): it follows the plan as it is now."""
    place, page, _ = slot
    slot[2] = True
    with place:
        render_share_link(page)


def close_share_slot() -> None:
    """The router, after the page: draw the share link where it was kept, unless the page drew it."""
    slot = st.session_state.get(_SLOT)
    if slot is not None and not slot[2]:
        render_share_link_in(slot)
