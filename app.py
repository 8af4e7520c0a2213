"""kvplan dashboard: the router. Run with ``streamlit run app.py``."""

import streamlit as st

st.set_page_config(page_title="kvplan: KV-cache capacity planner", page_icon="🧮", layout="wide")

pages = [
    st.Page("pages/plan.py", title="Plan", icon="🧮", default=True, url_path="plan"),
    st.Page("pages/model.py", title="Model", url_path="model"),
    st.Page("pages/traces.py", title="Traces", icon="📈", url_path="traces"),
    st.Page("pages/frontier.py", title="Frontier", url_path="frontier"),
    st.Page("pages/context.py", title="GB vs context", url_path="context"),
]

nav = st.navigation(pages)
with st.sidebar:
    st.caption("GB = 10^9 B · GiB = 2^30 B. Figures are per GPU unless marked per replica.")
nav.run()
