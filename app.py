"""kvplan dashboard: the router. Run with ``streamlit run app.py``."""

import streamlit as st

from ui.share import render_share_link
from ui.state import pending_link_warnings, remember_query, restore_query, show_link_warnings

st.set_page_config(page_title="kvplan: KV-cache capacity planner", page_icon="🧮", layout="wide")

# The Plan page's url_path is not a file name in pages/: Streamlit 1.67 also serves pages/ as legacy pages and would
# run pages/plan.py without this router on a rerun whose page hash is "plan" (see ui/state.PAGE_PARAM).
pages = [
    st.Page("pages/plan.py", title="Plan", icon="🧮", default=True, url_path="planner"),
    st.Page("pages/model.py", title="Model", url_path="model"),
    st.Page("pages/traces.py", title="Traces", icon="📈", url_path="traces"),
    st.Page("pages/frontier.py", title="Frontier", url_path="frontier"),
    st.Page("pages/context.py", title="GB vs context", url_path="context"),
    st.Page("pages/probe.py", title="Live probe", icon="🔬", url_path="probe"),
]

nav = st.navigation(pages)
# First run: read the link (and open the page it names). After a page switch, which clears the query string in
# Streamlit 1.67, put the session's inputs back into the URL.
linked = restore_query(nav.url_path, [p.url_path for p in pages])
if linked is not None:
    st.switch_page(next(p for p in pages if p.url_path == linked))
with st.sidebar:
    st.caption("GB = 10^9 B · GiB = 2^30 B. Figures are per GPU unless marked per replica.")
notices = st.container()  # link warnings the page did not show itself go on top
nav.run()
remember_query()  # what the page wrote under its own keys survives the next page switch
if pending_link_warnings():
    with notices:
        show_link_warnings()
with st.sidebar:
    render_share_link(nav.url_path)
