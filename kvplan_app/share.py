"""The sidebar's "Share link": the full URL of this plan on the host the app runs on.

The base is ``st.context.url``: the address in the user's browser (scheme,
host, port and ``server.baseUrlPath``; query removed), so the link is right
behind a reverse proxy too. Without it (``AppTest``) the link falls back to the
``Host`` header, then to a relative link.

Links point at the app's root and name the page with ``page=<url_path>``
(:data:`kvplan_app.state.PAGE_PARAM`): in Streamlit 1.67 a deep link to ``/model`` is
served from the ``pages/`` folder without running ``app.py``, so it would skip
the router and the link parsing; the root always runs ``app.py``.
"""

from __future__ import annotations

from typing import Mapping
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

import streamlit as st

from kvplan_app.state import PAGE_PARAM, wanted_query


def share_url(root: str | None, params: Mapping[str, str], page: str = "") -> str:
    """The app's ``root`` URL + ``?`` + the parameters, percent-encoded; ``page`` (a url_path) last.

    ``root`` None gives a relative link.

    >>> share_url("https://kvplan.example.com/team", {"model": "deepseek-v4.1-flash", "hit": "0.5"}, "model")
    'https://kvplan.example.com/team/?model=deepseek-v4.1-flash&hit=0.5&page=model'
    """
    items = dict(params)
    if page:
        items[PAGE_PARAM] = page
    query = urlencode(items, quote_via=quote, safe="-._~,")
    if not root:
        return f"?{query}"
    parts = urlsplit(root)
    path = parts.path.rstrip("/") + "/"
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
    st.markdown("**Share link**")
    st.code(current_share_url(page), language=None, wrap_lines=True)
    st.caption("Opens this page with the same inputs and numbers.")
