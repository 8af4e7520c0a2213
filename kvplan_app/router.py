"""The dashboard's router: page list, shared sidebar, link state around the page.

Both entry scripts call :func:`main`: ``app.py`` in a checkout
(``streamlit run app.py``) and ``kvplan_app/app.py`` in an installed wheel
(``kvplan serve``). Pages are given as absolute paths to the scripts in
``kvplan_app/views/``, so the router works wherever the entry script lives.
The folder is not called ``pages/``: next to a main script, Streamlit treats a
``pages/`` folder as a legacy multipage app and serves its files without the
router when a URL names them directly.

Page URLs are stable (docs/hosting.md): ``/`` (Plan; ``/plan`` and the older
``/planner`` open it too), ``/model``, ``/traces``, ``/frontier``,
``/context``, ``/probe``. Share links name the page in the path; a link
carrying ``?page=<url_path>`` (older share links) still opens that page.
"""

from __future__ import annotations

import logging
import os
import uuid
from contextlib import contextmanager
from importlib.resources import files

import streamlit as st
from streamlit.errors import FragmentHandledException

from kvplan_app import page_routes
from kvplan_app.i18n import DEFAULT_LANGUAGE, LANG_PARAM, LANGUAGES, SESSION_KEY, language, t
from kvplan_app.share import close_share_slot, open_share_slot
from kvplan_app.uploads import UPLOADED_MODELS, uploader_style
from planner.catalog.entries import session_models
from kvplan_app.notices import show_link_warnings
from kvplan_app.model_choices import uploaded_link_note
from kvplan_app.state import current_inputs, pending_link_warnings, restore_query, set_link_param

LOG = logging.getLogger("kvplan_app")
"""Unexpected page errors go here, with their traceback and reference (the server log, never the page)."""
DEBUG_ENV = "KVPLAN_DEBUG"
"""Set (to anything) to let a page's unexpected error reach Streamlit as well (tests, local development)."""

VIEWS = files("kvplan_app") / "views"
"""Folder of the page scripts (a filesystem path: the package is installed unzipped)."""
TOP_SPACE_STYLE = "[data-testid=stMainBlockContainer] { padding-top: 2.5rem; }"
"""Less room above each page's title (Streamlit's default is 6rem)."""
ICON = files("kvplan_app") / "assets" / "icon.png"
"""The browser tab's icon, served by this server: a Material Symbols ``page_icon`` made every page fetch its image
from the font host (fonts.gstatic.com), and an emoji needs a colour-emoji font the server-side browser may lack."""


PLAN_ALIASES = ("plan", "planner")
"""URL paths that open the Plan page (served at ``/``; its own url_path is only reserved): hidden pages that
hand over to it."""


def pages() -> list:
    """The app's pages, in sidebar order; the first is the default (served at ``/``).

    Icons are Material Symbols, which Streamlit ships with its front end: emoji need a colour-emoji font that a
    server-side browser (Debian's chromium) may lack, and then show as empty boxes.
    """
    return [
        st.Page(VIEWS / "plan.py", title=t("Plan"), icon=":material/calculate:", default=True, url_path="home"),  # served at /
        st.Page(VIEWS / "model.py", title=t("Model"), icon=":material/layers:", url_path="model"),
        st.Page(VIEWS / "traces.py", title=t("Traces"), icon=":material/timeline:", url_path="traces"),
        st.Page(VIEWS / "frontier.py", title=t("Frontier"), icon=":material/show_chart:", url_path="frontier"),
        st.Page(VIEWS / "context.py", title=t("GB vs context"), icon=":material/stacked_line_chart:", url_path="context"),
        st.Page(VIEWS / "recommend.py", title=t("Recommend GPUs"), icon=":material/recommend:", url_path="recommend"),
        st.Page(VIEWS / "reconcile.py", title=t("Reconcile a log"), icon=":material/fact_check:", url_path="reconcile"),
        st.Page(VIEWS / "probe.py", title=t("Live probe"), icon=":material/science:", url_path="probe"),
    ]


def main() -> None:
    """Run one rerun of the app: configure, navigate, run the page, write the link state back.

    Models the user imported on the Model page (``kvplan_app.uploads.UPLOADED_MODELS``) are known to
    :func:`planner.catalog.entries.get_model` for this session's run only, so Plan, Frontier and Recommend price
    them with the same planner functions as a catalog model.
    """
    with session_models(st.session_state.get(UPLOADED_MODELS, {})):
        _main()


def _main() -> None:
    st.set_page_config(page_title=t("kvplan: KV-cache capacity planner"), page_icon=str(ICON), layout="wide")
    # Streamlit's 6rem above the page title becomes 2.5rem, so the Plan page's answer fits a 1280x800 first screen;
    # in another language, Streamlit's own uploader words drawn in it (kvplan_app.uploads). A style-only st.html
    # takes no room on the page.
    style = TOP_SPACE_STYLE + (uploader_style(t) if language() != DEFAULT_LANGUAGE else "")
    st.html(f"<style>{style}</style>")
    page_list = pages()
    # each page path answers Streamlit's page told the server's base, so it probes no /<page>/_stcore/ (404)
    page_routes.install([p.url_path for p in page_list[1:]] + list(PLAN_ALIASES))
    aliases = [st.Page(VIEWS / "plan.py", title="Plan", url_path=a, visibility="hidden") for a in PLAN_ALIASES]
    nav = st.navigation([*page_list, *aliases])
    if nav.url_path in PLAN_ALIASES:  # /plan, /planner: the Plan page at its own URL, with its sidebar entry
        st.switch_page(page_list[0], query_params=st.query_params.to_dict())
    # First run: read the link (and open the page it names). After a page switch, which clears the query string in
    # Streamlit 1.67, put the session's inputs back into the URL.
    linked = restore_query(nav.url_path, [p.url_path for p in page_list])
    if linked is not None:
        st.switch_page(next(p for p in page_list if p.url_path == linked))
    with st.sidebar:
        language_switch()
        st.caption(t("GB = 10^9 B · GiB = 2^30 B. Figures are per GPU unless marked per replica."))
    notices = st.container()  # link warnings the page did not show itself go on top
    # The share link's place in the sidebar, kept before the page runs: a page whose fragment moves the plan (the
    # Plan page's sliders) draws the link there on each of its reruns; for any other page it is drawn after the page.
    open_share_slot(nav.url_path)
    run_page(nav)
    if pending_link_warnings():
        with notices:
            show_link_warnings()
    close_share_slot()
    with st.sidebar:
        uploaded_link_note(current_inputs().model_id)


def language_switch() -> None:
    """The sidebar's language select; a language other than English goes into the link (``lang``)."""
    current = language()

    def _chosen() -> None:
        st.session_state[SESSION_KEY] = st.session_state["ui_lang_choice"]

    st.session_state.setdefault("ui_lang_choice", current)
    st.selectbox("Language · Idioma", list(LANGUAGES), key="ui_lang_choice", format_func=LANGUAGES.get,
                 on_change=_chosen)
    set_link_param(LANG_PARAM, None if current == DEFAULT_LANGUAGE else current)


def run_page(nav) -> None:
    """Run the page; an unexpected error shows one line and a reference id, its details go to the server log."""
    with page_errors(nav.url_path):
        nav.run()


@contextmanager
def page_errors(page_id: str):
    """Around a page's run (and a page fragment's own reruns, which do not pass through :func:`run_page`): an
    unexpected error shows one line and a reference id, its details go to the server log.

    Streamlit's own control flow (``st.rerun``, ``st.stop``, ``st.switch_page``) raises ``BaseException``
    subclasses, which pass through. With ``KVPLAN_DEBUG`` set the error is re-raised after the line.
    """
    try:
        yield
    except FragmentHandledException:  # a fragment's error, already shown by page_errors inside it (KVPLAN_DEBUG)
        raise
    except Exception:  # noqa: BLE001 - any bug in a page: one line for the visitor, the traceback in the log
        ref = uuid.uuid4().hex[:12]
        LOG.exception("kvplan page %r failed (reference %s)", page_id, ref)
        st.error(t("This page hit an unexpected error (reference {ref}). Your inputs are kept; the details are in "
                   "the server log under that reference.", ref=ref))
        if os.environ.get(DEBUG_ENV):
            raise
