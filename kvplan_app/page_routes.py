"""A page at a sub-path (``/model``) is served Streamlit's own ``index.html`` told where the server is.

Streamlit's front end (1.67) finds its server by probing candidate base URLs, the page's path first and then its
parent: opening ``/model`` asks ``/model/_stcore/health`` and ``/model/_stcore/host-config``, which answer 404,
before ``/_stcore/...`` answers 200. Answering 200 at ``/model/_stcore/...`` instead would be worse: the front end
would take ``/model`` for the server's base, open its websocket under it and read the page's name relative to it
(the Plan page would open). The front end takes the base from ``window.__streamlit.BACKEND_BASE_URL`` when the
page sets it, and then probes that base only. So each page path gets a route, registered once on the running
server, that answers Streamlit's ``index.html`` with one inline script setting that base to the page's parent
(``new URL(".", location.href)``: ``/`` here, ``/kvplan/`` behind a proxy that serves the app under ``/kvplan``).
Everything else (assets, websocket, ``/_stcore``, the root page) is Streamlit's, untouched.

Without a running server (AppTest, bare mode) nothing is registered.
"""

from __future__ import annotations

import gc
import logging
import threading
from importlib.resources import files

LOG = logging.getLogger("kvplan_app")
BASE_SCRIPT = '<script>window.__streamlit={BACKEND_BASE_URL:new URL(".",location.href).href}</script>'
"""The one line added to ``index.html``: the server's base is the page's parent."""

_lock = threading.Lock()
_installed = False
_no_server = False
"""Set when the first look found no server in this process (AppTest, bare mode): the objects are not scanned again."""


def page_html() -> str:
    """Streamlit's ``index.html`` with :data:`BASE_SCRIPT` first in its ``<head>``."""
    html = (files("streamlit") / "static" / "index.html").read_text(encoding="utf-8")  # the package's, never a link's
    head = html.index("<head>") + len("<head>")
    return html[:head] + BASE_SCRIPT + html[head:]


def _running_app():
    """The Starlette application this process serves, or None (no server: AppTest, bare mode)."""
    try:
        from starlette.applications import Starlette
    except ImportError:  # pragma: no cover - Streamlit's server needs it
        return None
    # type(), not isinstance(): a dead weakref.proxy among the objects raises ReferenceError on __class__
    apps = [o for o in gc.get_objects() if issubclass(type(o), Starlette)]
    return apps[0] if len(apps) == 1 else None


def install(page_paths: list[str]) -> bool:
    """Register a GET route for each of ``page_paths`` (url paths, no slashes) on the running server, once per
    process; True when they are (now or before)."""
    global _installed, _no_server
    if _installed or _no_server:
        return _installed
    with _lock:
        if _installed or _no_server:
            return _installed
        app = _running_app()
        if app is None:  # no server in this process (AppTest, bare mode): not looked for again
            _no_server = True
            return False
        from starlette.responses import HTMLResponse
        from starlette.routing import Route
        from streamlit import config

        body = page_html()

        async def _page(request):
            return HTMLResponse(body, headers={"Cache-Control": "no-cache"})

        base = (config.get_option("server.baseUrlPath") or "").strip("/")
        prefix = f"/{base}" if base else ""
        app.router.routes[:0] = [Route(f"{prefix}/{path}", _page, methods=["GET"]) for path in page_paths]
        _installed = True
        LOG.info("page routes registered: %s", ", ".join(page_paths))
        return True
