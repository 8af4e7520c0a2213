"""The sidebar's "Share link": the full URL of this plan on the host the app runs on.

The base is ``st.context.url``: the address in the user's browser (scheme,
host, port, ``server.baseUrlPath`` and the page's path, query removed), so the
link is right behind a reverse proxy too. Without it (``AppTest``, very old
clients) the link falls back to the ``Host`` header, then to a relative link.
"""

from __future__ import annotations

from typing import Mapping
from urllib.parse import quote, urlencode

import streamlit as st

from ui.state import wanted_query


def share_url(base: str | None, params: Mapping[str, str]) -> str:
    """``base`` + ``?`` + the parameters, percent-encoded (``base`` None: a relative link).

    >>> share_url("https://kvplan.example.com/team/plan", {"model": "deepseek-v4.1-flash", "hit": "0.5"})
    'https://kvplan.example.com/team/plan?model=deepseek-v4.1-flash&hit=0.5'
    """
    query = urlencode(dict(params), quote_via=quote, safe="-._~,")
    base = (base or "").split("?", 1)[0].split("#", 1)[0]
    return f"{base}?{query}" if query else base


def app_base_url() -> str | None:
    """The page's URL in the browser without its query (``st.context.url``), else from the Host header."""
    url = st.context.url
    if url:
        return url
    host = st.context.headers.get("host") if st.context.headers else None
    if not host:
        return None
    base_path = str(st.get_option("server.baseUrlPath") or "").strip("/")
    return f"http://{host}/{base_path}".rstrip("/")


def current_share_url() -> str:
    """The share link of this session's plan and pages' inputs."""
    return share_url(app_base_url(), wanted_query())


def render_share_link() -> None:
    """The sidebar control: the link as copyable text (``st.code`` has a copy button)."""
    st.markdown("**Share link**")
    st.code(current_share_url(), language=None, wrap_lines=True)
    st.caption("Opens this plan with the same numbers, on this page.")
